/**
 * Evaluation perf (issue 8): LongDA scoring of 505 answers (goal ≤ 50 ms), against a baseline measured
 * in the same run (JSON.parse of every answer plus a bare numeric comparison: the floor any scorer pays).
 * Answers are the 474 ground-truth rows of benchmark.csv padded to 505 with copies under new q_ids,
 * written in mixed agent styles (percent signs, thousands commas, ± tolerances, free text, dicts).
 * Prints one JSON report.
 */
import { loadLongdaGroundTruth, scoreLongda, type LongdaQuery } from '../../src/core/benchmarks/longda/eval.ts';
import { toolUsageHeatmap } from '../../src/core/benchmarks/longda/eval.ts';
import { sharedData } from '../helpers/shared.ts';

const gt0 = loadLongdaGroundTruth(sharedData('longda', 'benchmark', 'benchmark.csv'));
const gt: LongdaQuery[] = [...gt0];
for (let i = 0; gt.length < 505; i++) {
  const q = gt0[i % gt0.length]!;
  gt.push({ ...q, qId: `${q.qId}_copy${i}`, blockId: `${q.blockId}_copy` });
}
const styles = [(a: string) => a, (a: string) => `${a}%`, (a: string) => `about ${a} percent`, (a: string) => `${a} ± 0.4`, (a: string) => a.replace(/\[|\]/g, ''), (a: string) => `men: ${a}`];
const answers = new Map(gt.map((q, i) => [q.qId, styles[i % styles.length]!(q.answer)]));

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

const baselineMs = time(() => {
  let hits = 0;
  for (const q of gt) {
    let a: unknown;
    let g: unknown;
    try { a = JSON.parse(answers.get(q.qId)!); } catch { a = null; }
    try { g = JSON.parse(q.answer); } catch { g = null; }
    if (typeof a === 'number' && typeof g === 'number' && Math.abs(a - g) <= Math.max(0.05 * Math.abs(g), 1)) hits++;
  }
  return hits;
}, 50);
let last = scoreLongda(gt, answers);
const scoreMs = time(() => (last = scoreLongda(gt, answers)), 50);
const strictMs = time(() => scoreLongda(gt, answers, { list_scoring: 'strict', coverage: 'structural' }), 50);

// heatmap over 30 trajectories × 100 steps
const trajs = Array.from({ length: 30 }, (_, t) => Array.from({ length: 100 }, (_, s) => (s % 3 === 0 ? ['read_doc', 'answer'] : (s + t) % 7 === 0 ? [] : ['search_doc'])));
const heatmapMs = time(() => toolUsageHeatmap(trajs), 50);

console.log(JSON.stringify({
  longda: {
    answers: gt.length,
    match: Number(last.match.toFixed(4)),
    coverage: Number(last.coverage.toFixed(4)),
    scoreMs: Number(scoreMs.toFixed(3)),
    strictStructuralMs: Number(strictMs.toFixed(3)),
    baselineMs: Number(baselineMs.toFixed(3)),
    ratioVsBaseline: Number((scoreMs / baselineMs).toFixed(2)),
    goalMs: 50,
    withinGoal: scoreMs <= 50,
  },
  heatmap: { trajectories: 30, steps: 100, ms: Number(heatmapMs.toFixed(3)) },
}, null, 2));
