/**
 * Issue 22: per-item correctness where the expert looks. A real LongDA block (NCHS Data Brief 508 from $LOUPE_SHARED)
 * answered by runs that get some queries right, one wrong and one list partly right: the timeline's marks (live and
 * from a stored score), the per-question drill-down across repeats, and the spread of a value across repeats.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadLongdaGroundTruth } from '../../../../src/core/benchmarks/longda/eval.ts';
import { parseAnswerArg } from '../../../../src/core/benchmarks/longda/toolset.ts';
import type { StepRecord } from '../../../../src/core/agent/types.ts';
import { createJudge } from '../../../../src/core/eval/judges/factory.ts';
import { judgementStoreOf } from '../../../../src/core/eval/store.ts';
import { saveRunScore, scoreStoredRun } from '../../../../src/core/runs/score-stored-run.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';
import type { RunStore } from '../../../../src/core/store/types.ts';
import {
  answerMarks,
  isRunScore,
  outcomeTally,
  questionDrilldown,
  spreadOf,
  SPREAD_CI_FROM,
  timelineScoring,
} from '../../../../src/app/results/outcomes.ts';
import { buildResultsState } from '../../../../src/app/results/results-data.ts';
import { sharedData } from '../../../helpers/shared.ts';

const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const gt = loadLongdaGroundTruth(join(sharedData('longda', 'benchmark'), 'benchmark.csv')).filter(
  (q) => q.source === 'NCHS Data Brief No. 508',
);
const truth = (i: number) => (parseAnswerArg(gt[i]!.answerText) as { value: number | number[] }).value;
/** A value far outside LongTA's tolerance of `v` (every element ×3 + 10). */
const wrong = (v: number | number[]): number | number[] => (Array.isArray(v) ? v.map((x) => x * 3 + 10) : v * 3 + 10);

let dir = '';
let store: RunStore;

function answerStep(runId: string, index: number, answers: Array<[string, number | number[]]>): StepRecord {
  const now = new Date().toISOString();
  return {
    runId,
    index,
    startedAt: now,
    endedAt: now,
    latencyMs: 1,
    toolMs: 1,
    assistant: { role: 'assistant', content: `step ${index}` },
    toolCalls: answers.map(([q, v], k) => ({
      id: `c${index}-${k}`,
      name: 'answer',
      argumentsText: JSON.stringify({ action: 'add', q_id: q, answer: v }),
      observation: 'ok',
      isError: false,
      truncated: false,
      durationMs: 1,
    })),
    extraMessages: [],
    usage: { input: 10, output: 1, cached: 0 },
    costUsd: null,
    finishReason: 'tool_calls',
  };
}

/** A run answering query i (0-based) with `values[i]` at step i (undefined: not answered). */
async function makeRun(id: string, repeat: number, values: Array<number | number[] | undefined>): Promise<void> {
  await store.createRun({
    id,
    suite: 'longda',
    blockId: BLOCK,
    agent: 'llm',
    model: 'model-a',
    params: { suiteRoot: sharedData('longda', 'benchmark'), repeat },
    promptHash: 'h',
    toolSet: 'longda',
    dataChecksums: {},
    loupeVersion: 't',
    sandbox: 'off',
    workspace: dir,
  });
  let step = 0;
  for (const [i, v] of values.entries()) {
    if (v === undefined) continue;
    const q = gt[i]!.longdaId;
    await store.commitStep(answerStep(id, step, [[q, v]]), {
      answers: [{ runId: id, queryId: q, answer: v, raw: JSON.stringify(v), stepIndex: step }],
    });
    step++;
  }
  await store.updateRun(id, { status: 'finished' });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-outcomes-'));
  store = openStore(join(dir, 'runs.sqlite'));
  // r1: q1 right, q2 (a list of two) one element right, q3 wrong, the rest unanswered.
  const q2 = truth(1) as number[];
  await makeRun('r1', 1, [truth(0), [q2[0]!, q2[1]! * 3 + 10], wrong(truth(2))]);
  // r2: q1 wrong, q2 right, q3 right.
  await makeRun('r2', 2, [wrong(truth(0)), truth(1), truth(2)]);
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('item outcomes (issue 22)', () => {
  it('the block has list queries to be partly right', () => {
    assert.equal(gt.length, 9);
    assert.ok(Array.isArray(truth(1)) && (truth(1) as number[]).length >= 2);
  });

  it('places each verdict on the step that recorded the answer; scored live for a judge-free benchmark', async () => {
    const run = (await store.getRun('r1'))!;
    const s = await timelineScoring(store, run);
    assert.ok(s);
    assert.equal(s.source, 'live');
    assert.deepEqual(Object.keys(s.byStep).map(Number), [0, 1, 2]);
    assert.equal(s.byStep[0]![0]!.verdict, 'right');
    assert.equal(s.byStep[1]![0]!.verdict, 'partial', 'LongDA list_scoring=partial by default');
    assert.ok(s.byStep[1]![0]!.credit! > 0 && s.byStep[1]![0]!.credit! < 1);
    assert.equal(s.byStep[2]![0]!.verdict, 'wrong');
    assert.equal(
      s.byStep[2]![0]!.expected,
      JSON.stringify(truth(2)),
      'the expected value travels with the mark (shown on demand)',
    );
    assert.equal(s.byStep[2]![0]!.given, JSON.stringify(wrong(truth(2))));
    assert.equal(s.unplaced.length, 6);
    assert.ok(s.unplaced.every((m) => m.verdict === 'unanswered' && m.given === ''));
    assert.deepEqual(s.tally, { right: 1, partial: 1, wrong: 1, unanswered: 6, pending: 0, total: 9 });
  });

  it('uses the stored score when there is one', async () => {
    const judge = createJudge({ kind: 'none' }, judgementStoreOf(store));
    const sc = await scoreStoredRun(store, 'r2', { judge });
    await saveRunScore(store, sc);
    const s = await timelineScoring(store, (await store.getRun('r2'))!);
    assert.equal(s?.source, 'stored');
    assert.equal(s?.byStep[0]?.[0]?.verdict, 'wrong');
    assert.equal(s?.tally.right, 2);
  });

  it('answerMarks and outcomeTally on their own', () => {
    const o = [
      { ref: 'a', question: 'A', verdict: 'right' as const, credit: 1, given: '1', expected: '1' },
      { ref: 'b', question: 'B', verdict: 'pending' as const, credit: null, given: 'x', expected: '' },
    ];
    const m = answerMarks([{ queryId: 'a', stepIndex: 4 }], o);
    assert.deepEqual(Object.keys(m.byStep), ['4']);
    assert.equal(m.byStep[4]![0]!.stepIndex, 4);
    assert.deepEqual(
      m.unplaced.map((x) => x.ref),
      ['b'],
    );
    assert.deepEqual(outcomeTally(o), { right: 1, partial: 0, wrong: 0, unanswered: 0, pending: 1, total: 2 });
  });

  it('drill-down: block → question → each repeat against the truth, with the step, and the spread of credit', async () => {
    const judge = createJudge({ kind: 'none' }, judgementStoreOf(store));
    await saveRunScore(store, await scoreStoredRun(store, 'r1', { judge }));
    const runs = [(await store.getRun('r1'))!, (await store.getRun('r2'))!];
    const scores = new Map<string, never>();
    for (const r of runs) {
      const row = (await store.scores.list(r.id))[0]!;
      assert.ok(isRunScore(row.detail));
      scores.set(r.id, row.detail as never);
    }
    const d = questionDrilldown(runs, scores, await store.getAnswersOf(runs.map((r) => r.id)));
    assert.equal(d.length, 1);
    assert.equal(d[0]!.blockId, BLOCK);
    assert.equal(d[0]!.questions.length, 9);
    const q1 = d[0]!.questions[0]!;
    assert.equal(q1.ref, gt[0]!.longdaId);
    assert.deepEqual(
      q1.repeats.map((x) => [x.runId, x.repeat, x.verdict, x.stepIndex]),
      [
        ['r1', 1, 'right', 0],
        ['r2', 2, 'wrong', 0],
      ],
    );
    assert.equal(q1.spread?.kind, 'points');
    assert.deepEqual([q1.spread?.min, q1.spread?.max, q1.spread?.n], [0, 1, 2]);
    const q3 = d[0]!.questions[2]!;
    assert.deepEqual(
      q3.repeats.map((x) => [x.verdict, x.stepIndex]),
      [
        ['wrong', 2],
        ['right', 2],
      ],
    );
  });

  it('issue 42 defect 3: two run profiles in one drill-down are split, never pooled; repeats numbered within their profile', async () => {
    const [r1, r2] = [(await store.getRun('r1'))!, (await store.getRun('r2'))!];
    // r3: another profile (model-b) with r2's answers; r4: model-a at another temperature (another profile, same model)
    const r3 = { ...r2, id: 'r3', model: 'model-b', createdAt: '2099-01-01T00:00:00Z' };
    const r4 = { ...r1, id: 'r4', params: { ...r1.params, temperature: 0.7 }, createdAt: '2099-01-02T00:00:00Z' };
    const score = async (id: string) => (await store.scores.list(id))[0]!.detail as never;
    await saveRunScore(
      store,
      await scoreStoredRun(store, 'r1', { judge: createJudge({ kind: 'none' }, judgementStoreOf(store)) }),
    );
    const scores = new Map<string, never>([
      ['r1', await score('r1')],
      ['r2', await score('r2')],
      ['r3', await score('r2')],
      ['r4', await score('r1')],
    ]);
    const answers = await store.getAnswersOf(['r1', 'r2']);
    answers.set('r3', answers.get('r2')!);
    answers.set('r4', answers.get('r1')!);
    const q1 = questionDrilldown([r1, r2, r3, r4], scores, answers)[0]!.questions[0]!;
    const byProfile = Object.fromEntries(
      q1.profiles.map((p) => [p.label, [p.runIds, p.spread?.n, p.spread?.min, p.spread?.max]]),
    );
    assert.deepEqual(byProfile, {
      'model-a': [['r1', 'r2'], 2, 0, 1],
      'model-a · T=0.7': [['r4'], 1, 1, 1],
      'model-b': [['r3'], 1, 0, 0],
    });
    assert.equal(q1.spread, null, 'no spread pooled across profiles');
    assert.deepEqual(
      q1.repeats.map((x) => [x.runId, x.profile, x.repeat]),
      [
        ['r1', 'model-a', 1],
        ['r2', 'model-a', 2],
        ['r4', 'model-a · T=0.7', 1],
        ['r3', 'model-b', 1],
      ],
    );
  });

  it('issue 42 defect 3: the drill-down shows each question as the agent was asked it, not its id and answer shape', async () => {
    const st = await buildResultsState(store, 'test');
    const qs = st.drilldown![0]!.questions;
    assert.equal(qs[0]!.question, gt[0]!.question);
    assert.doesNotMatch(qs.map((q) => q.question).join('\n'), /query \d+ \((single_number|\[)/);
  });

  it('Results state: the drill-down, and the spread of each rate across the repeats of a model × block', async () => {
    const st = await buildResultsState(store, 'test');
    assert.equal(st.drilldown?.length, 1);
    assert.deepEqual(st.drilldown![0]!.runIds.sort(), ['r1', 'r2']);
    const row = st.tables.find((t) => t.suite === 'longda')!.rows.find((r) => r.block === BLOCK)!;
    const perRun = await Promise.all(
      ['r1', 'r2'].map(async (id) => (await store.scores.list(id))[0]!.summary.match as number),
    );
    assert.equal(row.cells.match?.spread?.kind, 'points');
    assert.deepEqual(
      row.cells.match?.spread?.points,
      [...perRun].sort((a, b) => a - b),
    );
    assert.deepEqual(
      [row.cells.match?.spread?.min, row.cells.match?.spread?.max],
      [Math.min(...perRun), Math.max(...perRun)],
    );
  });

  it('spread: min–max and points below 5 repeats, a seeded bootstrap CI of the mean from 5 on', () => {
    assert.equal(spreadOf([]), null);
    const few = [0.2, 0.9, 0.5];
    const a = spreadOf(few)!;
    assert.equal(a.kind, 'points');
    assert.deepEqual(
      [a.min, a.max, a.n, a.points],
      [Math.min(...few), Math.max(...few), 3, [...few].sort((x, y) => x - y)],
    );
    const many = [0.1, 0.4, 0.35, 0.8, 0.6, 0.55];
    assert.ok(many.length >= SPREAD_CI_FROM);
    const b = spreadOf(many)!;
    assert.equal(b.kind, 'ci');
    assert.equal(b.n, many.length);
    assert.ok(Math.abs(b.mean - many.reduce((x, y) => x + y, 0) / many.length) < 1e-12);
    assert.ok(b.lo! <= b.mean && b.mean <= b.hi!, `${b.lo} ≤ ${b.mean} ≤ ${b.hi}`);
    assert.ok(b.lo! >= b.min && b.hi! <= b.max);
    assert.ok(b.hi! - b.lo! < b.max - b.min, 'the CI of the mean is narrower than the range');
    assert.deepEqual(spreadOf(many), b, 'seeded: the same values give the same interval');
    const same = spreadOf([0.5, 0.5, 0.5, 0.5, 0.5])!;
    assert.deepEqual([same.lo, same.hi], [0.5, 0.5]);
  });
});
