/**
 * Which parts of a snippet or unit text to highlight for a query, per search mode. Pure (no DOM) so it is
 * tested in Node (test/unit/webview/highlight.test.ts).
 */
import type { SearchMode } from '../../src/protocol/docsearch.ts';

export interface Segment {
  text: string;
  /** Matches a query term. */
  mark: boolean;
  /** Inside the hit's own range (the passage the index returned). */
  primary?: boolean;
}

const STOPWORDS = new Set(
  'a an and are as at be by for from how in is it of on or that the this to was were what which who with did do does'.split(
    ' ',
  ),
);

/**
 * The terms to highlight for a query. keyword: the whole query (case-insensitive);
 * bm25: word tokens (letters, digits, `_`), case-insensitive, minus stop words;
 * longta: whitespace tokens, case-sensitive (LongTA does not lowercase).
 */
export function queryTerms(query: string, mode: SearchMode): { terms: string[]; caseSensitive: boolean } {
  const q = query.trim();
  if (!q) return { terms: [], caseSensitive: false };
  if (mode === 'keyword') return { terms: [q], caseSensitive: false };
  if (mode === 'longta') return { terms: [...new Set(q.split(/\s+/).filter(Boolean))], caseSensitive: true };
  const toks = q.toLowerCase().match(/[\p{L}\p{N}_]+(?:\.[\p{N}]+)?/gu) ?? [];
  return { terms: [...new Set(toks.filter((t) => !STOPWORDS.has(t)))], caseSensitive: false };
}

/** All [start, end) ranges of the terms in text, merged and sorted. Word-bounded except in keyword/longta mode. */
export function matchRanges(text: string, query: string, mode: SearchMode): [number, number][] {
  const { terms, caseSensitive } = queryTerms(query, mode);
  if (!terms.length) return [];
  const hay = caseSensitive ? text : text.toLowerCase();
  const ranges: [number, number][] = [];
  const isWord = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}_]/u.test(c);
  const isSpace = (c: string | undefined) => c === undefined || /\s/.test(c);
  for (const raw of terms) {
    const term = caseSensitive ? raw : raw.toLowerCase();
    let from = 0;
    for (let guard = 0; guard < 10_000; guard++) {
      const i = hay.indexOf(term, from);
      if (i < 0) break;
      const end = i + term.length;
      // bm25: word-bounded tokens. longta: LongTA's tokens are whitespace-separated words compared whole, so only
      // whole whitespace-delimited tokens matched. keyword: any substring (search_doc).
      const bounded =
        mode === 'keyword'
          ? true
          : mode === 'bm25'
            ? !isWord(hay[i - 1]) && !isWord(hay[end])
            : isSpace(hay[i - 1]) && isSpace(hay[end]);
      if (bounded) ranges.push([i, end]);
      from = i + Math.max(1, term.length);
    }
  }
  return mergeRanges(ranges);
}

/** Sorts and merges overlapping or touching ranges. */
export function mergeRanges(ranges: [number, number][]): [number, number][] {
  const sorted = ranges.filter(([s, e]) => e > s).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out: [number, number][] = [];
  for (const [s, e] of sorted) {
    const last = out[out.length - 1];
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else out.push([s, e]);
  }
  return out;
}

/**
 * Splits text into segments: marked where a query term matches, `primary` inside [primary[0], primary[1]).
 * Concatenating the segments' text gives back the input.
 */
export function highlight(text: string, query: string, mode: SearchMode, primary?: [number, number]): Segment[] {
  const marks = matchRanges(text, query, mode);
  const cuts = new Set<number>([0, text.length]);
  for (const [s, e] of marks) cuts.add(s).add(e);
  const p =
    primary && primary[1] > primary[0]
      ? ([Math.max(0, primary[0]), Math.min(text.length, primary[1])] as const)
      : undefined;
  if (p) cuts.add(p[0]).add(p[1]);
  const points = [...cuts].filter((c) => c >= 0 && c <= text.length).sort((a, b) => a - b);
  const segs: Segment[] = [];
  let mi = 0;
  for (let k = 0; k + 1 < points.length; k++) {
    const s = points[k] as number;
    const e = points[k + 1] as number;
    while (mi < marks.length && (marks[mi] as [number, number])[1] <= s) mi++;
    const m = marks[mi];
    const mark = m !== undefined && m[0] <= s && e <= m[1];
    const seg: Segment = { text: text.slice(s, e), mark };
    if (p && p[0] <= s && e <= p[1]) seg.primary = true;
    const last = segs[segs.length - 1];
    if (last && last.mark === seg.mark && last.primary === seg.primary) last.text += seg.text;
    else segs.push(seg);
  }
  return segs;
}

/** Shortens a snippet to about `max` characters around its first match, with ellipses. */
export function focusSnippet(text: string, query: string, mode: SearchMode, max = 320): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const first = matchRanges(flat, query, mode)[0];
  const centre = first ? first[0] : 0;
  let s = Math.max(0, centre - Math.floor(max / 3));
  let e = Math.min(flat.length, s + max);
  s = Math.max(0, e - max);
  // start and end on word boundaries (a snippet never begins or ends mid-word)
  if (s > 0 && flat[s - 1] !== ' ') {
    const sp = flat.indexOf(' ', s);
    if (sp >= 0 && sp - s < 25 && sp + 1 < e) s = sp + 1;
  }
  if (e < flat.length && flat[e] !== ' ') {
    const sp = flat.lastIndexOf(' ', e);
    if (sp > s && e - sp < 25) e = sp;
  }
  return (s > 0 ? '…' : '') + flat.slice(s, e) + (e < flat.length ? '…' : '');
}
