/**
 * BLADE aggregation perf (issue 8, gates per issue 23): weighted F1 with the 1,000-sample seeded bootstrap over
 * 12 datasets × 20 runs, judgements given. Two baselines measured in the same run, alternating with Loupe:
 *  - BLADE's own computation: test/perf/blade_baseline.py computes the aggregation the way blade_bench does
 *    (behavioral-data/BLADE @ 6118fa8d, `eval/get_model_metrics.py` analysis_metric_bootstrap_calculation,
 *    `eval/metrics/final_metrics.py`, `eval/datamodel/run.py`; plain Python + numpy from Debian's python3). It is
 *    started once and gets the same synthetic runs as JSON in BLADE's `MetricsAcrossRuns` shape; it times its own
 *    computation in-process (time.perf_counter), so interpreter start-up, imports and JSON parsing are not counted.
 *    Loupe runs with BLADE's code choices (`BLADE_OFFICIAL_AGGREGATE`) for this comparison, so both compute the same.
 *  - a naive JS version of the same computation (copy the resampled run list, union string sets per coverage
 *    window), so the ratio shows what the interned integer implementation saves (Loupe's default options).
 * Each round runs naive JS, Loupe (defaults), BLADE's Python, Loupe (BLADE's choices); ROUNDS rounds after one untimed
 * warm-up of each (the agreement runs); medians.
 * Gates (verdict lines; a FAIL exits 1):
 *  - aggregation ≤ 1× BLADE's Python (median) — the issue's "same work, no slower than the reference implementation";
 *  - aggregation ≤ 2000 ms (median; absolute goal, the naive JS baseline beside it);
 *  - agreement with BLADE's Python where the two compute exactly the same numbers (no resampling): the point weighted
 *    and unweighted F1 and each type's hit rate and coverage@k on the full run lists, |Δ| ≤ 1e-12 (numpy's mean sums
 *    in 8 pairwise partial sums, Loupe in order: for ≤ 20 terms in [0, 1] that moves the last few bits, ~1e-15,
 *    while a real difference — a window off by one, another denominator — moves a value by ≥ 1/73 of a dataset's
 *    share, ~1e-3);
 *  - the bootstrap means (Python's `random.choices` vs Loupe's seeded generator draw different samples) agree within
 *    4 standard errors of their difference, SE = sd·√(2/samples) with sd the spread of BLADE's bootstrap samples;
 *  - agreement with the naive JS baseline: the same seed gives the same weighted F1, for one bootstrap sample and for
 *    the mean of the 1,000 samples (|Δ| ≤ 1e-9).
 * GT sizes are the 12 datasets' counts from spec §1.2 (cvars, model specs, unique names, transform units); runs cover
 * random GT items with precisions that are ratios of counts, as BLADE's hit rates are (seeded); transform spec names
 * collide in pairs (BLADE keys transform coverage by name). Then prints one JSON report (kept for tooling).
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  aggregateBlade,
  BLADE_OFFICIAL_AGGREGATE,
  decisionWeights,
  f1,
  METRIC_TYPES,
  seededRandom,
  zeroRun,
  type BladeAggregate,
  type BladeDatasetRuns,
  type BladeRunMetrics,
  type MetricType,
  type RunMetric,
} from '../../src/core/benchmarks/blade/eval/metrics.ts';
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
const GOAL_VS_BLADE = 1;
const AGREE_TOL = 1e-9;
const POINT_TOL = 1e-12;
const BOOT_Z = 4;
const PYTHON = '/usr/bin/python3';
const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'blade_baseline.py');

const rand = seededRandom(42);
const pickSome = (prefix: string, n: number, p: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}${i}`).filter(() => rand() < p);
/** BLADE keys transform coverage by spec name; expanded specs 2i and 2i+1 share a name here. */
const nameOf = (item: string) => item.replace(/\d+$/, (d) => String(Math.floor(Number(d) / 2)));
/** A run's metric as BLADE has it: GT items matched, and `matched` of the run's `denominator` items hit. */
const ratio = (items: string[], denominator: number, matched: number): RunMetric => ({
  gtItems: items,
  gtNames: items.map(nameOf),
  precision: matched / denominator,
  matched,
  denominator,
});
const datasets: BladeDatasetRuns[] = Object.entries(SIZES).map(([name, [cv, ms, mu, ts]]) => ({
  dataset: name,
  gt: { numCvars: cv, numMspecs: ms, numMspecsUnique: mu, numTspecs: ts },
  runs: Array.from({ length: RUNS }, (): BladeRunMetrics => {
    const status = rand() < 0.05 ? 'generation_failed' : 'ok';
    const modelHit = rand() < 0.7;
    const modelItems = modelHit ? [`model${Math.floor(rand() * mu)}`] : [];
    const modelCvarItems = modelHit && rand() < 0.3 ? [`spec${Math.floor(rand() * ms)}`] : [];
    const cvarDen = 1 + Math.floor(rand() * 8); // the run's conceptual variables (BLADE num_cvars2)
    const tDen = 1 + Math.floor(rand() * 12); // the run's transform specs (BLADE num_tspecs2), shared by value and graph
    return {
      status,
      metrics: {
        cvar: ratio(pickSome('cv', cv, 0.4), cvarDen, Math.floor(rand() * (cvarDen + 1))),
        model: ratio(modelItems, 1, modelItems.length),
        modelCvar: ratio(modelCvarItems, 1, modelCvarItems.length),
        transformValue: ratio(pickSome('t', ts, 0.3), tDen, Math.floor(rand() * (tDen + 1))),
        transformGraph: ratio(pickSome('t', ts, 0.2), tDen, Math.floor(rand() * (tDen + 1))),
      },
    };
  }),
}));

/**
 * The runs in BLADE's `MetricsAcrossRuns` shape (`eval/datamodel/run.py`, `eval/metrics/calc_metrics.py`): lists over
 * the successful runs only, every run's status (generation failures are padded back as empty runs by
 * `get_single_run_metrics`); GT-side matches by name (`matched_*`), run-side matches as many items as matched
 * (`matched_*2`, over `num_*2`).
 */
function bladeShape(d: BladeDatasetRuns): Record<string, unknown> {
  const ok = d.runs.filter((r) => r.status === 'ok');
  const runSide = (m: RunMetric) => Array.from({ length: m.matched }, (_, i) => `r${i}`);
  return {
    dataset: d.dataset,
    status: d.runs.map((r) => (r.status === 'ok' ? 5 : r.status === 'generation_failed' ? 2 : 1)),
    matched_models: ok.map((r) => r.metrics.model.gtItems),
    matched_models_cvar: ok.map((r) => r.metrics.modelCvar.gtItems),
    matched_vspecs: ok.map((r) => r.metrics.transformValue.gtNames),
    matched_gspecs: ok.map((r) => r.metrics.transformGraph.gtNames),
    matched_vspecs2: ok.map((r) => runSide(r.metrics.transformValue)),
    matched_gspecs2: ok.map((r) => runSide(r.metrics.transformGraph)),
    matched_cvars: ok.map((r) => r.metrics.cvar.gtItems),
    matched_cvars2: ok.map((r) => runSide(r.metrics.cvar)),
    num_tspecs2: ok.map((r) => r.metrics.transformValue.denominator),
    num_cvars2: ok.map((r) => r.metrics.cvar.denominator),
    num_tspecs1: d.gt.numTspecs,
    num_mspecs1: d.gt.numMspecs,
    num_mspecs1_unique: d.gt.numMspecsUnique,
    num_cvars1: d.gt.numCvars,
  };
}

/** BLADE's Python (test/perf/blade_baseline.py), started once; one JSON line per request and per answer. */
interface BladeAnswer {
  ms: number;
  score: {
    mean_weighted: number | null;
    mean_unweighted: number | null;
    mean_bootstrapped_weighted: number | null;
    mean_bootstrapped_unweighted: number | null;
    ci_weighted: (number | null)[];
    ci_unweighted: (number | null)[];
    sd_bootstrapped_weighted: number | null;
  };
  hitRate: Record<string, number | null>;
  coverage: Record<string, number | null>;
}
const py = spawn(PYTHON, [SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
const pyLines = createInterface({ input: py.stdout })[Symbol.asyncIterator]();
async function askPython<T>(msg: { cmd: string } & Record<string, unknown>): Promise<T> {
  py.stdin.write(`${JSON.stringify(msg)}\n`);
  const { value, done } = await pyLines.next();
  if (done) {
    throw new Error(
      `${PYTHON} ${SCRIPT} ended (exit ${String(py.exitCode)}) without answering '${msg.cmd}'; its error is above`,
    );
  }
  return JSON.parse(value as string) as T;
}
const bladeRun = () => askPython<BladeAnswer>({ cmd: 'run', k: K, samples: SAMPLES, seed: 0 });

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
        const den =
          t === 'cvar'
            ? d.gt.numCvars
            : t === 'model'
              ? Math.min(d.gt.numMspecsUnique, first.length)
              : t === 'modelCvar'
                ? Math.min(d.gt.numMspecs, first.length)
                : d.gt.numTspecs;
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
const loupeOfficial = () => aggregateBlade(datasets, { k: K, samples: SAMPLES, seed: 0, ...BLADE_OFFICIAL_AGGREGATE });

// agreement with the naive JS: the same seed must give the same weighted F1 — one bootstrap sample, and the mean of SAMPLES samples
const ours1 = aggregateBlade(datasets, { k: K, samples: 1, seed: 9 }).bootstrap.weightedF1.mean;
const naive1 = naive(datasets, 1, 9)[0]!;
const agg = aggregateBlade(datasets, { k: K, samples: SAMPLES, seed: 0 });
const naiveAll = naive(datasets, SAMPLES, 0);
const naiveMean = naiveAll.reduce((a, x) => a + x, 0) / naiveAll.length;
const delta = Math.max(Math.abs(ours1 - naive1), Math.abs(agg.bootstrap.weightedF1.mean - naiveMean));
const agree = delta <= AGREE_TOL;

// agreement with BLADE's Python (its first run and Loupe's first run with BLADE's choices are the warm-ups)
await askPython({ cmd: 'load', datasets: datasets.map(bladeShape) });
const blade = await bladeRun();
const official: BladeAggregate = loupeOfficial();
const BLADE_NAME: Record<MetricType, string> = {
  cvar: 'cvar',
  model: 'model',
  modelCvar: 'model_cvar',
  transformValue: 'transform_value',
  transformGraph: 'transform_graph',
};
/** |a − b|, with NaN (null from Python) equal only to NaN. */
const diff = (a: number, b: number | null | undefined) => {
  const bb = b ?? NaN;
  return Number.isNaN(a) && Number.isNaN(bb) ? 0 : Number.isNaN(a) || Number.isNaN(bb) ? Infinity : Math.abs(a - bb);
};
const pointDiffs: Record<string, number> = {
  weightedF1: diff(official.point.weightedF1, blade.score.mean_weighted),
  unweightedF1: diff(official.point.unweightedF1, blade.score.mean_unweighted),
};
for (const t of METRIC_TYPES) {
  pointDiffs[`${t}.hitRate`] = diff(official.point.perType[t].precision, blade.hitRate[BLADE_NAME[t]]);
  pointDiffs[`${t}.coverage@${K}`] = diff(official.point.perType[t].coverage, blade.coverage[BLADE_NAME[t]]);
}
const [worstPoint, pointDelta] = Object.entries(pointDiffs).reduce((a, b) => (b[1] > a[1] ? b : a));
const bladeSd = blade.score.sd_bootstrapped_weighted ?? NaN;
const bootSe = bladeSd * Math.sqrt(2 / SAMPLES);
const bootDelta = diff(official.bootstrap.weightedF1.mean, blade.score.mean_bootstrapped_weighted);

// timing: naive JS, Loupe (defaults), BLADE's Python, Loupe (BLADE's choices) alternate
const tsNaive: number[] = [];
const tsOurs: number[] = [];
const tsBlade: number[] = [];
const tsOfficial: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  tsNaive.push(timed(() => naive(datasets, SAMPLES, 0)));
  tsOurs.push(timed(() => aggregateBlade(datasets, { k: K, samples: SAMPLES, seed: 0 })));
  tsBlade.push((await bladeRun()).ms);
  tsOfficial.push(timed(loupeOfficial));
}
py.stdin.end();
const tOurs = median(tsOurs);
const tNaive = median(tsNaive);
const tBlade = median(tsBlade);
const tOfficial = median(tsOfficial);

const scenario = `BLADE aggregation, ${SAMPLES.toLocaleString('en')}-sample bootstrap over ${datasets.length} datasets × ${RUNS} runs (median of ${ROUNDS} alternating rounds)`;
verdict(
  `${scenario}, vs BLADE's own Python (blade_bench @ 6118fa8d, timed in-process: no interpreter start-up)`,
  `≤ ${GOAL_VS_BLADE}× BLADE's Python`,
  `${tOfficial.toFixed(1)} ms (BLADE's code choices)`,
  `BLADE's Python ${tBlade.toFixed(1)} ms`,
  tOfficial / tBlade,
  tOfficial <= GOAL_VS_BLADE * tBlade,
);
verdict(
  scenario,
  `≤ ${GOAL_MS} ms`,
  `${tOurs.toFixed(1)} ms`,
  `BLADE-style naive JS ${tNaive.toFixed(1)} ms (${(tOurs / tNaive).toFixed(2)}× it); ratio to the goal`,
  tOurs / GOAL_MS,
  tOurs <= GOAL_MS,
);
verdict(
  `BLADE point estimates agree with BLADE's Python (no resampling: weighted and unweighted F1, hit rate and coverage@${K} of each type)`,
  `|Δ| ≤ ${POINT_TOL}`,
  `max |Δ| ${pointDelta.toExponential(2)} (${worstPoint}; weighted F1 ${official.point.weightedF1.toFixed(6)})`,
  `BLADE's Python ${String(blade.score.mean_weighted?.toFixed(6))}; ratio is |Δ| to the tolerance`,
  pointDelta / POINT_TOL,
  pointDelta <= POINT_TOL,
);
verdict(
  `BLADE bootstrap mean of weighted F1 agrees with BLADE's Python (different generators: within ${BOOT_Z} standard errors)`,
  `|Δ| ≤ ${BOOT_Z}·SE = ${(BOOT_Z * bootSe).toExponential(2)} (SE = sd ${bladeSd.toFixed(4)} · √(2/${SAMPLES}))`,
  `|Δ| ${bootDelta.toExponential(2)} (${official.bootstrap.weightedF1.mean.toFixed(6)}, CI ${official.bootstrap.weightedF1.lo.toFixed(4)}–${official.bootstrap.weightedF1.hi.toFixed(4)})`,
  `BLADE's Python ${String(blade.score.mean_bootstrapped_weighted?.toFixed(6))} (CI ${blade.score.ci_weighted.map((x) => String(x?.toFixed(4))).join('–')}); ratio is |Δ| to ${BOOT_Z}·SE`,
  bootDelta / (BOOT_Z * bootSe),
  bootDelta <= BOOT_Z * bootSe,
);
verdict(
  `BLADE aggregation agrees with the naive baseline (same seed: 1 sample, and the mean of ${SAMPLES.toLocaleString('en')})`,
  `|Δ weighted F1| ≤ ${AGREE_TOL}`,
  `|Δ| ${delta.toExponential(2)} (${agg.bootstrap.weightedF1.mean.toFixed(6)})`,
  `naive ${naiveMean.toFixed(6)}; ratio is |Δ| to the tolerance`,
  delta / AGREE_TOL,
  agree,
);

const report = {
  goal: `BLADE aggregation with 1,000-sample bootstrap over 12 datasets × 20 runs ≤ ${GOAL_VS_BLADE}× BLADE's Python and ≤ ${GOAL_MS} ms`,
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
  blade: {
    reference:
      'behavioral-data/BLADE @ 6118fa8d5007b91aa8c91c518182db82446a4547: blade_bench/eval/get_model_metrics.py, eval/metrics/final_metrics.py, eval/datamodel/run.py',
    python: PYTHON,
    timing: 'in-process time.perf_counter around the computation (no interpreter start-up, imports or JSON parsing)',
    aggregateMs: Number(tOfficial.toFixed(2)),
    bladePythonMs: Number(tBlade.toFixed(2)),
    ratio: Number((tOfficial / tBlade).toFixed(4)),
    withinGoal: tOfficial <= GOAL_VS_BLADE * tBlade,
    pointDiffs,
    bootstrap: {
      loupe: official.bootstrap.weightedF1,
      blade: {
        mean: blade.score.mean_bootstrapped_weighted,
        ci: blade.score.ci_weighted,
        sd: blade.score.sd_bootstrapped_weighted,
      },
      delta: bootDelta,
      standardError: bootSe,
    },
    samplesMs: {
      subject: tsOfficial.map((x) => Number(x.toFixed(2))),
      baseline: tsBlade.map((x) => Number(x.toFixed(2))),
    },
  },
};
console.log(JSON.stringify(report, null, 2));
