/**
 * Paired comparison of two run profiles over the items both ran (issue 48): the per-item difference of item means
 * (repeats averaged first), its cluster-robust SE and CI, a paired t on item means with the clustered SE, and a
 * seeded paired cluster bootstrap and sign-flip permutation over clusters as a check.
 * Source: Miller 2024, "Adding Error Bars to Evals", arXiv:2411.00640 §4 (paired differences, clustered);
 * statsmodels `OLS(d, ones).fit(cov_type='cluster')` for the SE and normal CI.
 */
import { LoupeInputError } from '../util/errors.ts';
import { seededRandom } from '../util/random.ts';
import { clusteredMean, itemMeans, type ClusteredMean, type ItemMean, type Observation } from './cluster.ts';
import { tCdf, tQuantile } from './distributions.ts';

/** One item both profiles ran. */
export interface PairedItem {
  item: string;
  cluster: string;
  /** Item mean of A and of B (metric units). */
  a: number;
  b: number;
  /** a − b. */
  diff: number;
  repeatsA: number;
  repeatsB: number;
  /** Within-item sample variances (null with one repeat). */
  withinVarianceA: number | null;
  withinVarianceB: number | null;
}

/** Options of {@link pairedDifference}. */
export interface PairedOptions {
  /** Confidence level; default 0.95. */
  level?: number;
  /** Cluster-bootstrap resamples; default 2000 (0 skips the bootstrap). */
  bootstrap?: number;
  /** Sign-flip permutations over clusters; default 2000 (0 skips). */
  permutations?: number;
  /** Seed of the resampling PRNG (mulberry32, `util/random.ts`); default 0. */
  seed?: number;
}

/** The paired difference A − B. */
export interface PairedDifference {
  /** Clustered mean of the item differences (A − B): SE (statsmodels-corrected), Miller's uncorrected SE, iid SE, normal CI. */
  difference: ClusteredMean;
  /** Mean of A and of B over the shared items. */
  meanA: number;
  meanB: number;
  /**
   * Paired t on item means with the clustered SE: t = d̄ / se, G − 1 degrees of freedom, two-sided p, t-based CI.
   * When the differences have no variation (every item differs by the same amount, up to rounding), t and p are NaN
   * (no test exists) and `degenerate` says why.
   */
  pairedT: { t: number; df: number; p: number; ci: [number, number]; degenerate?: string };
  /** Paired cluster bootstrap (clusters resampled with replacement; percentile CI); null when skipped. */
  bootstrap: { resamples: number; seed: number; se: number; ci: [number, number] } | null;
  /** Sign-flip permutation over clusters (H0: A and B exchangeable within item): two-sided p with +1 correction; null when skipped. */
  permutation: { permutations: number; seed: number; p: number } | null;
  items: PairedItem[];
  /** Items only A ran / only B ran (left out of the comparison). */
  onlyA: string[];
  onlyB: string[];
  /** Items whose item means differ (diff ≠ 0), largest |diff| first. */
  disagreements: PairedItem[];
  /** Mean within-item variance of A and of B over shared items with ≥ 2 repeats (null when none); Miller §3 σ²_A, σ²_B. */
  withinVarianceA: number | null;
  withinVarianceB: number | null;
}

function meanOf(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0) / xs.length;
}
function meanVar(items: readonly ItemMean[]): number | null {
  const v = items.filter((i) => i.withinVariance !== null).map((i) => i.withinVariance!);
  return v.length ? meanOf(v) : null;
}
function percentile(sorted: readonly number[], q: number): number {
  // Linear interpolation between order statistics (numpy's default 'linear' method).
  const h = (sorted.length - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.ceil(h);
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!);
}

/**
 * Paired difference of two profiles over the items both ran.
 * @param a observations of profile A (one per repeat per item); @param b of profile B. Clusters must agree per item.
 * @param options {@link PairedOptions}.
 * @returns {@link PairedDifference}; the difference is A − B in metric units.
 * @throws LoupeInputError when an item is in different clusters for A and B, fewer than 2 shared items or clusters, or as
 *   {@link itemMeans}.
 * Source: Miller 2024 §4.1–4.2 (paired differences, clustered SE of the differences); Cameron, Gelbach & Miller 2008
 *   (pairs cluster bootstrap); statsmodels `cov_type='cluster'`.
 */
export function pairedDifference(
  a: readonly Observation[],
  b: readonly Observation[],
  options: PairedOptions = {},
): PairedDifference {
  const level = options.level ?? 0.95;
  const ia = new Map(itemMeans(a).map((i) => [i.item, i]));
  const ib = new Map(itemMeans(b).map((i) => [i.item, i]));
  const items: PairedItem[] = [];
  for (const [id, x] of ia) {
    const y = ib.get(id);
    if (!y) continue;
    if (x.cluster !== y.cluster) {
      throw new LoupeInputError(`item ${id}`, `is in cluster ${x.cluster} for A and ${y.cluster} for B`);
    }
    items.push({
      item: id,
      cluster: x.cluster,
      a: x.mean,
      b: y.mean,
      diff: x.mean - y.mean,
      repeatsA: x.repeats,
      repeatsB: y.repeats,
      withinVarianceA: x.withinVariance,
      withinVarianceB: y.withinVariance,
    });
  }
  // Items and clusters in a fixed order (cluster, then item), so the seeded resampling gives the same figures whatever
  // order the observations came in (a store lists runs newest first, a file oldest first).
  items.sort((x, y) =>
    x.cluster < y.cluster ? -1 : x.cluster > y.cluster ? 1 : x.item < y.item ? -1 : x.item > y.item ? 1 : 0,
  );
  const shared = new Set(items.map((i) => i.item));
  const difference = clusteredMean(
    items.map((i) => ({ value: i.diff, cluster: i.cluster })),
    level,
  );
  const df = difference.clusters - 1;
  const tq = tQuantile(1 - (1 - level) / 2, df);
  const tci: [number, number] = [difference.mean - tq * difference.se, difference.mean + tq * difference.se];
  const pairedT: PairedDifference['pairedT'] =
    difference.se > 0
      ? (() => {
          const t = difference.mean / difference.se;
          return { t, df, p: 2 * (1 - tCdf(Math.abs(t), df)), ci: tci };
        })()
      : {
          t: NaN,
          df,
          p: NaN,
          ci: tci,
          degenerate: `every item differs by the same amount (${difference.mean}) up to rounding: the differences have no variation, so no test exists`,
        };

  // Cluster sums and sizes of the differences: both resamplings work on clusters.
  const clusterIds = [...new Set(items.map((i) => i.cluster))];
  const idx = new Map(clusterIds.map((c, k) => [c, k]));
  const sums = new Float64Array(clusterIds.length);
  const sizes = new Float64Array(clusterIds.length);
  for (const i of items) {
    const k = idx.get(i.cluster)!;
    sums[k]! += i.diff;
    sizes[k]! += 1;
  }
  const g = clusterIds.length;
  const seed = options.seed ?? 0;

  const nb = options.bootstrap ?? 2000;
  let bootstrap: PairedDifference['bootstrap'] = null;
  if (nb > 0) {
    const rnd = seededRandom(seed);
    const stats = new Float64Array(nb);
    for (let r = 0; r < nb; r++) {
      let s = 0,
        m = 0;
      for (let j = 0; j < g; j++) {
        const k = Math.floor(rnd() * g);
        s += sums[k]!;
        m += sizes[k]!;
      }
      stats[r] = s / m;
    }
    const sorted = [...stats].sort((x, y) => x - y);
    const mu = meanOf(sorted);
    const se = Math.sqrt(sorted.reduce((acc, v) => acc + (v - mu) ** 2, 0) / (nb - 1));
    bootstrap = {
      resamples: nb,
      seed,
      se,
      ci: [percentile(sorted, (1 - level) / 2), percentile(sorted, 1 - (1 - level) / 2)],
    };
  }
  const np = options.permutations ?? 2000;
  let permutation: PairedDifference['permutation'] = null;
  if (np > 0) {
    const rnd = seededRandom(seed + 1);
    const n = items.length;
    const observed = Math.abs(difference.mean);
    let extreme = 0;
    for (let r = 0; r < np; r++) {
      let s = 0;
      for (let j = 0; j < g; j++) s += rnd() < 0.5 ? -sums[j]! : sums[j]!;
      if (Math.abs(s / n) >= observed - 1e-12) extreme++;
    }
    permutation = { permutations: np, seed: seed + 1, p: (extreme + 1) / (np + 1) };
  }
  const disagreements = items
    .filter((i) => i.diff !== 0)
    .sort((x, y) => Math.abs(y.diff) - Math.abs(x.diff) || x.item.localeCompare(y.item));
  const sharedA = items.map((i) => ia.get(i.item)!);
  const sharedB = items.map((i) => ib.get(i.item)!);
  return {
    difference,
    meanA: meanOf(items.map((i) => i.a)),
    meanB: meanOf(items.map((i) => i.b)),
    pairedT,
    bootstrap,
    permutation,
    items,
    onlyA: [...ia.keys()].filter((k) => !shared.has(k)),
    onlyB: [...ib.keys()].filter((k) => !shared.has(k)),
    disagreements,
    withinVarianceA: meanVar(sharedA),
    withinVarianceB: meanVar(sharedB),
  };
}
