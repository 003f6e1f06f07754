/**
 * `loupe store copy` (issue 26): a SQLite store with runs, steps, cells and figures, events, interventions,
 * judgements, scores, annotations, a queue and a draft goes to a real PostgreSQL server and back, every row equal
 * (ids, order, bytes); copying again adds nothing; the team store answers the same reads as the file.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../../../src/cli/main.ts';
import { annotationStoreOf } from '../../../../src/core/annotations/index.ts';
import { canonicalJson, sha256 } from '../../../../src/core/eval/judges/index.ts';
import { analystReviewSource } from '../../../../src/core/benchmarks/analystbench/review.ts';
import { captureRunArtefacts, readRunFile } from '../../../../src/core/store/artefacts.ts';
import { trustedRunFolder } from '../../../../src/core/store/run-folder.ts';
import { COPY_TABLES, NOT_COPIED, type CopyReport } from '../../../../src/core/store/copy.ts';
import { openStoreAt } from '../../../../src/core/store/open.ts';
import { openStore, sqliteHandleOf } from '../../../../src/core/store/run-store.ts';
import type { StepRecord } from '../../../../src/core/store/records.ts';
import { startPg, type PgServer } from '../../../helpers/pg.ts';

let dir = '';
let srv: PgServer;
let file = '';
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0xff]);

function step(runId: string, index: number): StepRecord {
  return {
    runId,
    index,
    startedAt: `2026-01-01T00:00:0${index}Z`,
    endedAt: `2026-01-01T00:00:0${index}Z`,
    latencyMs: 5.5,
    toolMs: 1,
    assistant: {
      role: 'assistant',
      content: `step ${index}`,
      tool_calls: [{ id: 'c', type: 'function', function: { name: 'python', arguments: '{"code":"1"}' } }],
    },
    toolCalls: [
      {
        id: 'c',
        name: 'python',
        argumentsText: '{"code":"1"}',
        observation: `out \u0000 ${index}`,
        isError: false,
        truncated: false,
        durationMs: 1,
      },
    ],
    extraMessages: [],
    usage: { input: 10, output: 3, cached: 1 },
    costUsd: 0.25,
    finishReason: 'tool_calls',
  };
}

function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  return main(args, { out: (s) => out.push(s), err: (s) => err.push(s), env: process.env, cwd: dir }).then((code) => ({
    code,
    out: out.join(''),
    err: err.join(''),
  }));
}

function dump(path: string): Record<string, unknown[]> {
  const s = openStore(path);
  const db = sqliteHandleOf(s);
  const out = Object.fromEntries(
    COPY_TABLES.map((t) => [t.name, db.prepare(`SELECT * FROM ${t.name} ORDER BY rowid`).all()]),
  );
  void s.close();
  return out;
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-copy-'));
  srv = await startPg({ fsync: 'off' });
  file = join(dir, 'a.sqlite');
  const s = openStore(file);
  for (const id of ['r1', 'r2']) {
    await s.createRun({
      id,
      suite: 'analystbench',
      blockId: `b-${id}`,
      agent: 'llm',
      model: 'm',
      params: { temperature: 0 },
      promptHash: 'h',
      toolSet: 't',
      dataChecksums: { 'a.csv': 'x' },
      loupeVersion: 't',
      sandbox: 'off',
      workspace: join(dir, id, 'workspace'),
    });
    await s.commitStep(step(id, 0), {
      answers: [
        { runId: id, queryId: 'q2', answer: 2, raw: '2', stepIndex: 0 },
        { runId: id, queryId: 'q1', answer: [1, 2], raw: '[1,2]', stepIndex: 0 },
      ],
      notes: ['note a', 'note b'],
      savedCode: 'print(1)',
      extra: { k: id },
      cells: [
        {
          runId: id,
          seq: 0,
          stepIndex: 0,
          code: 'plot()',
          status: 'ok',
          stdout: 'o',
          stderr: '',
          result: null,
          error: null,
          tables: [],
          figures: [Buffer.from([0, 1, 2, 255]).toString('base64')],
          durationMs: 2.5,
          replay: false,
        },
      ],
    });
    await s.commitStep(step(id, 1));
    await s.addEvent(id, 'resume', `resumed ${id}`);
    await s.addEvent(id, 'resume', `resumed ${id}`); // two identical events stay two
  }
  // what the agent of r1 wrote: a report and a figure (identical bytes under two names are stored once)
  const ws = join(dir, 'r1', 'workspace');
  mkdirSync(join(ws, 'figures'), { recursive: true });
  writeFileSync(join(ws, 'report.md'), '# Findings\n\n![trend](figures/fig-1-1.png)\n');
  writeFileSync(join(ws, 'figures', 'fig-1-1.png'), PNG);
  writeFileSync(join(ws, 'figures', 'copy.png'), PNG);
  const r1 = (await s.getRun('r1'))!;
  const cap = await captureRunArtefacts(s, r1, trustedRunFolder(r1, dir));
  assert.deepEqual([cap.stored.sort(), cap.skipped], [['figures/copy.png', 'figures/fig-1-1.png', 'report.md'], []]);
  await s.updateRun('r1', { status: 'failed', statusReason: 'budget', endedAt: '2026-01-01T00:01:00Z' });
  assert.equal((await s.acquireRunLease('r1', { owner: 'me', host: 'h', pid: process.pid }, 60_000)).ok, true);
  await s.addIntervention({ runId: 'r1', who: 'ana', kind: 'hint', text: 'use the median' }, 'me');
  await s.releaseRunLease('r1', 'me');
  const input = { claim: 'GDP grew.', sources: 'Report.' };
  const inputHash = sha256(`claim-support\u0000${canonicalJson(input)}`);
  await s.judgements.put(
    {
      key: 'k-human',
      task: 'claim-support',
      judgeId: 'human',
      inputHash,
      promptHash: null,
      input,
      raw: null,
      verdict: null,
      status: 'pending',
      at: '2026-01-01T00:00:00Z',
    },
    { runId: 'r1', itemRef: 'claim 1' },
  );
  await s.judgements.put(
    {
      key: 'k-llm',
      task: 'claim-support',
      judgeId: 'llm:m',
      inputHash,
      promptHash: 'p',
      input,
      raw: '{"supported":true}',
      verdict: { supported: true, reason: 'ok' },
      status: 'done',
      at: '2026-01-01T00:00:01Z',
    },
    { runId: 'r1' },
  );
  await s.scores.save({
    runId: 'r1',
    benchmark: 'analystbench',
    judgeId: 'human',
    options: { b: 1 },
    summary: { score: 0.5 },
    detail: { x: [1] },
    pending: 1,
    scoredAt: '2026-01-01T00:00:02Z',
  });
  const ann = annotationStoreOf(s);
  assert.equal((await ann.syncFromJudgements()) > 0, true);
  const q = await ann.openQueue({ kind: 'items' }, { name: 'claims' });
  const entry = (await ann.nextItem(q.id, 'ana'))!;
  await ann.saveDraft(q.id, entry.item.id, 'bo', { choice: 'yes', note: 'draft', evidence: [] } as never);
  await ann.annotate({
    itemId: entry.item.id,
    annotator: 'ana',
    verdict: { supported: true, reason: 'page 2' },
    note: 'fine',
  });
  await ann.annotate({ itemId: entry.item.id, annotator: 'bo', verdict: { supported: false, reason: '' } });
  await s.close();
});

after(() => {
  srv?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('loupe store copy', () => {
  it('copies every data table of the schema (a new table must be added to COPY_TABLES)', () => {
    const s = openStore(join(dir, 'schema.sqlite'));
    const tables = (
      sqliteHandleOf(s).prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
        name: string;
      }[]
    ).map((r) => r.name);
    void s.close();
    assert.deepEqual(
      tables.filter((t) => !NOT_COPIED.includes(t)),
      COPY_TABLES.map((t) => t.name).sort(),
    );
  });

  it('SQLite → PostgreSQL → SQLite keeps every row (ids, order, bytes); a repeated copy adds nothing', async () => {
    const url = await srv.createDatabase('team');
    const first = await cli(['store', 'copy', '--from', 'a.sqlite', '--to', url, '--json']);
    assert.equal(first.code, 0, first.err);
    const rep = JSON.parse(first.out) as CopyReport;
    const added = Object.fromEntries(rep.tables.map((t) => [t.table, t.added]));
    assert.deepEqual(
      [
        added.runs,
        added.steps,
        added.answers,
        added.cell_figures,
        added.run_events,
        added.interventions,
        added.judgements,
        added.scores,
        added.annotations,
        added.annotation_drafts,
      ],
      [2, 4, 4, 2, 4, 1, 2, 1, 2, 1],
    );
    assert.deepEqual([added.artefact_blobs, added.run_artefacts], [2, 3], 'two contents, three files');
    assert.ok(!rep.to.includes(process.env[srv.passwordEnv]!), 'no password in the report');
    const again = await cli(['store', 'copy', '--from', 'a.sqlite', '--to', url, '--json']);
    assert.equal(again.code, 0, again.err);
    assert.deepEqual(
      (JSON.parse(again.out) as CopyReport).tables.filter((t) => t.added !== 0),
      [],
      'idempotent',
    );

    // the team store answers the reads the file answers
    const [a, p] = [openStore(file), await openStoreAt(url)];
    for (const id of ['r1', 'r2']) {
      assert.deepEqual(await p.getRun(id), await a.getRun(id));
      assert.deepEqual(await p.getSteps(id), await a.getSteps(id));
      assert.deepEqual(await p.getCells(id), await a.getCells(id));
      assert.deepEqual(await p.getAnswers(id), await a.getAnswers(id));
      assert.deepEqual(await p.getEvents(id), await a.getEvents(id));
      assert.deepEqual(await p.getInterventions(id), await a.getInterventions(id));
      assert.deepEqual(await p.getStepSummaries(id), await a.getStepSummaries(id));
    }
    assert.deepEqual(await p.listRuns(), await a.listRuns());
    assert.deepEqual(await p.judgements.listForRun('r1'), await a.judgements.listForRun('r1'));
    assert.deepEqual(await p.scores.list(), await a.scores.list());
    assert.deepEqual(await p.artefacts.list('r1'), await a.artefacts.list('r1'));
    // an expert on another machine: no run folder, the evidence comes from the team store
    const away = trustedRunFolder(
      { ...(await p.getRun('r1'))!, storedWorkspace: join(dir, 'elsewhere', 'workspace') },
      dir,
    );
    assert.deepEqual(await readRunFile(p, away, 'figures/fig-1-1.png', null), PNG);
    assert.deepEqual(await analystReviewSource(p, away), { markdown: '# Findings\n\n![trend](figures/fig-1-1.png)\n' });
    await assert.rejects(readRunFile(p, away, 'nothing.md', 'utf8'), /no such file/);
    await a.close();
    await p.close();
    const runs = await cli(['runs', '--store', url]);
    assert.equal(runs.code, 0, runs.err);
    assert.match(runs.out, /r1/);

    const back = await cli(['store', 'copy', '--from', url, '--to', 'b.sqlite']);
    assert.equal(back.code, 0, back.err);
    assert.match(back.out, /annotations\s+2 rows, 2 new/);
    assert.deepEqual(dump(join(dir, 'b.sqlite')), dump(file), 'every row of every table equal after the round trip');
  });

  it('the database role that wrote an annotation on the team store survives a copy to SQLite and back', async () => {
    const url = await srv.createDatabase('roles');
    assert.equal((await cli(['store', 'copy', '--from', 'a.sqlite', '--to', url])).code, 0);
    const role = `cara_pg_${process.pid}`;
    const asCara = await openStoreAt(await srv.createRole(role, 'roles'));
    const ann = annotationStoreOf(asCara);
    const [item] = await ann.listItems();
    const a = await ann.annotate({ itemId: item!.id, annotator: 'Cara', verdict: { supported: true, reason: 'p. 3' } });
    assert.equal(a.dbRole, role);
    await asCara.close();
    const there = await cli(['store', 'copy', '--from', url, '--to', 'c.sqlite']);
    assert.equal(there.code, 0, there.err);
    const c = openStore(join(dir, 'c.sqlite'));
    const rows = sqliteHandleOf(c).prepare('SELECT annotator, db_role FROM annotations ORDER BY annotator').all();
    await c.close();
    assert.deepEqual(rows, [
      { annotator: 'Cara', db_role: role },
      { annotator: 'ana', db_role: null },
      { annotator: 'bo', db_role: null },
    ]);
    const back = await srv.createDatabase('roles_back');
    assert.equal((await cli(['store', 'copy', '--from', 'c.sqlite', '--to', back])).code, 0);
    const p = await openStoreAt(back);
    const all = [...(await annotationStoreOf(p).annotationsByItem()).values()]
      .flat()
      .map((x) => [x.annotator, x.dbRole])
      .sort();
    await p.close();
    assert.deepEqual(
      all,
      [
        ['Cara', role],
        ['ana', null],
        ['bo', null],
      ],
      'the owner copying keeps who wrote each annotation (not its own role)',
    );
  });

  it("long step texts a SQLite file keeps in the run folder (blobs/) go whole into the team store's rows", async () => {
    const f = join(dir, 'blobs.sqlite');
    const ws = join(dir, 'blob-run', 'workspace');
    mkdirSync(ws, { recursive: true });
    const s = openStore(f);
    await s.createRun({
      id: 'rb',
      suite: 'longda',
      blockId: 'b',
      agent: 'llm',
      model: 'm',
      params: {},
      promptHash: 'h',
      toolSet: 't',
      dataChecksums: {},
      loupeVersion: 't',
      sandbox: 'off',
      workspace: ws,
    });
    const big = `${'observation '.repeat(120_000)}end`; // 1.4 MB: kept as a file of the run folder
    const st = step('rb', 0);
    await s.commitStep({ ...st, toolCalls: [{ ...st.toolCalls[0]!, observation: big }] });
    const row = sqliteHandleOf(s).prepare('SELECT tool_calls FROM steps WHERE run_id = ?').get('rb') as {
      tool_calls: string;
    };
    assert.ok(row.tool_calls.length < 10_000, 'the SQLite row holds a marker, not the text');
    await s.close();
    const url = await srv.createDatabase('blobs');
    const r = await cli(['store', 'copy', '--from', 'blobs.sqlite', '--to', url]);
    assert.equal(r.code, 0, r.err);
    rmSync(join(dir, 'blob-run'), { recursive: true, force: true }); // a colleague's machine: no run folder
    const p = await openStoreAt(url);
    const [got] = await p.getSteps('rb');
    await p.close();
    assert.equal(got!.toolCalls[0]!.observation, big);
  });

  it('a target at another schema version is refused and left unchanged; a missing source is an error', async () => {
    const url = await srv.createDatabase('newer');
    const p = await openStoreAt(url, {
      extraMigrations: [{ id: 1000, name: 'future', sql: 'CREATE TABLE future_t (x INTEGER)' }],
    });
    await p.close();
    const r = await cli(['store', 'copy', '--from', 'a.sqlite', '--to', url]);
    assert.equal(r.code, 1);
    assert.match(r.err, /schema is version 1000, newer than this Loupe's \d+/);
    const missing = await cli(['store', 'copy', '--from', 'nope.sqlite', '--to', url]);
    assert.equal(missing.code, 2);
    assert.match(missing.err, /no run store at .*nope\.sqlite/);
  });
});
