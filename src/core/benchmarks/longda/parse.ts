/**
 * LongDA cell parsers: answer structures and ground-truth answers (spec §2.2, `benchmark.csv`).
 */

import type { AnswerStructure, ReadAnswerStructure } from './items.ts';

/**
 * The text of an answer structure as `benchmark.csv` writes it (`single_number`, `[men, women]`); a cell the parser
 * refused, as it was. @returns the text (the score's `answerStructure`, the results export's column).
 */
export function answerStructureText(s: ReadAnswerStructure): string {
  return s.kind === 'single_number' ? 'single_number' : s.kind === 'list' ? `[${s.labels.join(', ')}]` : s.text;
}

/**
 * Parses an `answer_structure` cell.
 * @param text `single_number` or a bracketed list of labels such as `[men, women]`.
 * @returns the structure, or an error message for unknown syntax (never throws).
 * @example parseAnswerStructure('[men, women]') → { kind: 'list', labels: ['men','women'], length: 2 }
 */
export function parseAnswerStructure(
  text: string,
): { ok: true; value: AnswerStructure } | { ok: false; error: string } {
  const t = text.trim();
  if (t === 'single_number') return { ok: true, value: { kind: 'single_number' } };
  const m = /^\[(.*)\]$/s.exec(t);
  if (!m) {
    return {
      ok: false,
      error: `unknown answer structure '${truncate(t)}' (expected 'single_number' or '[label, ...]')`,
    };
  }
  const labels = m[1]!
    .split(',')
    .map((s) => s.trim().replace(/^['"]|['"]$/g, ''))
    .filter((s) => s !== '');
  if (labels.length === 0) return { ok: false, error: `empty label list in answer structure '${truncate(t)}'` };
  const bad = labels.find((l) => /[[\]{}]/.test(l));
  if (bad !== undefined) {
    return { ok: false, error: `unknown answer structure '${truncate(t)}' (nested brackets in label '${bad}')` };
  }
  const dup = labels.find((l, i) => labels.indexOf(l) !== i);
  if (dup !== undefined) return { ok: false, error: `duplicate label '${dup}' in answer structure '${truncate(t)}'` };
  return { ok: true, value: { kind: 'list', labels, length: labels.length } };
}

/**
 * Parses an `answer` cell: a number (`3.1`, `-2`, `1,234`, `12%`) or a bracketed list of numbers.
 * An empty cell (or LongTA's `NA.`) gives null.
 * @returns the value or an error message (never throws).
 */
export function parseGroundTruth(
  text: string,
): { ok: true; value: number | number[] | null } | { ok: false; error: string } {
  const t = text.trim();
  if (t === '' || t === 'NA.' || t.toUpperCase() === 'NA' || t.toLowerCase() === 'nan') {
    return { ok: true, value: null };
  }
  const list = /^\[(.*)\]$/s.exec(t);
  if (list) {
    const parts = list[1]!.split(/,(?!\d{3}(?:\D|$))/).map((s) => s.trim());
    const nums: number[] = [];
    for (const p of parts) {
      const n = parseNumber(p);
      if (n === undefined) return { ok: false, error: `ground truth list element '${truncate(p)}' is not a number` };
      nums.push(n);
    }
    return { ok: true, value: nums };
  }
  const n = parseNumber(t);
  if (n === undefined) {
    return { ok: false, error: `ground truth '${truncate(t)}' is not a number or a list of numbers` };
  }
  return { ok: true, value: n };
}

/** Parses one number, tolerating thousands separators, a trailing `%` and a leading `$`. */
export function parseNumber(s: string): number | undefined {
  let t = s.trim().replace(/^\$/, '').replace(/%$/, '').trim();
  if (/^-?\d{1,3}(,\d{3})+(\.\d+)?$/.test(t)) t = t.replace(/,/g, '');
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t)) return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
}

function truncate(s: string): string {
  return s.length > 80 ? s.slice(0, 77) + '...' : s;
}
