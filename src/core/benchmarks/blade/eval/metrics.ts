/**
 * BLADE metrics: per-run precision items, cross-run precision, coverage@k, F1, decision-type
 * weighted F1 with a seeded bootstrap and 95% CI, and MCQ accuracy.
 * Source: spec §1.4.7–§1.4.8, BLADE `eval/metrics/{calc_metrics,final_metrics}.py`,
 * `eval/get_model_metrics.py`, `eval/datamodel/run_mcq.py`; paper Eq. 9–11. Every paper-vs-code
 * choice is an option and is echoed in the result (`options`).
 */
import { seededRandom } from '../../../util/random.ts';
import { npMean, npQuantile } from '../../../eval/numpy-python.ts';
import { LoupeInputError } from '../../../util/errors.ts';
import type { BladeMcq } from '../items.ts';

/** The five BLADE sub-metrics (spec §1.7 #3). */
export const METRIC_TYPES = ['cvar', 'model', 'modelCvar', 'transformValue', 'transformGraph'] as const;
export type MetricType = (typeof METRIC_TYPES)[number];

/** One sub-metric of one run. */
export interface RunMetric {
  /** GT-side items this run covered (coverage unions these). For transforms: expanded spec ids. */
  gtItems: string[];
  /** Transforms only: the same items as BLADE's expanded spec names (coverage option `name`). */
  gtNames?: string[];
  /** Precision ("hit rate") of this run in [0, 1]. */
  precision: number;
  /** Numerator / denominator behind `precision`. */
  matched: number;
  denominator: number;
}

/**
 * Per-run metrics (BLADE `SingleRunMetrics`). `status`: `ok` (scored), `generation_failed`
 * (LM produced nothing; BLADE pads these as zeros), `failed` (conversion / matching failed;
 * BLADE drops these, the paper scores them 0 — option `failedRuns`).
 */
export interface BladeRunMetrics {
  runId?: string;
  status: 'ok' | 'generation_failed' | 'failed';
  metrics: Record<MetricType, RunMetric>;
}

/** GT denominators of one dataset (spec §1.4.7). */
export interface BladeGtCounts {
  numCvars: number;
  numMspecs: number;
  numMspecsUnique: number;
  /** len(GT expanded specs) − 1. */
  numTspecs: number;
}

export interface BladeDatasetRuns {
  dataset: string;
  gt: BladeGtCounts;
  runs: BladeRunMetrics[];
}

/** Aggregation options; defaults fix BLADE's bugs and follow the paper where they disagree. */
export interface BladeAggregateOptions {
  /** Runs per coverage window (default 10). */
  k: number;
  /** Bootstrap iterations (default 1000). */
  samples: number;
  /** PRNG seed for the bootstrap (default 0). */
  seed: number;
  /** §1.7 #12 / §5.3 #3: `zero` (paper: failed runs score 0 and count) or `drop` (code: only generation failures are padded). */
  failedRuns: 'zero' | 'drop';
  /** §1.7 #8: coverage keyed by expanded spec `id` (fixed) or by `name` (BLADE; colliding names make 100% unreachable). */
  coverageKey: 'id' | 'name';
  /** §1.7 #13: F1 = 0 when P + C = 0 (fixed) instead of NaN. */
  f1ZeroGuard: boolean;
  /** Model coverage denominator: `code` = min(|G|, |R|) with R the first k runs, `paper` = min(|G|, k) (Eq. 11). */
  modelCoverageDenominator: 'code' | 'paper';
  /**
   * Where generation failures stand in a dataset's run order (coverage@k takes the first k): `append` (BLADE
   * `MultiRunResults.get_single_run_metrics`: `ret + empty`, after every successful run) or `in-place` (the order the
   * runs were made). Issue 21 item 5.
   */
  generationFailures: 'append' | 'in-place';
  /** The unweighted score: `code` (BLADE `final_metrics.py`: `… + 0.5 * f1_gspecs + 0.5 + f1_vspecs) / 4`) or `paper` (`0.5 * f1_vspecs`). Issue 21 item 7. */
  unweightedFormula: 'code' | 'paper';
  /**
   * How means and sums are computed (issue 47 item 8): `numpy` as BLADE's code does — `np.mean` / `ndarray.mean()`
   * (numpy's pairwise summation) for precision per dataset and every mean over datasets and bootstrap samples, the
   * weighted score adding the graph term before the value term (`final_metrics.py`), the bootstrap CI by numpy's default
   * quantile (`get_model_metrics.py`) — or `left-to-right` (left to right, value before graph; Loupe 0.1). The two differ
   * in the last bits only.
   */
  summation: 'numpy' | 'left-to-right';
}

/** Test hook of {@link aggregateBlade}: the run indices of bootstrap sample `iteration` for dataset `dataset` (n runs). */
export interface BladeResampler {
  (iteration: number, dataset: number, n: number): ArrayLike<number>;
}

export const DEFAULT_AGGREGATE_OPTIONS: BladeAggregateOptions = {
  k: 10,
  samples: 1000,
  seed: 0,
  failedRuns: 'zero',
  coverageKey: 'id',
  f1ZeroGuard: true,
  modelCoverageDenominator: 'code',
  generationFailures: 'in-place',
  unweightedFormula: 'paper',
  summation: 'left-to-right',
};

/** Option values that reproduce BLADE's code (`--preset official`, issue 21). */
export const BLADE_OFFICIAL_AGGREGATE: Readonly<
  Pick<
    BladeAggregateOptions,
    | 'failedRuns'
    | 'coverageKey'
    | 'f1ZeroGuard'
    | 'modelCoverageDenominator'
    | 'generationFailures'
    | 'unweightedFormula'
    | 'summation'
  >
> = Object.freeze({
  failedRuns: 'drop',
  coverageKey: 'name',
  f1ZeroGuard: false,
  modelCoverageDenominator: 'code',
  generationFailures: 'append',
  unweightedFormula: 'code',
  summation: 'numpy',
});

/**
 * A dataset's runs in the order BLADE scores them: under `append`, generation failures move after the other runs
 * (stable), as `MultiRunResults.get_single_run_metrics` returns `ret + empty`.
 * @returns the runs in order and how many generation failures changed position.
 * Source: BLADE `eval/datamodel/run.py` @ 6118fa8d.
 */
export function orderBladeRuns<T extends { status: BladeRunMetrics['status'] }>(
  runs: readonly T[],
  mode: BladeAggregateOptions['generationFailures'],
): { runs: T[]; moved: number } {
  if (mode === 'in-place') return { runs: [...runs], moved: 0 };
  const ordered = [
    ...runs.filter((r) => r.status !== 'generation_failed'),
    ...runs.filter((r) => r.status === 'generation_failed'),
  ];
  let moved = 0;
  ordered.forEach((r, i) => {
    if (r.status === 'generation_failed' && runs[i] !== r) moved++;
  });
  return { runs: ordered, moved };
}

export interface TypeScores {
  precision: number;
  coverage: number;
  f1: number;
}

export interface Interval {
  mean: number;
  lo: number;
  hi: number;
}

/** Result of {@link aggregateBlade}. Fractions in [0, 1] (Table 2 reports ×100). */
export interface BladeAggregate {
  /** Without resampling (BLADE `mean_weighted`). */
  point: { perType: Record<MetricType, TypeScores>; weightedF1: number; unweightedF1: number };
  /** Bootstrap means and 2.5 / 97.5 % quantiles (`mean_bootstrapped_weighted` is `weightedF1.mean`, the Table 2 number). */
  bootstrap: {
    weightedF1: Interval;
    unweightedF1: Interval;
    perType: Record<MetricType, { precision: Interval; coverage: Interval; f1: Interval }>;
  };
  weights: Record<MetricType, number>;
  totals: { T: number; V: number; M: number; U: number; S: number };
  datasets: {
    dataset: string;
    runsUsed: number;
    runsDropped: number;
    gt: BladeGtCounts;
    perType: Record<MetricType, TypeScores>;
  }[];
  warnings: string[];
  options: BladeAggregateOptions & { cvarMatching: 'pairwise' };
  /** Items an official-code option changed: `generation_failures` runs moved to the end of their dataset. */
  changedBy: Record<string, number>;
}

/**
 * Linear-interpolation quantile of an unsorted sample (numpy's method `linear`, but interpolated as
 * `lo + (hi − lo)·frac`, which can differ from numpy in the last bit: {@link npQuantile} is numpy's own order).
 */
export function quantile(xs: readonly number[], q: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return s[lo]! + (s[hi]! - s[lo]!) * (pos - lo);
}

/**
 * Harmonic mean of precision and coverage (spec §1.4.8).
 * @param zeroGuard §1.7 #13: return 0 (true) or NaN (BLADE) when p + c = 0.
 */
export function f1(p: number, c: number, zeroGuard: boolean): number {
  if (p + c === 0) return zeroGuard ? 0 : NaN;
  return (2 * p * c) / (p + c);
}

/** An all-zero run (generation failure padding, failed runs under `failedRuns: 'zero'`). */
export function zeroRun(status: BladeRunMetrics['status'], runId?: string): BladeRunMetrics {
  const z = (): RunMetric => ({ gtItems: [], gtNames: [], precision: 0, matched: 0, denominator: 0 });
  return {
    runId,
    status,
    metrics: { cvar: z(), model: z(), modelCvar: z(), transformValue: z(), transformGraph: z() },
  };
}

/** Weights by decision type (spec §1.4.8): cvar V/S, model U/S, model+cvars M/S, each transform T/(2S). */
export function decisionWeights(
  gts: BladeGtCounts[],
  k: number,
): { weights: Record<MetricType, number>; totals: BladeAggregate['totals'] } {
  let T = 0;
  let V = 0;
  let M = 0;
  let U = 0;
  for (const g of gts) {
    T += Math.max(0, g.numTspecs);
    V += g.numCvars;
    M += Math.min(g.numMspecs, k);
    U += Math.min(g.numMspecsUnique, k);
  }
  const S = T + V + M + U;
  const w = (x: number) => (S > 0 ? x / S : 0);
  return {
    weights: { cvar: w(V), model: w(U), modelCvar: w(M), transformValue: w(T) / 2, transformGraph: w(T) / 2 },
    totals: { T, V, M, U, S },
  };
}

/** Interned dataset: run precisions and covered GT item ids as integer arrays (fast bootstrap). */
interface Prepared {
  n: number;
  prec: Float64Array[]; // [type][run]
  items: Int32Array[][]; // [type][run] → item ids
  nItems: number[]; // per type
  stamp: Uint32Array[]; // per type scratch
  denom: (type: MetricType, r: number) => number;
}

function prepare(d: BladeDatasetRuns, runs: BladeRunMetrics[], o: BladeAggregateOptions): Prepared {
  const n = runs.length;
  const prec: Float64Array[] = [];
  const items: Int32Array[][] = [];
  const nItems: number[] = [];
  for (const t of METRIC_TYPES) {
    const ids = new Map<string, number>();
    const p = new Float64Array(n);
    const its: Int32Array[] = [];
    runs.forEach((r, i) => {
      const m = r.metrics[t];
      p[i] = m.precision;
      const keys =
        (t === 'transformValue' || t === 'transformGraph') && o.coverageKey === 'name'
          ? (m.gtNames ?? m.gtItems)
          : m.gtItems;
      its.push(
        Int32Array.from(keys, (k) => {
          let id = ids.get(k);
          if (id === undefined) ids.set(k, (id = ids.size));
          return id;
        }),
      );
    });
    prec.push(p);
    items.push(its);
    nItems.push(ids.size);
  }
  const g = d.gt;
  const denom = (t: MetricType, r: number): number => {
    const window = o.modelCoverageDenominator === 'paper' ? o.k : r;
    switch (t) {
      case 'cvar':
        return g.numCvars;
      case 'model':
        return Math.min(g.numMspecsUnique, window);
      case 'modelCvar':
        return Math.min(g.numMspecs, window);
      default:
        return g.numTspecs;
    }
  };
  return { n, prec, items, nItems, stamp: nItems.map((x) => new Uint32Array(Math.max(1, x))), denom };
}

let stampCounter = 1;

/** Scores of one dataset for a given run order (indices into prepared runs). */
function datasetScores(
  p: Prepared,
  order: ArrayLike<number>,
  k: number,
  out: Float64Array,
  summation: BladeAggregateOptions['summation'] = 'left-to-right',
): void {
  const n = order.length;
  const R = Math.min(k, n);
  const picked = summation === 'numpy' ? new Float64Array(n) : null;
  for (let t = 0; t < METRIC_TYPES.length; t++) {
    const pr = p.prec[t]!;
    if (picked) {
      // BLADE final_metrics.calculate_hit_rate: np.asarray([run.hit_rate_x for run in runs]).mean()
      for (let i = 0; i < n; i++) picked[i] = pr[order[i]!]!;
      out[t] = n ? npMean(picked) : 0;
    } else {
      let s = 0;
      for (let i = 0; i < n; i++) s += pr[order[i]!]!;
      out[t] = n ? s / n : 0;
    }
    const stamp = p.stamp[t]!;
    const mark = stampCounter++;
    let covered = 0;
    for (let i = 0; i < R; i++) {
      const its = p.items[t]![order[i]!]!;
      for (let j = 0; j < its.length; j++) {
        const id = its[j]!;
        if (stamp[id] !== mark) {
          stamp[id] = mark;
          covered++;
        }
      }
    }
    const den = p.denom(METRIC_TYPES[t]!, R);
    out[METRIC_TYPES.length + t] = den > 0 ? covered / den : 0;
  }
  if (stampCounter > 0xfffffff0) {
    stampCounter = 1;
    for (const s of p.stamp) s.fill(0);
  }
}

/**
 * Aggregates runs across datasets (spec §1.4.8): P_x = mean over datasets of the mean run
 * precision; C_x = mean over datasets of coverage of the first k runs; F1_x; weighted F1 = Σ w_x F1_x;
 * bootstrap: every dataset's runs resampled with replacement to the same size, `samples` times.
 * Fixes: §1.7 #4 (unweighted formula `+ 0.5 +` → `0.5 ×`), #5 (weighted CI from weighted samples),
 * #8 (`coverageKey`), #12 (`failedRuns`), #13 (GT denominators come from the GT, never −1; F1 zero guard).
 * `summation` (issue 47 item 8): `numpy` computes every mean, the weighted sum and the CI in BLADE's order.
 * @param resample test hook: the bootstrap's run indices per sample and dataset (default: Loupe's seeded generator;
 *   BLADE draws with Python's unseeded `random.choices`, which no test can replay).
 * @throws LoupeInputError when a dataset has no runs at all, or an option value is invalid (named as `option <name>`).
 */
export function aggregateBlade(
  datasets: BladeDatasetRuns[],
  options: Partial<BladeAggregateOptions> = {},
  resample?: BladeResampler,
): BladeAggregate {
  const o: BladeAggregateOptions = { ...DEFAULT_AGGREGATE_OPTIONS, ...options };
  if (!Number.isInteger(o.k) || o.k <= 0) {
    throw new LoupeInputError('option k', `must be a positive integer, got ${String(o.k)}`);
  }
  if (!Number.isInteger(o.samples) || o.samples <= 0) {
    throw new LoupeInputError('option samples', `must be a positive integer, got ${String(o.samples)}`);
  }
  if (!Number.isFinite(o.seed)) throw new LoupeInputError('option seed', `must be a number, got ${String(o.seed)}`);
  const oneOf = (name: string, v: unknown, allowed: readonly unknown[]) => {
    if (!allowed.includes(v)) {
      throw new LoupeInputError(`option ${name}`, `must be one of ${allowed.join(', ')}, got '${String(v)}'`);
    }
  };
  oneOf('failed_runs', o.failedRuns, ['zero', 'drop']);
  oneOf('coverage_key', o.coverageKey, ['id', 'name']);
  oneOf('model_coverage_denominator', o.modelCoverageDenominator, ['code', 'paper']);
  oneOf('generation_failures', o.generationFailures, ['append', 'in-place']);
  oneOf('unweighted_formula', o.unweightedFormula, ['code', 'paper']);
  oneOf('summation', o.summation, ['numpy', 'left-to-right']);
  const numpy = o.summation === 'numpy';
  const warnings: string[] = [];
  const prepared: Prepared[] = [];
  const dsInfo: BladeAggregate['datasets'] = [];
  let moved = 0;
  for (const d of datasets) {
    const ordered = orderBladeRuns(d.runs, o.generationFailures);
    moved += ordered.moved;
    const kept =
      o.failedRuns === 'zero'
        ? ordered.runs.map((r) => (r.status === 'ok' ? r : zeroRun(r.status, r.runId)))
        : ordered.runs
            .filter((r) => r.status !== 'failed')
            .map((r) => (r.status === 'ok' ? r : zeroRun(r.status, r.runId)));
    if (!kept.length) throw new LoupeInputError(`dataset ${d.dataset}`, 'has no runs to aggregate');
    if (kept.length <= o.k) {
      warnings.push(`${d.dataset}: ${kept.length} runs ≤ k=${o.k}; BLADE requires more than k runs per dataset`);
    }
    if (d.gt.numTspecs < 0) warnings.push(`${d.dataset}: negative transform denominator treated as 0`);
    prepared.push(prepare(d, kept, o));
    dsInfo.push({
      dataset: d.dataset,
      runsUsed: kept.length,
      runsDropped: d.runs.length - kept.length,
      gt: d.gt,
      perType: {} as Record<MetricType, TypeScores>,
    });
  }
  const { weights, totals } = decisionWeights(
    datasets.map((d) => d.gt),
    o.k,
  );
  const nt = METRIC_TYPES.length;
  const scratch = new Float64Array(2 * nt);
  const combine = (
    perDataset: Float64Array[],
  ): { perType: Record<MetricType, TypeScores>; weighted: number; unweighted: number } => {
    const perType = {} as Record<MetricType, TypeScores>;
    let weighted = 0;
    METRIC_TYPES.forEach((t, i) => {
      let P = 0;
      let C = 0;
      if (numpy) {
        // BLADE final_metrics: {metric: np.mean(v)} over datasets, for hit rates and coverage alike
        P = npMean(perDataset.map((s) => s[i]!));
        C = npMean(perDataset.map((s) => s[nt + i]!));
      } else {
        for (const s of perDataset) {
          P += s[i]!;
          C += s[nt + i]!;
        }
        P /= perDataset.length;
        C /= perDataset.length;
      }
      const F = f1(P, C, o.f1ZeroGuard);
      perType[t] = { precision: P, coverage: C, f1: F };
      if (!numpy) weighted += weights[t] * F;
    });
    // BLADE final_metrics.calculate_analysis_scores: cvar + model + model_cvar + gspec (graph) + vspec (value), in that order
    if (numpy) {
      weighted =
        weights.cvar * perType.cvar.f1 +
        weights.model * perType.model.f1 +
        weights.modelCvar * perType.modelCvar.f1 +
        weights.transformGraph * perType.transformGraph.f1 +
        weights.transformValue * perType.transformValue.f1;
    }
    // BLADE final_metrics.py: (f1_cvars + f1_models + f1_models_cvars + 0.5 * f1_gspecs + 0.5 + f1_vspecs) / 4
    const unweighted =
      o.unweightedFormula === 'code'
        ? (perType.cvar.f1 +
            perType.model.f1 +
            perType.modelCvar.f1 +
            0.5 * perType.transformGraph.f1 +
            0.5 +
            perType.transformValue.f1) /
          4
        : (perType.cvar.f1 +
            perType.model.f1 +
            perType.modelCvar.f1 +
            0.5 * perType.transformGraph.f1 +
            0.5 * perType.transformValue.f1) /
          4;
    return { perType, weighted, unweighted };
  };
  // point estimate: runs in given order
  const pointPer = prepared.map((p, di) => {
    const s = new Float64Array(2 * nt);
    datasetScores(
      p,
      Int32Array.from({ length: p.n }, (_, i) => i),
      o.k,
      s,
      o.summation,
    );
    const per = {} as Record<MetricType, TypeScores>;
    METRIC_TYPES.forEach(
      (t, i) => (per[t] = { precision: s[i]!, coverage: s[nt + i]!, f1: f1(s[i]!, s[nt + i]!, o.f1ZeroGuard) }),
    );
    dsInfo[di]!.perType = per;
    return s;
  });
  const point = combine(pointPer);
  // bootstrap
  const rand = seededRandom(o.seed);
  const wS: number[] = [];
  const uS: number[] = [];
  const typeS = METRIC_TYPES.map(() => ({ p: [] as number[], c: [] as number[], f: [] as number[] }));
  const orders = prepared.map((p) => new Int32Array(p.n));
  const per = prepared.map(() => new Float64Array(2 * nt));
  for (let it = 0; it < o.samples; it++) {
    prepared.forEach((p, di) => {
      const ord = orders[di]!;
      if (resample) {
        const given = resample(it, di, p.n);
        if (given.length !== p.n) {
          throw new LoupeInputError(
            'bootstrap resample',
            `sample ${it} of dataset ${di} has ${given.length} indices for ${p.n} runs`,
          );
        }
        for (let i = 0; i < p.n; i++) ord[i] = given[i]!;
      } else for (let i = 0; i < p.n; i++) ord[i] = Math.floor(rand() * p.n);
      datasetScores(p, ord, o.k, scratch, o.summation);
      per[di]!.set(scratch);
    });
    const c = combine(per);
    wS.push(c.weighted);
    uS.push(c.unweighted);
    METRIC_TYPES.forEach((t, i) => {
      typeS[i]!.p.push(c.perType[t].precision);
      typeS[i]!.c.push(c.perType[t].coverage);
      typeS[i]!.f.push(c.perType[t].f1);
    });
  }
  // BLADE get_model_metrics.analysis_metric_bootstrap_calculation: np.mean(stats), np.quantile(stats, [0.025, 0.975])
  const interval = (xs: number[]): Interval =>
    numpy
      ? { mean: npMean(xs), lo: npQuantile(xs, 0.025), hi: npQuantile(xs, 0.975) }
      : { mean: xs.reduce((a, b) => a + b, 0) / xs.length, lo: quantile(xs, 0.025), hi: quantile(xs, 0.975) };
  const perTypeB = {} as BladeAggregate['bootstrap']['perType'];
  METRIC_TYPES.forEach(
    (t, i) =>
      (perTypeB[t] = { precision: interval(typeS[i]!.p), coverage: interval(typeS[i]!.c), f1: interval(typeS[i]!.f) }),
  );
  return {
    point: { perType: point.perType, weightedF1: point.weighted, unweightedF1: point.unweighted },
    bootstrap: { weightedF1: interval(wS), unweightedF1: interval(uS), perType: perTypeB },
    weights,
    totals,
    datasets: dsInfo,
    warnings,
    options: { ...o, cvarMatching: 'pairwise' },
    changedBy: moved ? { generation_failures: moved } : {},
  };
}

/** Result of {@link bladeMetricBars}: paper Fig. 4 bars per decision type. */
export interface BladeMetricBars {
  perType: Record<MetricType, { precision: Interval; coverage: Interval }>;
  options: {
    k: number;
    samples: number;
    seed: number;
    combinations: number;
    failedRuns: 'zero' | 'drop';
    coverageKey: 'id' | 'name';
  };
  /**
   * Datasets whose coverage series holds every k-subset (C(n, k) ≤ `combinations`, as BLADE) and datasets sampled
   * (BLADE reservoir-samples with Python's `random`, Loupe with its seeded generator: those bars differ by sampling).
   */
  subsets: { enumerated: number; sampled: number };
  /** The coverage@k series per decision type (one value per k-subset, datasets in order) the bars summarise. */
  coverageSeries: Record<MetricType, number[]>;
}

/**
 * Per-metric bars as BLADE's `get_bootstrap_scores` (paper Fig. 4): the precision series is every
 * run's precision (failures as 0); the coverage series is coverage@k of every k-subset of a dataset's runs when
 * C(n, k) ≤ `combinations` (BLADE `SubmissionRuns.__get_combinations`; a dataset then weighs by its count of subsets),
 * else of `combinations` random k-subsets; each series is summarised by a seeded bootstrap of its mean (Loupe's
 * generator, not numpy's: the intervals are sampled differently from BLADE's).
 */
export function bladeMetricBars(
  datasets: BladeDatasetRuns[],
  options: Partial<BladeAggregateOptions> & { combinations?: number } = {},
): BladeMetricBars {
  const o: BladeAggregateOptions = { ...DEFAULT_AGGREGATE_OPTIONS, ...options };
  const combinations = options.combinations ?? 1000;
  const rand = seededRandom(o.seed);
  const perType = {} as BladeMetricBars['perType'];
  const prepared = datasets.map((d) => {
    const ordered = orderBladeRuns(d.runs, o.generationFailures).runs;
    const kept =
      o.failedRuns === 'zero'
        ? ordered.map((r) => (r.status === 'ok' ? r : zeroRun(r.status, r.runId)))
        : ordered.filter((r) => r.status !== 'failed').map((r) => (r.status === 'ok' ? r : zeroRun(r.status, r.runId)));
    return prepare(d, kept, o);
  });
  const boot = (xs: number[]): Interval => {
    if (!xs.length) return { mean: NaN, lo: NaN, hi: NaN };
    const means: number[] = [];
    for (let i = 0; i < o.samples; i++) {
      let t = 0;
      for (let j = 0; j < xs.length; j++) t += xs[Math.floor(rand() * xs.length)]!;
      means.push(t / xs.length);
    }
    return {
      mean: means.reduce((a, b) => a + b, 0) / means.length,
      lo: quantile(means, 0.025),
      hi: quantile(means, 0.975),
    };
  };
  const nt = METRIC_TYPES.length;
  const prec: number[][] = METRIC_TYPES.map(() => []);
  const cov: number[][] = METRIC_TYPES.map(() => []);
  const scratch = new Float64Array(2 * nt);
  let enumerated = 0;
  for (const p of prepared) {
    for (let t = 0; t < nt; t++) for (const x of p.prec[t]!) prec[t]!.push(x);
    const k = Math.min(o.k, p.n);
    const idx = Int32Array.from({ length: p.n }, (_, i) => i);
    if (binomial(p.n, k) <= combinations) {
      // BLADE SubmissionRuns.__get_combinations: every k-subset (itertools.combinations order) when C(n, k) ≤ the budget
      enumerated++;
      forEachCombination(p.n, k, (c) => {
        datasetScores(p, c, o.k, scratch);
        for (let t = 0; t < nt; t++) cov[t]!.push(scratch[nt + t]!);
      });
      continue;
    }
    for (let c = 0; c < combinations; c++) {
      // partial Fisher–Yates: a random k-subset without replacement (BLADE reservoir-samples with Python's random)
      for (let i = 0; i < k; i++) {
        const j = i + Math.floor(rand() * (p.n - i));
        const tmp = idx[i]!;
        idx[i] = idx[j]!;
        idx[j] = tmp;
      }
      datasetScores(p, idx.subarray(0, k), o.k, scratch);
      for (let t = 0; t < nt; t++) cov[t]!.push(scratch[nt + t]!);
    }
  }
  METRIC_TYPES.forEach((t, i) => (perType[t] = { precision: boot(prec[i]!), coverage: boot(cov[i]!) }));
  const coverageSeries = Object.fromEntries(METRIC_TYPES.map((t, i) => [t, cov[i]!])) as Record<MetricType, number[]>;
  return {
    perType,
    options: {
      k: o.k,
      samples: o.samples,
      seed: o.seed,
      combinations,
      failedRuns: o.failedRuns,
      coverageKey: o.coverageKey,
    },
    subsets: { enumerated, sampled: prepared.length - enumerated },
    coverageSeries,
  };
}

/** C(n, k) as a float (exact below 2^53; large values only need comparing with a budget). */
export function binomial(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= Math.min(k, n - k); i++) r = (r * (n - Math.min(k, n - k) + i)) / i;
  return Math.round(r);
}

/** Calls `fn` with every k-subset of 0..n−1 in lexicographic order (Python `itertools.combinations`); the array is reused. */
export function forEachCombination(n: number, k: number, fn: (c: Int32Array) => void): void {
  const c = Int32Array.from({ length: k }, (_, i) => i);
  if (k > n) return;
  for (;;) {
    fn(c);
    let i = k - 1;
    while (i >= 0 && c[i] === n - k + i) i--;
    if (i < 0) return;
    c[i]!++;
    for (let j = i + 1; j < k; j++) c[j] = c[j - 1]! + 1;
  }
}

// ------------------------------------------------------------------------------------------------
// MCQ (spec §1.3.4, §1.4.8 "MCQ scoring", §1.7 #11)
// ------------------------------------------------------------------------------------------------

/**
 * Reads the chosen letter of an MCQ reply.
 * `strict` (default, fixes §1.7 #11): a JSON `answer` field, a reply that is only a letter
 * ("B", "(B)", "B."), or an explicit "answer: B" / "answer is B" with the letter standing alone;
 * anything else is unparsed (null, counted wrong). `blade`: BLADE's fallback, the first of A–D found
 * anywhere in the first line (so "Answer: B" reads as A).
 * @param nOptions number of options (letters beyond it are invalid).
 */
export function parseMcqAnswer(reply: string, nOptions: number, mode: 'strict' | 'blade' = 'strict'): string | null {
  const valid = 'ABCD'.slice(0, Math.max(0, Math.min(4, nOptions)));
  const ok = (l: string | undefined) => (l && valid.includes(l.toUpperCase()) ? l.toUpperCase() : null);
  const text = reply.trim();
  const json = text.match(/\{[\s\S]*\}/);
  if (json) {
    try {
      const v = JSON.parse(json[0]) as { answer?: unknown };
      if (typeof v.answer === 'string') {
        const m = v.answer.trim().match(/^\(?([A-Da-d])\)?\.?$/);
        if (m) return ok(m[1]);
      }
    } catch {
      // not JSON: fall through
    }
  }
  if (mode === 'blade') {
    const first = text.split('\n')[0] ?? '';
    for (const l of 'ABCD') if (first.includes(l)) return ok(l);
    return null;
  }
  const only = text.match(/^\(?([A-Da-d])\)?[.):]?$/);
  if (only) return ok(only[1]);
  const explicit = [...text.matchAll(/\b(?:final\s+)?answer\s*(?:is|:|-|=)\s*\**\(?([A-Da-d])\)?\**(?![A-Za-z])/gi)];
  if (explicit.length) {
    const letters = new Set(explicit.map((m) => m[1]!.toUpperCase()));
    return letters.size === 1 ? ok([...letters][0]) : null;
  }
  return null;
}

export interface McqAnswer {
  dataset: string;
  mcq: BladeMcq;
  reply: string;
}

export interface McqCounts {
  correct: number;
  total: number;
  accuracy: number;
}

/** Result of {@link scoreBladeMcqs}. */
export interface BladeMcqScore {
  perDataset: { dataset: string; transform: McqCounts; cvar: McqCounts; total: McqCounts }[];
  /** Unweighted means over datasets (BLADE `avg_*_accuracy`). */
  avgTransformAccuracy: number;
  avgCvarAccuracy: number;
  avgTotalAccuracy: number;
  /** Pooled over questions, with a seeded bootstrap 95% CI (paper Fig. 3). */
  pooled: McqCounts & { ci: Interval };
  unparsed: number;
  /** Σ 1/len(options): expected correct answers by chance. */
  expectedCorrectByChance: number;
  options: { parsing: 'strict' | 'blade'; samples: number; seed: number };
}

/**
 * MCQ accuracy (BLADE `run_mcq.py`): per dataset transform / cvar / total accuracy
 * (correct / max(N, 1)), unweighted averages over datasets, pooled accuracy with a 95% CI.
 */
export function scoreBladeMcqs(
  answers: McqAnswer[],
  opts: { parsing?: 'strict' | 'blade'; samples?: number; seed?: number } = {},
): BladeMcqScore {
  const parsing = opts.parsing ?? 'strict';
  const samples = opts.samples ?? 1000;
  const seed = opts.seed ?? 0;
  const by = new Map<string, { t: [number, number]; c: [number, number] }>();
  const hits: number[] = [];
  let unparsed = 0;
  let chance = 0;
  for (const a of answers) {
    const letter = parseMcqAnswer(a.reply, a.mcq.options.length, parsing);
    if (letter === null) unparsed++;
    const hit = letter !== null && letter === a.mcq.correctLabel ? 1 : 0;
    hits.push(hit);
    chance += a.mcq.options.length ? 1 / a.mcq.options.length : 0;
    const e = by.get(a.dataset) ?? { t: [0, 0], c: [0, 0] };
    const slot = a.mcq.family === 'transform' ? e.t : e.c;
    slot[0] += hit;
    slot[1]++;
    by.set(a.dataset, e);
  }
  const counts = (c: number, n: number): McqCounts => ({ correct: c, total: n, accuracy: c / Math.max(n, 1) });
  const perDataset = [...by].map(([dataset, e]) => ({
    dataset,
    transform: counts(e.t[0], e.t[1]),
    cvar: counts(e.c[0], e.c[1]),
    total: counts(e.t[0] + e.c[0], e.t[1] + e.c[1]),
  }));
  const mean = (xs: number[]) => (xs.length ? xs.reduce((x, y) => x + y, 0) / xs.length : 0);
  const rand = seededRandom(seed);
  const boot: number[] = [];
  for (let i = 0; i < samples && hits.length; i++) {
    let s = 0;
    for (let j = 0; j < hits.length; j++) s += hits[Math.floor(rand() * hits.length)]!;
    boot.push(s / hits.length);
  }
  const correct = hits.reduce((x, y) => x + y, 0);
  return {
    perDataset,
    avgTransformAccuracy: mean(perDataset.map((d) => d.transform.accuracy)),
    avgCvarAccuracy: mean(perDataset.map((d) => d.cvar.accuracy)),
    avgTotalAccuracy: mean(perDataset.map((d) => d.total.accuracy)),
    pooled: {
      ...counts(correct, hits.length),
      ci: { mean: mean(boot), lo: quantile(boot, 0.025), hi: quantile(boot, 0.975) },
    },
    unparsed,
    expectedCorrectByChance: chance,
    options: { parsing, samples, seed },
  };
}

export { seededRandom };
