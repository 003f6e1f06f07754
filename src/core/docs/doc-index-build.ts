/**
 * The documentation index's build (issue 40 split of `doc-index.ts`): scans the root, extracts new or changed files in
 * the extraction pool (reusing units by content hash), builds the rankers and reports what was indexed or skipped.
 * Every write is one transaction, so a build killed halfway leaves the last consistent state. Source: issue 4.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { unitKindFor } from './units.ts';
import type { BuildProgress, BuildSchedule, IndexReport, IndexedFile, SkippedFile, UnitKind } from './types.ts';

import { listFiles } from './cache-file.ts';
import { ExtractPool } from './extract-pool.ts';
import { type FileRow } from './doc-index-cache.ts';
import { DocIndexRanking } from './doc-index-ranking.ts';

/** The build of the index and its report. */
export abstract class DocIndexBuilder extends DocIndexRanking {
  async build(
    opts: { signal?: AbortSignal; onProgress?: (p: BuildProgress) => void; schedule?: BuildSchedule } = {},
  ): Promise<IndexReport> {
    return this.withRepair(() => this.buildOnce(opts));
  }

  protected async buildOnce(opts: {
    signal?: AbortSignal;
    onProgress?: (p: BuildProgress) => void;
    schedule?: BuildSchedule;
  }): Promise<IndexReport> {
    const t0 = performance.now();
    const signal = opts.signal ?? this.opts.signal;
    const progress = opts.onProgress ?? this.opts.onProgress ?? (() => {});
    signal?.throwIfAborted();
    progress({ phase: 'scan', done: 0, total: 0 });
    const sources = this.opts.sources;
    const sourceOf = (rel: string) => sources?.[rel] ?? join(this.root, rel);
    // with named sources nothing under the root is listed or read (issue 36)
    let paths = sources
      ? Object.keys(sources)
          .filter((r) => existsSync(sources[r]!))
          .sort((a, b) =>
            a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : a < b ? -1 : a > b ? 1 : 0,
          )
      : listFiles(this.root);
    const missingAllowed: SkippedFile[] = [];
    if (this.allow) {
      const present = new Set(paths);
      paths = paths.filter((p) => this.allow!.has(p));
      for (const a of this.allow) if (!present.has(a)) missingAllowed.push({ file: a, reason: 'file not found' });
    }
    const getFile = this.db.prepare<[string], FileRow>('SELECT * FROM files WHERE path = ?');
    const getContent = this.db.prepare<
      [string],
      { version: number; kind: string | null; n_units: number; note: string | null; error: string | null }
    >('SELECT version, kind, n_units, note, error FROM contents WHERE hash = ?');
    const putFile = this.db.prepare(
      `INSERT OR REPLACE INTO files(path, hash, size, mtime, kind, n_units, note, skipped, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ${this.xv})`,
    );
    const putContent = this.db.prepare(
      'INSERT OR REPLACE INTO contents(hash, version, kind, n_units, note, error) VALUES (?, ?, ?, ?, ?, ?)',
    );
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
        const staleSkip =
          !!row?.skipped &&
          (row.version !== this.xv || (String(row.skipped).startsWith('unsupported file type') && !!unitKindFor(rel)));
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
          putFile.run(
            rel,
            '',
            st.size,
            st.mtimeMs,
            null,
            0,
            null,
            `unsupported file type "${base.includes('.') ? base.slice(base.lastIndexOf('.')) : '(no extension)'}"`,
          );
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

  protected fileRows(paths: string[]): FileRow[] {
    const get = this.db.prepare<[string], FileRow>('SELECT * FROM files WHERE path = ?');
    const out: FileRow[] = [];
    for (const p of paths) {
      const r = get.get(p);
      if (r) out.push(r);
    }
    return out;
  }

  protected makeReport(
    rows: FileRow[],
    extraSkipped: SkippedFile[],
    extracted: number,
    reused: number,
    ms: number,
  ): IndexReport {
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
      const f: IndexedFile = {
        file: r.path,
        kind: r.kind as UnitKind,
        units: r.n_units,
        chunks: rf ? rf.hi - rf.lo : 0,
        bytes: r.size,
        hash: r.hash,
      };
      if (r.note) f.note = r.note;
      files.push(f);
      units += r.n_units;
    }
    const rep: IndexReport = {
      root: this.root,
      cachePath: this.cachePath,
      files,
      skipped,
      units,
      chunks: bm?.n ?? 0,
      extracted,
      reused,
      ms: Math.round(ms),
      pdfExtractor: this.pdfExtractor,
    };
    if (this.phases) rep.phases = this.phases;
    return rep;
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
}
