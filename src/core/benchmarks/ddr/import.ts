/**
 * Imports a folder of CSV / CSV.gz tables into one SQLite database, with progress. Tables in a
 * subfolder are named `<folder>_<file>` (DDR-Bench `scripts/construct_mimic_sqlite.py`: table name =
 * module_file, e.g. `hosp_admissions`); top-level files keep their stem. Column types are inferred
 * from the first 2,000 rows (INTEGER / REAL / TEXT); empty cells become NULL.
 * Source: spec §3.2 (DDR databases), issue 3 "Importing CSV tables into SQLite".
 */
import { quoteIdent } from '../../util/sql.ts';
import {
  createReadStream,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, basename, relative, sep } from 'node:path';
import { createGunzip } from 'node:zlib';
import { parse } from 'csv-parse';
import Database from 'better-sqlite3';
import { LoupeInputError, errorMessage } from '../../util/errors.ts';
import { nullLogger, type Logger } from '../../util/log.ts';
import type { Progress } from '../../suites/types.ts';
import { listFilesRecursive } from '../../suites/util.ts';

/** One table file found in a folder. */
export interface TableFile {
  table: string;
  file: string;
  size: number;
  mtimeMs: number;
}

/**
 * The bookkeeping table older Loupe versions wrote INTO imported databases (table, host file path, size, mtime, rows,
 * columns). Issue 36: the agent queries that database, so the bookkeeping now lives in a sidecar file
 * ({@link importBookkeepingPath}); a database that still holds the table is migrated ({@link moveImportBookkeepingOut}).
 */
export const IMPORT_TABLE = '_loupe_import';

/** One imported table as the bookkeeping records it (`file`: the host path it was read from; `mtime` in ms). */
export interface ImportBookkeepingRow {
  table_name: string;
  file: string;
  size: number;
  mtime: number;
  rows: number;
  columns: number;
}

/**
 * The sidecar file holding an imported database's bookkeeping: `<database>.import.json`, next to it (never inside the
 * database the agent queries). Source: issue 36.
 * @param dest the imported SQLite file. @returns the sidecar's path.
 */
export function importBookkeepingPath(dest: string): string {
  return `${dest}.import.json`;
}

/** The sidecar's rows, or undefined when it is absent or not Loupe's shape. */
function readBookkeeping(dest: string): ImportBookkeepingRow[] | undefined {
  try {
    const v = JSON.parse(readFileSync(importBookkeepingPath(dest), 'utf8')) as { format?: unknown; tables?: unknown };
    if (v.format !== 'loupe-ddr-import/1' || !Array.isArray(v.tables)) return undefined;
    return v.tables as ImportBookkeepingRow[];
  } catch {
    return undefined;
  }
}

function writeBookkeeping(dest: string, rows: ImportBookkeepingRow[]): void {
  const file = importBookkeepingPath(dest);
  writeFileSync(
    `${file}.${process.pid}.partial`,
    JSON.stringify({ format: 'loupe-ddr-import/1', tables: rows }, null, 1),
  );
  renameSync(`${file}.${process.pid}.partial`, file);
}

/**
 * The import bookkeeping of a database: its sidecar (after moving an older database's `_loupe_import` table out).
 * @param dest the SQLite file. @returns the rows, or undefined when the database was not imported by Loupe.
 * @throws LoupeInputError as {@link moveImportBookkeepingOut}.
 */
export function importBookkeeping(dest: string): ImportBookkeepingRow[] | undefined {
  moveImportBookkeepingOut(dest);
  return readBookkeeping(dest);
}

/**
 * Migrates a database imported by an older Loupe: its `_loupe_import` table (host paths of the imported files) is
 * written to the sidecar ({@link importBookkeepingPath}) and dropped from the database with `secure_delete` on (its
 * pages are zeroed, not left free for a page-level read), so the database the agent queries holds only the
 * benchmark's tables. A database without the table is not opened for writing.
 * @param path the SQLite file. @returns true when the table was moved out.
 * @throws LoupeInputError(path) when the table is there but the database cannot be changed (read-only file or
 *   folder): re-import the tables (`--database NEW.sqlite`) or make the file writable once.
 * Source: issue 36 "`_loupe_import` is not in the database file the agent queries".
 */
export function moveImportBookkeepingOut(path: string): boolean {
  let has: boolean;
  try {
    const ro = new Database(path, { readonly: true, fileMustExist: true });
    try {
      has = !!ro.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(IMPORT_TABLE);
    } finally {
      ro.close();
    }
  } catch {
    return false; // not a SQLite file: the caller's own open says so
  }
  if (!has) return false;
  try {
    const db = new Database(path, { fileMustExist: true });
    try {
      const rows = db
        .prepare(`SELECT table_name, file, size, mtime, rows, columns FROM ${IMPORT_TABLE}`)
        .all() as ImportBookkeepingRow[];
      if (!readBookkeeping(path)) writeBookkeeping(path, rows);
      db.pragma('secure_delete = ON');
      db.exec(`DROP TABLE ${IMPORT_TABLE}`);
    } finally {
      db.close();
    }
  } catch (e) {
    throw new LoupeInputError(
      path,
      `holds Loupe's import bookkeeping (table ${IMPORT_TABLE}, with host file paths) that an agent must not read, and it cannot be moved out (${errorMessage(e)}); make the file writable once, or import the tables again into a new database`,
    );
  }
  return true;
}

/**
 * Lists importable tables (`*.csv`, `*.csv.gz`) under `dir` (recursively, sorted).
 * @returns table files; names are lower-cased, non-identifier characters → `_`.
 */
export function findTableFiles(dir: string): TableFile[] {
  const out: TableFile[] = [];
  for (const file of listFilesRecursive(dir)) {
    const m = /^(.*)\.csv(\.gz)?$/i.exec(basename(file));
    if (!m) continue;
    const relDir = relative(dir, dirname(file));
    const parts = relDir === '' ? [] : relDir.split(sep);
    const table = [...parts, m[1]!]
      .join('_')
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_');
    const st = statSync(file);
    out.push({ table, file, size: st.size, mtimeMs: Math.floor(st.mtimeMs) });
  }
  return out;
}

export interface ImportOptions {
  log?: Logger;
  onProgress?: (p: Progress) => void;
  /** Only tables for which this returns true are imported. */
  tableFilter?: (table: string) => boolean;
  /** Re-import even when `dest` is up to date. */
  force?: boolean;
}

export interface ImportResult {
  database: string;
  tables: { table: string; file: string; rows: number; columns: number }[];
  /** True when an existing, up-to-date database was reused. */
  reused: boolean;
  problems: string[];
}

/**
 * Imports CSV / CSV.gz tables from `dir` into the SQLite file `dest`. Writes to `dest.<pid>.partial`
 * and renames on success, so a failed import never leaves a half database at `dest`. If `dest`
 * already records the same files (path, size, mtime) it is reused.
 * @param dir folder of tables. @param dest SQLite file to create.
 * @returns tables imported (row counts), whether reused, and problems (bad rows: `file:LINE: ...`).
 * @throws LoupeInputError when `dir` has no tables, a file is not valid CSV (no header), or gzip is corrupt.
 */
export async function importCsvFolder(dir: string, dest: string, opts: ImportOptions = {}): Promise<ImportResult> {
  const log = opts.log ?? nullLogger;
  const files = findTableFiles(dir).filter((t) => !opts.tableFilter || opts.tableFilter(t.table));
  if (files.length === 0) throw new LoupeInputError(dir, 'no CSV or CSV.gz tables to import');
  const dup = files.find((f, i) => files.findIndex((g) => g.table === f.table) !== i);
  if (dup) throw new LoupeInputError(dup.file, `two files map to table '${dup.table}'`);
  if (!opts.force && existsSync(dest)) {
    const reused = tryReuse(dest, files);
    // The problems found by the import that built `dest` (bad rows) are reported again on reuse.
    if (reused) return { database: dest, tables: reused, reused: true, problems: readProblems(dest) };
  }
  mkdirSync(dirname(dest), { recursive: true });
  removeStalePartials(dest);
  const partial = `${dest}.${process.pid}.partial`;
  rmSync(partial, { force: true });
  const db = new Database(partial);
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  const total = files.reduce((n, f) => n + f.size, 0);
  let doneBytes = 0;
  const problems: string[] = [];
  const tables: ImportResult['tables'] = [];
  try {
    const bookkeeping: ImportBookkeepingRow[] = [];
    for (const f of files) {
      const base = doneBytes;
      opts.onProgress?.({ phase: 'import', done: doneBytes, total, message: f.table });
      const r = await importOne(
        db,
        f,
        (bytes) => opts.onProgress?.({ phase: 'import', done: base + bytes, total, message: f.table }),
        problems,
      );
      doneBytes = base + f.size;
      tables.push({ table: f.table, file: f.file, rows: r.rows, columns: r.columns });
      bookkeeping.push({
        table_name: f.table,
        file: f.file,
        size: f.size,
        mtime: f.mtimeMs,
        rows: r.rows,
        columns: r.columns,
      });
      log.info(`imported ${f.table}: ${r.rows} rows`);
    }
    opts.onProgress?.({ phase: 'import', done: total, total, message: 'done' });
    db.close();
    writeFileSync(`${dest}.problems.json`, JSON.stringify(problems));
    // Issue 36: the bookkeeping (host paths) goes next to the database, never into it; written before the database
    // is renamed into place, so a database at `dest` always has its sidecar.
    writeBookkeeping(dest, bookkeeping);
    renameSync(partial, dest);
  } catch (e) {
    try {
      db.close();
    } catch {
      // already closed
    }
    rmSync(partial, { force: true });
    throw e;
  }
  return { database: dest, tables, reused: false, problems };
}

function readProblems(dest: string): string[] {
  try {
    const p = JSON.parse(readFileSync(`${dest}.problems.json`, 'utf8')) as unknown;
    return Array.isArray(p) ? p.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/** Removes `dest.<pid>.partial` files left by an import whose process is gone (killed, Ctrl-C, SIGPIPE). */
function removeStalePartials(dest: string): void {
  const prefix = `${basename(dest)}.`;
  let names: string[];
  try {
    names = readdirSync(dirname(dest));
  } catch {
    return;
  }
  for (const n of names) {
    const m = n.startsWith(prefix) ? /^(\d+)\.partial$/.exec(n.slice(prefix.length)) : null;
    if (!m) continue;
    const pid = Number(m[1]);
    let alive = pid === process.pid;
    if (!alive) {
      try {
        process.kill(pid, 0);
        alive = true;
      } catch (e) {
        alive = (e as NodeJS.ErrnoException).code === 'EPERM';
      }
    }
    if (!alive) rmSync(`${dirname(dest)}/${n}`, { force: true });
  }
}

function tryReuse(dest: string, files: TableFile[]): ImportResult['tables'] | undefined {
  let rows: ImportBookkeepingRow[] | undefined;
  try {
    rows = importBookkeeping(dest); // an older database's table is moved out first (issue 36)
  } catch {
    return undefined; // cannot be migrated: imported again
  }
  if (!rows || rows.length !== files.length) return undefined;
  for (const f of files) {
    const r = rows.find((x) => x.table_name === f.table);
    if (!r || r.file !== f.file || r.size !== f.size || r.mtime !== f.mtimeMs) return undefined;
  }
  return rows.map((r) => ({ table: r.table_name, file: r.file, rows: r.rows, columns: r.columns }));
}

type ColType = 'INTEGER' | 'REAL' | 'TEXT';
const INT_RE = /^-?\d{1,15}$/;
const REAL_RE = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

function inferTypes(header: string[], sample: string[][]): ColType[] {
  return header.map((_, j) => {
    let t: ColType = 'INTEGER';
    let seen = false;
    for (const row of sample) {
      const v = row[j] ?? '';
      if (v === '') continue;
      seen = true;
      if (t === 'INTEGER' && !INT_RE.test(v)) t = REAL_RE.test(v) ? 'REAL' : 'TEXT';
      else if (t === 'REAL' && !REAL_RE.test(v)) t = 'TEXT';
      if (t === 'TEXT') break;
    }
    return seen ? t : 'TEXT';
  });
}

async function importOne(
  db: Database.Database,
  f: TableFile,
  onBytes: (n: number) => void,
  problems: string[],
): Promise<{ rows: number; columns: number }> {
  const raw = createReadStream(f.file);
  let bytes = 0;
  raw.on('data', (c) => {
    bytes += c.length;
    onBytes(bytes);
  });
  const gz = /\.gz$/i.test(f.file);
  const parser = parse({
    skip_empty_lines: true,
    relax_column_count: true,
    bom: true,
    info: true,
  });
  const source = gz ? raw.pipe(createGunzip()) : raw;
  source.on('error', (e: Error) => parser.destroy(e));
  source.pipe(parser);
  let header: string[] | undefined;
  let types: ColType[] = [];
  const sample: string[][] = [];
  let insert: Database.Statement | undefined;
  let batch: unknown[][] = [];
  let rows = 0;
  let line = 1;
  let badUtf8 = 0;
  let prevEndLine = 0;
  const flush = () => {
    if (!insert || batch.length === 0) return;
    const ins = insert;
    const tx = db.transaction((rs: unknown[][]) => {
      for (const r of rs) ins.run(r);
    });
    tx(batch);
    rows += batch.length;
    batch = [];
  };
  const convert = (rec: string[]): unknown[] =>
    header!.map((_, j) => {
      const v = rec[j] ?? '';
      if (v === '') return null;
      const t = types[j];
      if (t === 'INTEGER' && INT_RE.test(v)) return Number(v);
      if (t === 'REAL' && REAL_RE.test(v)) return Number(v);
      return v;
    });
  const start = () => {
    types = inferTypes(header!, sample);
    db.exec(`DROP TABLE IF EXISTS ${quoteIdent(f.table)}`);
    db.exec(
      `CREATE TABLE ${quoteIdent(f.table)} (${header!.map((h, j) => `${quoteIdent(h)} ${types[j]}`).join(', ')})`,
    );
    insert = db.prepare(`INSERT INTO ${quoteIdent(f.table)} VALUES (${header!.map(() => '?').join(', ')})`);
    for (const r of sample) batch.push(convert(r));
    sample.length = 0;
  };
  try {
    for await (const item of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      const rec = item.record;
      line = prevEndLine + 1;
      prevEndLine = item.info.lines;
      if (!header) {
        header = rec.map((h, j) => (h.trim() === '' ? `column_${j + 1}` : h.trim()));
        continue;
      }
      if (rec.length !== header.length) {
        problems.push(`${f.file}:${line}: ${rec.length} fields, header has ${header.length}; row skipped`);
        continue;
      }
      // Bytes that are not UTF-8 arrive as U+FFFD: say where (first one per file), keep the row.
      if (badUtf8 === 0 && rec.some((v) => v.includes('\uFFFD'))) {
        badUtf8++;
        problems.push(`${f.file}:${line}: not valid UTF-8 (bytes replaced by U+FFFD in the database)`);
      }
      if (!insert) {
        sample.push(rec);
        if (sample.length >= 2000) start();
        continue;
      }
      batch.push(convert(rec));
      if (batch.length >= 5000) flush();
    }
  } catch (e) {
    // A CSV syntax error (e.g. a quote never closed) ends this table, not the import: the rows read so
    // far are kept and the problem names the record. Read errors (corrupt gzip) still fail.
    const code = (e as { code?: unknown }).code;
    if (!header || typeof code !== 'string' || !code.startsWith('CSV_')) {
      throw new LoupeInputError(`${f.file}:${line}`, `cannot import: ${errorMessage(e)}`);
    }
    problems.push(
      `${f.file}:${prevEndLine + 1}: malformed CSV (${errorMessage(e).replace(/ at line \d+/, '')}); rest of the file skipped`,
    );
  }
  if (!header) throw new LoupeInputError(f.file, 'empty table file (no header row)');
  if (!insert) start();
  flush();
  return { rows, columns: header.length };
}
