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
 *
 * Split by responsibility (issue 40): `doc-index-cache.ts` (cache file lifecycle), `doc-index-build.ts` (build),
 * `doc-index-ranking.ts` (rankers), and here the search tools over them.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { LoupeInputError } from '../util/errors.ts';
import {
  contextWindow,
  findAllCaseInsensitive,
  formatReadPreview,
  formatReadRange,
  parseRange,
  unitLabel,
} from './format.ts';
import { unitKindFor } from './units.ts';
import { type ParsedDoc } from './catalog.ts';
import type {
  DocHit,
  DocIndex,
  DocIndexOptions,
  DocUnit,
  SearchMode,
  SearchOptions,
  ToolResult,
  ToolScope,
  UnitKind,
} from './types.ts';

import { cacheFileFor, normalizeRel } from './cache-file.ts';
import { upperBound } from './ranking.ts';
import { type FileRow } from './doc-index-cache.ts';
import { DocIndexBuilder } from './doc-index-build.ts';
export { RANKER_VERSION } from './doc-index-cache.ts';
export { extractWorkerPath } from './extract-pool.ts';
export { EXTRACTOR_VERSION, EXTRACTOR_VERSIONS } from './pdf.ts';

class DocIndexImpl extends DocIndexBuilder implements DocIndex {
  catalog(): Array<ParsedDoc & { doc: string }> {
    const rows = this.db
      .prepare<[], FileRow>('SELECT * FROM files ORDER BY path')
      .all()
      .filter((r) => !this.allow || this.allow.has(r.path));
    return this.catalogOf(rows);
  }

  units(file: string): DocUnit[] {
    const rel = normalizeRel(this.root, file);
    const row = rel && (!this.allow || this.allow.has(rel)) ? this.fileRow(rel) : undefined;
    if (!row) throw new LoupeInputError(file, 'not an indexed document of this root');
    if (row.skipped || !row.kind) throw new LoupeInputError(file, `not indexed: ${row.skipped ?? 'unknown reason'}`);
    return this.unitsOfHash(row.hash).map((text, index) => ({
      index,
      label: unitLabel(row.kind as UnitKind, index),
      text,
    }));
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
    const hit = (i: number): DocHit => ({
      file: d.rel,
      unit: unitLabel(kind, i),
      unitIndex: i,
      start: 0,
      end: units[i]!.length,
      score: 0,
      snippet: units[i]!.slice(0, 200),
    });
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
      targets.sort((a, b) =>
        a.rel.toLowerCase() < b.rel.toLowerCase() ? -1 : a.rel.toLowerCase() > b.rel.toLowerCase() ? 1 : 0,
      );
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
        hits.push({
          file: t.rel,
          unit: unitLabel(kind, ui),
          unitIndex: ui,
          start: s,
          end: e,
          score: 1,
          snippet: w.snippet,
        });
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
    if (!hits.length) {
      return { text: `${where}No matches for '${keyword}'${path ? '' : ` in ${targets.length} documents`}.`, hits };
    }
    const more = total > hits.length ? ` (showing the first ${hits.length} of ${total})` : '';
    const head = path
      ? `[${path}] Found ${hits.length} matches for '${keyword}'.${more}`
      : `Found ${hits.length} matches for '${keyword}' across ${new Set(hits.map((h) => h.file)).size} documents.${more}`;
    return { text: `${head}\n${lines.join('\n')}`, hits };
  }

  retrieve(
    query: string,
    path?: string,
    k = 5,
    opts: ToolScope & { mode?: 'bm25' | 'longta'; contextChars?: number } = {},
  ): ToolResult {
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
    if (!hits.length) {
      return { text: path ? `[${path}] No results for '${query}'.` : `No results for '${query}'.`, hits };
    }
    const lines = hits.map((h) => `${path ? '' : `[${h.file}] `}${h.unit} (chunk ${h.chunk ?? 0}): ...${h.snippet}...`);
    return { text: lines.join('\n'), hits };
  }

  search(query: string, opts: SearchOptions = {}): DocHit[] {
    const mode: SearchMode = opts.mode ?? 'bm25';
    const top = opts.top ?? 10;
    const vis = this.visible(opts.files);
    if (mode === 'keyword') {
      return this.searchDoc(query, undefined, top, 80, { files: vis ? [...vis] : undefined }).hits;
    }
    return this.rank(mode, query, top, vis ? [...vis] : undefined, mode === 'longta' ? 200 : 120, opts.expand ?? true);
  }
}

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
