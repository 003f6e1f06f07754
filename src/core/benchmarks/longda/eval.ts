/**
 * LongDA scoring: LongTA's answer normalisation, tolerance match, coverage (paper and code
 * definitions), efficiency, tool-usage counts and the 20-bin tool-usage heatmap (LongDA Figure 8).
 * Pure functions over plain inputs; no I/O except {@link loadLongdaGroundTruth}.
 * Source: spec §2.4 / §2.7 / §5.3 (LongTA `utils.py`, `metric.py`, `main.py`,
 * `paper_figures/tool_usage_analysis.py` @ bd03018).
 */
import { readFileSync } from 'node:fs';
import { LoupeInputError } from '../../util/errors.ts';
import { isDict, parsePyLiteral, type PyComplex, type PyLiteral } from '../../eval/py-literal.ts';
import { npMean as numpyMean, npSum as numpySum, sequentialSum } from '../../eval/numpy-python.ts';
import { readCsvAsPandas, type PandasCell } from '../../eval/pandas-csv.ts';
import type { ToolHeatmap } from '../types.ts';
import { binnedToolHeatmap } from '../../eval/tool-heatmap.ts';
import type { LongdaQuery, ReadAnswerStructure } from './items.ts';
import { answerStructureText, parseAnswerStructure } from './parse.ts';
import { readLongdaCsv } from './load.ts';
import { pyNumberText } from '../../store/export.ts';

/** A normalised answer: a number, a list, a dict (not comparable), or `null` (no answer). */
export type LongdaValue = number | LongdaValue[] | LongdaDict | null;
/** A `key: value` answer after normalisation; LongTA never compares these (coverage 0). */
export interface LongdaDict {
  readonly kind: 'dict';
  readonly entries: Record<string, LongdaValue>;
}

// Python's `\d` (LongTA `utils.py`) matches every Unicode decimal digit (`１２`, `١٢`) and `float()` reads them: so do we.
const D = String.raw`\p{Nd}`;
const NUM = String.raw`[-+]?${D}*\.?${D}+(?:[eE][-+]?${D}+)?`;
const NUM_RE = new RegExp(NUM, 'gu');
const KV_RE = new RegExp(String.raw`([A-Za-z0-9_\-/\s]+?)\s*[:=]\s*(${NUM})`, 'gu');
// LongTA `_standardize_numeric_text`: every `X +- Y` (numbers may hold thousands commas) becomes `X`, wherever it stands.
const TOL_NUM = String.raw`[-+]?${D}[${D},]*\.?${D}*(?:[eE][-+]?${D}+)?`;
const TOLERANCE_RE = new RegExp(String.raw`(${TOL_NUM})\s*\+-\s*${TOL_NUM}`, 'gu');
const THOUSANDS_RE = /(?<=\p{Nd}),(?=\p{Nd}{3}\b)/gu;

/** A number's text with every Unicode decimal digit made ASCII (`１２.５` → `12.5`), as Python's `float()` reads it. */
function asciiDigits(s: string): string {
  return s.replace(/\p{Nd}/gu, (c) => {
    const cp = c.codePointAt(0)!;
    if (cp < 128) return c;
    let start = cp;
    while (start > 0 && /\p{Nd}/u.test(String.fromCodePoint(start - 1))) start--;
    return String((cp - start) % 10);
  });
}

/** Python `float()` of a matched number. */
function pyFloat(s: string): number {
  return Number(asciiDigits(s));
}

/**
 * Standardises an answer string before parsing, as LongTA does: unicode dashes → `-`, `±`/`+/-` →
 * `+-`, every `X +- Y` reduced to `X` (not only a trailing one), `%` removed, thousands commas (`1,234`) deleted.
 * @param s an already-stripped, non-empty string.
 * @returns the standardised string.
 * Source: spec §2.4, LongTA `utils.normalize_answer_value`.
 */
export function standardizeAnswerText(s: string): string {
  let t = s.replace(/[−–—]/g, '-').replace(/±/g, '+-').replace(/\+\/-/g, '+-');
  // every match holds `+-`: without one the regex cannot match, and skipping it keeps a long run of digits from
  // making its backtracking cubic (4,301 digits: minutes, in Python's `re` as in V8)
  if (t.includes('+-')) t = t.replace(TOLERANCE_RE, '$1');
  t = t.replace(/%/g, '');
  t = t.replace(THOUSANDS_RE, '');
  return t;
}

/**
 * LongTA's answer normalisation. None → null; numbers (and booleans) → numbers; lists, tuples and
 * sets → arrays normalised element-wise; dicts → {@link LongdaDict}; strings are stripped (empty →
 * null), standardised ({@link standardizeAnswerText}) and then parsed by, in order: a Python
 * literal; `key: number` pairs (→ dict); every number in the text (one → number, several → list);
 * else null.
 * @param v anything: a raw answer string, a number, an array, a parsed literal.
 * @returns the normalised value.
 * Source: spec §2.4, LongTA `utils.normalize_answer_value`. The thousands-comma quirk of spec §2.7
 * item 4 (`"[12.5,100.0]"` in free text) is reproduced on purpose.
 * @example normalizeAnswerValue('12.5%') === 12.5
 */
export function normalizeAnswerValue(v: unknown, literals: LiteralMode = 'readable'): LongdaValue {
  return normalizeInner(v, 0, literals === 'cpython');
}

/**
 * The answer (or ground truth) of one row cannot be scored the way the official code scores it because the
 * official code raises there (LongTA `utils.normalize_answer_value` → `float(int)` → `OverflowError`: the whole
 * evaluation aborts). Loupe reports the row and the reason and scores the rest.
 */
export class LongdaOfficialError extends Error {
  /** The Python exception the official code raises, e.g. `OverflowError: int too large to convert to float`. */
  readonly pythonError: string;
  constructor(pythonError: string) {
    super(pythonError);
    this.pythonError = pythonError;
  }
}

const isPyComplex = (v: unknown): v is PyComplex =>
  typeof v === 'object' && v !== null && (v as PyComplex).kind === 'complex';

function normalizeInner(v: unknown, depth: number, python: boolean): LongdaValue {
  if (depth > 50) return null;
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'bigint') {
    const n = Number(v);
    // `float(int)` raises when the int rounds past the largest double (CPython `PyLong_AsDouble`)
    if (python && !Number.isFinite(n)) {
      throw new LongdaOfficialError('OverflowError: int too large to convert to float');
    }
    return n;
  }
  // a complex is no int/float/str/list/dict: `json.loads(complex)` raises TypeError → None (LongTA utils.py)
  if (isPyComplex(v)) return null;
  if (Array.isArray(v)) return v.map((x) => normalizeInner(x, depth + 1, python));
  if (v instanceof Set) return [...v].map((x) => normalizeInner(x, depth + 1, python));
  if (isDict(v)) return dictOf(v.entries.map(([k, x]) => [k, normalizeInner(x, depth + 1, python)]));
  if (typeof v === 'object') {
    if ((v as LongdaDict).kind === 'dict' && typeof (v as LongdaDict).entries === 'object') return v as LongdaDict;
    return dictOf(
      Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, normalizeInner(x, depth + 1, python)]),
    );
  }
  if (typeof v !== 'string') return null;
  const stripped = v.trim();
  if (stripped === '') return null;
  const s = standardizeAnswerText(stripped);
  const lit = parsePyLiteral(s, { python });
  if (lit !== undefined) return normalizeInner(lit as PyLiteral, depth + 1, python);
  const kv = /[:=]/.test(s) ? [...s.matchAll(KV_RE)] : []; // a pair needs `:` or `=` (and the lazy key scan is quadratic)
  if (kv.length > 0) return dictOf(kv.map((m) => [m[1]!.trim(), pyFloat(m[2]!)]));
  const nums = s.match(NUM_RE);
  if (!nums) return null;
  if (nums.length === 1) return pyFloat(nums[0]!);
  return nums.map(pyFloat);
}

function dictOf(pairs: Array<[string, LongdaValue]>): LongdaDict {
  const entries: Record<string, LongdaValue> = {};
  for (const [k, x] of pairs) entries[k] = x;
  return { kind: 'dict', entries };
}

/** List scoring: `partial` = mean of element hits (LongTA code, published numbers); `strict` = all elements (paper). */
export type ListScoring = 'partial' | 'strict';
/** Coverage definition reported as `coverage`: `comparable` (LongTA code) or `structural` (paper). */
export type CoverageMode = 'comparable' | 'structural';

/**
 * Python literals in answers: `cpython` (LongTA code: `ast.literal_eval` builds sets — duplicates dropped, `1 == True`,
 * CPython's iteration order —, a complex answer is no answer, an integer past the double range raises
 * OverflowError) or `readable` (sets keep source order and duplicates, `5j` reads as 5, huge integers are infinite).
 */
export type LiteralMode = 'cpython' | 'readable';
/** Means and sums: `numpy` (numpy's pairwise sum where the code sums float64 arrays, left to right over object columns) or `left-to-right`. */
export type SummationMode = 'numpy' | 'left-to-right';
/** Per-source figures grouped by the `source` column only (LongTA `metric.py`) or by survey and source (one publication). */
export type BySourceMode = 'source' | 'survey-source';
/** How `loupe score --longda-answers` reads the results file: as `pandas.read_csv` does (NA tokens, dtypes, float parser) or as text. */
export type AnswersCsvMode = 'pandas' | 'text';

/** Options of LongDA scoring; every score records the values used. */
export interface LongdaOptions {
  /** ε of τ = max(ε·|g|, floor). Default 0.05 (LongTA `MATCH_TOLERANCE`). */
  tolerance: number;
  /** Absolute floor of τ in the answer's own units. Default 1.0 (LongTA; spec §2.7 item 3). */
  tolerance_floor: number;
  /** Default `partial`. */
  list_scoring: ListScoring;
  /** Which definition the headline `coverage` uses. Default `comparable`; both are always reported. */
  coverage: CoverageMode;
  /**
   * An infinite answer (`1e999`) compared with a finite truth: `inf` (LongTA `metric.py`: its error enters the mean,
   * so MAE / MPE are infinite; the official value) or `exclude` (rows whose error is not finite leave the MAE / MPE
   * means; coverage and match are unchanged). Default `inf`. Issue 21 item 4.
   */
  infinite_mae: 'inf' | 'exclude';
  /** Default `cpython` (issue 47 items 1, 2, 7). */
  literals: LiteralMode;
  /** Default `numpy` (issue 47 item 4). */
  summation: SummationMode;
  /** Default `source` (issue 47 item 6). */
  by_source: BySourceMode;
  /** Default `pandas` (issue 47 items 3, 5). */
  answers_csv: AnswersCsvMode;
}

/** LongTA's defaults (the published numbers use these). */
export const DEFAULT_LONGDA_OPTIONS: Readonly<LongdaOptions> = Object.freeze({
  tolerance: 0.05,
  tolerance_floor: 1.0,
  list_scoring: 'partial',
  coverage: 'comparable',
  infinite_mae: 'inf',
  literals: 'cpython',
  summation: 'numpy',
  by_source: 'source',
  answers_csv: 'pandas',
});

/**
 * Builds LongDA options from `name=value` strings (CLI `--option`), ignoring names of other benchmarks.
 * @param raw option values by name; unknown LongDA-looking names are ignored here (the caller validates the union).
 * @returns complete options (defaults filled in).
 * @throws LoupeInputError naming the option when a value is invalid.
 */
export function longdaOptions(raw: Record<string, string | number | undefined> = {}): LongdaOptions {
  const o: LongdaOptions = { ...DEFAULT_LONGDA_OPTIONS };
  if (raw.tolerance !== undefined) {
    const n = Number(raw.tolerance);
    if (!Number.isFinite(n) || n < 0) {
      throw new LoupeInputError('option tolerance', `must be a number ≥ 0, got '${raw.tolerance}'`);
    }
    o.tolerance = n;
  }
  if (raw.tolerance_floor !== undefined) {
    const n = Number(raw.tolerance_floor);
    if (!Number.isFinite(n) || n < 0) {
      throw new LoupeInputError('option tolerance_floor', `must be a number ≥ 0, got '${raw.tolerance_floor}'`);
    }
    o.tolerance_floor = n;
  }
  if (raw.list_scoring !== undefined) {
    if (raw.list_scoring !== 'partial' && raw.list_scoring !== 'strict') {
      throw new LoupeInputError('option list_scoring', `must be 'partial' or 'strict', got '${raw.list_scoring}'`);
    }
    o.list_scoring = raw.list_scoring;
  }
  if (raw.coverage !== undefined) {
    if (raw.coverage !== 'comparable' && raw.coverage !== 'structural') {
      throw new LoupeInputError('option coverage', `must be 'comparable' or 'structural', got '${raw.coverage}'`);
    }
    o.coverage = raw.coverage;
  }
  if (raw.infinite_mae !== undefined) {
    if (raw.infinite_mae !== 'inf' && raw.infinite_mae !== 'exclude') {
      throw new LoupeInputError('option infinite_mae', `must be 'inf' or 'exclude', got '${raw.infinite_mae}'`);
    }
    o.infinite_mae = raw.infinite_mae;
  }
  const enums: Array<[keyof LongdaOptions, readonly string[]]> = [
    ['literals', ['cpython', 'readable']],
    ['summation', ['numpy', 'left-to-right']],
    ['by_source', ['source', 'survey-source']],
    ['answers_csv', ['pandas', 'text']],
  ];
  for (const [k, allowed] of enums) {
    const v = raw[k];
    if (v === undefined) continue;
    if (!allowed.includes(String(v))) {
      throw new LoupeInputError(`option ${k}`, `must be ${allowed.map((a) => `'${a}'`).join(' or ')}, got '${v}'`);
    }
    (o as unknown as Record<string, unknown>)[k] = String(v);
  }
  return o;
}

/**
 * A query as the score reads it: LongDA's one query shape (`items.ts`), from a loaded suite (its items) or a results
 * file (whose rows may hold a structure the parser refused). Issue 40: one type and one reader from load to score.
 */
export type { LongdaQuery } from './items.ts';
type ScoredQuery = LongdaQuery<ReadAnswerStructure>;

/**
 * Reads LongDA's `benchmark.csv` through the loader's one reader (`load.ts` `readLongdaCsv`, strict: every row counts,
 * as in LongTA), with q_ids and blocks assigned as LongTA's `main.py` does (group by survey+source in order of first
 * appearance; i = 1-based position inside the block).
 * @param csvPath path of `benchmark.csv`.
 * @returns the queries in file order.
 * @throws LoupeInputError naming the file (missing file or column, malformed record) or the row (empty survey/source).
 * Source: spec §2.2.
 */
export function loadLongdaGroundTruth(csvPath: string): ScoredQuery[] {
  let text: string;
  try {
    text = readFileSync(csvPath, 'utf8');
  } catch (e) {
    throw new LoupeInputError(csvPath, 'cannot read the LongDA benchmark file', { cause: e });
  }
  return parseLongdaGroundTruth(text, csvPath);
}

/**
 * The text of `benchmark.csv` read as {@link loadLongdaGroundTruth} reads the file.
 * @param text CSV text; `name` is used in error messages.
 * @returns the queries in file order.
 * @throws LoupeInputError naming `name` or `name:row`.
 */
export function parseLongdaGroundTruth(text: string, name = 'benchmark.csv'): ScoredQuery[] {
  return readLongdaCsv(name, { text, strict: true }).queries;
}

/**
 * The answers of a LongTA results file, row by row. As a Map it gives the last non-empty `my_answer` of each q_id
 * (Loupe 0.1's view); {@link scoreLongda} scores each row on its own (LongTA scores rows, not q_ids, issue 47
 * item 6), reading the cells as text or as `pandas.read_csv` typed them (option `answers_csv`).
 */
export class LongtaFileAnswers extends Map<string, string> {
  /** Each row's `my_answer` text, trimmed (undefined when empty), in file order. */
  readonly textRows: Array<string | undefined> = [];
  /** Each row's `my_answer` and `answer` cells as pandas 1.5.3's `read_csv` gives them (NaN: missing). */
  readonly pandasRows: Array<{ answer: PandasCell | undefined; truth: PandasCell | undefined }> = [];
  /** Whether the rows' ground truth is the file's own `answer` column (not a separate benchmark.csv). */
  ownTruth = true;
}

/**
 * Reads a LongTA results file (`answers_progress.csv` or `evaluated_answers.csv`: the benchmark
 * columns plus `my_answer` and `q_id`), as `evaluate_results.py --csv` does.
 * @param text CSV text; `name` for error messages; `truth` optional ground truth (e.g. the full
 *   benchmark.csv) that replaces the file's own `answer` column, matched by q_id.
 * @returns the queries (the file's rows, in order: the denominator) and the answers row by row
 *   ({@link LongtaFileAnswers}; as a Map, raw answers by q_id).
 * @throws LoupeInputError naming the file (no `my_answer` column) or `file:row` (q_id absent from `truth`).
 * Source: spec §2.3 (outputs), §2.4 (`evaluate_results.py`: `pd.read_csv`, pandas 1.5.3 defaults).
 */
export function parseLongtaAnswers(
  text: string,
  name = 'answers_progress.csv',
  truth?: readonly ScoredQuery[],
): { queries: ScoredQuery[]; answers: LongtaFileAnswers } {
  const { queries, records } = readLongdaCsv(name, { text, strict: true });
  if (records[0] && !('my_answer' in records[0])) {
    throw new LoupeInputError(name, "missing column 'my_answer' (not a LongTA results file)");
  }
  const frame = readCsvAsPandas(text, name);
  const byId = truth ? new Map(truth.map((q) => [q.longdaId, q])) : undefined;
  const answers = new LongtaFileAnswers();
  answers.ownTruth = !byId;
  const out = queries.map((q, i) => {
    const r = records[i]!;
    const qId = (r.q_id ?? '').trim() || q.longdaId;
    const a = (r.my_answer ?? '').trim();
    if (a) answers.set(qId, a);
    answers.textRows.push(a || undefined);
    const pr = frame.rows[i];
    answers.pandasRows.push({ answer: pr?.my_answer, truth: pr?.answer });
    if (!byId) return { ...q, longdaId: qId };
    const t = byId.get(qId);
    if (!t) throw new LoupeInputError(`${name}:${q.row}`, `q_id '${qId}' is not in the ground truth`);
    return t;
  });
  return { queries: out, answers };
}

const isNum = (x: LongdaValue | undefined): x is number => typeof x === 'number';

/** Result of comparing one answer with its ground truth. */
export interface LongdaComparison {
  /** LongTA coverage: 1 when the answer is comparable with the ground truth. */
  comparable: 0 | 1;
  /** Match with partial credit for lists (mean of hits), in [0, 1]. */
  matchPartial: number;
  /** Match requiring every list element within tolerance, 0 or 1. */
  matchStrict: 0 | 1;
  /** Mean absolute error over compared elements (undefined when not comparable). */
  absErr?: number;
  /** Mean percentage error over elements with |g| > 1e-10 (0–100 scale). */
  pctErr?: number;
  /** Per-element 0/1 hits (null for skipped pairs); scalars give one element. */
  hits?: Array<0 | 1 | null>;
}

const EPSILON = 1e-10;

/**
 * Compares a normalised answer with a normalised ground truth, element-wise with tolerance
 * τ = max(ε·|g|, floor).
 * @param a the agent's normalised answer; `g` the normalised ground truth; `opts` tolerance options.
 * @returns comparability, partial and strict match, errors and element hits.
 * Source: spec §2.4, LongTA `metric.compute_row_metrics` / `_compare_values` (partial) and the
 * paper's element-wise rule (strict; a skipped non-numeric pair fails strict).
 */
export function compareLongdaValues(
  a: LongdaValue,
  g: LongdaValue,
  opts: Pick<LongdaOptions, 'tolerance' | 'tolerance_floor'> &
    Partial<Pick<LongdaOptions, 'summation'>> = DEFAULT_LONGDA_OPTIONS,
): LongdaComparison {
  const numpy = (opts.summation ?? 'numpy') === 'numpy';
  const none: LongdaComparison = { comparable: 0, matchPartial: 0, matchStrict: 0 };
  if (a === null || g === null) return none;
  if (isNum(a) && Number.isNaN(a)) return none;
  if (isNum(g) && Number.isNaN(g)) return none;
  const tau = (x: number) => Math.max(opts.tolerance * Math.abs(x), opts.tolerance_floor);
  if (isNum(a) && isNum(g)) {
    const err = Math.abs(a - g);
    const hit: 0 | 1 = err <= tau(g) ? 1 : 0;
    const r: LongdaComparison = { comparable: 1, matchPartial: hit, matchStrict: hit, absErr: err, hits: [hit] };
    if (Math.abs(g) > EPSILON) r.pctErr = (err / Math.abs(g)) * 100;
    return r;
  }
  if (Array.isArray(a) && Array.isArray(g)) {
    if (a.length !== g.length) return none;
    const hits: Array<0 | 1 | null> = [];
    let nHit = 0;
    let n = 0;
    let errSum = 0;
    let pctSum = 0;
    let pctN = 0;
    const errs: number[] = [];
    const pcts: number[] = [];
    for (let i = 0; i < g.length; i++) {
      const ai = a[i];
      const gi = g[i];
      if (!isNum(ai) || !isNum(gi) || Number.isNaN(ai) || Number.isNaN(gi)) {
        hits.push(null);
        continue;
      }
      const err = Math.abs(ai - gi);
      const hit: 0 | 1 = err <= tau(gi) ? 1 : 0;
      hits.push(hit);
      nHit += hit;
      n++;
      errSum += err;
      errs.push(err);
      if (Math.abs(gi) > EPSILON) {
        const pe = (err / Math.abs(gi)) * 100;
        pctSum += pe;
        pcts.push(pe);
        pctN++;
      }
    }
    if (n === 0) return none;
    // LongTA metric.py: float(np.mean(abs_errors)), np.mean(pct_errors), np.mean(matches) — numpy's pairwise sum
    const r: LongdaComparison = {
      comparable: 1,
      matchPartial: numpy ? numpyMean(hits.filter((h): h is 0 | 1 => h !== null)) : nHit / n,
      matchStrict: nHit === g.length ? 1 : 0,
      absErr: numpy ? numpyMean(errs) : errSum / n,
      hits,
    };
    if (pctN > 0) r.pctErr = numpy ? numpyMean(pcts) : pctSum / pctN;
    return r;
  }
  return none;
}

/**
 * Paper coverage: the answer syntactically conforms to `answer_structure` — a finite number for
 * `single_number`, a list of exactly k finite numbers for a k-label list.
 * @param a the normalised answer; `structure` the parsed structure or the `answer_structure` cell (parsed by
 *   `parse.ts` `parseAnswerStructure`, the one parser of LongDA answer structures).
 * @returns 1 when it conforms, else 0 (also 0 for a structure the parser refuses: unknown syntax, an empty,
 *   nested or repeated label list).
 * Source: spec §2.4 "Paper definitions", §5.3 row 2.
 */
export function structuralCoverage(a: LongdaValue, structure: string | ReadAnswerStructure): 0 | 1 {
  let st: ReadAnswerStructure;
  if (typeof structure === 'string') {
    const p = parseAnswerStructure(structure);
    if (!p.ok) return 0;
    st = p.value;
  } else st = structure;
  if (st.kind === 'invalid') return 0;
  if (a === null) return 0;
  if (st.kind === 'single_number') return isNum(a) && Number.isFinite(a) ? 1 : 0;
  if (!Array.isArray(a) || a.length !== st.length) return 0;
  return a.every((x) => isNum(x) && Number.isFinite(x)) ? 1 : 0;
}

/** One scored query. */
export interface LongdaRowScore {
  qId: string;
  blockId: string;
  survey: string;
  source: string;
  internalId: number;
  answerStructure: string;
  /** Raw answer as recorded (null when the agent gave none). */
  rawAnswer: string | null;
  given: LongdaValue;
  expected: LongdaValue;
  /** Coverage under the selected definition (0/1). */
  coverage: 0 | 1;
  coverageComparable: 0 | 1;
  coverageStructural: 0 | 1;
  /** Match under the selected list scoring, in [0, 1]. */
  match: number;
  matchPartial: number;
  matchStrict: 0 | 1;
  absErr?: number;
  pctErr?: number;
  hits?: Array<0 | 1 | null>;
}

/** Rates over a set of queries; all rates are fractions in [0, 1] (LongTA prints them ×100). */
export interface LongdaRates {
  /** Number of ground-truth queries (the denominator, answered or not). */
  n: number;
  /** Queries with any non-null normalised answer. */
  answered: number;
  coverage: number;
  coverageComparable: number;
  coverageStructural: number;
  match: number;
  matchPartial: number;
  matchStrict: number;
  /** Mean absolute error over comparable rows (null if none; `Infinity` when a row's error is, under `infinite_mae = inf`). */
  mae: number | null;
  /** Mean percentage error (0–100) over comparable rows having one (null if none). */
  mpe: number | null;
}

/** A LongDA score of one run. */
export interface LongdaScore extends LongdaRates {
  benchmark: 'longda';
  options: LongdaOptions;
  /** Per publication (block), in ground-truth order. */
  bySource: Array<LongdaRates & { blockId: string; survey: string; source: string }>;
  /** Scalar (`single_number`) vs list queries (LongDA's scalar-vs-list figure). */
  byType: { scalar: LongdaRates; list: LongdaRates };
  rows: LongdaRowScore[];
  /** Answers recorded under q_ids absent from the scored ground truth (LongTA ignores them silently). */
  unknownQIds: string[];
  /** Rows an official-code option changed, by option (`infinite_mae`: rows whose infinite error entered the MAE; `official_errors`: rows left out, see `officialErrors`). */
  changedBy: Record<string, number>;
  /**
   * Rows where the official code raises and its whole evaluation aborts (an integer literal past the double range:
   * OverflowError, issue 47 item 7). Loupe leaves these rows out of every figure (which are then the official
   * figures of the other rows) and names them here. Empty under `literals=readable`.
   */
  officialErrors: Array<{ qId: string; row: number; column: 'answer' | 'my_answer'; error: string }>;
}

/** A recorded answer: raw text (as the `answer` tool stored it) or an already parsed value. */
export type LongdaAnswerInput = string | number | bigint | boolean | null | undefined | unknown[];

/**
 * Scores a run's answers against LongDA ground truth.
 * @param queries the ground truth (all of it, or the blocks the run covered: the denominator is
 *   `queries.length`, as in LongTA where unanswered rows count).
 * @param answers raw answers by q_id (Map or record).
 * @param options see {@link LongdaOptions}; missing values take LongTA's defaults.
 * @returns rates (fractions in [0, 1]), per-source rates, per-query rows, options used.
 * Source: spec §2.4 (`metric.compute_row_metrics`, `generate_evaluation_summary`), §2.7, §5.3.
 */
export function scoreLongda(
  queries: readonly ScoredQuery[],
  answers: ReadonlyMap<string, LongdaAnswerInput> | Readonly<Record<string, LongdaAnswerInput>>,
  options: Partial<LongdaOptions> = {},
): LongdaScore {
  const opts: LongdaOptions = { ...DEFAULT_LONGDA_OPTIONS, ...options };
  const get =
    answers instanceof Map
      ? (k: string) => answers.get(k)
      : (k: string) => (answers as Record<string, LongdaAnswerInput>)[k];
  // a results file is scored row by row (LongTA evaluate_answers iterates rows; a repeated q_id is its own row)
  const file = answers instanceof LongtaFileAnswers && answers.textRows.length === queries.length ? answers : undefined;
  const gtCache = new Map<string, LongdaValue>();
  const rows: LongdaRowScore[] = [];
  const officialErrors: LongdaScore['officialErrors'] = [];
  const known = new Set<string>();
  queries.forEach((q, idx) => {
    const qId = q.longdaId;
    known.add(qId);
    let raw: LongdaAnswerInput = file
      ? opts.answers_csv === 'pandas'
        ? file.pandasRows[idx]!.answer
        : file.textRows[idx]
      : get(qId);
    let truthRaw: unknown = q.answerText;
    if (file && file.ownTruth && opts.answers_csv === 'pandas') truthRaw = file.pandasRows[idx]!.truth;
    if (typeof raw === 'number' && Number.isNaN(raw)) raw = null; // pandas' NaN: no answer (coverage 0)
    let expected: LongdaValue | undefined;
    let given: LongdaValue;
    let column: 'answer' | 'my_answer' = 'answer';
    try {
      if (typeof truthRaw === 'string') {
        const key = `${opts.literals}\u0000${truthRaw}`;
        expected = gtCache.get(key);
        if (expected === undefined) {
          expected = normalizeAnswerValue(truthRaw, opts.literals);
          gtCache.set(key, expected);
        }
      } else expected = normalizeAnswerValue(truthRaw, opts.literals);
      column = 'my_answer';
      given = normalizeAnswerValue(raw, opts.literals);
    } catch (e) {
      if (!(e instanceof LongdaOfficialError)) throw e;
      officialErrors.push({ qId, row: idx + 2, column, error: e.pythonError });
      return;
    }
    const cmp = compareLongdaValues(given, expected, opts);
    const coverageStructural = structuralCoverage(given, q.answerStructure);
    const row: LongdaRowScore = {
      qId,
      blockId: `${q.survey}_${q.source}`,
      survey: q.survey,
      source: q.source,
      internalId: q.internalId,
      answerStructure: answerStructureText(q.answerStructure),
      rawAnswer: rawAnswerText(raw),
      given,
      expected,
      coverage: opts.coverage === 'structural' ? coverageStructural : cmp.comparable,
      coverageComparable: cmp.comparable,
      coverageStructural,
      match: opts.list_scoring === 'strict' ? cmp.matchStrict : cmp.matchPartial,
      matchPartial: cmp.matchPartial,
      matchStrict: cmp.matchStrict,
    };
    if (cmp.absErr !== undefined) row.absErr = cmp.absErr;
    if (cmp.pctErr !== undefined) row.pctErr = cmp.pctErr;
    if (cmp.hits) row.hits = cmp.hits;
    rows.push(row);
  });
  const unknownQIds: string[] = [];
  const keys = answers instanceof Map ? [...answers.keys()] : Object.keys(answers);
  for (const k of keys) if (!known.has(k)) unknownQIds.push(k);

  const bySource = longdaBySource(rows, opts);
  const byType = {
    scalar: longdaRates(
      rows.filter((r) => r.answerStructure.trim() === 'single_number'),
      opts,
    ),
    list: longdaRates(
      rows.filter((r) => r.answerStructure.trim() !== 'single_number'),
      opts,
    ),
  };
  const infinite =
    opts.infinite_mae === 'inf'
      ? rows.filter(
          (r) =>
            r.coverageComparable && r.absErr !== undefined && !Number.isFinite(r.absErr) && !Number.isNaN(r.absErr),
        ).length
      : 0;
  const changedBy: Record<string, number> = {};
  if (infinite) changedBy.infinite_mae = infinite;
  if (officialErrors.length) changedBy.official_errors = officialErrors.length;
  return {
    benchmark: 'longda',
    options: opts,
    ...longdaRates(rows, opts),
    bySource,
    byType,
    rows,
    unknownQIds,
    changedBy,
    officialErrors,
  };
}

/** The recorded answer as text: strings as given, numbers as the results export writes them (`12.0`, `[1.5, 2.0]`). */
function rawAnswerText(raw: LongdaAnswerInput): string | null {
  if (raw === null || raw === undefined) return null;
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'boolean') return raw ? 'True' : 'False';
  if (typeof raw === 'bigint') return String(raw);
  if (typeof raw === 'number' || (Array.isArray(raw) && raw.every((x) => typeof x === 'number'))) {
    return pyNumberText(raw as number | number[]);
  }
  return JSON.stringify(raw);
}

/**
 * Per-source rates: by the `source` column alone, sorted as pandas' `groupby` sorts string keys (LongTA
 * `metric.py` `df.groupby("source")`), or by survey and source in ground-truth order (one publication, one block).
 * @param rows scored rows; `opts.by_source` the grouping. @returns one entry per group.
 */
export function longdaBySource(
  rows: readonly LongdaRowScore[],
  opts: Pick<LongdaOptions, 'by_source' | 'infinite_mae'> & Partial<Pick<LongdaOptions, 'summation'>>,
): LongdaScore['bySource'] {
  const groups = new Map<string, LongdaRowScore[]>();
  for (const r of rows) {
    const key = opts.by_source === 'source' ? r.source : r.blockId;
    let b = groups.get(key);
    if (!b) groups.set(key, (b = []));
    b.push(r);
  }
  const entries = [...groups.entries()];
  // Python compares str by code point; JS's default sort compares UTF-16 units
  if (opts.by_source === 'source') {
    entries.sort(([a], [b]) => {
      const x = [...a].map((c) => c.codePointAt(0)!);
      const y = [...b].map((c) => c.codePointAt(0)!);
      for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
      return x.length - y.length;
    });
  }
  return entries.map(([key, rs]) => {
    const surveys = [...new Set(rs.map((r) => r.survey))];
    return { blockId: key, survey: surveys.join('+'), source: rs[0]!.source, ...longdaRates(rs, opts) };
  });
}

/** LongDA's tolerance-sensitivity ε grid (paper figure script). */
export const LONGDA_TOLERANCE_GRID = [0.01, 0.02, 0.03, 0.05, 0.07, 0.1, 0.15, 0.2] as const;

/**
 * Re-scores the same answers at several ε (floor and list scoring kept), as LongDA's tolerance
 * sensitivity figure does.
 * @param queries ground truth; `answers` raw answers by q_id; `eps` grid (default {@link LONGDA_TOLERANCE_GRID}); `options` other options.
 * @returns one point per ε: match and coverage (fractions).
 * Source: spec §2.4 "Other figure procedures" (tolerance sensitivity).
 */
export function longdaToleranceSensitivity(
  queries: readonly ScoredQuery[],
  answers: ReadonlyMap<string, LongdaAnswerInput> | Readonly<Record<string, LongdaAnswerInput>>,
  eps: readonly number[] = LONGDA_TOLERANCE_GRID,
  options: Partial<LongdaOptions> = {},
): Array<{ tolerance: number; match: number; coverage: number }> {
  return eps.map((e) => {
    const s = scoreLongda(queries, answers, { ...options, tolerance: e });
    return { tolerance: e, match: s.match, coverage: s.coverage };
  });
}

/**
 * Aggregates scored rows into rates (fractions in [0, 1]); n counts every row.
 * @param rows scored rows; `o.infinite_mae` (default `inf`, LongTA) whether a non-finite error enters MAE / MPE.
 * @returns the rates; mae/mpe are null when no row is comparable. An empty input gives zeros.
 * Source: spec §2.4 `generate_evaluation_summary` (LongTA `metric.py`: `covered_df["abs_error"].mean()`).
 */
export function longdaRates(
  rows: readonly LongdaRowScore[],
  o: Pick<LongdaOptions, 'infinite_mae'> & Partial<Pick<LongdaOptions, 'summation'>> = DEFAULT_LONGDA_OPTIONS,
): LongdaRates {
  const numpy = (o.summation ?? 'numpy') === 'numpy';
  // pandas' Series.mean skips NaN (an inf − inf error); left-to-right keeps Loupe 0.1's arithmetic
  const keep = (x: number) => (numpy && Number.isNaN(x) ? false : o.infinite_mae === 'inf' || Number.isFinite(x));
  const n = rows.length;
  let answered = 0,
    cov = 0,
    covC = 0,
    covS = 0,
    m = 0,
    mP = 0,
    mS = 0,
    errSum = 0,
    errN = 0,
    pctSum = 0,
    pctN = 0;
  const ms: number[] = [],
    mPs: number[] = [],
    errs: number[] = [],
    pcts: number[] = [];
  for (const r of rows) {
    if (r.given !== null) answered++;
    cov += r.coverage;
    covC += r.coverageComparable;
    covS += r.coverageStructural;
    m += r.match;
    mP += r.matchPartial;
    mS += r.matchStrict;
    ms.push(r.match);
    mPs.push(r.matchPartial);
    if (r.coverageComparable && r.absErr !== undefined && keep(r.absErr)) {
      errSum += r.absErr;
      errs.push(r.absErr);
      errN++;
    }
    if (r.coverageComparable && r.pctErr !== undefined && keep(r.pctErr)) {
      pctSum += r.pctErr;
      pcts.push(r.pctErr);
      pctN++;
    }
  }
  const d = n || 1;
  if (numpy) {
    // metric.py: df["match"].sum() over a float64 column (numpy pairwise); abs_error / pct_error are object columns
    // (`df["abs_error"] = None`), whose mean numpy sums left to right; coverage is int64 (exact)
    m = numpySum(ms);
    mP = numpySum(mPs);
    errSum = sequentialSum(errs);
    pctSum = sequentialSum(pcts);
  }
  return {
    n,
    answered,
    coverage: cov / d,
    coverageComparable: covC / d,
    coverageStructural: covS / d,
    match: m / d,
    matchPartial: mP / d,
    matchStrict: mS / d,
    mae: errN ? errSum / errN : null,
    mpe: pctN ? pctSum / pctN : null,
  };
}

/** Accounting of one block (one publication) of a LongDA run. */
export interface LongdaBlockUsage {
  blockId: string;
  inputTokens: number;
  outputTokens: number;
  /** Agent steps in the block (LongTA: memory steps − 2). */
  steps: number;
  /** Wall time of the block, seconds. */
  wallSeconds: number;
  /** Tool calls by tool name within the block. */
  toolCalls?: Readonly<Record<string, number>>;
}

/** Efficiency figures of a run (paper Table 2 columns). */
export interface LongdaEfficiency {
  nBlocks: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  totalSteps: number;
  /** total steps / blocks run ("Avg. Steps"). */
  avgStepsPerBlock: number;
  /** Whole-run wall time, seconds (the sum of blocks unless `runWallSeconds` is given). */
  wallSeconds: number;
  wallHours: number;
  /** Tool calls summed over blocks (paper Table 3). */
  toolCalls: Record<string, number>;
}

/**
 * Sums tokens, steps, wall time and tool calls over a run's blocks.
 * @param blocks per-block usage; `runWallSeconds` the measured wall time of the whole run when known
 *   (LongTA's `total_hours` is the whole run, which may exceed the sum of blocks).
 * @returns efficiency figures; avgStepsPerBlock is 0 for no blocks.
 * @throws LoupeInputError naming the block when a count is negative or not finite.
 * Source: spec §2.3 "Token and step accounting", §2.4 "Efficiency metrics".
 */
export function longdaEfficiency(blocks: readonly LongdaBlockUsage[], runWallSeconds?: number): LongdaEfficiency {
  let inT = 0,
    outT = 0,
    steps = 0,
    wall = 0;
  const toolCalls: Record<string, number> = {};
  for (const b of blocks) {
    for (const [k, v] of [
      ['inputTokens', b.inputTokens],
      ['outputTokens', b.outputTokens],
      ['steps', b.steps],
      ['wallSeconds', b.wallSeconds],
    ] as const) {
      if (!Number.isFinite(v) || v < 0) {
        throw new LoupeInputError(`block ${b.blockId}`, `${k} must be a finite number ≥ 0, got ${v}`);
      }
    }
    inT += b.inputTokens;
    outT += b.outputTokens;
    steps += b.steps;
    wall += b.wallSeconds;
    for (const [t, c] of Object.entries(b.toolCalls ?? {})) toolCalls[t] = (toolCalls[t] ?? 0) + c;
  }
  const wallSeconds = runWallSeconds ?? wall;
  return {
    nBlocks: blocks.length,
    inputTokens: inT,
    outputTokens: outT,
    totalTokens: inT + outT,
    totalSteps: steps,
    avgStepsPerBlock: blocks.length ? steps / blocks.length : 0,
    wallSeconds,
    wallHours: wallSeconds / 3600,
    toolCalls,
  };
}

/** LongTA's tools, in the heatmap's row order (paper Figure 8). */
export const LONGDA_TOOLS = ['prompt', 'notes', 'read_doc', 'search_doc', 'retriever', 'answer', 'save_code'] as const;

/**
 * Counts tool calls in one code action the way LongDA's figure script does: occurrences of the
 * substring `name(` for each tool (so `build_prompt(` also counts as `prompt`, as in the original).
 * @param code the code the agent ran in one step; `tools` names to look for.
 * @returns tool names, one entry per occurrence, grouped in `tools` order.
 * Source: spec §2.4 "Tool-usage heatmap" step 1 (`tool_usage_analysis.py`).
 */
export function countToolCallsInCode(code: string, tools: readonly string[] = LONGDA_TOOLS): string[] {
  const out: string[] = [];
  for (const t of tools) {
    const needle = `${t}(`;
    let at = code.indexOf(needle);
    while (at >= 0) {
      out.push(t);
      at = code.indexOf(needle, at + needle.length);
    }
  }
  return out;
}

/** Tool-usage heatmap: `matrix[tool][bin]`, each non-empty bin column summing to 1. */
export type { ToolHeatmap } from '../types.ts';

/**
 * Builds LongDA Figure 8's heatmap data. Each trajectory is its list of steps after the task step
 * (step i is 1-based), each step the tool names it called. max_step = largest i calling one of
 * `tools` (1 if none; other names such as `final_answer` do not count, as in the figure script); bin = min(⌊(i / max_step)·bins⌋, bins−1); counts are summed over trajectories and
 * each bin column normalised to sum 1.
 * @param trajectories one entry per block trajectory: `steps[i-1]` = tool names called in step i.
 * @param opts `tools` (row order; default {@link LONGDA_TOOLS}), `bins` (default 20).
 * @returns counts and the normalised matrix.
 * @throws LoupeInputError when `bins` is not a positive integer.
 * Source: spec §2.4 "Tool-usage heatmap" (`paper_figures/tool_usage_analysis.py`, bd03018).
 */
export function toolUsageHeatmap(
  trajectories: ReadonlyArray<ReadonlyArray<readonly string[]>>,
  opts: { tools?: readonly string[]; bins?: number } = {},
): ToolHeatmap {
  return binnedToolHeatmap(trajectories, {
    tools: opts.tools ?? LONGDA_TOOLS,
    ...(opts.bins !== undefined ? { bins: opts.bins } : {}),
  });
}
