/**
 * `pandas.read_csv(path)` with its defaults, as far as the values a scorer sees: the default NA tokens, each
 * column's dtype inferred in pandas' order (int64, then uint64 on overflow, float64, bool, else object/str), and the
 * default float parser `precise_xstrtod` (not correctly rounded) for float64 columns (issue 47 items 3 and 5).
 * Sources: pandas 1.5.3 (commit 2e218d10984e9919f0296931d92ea851c6a6faf5, Debian's `python3-pandas 1.5.3+dfsg-2`):
 * `pandas/_libs/parsers.pyx` (`STR_NA_VALUES`, `_convert_tokens`, `_convert_with_dtype`, `_try_int64`,
 * `_try_uint64`, `_try_double_nogil` with its `inf`/`Infinity` words, `_try_bool_flex_nogil`, `_maybe_upcast`) and
 * `pandas/_libs/src/parser/tokenizer.c` (`precise_xstrtod`, `str_to_int64`, `str_to_uint64`, `to_boolean`).
 */
import { parse as parseCsv } from 'csv-parse/sync';
import { LoupeInputError } from '../util/errors.ts';

/** pandas 1.5.3's default NA tokens (`parsers.pyx` `STR_NA_VALUES`; `None` joined only in pandas 2.0). */
export const PANDAS_NA_VALUES: ReadonlySet<string> = new Set([
  '-1.#IND',
  '1.#QNAN',
  '1.#IND',
  '-1.#QNAN',
  '#N/A N/A',
  '#N/A',
  'N/A',
  'n/a',
  'NA',
  '<NA>',
  '#NA',
  'NULL',
  'null',
  'NaN',
  '-NaN',
  'nan',
  '-nan',
  '',
]);

/**
 * A cell as pandas hands it to Python code: a float (NaN for a missing value), an integer (from an int64/uint64
 * column, exact), a bool (bool column), or the raw text (object column).
 */
export type PandasCell = number | bigint | boolean | string;

/** The dtype pandas inferred for a column. */
export type PandasDtype = 'int64' | 'uint64' | 'float64' | 'bool' | 'object';

const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13);
const isDigit = (c: number) => c >= 48 && c <= 57;

const E: number[] = Array.from({ length: 309 }, (_, i) => Number(`1e${i}`));

/**
 * pandas' default float parser `precise_xstrtod` (decimal '.', sci 'e', no thousands separator, trailing spaces
 * skipped): at most 17 significant digits accumulated in a double, then one multiplication or division by a power of
 * ten — not correctly rounded.
 * @param s the token. @returns the value, the index where parsing stopped and pandas' error flag (ERANGE → true).
 * Source: pandas 1.5.3 `pandas/_libs/src/parser/tokenizer.c` `precise_xstrtod`.
 */
export function preciseXstrtod(s: string): { value: number; end: number; error: boolean } {
  let p = 0;
  const c = (i: number) => (i < s.length ? s.charCodeAt(i) : 0);
  const maxDigits = 17;
  while (isSpace(c(p))) p++;
  let negative = false;
  if (c(p) === 45) {
    negative = true;
    p++;
  } else if (c(p) === 43) p++;
  let number = 0;
  let exponent = 0;
  let numDigits = 0;
  let numDecimals = 0;
  while (isDigit(c(p))) {
    if (numDigits < maxDigits) {
      number = number * 10 + (c(p) - 48);
      numDigits++;
    } else exponent++;
    p++;
  }
  if (c(p) === 46) {
    p++;
    while (numDigits < maxDigits && isDigit(c(p))) {
      number = number * 10 + (c(p) - 48);
      p++;
      numDigits++;
      numDecimals++;
    }
    if (numDigits >= maxDigits) while (isDigit(c(p))) p++;
    exponent -= numDecimals;
  }
  if (numDigits === 0) return { value: 0, end: p, error: true };
  if (negative) number = -number;
  if (c(p) === 69 || c(p) === 101) {
    let neg = false;
    p++;
    if (c(p) === 45) {
      neg = true;
      p++;
    } else if (c(p) === 43) p++;
    let nd = 0;
    let n = 0;
    while (nd < maxDigits && isDigit(c(p))) {
      n = (Math.imul(n, 10) + (c(p) - 48)) | 0; // C int arithmetic
      nd++;
      p++;
    }
    exponent = neg ? (exponent - n) | 0 : (exponent + n) | 0;
    if (nd === 0) p--;
  }
  if (exponent > 308) return { value: Infinity, end: p, error: true };
  if (exponent > 0) number *= E[exponent]!;
  else if (exponent < -308) {
    if (exponent < -616) number = 0;
    else {
      number /= E[-308 - exponent]!;
      number /= E[308]!;
    }
  } else number /= E[-exponent]!;
  const error = number === Infinity || number === -Infinity;
  while (isSpace(c(p))) p++;
  return { value: number, end: p, error };
}

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);
const UINT64_MAX = (1n << 64n) - 1n;

type IntParse = { ok: true; value: bigint } | { ok: false; error: 'no-digits' | 'invalid' | 'overflow' };

/** `str_to_int64` / `str_to_uint64`: spaces, a sign, digits (checked for overflow as read), spaces, nothing else. */
function strToInt(s: string, min: bigint, max: bigint): IntParse {
  let p = 0;
  while (p < s.length && isSpace(s.charCodeAt(p))) p++;
  let neg = false;
  if (s[p] === '-') {
    neg = true;
    p++;
  } else if (s[p] === '+') p++;
  if (!isDigit(s.charCodeAt(p))) return { ok: false, error: 'no-digits' };
  let v = 0n;
  while (p < s.length && isDigit(s.charCodeAt(p))) {
    v = v * 10n + BigInt(s.charCodeAt(p) - 48);
    if ((neg ? -v : v) > max || (neg ? -v : v) < min) return { ok: false, error: 'overflow' };
    p++;
  }
  while (p < s.length && isSpace(s.charCodeAt(p))) p++;
  if (p < s.length) return { ok: false, error: 'invalid' };
  return { ok: true, value: neg ? -v : v };
}

const INF_WORDS = new Set(['inf', '+inf', 'infinity', '+infinity']);
const NEG_INF_WORDS = new Set(['-inf', '-infinity']);
const TRUE_WORDS = new Set(['True', 'TRUE', 'true']);
const FALSE_WORDS = new Set(['False', 'FALSE', 'false']);

class Overflow extends Error {}
class Conflict extends Error {}

/**
 * Converts one column's tokens as pandas' C parser does with default options.
 * @param tokens the column's raw fields in row order. @returns the dtype and one {@link PandasCell} per row.
 * Source: pandas 1.5.3 `parsers.pyx` `TextReader._convert_tokens` (order int64 → float64 → bool → object; int64
 * overflow → uint64; a uint64 conflict with NA or negative values → object without NA filtering).
 */
export function convertPandasColumn(tokens: readonly string[]): { dtype: PandasDtype; cells: PandasCell[] } {
  const isNa = (t: string) => PANDAS_NA_VALUES.has(t);
  const asObject = (naFilter: boolean): { dtype: PandasDtype; cells: PandasCell[] } => ({
    dtype: 'object',
    cells: tokens.map((t) => (naFilter && isNa(t) ? NaN : t)),
  });
  try {
    // int64 (an overflow switches to uint64)
    const ints: Array<bigint | null> = [];
    let failed = false;
    let overflow = false;
    for (const t of tokens) {
      if (isNa(t)) {
        ints.push(null);
        continue;
      }
      const r = strToInt(t, INT64_MIN, INT64_MAX);
      if (!r.ok) {
        if (r.error === 'overflow') overflow = true;
        else failed = true;
        break;
      }
      ints.push(r.value);
    }
    if (overflow) {
      const u = tryUint64(tokens, isNa);
      if (u) return { dtype: 'uint64', cells: u.map((v) => v) };
    } else if (!failed) {
      if (ints.some((v) => v === null)) {
        return { dtype: 'float64', cells: ints.map((v) => (v === null ? NaN : Number(v))) };
      }
      return { dtype: 'int64', cells: ints as bigint[] };
    }
  } catch (e) {
    if (e instanceof Overflow) return asObject(true);
    if (e instanceof Conflict) return asObject(false);
    throw e;
  }
  // float64
  const floats: number[] = [];
  let ok = true;
  for (const t of tokens) {
    if (isNa(t)) {
      floats.push(NaN);
      continue;
    }
    const r = preciseXstrtod(t);
    if (r.error || r.end === 0 || r.end < t.length) {
      const w = t.toLowerCase();
      if (INF_WORDS.has(w)) floats.push(Infinity);
      else if (NEG_INF_WORDS.has(w)) floats.push(-Infinity);
      else {
        ok = false;
        break;
      }
      continue;
    }
    floats.push(r.value);
  }
  if (ok) return { dtype: 'float64', cells: floats };
  // bool (with NA: an object column of bools and NaN, `_maybe_upcast`)
  const bools: PandasCell[] = [];
  for (const t of tokens) {
    if (isNa(t)) bools.push(NaN);
    else if (TRUE_WORDS.has(t) || t.toUpperCase() === 'TRUE') bools.push(true);
    else if (FALSE_WORDS.has(t) || t.toUpperCase() === 'FALSE') bools.push(false);
    else return asObject(true);
  }
  return { dtype: bools.some((b) => typeof b === 'number') ? 'object' : 'bool', cells: bools };
}

function tryUint64(tokens: readonly string[], isNa: (t: string) => boolean): bigint[] | null {
  let seenSint = false;
  let seenUint = false;
  let seenNull = false;
  const out: bigint[] = [];
  for (const t of tokens) {
    if (isNa(t)) {
      seenNull = true;
      out.push(0n);
      continue;
    }
    let p = 0;
    while (p < t.length && isSpace(t.charCodeAt(p))) p++;
    if (t[p] === '-') {
      seenSint = true;
      out.push(0n);
      continue;
    }
    const r = strToInt(t.slice(p), 0n, UINT64_MAX);
    if (!r.ok) {
      if (r.error === 'overflow') throw new Overflow();
      return null;
    }
    if (r.value > INT64_MAX) seenUint = true;
    out.push(r.value);
  }
  if (seenUint && (seenSint || seenNull)) throw new Conflict();
  if (seenSint) throw new Overflow();
  return out;
}

/** A CSV file read as `pandas.read_csv` reads it: header names, each column's dtype and cells by row. */
export interface PandasFrame {
  columns: string[];
  dtypes: Record<string, PandasDtype>;
  rows: Array<Record<string, PandasCell>>;
}

/**
 * Reads CSV text as `pd.read_csv(path)` with default options (header row, `,` separator, `"` quotes, blank lines
 * skipped, default NA tokens, dtype inference per column).
 * @param text the file's text; `name` names it in errors.
 * @returns the frame. @throws LoupeInputError naming the file when it is not valid CSV.
 * Source: pandas 1.5.3 `pandas/io/parsers/readers.py` `read_csv` defaults; conversions as {@link convertPandasColumn}.
 */
export function readCsvAsPandas(text: string, name: string): PandasFrame {
  let records: string[][];
  try {
    records = parseCsv(text, { skip_empty_lines: true, bom: true, relax_column_count: true }) as string[][];
  } catch (e) {
    throw new LoupeInputError(name, `not valid CSV: ${(e as Error).message}`, { cause: e });
  }
  const header = records[0] ?? [];
  const body = records.slice(1);
  const dtypes: Record<string, PandasDtype> = {};
  const cols = header.map((h, j) => {
    const conv = convertPandasColumn(body.map((r) => r[j] ?? ''));
    dtypes[h] = conv.dtype;
    return conv.cells;
  });
  const rows = body.map((_, i) => {
    const r: Record<string, PandasCell> = {};
    header.forEach((h, j) => {
      r[h] = cols[j]![i]!;
    });
    return r;
  });
  return { columns: header, dtypes, rows };
}
