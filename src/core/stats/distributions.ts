/**
 * Distribution functions for the statistics of `src/core/stats`: thin, documented wrappers over the stdlib.js
 * packages (`@stdlib/stats-base-dists-*`, https://stdlib.io), so no quantile is hand-rolled here.
 */
import normalCdfLib from '@stdlib/stats-base-dists-normal-cdf';
import normalQuantileLib from '@stdlib/stats-base-dists-normal-quantile';
import tCdfLib from '@stdlib/stats-base-dists-t-cdf';
import tQuantileLib from '@stdlib/stats-base-dists-t-quantile';
import { LoupeInputError } from '../util/errors.ts';

function probability(p: number, what: string): void {
  if (!(p > 0 && p < 1)) throw new LoupeInputError(what, `must be a probability strictly between 0 and 1 (got ${p})`);
}

/**
 * Standard normal quantile Φ⁻¹(p).
 * @param p probability in (0, 1).
 * @returns z with Φ(z) = p.
 * @throws LoupeInputError when p is not in (0, 1).
 * Source: `@stdlib/stats-base-dists-normal-quantile` (mean 0, sd 1).
 */
export function normalQuantile(p: number): number {
  probability(p, 'normal quantile p');
  return normalQuantileLib(p, 0, 1);
}

/**
 * Standard normal distribution function Φ(z).
 * @param z any real number. @returns Φ(z) in [0, 1].
 * Source: `@stdlib/stats-base-dists-normal-cdf` (mean 0, sd 1).
 */
export function normalCdf(z: number): number {
  return normalCdfLib(z, 0, 1);
}

/**
 * Student's t quantile.
 * @param p probability in (0, 1). @param df degrees of freedom (> 0).
 * @returns t with F_df(t) = p.
 * @throws LoupeInputError when p is not in (0, 1) or df ≤ 0.
 * Source: `@stdlib/stats-base-dists-t-quantile`.
 */
export function tQuantile(p: number, df: number): number {
  probability(p, 't quantile p');
  if (!(df > 0)) throw new LoupeInputError('t quantile degrees of freedom', `must be positive (got ${df})`);
  return tQuantileLib(p, df);
}

/**
 * Student's t distribution function.
 * @param t any real number. @param df degrees of freedom (> 0). @returns F_df(t) in [0, 1].
 * @throws LoupeInputError when df ≤ 0.
 * Source: `@stdlib/stats-base-dists-t-cdf`.
 */
export function tCdf(t: number, df: number): number {
  if (!(df > 0)) throw new LoupeInputError('t distribution degrees of freedom', `must be positive (got ${df})`);
  return tCdfLib(t, df);
}
