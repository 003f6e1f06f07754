/**
 * The documentation index's BM25 rankers (issue 40 split of `doc-index.ts`): built per mode and file set
 * (fingerprint), stored as postings in the cache and loaded term by term, and the ranking of chunks (`rank`: rank_bm25
 * scoring and LongTA's tie order). Source: spec §2.3 (LongTA retriever), issue 4.
 */
import { createHash } from 'node:crypto';
import { LoupeInputError } from '../util/errors.ts';
import { RANK_BM25_DEFAULTS, okapiIdf, rawIdf } from './bm25.ts';
import { longtaSnippet, unitLabel } from './format.ts';
import { codebookQueryTerms, splitChunks } from './text.ts';
import type { DocHit, UnitKind } from './types.ts';

import { bufToInt32, bufToUint16, typedToBuf } from './cache-file.ts';
import { bm25Snippet, lowerBound, topK } from './ranking.ts';
import {
  DocIndexCache,
  MODE_PARAMS,
  RANKER_VERSION,
  type FileRow,
  type RankMode,
  type Ranker,
  type RankerFile,
} from './doc-index-cache.ts';

/** Rankers of the cache: built, loaded, searched. */
export abstract class DocIndexRanking extends DocIndexCache {
  protected fingerprint(mode: RankMode, files: FileRow[]): string {
    const h = createHash('sha256');
    // the units a ranker indexes depend on the extraction version too (the same file hash, other text)
    h.update(
      `${RANKER_VERSION}|${mode}|${mode === 'longta' ? '500/100' : `${this.chunkChars}/${this.overlap}`}|x${this.xv}\n`,
    );
    for (const f of files) h.update(`${f.path}\t${f.hash}\n`);
    return h.digest('hex');
  }

  protected ensureRanker(mode: RankMode, files: FileRow[], signal?: AbortSignal): Ranker {
    const fp = this.fingerprint(mode, files);
    const existing = this.loadRanker(mode, fp);
    if (existing) return existing;
    const size = mode === 'longta' ? 500 : this.chunkChars;
    const overlap = mode === 'longta' ? 100 : this.overlap;
    const tokens = MODE_PARAMS[mode].tokens;
    // per term: postings, plus bookkeeping for the chunk and file being read (no per-chunk maps)
    type Acc = { ids: number[]; tfs: number[]; lastFile: number; inFile: number };
    const acc = new Map<string, Acc>();
    const cFile: number[] = [];
    const cUnit: number[] = [];
    const cNo: number[] = [];
    const cStart: number[] = [];
    const cEnd: number[] = [];
    const cLen: number[] = [];
    const rfiles: RankerFile[] = [];
    let total = 0;
    const getUnits = this.db.prepare<[string], { text: string }>('SELECT text FROM units WHERE hash = ? ORDER BY idx');
    for (let fi = 0; fi < files.length; fi++) {
      if (fi % 8 === 0) signal?.throwIfAborted();
      const f = files[fi]!;
      const lo = cFile.length;
      let sumLen = 0;
      const fileTerms: Acc[] = [];
      const units = getUnits.all(f.hash);
      units.forEach((u, ui) => {
        const spans = splitChunks(u.text, size, overlap);
        spans.forEach((sp, ci) => {
          const id = cFile.length;
          const toks = tokens(u.text.slice(sp.start, sp.end));
          cFile.push(fi);
          cUnit.push(ui);
          cNo.push(ci);
          cStart.push(sp.start);
          cEnd.push(sp.end);
          cLen.push(toks.length);
          sumLen += toks.length;
          for (const t of toks) {
            let p = acc.get(t);
            if (!p) acc.set(t, (p = { ids: [], tfs: [], lastFile: -1, inFile: 0 }));
            const last = p.ids.length - 1;
            if (last >= 0 && p.ids[last] === id) {
              if (p.tfs[last]! < 65535) p.tfs[last]!++;
              continue;
            }
            p.ids.push(id);
            p.tfs.push(1);
            if (p.lastFile !== fi) {
              p.lastFile = fi;
              p.inFile = 0;
              fileTerms.push(p);
            }
            p.inFile++;
          }
        });
      });
      const nf = cFile.length - lo;
      let idfSum = 0;
      for (const p of fileTerms) idfSum += rawIdf(nf, p.inFile);
      rfiles.push({
        file: f.path,
        hash: f.hash,
        kind: f.kind as UnitKind,
        lo,
        hi: cFile.length,
        sumLen,
        avgIdf: fileTerms.length ? idfSum / fileTerms.length : 0,
      });
      total += sumLen;
    }
    const n = cFile.length;
    let idfSum = 0;
    for (const p of acc.values()) idfSum += rawIdf(n, p.ids.length);
    const averageIdf = acc.size ? idfSum / acc.size : 0;
    const avgdl = n ? total / n : 0;
    const chunkBlob = new Int32Array(n * 6);
    for (let i = 0; i < n; i++) {
      chunkBlob.set([cFile[i]!, cUnit[i]!, cNo[i]!, cStart[i]!, cEnd[i]!, cLen[i]!], i * 6);
    }
    signal?.throwIfAborted();
    const ins = this.db.prepare('INSERT INTO postings(ranker, term, ids, tfs) VALUES (?, ?, ?, ?)');
    let rid = 0;
    let raced = false;
    this.db
      .transaction(() => {
        // another process may have written the same ranker meanwhile: same fingerprint, same content
        if (
          this.db
            .prepare<[string, string], { id: number }>('SELECT id FROM rankers WHERE mode = ? AND fingerprint = ?')
            .get(mode, fp)
        ) {
          raced = true;
          return;
        }
        const r = this.db
          .prepare(
            'INSERT INTO rankers(mode, fingerprint, used, n, avgdl, average_idf, files, chunks) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
          )
          .run(mode, fp, Date.now(), n, avgdl, averageIdf, JSON.stringify(rfiles), typedToBuf(chunkBlob));
        rid = Number(r.lastInsertRowid);
        for (const [t, p] of acc) {
          ins.run(rid, t, typedToBuf(Int32Array.from(p.ids)), typedToBuf(Uint16Array.from(p.tfs)));
        }
      })
      .immediate();
    if (raced) return this.loadRanker(mode, fp)!;
    return this.rankerFrom(rid, mode, n, avgdl, averageIdf, rfiles, chunkBlob);
  }

  protected rankerFrom(
    id: number,
    mode: RankMode,
    n: number,
    avgdl: number,
    averageIdf: number,
    files: RankerFile[],
    blob: Int32Array,
  ): Ranker {
    const pick = (k: number) => {
      const a = new Int32Array(n);
      for (let i = 0; i < n; i++) a[i] = blob[i * 6 + k]!;
      return a;
    };
    return {
      id,
      mode,
      n,
      avgdl,
      averageIdf,
      files,
      byFile: new Map(files.map((f, i) => [f.file, i])),
      cFile: pick(0),
      cUnit: pick(1),
      cNo: pick(2),
      cStart: pick(3),
      cEnd: pick(4),
      cLen: pick(5),
      postings: new Map(),
    };
  }

  protected loadRanker(mode: RankMode, fp: string): Ranker | undefined {
    const r = this.db
      .prepare<
        [string, string],
        { id: number; n: number; avgdl: number; average_idf: number; files: string; chunks: Buffer }
      >('SELECT id, n, avgdl, average_idf, files, chunks FROM rankers WHERE mode = ? AND fingerprint = ?')
      .get(mode, fp);
    if (!r) return undefined;
    const cached = this.rankers.get(mode);
    if (cached && cached.id === r.id) return cached;
    this.db.prepare('UPDATE rankers SET used = ? WHERE id = ?').run(Date.now(), r.id);
    return this.rankerFrom(
      r.id,
      mode,
      r.n,
      r.avgdl,
      r.average_idf,
      JSON.parse(r.files) as RankerFile[],
      bufToInt32(r.chunks),
    );
  }

  protected ranker(mode: RankMode): Ranker {
    const r = this.rankers.get(mode);
    if (!r) throw new LoupeInputError(this.root, 'documentation index not built yet: call build() first');
    return r;
  }

  protected postingsOf(r: Ranker, term: string): { ids: Int32Array; tfs: Uint16Array } | null {
    const hit = r.postings.get(term);
    if (hit !== undefined) return hit;
    const row = this.searchStmts.postings.get(r.id, term);
    const p = row ? { ids: bufToInt32(row.ids), tfs: bufToUint16(row.tfs) } : null;
    if (r.postings.size > 20000) r.postings.clear();
    r.postings.set(term, p);
    return p;
  }

  /**
   * BM25 over chunks. `longta`: the corpus is exactly the selected files (one file → LongTA's per-doc
   * retriever; all files → one corpus), rank_bm25 scoring and tie order, zero-score chunks can fill
   * the top k. `bm25`: corpus statistics of the whole index, only chunks with a positive score.
   */
  protected rank(
    mode: RankMode,
    query: string,
    k: number,
    files: string[] | undefined,
    ctx: number,
    expand = true,
  ): DocHit[] {
    const r = this.ranker(mode);
    const tokens = MODE_PARAMS[mode].tokens(query);
    // longta: every whitespace token counts (repeats too, as rank_bm25); default: weighted distinct terms
    const terms = mode === 'longta' ? tokens.map((term) => ({ term, weight: 1 })) : codebookQueryTerms(query, expand);
    // corpus selection
    let lo = 0;
    let hi = r.n;
    let mask: Uint8Array | undefined;
    let n = r.n;
    let avgdl = r.avgdl;
    let averageIdf = r.averageIdf;
    if (files) {
      const idx = files.map((f) => r.byFile.get(f)).filter((i): i is number => i !== undefined);
      if (!idx.length) return [];
      if (idx.length === 1) {
        const f = r.files[idx[0]!]!;
        lo = f.lo;
        hi = f.hi;
        if (mode === 'longta') {
          n = f.hi - f.lo;
          avgdl = n ? f.sumLen / n : 0;
          averageIdf = f.avgIdf;
        }
      } else if (idx.length < r.files.length) {
        mask = new Uint8Array(r.files.length);
        let cnt = 0;
        let len = 0;
        for (const i of idx) {
          mask[i] = 1;
          cnt += r.files[i]!.hi - r.files[i]!.lo;
          len += r.files[i]!.sumLen;
        }
        if (mode === 'longta') {
          n = cnt;
          avgdl = cnt ? len / cnt : 0;
          // average idf over the subset's vocabulary is approximated by the whole index's (affects
          // only the floor of negative idfs)
        }
      }
    }
    if (n === 0) return [];
    if (this.scratch.length < r.n) {
      this.scratch = new Float64Array(r.n);
      this.touchedBuf = new Int32Array(r.n);
    }
    const scores = this.scratch;
    const touchedBuf = this.touchedBuf;
    let nTouched = 0;
    const inCorpus = (id: number) => id >= lo && id < hi && (!mask || mask[r.cFile[id]!] === 1);
    const { k1, b } = RANK_BM25_DEFAULTS;
    // k1·(1 − b + b·len/avgdl) per chunk: the same doubles as computed inline, made once per ranker
    let norm = avgdl === r.avgdl ? r.norm : undefined;
    if (!norm) {
      norm = new Float64Array(r.n);
      for (let id = 0; id < r.n; id++) norm[id] = k1 * (1 - b + (b * r.cLen[id]!) / avgdl);
      if (avgdl === r.avgdl) r.norm = norm;
    }
    const num = k1 + 1;
    for (const { term: t, weight } of terms) {
      const p = this.postingsOf(r, t);
      if (!p) continue;
      let from = 0;
      let to = p.ids.length;
      if (lo > 0 || hi < r.n) {
        from = lowerBound(p.ids, lo);
        to = lowerBound(p.ids, hi);
      }
      let df = to - from;
      if (mask && mode === 'longta') {
        df = 0;
        for (let i = from; i < to; i++) if (mask[r.cFile[p.ids[i]!]!] === 1) df++;
      }
      if (mode === 'bm25') df = p.ids.length;
      // default mode: the always-positive idf ln(1 + (N − df + 0.5)/(df + 0.5)) (Lucene's variant)
      const idf =
        weight * (mode === 'bm25' ? Math.log(1 + (r.n - df + 0.5) / (df + 0.5)) : okapiIdf(n, df, averageIdf));
      if (idf === 0) continue;
      const ids = p.ids;
      const tfs = p.tfs;
      const cFile = r.cFile;
      for (let i = from; i < to; i++) {
        const id = ids[i]!;
        if (mask && mask[cFile[id]!] !== 1) continue;
        const f = tfs[i]!;
        const before = scores[id]!;
        if (before === 0) touchedBuf[nTouched++] = id;
        const after = before + (idf * (f * num)) / (f + norm[id]!);
        scores[id] = after === 0 ? Number.MIN_VALUE : after; // keep "touched" bookkeeping exact
      }
    }
    const touched = touchedBuf.subarray(0, nTouched);
    // top k: score desc; ties by chunk id desc (numpy argsort reversed), as rank_bm25's get_top_n
    const better = (a: number, b2: number) => scores[a]! > scores[b2]! || (scores[a] === scores[b2] && a > b2);
    let top = topK(
      touched,
      mode === 'bm25' ? k * 4 + 16 : k,
      better,
      mode === 'bm25' ? (id) => scores[id]! > 0 : undefined,
    );
    if (mode === 'bm25') {
      // default mode: one hit per unit (its best chunk); overlapping chunks of a page would repeat it
      const seenUnit = new Set<string>();
      top = top
        .filter((id) => {
          const key = `${r.cFile[id]}:${r.cUnit[id]}`;
          if (seenUnit.has(key)) return false;
          seenUnit.add(key);
          return true;
        })
        .slice(0, k);
    }
    if (mode === 'longta' && top.length < k) {
      // rank_bm25 returns k chunks even when fewer have a positive score: the rest in argsort order
      const picked = new Set(top);
      const negatives = [...touched].filter((id) => scores[id]! < 0).sort((a, b2) => (better(a, b2) ? -1 : 1));
      top = top.filter((id) => scores[id]! >= 0);
      for (let id = hi - 1; id >= lo && top.length < k; id--) {
        if (picked.has(id) || !inCorpus(id)) continue;
        top.push(id);
      }
      top.push(...negatives.slice(0, Math.max(0, k - top.length)));
    }
    const out: DocHit[] = top.map((id) => {
      const f = r.files[r.cFile[id]!]!;
      const ui = r.cUnit[id]!;
      const unit = this.unitText(f.hash, ui);
      const start = r.cStart[id]!;
      const end = r.cEnd[id]!;
      const chunk = unit.slice(start, end);
      const snippet = mode === 'longta' ? longtaSnippet(chunk, query, ctx) : bm25Snippet(chunk, tokens, ctx);
      return {
        file: f.file,
        unit: unitLabel(f.kind, ui),
        unitIndex: ui,
        start,
        end,
        score: scores[id] ?? 0,
        snippet,
        chunk: r.cNo[id]!,
      };
    });
    for (const id of touched) scores[id] = 0;
    return out;
  }
}
