/**
 * Power analysis for paired comparisons of two profiles (issue 48): repeats and items/clusters needed to detect a
 * difference δ, and the minimum detectable difference of a design, from observed variances.
 *
 * Model (Miller 2024, "Adding Error Bars to Evals", arXiv:2411.00640 §3 and §5): the score of item i, repeat k is
 * x_i + ε_ik with conditional-mean variance and within-item variance σ²_i; the mean over n items of the paired
 * item-mean differences (K repeats per item and profile) has variance (ω² + (σ²_A + σ²_B)/K) / n, where ω² is the
 * variance of the conditional-mean difference x_A,i − x_B,i and σ²_A, σ²_B the mean within-item variances. A two-sided
 * level-α test then has power 1 − β against δ when
 *   n = (z_{α/2} + z_β)² · (ω² + (σ²_A + σ²_B)/K) / δ²            (Miller §5, sample size),
 *   K = (σ²_A + σ²_B) / (n δ² / (z_{α/2} + z_β)² − ω²)             (Miller §5 solved for the resamples K),
 *   δ_min = (z_{α/2} + z_β) · sqrt((ω² + (σ²_A + σ²_B)/K) / n)      (minimum detectable difference).
 * Clustering (Loupe's extension, stated here): ω² is replaced by its cluster-robust counterpart
 * ω²_cl = n·SE²_cl − mean_i(σ²_A,i/K_A,i + σ²_B,i/K_B,i) (the clustered variance of the item-mean differences less the
 * repeat noise, which is independent across items and so does not cluster), which holds for designs with the same
 * items per cluster; clusters needed = ceil(n / items per cluster).
 */
import { LoupeInputError } from '../util/errors.ts';
import type { ProfileEstimate } from './cluster.ts';
import { normalCdf, normalQuantile } from './distributions.ts';
import type { PairedDifference } from './paired.ts';

/** The variances of a paired design (metric units squared) and its current size. */
export interface PairedDesign {
  /** ω²: variance of the conditional-mean differences between profiles, cluster-robust (≥ 0). */
  omega2: number;
  /** Mean within-item variance of A's and B's repeats (σ²_A, σ²_B). */
  sigma2A: number;
  sigma2B: number;
  /** Items n, repeats per item and profile K, and mean items per cluster of the observed design. */
  items: number;
  repeats: number;
  itemsPerCluster: number;
}

/** Test settings: two-sided level α (default 0.05) and power 1 − β (default 0.8). */
export interface PowerSettings {
  alpha?: number;
  power?: number;
}

function zSum(s: PowerSettings): number {
  const alpha = s.alpha ?? 0.05;
  const power = s.power ?? 0.8;
  if (!(alpha > 0 && alpha < 1)) throw new LoupeInputError('alpha', `must be between 0 and 1 (got ${alpha})`);
  if (!(power > 0 && power < 1)) throw new LoupeInputError('power', `must be between 0 and 1 (got ${power})`);
  return normalQuantile(1 - alpha / 2) + normalQuantile(power);
}
function positive(x: number, what: string): void {
  if (!(x > 0) || !Number.isFinite(x)) throw new LoupeInputError(what, `must be a positive number (got ${x})`);
}
function checkDesign(d: PairedDesign): void {
  for (const [k, v] of [
    ['omega²', d.omega2],
    ['within-item variance of A', d.sigma2A],
    ['within-item variance of B', d.sigma2B],
  ] as const) {
    if (!(v >= 0) || !Number.isFinite(v)) throw new LoupeInputError(k, `must be a non-negative number (got ${v})`);
  }
}

/**
 * Variance of the mean paired difference for n items and K repeats: (ω² + (σ²_A + σ²_B)/K) / n.
 * @param d design variances; @param items n (> 0); @param repeats K (> 0). @returns variance, metric units squared.
 * @throws LoupeInputError for non-positive n or K or negative variances. Source: Miller 2024 §3.1, §5.
 */
export function designVariance(d: PairedDesign, items: number, repeats: number): number {
  checkDesign(d);
  positive(items, 'items');
  positive(repeats, 'repeats');
  return (d.omega2 + (d.sigma2A + d.sigma2B) / repeats) / items;
}

/**
 * Power of the two-sided z test of the paired difference against a true difference δ: Φ(|δ|/SE − z_{α/2}) + Φ(−|δ|/SE − z_{α/2}).
 * @param d design; @param delta true difference (metric units); @param items n; @param repeats K; @param alpha level (0.05).
 * @returns power in [0, 1]. @throws LoupeInputError as {@link designVariance}. Source: Miller 2024 §5.
 */
export function powerOf(d: PairedDesign, delta: number, items: number, repeats: number, alpha = 0.05): number {
  const se = Math.sqrt(designVariance(d, items, repeats));
  const z = normalQuantile(1 - alpha / 2);
  if (se === 0) return delta === 0 ? alpha : 1;
  return normalCdf(Math.abs(delta) / se - z) + normalCdf(-Math.abs(delta) / se - z);
}

/**
 * Items (and clusters) needed to detect δ: n = ceil((z_{α/2} + z_β)² (ω² + (σ²_A + σ²_B)/K) / δ²).
 * @param d design; @param delta difference to detect (> 0, metric units); @param repeats K (default the design's).
 * @returns items n and clusters ceil(n / items per cluster). @throws LoupeInputError for δ ≤ 0 or bad settings.
 * Source: Miller 2024 §5 (sample size for a paired comparison with K resamples).
 */
export function requiredItems(
  d: PairedDesign,
  delta: number,
  repeats = d.repeats,
  s: PowerSettings = {},
): { items: number; clusters: number } {
  positive(Math.abs(delta), 'delta');
  const n = Math.ceil((zSum(s) ** 2 * (d.omega2 + (d.sigma2A + d.sigma2B) / repeats)) / delta ** 2 - 1e-9);
  const items = Math.max(1, n);
  return { items, clusters: Math.ceil(items / d.itemsPerCluster - 1e-9) };
}

/**
 * Repeats per item and profile needed to detect δ with n items: K = ceil((σ²_A + σ²_B) / (n δ² / (z_{α/2} + z_β)² − ω²)).
 * @param d design; @param delta (> 0); @param items n (default the design's).
 * @returns K ≥ 1, or null when no number of repeats suffices (n δ²/(z_{α/2}+z_β)² ≤ ω²: add items instead).
 * @throws LoupeInputError for δ ≤ 0 or bad settings. Source: Miller 2024 §5, the sample-size formula solved for K.
 */
export function requiredRepeats(d: PairedDesign, delta: number, items = d.items, s: PowerSettings = {}): number | null {
  positive(Math.abs(delta), 'delta');
  positive(items, 'items');
  checkDesign(d);
  const room = (items * delta ** 2) / zSum(s) ** 2 - d.omega2;
  if (room <= 0) return null;
  const noise = d.sigma2A + d.sigma2B;
  return noise === 0 ? 1 : Math.max(1, Math.ceil(noise / room - 1e-9));
}

/**
 * Minimum detectable difference of a design: δ_min = (z_{α/2} + z_β) · sqrt((ω² + (σ²_A + σ²_B)/K) / n).
 * @param d design; @param items n; @param repeats K. @returns δ_min in metric units.
 * @throws LoupeInputError for bad settings. Source: Miller 2024 §5 (the sample-size formula solved for δ).
 */
export function minimumDetectableDifference(
  d: PairedDesign,
  items = d.items,
  repeats = d.repeats,
  s: PowerSettings = {},
): number {
  return zSum(s) * Math.sqrt(designVariance(d, items, repeats));
}

/**
 * The design of an observed paired comparison: ω²_cl = max(0, n·SE²_cl − mean_i(σ²_A,i/K_A,i + σ²_B,i/K_B,i)),
 * σ²_A, σ²_B the mean within-item variances, K the mean repeats.
 * @param pd a {@link PairedDifference}. @returns {@link PairedDesign}.
 * @throws LoupeInputError when no shared item has ≥ 2 repeats for both profiles (the within-item variance is unknown).
 * Source: Miller 2024 §3.1 (Var of an item mean = ω² part + σ²/K), §5; clustering as in this module's header.
 */
export function designOfPaired(pd: PairedDifference): PairedDesign {
  const rep = pd.items.filter((i) => i.withinVarianceA !== null && i.withinVarianceB !== null);
  if (!rep.length) {
    throw new LoupeInputError(
      'repeats',
      'no item was run at least twice by both profiles, so the within-item variance is unknown: run repeats first',
    );
  }
  const noise =
    rep.reduce((a, i) => a + i.withinVarianceA! / i.repeatsA + i.withinVarianceB! / i.repeatsB, 0) / rep.length;
  const n = pd.items.length;
  const sigma2A = rep.reduce((a, i) => a + i.withinVarianceA!, 0) / rep.length;
  const sigma2B = rep.reduce((a, i) => a + i.withinVarianceB!, 0) / rep.length;
  const repeats = pd.items.reduce((a, i) => a + (i.repeatsA + i.repeatsB) / 2, 0) / n;
  return {
    omega2: Math.max(0, n * pd.difference.se ** 2 - noise),
    sigma2A,
    sigma2B,
    items: n,
    repeats,
    itemsPerCluster: n / pd.difference.clusters,
  };
}

/**
 * The design of comparing one observed profile with a hypothetical second profile of the same variances: ω² =
 * 2(1 − ρ)·ω²_A,cl with ω²_A,cl = max(0, n·SE²_cl − mean_i σ²_i/K_i), σ²_B = σ²_A.
 * @param est a {@link ProfileEstimate}; @param correlation ρ in [−1, 1] of the two profiles' conditional means over
 *   items (default 0: uncorrelated, conservative for similar models).
 * @returns {@link PairedDesign}. @throws LoupeInputError when no item has ≥ 2 repeats or ρ is out of range.
 * Source: Miller 2024 §5 (power from one model's observed variances, assuming the other behaves alike).
 */
export function designOfProfile(est: ProfileEstimate, correlation = 0): PairedDesign {
  if (!(correlation >= -1 && correlation <= 1)) {
    throw new LoupeInputError('correlation', `must be between −1 and 1 (got ${correlation})`);
  }
  const rep = est.items.filter((i) => i.withinVariance !== null);
  if (!rep.length) {
    throw new LoupeInputError(
      'repeats',
      'no item was run at least twice, so the within-item variance is unknown: run repeats first',
    );
  }
  const noise = rep.reduce((a, i) => a + i.withinVariance! / i.repeats, 0) / rep.length;
  const sigma2 = rep.reduce((a, i) => a + i.withinVariance!, 0) / rep.length;
  const omegaA = Math.max(0, est.n * est.se ** 2 - noise);
  const repeats = est.items.reduce((a, i) => a + i.repeats, 0) / est.n;
  return {
    omega2: 2 * (1 - correlation) * omegaA,
    sigma2A: sigma2,
    sigma2B: sigma2,
    items: est.n,
    repeats,
    itemsPerCluster: est.n / est.clusters,
  };
}
