/**
 * The run store suite, written once and run against both engines (SQLite file; a real PostgreSQL server started in a
 * temp dir): migrations, atomic steps with effects, reads, subscriptions across connections, leases, interventions,
 * judgements and scores.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { migrations } from '../../../../src/core/store/migrations.ts';
import { sqliteHandleOf } from '../../../../src/core/store/run-store.ts';
import type { StepRecord } from '../../../../src/core/agent/types.ts';
import { forEachEngine } from '../../../helpers/store-engines.ts';
import { annotationStoreOf } from '../../../../src/core/annotations/index.ts';
import { parseStoreLocation } from '../../../../src/core/store/location.ts';
import { openStoreLazily } from '../../../../src/core/store/open.ts';
import { watchStoreChanges, type PgRunStore, type StoreChange } from '../../../../src/core/store/pg-run-store.ts';

function step(runId: string, index: number, over: Partial<StepRecord> = {}): StepRecord {
  return {
    runId,
    index,
    startedAt: new Date().toISOString(),
    endedAt: new Date().toISOString(),
    latencyMs: 5,
    toolMs: 1,
    assistant: { role: 'assistant', content: `step ${index}`, tool_calls: [] },
    toolCalls: [],
    extraMessages: [],
    usage: { input: 10, output: 3, cached: 1 },
    costUsd: 0.5,
    finishReason: 'stop',
    ...over,
  };
}

const base = {
  suite: 'longda',
  blockId: 'B',
  agent: 'llm',
  model: 'm',
  params: { temperature: 0 },
  promptHash: 'h',
  toolSet: 'longda',
  dataChecksums: { 'a.csv': 'x' },
  loupeVersion: '0.1.0',
  sandbox: 'off',
  workspace: '/tmp/w',
};

forEachEngine((e) => {
  it('migrations applied once, reopen keeps data', async () => {
    const loc = await e.fresh();
    const s = await e.open(loc);
    const last = migrations[migrations.length - 1]!.id;
    assert.equal(await s.schemaVersion(), last);
    assert.equal(s.engine, e.name === 'sqlite' ? 'sqlite' : 'postgres');
    if (e.name === 'sqlite') assert.equal(sqliteHandleOf(s).pragma('journal_mode', { simple: true }), 'wal');
    await s.createRun({ ...base, id: 'r1' });
    await s.close();
    const s2 = await e.open(loc, [{ id: last + 1, name: 'extra', sql: 'CREATE TABLE extra_t (x INTEGER)' }]);
    assert.equal(await s2.schemaVersion(), last + 1);
    assert.equal((await s2.getRun('r1'))?.blockId, 'B');
    await s2.close();
    // a schema from a newer Loupe (one more migration than this one knows) is refused, naming both versions
    await assert.rejects(e.open(loc), new RegExp(`schema is version ${last + 1}, newer than this Loupe's ${last}`));
  });

  it('duplicate migration ids are refused with both names', async () => {
    await assert.rejects(
      async () => e.open(await e.fresh(), [{ id: 1, name: 'clash', sql: 'SELECT 1' }]),
      /two migrations share id 1 \('runs, steps.*', 'clash'\)/,
    );
  });

  it('commitStep is atomic with effects, sums tokens and cost, refuses duplicates', async () => {
    const s = await e.open(await e.fresh());
    await s.createRun({ ...base, id: 'r1' });
    await s.commitStep(step('r1', 0), {
      answers: [
        { runId: 'r1', queryId: 'q1', answer: 40.3, raw: '40.3', stepIndex: 0 },
        { runId: 'r1', queryId: 'q0', answer: 7, raw: '7', stepIndex: 0 },
      ],
      notes: ['n1', 'n2'],
      savedCode: 'print(1)',
      cells: [
        {
          runId: 'r1',
          seq: 0,
          stepIndex: 0,
          code: '1+1',
          status: 'ok',
          stdout: '',
          stderr: '',
          result: '2',
          error: null,
          tables: [],
          figures: [Buffer.from('png').toString('base64'), Buffer.from('png2').toString('base64')],
          durationMs: 3,
          replay: false,
        },
      ],
      extra: { k: 1 },
    });
    await s.commitStep(step('r1', 1), {
      answers: [{ runId: 'r1', queryId: 'q1', answer: [1, 2], raw: '[1, 2]', stepIndex: 1 }],
      notes: [],
    });
    await assert.rejects(s.commitStep(step('r1', 1)), /UNIQUE|constraint/i);
    const run = (await s.getRun('r1'))!;
    assert.equal(run.steps, 2);
    assert.deepEqual(run.tokens, { input: 20, output: 6, cached: 2 });
    assert.equal(run.costUsd, 1);
    assert.deepEqual(
      (await s.getAnswers('r1')).map((a) => [a.queryId, a.answer, a.stepIndex]),
      [
        ['q1', [1, 2], 1],
        ['q0', 7, 0],
      ],
      'first-recorded order, updated in place',
    );
    assert.deepEqual(await s.getNotes('r1'), []);
    assert.equal(await s.getSavedCode('r1'), 'print(1)');
    assert.deepEqual(await s.getExtraState('r1'), { k: 1 });
    const cells = await s.getCells('r1');
    assert.equal(cells.length, 1);
    assert.deepEqual(
      cells[0]!.figures.map((f) => Buffer.from(f, 'base64').toString()),
      ['png', 'png2'],
    );
    assert.equal(cells[0]!.figureCount, 2);
    const light = await s.getCells('r1', { withFigures: false });
    assert.deepEqual([light[0]!.figures, light[0]!.figureCount], [[], 2]);
    assert.equal((await s.getCells('r1', { sinceSeq: 0 })).length, 0);
    assert.equal(await s.nextCellSeq('r1'), 1);
    assert.deepEqual(
      (await s.getSteps('r1')).map((x) => x.index),
      [0, 1],
    );
    assert.deepEqual(
      (await s.getSteps('r1', 1)).map((x) => x.index),
      [1],
    );
    assert.equal((await s.getStep('r1', 1))?.index, 1);
    assert.equal((await s.getStep('r1', 0))?.assistant.content, 'step 0');
    assert.equal(await s.getStep('r1', 7), undefined);
    await s.close();
  });

  it('texts with quotes, backslashes, dollar signs, statement breaks and any Unicode are stored as given', async () => {
    const s = await e.open(await e.fresh());
    await s.createRun({ ...base, id: "r'1" });
    const nasty = "it's \\ $1 $$ E'x' ;-- DROP TABLE runs; \u00e9\u{1F600} \\' '' \n\t";
    await s.commitStep(
      step("r'1", 0, { assistant: { role: 'assistant', content: nasty, tool_calls: [] }, finishReason: nasty }),
      {
        answers: [{ runId: "r'1", queryId: nasty, answer: 1, raw: nasty, stepIndex: 0 }],
        notes: [nasty, ''],
        savedCode: nasty,
        extra: { nasty },
        cells: [
          {
            runId: "r'1",
            seq: 0,
            stepIndex: 0,
            code: nasty,
            status: 'ok',
            stdout: nasty,
            stderr: '',
            result: nasty,
            error: null,
            tables: [],
            figures: [],
            durationMs: 1,
            replay: false,
          },
        ],
      },
    );
    const st = (await s.getStep("r'1", 0))!;
    assert.deepEqual([st.assistant.content, st.finishReason], [nasty, nasty]);
    assert.deepEqual(
      (await s.getAnswers("r'1")).map((a) => [a.queryId, a.raw]),
      [[nasty, nasty]],
    );
    assert.deepEqual(await s.getNotes("r'1"), [nasty, '']);
    assert.equal(await s.getSavedCode("r'1"), nasty);
    assert.deepEqual(await s.getExtraState("r'1"), { nasty });
    assert.equal((await s.getCells("r'1"))[0]!.stdout, nasty);
    assert.equal((await s.listRuns()).length, 1);
    await s.close();
  });

  it('unknown token use (an external MCP client) reads as null, not 0, on runs, steps and summaries', async () => {
    const s = await e.open(await e.fresh());
    await s.createRun({ ...base, id: 'm1', tokensKnown: false });
    await s.commitStep(step('m1', 0, { usage: null, costUsd: null }));
    assert.equal((await s.getRun('m1'))!.tokens, null);
    assert.equal((await s.getStep('m1', 0))!.usage, null);
    assert.equal((await s.getStepSummaries('m1'))[0]!.usage, null);
    await s.createRun({ ...base, id: 'k1' });
    await s.commitStep(step('k1', 0));
    assert.deepEqual((await s.getStepSummaries('k1'))[0]!.usage, { input: 10, output: 3 });
    await s.close();
  });

  it('a failed step transaction leaves no partial effects', async () => {
    const s = await e.open(await e.fresh());
    await s.createRun({ ...base, id: 'r1' });
    await s.commitStep(step('r1', 0));
    await assert.rejects(
      s.commitStep(step('r1', 0), { answers: [{ runId: 'r1', queryId: 'qX', answer: 1, raw: '1', stepIndex: 0 }] }),
    );
    assert.equal((await s.getAnswers('r1')).length, 0);
    assert.equal((await s.getRun('r1'))!.steps, 1);
    await s.close();
  });

  it('listRuns filters and orders newest first; subscribeSteps sees steps written by another connection', async () => {
    const loc = await e.fresh();
    const writer = await e.open(loc);
    const reader = await e.open(loc);
    await writer.createRun({ ...base, id: 'r1' });
    await writer.createRun({ ...base, id: 'r2', blockId: 'C' });
    assert.deepEqual(
      (await reader.listRuns({ blockId: 'C' })).map((r) => r.id),
      ['r2'],
    );
    assert.deepEqual(
      (await reader.listRuns()).map((r) => r.id),
      ['r2', 'r1'],
    );
    assert.deepEqual(
      (await reader.listRuns({ limit: 1 })).map((r) => r.id),
      ['r2'],
    );
    await writer.updateRun('r1', { status: 'running', startedAt: '2026-01-01T00:00:00Z', addDurationMs: 12.6 });
    await writer.updateRun('r1', { startedAt: '2027-01-01T00:00:00Z', addDurationMs: 10 });
    const r1 = (await reader.getRun('r1'))!;
    assert.deepEqual([r1.status, r1.startedAt, r1.durationMs], ['running', '2026-01-01T00:00:00Z', 23]);
    assert.deepEqual(
      (await reader.listRuns({ status: 'running' })).map((r) => r.id),
      ['r1'],
    );
    await writer.commitStep(step('r1', 0)); // before the subscription: not reported
    const seen: string[] = [];
    const unsub = reader.subscribeSteps((st) => seen.push(`${st.runId}:${st.index}`), { intervalMs: 10 });
    await new Promise((r) => setTimeout(r, 50));
    await writer.commitStep(step('r1', 1));
    await writer.commitStep(step('r2', 0));
    for (let i = 0; i < 200 && seen.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    unsub();
    assert.deepEqual(seen, ['r1:1', 'r2:0']);
    await writer.close();
    await reader.close();
  });

  it('closing a store ends its step subscriptions: no poll runs on a closed connection (the window switched stores)', async () => {
    const loc = await e.fresh();
    const writer = await e.open(loc);
    const reader = await e.open(loc);
    await writer.createRun({ ...base, id: 'r1' });
    const seen: number[] = [];
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      const unsub = reader.subscribeSteps((st) => seen.push(st.index), { intervalMs: 5, fromStart: true });
      await writer.commitStep(step('r1', 0));
      for (let i = 0; i < 200 && seen.length < 1; i++) await new Promise((r) => setTimeout(r, 5));
      await reader.close();
      await writer.commitStep(step('r1', 1));
      await new Promise((r) => setTimeout(r, 60));
      unsub(); // still safe after close
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    assert.deepEqual(seen, [0]);
    assert.deepEqual(uncaught.map(String), []);
    await writer.close();
  });

  it("poll() reads what was committed at once, through the timer's read: each step once, in commit order, none after stop", async () => {
    const loc = await e.fresh();
    const writer = await e.open(loc);
    const reader = await e.open(loc);
    await writer.createRun({ ...base, id: 'r1' });
    await writer.createRun({ ...base, id: 'r2' });
    const seen: number[] = [];
    // a poll interval no test waits for: only poll() can deliver
    const sub = reader.subscribeSteps((st) => seen.push(st.index), { runId: 'r1', intervalMs: 3_600_000, afterSeq: 0 });
    const until = async (n: number) => {
      for (let i = 0; i < 400 && seen.length < n; i++) await new Promise((r) => setTimeout(r, 5));
    };
    try {
      await writer.commitStep(step('r1', 0));
      sub.poll();
      await until(1);
      assert.deepEqual(seen, [0]);
      // through the reading connection itself (the extension host's run and timeline share the store) and the other;
      // polls asked while a read is under way, and more polls than commits
      await reader.commitStep(step('r1', 1));
      await writer.commitStep(step('r2', 0));
      sub.poll();
      await writer.commitStep(step('r1', 2));
      sub.poll();
      sub.poll();
      await until(3);
      await reader.commitStep(step('r1', 3));
      sub.poll();
      sub.poll();
      await until(4);
      await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(seen, [0, 1, 2, 3], 'each step of the run once, in commit order');
    } finally {
      sub();
    }
    await writer.commitStep(step('r1', 4));
    sub.poll(); // after stop: nothing
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(seen, [0, 1, 2, 3]);
    await writer.close();
    await reader.close();
    sub.poll(); // and after close
  });

  it('step summaries and search read JSON in the store; events and deletes', async () => {
    const s = await e.open(await e.fresh());
    await s.createRun({ ...base, id: 'r1' });
    await s.commitStep(
      step('r1', 0, {
        assistant: {
          role: 'assistant',
          content: 'Loading the Hurricane data',
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'python', arguments: '{"code":"df.head()"}' } }],
        },
        toolCalls: [
          {
            id: 'c',
            name: 'python',
            argumentsText: '{"code":"df.head()"}',
            observation: 'NUL \u0000 ok',
            isError: false,
            truncated: false,
            durationMs: 1,
          },
          {
            id: 'd',
            name: 'sql',
            argumentsText: '{}',
            observation: 'no such table',
            isError: true,
            truncated: false,
            durationMs: 1,
          },
        ],
      }),
    );
    await s.commitStep(step('r1', 1));
    const sums = await s.getStepSummaries('r1');
    assert.deepEqual(
      sums.map((x) => [x.index, x.content, x.toolNames, x.anyError, x.firstArguments]),
      [
        [0, 'Loading the Hurricane data', ['python', 'sql'], true, '{"code":"df.head()"}'],
        [1, 'step 1', [], false, null],
      ],
    );
    assert.equal(
      (await s.getStep('r1', 0))!.toolCalls[0]!.observation,
      'NUL \u0000 ok',
      'a NUL inside JSON text round-trips',
    );
    assert.deepEqual(await s.searchSteps('r1', 'hurricane SUCH'), [0]);
    assert.deepEqual(await s.searchSteps('r1', 'step'), [1]);
    assert.deepEqual(await s.searchSteps('r1', ''), [0, 1]);
    await s.addEvent('r1', 'resume', 'first');
    await s.addEvent('r1', 'warning', 'second');
    await s.addEvent('r1', 'resume', 'third');
    assert.deepEqual(
      (await s.getEvents('r1')).map((x) => x.message),
      ['first', 'second', 'third'],
    );
    const byKind = await s.getEventsOf(['r1', 'nope'], 'resume');
    assert.deepEqual([byKind.get('r1')!.map((x) => x.message), byKind.get('nope')], [['first', 'third'], []]);
    assert.deepEqual((await s.getAnswersOf([])).size, 0);
    await s.scores.save({
      runId: 'r1',
      benchmark: 'longda',
      judgeId: 'exact',
      options: { b: 1, a: 2 },
      summary: { correct: 1 },
      detail: {},
      pending: 0,
      scoredAt: '2026-01-01T00:00:00Z',
    });
    assert.equal(await s.deleteRun('r1'), true);
    assert.equal(await s.deleteRun('r1'), false);
    assert.deepEqual(
      [await s.getSteps('r1'), await s.getEvents('r1'), await s.scores.list('r1')],
      [[], [], []],
      'deleting a run cascades',
    );
    await s.close();
  });

  it('run lease: one holder at a time, compare-and-set takeover after expiry; interventions only by the holder', async () => {
    const loc = await e.fresh();
    const a = await e.open(loc);
    const b = await e.open(loc);
    await a.createRun({ ...base, id: 'r1' });
    await assert.rejects(
      a.acquireRunLease('nope', { owner: 'A', host: 'h1', pid: process.pid }, 1000),
      /no run 'nope'/,
    );
    assert.deepEqual(await a.acquireRunLease('r1', { owner: 'A', host: 'h1', pid: process.pid }, 60_000), { ok: true });
    const denied = await b.acquireRunLease('r1', { owner: 'B', host: 'h2', pid: process.pid }, 60_000);
    assert.equal(denied.ok, false);
    assert.equal(!denied.ok && denied.holder.owner, 'A');
    assert.equal(await b.renewRunLease('r1', 'B', 1000), false);
    assert.equal(await a.renewRunLease('r1', 'A', 1), true);
    await new Promise((r) => setTimeout(r, 10));
    // two racing takeovers of the expired lease: exactly one wins
    const race = await Promise.all([
      b.acquireRunLease('r1', { owner: 'B', host: 'h2', pid: 1 }, 60_000),
      a.acquireRunLease('r1', { owner: 'C', host: 'h3', pid: 2 }, 60_000),
    ]);
    assert.equal(race.filter((r) => r.ok).length, 1, JSON.stringify(race));
    const winner = race[0]!.ok ? 'B' : 'C';
    assert.equal((await a.getRunLease('r1'))?.owner, winner);
    assert.equal(await a.addIntervention({ runId: 'r1', who: 'ana', kind: 'hint', text: 'no' }, 'A'), undefined);
    const i1 = await a.addIntervention({ runId: 'r1', who: 'ana', kind: 'hint', text: 'use median' }, winner);
    const i2 = await b.addIntervention(
      { runId: 'r1', who: 'bo', kind: 'correction', text: 'wrong column', beforeStep: 4 },
      winner,
    );
    assert.deepEqual([i1?.seq, i1?.beforeStep, i2?.seq, i2?.beforeStep], [1, 0, 2, 4]);
    assert.deepEqual(
      (await b.getInterventions('r1')).map((x) => x.text),
      ['use median', 'wrong column'],
    );
    await a.releaseRunLease('r1', 'A'); // not the holder: nothing changes
    assert.equal((await a.getRunLease('r1'))?.owner, winner);
    await a.releaseRunLease('r1', winner);
    assert.equal(await a.getRunLease('r1'), undefined);
    await a.close();
    await b.close();
  });

  it('judgements and scores: upsert keeps the first run, pending lists, canonical options', async () => {
    const s = await e.open(await e.fresh());
    await s.createRun({ ...base, id: 'r1' });
    const j = {
      key: 'k1',
      task: 'semantic-match',
      judgeId: 'human',
      inputHash: 'ih',
      promptHash: null,
      input: { a: 1 },
      raw: null,
      verdict: null,
      status: 'pending' as const,
      at: '2026-01-01T00:00:00Z',
    };
    await s.judgements.put(j, { runId: 'r1', itemRef: 'q1' });
    await s.judgements.put({ ...j, key: 'k2', task: 'other', at: '2026-01-02T00:00:00Z' });
    assert.deepEqual(
      (await s.judgements.listPending()).map((x) => x.key),
      ['k1', 'k2'],
    );
    assert.deepEqual(
      (await s.judgements.listPending('other')).map((x) => x.key),
      ['k2'],
    );
    await s.judgements.put(
      { ...j, status: 'done', verdict: { match: true }, annotator: 'ana', at: '2026-01-03T00:00:00Z' },
      { runId: 'r9' },
    );
    const got = (await s.judgements.get('k1'))!;
    assert.deepEqual([got.status, got.verdict, got.annotator], ['done', { match: true }, 'ana']);
    assert.deepEqual(
      (await s.judgements.listForRun('r1')).map((x) => x.key),
      ['k1'],
      'the first run that asked is kept',
    );
    assert.equal(await s.judgements.get('zz'), undefined);
    const sc = {
      runId: 'r1',
      benchmark: 'longda',
      judgeId: 'exact',
      options: { z: 1, a: 'x' },
      summary: { correct: 0.5 },
      detail: { rows: [1] },
      pending: 2,
      scoredAt: '2026-01-01T00:00:00Z',
    };
    await s.scores.save(sc);
    await s.scores.save({ ...sc, options: { a: 'x', z: 1 }, pending: 0, scoredAt: '2026-01-02T00:00:00Z' });
    await s.scores.save({ ...sc, judgeId: 'llm:m', scoredAt: '2026-01-03T00:00:00Z' });
    const list = await s.scores.list('r1');
    assert.deepEqual(
      list.map((x) => [x.judgeId, x.pending, Object.keys(x.options)]),
      [
        ['llm:m', 2, ['a', 'z']],
        ['exact', 0, ['a', 'z']],
      ],
    );
    assert.equal((await s.scores.list()).length, 2);
    await s.close();
  });

  if (e.name === 'postgres') {
    it('the database restarted while a store is open: the next calls reconnect, nothing committed is lost', async () => {
      const s = await e.open(await e.fresh());
      await s.createRun({ ...base, id: 'r1' });
      await s.commitStep(step('r1', 0));
      await Promise.all([s.getRun('r1'), s.getSteps('r1'), s.getEvents('r1')]); // several pooled connections
      e.server()!.restart();
      await s.commitStep(step('r1', 1)); // the connections the restart closed are replaced, the commit is sent again
      assert.equal((await s.getRun('r1'))!.steps, 2);
      await Promise.all([s.getRun('r1'), s.getSteps('r1'), s.getEvents('r1')]);
      e.server()!.restart();
      await s.applyEffects('r1', 1, { notes: ['after the restart'] }); // a transaction whose BEGIN meets a closed connection starts again
      assert.deepEqual(await s.getNotes('r1'), ['after the restart']);
      assert.deepEqual(
        (await s.getSteps('r1')).map((x) => x.index),
        [0, 1],
      );
      await s.close();
    });

    it('opened lazily (the VS Code accessor): the first call connects and migrates, with the password asked from a provider; a failed first call is retried by the next', async () => {
      const url = await e.fresh();
      const srv = e.server()!;
      let asked = 0;
      let pw = 'wrong';
      const s = openStoreLazily(parseStoreLocation(url, '/'), { password: async () => (asked++, pw) });
      await assert.rejects(s.listRuns(), /PostgreSQL refused role 'loupe'/);
      pw = process.env[srv.passwordEnv]!;
      assert.deepEqual(
        await annotationStoreOf(s).listQueues(),
        [],
        'an annotation call first also waits for the migrations',
      );
      assert.equal(await s.schemaVersion(), migrations.at(-1)!.id);
      assert.ok(asked >= 2, `password asked ${asked} times`);
      await s.close();
    });

    it('live team view: a watcher sees runs, steps and annotations another connection writes (LISTEN/NOTIFY), also after a server restart', async () => {
      const loc = await e.fresh();
      const reader = await e.open(loc);
      const writer = await e.open(loc);
      const seen: Array<{ c: StoreChange; at: number }> = [];
      const stop = watchStoreChanges(reader, (c) => seen.push({ c, at: performance.now() }))!;
      await (reader as PgRunStore).listening();
      const waitFor = async (pred: (c: StoreChange) => boolean) => {
        for (let i = 0; i < 200 && !seen.some((x) => pred(x.c)); i++) await new Promise((r) => setTimeout(r, 10));
        const hit = seen.find((x) => pred(x.c));
        assert.ok(hit, `no change matching in ${JSON.stringify(seen.map((x) => x.c))}`);
        return hit.at;
      };
      const t0 = performance.now();
      await writer.createRun({ ...base, id: 'r1' });
      const runLag = (await waitFor((c) => c.kind === 'run' && c.runId === 'r1')) - t0;
      const t1 = performance.now();
      await writer.commitStep(step('r1', 0));
      const stepLag = (await waitFor((c) => c.kind === 'step' && c.runId === 'r1' && c.index === 0)) - t1;
      await writer.judgements.put(
        {
          key: 'k',
          task: 'claim-support',
          judgeId: 'human',
          inputHash: 'h1',
          promptHash: null,
          input: { claim: 'c', sources: 's' },
          raw: null,
          verdict: null,
          status: 'pending',
          at: '2026-01-01T00:00:00Z',
        },
        { runId: 'r1' },
      );
      const ann = annotationStoreOf(writer);
      await ann.syncFromJudgements();
      await ann.annotate({ itemId: 'j:claim-support:h1', annotator: 'bo', verdict: { supported: true, reason: '' } });
      await waitFor((c) => c.kind === 'annotation' && c.annotator === 'bo');
      assert.ok(Math.max(runLag, stepLag) < 1000, `lags ${runLag} ${stepLag} ms`);
      e.server()!.restart();
      await waitFor((c) => c.kind === 'reconnected');
      await writer.commitStep(step('r1', 1));
      await waitFor((c) => c.kind === 'step' && c.index === 1);
      stop();
      await reader.close();
      await writer.close();
      console.log(`change seen after: run ${runLag.toFixed(1)} ms, step ${stepLag.toFixed(1)} ms`);
    });

    it('an unreachable server is a clear error naming host and port; nothing is created', async () => {
      const url = e.server()!.url('x').replace(`:${e.server()!.port}/`, ':1/');
      await assert.rejects(e.open(url), /cannot reach PostgreSQL at 127\.0\.0\.1:1 \(ECONNREFUSED\)/);
      await assert.rejects(
        e.open(e.server()!.url('no_such_db')),
        /no database 'no_such_db' on 127\.0\.0\.1:\d+: create it first/,
      );
    });
  }
});
