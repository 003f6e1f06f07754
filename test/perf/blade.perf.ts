/**
 * BLADE aggregation perf (issue 8, gates per issue 23): weighted F1 with the 1,000-sample seeded bootstrap over
 * 12 datasets × 20 runs, judgements given. Baseline measured in the same run: a straightforward version of the same
 * computation written the way BLADE's Python is (copy the resampled run list, union string sets per coverage window),
 * in JS, so the ratio shows what the interned integer implementation saves. Baseline and subject alternate, ROUNDS
 * pairs after one untimed warm-up of each; medians.
 * Gates (verdict lines; a FAIL exits 1):
 *  - aggregation ≤ 2000 ms (median; absolute goal, the ratio printed is to the goal, the baseline beside it);
 *  - agreement with the baseline: the same seed gives the same weighted F1, for one bootstrap sample and for the mean
 *    of the 1,000 samples (|Δ| ≤ 1e-9).
 * GT sizes are the 12 datasets' counts from spec §1.2 (cvars, model specs, unique names, transform units); runs cover
 * random GT items with random precision (seeded). Then prints one JSON report (kept for tooling).
 */
import { aggregateBlade, decisionWeights, f1, METRIC_TYPES, seededRandom, zeroRun, type BladeDatasetRuns, type BladeRunMetrics, type MetricType } from '../../src/core/benchmarks/blade/eval/metrics.ts';
import { verdict } from './verdict.ts';

const SIZES: Record<string, [number, number, number, number]> = {
  affairs: [9, 11, 5, 9],
  amtl: [7, 4, 2, 20],
  boxes: [5, 5, 4, 13],
  caschools: [7, 6, 1, 5],
  crofoot: [8, 11, 2, 14],
  fish: [6, 10, 5, 12],
  hurricane: [4, 18, 3, 6],
  mortgage: [12, 6, 2, 23],
  panda_nuts: [10, 73, 5, 11],
  reading: [18, 12, 3, 23],
  soccer: [16, 41, 9, 77],
  teachingratings: [18, 9, 2, 14],
};
const RUNS = 20;
const K = 10;
const SAMPLES = 1000;
const ROUNDS = 5;
const GOAL_MS = 2000;
const AGREE_TOL = 1e-9;

const rand = seededRandom(42);
const pickSome = (prefix: string, n: number, p: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`).filter(() => rand() < p);
const datasets: BladeDatasetRuns[] = Object.entries(SIZES).map(([name, [cv, ms, mu, ts]]) => ({
  dataset: name,
  gt: { numCvars: cv, numMspecs: ms, numMspecsUnique: mu, numTspecs: ts },
  runs: Array.from({ length: RUNS }, (): BladeRunMetrics => {
    const m = (items: string[], precision: number) => ({ gtItems: items, gtNames: items.map((x) => x.replace(/\d+$/, '')), precision, matched: 0, denominator: 0 });
    const modelHit = rand() < 0.7;
    return {
      status: rand() < 0.05 ? 'generation_failed' : 'ok',
      metrics: {
        cvar: m(pickSome('cv', cv, 0.4), rand()),
        model: m(modelHit ? [`model${Math.floor(rand() * mu)}`] : [], modelHit ? 1 : 0),
        modelCvar: m(modelHit && rand() < 0.3 ? [`spec${Math.floor(rand() * ms)}`] : [], rand() < 0.3 ? 1 : 0),
        transformValue: m(pickSome('t', ts, 0.3), rand()),
        transformGraph: m(pickSome('t', ts, 0.2), rand()),
      },
    };
  }),
}));

/** The computation as BLADE writes it: per sample, copy lists and union string sets. */
function naive(ds: BladeDatasetRuns[], samples: number, seed: number): number[] {
  const r = seededRandom(seed);
  const { weights } = decisionWeights(
    ds.map((d) => d.gt),
    K,
  );
  const runsOf = ds.map((d) => d.runs.map((x) => (x.status === 'ok' ? x : zeroRun(x.status))));
  const out: number[] = [];
  for (let s = 0; s < samples; s++) {
    const per = ds.map((d, di) => {
      const src = runsOf[di]!;
      const res = src.map(() => src[Math.floor(r() * src.length)]!);
      const first = res.slice(0, K);
      const score = {} as Record<MetricType, [number, number]>;
      for (const t of METRIC_TYPES) {
        const P = res.reduce((a, x) => a + x.metrics[t].precision, 0) / res.length;
        const u = new Set<string>();
        for (const x of first) for (const it of x.metrics[t].gtItems) u.add(it);
        const den = t === 'cvar' ? d.gt.numCvars : t === 'model' ? Math.min(d.gt.numMspecsUnique, first.length) : t === 'modelCvar' ? Math.min(d.gt.numMspecs, first.length) : d.gt.numTspecs;
        score[t] = [P, den > 0 ? u.size / den : 0];
      }
      return score;
    });
    let w = 0;
    for (const t of METRIC_TYPES) {
      const P = per.reduce((a, x) => a + x[t][0], 0) / per.length;
      const C = per.reduce((a, x) => a + x[t][1], 0) / per.length;
      w += weights[t] * f1(P, C, true);
    }
    out.push(w);
  }
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const timed = (fn: () => unknown): number => {
  const t = performance.now();
  fn();
  return performance.now() - t;
};

// agreement: the same seed must give the same weighted F1 — one bootstrap sample, and the mean of SAMPLES samples
const ours1 = aggregateBlade(datasets, { k: K, samples: 1, seed: 9 }).bootstrap.weightedF1.mean;
const naive1 = naive(datasets, 1, 9)[0]!;
const agg = aggregateBlade(datasets, { k: K, samples: SAMPLES, seed: 0 });
const naiveAll = naive(datasets, SAMPLES, 0);
const naiveMean = naiveAll.reduce((a, x) => a + x, 0) / naiveAll.length;
const delta = Math.max(Math.abs(ours1 - naive1), Math.abs(agg.bootstrap.weightedF1.mean - naiveMean));
const agree = delta <= AGREE_TOL;

// timing: baseline and subject alternate (the two calls above were the untimed warm-up of each)
const tsNaive: number[] = [];
const tsOurs: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  tsNaive.push(timed(() => naive(datasets, SAMPLES, 0)));
  tsOurs.push(timed(() => aggregateBlade(datasets, { k: K, samples: SAMPLES, seed: 0 })));
}
const tOurs = median(tsOurs);
const tNaive = median(tsNaive);

verdict(`BLADE aggregation, ${SAMPLES.toLocaleString('en')}-sample bootstrap over ${datasets.length} datasets × ${RUNS} runs (median of ${ROUNDS} alternating pairs)`,
  `≤ ${GOAL_MS} ms`, `${tOurs.toFixed(1)} ms`, `BLADE-style naive JS ${tNaive.toFixed(1)} ms (${(tOurs / tNaive).toFixed(2)}× it); ratio to the goal`, tOurs / GOAL_MS, tOurs <= GOAL_MS);
verdict(`BLADE aggregation agrees with the naive baseline (same seed: 1 sample, and the mean of ${SAMPLES.toLocaleString('en')})`,
  `|Δ weighted F1| ≤ ${AGREE_TOL}`, `|Δ| ${delta.toExponential(2)} (${agg.bootstrap.weightedF1.mean.toFixed(6)})`, `naive ${naiveMean.toFixed(6)}; ratio is |Δ| to the tolerance`, delta / AGREE_TOL, agree);

const report = {
  goal: `BLADE aggregation with 1,000-sample bootstrap over 12 datasets × 20 runs ≤ ${GOAL_MS} ms`,
  datasets: datasets.length,
  runsPerDataset: RUNS,
  samples: SAMPLES,
  rounds: ROUNDS,
  aggregateMs: Number(tOurs.toFixed(2)),
  baselineNaiveMs: Number(tNaive.toFixed(2)),
  ratioVsBaseline: Number((tOurs / tNaive).toFixed(3)),
  withinGoal: tOurs <= GOAL_MS,
  agreesWithBaseline: agree,
  agreementDelta: delta,
  weightedF1: agg.bootstrap.weightedF1,
  samplesMs: { subject: tsOurs.map((x) => Number(x.toFixed(2))), baseline: tsNaive.map((x) => Number(x.toFixed(2))) },
};
console.log(JSON.stringify(report, null, 2));
