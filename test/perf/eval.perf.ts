/**
 * Evaluation perf (issue 8, gates per issue 23): LongDA scoring of 505 answers, against a baseline measured in the same
 * run (JSON.parse of every answer plus a bare numeric comparison: the floor any scorer pays). Baseline, default scoring
 * and strict/structural scoring alternate, ROUNDS rounds after WARMUP untimed ones; medians.
 * Gates (verdict lines; a FAIL exits 1): LongDA scoring ≤ 50 ms median, with the default options and with
 * list_scoring=strict + coverage=structural (absolute goal: the ratio printed is to the goal, the baseline beside it).
 * Answers are the 474 ground-truth rows of benchmark.csv padded to 505 with copies under new q_ids,
 * written in mixed agent styles (percent signs, thousands commas, ± tolerances, free text, dicts).
 * Also times the tool-usage heatmap (information, no goal). Then prints one JSON report (kept for tooling).
 */
import { loadLongdaGroundTruth, scoreLongda } from '../../src/core/benchmarks/longda/eval.ts';
import { toolUsageHeatmap } from '../../src/core/benchmarks/longda/eval.ts';
import { sharedData } from '../helpers/shared.ts';
import { verdict } from './verdict.ts';

const GOAL_MS = 50;
const ROUNDS = 50;
const WARMUP = 20;

const gt0 = loadLongdaGroundTruth(sharedData('longda', 'benchmark', 'benchmark.csv'));
const gt: Array<(typeof gt0)[number]> = [...gt0];
for (let i = 0; gt.length < 505; i++) {
  const q = gt0[i % gt0.length]!;
  gt.push({ ...q, longdaId: `${q.longdaId}_copy${i}`, source: `${q.source}_copy` });
}
const styles = [
  (a: string) => a,
  (a: string) => `${a}%`,
  (a: string) => `about ${a} percent`,
  (a: string) => `${a} ± 0.4`,
  (a: string) => a.replace(/\[|\]/g, ''),
  (a: string) => `men: ${a}`,
];
const answers = new Map(gt.map((q, i) => [q.longdaId, styles[i % styles.length]!(q.answerText)]));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
function time(fn: () => unknown, reps: number): number {
  for (let i = 0; i < 20; i++) fn(); // warm-up
  const ts: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    fn();
    ts.push(performance.now() - t);
  }
  return median(ts);
}

function baseline(): number {
  let hits = 0;
  for (const q of gt) {
    let a: unknown;
    let g: unknown;
    try {
      a = JSON.parse(answers.get(q.longdaId)!);
    } catch {
      a = null;
    }
    try {
      g = JSON.parse(q.answerText);
    } catch {
      g = null;
    }
    if (typeof a === 'number' && typeof g === 'number' && Math.abs(a - g) <= Math.max(0.05 * Math.abs(g), 1)) hits++;
  }
  return hits;
}
let last = scoreLongda(gt, answers);
const strict = () => scoreLongda(gt, answers, { list_scoring: 'strict', coverage: 'structural' });
const timed = (fn: () => unknown): number => {
  const t = performance.now();
  fn();
  return performance.now() - t;
};
for (let i = 0; i < WARMUP; i++) {
  baseline();
  last = scoreLongda(gt, answers);
  strict();
}
// baseline and the two scoring modes alternate, one of each per round
const tsBase: number[] = [];
const tsScore: number[] = [];
const tsStrict: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  tsBase.push(timed(baseline));
  tsScore.push(timed(() => (last = scoreLongda(gt, answers))));
  tsStrict.push(timed(strict));
}
const baselineMs = median(tsBase);
const scoreMs = median(tsScore);
const strictMs = median(tsStrict);
for (const [mode, ms] of [
  ['default options', scoreMs],
  ['list_scoring=strict, coverage=structural', strictMs],
] as const) {
  verdict(
    `LongDA scoring of ${gt.length} answers, ${mode} (median of ${ROUNDS} alternating rounds)`,
    `≤ ${GOAL_MS} ms`,
    `${ms.toFixed(2)} ms`,
    `JSON.parse + numeric compare ${baselineMs.toFixed(2)} ms (${(ms / baselineMs).toFixed(2)}× it); ratio to the goal`,
    ms / GOAL_MS,
    ms <= GOAL_MS,
  );
}

// heatmap over 30 trajectories × 100 steps
const trajs = Array.from({ length: 30 }, (_, t) =>
  Array.from({ length: 100 }, (_, s) =>
    s % 3 === 0 ? ['read_doc', 'answer'] : (s + t) % 7 === 0 ? [] : ['search_doc'],
  ),
);
const heatmapMs = time(() => toolUsageHeatmap(trajs), 50);

console.log(
  JSON.stringify(
    {
      longda: {
        answers: gt.length,
        match: Number(last.match.toFixed(4)),
        coverage: Number(last.coverage.toFixed(4)),
        scoreMs: Number(scoreMs.toFixed(3)),
        strictStructuralMs: Number(strictMs.toFixed(3)),
        baselineMs: Number(baselineMs.toFixed(3)),
        ratioVsBaseline: Number((scoreMs / baselineMs).toFixed(2)),
        goalMs: GOAL_MS,
        withinGoal: scoreMs <= GOAL_MS && strictMs <= GOAL_MS,
      },
      heatmap: { trajectories: 30, steps: 100, ms: Number(heatmapMs.toFixed(3)) },
    },
    null,
    2,
  ),
);
