/**
 * The documentation index's cache file and its lifecycle (issue 40 split of `doc-index.ts`): the options checked and
 * the cache opened (retried while another process creates it, a corrupt file moved aside and rebuilt), its schema,
 * garbage collection of old rankers and orphaned units, the in-memory unit caches, and closing. The build
 * (`doc-index-build.ts`), the rankers (`doc-index-ranking.ts`) and the search tools (`doc-index.ts`) extend it.
 * Source: issue 4 (cache), spec §2.3.
 */
import { mkdirSync, renameSync, statSync, rmSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { LoupeInputError, errorMessage } from '../util/errors.ts';
import { codebookTokens, longtaTokens } from './text.ts';
import { DEFAULT_PDF_EXTRACTOR, EXTRACTOR_VERSIONS, parsePdfExtractor, type PdfExtractor } from './pdf.ts';
import { CATALOG_VERSION, parseDoc, type ParsedDoc } from './catalog.ts';
import { defaultDocsCacheDir } from './roots.ts';
import type { DocIndexOptions, IndexReport, UnitKind } from './types.ts';

import { cacheFileFor, isCorruptError, normalizeRel, toPosix } from './cache-file.ts';

/** Bumped when tokenizers / chunking / postings layout change: rankers are rebuilt. */
export const RANKER_VERSION = 3;
export const SCHEMA_VERSION = 1;

export type RankMode = 'bm25' | 'longta';

export interface RankerFile {
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

export interface Ranker {
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

export interface FileRow {
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

export const MODE_PARAMS: Record<RankMode, { tokens: (s: string) => string[] }> = {
  bm25: { tokens: codebookTokens },
  longta: { tokens: longtaTokens },
};

/** Characters of lowercased unit text kept in memory for keyword search (about 2 bytes each). */
export const MAX_KEYWORD_CACHE_CHARS = 48_000_000;

/** Statements of the search path, prepared once per connection. */
export interface SearchStmts {
  postings: Database.Statement<[number, string], { ids: Buffer; tfs: Buffer }>;
  unit: Database.Statement<[string, number], { text: string }>;
}

/** The cache file of one docs root: opened, repaired, collected and closed; its unit caches. */
export abstract class DocIndexCache {
  readonly root: string;
  readonly cachePath: string;
  protected db!: Database.Database;
  protected readonly opts: DocIndexOptions;
  protected readonly allow: Set<string> | undefined;
  protected readonly chunkChars: number;
  protected readonly overlap: number;
  protected lastReport: IndexReport | undefined;
  protected rankers = new Map<RankMode, Ranker>();
  protected unitCache = new Map<string, string[]>();
  protected unitLru: string[] = [];
  protected scratch = new Float64Array(0);
  /** Chunk ids a search touched (scratch, as long as `scratch`). */
  protected touchedBuf = new Int32Array(0);
  protected phases: Record<string, number> | undefined;
  /** keyword search: per content hash, the lowercased units joined by "\n" and each unit's start offset */
  protected lowerCache = new Map<string, { text: string; starts: Int32Array }>();
  protected lowerChars = 0;
  /** The PDF extractor of this index and its extraction version (`EXTRACTOR_VERSIONS`). */
  protected readonly pdfExtractor: PdfExtractor;
  protected readonly xv: number;
  /** Key of cached catalog parses: the parser's version and the extraction version of the text it parsed. */
  protected readonly catalogKey: number;

  constructor(opts: DocIndexOptions) {
    this.opts = opts;
    this.pdfExtractor =
      opts.pdfExtractor === undefined ? DEFAULT_PDF_EXTRACTOR : parsePdfExtractor(opts.pdfExtractor, 'pdfExtractor');
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
      throw new LoupeInputError(
        'chunkChars/overlap',
        `need 0 <= overlap < chunkChars (got ${this.chunkChars}/${this.overlap})`,
      );
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

  protected openDb(): void {
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
    if (!lastCorrupt) {
      this.db = this.connect();
    } // still locked after ~2 s: the busy timeout's own error, named
    else {
      this.discardCorrupt();
      this.db = this.connect();
    }
  }

  protected discardCorrupt(): void {
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

  protected connect(): Database.Database {
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
      const hasVersion = () =>
        (db.prepare('PRAGMA table_info(files)').all() as { name: string }[]).some((c) => c.name === 'version');
      if (!hasVersion()) {
        db.transaction(() => {
          if (!hasVersion()) db.exec('ALTER TABLE files ADD COLUMN version INT');
        }).immediate();
      }
      // the variable catalog (issue 25): one parse per content hash and parser version; added to older caches in place
      db.exec(
        'CREATE TABLE IF NOT EXISTS catalog(hash TEXT NOT NULL, version INT NOT NULL, parsed TEXT NOT NULL, PRIMARY KEY(hash, version)) WITHOUT ROWID',
      );
      db.prepare('SELECT count(*) FROM files').get(); // touches the schema: throws on a corrupt file
      return db;
    } catch (e) {
      db.close();
      throw e;
    }
  }

  /** Runs `fn`; on SQLITE_CORRUPT discards the cache file, reopens and runs it once more. */
  protected async withRepair<T>(fn: () => Promise<T>): Promise<T> {
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

  /** Keeps the 3 most recently used rankers per mode and drops units no file refers to. */
  protected gc(): void {
    const old = this.db
      .prepare<[], { id: number }>(
        `SELECT id FROM rankers r WHERE (SELECT count(*) FROM rankers q WHERE q.mode = r.mode AND q.used > r.used) >= 3`,
      )
      .all();
    const orphan = this.db
      .prepare<[number], { hash: string }>(
        'SELECT hash FROM contents WHERE version <> ? OR hash NOT IN (SELECT hash FROM files)',
      )
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

  /** Statements of the search path, prepared once per connection (a prepare costs more than the read itself). */
  protected stmts: SearchStmts | undefined;
  protected get searchStmts(): SearchStmts {
    return (this.stmts ??= {
      postings: this.db.prepare<[number, string], { ids: Buffer; tfs: Buffer }>(
        'SELECT ids, tfs FROM postings WHERE ranker = ? AND term = ?',
      ),
      unit: this.db.prepare<[string, number], { text: string }>('SELECT text FROM units WHERE hash = ? AND idx = ?'),
    });
  }

  protected unitsOfHash(hash: string): string[] {
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

  protected lowerOf(hash: string): { text: string; starts: Int32Array } {
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

  protected unitText(hash: string, idx: number): string {
    const cached = this.unitCache.get(hash);
    if (cached) return cached[idx] ?? '';
    return this.searchStmts.unit.get(hash, idx)?.text ?? '';
  }

  /** Files (relative) visible under the index allowlist and an optional per-call scope. */
  protected visible(scope?: string[]): Set<string> | undefined {
    if (!scope) return this.allow;
    const s = new Set<string>();
    for (const f of scope) {
      const rel = normalizeRel(this.root, f);
      if (rel && (!this.allow || this.allow.has(rel))) s.add(rel);
    }
    return s;
  }

  protected fileRow(rel: string): FileRow | undefined {
    return this.db.prepare<[string], FileRow>('SELECT * FROM files WHERE path = ?').get(rel);
  }

  /** Parsed variable definitions of the given files (cached per content hash; parsed when missing). */
  protected catalogOf(rows: FileRow[]): Array<ParsedDoc & { doc: string }> {
    const get = this.db.prepare<[string, number], { parsed: string }>(
      'SELECT parsed FROM catalog WHERE hash = ? AND version = ?',
    );
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

  close(): void {
    this.rankers.clear();
    this.unitCache.clear();
    if (this.db.open) this.db.close();
  }
}
