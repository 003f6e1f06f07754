/**
 * Cluster-robust means over benchmark items (issue 48): repeats are averaged within an item first, the mean over
 * items gets a standard error clustered on the benchmark's natural unit (LongDA publication/block, BLADE dataset,
 * DDR entity, AnalystBench task). Source: Miller 2024, "Adding Error Bars to Evals", arXiv:2411.00640 §2.2 (clustered
 * standard errors) and §3.1 (resampling: average repeats within a question); statsmodels `OLS.fit(cov_type='cluster')`
 * (`statsmodels/stats/sandwich_covariance.py` `cov_cluster`, small-sample correction G/(G−1)·(N−1)/(N−K)).
 */
import { LoupeInputError } from '../util/errors.ts';
import { normalQuantile } from './distributions.ts';

/** One scored observation: one repeat of one item. */
export interface Observation {
  /** The item (LongDA query, BLADE dataset, DDR checklist item, ...). */
  item: string;
  /** The cluster the item belongs to (the benchmark's cluster unit); one per item. */
  cluster: string;
  /** The score of this repeat (metric units, e.g. 0/1 or a fraction). */
  value: number;
  /** The run the score came from (for provenance); optional. */
  runId?: string;
}

/** An item's repeats averaged. */
export interface ItemMean {
  item: string;
  cluster: string;
  /** Mean of the item's repeats. */
  mean: number;
  /** Number of repeats (≥ 1). */
  repeats: number;
  /** Sample variance of the repeats (n−1 denominator); null with one repeat. */
  withinVariance: number | null;
}

/** A cluster-robust mean (an OLS of the values on a constant with clustered covariance). */
export interface ClusteredMean {
  /** Mean of the values (item means), metric units. */
  mean: number;
  /** Number of values (items), N. */
  n: number;
  /** Number of clusters, G. */
  clusters: number;
  /**
   * Cluster-robust SE with statsmodels' default small-sample correction:
   * sqrt( G/(G−1) · (N−1)/(N−K) · Σ_g (Σ_{i∈g} e_i)² ) / N with e_i = x_i − x̄ and K = 1 regressor (the constant).
   */
  se: number;
  /** Miller's uncorrected clustered SE (arXiv:2411.00640 eq. 4): sqrt(Σ_g (Σ_{i∈g} e_i)²) / N. */
  seMillerUncorrected: number;
  /** The naive SE ignoring clusters, sqrt(s²/N) with the n−1 sample variance (Miller eq. 1). */
  seIid: number;
  /** Normal-based confidence interval mean ± z_{1−α/2}·se (statsmodels' default for cov_type='cluster'). */
  ci: [number, number];
  /** Confidence level of `ci` (e.g. 0.95). */
  level: number;
  /**
   * Every value equals the mean up to floating-point rounding (|x_i − x̄| ≤ 8·ε·max|x|): the SEs are then exactly 0
   * rather than a rounding residue such as 1e-17, which would make a test statistic look astronomically significant.
   */
  noVariation: boolean;
}

/**
 * Averages the repeats of every item.
 * @param obs observations (any order); every value finite; an item always in the same cluster.
 * @returns one entry per item, in order of first appearance: mean, repeats, within-item sample variance (null for one repeat).
 * @throws LoupeInputError naming the item when a value is not finite or an item appears in two clusters.
 * Source: Miller 2024 §3.1 (resampling: "average the K scores of each question before computing the mean").
 */
export function itemMeans(obs: readonly Observation[]): ItemMean[] {
  const by = new Map<string, { cluster: string; values: number[] }>();
  for (const o of obs) {
    if (!Number.isFinite(o.value)) {
      throw new LoupeInputError(`item ${o.item}`, `score is not a finite number (${o.value})`);
    }
    const e = by.get(o.item);
    if (!e) by.set(o.item, { cluster: o.cluster, values: [o.value] });
    else {
      if (e.cluster !== o.cluster) {
        throw new LoupeInputError(
          `item ${o.item}`,
          `is in two clusters (${e.cluster} and ${o.cluster}); an item belongs to one cluster`,
        );
      }
      e.values.push(o.value);
    }
  }
  return [...by].map(([item, { cluster, values }]) => {
    const k = values.length;
    const mean = values.reduce((a, b) => a + b, 0) / k;
    const withinVariance = k > 1 ? values.reduce((a, v) => a + (v - mean) ** 2, 0) / (k - 1) : null;
    return { item, cluster, mean, repeats: k, withinVariance };
  });
}

/**
 * Mean with a cluster-robust standard error and CI: the OLS of `values` on a constant with `cov_type='cluster'`.
 * @param values one value per unit (item means) with its cluster label.
 * @param level confidence level in (0, 1); default 0.95.
 * @returns {@link ClusteredMean}: the corrected SE (statsmodels default), Miller's uncorrected SE, the iid SE, a normal CI;
 *   all SEs exactly 0 and `noVariation` when the values are equal up to rounding.
 * @throws LoupeInputError when there are fewer than 2 values or fewer than 2 clusters (no cluster-robust SE exists),
 *   a value is not finite, or the level is not in (0, 1).
 * Source: statsmodels 0.13 `OLS(y, ones).fit(cov_type='cluster', cov_kwds={'groups': g})` (`cov_cluster`,
 *   `use_correction=True`: G/(G−1)·(N−1)/(N−K)); Miller 2024 §2.2 eq. 4 for the uncorrected form.
 */
export function clusteredMean(values: readonly { value: number; cluster: string }[], level = 0.95): ClusteredMean {
  if (!(level > 0 && level < 1)) {
    throw new LoupeInputError('confidence level', `must be between 0 and 1 (got ${level})`);
  }
  const n = values.length;
  if (n < 2) throw new LoupeInputError('items', `a clustered standard error needs at least 2 items (got ${n})`);
  let sum = 0;
  for (const v of values) {
    if (!Number.isFinite(v.value)) {
      throw new LoupeInputError(`cluster ${v.cluster}`, `value is not a finite number (${v.value})`);
    }
    sum += v.value;
  }
  const mean = sum / n;
  const clusterSums = new Map<string, number>();
  let ss = 0;
  for (const v of values) {
    const e = v.value - mean;
    clusterSums.set(v.cluster, (clusterSums.get(v.cluster) ?? 0) + e);
    ss += e * e;
  }
  const g = clusterSums.size;
  // Rounding guard: the mean of equal values need not equal them exactly (0.1 × 3 / 3), and the residue would give a
  // tiny non-zero SE; values equal up to rounding have no variation.
  let maxAbs = 0;
  let maxResid = 0;
  for (const v of values) {
    maxAbs = Math.max(maxAbs, Math.abs(v.value));
    maxResid = Math.max(maxResid, Math.abs(v.value - mean));
  }
  const noVariation = maxResid <= 8 * Number.EPSILON * maxAbs;
  if (g < 2) {
    throw new LoupeInputError(
      'clusters',
      `a clustered standard error needs at least 2 clusters (all ${n} items are in ${[...clusterSums.keys()][0]})`,
    );
  }
  let meat = 0;
  if (!noVariation) for (const s of clusterSums.values()) meat += s * s;
  if (noVariation) ss = 0;
  const seMillerUncorrected = Math.sqrt(meat) / n;
  const k = 1;
  const correction = (g / (g - 1)) * ((n - 1) / (n - k));
  const se = Math.sqrt(correction * meat) / n;
  const seIid = Math.sqrt(ss / (n - 1) / n);
  const z = normalQuantile(1 - (1 - level) / 2);
  return {
    mean,
    n,
    clusters: g,
    se,
    seMillerUncorrected,
    seIid,
    ci: [mean - z * se, mean + z * se],
    level,
    noVariation,
  };
}

/** A profile's headline: item means and their clustered mean, with the within-item variance reported. */
export interface ProfileEstimate extends ClusteredMean {
  /** Repeats per item: min, max and total observations. */
  repeats: { min: number; max: number; total: number };
  /** Mean over items with ≥ 2 repeats of the within-item sample variance (Miller §3: E[σ²_i]); null when no item has 2 repeats. */
  withinItemVariance: number | null;
  /** Items with ≥ 2 repeats (those `withinItemVariance` averages). */
  itemsWithRepeats: number;
  items: ItemMean[];
}

/**
 * A profile's mean over items with repeats averaged within item first and a clustered SE/CI over items.
 * @param obs one observation per repeat per item. @param level confidence level; default 0.95.
 * @returns {@link ProfileEstimate}.
 * @throws LoupeInputError as {@link itemMeans} and {@link clusteredMean}.
 * Source: Miller 2024 §2.2, §3.1.
 */
export function profileEstimate(obs: readonly Observation[], level = 0.95): ProfileEstimate {
  const items = itemMeans(obs);
  const cm = clusteredMean(
    items.map((i) => ({ value: i.mean, cluster: i.cluster })),
    level,
  );
  const withVar = items.filter((i) => i.withinVariance !== null);
  const withinItemVariance = withVar.length
    ? withVar.reduce((a, i) => a + i.withinVariance!, 0) / withVar.length
    : null;
  const reps = items.map((i) => i.repeats);
  return {
    ...cm,
    items,
    withinItemVariance,
    itemsWithRepeats: withVar.length,
    repeats: { min: Math.min(...reps), max: Math.max(...reps), total: obs.length },
  };
}
