/**
 * The model × question matrix view model (issue 43) on stores built through the store API: LongDA-shaped scores of
 * two profiles (model-a, model-b at T=0.7) and a third (model-a at T=0) over two publications × 3 repeats, one run
 * unscored, one with a tool error; and the test-only count-rows benchmark (any registered benchmark, generic through
 * its definition). Checks columns = Bradley–Terry players, dots per repeat, filters, blind mode, run selection.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import '../../../fixtures/benchmarks/register.ts';
import { expectedOf, loadMatrix, matrixView, rowFlags } from '../../../../src/app/matrix/matrix.ts';
import { playerOf } from '../../../../src/core/review/pairwise.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';
import type { RunStore } from '../../../../src/core/store/types.ts';
import type { MatrixDot } from '../../../../src/protocol/matrix.ts';

const BLOCKS = ['pub-1', 'pub-2'];
const QUERIES = 3;
/** model-a right on every item but q2 (wrong everywhere), model-b right only on q0; the T=0 profile as model-a. */
const match = (model: string, q: number): number => (q === 2 ? 0 : model === 'model-b' ? (q === 0 ? 1 : 0) : 1);

let dir = '';
let store: RunStore;
const base = {
  agent: 'llm',
  promptHash: 'h',
  toolSet: 'longda',
  dataChecksums: {},
  loupeVersion: 't',
  sandbox: 'off' as const,
};
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-matrix-'));
  store = openStore(join(dir, 'runs.sqlite'));
  let n = 0;
  const profiles = [
    { model: 'model-a', temperature: 0.7 },
    { model: 'model-b', temperature: 0.7 },
    { model: 'model-a', temperature: 0 },
  ];
  for (const p of profiles) {
    for (const blockId of BLOCKS) {
      for (let r = 0; r < 3; r++) {
        const id = `${p.model}-T${p.temperature}-${blockId}-${r}`;
        await store.createRun({
          ...base,
          suite: 'longda',
          id,
          blockId,
          model: p.model,
          params: { temperature: p.temperature },
          workspace: dir,
        });
        await store.updateRun(id, { status: 'finished' });
        if (p.model === 'model-b' && blockId === 'pub-2' && r === 2) continue; // unscored repeat
        const rows = Array.from({ length: QUERIES }, (_, q) => ({
          qId: `q${q}`,
          question: `How many in ${blockId} q${q}?`,
          survey: 'NHANES',
          source: blockId,
          internalId: q,
          answerStructure: 'single',
          rawAnswer: String(match(p.model, q)),
          match: match(p.model, q),
          given: match(p.model, q),
          expected: 1,
        }));
        const summary = { match: rows.reduce((a, x) => a + x.match, 0) / QUERIES };
        const detail = {
          runId: id,
          suite: 'longda',
          blockId,
          model: p.model,
          agent: 'llm',
          status: 'finished',
          benchmark: 'longda',
          judgeId: 'none',
          options: {},
          summary,
          pending: 0,
          unjudged: 0,
          detail: { score: { rows } },
        };
        await store.scores.save({
          runId: id,
          benchmark: 'longda',
          judgeId: 'none',
          options: {},
          summary,
          detail,
          pending: 0,
          scoredAt: new Date(Date.UTC(2026, 0, 1) + n++).toISOString(),
        });
      }
    }
  }
  // one answer record (step 4) on model-a's first run, and a tool error on model-b's first run of pub-1
  const step = (runId: string, index: number, isError: boolean) =>
    store.commitStep(
      {
        runId,
        index,
        startedAt: new Date().toISOString(),
        endedAt: new Date().toISOString(),
        latencyMs: 1,
        toolMs: 1,
        usage: null,
        costUsd: null,
        finishReason: 'tool_calls',
        extraMessages: [],
        assistant: {
          role: 'assistant',
          content: '',
          tool_calls: [{ id: `c${index}`, type: 'function', function: { name: 'python', arguments: '{}' } }],
        },
        toolCalls: [
          {
            id: `c${index}`,
            name: 'python',
            argumentsText: '{}',
            observation: isError ? 'Traceback' : 'ok',
            isError,
            truncated: false,
            durationMs: 1,
          },
        ],
      } as never,
      index === 4 ? ({ answers: [{ runId, queryId: 'q1', answer: 1, raw: '1', stepIndex: 4 }] } as never) : undefined,
    );
  for (let i = 0; i <= 4; i++) await step('model-a-T0.7-pub-1-0', i, false);
  await store.updateRun('model-a-T0.7-pub-1-0', { steps: 5 } as never);
  await step('model-b-T0.7-pub-1-0', 0, true);
  await store.updateRun('model-b-T0.7-pub-1-0', { steps: 1 } as never);
  // a running run is never in the matrix
  await store.createRun({
    ...base,
    suite: 'longda',
    id: 'still-running',
    blockId: 'pub-1',
    model: 'model-c',
    params: {},
    workspace: dir,
  });
  await store.updateRun('still-running', { status: 'running' });
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const dot = (verdict: MatrixDot['verdict'], credit: number | null, toolErrors = 0): MatrixDot => ({
  runId: 'r',
  repeat: 1,
  verdict,
  credit,
  given: '',
  stepIndex: null,
  toolErrors,
});

describe('matrix view model', () => {
  it('has a column per Bradley–Terry player, a row per item with its question, repeats as dots in order', async () => {
    const m = await loadMatrix(store, { suite: 'longda' });
    const v = matrixView(m, { blind: false });
    const runs = await store.listRuns({ suite: 'longda' });
    const players = [...new Set(runs.filter((r) => r.status === 'finished').map((r) => playerOf(r).player))];
    assert.deepEqual(new Set(v.columns.map((c) => c.player)), new Set(players));
    assert.equal(v.columns.length, 3);
    assert.equal(v.rows.length, BLOCKS.length * QUERIES);
    const r = v.rows.find((x) => x.key === 'pub-1/q0')!;
    assert.match(r.question, /\S/);
    for (const cell of r.cells) {
      assert.deepEqual(
        cell.map((d) => d.repeat),
        [1, 2, 3],
      );
    }
    assert.ok(!v.columns.some((c) => c.runIds.includes('still-running')));
    assert.equal(r.expected, undefined, 'expected values are not sent unless asked');
  });

  it('takes an unscored run as a grey dot, never into a mean (Results: run sets are not mixed)', async () => {
    const v = matrixView(await loadMatrix(store, { suite: 'longda' }), { blind: false });
    const b = v.columns.findIndex((c) => c.model === 'model-b');
    assert.deepEqual(v.columns[b]!.unscored, ['model-b-T0.7-pub-2-2']);
    const row = v.rows.find((x) => x.key === 'pub-2/q0')!;
    assert.deepEqual(
      row.cells[b]!.map((d) => d.verdict),
      ['right', 'right', 'unscored'],
    );
    assert.equal(row.cells[b]![2]!.credit, null);
    assert.ok(row.flags.unscored);
    // model-b's mean over its scored dots: q0 right (1) on 6 dots... 5 scored q0 dots, q1 and q2 wrong on 5 each
    assert.equal(v.columns[b]!.mean, 5 / 15);
  });

  it('filters: wrong in every repeat, profiles disagree, unscored, tool errors', async () => {
    const m = await loadMatrix(store, { suite: 'longda' });
    const keys = (f: Parameters<typeof matrixView>[1]['filter']) =>
      matrixView(m, { blind: false, filter: f })
        .rows.map((r) => r.key)
        .sort();
    assert.deepEqual(keys('wrong-every-repeat'), ['pub-1/q2', 'pub-2/q2']);
    assert.deepEqual(keys('disagree'), ['pub-1/q1', 'pub-2/q1']);
    assert.deepEqual(keys('unscored'), ['pub-2/q0', 'pub-2/q1', 'pub-2/q2']);
    assert.deepEqual(keys('tool-errors'), ['pub-1/q0', 'pub-1/q1', 'pub-1/q2']);
    const v = matrixView(m, { blind: false, filter: 'disagree' });
    assert.deepEqual(v.counts, { all: 6, 'wrong-every-repeat': 2, disagree: 2, unscored: 3, 'tool-errors': 3 });
  });

  it('narrows to two profiles: flags computed over the columns shown (the compare panel link)', async () => {
    const m = await loadMatrix(store, { suite: 'longda' });
    const a = m.columns.filter((c) => c.model === 'model-a').map((c) => c.player);
    const v = matrixView(m, { blind: false, profiles: a, filter: 'disagree' });
    assert.equal(v.columns.length, 2);
    assert.equal(v.rows.length, 0, 'model-a at two temperatures agree on every item');
    assert.throws(() => matrixView(m, { blind: false, profiles: ['nobody'] }), /no profile 'nobody'/);
  });

  it('opens the answer step: the dot carries the step that recorded the answer; tool errors per run', async () => {
    const v = matrixView(await loadMatrix(store, { suite: 'longda' }), { blind: false });
    const a = v.columns.findIndex(
      (c) =>
        c.player ===
        playerOf({ agent: 'llm', model: 'model-a', params: { temperature: 0.7 }, promptHash: 'h', toolSet: 'longda' })
          .player,
    );
    const row = v.rows.find((x) => x.key === 'pub-1/q1')!;
    assert.equal(row.cells[a]![0]!.stepIndex, 4);
    assert.equal(row.cells[a]![1]!.stepIndex, null);
    const b = v.columns.findIndex((c) => c.model === 'model-b');
    assert.equal(row.cells[b]![0]!.toolErrors, 1);
  });

  it('reveals the expected value on demand, never in blind mode', async () => {
    const m = await loadMatrix(store, { suite: 'longda' });
    assert.equal(
      matrixView(m, { blind: false, reveal: new Set(['pub-1/q0']) }).rows.find((r) => r.key === 'pub-1/q0')!.expected,
      '1',
    );
    assert.equal(
      matrixView(m, { blind: false, reveal: new Set(['pub-1/q0']) }).rows.find((r) => r.key === 'pub-1/q1')!.expected,
      undefined,
    );
    const blind = matrixView(m, { blind: true, reveal: 'all' });
    assert.ok(blind.rows.every((r) => !('expected' in r)));
    assert.ok(!JSON.stringify(blind).includes('"expected"'));
    assert.equal(expectedOf(m, 'pub-1/q0', false), '1');
    assert.throws(() => expectedOf(m, 'pub-1/q0', true), /blind mode/);
    assert.throws(() => expectedOf(m, 'pub-9/q0', false), /no item 'pub-9\/q0'/);
  });

  it('loads through a run selector (ids or predicate) so an experiment scope applies', async () => {
    const ids = ['model-a-T0.7-pub-1-0', 'model-b-T0.7-pub-1-1'];
    const v = matrixView(await loadMatrix(store, { suite: 'longda', runs: ids }), { blind: false });
    assert.deepEqual(v.columns.flatMap((c) => c.runIds).sort(), ids);
    assert.deepEqual(
      v.rows.map((r) => r.block),
      ['pub-1', 'pub-1', 'pub-1'],
    );
    const p = matrixView(await loadMatrix(store, { suite: 'longda', runs: (r) => r.model === 'model-b' }), {
      blind: false,
    });
    assert.equal(p.columns.length, 1);
    await assert.rejects(loadMatrix(store, { suite: 'longda', runs: ['nope'] }), /not finished runs/);
    await assert.rejects(loadMatrix(store, { suite: 'nosuch' }), /nosuch/);
  });

  it('rowFlags: pending and missing dots are not scored; one profile cannot disagree', () => {
    assert.deepEqual(rowFlags([[dot('wrong', 0), dot('pending', null)]]), {
      wrongEveryRepeat: true,
      disagree: false,
      unscored: true,
      toolErrors: false,
    });
    assert.deepEqual(rowFlags([[dot('right', 1)], [dot('missing', null, 2)]]), {
      wrongEveryRepeat: false,
      disagree: false,
      unscored: false,
      toolErrors: true,
    });
    assert.equal(rowFlags([[dot('unscored', null)]]).wrongEveryRepeat, false);
    assert.equal(rowFlags([[dot('right', 1)], [dot('partial', 0.5)]]).disagree, true);
  });
});

describe('matrix of any registered benchmark (the test-only count-rows fixture)', () => {
  it("rows come from the definition's item outcomes", async () => {
    const s2 = openStore(join(dir, 'cr.sqlite'));
    try {
      for (const [i, model] of ['m1', 'm2'].entries()) {
        const id = `cr-${model}`;
        await s2.createRun({
          ...base,
          toolSet: 'count-rows',
          suite: 'count-rows',
          id,
          blockId: 'a.csv',
          model,
          params: {},
          workspace: dir,
        });
        await s2.updateRun(id, { status: 'finished' });
        const detail = {
          runId: id,
          suite: 'count-rows',
          blockId: 'a.csv',
          model,
          agent: 'llm',
          status: 'finished',
          benchmark: 'count-rows',
          judgeId: 'none',
          options: {},
          summary: { accuracy: 1 - i },
          pending: 0,
          unjudged: 0,
          detail: { given: i ? 7 : 3, expected: 3 },
        };
        await s2.scores.save({
          runId: id,
          benchmark: 'count-rows',
          judgeId: 'none',
          options: {},
          summary: { accuracy: 1 - i },
          detail,
          pending: 0,
          scoredAt: new Date(Date.UTC(2026, 0, 1) + i).toISOString(),
        });
      }
      const m = await loadMatrix(s2, { suite: 'count-rows' });
      const v = matrixView(m, { blind: false, filter: 'disagree' });
      assert.deepEqual(
        v.rows.map((r) => [r.key, r.question, r.cells.map((c) => c.map((d) => d.verdict))]),
        [['a.csv/q1', 'Number of data rows', [['right'], ['wrong']]]],
      );
      assert.equal(expectedOf(m, 'a.csv/q1', false), '3');
    } finally {
      await s2.close();
    }
  });
});
