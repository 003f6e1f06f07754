/**
 * BLADE aggregation perf (issue 8): weighted F1 with the 1,000-sample seeded bootstrap over
 * 12 datasets × 20 runs, judgements given (goal ≤ 2 s). Baseline measured in the same run: a
 * straightforward version of the same computation written the way BLADE's Python is (copy the
 * resampled run list, union string sets per coverage window), so the ratio shows what the interned
 * integer implementation saves. Both must agree on the weighted F1 of the first sample set.
 * GT sizes are the 12 datasets' counts from spec §1.2 (cvars, model specs, unique names, transform
 * units); runs cover random GT items with random precision (seeded). Prints one JSON report.
 */
import { aggregateBlade, decisionWeights, f1, METRIC_TYPES, seededRandom, zeroRun, type BladeDatasetRuns, type BladeRunMetrics, type MetricType } from '../../src/core/benchmarks/blade/eval/metrics.ts';

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
function time(fn: () => unknown, reps: number): number {
  fn(); // warm-up
  const ts: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    fn();
    ts.push(performance.now() - t);
  }
  return median(ts);
}

// agreement check: one bootstrap sample with the same seed must give the same weighted F1
const ours1 = aggregateBlade(datasets, { k: K, samples: 1, seed: 9 }).bootstrap.weightedF1.mean;
const naive1 = naive(datasets, 1, 9)[0]!;
const agree = Math.abs(ours1 - naive1) < 1e-12;

const tOurs = time(() => aggregateBlade(datasets, { k: K, samples: SAMPLES, seed: 0 }), 5);
const tNaive = time(() => naive(datasets, SAMPLES, 0), 3);
const agg = aggregateBlade(datasets, { k: K, samples: SAMPLES, seed: 0 });
const report = {
  goal: 'BLADE aggregation with 1,000-sample bootstrap over 12 datasets × 20 runs ≤ 2000 ms',
  datasets: datasets.length,
  runsPerDataset: RUNS,
  samples: SAMPLES,
  aggregateMs: Number(tOurs.toFixed(2)),
  baselineNaiveMs: Number(tNaive.toFixed(2)),
  ratioVsBaseline: Number((tOurs / tNaive).toFixed(3)),
  withinGoal: tOurs <= 2000,
  agreesWithBaseline: agree,
  weightedF1: agg.bootstrap.weightedF1,
};
console.log(JSON.stringify(report, null, 2));
if (!agree) process.exitCode = 1;
