/**
 * Inter-annotator agreement for the annotation workflow: percent agreement, Cohen's κ (two raters),
 * Krippendorff's α (any number of raters, missing values allowed; nominal, ordinal and interval metrics),
 * Gwet's AC1 / AC2 (any number of raters; identity, linear, quadratic or ordinal weights) and percentile
 * bootstrap confidence intervals over units.
 * Source: Cohen (1960); Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability"
 * (coincidence-matrix form); Gwet (2008, 2014 "Handbook of Inter-Rater Reliability" ch. 2–3, the formulas of
 * irrCAC `gwet.ac1.raw`); AnalystBench App. C reports pairwise agreement, Gwet AC2 and Krippendorff α (spec §4.3(e)).
 */
import { LoupeInputError } from '../util/errors.ts';
import { seededRandom } from '../util/random.ts';

/** A rating; `null`/`undefined` = missing. */
export type Rating = string | number | boolean | null | undefined;

const missing = (v: Rating): v is null | undefined =>
  v === null || v === undefined || (typeof v === 'number' && Number.isNaN(v));

/**
 * Cohen's κ for two raters over the same items: (p_o − p_e) / (1 − p_e). Items either rater left
 * missing are dropped.
 * @param a ratings of rater A; `b` of rater B (same length, same item order).
 * @returns κ, observed agreement p_o, chance agreement p_e and the number of items used. κ is 1 when
 *   p_e = 1 and the raters agree on everything (a single shared category), NaN when no item is usable.
 * @throws LoupeInputError when the arrays differ in length.
 */
export function cohensKappa(
  a: readonly Rating[],
  b: readonly Rating[],
): { kappa: number; observed: number; expected: number; n: number } {
  if (a.length !== b.length) {
    throw new LoupeInputError('cohensKappa', `rater arrays differ in length (${a.length} vs ${b.length})`);
  }
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (missing(x) || missing(y)) continue;
    pairs.push([String(x), String(y)]);
  }
  const n = pairs.length;
  if (n === 0) return { kappa: NaN, observed: NaN, expected: NaN, n: 0 };
  const ca = new Map<string, number>();
  const cb = new Map<string, number>();
  let agree = 0;
  for (const [x, y] of pairs) {
    if (x === y) agree++;
    ca.set(x, (ca.get(x) ?? 0) + 1);
    cb.set(y, (cb.get(y) ?? 0) + 1);
  }
  const po = agree / n;
  let pe = 0;
  for (const [k, v] of ca) pe += (v / n) * ((cb.get(k) ?? 0) / n);
  const kappa = pe === 1 ? (po === 1 ? 1 : NaN) : (po - pe) / (1 - pe);
  return { kappa, observed: po, expected: pe, n };
}

/** Difference metric of Krippendorff's α. */
export type AlphaMetric = 'nominal' | 'ordinal' | 'interval';

/**
 * Krippendorff's α from a reliability data matrix (raters × units), missing values allowed.
 * α = 1 − D_o / D_e with D_o from the coincidence matrix o_ck and D_e from its marginals n_c:
 * α = 1 − (n − 1) · Σ o_ck δ²_ck / Σ n_c n_k δ²_ck. Units with fewer than two values are not pairable
 * and are ignored. δ² is 0/1 (nominal), (c − k)² (interval; values must be numbers) or, ordinal, the squared
 * rank distance (Σ_{g=c..k} n_g − (n_c + n_k)/2)² over the values sorted ascending (Krippendorff 2011, §C).
 * @param data `data[rater][unit]`; every row must have the same length.
 * @param metric `nominal` (default), `ordinal` or `interval`.
 * @returns α, the number of pairable values n and of pairable units; α is NaN when n < 2 or D_e = 0.
 * @throws LoupeInputError for ragged rows or non-numeric values under `interval` / `ordinal`.
 */
export function krippendorffAlpha(
  data: ReadonlyArray<readonly Rating[]>,
  metric: AlphaMetric = 'nominal',
): { alpha: number; n: number; units: number } {
  const nUnits = data[0]?.length ?? 0;
  data.forEach((row, r) => {
    if (row.length !== nUnits) {
      throw new LoupeInputError(`krippendorffAlpha rater ${r}`, `has ${row.length} units, expected ${nUnits}`);
    }
  });
  const values: Array<Array<string | number>> = [];
  for (let u = 0; u < nUnits; u++) {
    const vs: Array<string | number> = [];
    for (const row of data) {
      const v = row[u];
      if (missing(v)) continue;
      if (metric !== 'nominal') {
        const num = typeof v === 'number' ? v : typeof v === 'boolean' ? Number(v) : Number(v);
        if (!Number.isFinite(num)) {
          throw new LoupeInputError(
            `krippendorffAlpha unit ${u}`,
            `${metric} metric needs numbers, got '${String(v)}'`,
          );
        }
        vs.push(num);
      } else vs.push(String(v));
    }
    if (vs.length >= 2) values.push(vs);
  }
  // coincidence matrix
  const cats: Array<string | number> = [];
  const index = new Map<string | number, number>();
  for (const vs of values) for (const v of vs) if (!index.has(v)) index.set(v, cats.push(v) - 1);
  const k = cats.length;
  const o = Array.from({ length: k }, () => new Array<number>(k).fill(0));
  for (const vs of values) {
    const m = vs.length;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < m; j++) if (i !== j) o[index.get(vs[i]!)!]![index.get(vs[j]!)!]! += 1 / (m - 1);
    }
  }
  const nc = o.map((row) => row.reduce((s, x) => s + x, 0));
  const n = nc.reduce((s, x) => s + x, 0);
  // ordinal: cumulative marginals over values sorted ascending
  const rank = cats.map((_, i) => i).sort((x, y) => (cats[x] as number) - (cats[y] as number));
  const posOf = new Array<number>(k);
  rank.forEach((c, p) => {
    posOf[c] = p;
  });
  const cum = [0];
  for (const c of rank) cum.push(cum[cum.length - 1]! + nc[c]!);
  const d2 = (c: number, kk: number): number => {
    if (metric === 'nominal') return c === kk ? 0 : 1;
    if (metric === 'ordinal') {
      const lo = Math.min(posOf[c]!, posOf[kk]!);
      const hi = Math.max(posOf[c]!, posOf[kk]!);
      const d = cum[hi + 1]! - cum[lo]! - (nc[c]! + nc[kk]!) / 2;
      return d * d;
    }
    const diff = (cats[c] as number) - (cats[kk] as number);
    return diff * diff;
  };
  let num = 0;
  let den = 0;
  for (let c = 0; c < k; c++) {
    for (let kk = 0; kk < k; kk++) {
      const d = d2(c, kk);
      if (d === 0) continue;
      num += o[c]![kk]! * d;
      den += nc[c]! * nc[kk]! * d;
    }
  }
  if (n < 2 || den === 0) return { alpha: NaN, n, units: values.length };
  return { alpha: 1 - ((n - 1) * num) / den, n, units: values.length };
}

/**
 * Mean pairwise percent agreement over units with at least two ratings.
 * @param data `data[rater][unit]`. @returns agreement in [0, 1], NaN when no unit has two ratings.
 */
export function pairwiseAgreement(data: ReadonlyArray<readonly Rating[]>): number {
  const nUnits = data[0]?.length ?? 0;
  let sum = 0;
  let units = 0;
  for (let u = 0; u < nUnits; u++) {
    const vs = data
      .map((r) => r[u])
      .filter((v) => !missing(v))
      .map(String);
    if (vs.length < 2) continue;
    let agree = 0;
    let pairs = 0;
    for (let i = 0; i < vs.length; i++) {
      for (let j = i + 1; j < vs.length; j++) {
        pairs++;
        if (vs[i] === vs[j]) agree++;
      }
    }
    sum += agree / pairs;
    units++;
  }
  return units ? sum / units : NaN;
}

/** Agreement weights of Gwet's AC2 (AC1 = identity). */
export type AgreementWeights = 'identity' | 'linear' | 'quadratic' | 'ordinal';

/**
 * The q×q weight matrix of {@link gwetAC} over sorted categories, as irrCAC defines them: identity 1/0;
 * linear 1 − |k − l| / (max − min); quadratic 1 − (k − l)² / (max − min)²; ordinal 1 − M_kl / max M with
 * M_kl = C(|rank k − rank l| + 1, 2). Non-identity weights need numeric categories.
 * @param cats categories (numbers for non-identity weights), any order. @returns w[k][l] in [0, 1].
 * @throws LoupeInputError for non-numeric categories under weighted schemes.
 */
export function agreementWeights(cats: ReadonlyArray<string | number>, weights: AgreementWeights): number[][] {
  const q = cats.length;
  if (weights === 'identity') return cats.map((_, k) => cats.map((__, l) => (k === l ? 1 : 0)));
  const xs = cats.map((c) => {
    const x = typeof c === 'number' ? c : Number(c);
    if (!Number.isFinite(x)) {
      throw new LoupeInputError('agreement weights', `${weights} weights need numeric ratings, got '${String(c)}'`);
    }
    return x;
  });
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  const range = hi - lo || 1;
  if (weights === 'linear') return xs.map((a) => xs.map((b) => 1 - Math.abs(a - b) / range));
  if (weights === 'quadratic') return xs.map((a) => xs.map((b) => 1 - ((a - b) / range) ** 2));
  const order = xs.map((_, i) => i).sort((a, b) => xs[a]! - xs[b]!);
  const r = new Array<number>(q);
  order.forEach((c, p) => {
    r[c] = p;
  });
  const m = (k: number, l: number) => {
    const n = Math.abs(r[k]! - r[l]!) + 1;
    return (n * (n - 1)) / 2;
  };
  const mmax = m(order[0]!, order[q - 1]!) || 1;
  return xs.map((_, k) => xs.map((__, l) => 1 - m(k, l) / mmax));
}

/**
 * Gwet's AC1 (identity weights) / AC2 (weighted) for any number of raters, missing values allowed — the
 * formulas of irrCAC `gwet.ac1.raw`: p_a averages Σ_k r_ik (r*_ik − 1) / (r_i (r_i − 1)) over units with ≥ 2
 * ratings (r*_ik = Σ_l w_kl r_il); π_k averages r_ik / r_i over units with ≥ 1 rating;
 * p_e = Σ_kl w_kl / (q (q − 1)) · Σ_k π_k (1 − π_k); AC = (p_a − p_e) / (1 − p_e).
 * Categories are those observed unless `categories` lists all possible ones (recommended for 1–5 scales).
 * @param data `data[rater][unit]`. @param weights default identity (AC1).
 * @returns coefficient, p_a, p_e, units used for p_a; NaN coefficient when no unit has two ratings or q < 2.
 * @throws LoupeInputError for ragged rows, or non-numeric ratings under weighted schemes.
 */
export function gwetAC(
  data: ReadonlyArray<readonly Rating[]>,
  weights: AgreementWeights = 'identity',
  categories?: ReadonlyArray<string | number>,
): { coefficient: number; pa: number; pe: number; units: number } {
  const nUnits = data[0]?.length ?? 0;
  data.forEach((row, r) => {
    if (row.length !== nUnits) {
      throw new LoupeInputError(`gwetAC rater ${r}`, `has ${row.length} units, expected ${nUnits}`);
    }
  });
  const key = (v: Rating): string | number =>
    weights === 'identity' ? String(v) : typeof v === 'number' ? v : Number(v);
  const cats: Array<string | number> = categories
    ? categories.map((c) => (weights === 'identity' ? String(c) : c))
    : [];
  const index = new Map<string | number, number>(cats.map((c, i) => [c, i]));
  const units: number[][] = [];
  for (let u = 0; u < nUnits; u++) {
    const counts = new Map<number, number>();
    for (const row of data) {
      const v = row[u];
      if (missing(v)) continue;
      const kv = key(v);
      if (weights !== 'identity' && !Number.isFinite(kv as number)) {
        throw new LoupeInputError(`gwetAC unit ${u}`, `${weights} weights need numeric ratings, got '${String(v)}'`);
      }
      let i = index.get(kv);
      if (i === undefined) {
        if (categories) {
          throw new LoupeInputError(
            `gwetAC unit ${u}`,
            `rating '${String(v)}' is not one of the categories ${categories.join(', ')}`,
          );
        }
        i = cats.push(kv) - 1;
        index.set(kv, i);
      }
      counts.set(i, (counts.get(i) ?? 0) + 1);
    }
    if (counts.size) units.push([...counts.entries()].flat());
  }
  const q = cats.length;
  const w = agreementWeights(cats, weights);
  let paSum = 0;
  let paUnits = 0;
  const pi = new Array<number>(q).fill(0);
  for (const flat of units) {
    const r = new Array<number>(q).fill(0);
    for (let j = 0; j < flat.length; j += 2) r[flat[j]!] = flat[j + 1]!;
    const ri = r.reduce((a, b) => a + b, 0);
    for (let k = 0; k < q; k++) pi[k]! += r[k]! / ri / units.length;
    if (ri < 2) continue;
    let s = 0;
    for (let k = 0; k < q; k++) {
      if (!r[k]) continue;
      let star = 0;
      for (let l = 0; l < q; l++) star += w[k]![l]! * r[l]!;
      s += (r[k]! * (star - 1)) / (ri * (ri - 1));
    }
    paSum += s;
    paUnits++;
  }
  if (!paUnits || q < 2) return { coefficient: NaN, pa: paUnits ? paSum / paUnits : NaN, pe: NaN, units: paUnits };
  const pa = paSum / paUnits;
  let tw = 0;
  for (const row of w) for (const x of row) tw += x;
  let spi = 0;
  for (const p of pi) spi += p * (1 - p);
  const pe = (tw / (q * (q - 1))) * spi;
  return { coefficient: pe === 1 ? NaN : (pa - pe) / (1 - pe), pa, pe, units: paUnits };
}

/** A percentile bootstrap interval. */
export interface BootstrapInterval {
  /** Lower and upper bounds of the (1 − level) central interval; NaN when too few resamples were defined. */
  low: number;
  high: number;
  /** Confidence level, e.g. 0.95. */
  level: number;
  /** Resamples drawn and how many gave a defined (non-NaN) statistic. */
  resamples: number;
  defined: number;
  seed: number;
}

/**
 * Percentile bootstrap CI of an agreement statistic, resampling units (columns) with replacement.
 * @param data `data[rater][unit]`; `stat` maps a resampled matrix to a number (NaN = undefined).
 * @param opts resamples (default 1000), level (default 0.95), seed (default 0, {@link seededRandom}).
 * @returns the interval; NaN bounds when fewer than half the resamples are defined or there are no units.
 */
export function bootstrapAgreement(
  data: ReadonlyArray<readonly Rating[]>,
  stat: (m: Rating[][]) => number,
  opts: { resamples?: number; level?: number; seed?: number } = {},
): BootstrapInterval {
  const B = opts.resamples ?? 1000;
  const level = opts.level ?? 0.95;
  const seed = opts.seed ?? 0;
  const n = data[0]?.length ?? 0;
  const rnd = seededRandom(seed);
  const vals: number[] = [];
  if (n > 0) {
    for (let b = 0; b < B; b++) {
      const idx = Array.from({ length: n }, () => Math.floor(rnd() * n));
      const v = stat(data.map((row) => idx.map((i) => row[i])));
      if (!Number.isNaN(v)) vals.push(v);
    }
  }
  vals.sort((a, b) => a - b);
  if (vals.length < Math.max(1, B / 2)) return { low: NaN, high: NaN, level, resamples: B, defined: vals.length, seed };
  const at = (p: number) => vals[Math.min(vals.length - 1, Math.max(0, Math.floor(p * (vals.length - 1))))]!;
  return { low: at((1 - level) / 2), high: at(1 - (1 - level) / 2), level, resamples: B, defined: vals.length, seed };
}

/**
 * The label a judgement's verdict carries, for agreement statistics: checklist-support → label,
 * claim-support → supported, hallucination → hallucinated, semantic-match → match,
 * pairwise-novelty → winner, trend-answer → answer, checklist-score → score (1–5, interval-scaled),
 * figure-quality → mean of the four scores. Unjudged (pending / error) → null.
 * @param j a judgement (any task). @returns the label, or null.
 */
export function verdictLabel(j: { task: string; status: string; verdict: unknown }): string | number | boolean | null {
  if (j.status !== 'done' || j.verdict === null || typeof j.verdict !== 'object') return null;
  const v = j.verdict as Record<string, unknown>;
  switch (j.task) {
    case 'checklist-support':
      return v.label as string;
    case 'claim-support':
      return v.supported as boolean;
    case 'hallucination':
      return v.hallucinated as boolean;
    case 'semantic-match':
      return v.match as boolean;
    case 'pairwise-novelty':
      return v.winner as string;
    case 'trend-answer':
      return v.answer as string;
    case 'checklist-score':
      return v.score as number;
    case 'figure-quality':
      return (
        ((v.readability as number) +
          (v.groundedness as number) +
          (v.task_utility as number) +
          (v.reproducibility as number)) /
        4
      );
    default:
      return null;
  }
}

/**
 * Agreement between two judges (e.g. the LLM judge and an expert) on the items both judged,
 * matched by input hash.
 * @param a judgements of judge A; `b` of judge B (any tasks; only shared input hashes of the same task count).
 * @param metric `nominal` (labels) or `interval` (1–5 scores).
 * @returns items compared, percent agreement, Cohen's κ and Krippendorff's α.
 */
export function judgeAgreement(
  a: ReadonlyArray<{ task: string; inputHash: string; status: string; verdict: unknown }>,
  b: ReadonlyArray<{ task: string; inputHash: string; status: string; verdict: unknown }>,
  metric: AlphaMetric = 'nominal',
): { items: number; agreement: number; kappa: number; alpha: number } {
  const bm = new Map(b.map((j) => [`${j.task}\u0000${j.inputHash}`, verdictLabel(j)]));
  const xs: Rating[] = [];
  const ys: Rating[] = [];
  for (const j of a) {
    const x = verdictLabel(j);
    const y = bm.get(`${j.task}\u0000${j.inputHash}`);
    if (x === null || y === null || y === undefined) continue;
    xs.push(x);
    ys.push(y);
  }
  const agree = xs.filter((x, i) => String(x) === String(ys[i])).length;
  return {
    items: xs.length,
    agreement: xs.length ? agree / xs.length : NaN,
    kappa: cohensKappa(xs, ys).kappa,
    alpha: krippendorffAlpha([xs, ys], metric).alpha,
  };
}
