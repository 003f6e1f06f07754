/**
 * Text the agent sees from the documentation tools, in LongTA's formats (spec §2.3 tool table,
 * LongTA `tools/read_doc.py`, `tools/search_doc.py`, `tools/retriever.py`), plus range parsing and
 * snippet rules.
 */
import type { UnitKind } from './types.ts';

/**
 * Parses a one-based range string like "1-3,5" (spaces allowed) into indices.
 * @returns one-based indices in the given order without duplicates, or undefined when unparsable.
 */
export function parseRange(range: string): number[] | undefined {
  const out: number[] = [];
  const seen = new Set<number>();
  const parts = range.split(',').map((p) => p.trim());
  if (!parts.length || parts.every((p) => p === '')) return undefined;
  for (const p of parts) {
    if (p === '') continue;
    const m = /^(\d+)\s*(?:-\s*(\d+))?$/.exec(p);
    if (!m) return undefined;
    const a = Number(m[1]);
    const b = m[2] !== undefined ? Number(m[2]) : a;
    if (b < a || b - a > 1_000_000) return undefined;
    for (let i = a; i <= b; i++) {
      if (!seen.has(i)) {
        seen.add(i);
        out.push(i);
      }
    }
  }
  return out;
}

/** `{Label}` of unit i (0-based): "Page 3". */
export function unitLabel(kind: UnitKind, index: number): string {
  return `${kind} ${index + 1}`;
}

/** LongTA `read_doc` without a range: header and the first 5 units. */
export function formatReadPreview(path: string, kind: UnitKind, units: readonly string[]): string {
  const sample = units.slice(0, 5).map((t, i) => `${unitLabel(kind, i)}: ${t}`);
  return `[${path}] ${kind}s available: 1-${units.length}\nSample:\n${sample.join('\n')}`;
}

/** LongTA `read_doc` with a range: `[path] {Kind}s: {labels}` then the units. */
export function formatReadRange(
  path: string,
  kind: UnitKind,
  indices: readonly number[],
  units: readonly string[],
): string {
  const lines = indices.map((i) => `${unitLabel(kind, i - 1)}: ${units[i - 1] ?? ''}`);
  return `[${path}] ${kind}s: ${indices.join(', ')}\n${lines.join('\n')}`;
}

/**
 * Context window around a match, LongTA `search_doc` style: `...{text[start-ctx:end+ctx]}...`.
 * @returns the snippet with the offsets of the window.
 */
export function contextWindow(
  text: string,
  start: number,
  end: number,
  ctx: number,
): { snippet: string; from: number; to: number } {
  const from = Math.max(0, start - ctx);
  const to = Math.min(text.length, end + ctx);
  return { snippet: text.slice(from, to), from, to };
}

/**
 * LongTA `retriever` snippet: ±`ctx` (200) chars around the first literal occurrence of the whole
 * query in the chunk; if the query does not occur literally, the first `ctx` chars of the chunk
 * (spec §2.3, §2.7 item 12).
 */
export function longtaSnippet(chunk: string, query: string, ctx = 200): string {
  const at = query === '' ? -1 : chunk.indexOf(query);
  if (at < 0) return chunk.slice(0, ctx);
  return chunk.slice(Math.max(0, at - ctx), Math.min(chunk.length, at + query.length + ctx));
}

/**
 * Case-insensitive literal occurrences of `needle` in `hay` (non-overlapping, in order).
 * Lowercasing that changes string length (rare Unicode) falls back to a case-insensitive RegExp.
 * @returns `[start, end)` offsets into `hay`.
 */
export function findAllCaseInsensitive(hay: string, needle: string, limit = Infinity): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  if (needle === '' || limit <= 0) return out;
  const h = hay.toLowerCase();
  const n = needle.toLowerCase();
  if (h.length === hay.length && n.length === needle.length) {
    let at = h.indexOf(n);
    while (at >= 0 && out.length < limit) {
      out.push([at, at + n.length]);
      at = h.indexOf(n, at + Math.max(1, n.length));
    }
    return out;
  }
  const re = new RegExp(needle.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'giu');
  for (const m of hay.matchAll(re)) {
    if (out.length >= limit) break;
    out.push([m.index, m.index + m[0].length]);
  }
  return out;
}
