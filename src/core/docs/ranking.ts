/**
 * Ranking helpers of the documentation index, split out of doc-index.ts: the top-k heap, binary searches over
 * sorted postings and the default-mode snippet.
 */

/**
 * The k best ids by `better` (a strict order), best first, using a size-k binary min-heap: O(n log k).
 * @param keep optional filter applied before ranking.
 */
export function topK(
  ids: ArrayLike<number>,
  k: number,
  better: (a: number, b: number) => boolean,
  keep?: (id: number) => boolean,
): number[] {
  const heap: number[] = []; // heap[0] is the worst of the kept ones
  const worse = (a: number, b: number) => better(b, a);
  const up = (i: number) => {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!worse(heap[i]!, heap[p]!)) break;
      [heap[i], heap[p]] = [heap[p]!, heap[i]!];
      i = p;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && worse(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && worse(heap[r]!, heap[m]!)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  };
  if (k <= 0) return [];
  for (let j = 0; j < ids.length; j++) {
    const id = ids[j]!;
    if (keep && !keep(id)) continue;
    if (heap.length < k) {
      heap.push(id);
      up(heap.length - 1);
    } else if (better(id, heap[0]!)) {
      heap[0] = id;
      down(0);
    }
  }
  return heap.sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0));
}

/** First index of sorted `a` whose value is greater than `x` (a.length when none). */
export function upperBound(a: Int32Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    if (a[m]! <= x) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/** First index of sorted `a` whose value is not less than `x` (a.length when none). */
export function lowerBound(a: Int32Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    if (a[m]! < x) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/** Default-mode snippet: a window of `ctx` chars around the first query term found in the chunk. */
export function bm25Snippet(chunk: string, tokens: string[], ctx: number): string {
  const lower = chunk.toLowerCase();
  let at = -1;
  for (const t of tokens) {
    const i = lower.indexOf(t.length > 4 ? t.slice(0, -1) : t);
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  if (at < 0 || chunk.length <= ctx) return chunk.slice(0, ctx);
  let from = Math.max(0, Math.min(at - Math.floor(ctx / 3), chunk.length - ctx));
  let to = from + ctx;
  // on word boundaries: never start or end mid-word (within a short distance)
  if (from > 0 && /\S/.test(chunk[from - 1]!)) {
    const m = /\s/.exec(chunk.slice(from, from + 25));
    if (m && from + m.index + 1 < at + 1) from += m.index + 1;
  }
  if (to < chunk.length && /\S/.test(chunk[to]!)) {
    const back = chunk.slice(Math.max(from, to - 25), to);
    const sp = back.search(/\s\S*$/);
    if (sp >= 0) to = Math.max(from, to - 25) + sp;
  }
  return chunk.slice(from, to);
}
