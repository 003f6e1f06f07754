/**
 * The headline table a paper publishes (issue 48): per benchmark, each run profile's mean over items with a
 * cluster-robust standard error and CI (repeats averaged within item first, the within-item variance reported), and the
 * best profile's paired difference from each other profile with its clustered CI, paired t and the minimum difference
 * the comparison could detect. Every figure names the runs it rests on; a profile whose runs are not all scored alike
 * gets a reason instead of a number (scored and unscored runs are never mixed).
 * Source: Miller 2024, "Adding Error Bars to Evals", arXiv:2411.00640 §2.2 (clustered SE), §3.1 (repeats), §4 (paired
 * differences), §5 (power); the clustered SE as statsmodels `cov_type='cluster'` (`src/core/stats/cluster.ts`).
 */
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import type { BenchmarkDefinition } from '../../core/benchmarks/types.ts';
import { playerOf, type Player } from '../../core/review/pairwise.ts';
import {
  designOfPaired,
  minimumDetectableDifference,
  pairedDifference,
  profileEstimate,
  type Observation,
} from '../../core/stats/index.ts';
import type { RunRecord, StoredScore } from '../../core/store/records.ts';
import { LoupeInputError } from '../../core/util/errors.ts';
import { observationsOf, type Basis, type ProfileRuns } from './compare.ts';

/** A profile's headline figure (metric units; `percent` on the table says whether to show them ×100). */
export interface HeadlineFigure {
  mean: number;
  /** Cluster-robust SE with statsmodels' small-sample correction. */
  se: number;
  /** Miller's uncorrected clustered SE (arXiv:2411.00640 eq. 4), named as such. */
  seMillerUncorrected: number;
  /** SE ignoring clusters (for comparison). */
  seIid: number;
  ci: [number, number];
  level: number;
  items: number;
  clusters: number;
  repeats: { min: number; max: number; total: number };
  /** Mean within-item variance of repeats (null: no item ran twice). */
  withinItemVariance: number | null;
}

/** One row of the headline table: a profile, its figure or the reason there is none. */
export interface HeadlineRow {
  profile: Player;
  /** Runs of the profile in this benchmark (all of them, scored or not). */
  runIds: string[];
  figure: HeadlineFigure | null;
  basis: Basis | null;
  /** Why there is no figure (unscored runs, mixed judges, too few items or clusters). */
  reason?: string;
}

/** The paired difference of the best profile (A) and another (B), over the items both ran. */
export interface HeadlineComparison {
  a: string;
  b: string;
  /** A − B, metric units. */
  difference: number;
  se: number;
  ci: [number, number];
  /** Paired t on item means with the clustered SE (G − 1 df): two-sided p. */
  p: number;
  /** Seeded paired cluster-bootstrap percentile CI (a check). */
  bootstrapCi: [number, number] | null;
  items: number;
  clusters: number;
  /** Smallest difference detectable at 80% power, α = 0.05 (null without repeats of both on some item). */
  minimumDetectable: number | null;
  /** Why there is no comparison (too few shared items or clusters). */
  reason?: string;
}

/** The headline of one benchmark. */
export interface SuiteHeadline {
  suite: string;
  title: string;
  metric: string | null;
  /** The metric is a rate in [0, 1]: shown ×100 as percentage points. */
  percent: boolean;
  clusterUnit: string;
  level: number;
  rows: HeadlineRow[];
  comparisons: HeadlineComparison[];
}

/** Options of {@link headlineTables}. */
export interface HeadlineOptions {
  /** Confidence level (default 0.95). */
  level?: number;
  /** Paired cluster-bootstrap resamples per comparison (default 2000; 0 skips). */
  bootstrap?: number;
  /** Seed of the resampling (default 0). */
  seed?: number;
}

const reasonOf = (e: unknown): string => {
  if (e instanceof LoupeInputError) return e.message;
  throw e;
};

/**
 * Headline tables for the benchmarks of the given runs.
 * @param runs each run with its newest complete score (null: unscored or pending judgements); runs of benchmarks no
 *   longer registered are left out.
 * @param o {@link HeadlineOptions}.
 * @returns one {@link SuiteHeadline} per benchmark (sorted by kind); rows in order of first run, comparisons of the
 *   profile with the highest mean against each other profile that has a figure.
 * @throws nothing for bad data: a profile or comparison that cannot be computed carries its `reason`.
 */
export function headlineTables(
  runs: readonly { run: RunRecord; score: StoredScore | null }[],
  o: HeadlineOptions = {},
): SuiteHeadline[] {
  const level = o.level ?? 0.95;
  const bySuite = new Map<string, { def: BenchmarkDefinition; profiles: Map<string, ProfileRuns> }>();
  for (const r of runs) {
    const def = findBenchmark(r.run.suite);
    if (!def) continue;
    const s = bySuite.get(def.kind) ?? { def, profiles: new Map() };
    bySuite.set(def.kind, s);
    const player = playerOf(r.run);
    const p = s.profiles.get(player.player) ?? { player, runs: [] };
    p.runs.push({ run: r.run, score: r.score && r.score.pending === 0 ? r.score : null });
    s.profiles.set(player.player, p);
  }
  const out: SuiteHeadline[] = [];
  for (const [kind, { def, profiles }] of [...bySuite].sort(([a], [b]) => a.localeCompare(b))) {
    const rows: HeadlineRow[] = [];
    const obsOf = new Map<string, Observation[]>();
    let metric: string | null = null;
    for (const p of profiles.values()) {
      const runIds = p.runs.map((x) => x.run.id);
      try {
        const { obs, basis } = observationsOf(def, p);
        metric ??= basis.metric;
        const est = profileEstimate(obs, level);
        obsOf.set(p.player.player, obs);
        rows.push({
          profile: p.player,
          runIds,
          basis,
          figure: {
            mean: est.mean,
            se: est.se,
            seMillerUncorrected: est.seMillerUncorrected,
            seIid: est.seIid,
            ci: est.ci,
            level,
            items: est.n,
            clusters: est.clusters,
            repeats: est.repeats,
            withinItemVariance: est.withinItemVariance,
          },
        });
      } catch (e) {
        rows.push({ profile: p.player, runIds, figure: null, basis: null, reason: reasonOf(e) });
      }
    }
    const percent = [...obsOf.values()].every((obs) => obs.every((x) => x.value >= 0 && x.value <= 1));
    const ranked = rows.filter((r) => r.figure).sort((x, y) => y.figure!.mean - x.figure!.mean);
    const comparisons: HeadlineComparison[] = [];
    const best = ranked[0];
    for (const other of ranked.slice(1)) {
      const a = best!.profile.player;
      const b = other.profile.player;
      try {
        const pd = pairedDifference(obsOf.get(a)!, obsOf.get(b)!, {
          level,
          bootstrap: o.bootstrap ?? 2000,
          permutations: 0,
          seed: o.seed ?? 0,
        });
        let mdd: number | null = null;
        try {
          mdd = minimumDetectableDifference(designOfPaired(pd));
        } catch (e) {
          reasonOf(e);
        }
        comparisons.push({
          a,
          b,
          difference: pd.difference.mean,
          se: pd.difference.se,
          ci: pd.difference.ci,
          p: pd.pairedT.p,
          bootstrapCi: pd.bootstrap?.ci ?? null,
          items: pd.difference.n,
          clusters: pd.difference.clusters,
          minimumDetectable: mdd,
        });
      } catch (e) {
        comparisons.push({
          a,
          b,
          difference: NaN,
          se: NaN,
          ci: [NaN, NaN],
          p: NaN,
          bootstrapCi: null,
          items: 0,
          clusters: 0,
          minimumDetectable: null,
          reason: reasonOf(e),
        });
      }
    }
    out.push({
      suite: kind,
      title: def.title,
      metric,
      percent,
      clusterUnit: def.clusterUnit,
      level,
      rows,
      comparisons,
    });
  }
  return out;
}

/**
 * A figure in the published form, e.g. `41.2 ± 2.1 [37.1, 45.3]` (mean ± clustered SE [CI]).
 * @param mean, se, ci metric units; @param percent show ×100 with one decimal, else three significant decimals.
 */
export function publishedForm(mean: number, se: number, ci: readonly [number, number], percent: boolean): string {
  const f = (v: number) => (Number.isFinite(v) ? (percent ? (v * 100).toFixed(1) : v.toFixed(3)) : '—');
  return `${f(mean)} ± ${f(se)} [${f(ci[0])}, ${f(ci[1])}]`;
}

/** The machine-readable results file (`loupe report --results-json`): what a paper's tables are generated from. */
export interface ResultsFile {
  /** Format name and version of this file. */
  format: 'loupe-results';
  version: 1;
  generatedAt: string;
  /** How the figures were computed (named so a reader can reproduce them). */
  method: {
    itemMean: 'repeats averaged within item';
    se: 'cluster-robust, statsmodels small-sample correction G/(G-1)·(N-1)/(N-K)';
    seMillerUncorrected: 'Miller 2024 eq. 4, no correction';
    ci: 'normal';
    comparison: 'paired difference of item means over shared items; paired t with G-1 df';
    minimumDetectable: '80% power, alpha 0.05, Miller 2024 §5';
  };
  suites: SuiteHeadline[];
}

/**
 * The results file for headline tables. Non-finite numbers (a comparison with a reason) are written as null by JSON.
 * @param suites from {@link headlineTables}; @param generatedAt ISO time.
 */
export function resultsFile(suites: readonly SuiteHeadline[], generatedAt: string): ResultsFile {
  return {
    format: 'loupe-results',
    version: 1,
    generatedAt,
    method: {
      itemMean: 'repeats averaged within item',
      se: 'cluster-robust, statsmodels small-sample correction G/(G-1)·(N-1)/(N-K)',
      seMillerUncorrected: 'Miller 2024 eq. 4, no correction',
      ci: 'normal',
      comparison: 'paired difference of item means over shared items; paired t with G-1 df',
      minimumDetectable: '80% power, alpha 0.05, Miller 2024 §5',
    },
    suites: [...suites],
  };
}
