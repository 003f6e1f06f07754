/**
 * Okapi BM25 as `rank_bm25.BM25Okapi` computes it (k1 = 1.5, b = 0.75, epsilon = 0.25):
 * idf(t) = ln(N − n(t) + 0.5) − ln(n(t) + 0.5); negative idfs are replaced by epsilon × mean idf over
 * the corpus vocabulary; score(d, q) = Σ_{t in q, repeats counted} idf(t)·f·(k1+1)/(f + k1·(1 − b + b·|d|/avgdl)).
 * Source: spec §2.3 `retriever` (LangChain BM25Retriever → rank_bm25), rank_bm25 `BM25Okapi`.
 */

export interface Bm25Params {
  k1: number;
  b: number;
  epsilon: number;
}

/** rank_bm25 defaults. */
export const RANK_BM25_DEFAULTS: Bm25Params = { k1: 1.5, b: 0.75, epsilon: 0.25 };

/** rank_bm25's idf before the epsilon floor: ln(N − df + 0.5) − ln(df + 0.5). */
export function rawIdf(n: number, df: number): number {
  return Math.log(n - df + 0.5) - Math.log(df + 0.5);
}

/**
 * The idf rank_bm25 uses for a term: raw idf, or `epsilon * averageIdf` when the raw idf is negative.
 * @param n number of chunks in the corpus; `df` chunks containing the term (0 → term unknown → 0).
 */
export function okapiIdf(n: number, df: number, averageIdf: number, p: Bm25Params = RANK_BM25_DEFAULTS): number {
  if (df <= 0) return 0;
  const idf = rawIdf(n, df);
  return idf < 0 ? p.epsilon * averageIdf : idf;
}

/** Postings of one term: chunk ids ascending with their term frequencies. */
export interface Postings {
  ids: Int32Array;
  tfs: Uint16Array;
}

/**
 * Builds postings and corpus statistics from tokenized chunks (in memory, used by `build()` and tests).
 * @param docs token lists, one per chunk (chunk id = position).
 * @returns term → postings, chunk lengths, and the mean raw idf over the vocabulary.
 */
export function buildPostings(docs: string[][]): {
  terms: Map<string, Postings>;
  lens: Int32Array;
  avgdl: number;
  averageIdf: number;
} {
  const acc = new Map<string, { ids: number[]; tfs: number[] }>();
  const lens = new Int32Array(docs.length);
  let total = 0;
  docs.forEach((toks, id) => {
    lens[id] = toks.length;
    total += toks.length;
    const f = new Map<string, number>();
    for (const t of toks) f.set(t, (f.get(t) ?? 0) + 1);
    for (const [t, c] of f) {
      let p = acc.get(t);
      if (!p) acc.set(t, (p = { ids: [], tfs: [] }));
      p.ids.push(id);
      p.tfs.push(Math.min(c, 65535));
    }
  });
  const terms = new Map<string, Postings>();
  let idfSum = 0;
  for (const [t, p] of acc) {
    terms.set(t, { ids: Int32Array.from(p.ids), tfs: Uint16Array.from(p.tfs) });
    idfSum += rawIdf(docs.length, p.ids.length);
  }
  return { terms, lens, avgdl: docs.length ? total / docs.length : 0, averageIdf: acc.size ? idfSum / acc.size : 0 };
}

/**
 * Reference implementation: rank_bm25 `get_scores` over an in-memory corpus (used by tests to check
 * the indexed scorer).
 * @param docs tokenized chunks; `query` tokens (repeats counted).
 * @returns one score per chunk.
 */
export function okapiScores(docs: string[][], query: string[], p: Bm25Params = RANK_BM25_DEFAULTS): Float64Array {
  const { terms, lens, avgdl, averageIdf } = buildPostings(docs);
  const scores = new Float64Array(docs.length);
  for (const q of query) {
    const post = terms.get(q);
    if (!post) continue;
    const idf = okapiIdf(docs.length, post.ids.length, averageIdf, p);
    for (let i = 0; i < post.ids.length; i++) {
      const id = post.ids[i]!;
      const f = post.tfs[i]!;
      scores[id]! += (idf * (f * (p.k1 + 1))) / (f + p.k1 * (1 - p.b + (p.b * lens[id]!) / avgdl));
    }
  }
  return scores;
}
