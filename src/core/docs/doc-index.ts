/**
 * The SQLite-backed documentation index (issue 4). One cache file per docs root:
 * - `contents` / `units`: extracted units keyed by file content hash (sha256) + extractor version,
 *   so an unchanged file is never re-extracted (a moved or duplicated file is not either);
 * - `files`: the scanned files of the root (size, mtime, hash, or the reason they were skipped);
 * - `rankers` / `postings`: BM25 postings per mode and per file set (fingerprint), loaded lazily
 *   term by term at query time, so a warm open reads almost nothing.
 * Every write is one transaction (WAL, busy timeout), so a build killed halfway leaves the last
 * consistent state and the next build continues; a file that SQLite reports as corrupt is moved
 * aside and rebuilt. Source: spec §2.3 (LongTA units, retriever), issue 4.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, existsSync, rmSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { LoupeInputError, errorMessage } from '../util/errors.ts';
import { RANK_BM25_DEFAULTS, okapiIdf, rawIdf } from './bm25.ts';
import {
  contextWindow,
  findAllCaseInsensitive,
  formatReadPreview,
  formatReadRange,
  longtaSnippet,
  parseRange,
  unitLabel,
} from './format.ts';
import { codebookQueryTerms, codebookTokens, longtaTokens, splitChunks } from './text.ts';
import { unitKindFor } from './units.ts';
import { DEFAULT_PDF_EXTRACTOR, EXTRACTOR_VERSIONS, parsePdfExtractor, type PdfExtractor } from './pdf.ts';
import { CATALOG_VERSION, parseDoc, type ParsedDoc } from './catalog.ts';
import { defaultDocsCacheDir } from './roots.ts';
import type {
  BuildProgress,
  BuildSchedule,
  DocHit,
  DocIndex,
  DocIndexOptions,
  DocUnit,
  IndexReport,
  IndexedFile,
  SearchMode,
  SearchOptions,
  SkippedFile,
  ToolResult,
  ToolScope,
  UnitKind,
} from './types.ts';

import { bufToInt32, bufToUint16, cacheFileFor, isCorruptError, listFiles, normalizeRel, toPosix, typedToBuf } from './cache-file.ts';
import { ExtractPool } from './extract-pool.ts';
import { bm25Snippet, lowerBound, topK, upperBound } from './ranking.ts';
export { extractWorkerPath } from './extract-pool.ts';
export { EXTRACTOR_VERSION, EXTRACTOR_VERSIONS } from './pdf.ts';
/** Bumped when tokenizers / chunking / postings layout change: rankers are rebuilt. */
export const RANKER_VERSION = 3;
const SCHEMA_VERSION = 1;

type RankMode = 'bm25' | 'longta';

interface RankerFile {
  file: string;
  hash: string;
  kind: UnitKind;
  /** chunk id range [lo, hi) */
  lo: number;
  hi: number;
  sumLen: number;
  /** rank_bm25 mean idf over this file's vocabulary with the file as the corpus (longta). */
  avgIdf: number;
}

interface Ranker {
  id: number;
  mode: RankMode;
  n: number;
  avgdl: number;
  averageIdf: number;
  files: RankerFile[];
  byFile: Map<string, number>;
  /** per chunk: file index, unit index, chunk-in-unit, start, end, token length */
  cFile: Int32Array;
  cUnit: Int32Array;
  cNo: Int32Array;
  cStart: Int32Array;
  cEnd: Int32Array;
  cLen: Int32Array;
  postings: Map<string, { ids: Int32Array; tfs: Uint16Array } | null>;
  /** per chunk: rank_bm25's length normalisation k1·(1 − b + b·len/avgdl) at the whole ranker's avgdl, made on first search. */
  norm?: Float64Array;
}

interface FileRow {
  path: string;
  hash: string;
  size: number;
  mtime: number;
  kind: string | null;
  n_units: number;
  note: string | null;
  skipped: string | null;
  /** EXTRACTOR_VERSION that wrote the record; null in caches made before the column existed. */
  version: number | null;
}

const MODE_PARAMS: Record<RankMode, { tokens: (s: string) => string[] }> = {
  bm25: { tokens: codebookTokens },
  longta: { tokens: longtaTokens },
};

class DocIndexImpl implements DocIndex {
  readonly root: string;
  readonly cachePath: string;
  private db!: Database.Database;
  private readonly opts: DocIndexOptions;
  private readonly allow: Set<string> | undefined;
  private readonly chunkChars: number;
  private readonly overlap: number;
  private lastReport: IndexReport | undefined;
  private rankers = new Map<RankMode, Ranker>();
  private unitCache = new Map<string, string[]>();
  private unitLru: string[] = [];
  private scratch = new Float64Array(0);
  /** Chunk ids a search touched (scratch, as long as `scratch`). */
  private touchedBuf = new Int32Array(0);
  private phases: Record<string, number> | undefined;
  /** keyword search: per content hash, the lowercased units joined by "\n" and each unit's start offset */
  private lowerCache = new Map<string, { text: string; starts: Int32Array }>();
  private lowerChars = 0;
  /** The PDF extractor of this index and its extraction version (`EXTRACTOR_VERSIONS`). */
  private readonly pdfExtractor: PdfExtractor;
  private readonly xv: number;
  /** Key of cached catalog parses: the parser's version and the extraction version of the text it parsed. */
  private readonly catalogKey: number;

  constructor(opts: DocIndexOptions) {
    this.opts = opts;
    this.pdfExtractor = opts.pdfExtractor === undefined ? DEFAULT_PDF_EXTRACTOR : parsePdfExtractor(opts.pdfExtractor, 'pdfExtractor');
    this.xv = EXTRACTOR_VERSIONS[this.pdfExtractor];
    this.catalogKey = CATALOG_VERSION * 1000 + this.xv;
    this.root = resolve(opts.root);
    let st;
    try {
      st = statSync(this.root);
    } catch {
      throw new LoupeInputError(opts.root, 'docs root does not exist');
    }
    if (!st.isDirectory()) throw new LoupeInputError(opts.root, 'docs root is not a folder');
    this.chunkChars = opts.chunkChars ?? 500;
    this.overlap = opts.overlap ?? 100;
    if (!(this.chunkChars > 0) || !(this.overlap >= 0) || this.overlap >= this.chunkChars) {
      throw new LoupeInputError('chunkChars/overlap', `need 0 <= overlap < chunkChars (got ${this.chunkChars}/${this.overlap})`);
    }
    if (opts.sources) {
      this.allow = new Set();
      for (const [f, src] of Object.entries(opts.sources)) {
        const rel = normalizeRel(this.root, f);
        if (!rel || rel !== toPosix(f)) throw new LoupeInputError(f, 'document name must be a plain relative path');
        if (!isAbsolute(src)) throw new LoupeInputError(src, `source of ${f} must be an absolute path`);
        this.allow.add(rel);
      }
    } else if (opts.files) {
      this.allow = new Set();
      for (const f of opts.files) {
        const rel = normalizeRel(this.root, f);
        if (!rel) throw new LoupeInputError(f, 'file is outside the docs root');
        this.allow.add(rel);
      }
    }
    // the user's docs cache (what `loupe index` builds by default), so a run reuses an index built ahead of it
    const cacheDir = opts.cacheDir ?? defaultDocsCacheDir();
    mkdirSync(cacheDir, { recursive: true });
    this.cachePath = cacheFileFor(this.root, cacheDir);
    this.openDb();
  }

  private openDb(): void {
    // Another process opening the same new cache at once (two `loupe run`s, a panel and a run) can make the open fail
    // for a moment: a lock held while it creates the schema, or a header it is still writing. Those are retried for up
    // to ~2 s; a file still unreadable after that is corrupt and replaced.
    let lastCorrupt: unknown;
    for (let attempt = 0; attempt < 20; attempt++) {
      try {
        this.db = this.connect();
        return;
      } catch (e) {
        const code = String((e as { code?: unknown }).code ?? '');
        if (isCorruptError(e)) lastCorrupt = e;
        else if (!code.startsWith('SQLITE_BUSY') && !code.startsWith('SQLITE_LOCKED')) throw e;
        if (isCorruptError(e) && attempt >= 2) break;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
      }
    }
    if (!lastCorrupt) this.db = this.connect(); // still locked after ~2 s: the busy timeout's own error, named
    else {
      this.discardCorrupt();
      this.db = this.connect();
    }
  }

  private discardCorrupt(): void {
    try {
      this.db?.close();
    } catch {
      /* already closed */
    }
    const aside = `${this.cachePath}.corrupt-${Date.now()}`;
    try {
      renameSync(this.cachePath, aside);
    } catch {
      rmSync(this.cachePath, { force: true });
    }
    rmSync(`${this.cachePath}-wal`, { force: true });
    rmSync(`${this.cachePath}-shm`, { force: true });
    rmSync(aside, { force: true });
  }

  private connect(): Database.Database {
    const db = new Database(this.cachePath, { timeout: 15000 });
    try {
      db.pragma('busy_timeout = 15000');
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      const migrate = db.transaction(() => {
        // re-checked inside BEGIN IMMEDIATE: another process may have created the schema meanwhile
        if ((db.pragma('user_version', { simple: true }) as number) === SCHEMA_VERSION) return;
        db.exec(`
          DROP TABLE IF EXISTS meta; DROP TABLE IF EXISTS contents; DROP TABLE IF EXISTS units;
          DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS rankers; DROP TABLE IF EXISTS postings;
          CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
          CREATE TABLE contents(hash TEXT PRIMARY KEY, version INT NOT NULL, kind TEXT, n_units INT NOT NULL, note TEXT, error TEXT);
          CREATE TABLE units(hash TEXT NOT NULL, idx INT NOT NULL, text TEXT NOT NULL, PRIMARY KEY(hash, idx)) WITHOUT ROWID;
          CREATE TABLE files(path TEXT PRIMARY KEY, hash TEXT NOT NULL, size INT NOT NULL, mtime REAL NOT NULL,
                             kind TEXT, n_units INT NOT NULL, note TEXT, skipped TEXT, version INT);
          CREATE TABLE rankers(id INTEGER PRIMARY KEY, mode TEXT NOT NULL, fingerprint TEXT NOT NULL, used REAL NOT NULL,
                               n INT NOT NULL, avgdl REAL NOT NULL, average_idf REAL NOT NULL, files TEXT NOT NULL,
                               chunks BLOB NOT NULL, UNIQUE(mode, fingerprint));
          CREATE TABLE postings(ranker INT NOT NULL, term TEXT NOT NULL, ids BLOB NOT NULL, tfs BLOB NOT NULL,
                                PRIMARY KEY(ranker, term)) WITHOUT ROWID;
          PRAGMA user_version = ${SCHEMA_VERSION};
        `);
      });
      if ((db.pragma('user_version', { simple: true }) as number) !== SCHEMA_VERSION) migrate.immediate();
      // Caches made before files.version existed keep working: the column is added (NULL = unknown
      // version, so their skipped / failed files are tried once more).
      const hasVersion = () => (db.prepare('PRAGMA table_info(files)').all() as { name: string }[]).some((c) => c.name === 'version');
      if (!hasVersion()) {
        db.transaction(() => {
          if (!hasVersion()) db.exec('ALTER TABLE files ADD COLUMN version INT');
        }).immediate();
      }
      // the variable catalog (issue 25): one parse per content hash and parser version; added to older caches in place
      db.exec('CREATE TABLE IF NOT EXISTS catalog(hash TEXT NOT NULL, version INT NOT NULL, parsed TEXT NOT NULL, PRIMARY KEY(hash, version)) WITHOUT ROWID');
      db.prepare('SELECT count(*) FROM files').get(); // touches the schema: throws on a corrupt file
      return db;
    } catch (e) {
      db.close();
      throw e;
    }
  }

  /** Runs `fn`; on SQLITE_CORRUPT discards the cache file, reopens and runs it once more. */
  private async withRepair<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (!isCorruptError(e)) throw e;
      this.discardCorrupt();
      this.db = this.connect();
      this.stmts = undefined;
      this.rankers.clear();
      return fn();
    }
  }

  async build(opts: { signal?: AbortSignal; onProgress?: (p: BuildProgress) => void; schedule?: BuildSchedule } = {}): Promise<IndexReport> {
    return this.withRepair(() => this.buildOnce(opts));
  }

  private async buildOnce(opts: { signal?: AbortSignal; onProgress?: (p: BuildProgress) => void; schedule?: BuildSchedule }): Promise<IndexReport> {
    const t0 = performance.now();
    const signal = opts.signal ?? this.opts.signal;
    const progress = opts.onProgress ?? this.opts.onProgress ?? (() => {});
    signal?.throwIfAborted();
    progress({ phase: 'scan', done: 0, total: 0 });
    const sources = this.opts.sources;
    const sourceOf = (rel: string) => sources?.[rel] ?? join(this.root, rel);
    // with named sources nothing under the root is listed or read (issue 36)
    let paths = sources ? Object.keys(sources).filter((r) => existsSync(sources[r]!)).sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : a < b ? -1 : a > b ? 1 : 0)) : listFiles(this.root);
    const missingAllowed: SkippedFile[] = [];
    if (this.allow) {
      const present = new Set(paths);
      paths = paths.filter((p) => this.allow!.has(p));
      for (const a of this.allow) if (!present.has(a)) missingAllowed.push({ file: a, reason: 'file not found' });
    }
    const getFile = this.db.prepare<[string], FileRow>('SELECT * FROM files WHERE path = ?');
    const getContent = this.db.prepare<[string], { version: number; kind: string | null; n_units: number; note: string | null; error: string | null }>(
      'SELECT version, kind, n_units, note, error FROM contents WHERE hash = ?',
    );
    const putFile = this.db.prepare(
      `INSERT OR REPLACE INTO files(path, hash, size, mtime, kind, n_units, note, skipped, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ${this.xv})`,
    );
    const putContent = this.db.prepare('INSERT OR REPLACE INTO contents(hash, version, kind, n_units, note, error) VALUES (?, ?, ?, ?, ?, ?)');
    const delUnits = this.db.prepare('DELETE FROM units WHERE hash = ?');
    const putUnit = this.db.prepare('INSERT INTO units(hash, idx, text) VALUES (?, ?, ?)');
    let extracted = 0;
    let reused = 0;
    const pool = new ExtractPool(this.opts.extractWorkers ?? 1, signal, this.pdfExtractor);
    // ---- issue 23 (first search of a fresh run): the schedule may take a file out of order, and hears when each is current
    const schedule = opts.schedule;
    const ready = (rel: string) => schedule?.fileReady?.(rel);
    const pending = new Set(paths);
    const take = (): string => {
      const pick = schedule?.next?.(pending);
      const rel = pick !== undefined && pending.has(pick) ? pick : pending.values().next().value!;
      pending.delete(rel);
      return rel;
    };
    // ---- end issue 23
    try {
      for (let i = 0; i < paths.length; i++) {
        signal?.throwIfAborted();
        const rel = take();
        progress({ phase: 'extract', done: i, total: paths.length, file: rel });
        signal?.throwIfAborted();
        const abs = sourceOf(rel);
        let st;
        try {
          st = statSync(abs);
        } catch {
          continue;
        }
        if (!st.isFile()) continue; // a FIFO, socket or device is never read
        const row = getFile.get(rel);
        // A file skipped or failed by another extractor version is tried again (a fixed extractor or
        // a newly supported type must not leave it skipped forever).
        const staleSkip = !!row?.skipped && (row.version !== this.xv || (String(row.skipped).startsWith('unsupported file type') && !!unitKindFor(rel)));
        if (row && !staleSkip && row.size === st.size && row.mtime === st.mtimeMs) {
          if (row.hash === '' && row.skipped) {
            reused++;
            ready(rel);
            continue;
          }
          const c = getContent.get(row.hash);
          if (c && c.version === this.xv) {
            reused++;
            ready(rel);
            continue;
          }
        }
        if (!unitKindFor(rel)) {
          // unsupported types are reported without reading them
          const base = rel.slice(rel.lastIndexOf('/') + 1);
          putFile.run(rel, '', st.size, st.mtimeMs, null, 0, null, `unsupported file type "${base.includes('.') ? base.slice(base.lastIndexOf('.')) : '(no extension)'}"`);
          reused++;
          ready(rel);
          continue;
        }
        const data = readFileSync(abs);
        const hash = createHash('sha256').update(data).digest('hex');
        const c = getContent.get(hash);
        if (c && c.version === this.xv && !(staleSkip && c.error)) {
          putFile.run(rel, hash, st.size, st.mtimeMs, c.kind, c.n_units, c.note, c.error);
          reused++;
          ready(rel);
          continue;
        }
        await pool.submit(rel, data, (res) => {
          const units = res.doc?.units ?? [];
          const kind = res.doc?.kind ?? null;
          const note = res.doc?.note ?? null;
          const error = res.doc ? null : (res.error ?? 'extraction failed');
          this.db.transaction(() => {
            delUnits.run(hash);
            units.forEach((u, idx) => putUnit.run(hash, idx, u));
            putContent.run(hash, this.xv, kind, units.length, note, error);
            putFile.run(rel, hash, st.size, st.mtimeMs, kind, units.length, note, error);
          })();
          extracted++;
          ready(rel);
        });
      }
      await pool.drain();
    } finally {
      await pool.settle();
      pool.close();
    }
    // forget files that disappeared. With an allowlist, files outside it are kept: another index of
    // the same root (e.g. the panel's, with every file) shares this cache and still needs them.
    const keep = new Set(paths);
    const stale = this.db
      .prepare<[], { path: string }>('SELECT path FROM files')
      .all()
      .filter((r) => !keep.has(r.path) && (!this.allow || !existsSync(sourceOf(r.path))));
    if (stale.length) {
      const del = this.db.prepare('DELETE FROM files WHERE path = ?');
      this.db.transaction(() => stale.forEach((r) => del.run(r.path)))();
    }
    signal?.throwIfAborted();
    schedule?.extracted?.(); // issue 23
    const rows = this.fileRows(paths);
    const indexed = rows.filter((r) => !r.skipped && r.kind);
    const tIndex = performance.now();
    const phases: Record<string, number> = { extractMs: Math.round(tIndex - t0) };
    for (const mode of ['bm25', 'longta'] as const) {
      signal?.throwIfAborted();
      progress({ phase: 'index', done: mode === 'bm25' ? 0 : 1, total: 2 });
      const tm = performance.now();
      this.rankers.set(mode, this.ensureRanker(mode, indexed, signal));
      phases[`${mode}RankerMs`] = Math.round(performance.now() - tm);
    }
    const tc = performance.now();
    this.catalogOf(indexed);
    phases.catalogMs = Math.round(performance.now() - tc);
    this.gc();
    this.phases = phases;
    progress({ phase: 'done', done: paths.length, total: paths.length });
    this.lastReport = this.makeReport(rows, missingAllowed, extracted, reused, performance.now() - t0);
    return this.lastReport;
  }

  private fileRows(paths: string[]): FileRow[] {
    const get = this.db.prepare<[string], FileRow>('SELECT * FROM files WHERE path = ?');
    const out: FileRow[] = [];
    for (const p of paths) {
      const r = get.get(p);
      if (r) out.push(r);
    }
    return out;
  }

  private makeReport(rows: FileRow[], extraSkipped: SkippedFile[], extracted: number, reused: number, ms: number): IndexReport {
    const files: IndexedFile[] = [];
    const skipped: SkippedFile[] = [...extraSkipped];
    const bm = this.rankers.get('bm25');
    let units = 0;
    for (const r of rows) {
      if (r.skipped || !r.kind) {
        skipped.push({ file: r.path, reason: r.skipped ?? 'not indexed' });
        continue;
      }
      const fi = bm?.byFile.get(r.path);
      const rf = fi !== undefined ? bm!.files[fi] : undefined;
      const f: IndexedFile = { file: r.path, kind: r.kind as UnitKind, units: r.n_units, chunks: rf ? rf.hi - rf.lo : 0, bytes: r.size, hash: r.hash };
      if (r.note) f.note = r.note;
      files.push(f);
      units += r.n_units;
    }
    const rep: IndexReport = { root: this.root, cachePath: this.cachePath, files, skipped, units, chunks: bm?.n ?? 0, extracted, reused, ms: Math.round(ms), pdfExtractor: this.pdfExtractor };
    if (this.phases) rep.phases = this.phases;
    return rep;
  }

  private fingerprint(mode: RankMode, files: FileRow[]): string {
    const h = createHash('sha256');
    // the units a ranker indexes depend on the extraction version too (the same file hash, other text)
    h.update(`${RANKER_VERSION}|${mode}|${mode === 'longta' ? '500/100' : `${this.chunkChars}/${this.overlap}`}|x${this.xv}\n`);
    for (const f of files) h.update(`${f.path}\t${f.hash}\n`);
    return h.digest('hex');
  }

  private ensureRanker(mode: RankMode, files: FileRow[], signal?: AbortSignal): Ranker {
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
      rfiles.push({ file: f.path, hash: f.hash, kind: f.kind as UnitKind, lo, hi: cFile.length, sumLen, avgIdf: fileTerms.length ? idfSum / fileTerms.length : 0 });
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
    this.db.transaction(() => {
      // another process may have written the same ranker meanwhile: same fingerprint, same content
      if (this.db.prepare<[string, string], { id: number }>('SELECT id FROM rankers WHERE mode = ? AND fingerprint = ?').get(mode, fp)) {
        raced = true;
        return;
      }
      const r = this.db
        .prepare('INSERT INTO rankers(mode, fingerprint, used, n, avgdl, average_idf, files, chunks) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
        .run(mode, fp, Date.now(), n, avgdl, averageIdf, JSON.stringify(rfiles), typedToBuf(chunkBlob));
      rid = Number(r.lastInsertRowid);
      for (const [t, p] of acc) ins.run(rid, t, typedToBuf(Int32Array.from(p.ids)), typedToBuf(Uint16Array.from(p.tfs)));
    }).immediate();
    if (raced) return this.loadRanker(mode, fp)!;
    return this.rankerFrom(rid, mode, n, avgdl, averageIdf, rfiles, chunkBlob);
  }

  private rankerFrom(id: number, mode: RankMode, n: number, avgdl: number, averageIdf: number, files: RankerFile[], blob: Int32Array): Ranker {
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

  private loadRanker(mode: RankMode, fp: string): Ranker | undefined {
    const r = this.db
      .prepare<[string, string], { id: number; n: number; avgdl: number; average_idf: number; files: string; chunks: Buffer }>(
        'SELECT id, n, avgdl, average_idf, files, chunks FROM rankers WHERE mode = ? AND fingerprint = ?',
      )
      .get(mode, fp);
    if (!r) return undefined;
    const cached = this.rankers.get(mode);
    if (cached && cached.id === r.id) return cached;
    this.db.prepare('UPDATE rankers SET used = ? WHERE id = ?').run(Date.now(), r.id);
    return this.rankerFrom(r.id, mode, r.n, r.avgdl, r.average_idf, JSON.parse(r.files) as RankerFile[], bufToInt32(r.chunks));
  }

  /** Keeps the 3 most recently used rankers per mode and drops units no file refers to. */
  private gc(): void {
    const old = this.db
      .prepare<[], { id: number }>(
        `SELECT id FROM rankers r WHERE (SELECT count(*) FROM rankers q WHERE q.mode = r.mode AND q.used > r.used) >= 3`,
      )
      .all();
    const orphan = this.db
      .prepare<[number], { hash: string }>('SELECT hash FROM contents WHERE version <> ? OR hash NOT IN (SELECT hash FROM files)')
      .all(this.xv);
    if (!old.length && !orphan.length) return;
    // units of content still referenced by a live ranker stay (a ranker may point at an older version of a file)
    const live = new Set<string>();
    for (const row of this.db.prepare<[], { id: number; files: string }>('SELECT id, files FROM rankers').all()) {
      if (old.some((o) => o.id === row.id)) continue;
      for (const f of JSON.parse(row.files) as RankerFile[]) live.add(f.hash);
    }
    this.db.transaction(() => {
      for (const o of old) {
        this.db.prepare('DELETE FROM postings WHERE ranker = ?').run(o.id);
        this.db.prepare('DELETE FROM rankers WHERE id = ?').run(o.id);
      }
      for (const o of orphan) {
        if (live.has(o.hash)) continue;
        this.db.prepare('DELETE FROM units WHERE hash = ?').run(o.hash);
        this.db.prepare('DELETE FROM contents WHERE hash = ?').run(o.hash);
        this.db.prepare('DELETE FROM catalog WHERE hash = ?').run(o.hash);
      }
      this.db.prepare('DELETE FROM catalog WHERE version <> ?').run(this.catalogKey);
    })();
  }

  // ---------------------------------------------------------------- reading

  private ranker(mode: RankMode): Ranker {
    const r = this.rankers.get(mode);
    if (!r) throw new LoupeInputError(this.root, 'documentation index not built yet: call build() first');
    return r;
  }

  /** Statements of the search path, prepared once per connection (a prepare costs more than the read itself). */
  private stmts: { postings: Database.Statement<[number, string], { ids: Buffer; tfs: Buffer }>; unit: Database.Statement<[string, number], { text: string }> } | undefined;
  private get searchStmts(): NonNullable<DocIndexImpl['stmts']> {
    return (this.stmts ??= {
      postings: this.db.prepare<[number, string], { ids: Buffer; tfs: Buffer }>('SELECT ids, tfs FROM postings WHERE ranker = ? AND term = ?'),
      unit: this.db.prepare<[string, number], { text: string }>('SELECT text FROM units WHERE hash = ? AND idx = ?'),
    });
  }

  private postingsOf(r: Ranker, term: string): { ids: Int32Array; tfs: Uint16Array } | null {
    const hit = r.postings.get(term);
    if (hit !== undefined) return hit;
    const row = this.searchStmts.postings.get(r.id, term);
    const p = row ? { ids: bufToInt32(row.ids), tfs: bufToUint16(row.tfs) } : null;
    if (r.postings.size > 20000) r.postings.clear();
    r.postings.set(term, p);
    return p;
  }

  private unitsOfHash(hash: string): string[] {
    const hit = this.unitCache.get(hash);
    if (hit) return hit;
    const units = this.db
      .prepare<[string], { text: string }>('SELECT text FROM units WHERE hash = ? ORDER BY idx')
      .all(hash)
      .map((r) => r.text);
    this.unitCache.set(hash, units);
    this.unitLru.push(hash);
    if (this.unitLru.length > 64) this.unitCache.delete(this.unitLru.shift()!);
    return units;
  }

  private lowerOf(hash: string): { text: string; starts: Int32Array } {
    const hit = this.lowerCache.get(hash);
    if (hit) {
      // refresh LRU position
      this.lowerCache.delete(hash);
      this.lowerCache.set(hash, hit);
      return hit;
    }
    const units = this.db
      .prepare<[string], { text: string }>('SELECT text FROM units WHERE hash = ? ORDER BY idx')
      .all(hash)
      .map((r) => r.text);
    const lower = units.map((u) => u.toLowerCase());
    const starts = new Int32Array(units.length);
    let off = 0;
    lower.forEach((u, i) => {
      starts[i] = off;
      off += u.length + 1;
    });
    const entry = { text: lower.join('\n'), starts };
    this.lowerCache.set(hash, entry);
    this.lowerChars += entry.text.length;
    for (const [k, v] of this.lowerCache) {
      if (this.lowerChars <= MAX_KEYWORD_CACHE_CHARS || k === hash) break;
      this.lowerCache.delete(k);
      this.lowerChars -= v.text.length;
    }
    return entry;
  }

  private unitText(hash: string, idx: number): string {
    const cached = this.unitCache.get(hash);
    if (cached) return cached[idx] ?? '';
    return this.searchStmts.unit.get(hash, idx)?.text ?? '';
  }

  /** Files (relative) visible under the index allowlist and an optional per-call scope. */
  private visible(scope?: string[]): Set<string> | undefined {
    if (!scope) return this.allow;
    const s = new Set<string>();
    for (const f of scope) {
      const rel = normalizeRel(this.root, f);
      if (rel && (!this.allow || this.allow.has(rel))) s.add(rel);
    }
    return s;
  }

  private fileRow(rel: string): FileRow | undefined {
    return this.db.prepare<[string], FileRow>('SELECT * FROM files WHERE path = ?').get(rel);
  }

  /** Parsed variable definitions of the given files (cached per content hash; parsed when missing). */
  private catalogOf(rows: FileRow[]): Array<ParsedDoc & { doc: string }> {
    const get = this.db.prepare<[string, number], { parsed: string }>('SELECT parsed FROM catalog WHERE hash = ? AND version = ?');
    const put = this.db.prepare('INSERT OR REPLACE INTO catalog(hash, version, parsed) VALUES (?, ?, ?)');
    const out: Array<ParsedDoc & { doc: string }> = [];
    for (const r of rows) {
      if (r.skipped || !r.kind) continue;
      const hit = get.get(r.hash, this.catalogKey);
      let p: ParsedDoc;
      if (hit) p = JSON.parse(hit.parsed) as ParsedDoc;
      else {
        try {
          p = parseDoc(r.path, this.unitsOfHash(r.hash), r.kind as UnitKind);
        } catch (e) {
          p = { parser: null, variables: [], error: `catalog parser failed: ${errorMessage(e)}` };
        }
        put.run(r.hash, this.catalogKey, JSON.stringify(p));
      }
      // the cached parse is per content: the same bytes under another path name that path
      for (const v of p.variables) v.doc = r.path;
      out.push({ ...p, doc: r.path });
    }
    return out;
  }

  catalog(): Array<ParsedDoc & { doc: string }> {
    const rows = this.db.prepare<[], FileRow>('SELECT * FROM files ORDER BY path').all().filter((r) => !this.allow || this.allow.has(r.path));
    return this.catalogOf(rows);
  }

  units(file: string): DocUnit[] {
    const rel = normalizeRel(this.root, file);
    const row = rel && (!this.allow || this.allow.has(rel)) ? this.fileRow(rel) : undefined;
    if (!row) throw new LoupeInputError(file, 'not an indexed document of this root');
    if (row.skipped || !row.kind) throw new LoupeInputError(file, `not indexed: ${row.skipped ?? 'unknown reason'}`);
    return this.unitsOfHash(row.hash).map((text, index) => ({ index, label: unitLabel(row.kind as UnitKind, index), text }));
  }

  /** Resolves a tool's doc path against the allowlist; returns the row or the text the agent sees. */
  private toolDoc(path: string, scope?: ToolScope): { rel: string; row: FileRow } | { error: string } {
    const rel = normalizeRel(this.root, path);
    const vis = this.visible(scope?.files);
    if (!rel || (vis && !vis.has(rel))) return { error: `Error: document not found: ${path}` };
    const row = this.fileRow(rel);
    if (!row) return { error: `Error: document not found: ${path}` };
    if (!unitKindFor(rel)) return { error: `Unsupported file type: ${path}` };
    if (row.skipped || !row.kind) return { error: `Error: cannot read ${path}: ${row.skipped ?? 'not indexed'}` };
    return { rel, row };
  }

  readDoc(path: string, range?: string, scope?: ToolScope): ToolResult {
    const d = this.toolDoc(path, scope);
    if ('error' in d) return { text: d.error, hits: [] };
    const kind = d.row.kind as UnitKind;
    const units = this.unitsOfHash(d.row.hash);
    const hit = (i: number): DocHit => ({ file: d.rel, unit: unitLabel(kind, i), unitIndex: i, start: 0, end: units[i]!.length, score: 0, snippet: units[i]!.slice(0, 200) });
    if (range === undefined || range.trim() === '') {
      return { text: formatReadPreview(path, kind, units), hits: units.slice(0, 5).map((_, i) => hit(i)) };
    }
    const idx = parseRange(range);
    if (!idx) return { text: `Error: invalid range '${range}'. Use one-based ranges like '1-3,5'.`, hits: [] };
    const valid = idx.filter((i) => i >= 1 && i <= units.length);
    return { text: formatReadRange(path, kind, valid, units), hits: valid.map((i) => hit(i - 1)) };
  }

  searchDoc(keyword: string, path?: string, maxMatches = 5, contextChars = 150, scope?: ToolScope): ToolResult {
    const limit = maxMatches > 0 ? maxMatches : Infinity;
    const targets: Array<{ rel: string; row: FileRow; shown: string }> = [];
    if (path !== undefined && path !== '') {
      const d = this.toolDoc(path, scope);
      if ('error' in d) return { text: d.error, hits: [] };
      targets.push({ ...d, shown: path });
    } else {
      const vis = this.visible(scope?.files);
      for (const r of this.db.prepare<[], FileRow>('SELECT * FROM files ORDER BY path').all()) {
        if (r.skipped || !r.kind || (vis && !vis.has(r.path))) continue;
        targets.push({ rel: r.path, row: r, shown: r.path });
      }
      targets.sort((a, b) => (a.rel.toLowerCase() < b.rel.toLowerCase() ? -1 : a.rel.toLowerCase() > b.rel.toLowerCase() ? 1 : 0));
    }
    const hits: DocHit[] = [];
    const lines: string[] = [];
    let total = 0;
    const needle = keyword.toLowerCase();
    const simple = needle.length === keyword.length && !/[\n\r]/.test(keyword) && needle !== '';
    for (const t of targets) {
      const kind = t.row.kind as UnitKind;
      const emit = (ui: number, text: string, s: number, e: number) => {
        total++;
        if (hits.length >= limit) return;
        const w = contextWindow(text, s, e, contextChars);
        hits.push({ file: t.rel, unit: unitLabel(kind, ui), unitIndex: ui, start: s, end: e, score: 1, snippet: w.snippet });
        lines.push(`${path ? '' : `[${t.shown}] `}${unitLabel(kind, ui)}: ...${w.snippet}...`);
      };
      if (simple) {
        // fast path: one indexOf scan over the file's lowercased units, offsets mapped back to units
        const low = this.lowerOf(t.row.hash);
        let at = low.text.indexOf(needle);
        while (at >= 0) {
          const ui = upperBound(low.starts, at) - 1;
          const unitEnd = ui + 1 < low.starts.length ? low.starts[ui + 1]! - 1 : low.text.length;
          const text = this.unitText(t.row.hash, ui);
          if (text.length === unitEnd - low.starts[ui]!) {
            const s = at - low.starts[ui]!;
            emit(ui, text, s, s + needle.length);
            at = low.text.indexOf(needle, at + needle.length);
          } else {
            // lowercasing changed this unit's length (e.g. "İ"): offsets differ, match the unit itself
            for (const [a, b] of findAllCaseInsensitive(text, keyword)) emit(ui, text, a, b);
            at = low.text.indexOf(needle, unitEnd + 1);
          }
        }
        continue;
      }
      const units = this.unitsOfHash(t.row.hash);
      for (let ui = 0; ui < units.length; ui++) {
        const text = units[ui]!;
        for (const [s, e] of findAllCaseInsensitive(text, keyword)) emit(ui, text, s, e);
      }
    }
    const where = path ? `[${path}] ` : '';
    if (!hits.length) return { text: `${where}No matches for '${keyword}'${path ? '' : ` in ${targets.length} documents`}.`, hits };
    const more = total > hits.length ? ` (showing the first ${hits.length} of ${total})` : '';
    const head = path ? `[${path}] Found ${hits.length} matches for '${keyword}'.${more}` : `Found ${hits.length} matches for '${keyword}' across ${new Set(hits.map((h) => h.file)).size} documents.${more}`;
    return { text: `${head}\n${lines.join('\n')}`, hits };
  }

  retrieve(query: string, path?: string, k = 5, opts: ToolScope & { mode?: 'bm25' | 'longta'; contextChars?: number } = {}): ToolResult {
    const mode = opts.mode ?? 'longta';
    let files: string[] | undefined;
    if (path !== undefined && path !== '') {
      const d = this.toolDoc(path, opts);
      if ('error' in d) return { text: d.error, hits: [] };
      files = [d.rel];
    } else {
      const vis = this.visible(opts.files);
      files = vis ? [...vis] : undefined;
    }
    const hits = this.rank(mode, query, k, files, opts.contextChars ?? 200);
    if (!hits.length) return { text: path ? `[${path}] No results for '${query}'.` : `No results for '${query}'.`, hits };
    const lines = hits.map((h) => `${path ? '' : `[${h.file}] `}${h.unit} (chunk ${h.chunk ?? 0}): ...${h.snippet}...`);
    return { text: lines.join('\n'), hits };
  }

  search(query: string, opts: SearchOptions = {}): DocHit[] {
    const mode: SearchMode = opts.mode ?? 'bm25';
    const top = opts.top ?? 10;
    const vis = this.visible(opts.files);
    if (mode === 'keyword') return this.searchDoc(query, undefined, top, 80, { files: vis ? [...vis] : undefined }).hits;
    return this.rank(mode, query, top, vis ? [...vis] : undefined, mode === 'longta' ? 200 : 120, opts.expand ?? true);
  }

  /**
   * BM25 over chunks. `longta`: the corpus is exactly the selected files (one file → LongTA's per-doc
   * retriever; all files → one corpus), rank_bm25 scoring and tie order, zero-score chunks can fill
   * the top k. `bm25`: corpus statistics of the whole index, only chunks with a positive score.
   */
  private rank(mode: RankMode, query: string, k: number, files: string[] | undefined, ctx: number, expand = true): DocHit[] {
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
      const idf = weight * (mode === 'bm25' ? Math.log(1 + (r.n - df + 0.5) / (df + 0.5)) : okapiIdf(n, df, averageIdf));
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
    let top = topK(touched, mode === 'bm25' ? k * 4 + 16 : k, better, mode === 'bm25' ? (id) => scores[id]! > 0 : undefined);
    if (mode === 'bm25') {
      // default mode: one hit per unit (its best chunk); overlapping chunks of a page would repeat it
      const seenUnit = new Set<string>();
      top = top.filter((id) => {
        const key = `${r.cFile[id]}:${r.cUnit[id]}`;
        if (seenUnit.has(key)) return false;
        seenUnit.add(key);
        return true;
      }).slice(0, k);
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
      return { file: f.file, unit: unitLabel(f.kind, ui), unitIndex: ui, start, end, score: scores[id] ?? 0, snippet, chunk: r.cNo[id]! };
    });
    for (const id of touched) scores[id] = 0;
    return out;
  }

  report(): IndexReport {
    if (this.lastReport) return this.lastReport;
    const paths = this.db
      .prepare<[], { path: string }>('SELECT path FROM files')
      .all()
      .map((r) => r.path)
      .filter((p) => !this.allow || this.allow.has(p));
    paths.sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1));
    return this.makeReport(this.fileRows(paths), [], 0, 0, 0);
  }

  close(): void {
    this.rankers.clear();
    this.unitCache.clear();
    if (this.db.open) this.db.close();
  }
}

/** Characters of lowercased unit text kept in memory for keyword search (about 2 bytes each). */
const MAX_KEYWORD_CACHE_CHARS = 48_000_000;

/**
 * Opens the documentation index of `opts.root` (see `index.ts`).
 * @throws LoupeInputError when the root is missing / not a folder or an allowlisted file escapes it.
 */
export function openDocIndexSync(opts: DocIndexOptions): DocIndex & { cachePath: string } {
  return new DocIndexImpl(opts);
}

/** True when a cache file for `root` exists in `cacheDir`. */
export function hasDocCache(root: string, cacheDir: string): boolean {
  return existsSync(cacheFileFor(resolve(root), cacheDir));
}
