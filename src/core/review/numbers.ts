/**
 * Numbers as written in a report or printed by a notebook cell, and the rule that says when a cell's value is the
 * source of a written number (issue 16 "See both outputs aligned": every number in the text linked to the notebook
 * cell whose output contains it). Pure functions, no `vscode`, no LLM.
 */
import { LoupeInputError } from '../util/errors.ts';

/** A number found in a text, with its offsets in that text. */
export interface FoundNumber {
  /** Offset of the first character (UTF-16 code units), inclusive. */
  start: number;
  /** Offset after the last character, exclusive. */
  end: number;
  /** As written, sign and `%` / "percent" included (`-1,234.5`, `40.3%`, `12 percent`). */
  raw: string;
  /** The value, thousands separators dropped; for a percent, the number written (`40.3%` → 40.3, not 0.403). */
  value: number;
  /** Digits after the decimal point as written (`12.30` → 2, `1,234` → 0, `1.5e-3` → 4). */
  decimals: number;
  /** Written with `%`, "percent" or "per cent". */
  percent: boolean;
}

/** A written number as {@link numberMatches} reads it. */
export interface WrittenNumber {
  value: number;
  decimals: number;
  /** Written as a percent (default false). */
  percent?: boolean;
}

/** A value printed by a cell as {@link numberMatches} reads it. */
export interface CellNumber {
  value: number;
  /** Printed as a percent (default false). */
  percent?: boolean;
}

const NUM_RE =
  /[-\u2212]?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?(?: ?%| ?percent\b| ?per cent\b)?/g;
const LETTER = /[\p{L}_]/u;

/** Is the character at `i` a letter or underscore (false out of range; ASCII checked without a regular expression)? */
export function isLetterAt(text: string, i: number): boolean {
  const k = text.charCodeAt(i);
  if (Number.isNaN(k)) return false;
  if (k < 128) return (k >= 65 && k <= 90) || (k >= 97 && k <= 122) || k === 95;
  return LETTER.test(String.fromCharCode(k));
}

/**
 * Numbers in a plain text, in order of appearance: optional sign (`-` or `−`), thousands separators (groups of
 * three: `1,234,567`), decimals, exponent (`1.2e-05`, as cells print them), `%` / "percent" / "per cent". Not a
 * number here: one glued to a letter or underscore (`F1`, `v2`, `3rd`, `1990s`, `x_2`), a part of a dotted
 * version (`1.2.3`); a hyphen after a letter, digit or dot is a range or a word break, not a sign (`2017-2018`).
 * @param text any text (a report's prose, a cell's stdout).
 * @returns the numbers with their offsets in `text`; [] when there are none.
 * @example findNumbers('men 39.2% and 1,234 people')  // → raws ['39.2%', '1,234'], values [39.2, 1234]
 */
export function findNumbers(text: string): FoundNumber[] {
  const out: FoundNumber[] = [];
  scanNumbers(text, (start, end, value, decimals, percent) => {
    out.push({ start, end, raw: text.slice(start, end), value, decimals, percent });
  });
  return out;
}

/** The numbers of {@link findNumbers}, handed to `found` without building objects (cell outputs are scanned this way). */
function scanNumbers(
  text: string,
  found: (start: number, end: number, value: number, decimals: number, percent: boolean) => void,
): void {
  NUM_RE.lastIndex = 0;
  for (let m = NUM_RE.exec(text); m; m = NUM_RE.exec(text)) {
    let raw = m[0];
    let start = m.index;
    const c0 = raw.charCodeAt(0);
    if (
      (c0 === 45 || c0 === 0x2212) &&
      start > 0 &&
      (isLetterAt(text, start - 1) || isDigit(text, start - 1) || text.charCodeAt(start - 1) === 46)
    ) {
      raw = raw.slice(1);
      start++;
    }
    const end = start + raw.length;
    const last = raw.charCodeAt(raw.length - 1);
    const pm = last === 37 || last === 116 ? /(?: ?%| ?percent| ?per cent)$/.exec(raw) : null; // '%', 't'
    const percent = pm !== null;
    if (
      isLetterAt(text, start - 1) ||
      (text.charCodeAt(start - 1) === 46 && isDigit(text, start - 2)) ||
      (!percent && isLetterAt(text, end)) ||
      (text.charCodeAt(end) === 46 && isDigit(text, end + 1))
    ) {
      continue;
    }
    let num = pm ? raw.slice(0, pm.index) : raw;
    if (num.charCodeAt(0) === 0x2212) num = '-' + num.slice(1);
    if (num.includes(',')) num = num.replace(/,/g, '');
    const value = Number(num);
    if (!Number.isFinite(value)) continue;
    found(start, end, value, decimalsOf(num), percent);
  }
}

function isDigit(text: string, i: number): boolean {
  const k = text.charCodeAt(i);
  return k >= 48 && k <= 57;
}

/** Digits after the point of a plain number string (exponent applied). */
function decimalsOf(num: string): number {
  let e = num.indexOf('e');
  if (e < 0) e = num.indexOf('E');
  const mant = e < 0 ? num : num.slice(0, e);
  const exp = e < 0 ? 0 : Number(num.slice(e + 1));
  const dot = mant.indexOf('.');
  return Math.max(0, (dot < 0 ? 0 : mant.length - dot - 1) - exp);
}

/** Decimals of the number printed at `text[start, end)` once trailing zeros are dropped (`0.3920` → 3). */
function significantDecimals(text: string, start: number, end: number, decimals: number): number {
  if (decimals === 0) return 0;
  let i = end - 1;
  while (i >= start && !isDigit(text, i)) i--; // past "%" / "percent"
  let zeros = 0;
  for (let k = start; k < i; k++) {
    const c = text.charCodeAt(k);
    if (c === 101 || c === 69) return decimals;
  } // an exponent: as computed
  while (i >= start && text.charCodeAt(i) === 48) {
    zeros++;
    i--;
  }
  return Math.max(0, decimals - zeros);
}

/**
 * `v × 10^shift` rounded half away from zero to `d` decimals, as the integer `round(v × 10^(shift + d))` (a number,
 * never -0). Exact on the value's decimal form (15 significant digits), so 1.005 → 101 at 2 decimals; `shift` ±2
 * converts fraction ↔ percent without floating-point error.
 */
export function roundedScaled(v: number, d: number, shift = 0): number {
  if (v === 0 || !Number.isFinite(v)) return v === 0 ? 0 : v;
  const s = (v < 0 ? -v : v) * 10 ** (d + shift);
  if (s >= 4e15) return v < 0 ? -Math.round(s) : Math.round(s);
  const fl = Math.floor(s);
  const fr = s - fl;
  let r: number;
  if (Math.abs(fr - 0.5) > 1e-9 + s * 1e-12) r = fr > 0.5 ? fl + 1 : fl;
  else {
    // at a tie in binary: round the decimal form
    const p = Math.abs(v).toPrecision(15);
    const ei = p.indexOf('e');
    const mant = ei < 0 ? p : p.slice(0, ei);
    const exp = ei < 0 ? 0 : Number(p.slice(ei + 1));
    const dot = mant.indexOf('.');
    const digits = dot < 0 ? mant : mant.slice(0, dot) + mant.slice(dot + 1);
    const keep = (dot < 0 ? mant.length : dot) + exp + shift + d;
    let kept: string;
    if (keep < 0) kept = '0';
    else if (keep >= digits.length) kept = digits + '0'.repeat(keep - digits.length);
    else {
      kept = keep === 0 ? '0' : digits.slice(0, keep);
      if (digits.charCodeAt(keep) >= 53) kept = increment(kept);
    }
    r = Number(kept);
  }
  return r === 0 ? 0 : v < 0 ? -r : r;
}

/** {@link roundedScaled} as a string (`'101'`, `'-101'`, `'0'`). */
export function roundedKey(v: number, d: number, shift = 0): string {
  return String(roundedScaled(v, d, shift));
}

/** Adds one to a non-negative integer string. */
function increment(s: string): string {
  const a = s.split('');
  for (let i = a.length - 1; i >= 0; i--) {
    if (a[i] === '9') a[i] = '0';
    else {
      a[i] = String(Number(a[i]) + 1);
      return a.join('');
    }
  }
  return '1' + a.join('');
}

/** The one number of a string, for {@link numberMatches}. */
function parseOne(s: string, subject: string): FoundNumber {
  const f = findNumbers(s.trim());
  if (f.length !== 1) throw new LoupeInputError(subject, `"${s}" is not one number (${f.length} found)`);
  return f[0]!;
}

/**
 * The tracing rule: is `cellValue` (printed by a notebook cell) the source of `written` (a number in the report)?
 * - precision: equal after rounding the cell value to the decimals written, half away from zero (written `12.35`
 *   and `12.3` both match a cell value 12.3456; `12.34` does not; written `2.5` matches 2.45);
 * - an integer written without decimals matches a cell value within 0.5 of it (`1,234` matches 1233.5–1234.4…);
 * - percent ↔ fraction: a number written as a percent matches the cell value as printed or ×100 (`12.3%` matches
 *   0.123 and 12.3); a number written without `%` matches a cell printed as a percent ÷100 (`0.123` matches
 *   `12.3%`) or as printed;
 * - thousands separators are ignored on both sides (`1,234` = 1234);
 * - the sign must agree (`-2.5` does not match 2.5; zero has no sign).
 * @param written a number as written: a string holding exactly one number (`'12.3%'`, `'1,234'`), or its parts.
 * @param cellValue a number, a string as a cell printed it (`'12.3%'`, `'1,234'`), or its parts.
 * @returns whether the cell value is a source of the written number.
 * @throws LoupeInputError when a string holds no number or several.
 * @example numberMatches('12.35', 12.3456) === true; numberMatches('0.123', '12.3%') === true
 */
export function numberMatches(written: string | WrittenNumber, cellValue: number | string | CellNumber): boolean {
  const w = typeof written === 'string' ? parseOne(written, 'written number') : written;
  const c: CellNumber =
    typeof cellValue === 'number'
      ? { value: cellValue }
      : typeof cellValue === 'string'
        ? parseOne(cellValue, 'cell value')
        : cellValue;
  const want = roundedScaled(w.value, w.decimals);
  if (roundedScaled(c.value, w.decimals) === want) return true;
  if (w.percent && !c.percent) return roundedScaled(c.value, w.decimals, 2) === want;
  if (!w.percent && c.percent) return roundedScaled(c.value, w.decimals, -2) === want;
  return false;
}

/** Whether two written numbers state the same value: the finer one rounded to the coarser one's precision matches it ({@link numberMatches}, either percent form). */
export function sameWrittenValue(x: WrittenNumber, y: WrittenNumber): boolean {
  if (x.value === y.value && !!x.percent === !!y.percent) return true;
  const [coarse, fine] = x.decimals <= y.decimals ? [x, y] : [y, x];
  return numberMatches(coarse, { value: fine.value, percent: !!fine.percent });
}

/** A cell's numbers, for {@link CellNumberIndex}. */
export interface IndexedCell {
  seq: number;
  stdout: string;
  result: string | null;
  tables: ReadonlyArray<{ text: string }>;
  /** A replay on resume (state rebuild): skipped, its original cell is indexed. */
  replay?: boolean;
}

/** How well a cell value matches (lower is better): as printed at the written precision, rounded, converted percent ↔ fraction. */
export type MatchTier = 0 | 1 | 2;

/**
 * The numbers printed by a run's cells, indexed for tracing: built once, then one map per (decimals, percent)
 * combination a report uses, keyed by {@link roundedScaled}, holding the best cell for each key. Best = lowest
 * {@link MatchTier} (0: the cell printed the number at no finer precision than written; 1: the cell's value rounds
 * to it; 2: it matches only after percent ↔ fraction conversion), then the latest cell (highest `seq`: a recomputed
 * value supersedes an earlier one).
 */
export class CellNumberIndex {
  // the cells' numbers, in seq order, as parallel arrays
  private readonly value: number[] = [];
  private readonly seq: number[] = [];
  /** significant decimals · 2 + (printed as a percent ? 1 : 0) */
  private readonly form: number[] = [];
  /** (decimals, percent) → rounded key → packed best match: (3 − tier) · 2^32 + seq, greatest best. */
  private readonly maps = new Map<number, Map<number, number>>();

  /** @param cells the run's cells (any order; replays skipped). */
  constructor(cells: ReadonlyArray<IndexedCell>) {
    const sorted = [...cells].filter((c) => !c.replay).sort((a, b) => a.seq - b.seq);
    for (const c of sorted) {
      const texts = [c.stdout, c.result ?? '', ...c.tables.map((t) => t.text)];
      for (const t of texts) {
        if (!t) continue;
        scanNumbers(t, (start, end, value, decimals, percent) => {
          this.value.push(value);
          this.seq.push(c.seq);
          this.form.push(significantDecimals(t, start, end, decimals) * 2 + (percent ? 1 : 0));
        });
      }
    }
  }

  /** How many numbers the cells printed. */
  get size(): number {
    return this.value.length;
  }

  /**
   * The best cell holding a value that matches `written` by {@link numberMatches}.
   * @returns its seq and tier, or null ("no source found").
   */
  find(written: WrittenNumber): { seq: number; tier: MatchTier } | null {
    if (!this.value.length) return null;
    const v = this.map(written.decimals, !!written.percent).get(roundedScaled(written.value, written.decimals));
    if (v === undefined) return null;
    const hi = Math.floor(v / 2 ** 32);
    return { seq: v - hi * 2 ** 32, tier: (3 - hi) as MatchTier };
  }

  /**
   * {@link find} for many written numbers at once, without indexing every cell value at every precision: the written
   * keys of each (decimals, percent) are collected first, then each cell value is rounded once per such combination
   * and kept only where a written number waits for it.
   * @returns the best match of each written number, in order (null: no source found).
   */
  findAll(written: ReadonlyArray<WrittenNumber>): Array<{ seq: number; tier: MatchTier } | null> {
    const out: Array<{ seq: number; tier: MatchTier } | null> = new Array<{ seq: number; tier: MatchTier } | null>(
      written.length,
    ).fill(null);
    if (!this.value.length || !written.length) return out;
    const groups = new Map<number, Map<number, number>>();
    const keys: number[] = new Array<number>(written.length);
    for (let i = 0; i < written.length; i++) {
      const w = written[i]!;
      const combo = w.decimals * 2 + (w.percent ? 1 : 0);
      let best = groups.get(combo);
      if (!best) {
        best = new Map();
        groups.set(combo, best);
      }
      const key = roundedScaled(w.value, w.decimals);
      keys[i] = key;
      if (!best.has(key)) best.set(key, -1);
    }
    for (const [combo, best] of groups) {
      const d = combo >> 1;
      const percent = (combo & 1) === 1;
      for (let i = 0; i < this.value.length; i++) {
        const v = this.value[i]!;
        const form = this.form[i]!;
        const cellPercent = (form & 1) === 1;
        let k = roundedScaled(v, d);
        let cur = best.get(k);
        if (cur !== undefined) {
          const p = (form >> 1 <= d ? 3 : 2) * 2 ** 32 + this.seq[i]!;
          if (p > cur) best.set(k, p);
        }
        if (percent === cellPercent) continue;
        k = roundedScaled(v, d, percent ? 2 : -2);
        cur = best.get(k);
        if (cur !== undefined) {
          const p = 1 * 2 ** 32 + this.seq[i]!;
          if (p > cur) best.set(k, p);
        }
      }
    }
    for (let i = 0; i < written.length; i++) {
      const w = written[i]!;
      const v = groups.get(w.decimals * 2 + (w.percent ? 1 : 0))!.get(keys[i]!)!;
      if (v < 0) continue;
      const hi = Math.floor(v / 2 ** 32);
      out[i] = { seq: v - hi * 2 ** 32, tier: (3 - hi) as MatchTier };
    }
    return out;
  }

  private map(d: number, percent: boolean): Map<number, number> {
    const k = d * 2 + (percent ? 1 : 0);
    let m = this.maps.get(k);
    if (m) return m;
    m = new Map();
    const put = (key: number, seq: number, tier: MatchTier) => {
      const v = (3 - tier) * 2 ** 32 + seq;
      const cur = m!.get(key);
      if (cur === undefined || v > cur) m!.set(key, v);
    };
    for (let i = 0; i < this.value.length; i++) {
      const v = this.value[i]!;
      const seq = this.seq[i]!;
      const form = this.form[i]!;
      const cellPercent = (form & 1) === 1;
      put(roundedScaled(v, d), seq, form >> 1 <= d ? 0 : 1);
      if (percent && !cellPercent) put(roundedScaled(v, d, 2), seq, 2);
      else if (!percent && cellPercent) put(roundedScaled(v, d, -2), seq, 2);
    }
    this.maps.set(k, m);
    return m;
  }
}
