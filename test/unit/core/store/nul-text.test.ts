/**
 * Issue 39 item 2: text holding NUL (U+0000), the JSON escape `\u0000` and the escape character of `pg-text.ts`
 * (U+E000 …) is stored losslessly on both engines — through the real agent loop (a scripted model whose tool call
 * argument is `print('a\u0000b')`), through every writing call of the store API (runs, steps, answers, notes, saved
 * code, cells, events, interventions, judgements, scores, artefact names, annotations, checklists, leases), through the JSONL
 * export, and through `loupe store copy` both ways. On PostgreSQL every one of these failed before ("invalid message
 * format" / "invalid byte sequence for encoding UTF8: 0x00"). A copy that meets a row the target refuses names the
 * row (table and key) and copies the rest.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { main } from '../../../../src/cli/main.ts';
import { annotationStoreOf } from '../../../../src/core/annotations/index.ts';
import { checklistStoreOf } from '../../../../src/core/annotations/checklists.ts';
import { canonicalJson, sha256 } from '../../../../src/core/eval/judges/index.ts';
import { loadSuite } from '../../../../src/core/benchmarks/index.ts';
import { closeAnalystDocIndexes } from '../../../../src/core/benchmarks/analystbench/toolset.ts';
import { startBlockRun } from '../../../../src/core/runs/runner.ts';
import { copyStore } from '../../../../src/core/store/copy.ts';
import { exportTrajectoryJsonl } from '../../../../src/core/store/export.ts';
import { decodePgText, encodePgText } from '../../../../src/core/store/pg-text.ts';
import { openStore, sqliteHandleOf } from '../../../../src/core/store/run-store.ts';
import type { StepRecord } from '../../../../src/core/store/records.ts';
import type { RunStore } from '../../../../src/core/store/types.ts';
import type { Suite } from '../../../../src/core/suites/types.ts';
import { call, startScriptedLlm, type ScriptedLlm } from '../../../helpers/scripted-llm.ts';
import { repoRoot, sharedDir } from '../../../helpers/shared.ts';
import { forEachEngine } from '../../../helpers/store-engines.ts';

/** A text with everything the escape must keep apart: NUL, the JSON escape as text, backslashes, the escape character and its codes. */
const T = 'a\u0000b \\u0000 \\\\u0000 \\\\\\u0000 \uE000\uE001\uE002\uE003 \uE000 end\u0000';

describe('the PostgreSQL text escape', () => {
  it('is a bijection and leaves no NUL and no JSON escape \\u0000 behind', () => {
    const cases = [
      T,
      '',
      'plain',
      '\u0000',
      '\\',
      '\\u0000',
      '\\\\u0000',
      '\uE000',
      '\uE000\uE001',
      JSON.stringify({ s: T }),
      JSON.stringify([T, { k: T }]),
    ];
    for (const s of cases) {
      const e = encodePgText(s);
      assert.equal(decodePgText(e), s, JSON.stringify(s));
      assert.ok(!e.includes('\u0000'), JSON.stringify(e));
      // what PostgreSQL's json parser would reject: \u0000 preceded by an even number of backslashes
      assert.ok(!/(^|[^\\])(\\\\)*\\u0000/.test(e), JSON.stringify(e));
    }
    // escaped JSON stays JSON, and decodes to the same value
    const j = JSON.stringify({ s: T, a: [T] });
    assert.deepEqual(JSON.parse(decodePgText(encodePgText(j))), { s: T, a: [T] });
    assert.doesNotThrow(() => JSON.parse(encodePgText(j)));
  });
});

let dir = '';
let suite: Suite;
let srv: ScriptedLlm;
before(async () => {
  process.env.LOUPE_SHARED ??= sharedDir();
  dir = mkdtempSync(join(tmpdir(), 'loupe-nul-'));
  suite = await loadSuite('analystbench', join(repoRoot, 'test', 'fixtures', 'suites', 'analystbench'));
  srv = await startScriptedLlm({
    scriptFor: () => [
      {
        content: `Look${'\u0000'}here`,
        toolCalls: [call('python', { code: "print('a\\u0000b')" }), call('python', { code: `print(1)${'\u0000'}` })],
      },
      { content: 'Write it.', toolCalls: [call('write_report', { markdown: `# R\n\nx${'\u0000'}y ${T}\n` })] },
    ],
  });
});
after(async () => {
  await srv?.close();
  await closeAnalystDocIndexes();
  rmSync(dir, { recursive: true, force: true });
});

function step(runId: string, index: number): StepRecord {
  return {
    runId,
    index,
    startedAt: '2026-01-01T00:00:00Z',
    endedAt: '2026-01-01T00:00:01Z',
    latencyMs: 1,
    toolMs: 1,
    assistant: {
      role: 'assistant',
      content: `say ${T}`,
      tool_calls: [{ id: 'c', type: 'function', function: { name: 'python', arguments: JSON.stringify({ code: T }) } }],
    },
    toolCalls: [
      {
        id: 'c',
        name: 'python',
        argumentsText: `{"code": "${T}"}`,
        observation: `out ${T}`,
        isError: false,
        truncated: false,
        durationMs: 1,
        data: { t: T },
      },
    ],
    extraMessages: [{ role: 'user', content: T }],
    usage: { input: 1, output: 1, cached: 0 },
    costUsd: null,
    finishReason: `stop${T}`,
  };
}

/** Writes `T` into every text column the store API writes, for run `id`. */
async function writeEverything(s: RunStore, id: string): Promise<void> {
  await s.createRun({
    id,
    suite: 'analystbench',
    blockId: `b${T}`,
    agent: 'llm',
    model: `m${T}`,
    params: { temperature: 0, note: T } as never,
    promptHash: 'h',
    toolSet: `t${T}`,
    dataChecksums: { [`a${T}.csv`]: T },
    loupeVersion: 't',
    sandbox: 'off',
    workspace: join(dir, 'nope', id),
  });
  await s.commitStep(step(id, 0), {
    answers: [{ runId: id, queryId: `q${T}`, answer: 2, raw: `raw ${T}`, stepIndex: 0 }],
    notes: [`note ${T}`, T],
    savedCode: `code ${T}`,
    extra: { k: T },
    cells: [
      {
        runId: id,
        seq: 0,
        stepIndex: 0,
        code: T,
        status: 'error',
        stdout: T,
        stderr: T,
        result: T,
        error: { ename: T, evalue: T, traceback: [T] } as never,
        tables: [{ name: T }] as never,
        figures: [],
        durationMs: 1,
        replay: false,
      },
    ],
  });
  await s.applyEffects(id, 0, { answers: [{ runId: id, queryId: `q2${T}`, answer: [1], raw: T, stepIndex: 0 }] });
  await s.addEvent(id, `kind${T}`, `message ${T}`);
  await s.updateRun(id, { status: 'failed', statusReason: `reason ${T}` });
  assert.equal((await s.acquireRunLease(id, { owner: `me${T}`, host: `h${T}`, pid: process.pid }, 60_000)).ok, true);
  assert.ok(await s.addIntervention({ runId: id, who: `ana${T}`, kind: 'hint', text: `hint ${T}` }, `me${T}`));
  assert.equal((await s.getRunLease(id))?.owner, `me${T}`);
  assert.equal(await s.renewRunLease(id, `me${T}`, 60_000), true);
  await s.releaseRunLease(id, `me${T}`);
  await s.artefacts.put(id, [{ path: `out/${T}.md`, bytes: Buffer.from(`x\u0000${T}`), mediaType: 'text/markdown' }]);
  const input = { claim: `claim ${T}`, sources: T };
  await s.judgements.put(
    {
      key: `k${id}`,
      task: 'claim-support',
      judgeId: 'human',
      inputHash: sha256(`claim-support\u0000${canonicalJson(input)}`),
      promptHash: null,
      input,
      raw: T,
      verdict: { supported: true, reason: T },
      status: 'done',
      at: '2026-01-01T00:00:00Z',
      error: T,
    },
    { runId: id, itemRef: `ref ${T}` },
  );
  await s.scores.save({
    runId: id,
    benchmark: 'analystbench',
    judgeId: `j${T}`,
    options: { o: T },
    summary: { s: T },
    detail: { d: T },
    pending: 0,
    scoredAt: '2026-01-01T00:00:00Z',
  });
}

/** Everything the store API reads back of run `id` (deterministic fields only). */
async function readEverything(s: RunStore, id: string): Promise<unknown> {
  const {
    createdAt: _c,
    startedAt: _s,
    endedAt: _e,
    heartbeatAt: _h,
    leaseExpiresAt: _l,
    ...run
  } = (await s.getRun(id)) as unknown as Record<string, unknown>;
  const interventions = (await s.getInterventions(id)).map(({ at: _a, ...i }) => i);
  const artefacts = await Promise.all(
    (await s.artefacts.list(id)).map(async (a) => [a.path, (await s.artefacts.get(id, a.path))!.bytes.toString()]),
  );
  const judgements = (await s.judgements.listForRun(id)).map(({ at: _a, ...j }) => j);
  const events = (await s.getEvents(id)).map(({ at: _a, ...e }) => e);
  return {
    run,
    steps: await s.getSteps(id),
    answers: await s.getAnswers(id),
    notes: await s.getNotes(id),
    code: await s.getSavedCode(id),
    state: await s.getExtraState(id),
    cells: await s.getCells(id),
    events,
    interventions,
    artefacts,
    judgements,
    scores: await s.scores.list(id),
  };
}

forEachEngine((e) => {
  it(
    'a NUL in a tool argument, an observation, model text and a report round-trips through the real loop and the JSONL export',
    { timeout: 120_000 },
    async () => {
      const store = await e.open(await e.fresh());
      const block = suite.blocks.find((b) => b.id === 'nchs_obesity_2021-2023')!;
      const r = await startBlockRun({
        store,
        suite,
        block,
        agent: 'llm',
        llm: { baseUrl: srv.baseUrl, model: 'scripted', apiKey: 'k' },
        runsDir: join(dir, e.name),
        kernel: { sandbox: 'off' },
      });
      assert.equal(r.status, 'finished', r.reason);
      const steps = await store.getSteps(r.runId);
      assert.equal(steps.length, 2, 'both steps were committed');
      assert.equal(steps[0]!.assistant.content, 'Look\u0000here');
      const [a, b] = steps[0]!.toolCalls;
      assert.equal(JSON.parse(a!.argumentsText).code, "print('a\\u0000b')");
      assert.ok(a!.observation.includes('a\u0000b'), 'the printed NUL is in the observation');
      assert.equal(JSON.parse(b!.argumentsText).code, 'print(1)\u0000', 'a NUL inside the tool argument itself');
      const cells = await store.getCells(r.runId);
      assert.ok(
        cells.some((c) => c.stdout.includes('a\u0000b')),
        JSON.stringify(cells.map((c) => c.stdout)),
      );
      assert.ok(cells.some((c) => c.code === 'print(1)\u0000'));
      const report = await store.artefacts.get(r.runId, 'report.md');
      assert.equal(report?.bytes.toString(), `# R\n\nx\u0000y ${T}\n`);
      // step summaries and search see the NUL texts too
      const sums = await store.getStepSummaries(r.runId);
      assert.equal(sums[0]!.content, 'Look\u0000here');
      assert.deepEqual(await store.searchSteps(r.runId, 'look\u0000here'), [0]);
      // export: every record of the JSONL parses back to what the store holds
      const lines = (await exportTrajectoryJsonl(store, r.runId))
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string });
      const exported = lines.filter((l) => l.type === 'step').map(({ type: _t, ...s }) => s);
      assert.deepEqual(exported, JSON.parse(JSON.stringify(steps)));
      assert.ok(
        lines.some((l) => l.type === 'cell' && (l as unknown as { stdout: string }).stdout.includes('a\u0000b')),
      );
      await store.close();
    },
  );

  it(
    'every text column the store API writes keeps NUL, the JSON escape \\u0000 and U+E000 exactly; the annotation store too',
    { timeout: 60_000 },
    async () => {
      const loc = await e.fresh();
      const store = await e.open(loc);
      await writeEverything(store, `r${T}`);
      const got = (await readEverything(store, `r${T}`)) as Record<string, unknown>;
      assert.ok(JSON.stringify(got).includes(JSON.stringify(T).slice(1, -1)));
      assert.deepEqual((got.steps as StepRecord[])[0], step(`r${T}`, 0));
      assert.deepEqual(got.notes, [`note ${T}`, T]);
      assert.equal(got.code, `code ${T}`);
      assert.deepEqual(got.state, { k: T });
      assert.deepEqual((got.events as unknown[])[0], { runId: `r${T}`, kind: `kind${T}`, message: `message ${T}` });
      assert.deepEqual(got.artefacts, [[`out/${T}.md`, `x\u0000${T}`]]);
      assert.equal((got.run as { statusReason: string }).statusReason, `reason ${T}`);
      // filters on text: run ids, list by suite/block, step search with a NUL in the word
      assert.deepEqual(
        (await store.listRuns({ blockId: `b${T}` })).map((r) => r.id),
        [`r${T}`],
      );
      assert.deepEqual(await store.searchSteps(`r${T}`, `${T.split(' ')[0]}`), [0]);
      const ann = annotationStoreOf(store);
      await ann.syncFromJudgements();
      const [item] = await ann.listItems({ task: 'claim-support' });
      assert.ok(item, 'the judgement became an annotation item');
      await ann.annotate({
        itemId: item.id,
        annotator: `ana${T}`,
        verdict: { supported: false, reason: T },
        note: `note ${T}`,
      });
      const [a] = await ann.annotations(item.id);
      assert.deepEqual([a!.annotator, a!.note, a!.verdict], [`ana${T}`, `note ${T}`, { supported: false, reason: T }]);
      const cs = checklistStoreOf(store);
      const key = { suite: 'ddr', suiteId: `ddr:${T}`, blockId: `b${T}` };
      await cs.save(key, {
        base: null,
        items: [
          {
            id: 'c1',
            kind: 'fact',
            question: `q ${T}`,
            answer: T,
            entity: 'e',
            author: `ann${T}`,
            updatedAt: '2026-01-01T00:00:00.000Z',
          },
        ],
        author: `ann${T}`,
        note: `note ${T}`,
      });
      const v = await cs.latest(key);
      assert.deepEqual(
        [v?.author, v?.note, v?.items[0]?.question, v?.items[0]?.answer],
        [`ann${T}`, `note ${T}`, `q ${T}`, T],
      );
      await store.close();
      // read again by a new connection
      const again = await e.open(loc);
      assert.deepEqual(await readEverything(again, `r${T}`), got);
      await again.close();
    },
  );
});

forEachEngine((e) => {
  if (e.name !== 'postgres') return;
  it(
    'loupe store copy: SQLite → PostgreSQL → SQLite keeps every NUL; PostgreSQL → SQLite too',
    { timeout: 60_000 },
    async () => {
      const file = join(dir, 'copy-a.sqlite');
      const a = openStore(file);
      await writeEverything(a, 'r1');
      const want = await readEverything(a, 'r1');
      await a.close();
      const url = await e.fresh();
      const io = { out: (_: string) => undefined, err: (_: string) => undefined, env: process.env, cwd: dir };
      assert.equal(await main(['store', 'copy', '--from', file, '--to', url], io), 0);
      const pgStore = await e.open(url);
      assert.deepEqual(await readEverything(pgStore, 'r1'), want);
      await writeEverything(pgStore, 'r2');
      const want2 = await readEverything(pgStore, 'r2');
      await pgStore.close();
      const back = join(dir, 'copy-b.sqlite');
      assert.equal(await main(['store', 'copy', '--from', url, '--to', back], io), 0);
      const b = openStore(back);
      assert.deepEqual(await readEverything(b, 'r1'), want);
      assert.deepEqual(await readEverything(b, 'r2'), want2);
      await b.close();
    },
  );

  it(
    'a step written before the escape (the JSON escape \\u0000 in its JSON text) reads back and summarises with its NUL',
    { timeout: 60_000 },
    async () => {
      const url = await e.fresh();
      const store = await e.open(url);
      await store.createRun({
        id: 'old',
        suite: 's',
        blockId: 'b',
        agent: 'llm',
        model: 'm',
        params: {} as never,
        promptHash: 'h',
        toolSet: 't',
        dataChecksums: {},
        loupeVersion: 't',
        sandbox: 'off',
        workspace: '',
      });
      const srv = e.server()!;
      const raw = new pg.Client({
        host: srv.host,
        port: srv.port,
        user: srv.user,
        password: process.env[srv.passwordEnv],
        database: new URL(url).pathname.slice(1),
      });
      await raw.connect();
      const old: StepRecord = {
        ...step('old', 0),
        assistant: { role: 'assistant', content: 'a\u0000b' },
        toolCalls: [
          {
            id: 'c',
            name: 'python',
            argumentsText: '{"code": "print(1)\\u0000"}',
            observation: 'x\u0000y',
            isError: false,
            truncated: false,
            durationMs: 1,
          },
        ],
        finishReason: 'stop',
      };
      // what an older Loupe wrote: JSON.stringify's text as is (PostgreSQL text takes the six characters \u0000)
      await raw.query(
        `INSERT INTO steps (run_id, idx, started_at, ended_at, latency_ms, tool_ms, assistant, tool_calls, extra_messages, tokens_input, tokens_output, tokens_cached, cost_usd, finish_reason, seq)
      VALUES ('old', 0, $1, $2, 1, 1, $3, $4, '[]', 1, 1, 0, NULL, 'stop', 1)`,
        [old.startedAt, old.endedAt, JSON.stringify(old.assistant), JSON.stringify(old.toolCalls)],
      );
      await raw.end();
      const [got] = await store.getSteps('old');
      assert.deepEqual(
        [got!.assistant.content, got!.toolCalls[0]!.observation, got!.toolCalls[0]!.argumentsText],
        ['a\u0000b', 'x\u0000y', '{"code": "print(1)\\u0000"}'],
      );
      const [sum] = await store.getStepSummaries('old');
      assert.deepEqual(
        [sum!.content, sum!.firstArguments, sum!.toolNames],
        ['a\u0000b', '{"code": "print(1)\\u0000"}', ['python']],
      );
      await store.close();
    },
  );

  it('a row the target refuses is named (table and key) and the rest is copied', { timeout: 60_000 }, async () => {
    const file = join(dir, 'copy-bad.sqlite');
    const a = openStore(file);
    await writeEverything(a, 'r1');
    await a.createRun({
      id: 'r2',
      suite: 's',
      blockId: 'b',
      agent: 'llm',
      model: 'm',
      params: {} as never,
      promptHash: 'h',
      toolSet: 't',
      dataChecksums: {},
      loupeVersion: 't',
      sandbox: 'off',
      workspace: '',
    });
    await a.commitStep({ ...step('r2', 0) });
    await a.commitStep({ ...step('r2', 1) });
    // SQLite keeps any value in any column; PostgreSQL's DOUBLE PRECISION refuses this one
    sqliteHandleOf(a).prepare("UPDATE steps SET latency_ms = 'slow' WHERE run_id = 'r2' AND idx = 1").run();
    await a.close();
    const url = await e.fresh();
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(['store', 'copy', '--from', file, '--to', url], {
      out: (s) => out.push(s),
      err: (s) => err.push(s),
      env: process.env,
      cwd: dir,
    });
    assert.equal(code, 1, 'a copy that left a row behind says so in its exit code');
    assert.match(err.join(''), /steps.*run_id=r2.*idx=1.*double precision/s, err.join(''));
    const from = openStore(file);
    const to = await e.open(url);
    assert.deepEqual(await readEverything(to, 'r1'), await readEverything(from, 'r1'), 'the rest is copied');
    assert.deepEqual(
      (await to.getSteps('r2')).map((s) => s.index),
      [0],
    );
    const rep = await copyStore(from, to);
    assert.deepEqual(
      rep.failed?.map((f) => [f.table, f.key]),
      [['steps', { run_id: 'r2', idx: 1 }]],
    );
    await from.close();
    await to.close();
  });
});
