/**
 * Inter-annotator agreement for the annotation workflow: percent agreement, Cohen's κ (two raters)
 * and Krippendorff's α (any number of raters, missing values allowed; nominal and interval metrics).
 * Source: Cohen (1960); Krippendorff (2011) "Computing Krippendorff's Alpha-Reliability"
 * (coincidence-matrix form); AnalystBench App. C reports Krippendorff α (spec §4.3(e)).
 */
import { LoupeInputError } from '../util/errors.ts';

/** A rating; `null`/`undefined` = missing. */
export type Rating = string | number | boolean | null | undefined;

const missing = (v: Rating): v is null | undefined => v === null || v === undefined || (typeof v === 'number' && Number.isNaN(v));

/**
 * Cohen's κ for two raters over the same items: (p_o − p_e) / (1 − p_e). Items either rater left
 * missing are dropped.
 * @param a ratings of rater A; `b` of rater B (same length, same item order).
 * @returns κ, observed agreement p_o, chance agreement p_e and the number of items used. κ is 1 when
 *   p_e = 1 and the raters agree on everything (a single shared category), NaN when no item is usable.
 * @throws LoupeInputError when the arrays differ in length.
 */
export function cohensKappa(a: readonly Rating[], b: readonly Rating[]): { kappa: number; observed: number; expected: number; n: number } {
  if (a.length !== b.length) throw new LoupeInputError('cohensKappa', `rater arrays differ in length (${a.length} vs ${b.length})`);
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
export type AlphaMetric = 'nominal' | 'interval';

/**
 * Krippendorff's α from a reliability data matrix (raters × units), missing values allowed.
 * α = 1 − D_o / D_e with D_o from the coincidence matrix o_ck and D_e from its marginals n_c:
 * α = 1 − (n − 1) · Σ o_ck δ²_ck / Σ n_c n_k δ²_ck. Units with fewer than two values are not pairable
 * and are ignored. δ² is 0/1 (nominal) or (c − k)² (interval; values must be numbers).
 * @param data `data[rater][unit]`; every row must have the same length.
 * @param metric `nominal` (default) or `interval`.
 * @returns α, the number of pairable values n and of pairable units; α is NaN when n < 2 or D_e = 0.
 * @throws LoupeInputError for ragged rows or non-numeric values under `interval`.
 */
export function krippendorffAlpha(data: ReadonlyArray<readonly Rating[]>, metric: AlphaMetric = 'nominal'): { alpha: number; n: number; units: number } {
  const nUnits = data[0]?.length ?? 0;
  data.forEach((row, r) => {
    if (row.length !== nUnits) throw new LoupeInputError(`krippendorffAlpha rater ${r}`, `has ${row.length} units, expected ${nUnits}`);
  });
  const values: Array<Array<string | number>> = [];
  for (let u = 0; u < nUnits; u++) {
    const vs: Array<string | number> = [];
    for (const row of data) {
      const v = row[u];
      if (missing(v)) continue;
      if (metric === 'interval') {
        const num = typeof v === 'number' ? v : Number(v);
        if (!Number.isFinite(num)) throw new LoupeInputError(`krippendorffAlpha unit ${u}`, `interval metric needs numbers, got '${String(v)}'`);
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
    for (let i = 0; i < m; i++) for (let j = 0; j < m; j++) if (i !== j) o[index.get(vs[i]!)!]![index.get(vs[j]!)!]! += 1 / (m - 1);
  }
  const nc = o.map((row) => row.reduce((s, x) => s + x, 0));
  const n = nc.reduce((s, x) => s + x, 0);
  const d2 = (c: number, kk: number): number => {
    if (metric === 'nominal') return c === kk ? 0 : 1;
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
    const vs = data.map((r) => r[u]).filter((v) => !missing(v)).map(String);
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
    case 'checklist-support': return v.label as string;
    case 'claim-support': return v.supported as boolean;
    case 'hallucination': return v.hallucinated as boolean;
    case 'semantic-match': return v.match as boolean;
    case 'pairwise-novelty': return v.winner as string;
    case 'trend-answer': return v.answer as string;
    case 'checklist-score': return v.score as number;
    case 'figure-quality': return ((v.readability as number) + (v.groundedness as number) + (v.task_utility as number) + (v.reproducibility as number)) / 4;
    default: return null;
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
  return { items: xs.length, agreement: xs.length ? agree / xs.length : NaN, kappa: cohensKappa(xs, ys).kappa, alpha: krippendorffAlpha([xs, ys], metric).alpha };
}
