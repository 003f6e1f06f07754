/**
 * The built-in scorers of manifest benchmarks and their aggregations: pure functions over responses and gold.
 * `regex-extract` with `numeric-tolerance` reproduces InfiAgent-DABench's `eval_closed_form.py` (`extract_format`,
 * `is_equal`, `evaluate_accuracy_*`, `analyze_concepts_*`) exactly, Python semantics included (`float()` parsing,
 * `round(x, 4)`, dict order, the divisor of answered questions). Source: issue 44; InfiAgent/InfiAgent
 * `examples/DA-Agent/eval_closed_form.py` (commit d02d18a).
 */
import { pyStrip } from '../../eval/numpy-python.ts';
import type { Manifest, ManifestAggregation } from './manifest.ts';
import { pythonPatternToJs } from './manifest.ts';
import type { ManifestGold } from './items.ts';

/** Python's `float(s)` of a string: the number, or null where Python raises `ValueError`. Source: CPython `float_from_string`. */
export function pyFloat(s: string): number | null {
  const t = pyStrip(s).replace(/\p{Nd}/gu, (c) => {
    const cp = c.codePointAt(0)!;
    if (cp < 128) return c;
    let start = cp;
    while (start > 0 && /\p{Nd}/u.test(String.fromCodePoint(start - 1))) start--;
    return String((cp - start) % 10);
  });
  const special = /^([+-]?)(inf|infinity|nan)$/i.exec(t);
  if (special) return special[2]!.toLowerCase() === 'nan' ? NaN : special[1] === '-' ? -Infinity : Infinity;
  const D = '[0-9](?:_?[0-9])*';
  if (!new RegExp(`^[+-]?(?:${D}(?:\\.(?:${D})?)?|\\.${D})(?:[eE][+-]?${D})?$`).test(t)) return null;
  return Number(t.replace(/_/g, ''));
}

/**
 * Python's `round(x, nd)` of a float: the decimal nearest the exact binary value, ties to even (JavaScript's
 * `toFixed` breaks exact ties upward: `round(0.03125, 4)` is 0.0312 in Python).
 * @param x a finite number; `nd` decimals 0–15. @returns the rounded float.
 */
export function pyRound(x: number, nd: number): number {
  if (!Number.isFinite(x)) return x;
  const neg = x < 0 || Object.is(x, -0);
  const exact = Math.abs(x).toFixed(100); // exact below 2^-100 precision, which a tie at nd ≤ 15 digits always is
  const [int, frac = ''] = exact.split('.');
  const keep = frac.slice(0, nd);
  const rest = frac.slice(nd);
  let digits = BigInt(int! + keep);
  const first = rest[0] ?? '0';
  const tail = rest.slice(1);
  const tie = first === '5' && /^0*$/.test(tail);
  if (first > '5' || (first === '5' && !tie) || (tie && digits % 2n === 1n)) digits += 1n;
  const s = digits.toString().padStart(nd + 1, '0');
  const v = Number(nd ? `${s.slice(0, s.length - nd)}.${s.slice(s.length - nd)}` : s);
  return neg ? -v : v;
}

/** How one given value is compared with its gold: exact text, or Python `float()` within a tolerance. */
export interface ValueCompare {
  kind: 'exact' | 'numeric-tolerance';
  absolute: number;
  relative: number;
  inclusive: boolean;
  caseSensitive: boolean;
  strip: boolean;
}

/** The comparison a manifest's scoring declares (defaults: exact, case-sensitive, not stripped; tolerance strict `<`). */
export function valueCompareOf(s: Manifest['scoring']): ValueCompare {
  const kind =
    s.scorer === 'numeric-tolerance' ? 'numeric-tolerance' : s.scorer === 'exact' ? 'exact' : (s.compare ?? 'exact');
  return {
    kind,
    absolute: s.absolute ?? 0,
    relative: s.relative ?? 0,
    inclusive: s.inclusive ?? false,
    caseSensitive: s.caseSensitive ?? true,
    strip: s.strip ?? false,
  };
}

/**
 * Whether a given value matches its gold. `numeric-tolerance` is DABench's `is_equal`: equal texts match; else both
 * parsed with Python's `float()` (a text Python refuses does not match) and |given − gold| < tolerance (≤ when
 * inclusive), tolerance = max(absolute, relative·|gold|). A missing value (null) never matches.
 */
export function valueMatches(given: string | null, gold: string, c: ValueCompare): boolean {
  if (given === null) return false;
  if (c.kind === 'exact') {
    let a = c.strip ? pyStrip(given) : given;
    let b = c.strip ? pyStrip(gold) : gold;
    if (!c.caseSensitive) {
      a = a.toLowerCase();
      b = b.toLowerCase();
    }
    return a === b;
  }
  if (given === gold) return true;
  const a = pyFloat(given);
  const b = pyFloat(gold);
  if (a === null || b === null) return false;
  const d = Math.abs(a - b);
  const tol = Math.max(c.absolute, c.relative * Math.abs(b));
  return c.inclusive ? d <= tol : d < tol;
}

/**
 * DABench's `extract_format`: every `(name, value)` match of the pattern, then `dict(zip(names, values))` — a name
 * given twice keeps its last value, in the position of its first.
 * @param pattern the manifest's pattern (Python syntax). @returns name → value.
 */
export function extractNamed(response: string, pattern: string): Map<string, string> {
  const re = new RegExp(pythonPatternToJs(pattern), 'gu');
  const out = new Map<string, string>();
  for (const m of response.matchAll(re)) out.set(m[1] ?? '', m[2] ?? '');
  return out;
}

/** One scored sub-answer. */
export interface SubResult {
  name: string;
  expected: string;
  given: string | null;
  correct: boolean;
}

/** One scored item: `answered` false when the response is missing or empty (then `subs` are all wrong, given null). */
export interface ItemResult {
  id: string;
  answered: boolean;
  response: string;
  subs: SubResult[];
  /** Every sub-answer correct (and answered). */
  correct: boolean;
  metadata: Record<string, unknown>;
}

/**
 * Scores one response against its gold with a built-in scorer (not `python`, which runs in the sandbox).
 * @param response the agent's or harness's response text ('' = unanswered). @returns the item result.
 */
export function scoreItem(
  id: string,
  response: string,
  gold: ManifestGold,
  scoring: Manifest['scoring'],
  metadata: Record<string, unknown>,
): ItemResult {
  const c = valueCompareOf(scoring);
  const answered = response !== '';
  let subs: SubResult[];
  if (!answered) {
    subs = gold.answers.map(([name, expected]) => ({ name, expected, given: null, correct: false }));
  } else if (scoring.scorer === 'regex-extract') {
    const got = extractNamed(response, scoring.pattern!);
    // label_answers = dict(common_answers): a name twice keeps its last value, at its first position
    const goldMap = new Map<string, string>();
    for (const [n, v] of gold.answers) goldMap.set(n, v);
    subs = [...goldMap].map(([name, expected]) => {
      const given = got.has(name) ? got.get(name)! : null;
      return { name, expected, given, correct: valueMatches(given, expected, c) };
    });
  } else if (scoring.scorer === 'list') {
    const sep = scoring.separator ?? ',';
    const split = (s: string): string[] =>
      s
        .split(sep)
        .map((x) => pyStrip(x))
        .filter((x) => x !== '');
    subs = gold.answers.map(([name, expected]) => {
      const g = split(response);
      const e = split(expected);
      let ok = g.length === e.length;
      if (ok && (scoring.ordered ?? true)) ok = e.every((x, i) => valueMatches(g[i]!, x, c));
      else if (ok) {
        const left = [...g];
        ok = e.every((x) => {
          const k = left.findIndex((y) => valueMatches(y, x, c));
          if (k < 0) return false;
          left.splice(k, 1);
          return true;
        });
      }
      return { name, expected, given: response, correct: ok };
    });
  } else {
    subs = gold.answers.map(([name, expected]) => ({
      name,
      expected,
      given: response,
      correct: valueMatches(response, expected, c),
    }));
  }
  return { id, answered, response, subs, correct: answered && subs.every((s) => s.correct), metadata };
}

/** Which items a rate divides by: `answered` (non-empty response: DABench's code) or `all` (its paper's reading). */
export type Denominator = 'answered' | 'all';

/** The aggregations used when a manifest names none. */
export const DEFAULT_AGGREGATIONS: readonly ManifestAggregation[] = [
  { metric: 'accuracy', label: 'Accuracy', kind: 'per-item' },
  { metric: 'sub_answer_accuracy', label: 'Sub-answer accuracy', kind: 'per-sub-answer' },
];

/** Metric values of a set of item results: flat metrics and per-field breakdowns. */
export interface AggregatedMetrics {
  /** Headline metrics by name (fractions; null when there is nothing to divide by). */
  summary: Record<string, number | null>;
  /** By-field breakdowns: metric → value → rate (in first-seen order, keys as Python's `json.dump` writes them). */
  breakdowns: Record<string, Record<string, number>>;
  /** Items the rates divide by, and items in all. */
  counted: number;
  items: number;
}

/**
 * Aggregates item results as the manifest says, in item order. With `answered`, unanswered items are left out entirely
 * (DABench's `results` holds only questions with a non-empty response); with `all` they count as wrong.
 * `round` rounds as Python's `round(x, n)`. Empty sets give 0 for the flat rates (DABench returns 0 when `total` is 0).
 * Source: `eval_closed_form.py` `evaluate_accuracy_by_question`, `evaluate_accuracy_by_sub_question`,
 * `evaluate_accuracy_proportional_by_sub_question_adjusted`, `analyze_concepts_accuracy`, `analyze_concepts_count_accuracy`.
 */
export function aggregateItems(
  results: readonly ItemResult[],
  aggs: readonly ManifestAggregation[],
  denominator: Denominator,
  round: number | undefined,
): AggregatedMetrics {
  const rs = denominator === 'answered' ? results.filter((r) => r.answered) : [...results];
  const rd = (x: number): number => (round === undefined ? x : pyRound(x, round));
  const summary: Record<string, number | null> = {};
  const breakdowns: Record<string, Record<string, number>> = {};
  for (const a of aggs) {
    if (a.kind === 'per-item') {
      const correct = rs.filter((r) => r.correct).length;
      summary[a.metric] = rs.length ? rd(correct / rs.length) : 0;
    } else if (a.kind === 'per-sub-answer') {
      let correct = 0;
      let total = 0;
      for (const r of rs) {
        correct += r.subs.filter((s) => s.correct).length;
        total += r.subs.length;
      }
      summary[a.metric] = total ? rd(correct / total) : 0;
    } else if (a.kind === 'proportional') {
      let score = 0;
      for (const r of rs) {
        const n = r.subs.length;
        const per = n > 0 ? 1 / n : 0;
        score += r.subs.filter((s) => s.correct).length * per;
      }
      summary[a.metric] = rs.length ? rd(score / rs.length) : 0;
    } else {
      const acc = new Map<string, { total: number; correct: number }>();
      let atLeast = { total: 0, correct: 0 };
      for (const r of rs) {
        const v = r.metadata[a.field!];
        if (v === undefined) continue;
        const values = Array.isArray(v) ? v : [v];
        const keys = a.kind === 'by-field' ? values.map((x) => String(x)) : [String(values.length)];
        for (const k of keys) {
          const e = acc.get(k) ?? { total: 0, correct: 0 };
          acc.set(k, e);
          e.total++;
          if (r.correct) e.correct++;
        }
        if (a.kind === 'by-field-count' && a.atLeast !== undefined && values.length >= a.atLeast) {
          atLeast = { total: atLeast.total + 1, correct: atLeast.correct + (r.correct ? 1 : 0) };
        }
      }
      const keys = [...acc.keys()];
      breakdowns[a.metric] = Object.fromEntries(keys.map((k) => [k, rd(acc.get(k)!.correct / acc.get(k)!.total)]));
      if (a.kind === 'by-field-count' && a.atLeast !== undefined) {
        summary[`${a.metric}_at_least_${a.atLeast}`] = atLeast.total ? rd(atLeast.correct / atLeast.total) : null;
      }
    }
  }
  return { summary, breakdowns, counted: rs.length, items: results.length };
}
