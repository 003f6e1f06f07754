/**
 * DDR-Bench loader: a SQLite database (or a folder of CSV / CSV.gz tables imported into one) plus
 * optional `entity_ids.json`, `qa.json` checklists and `metadata.json` table/column descriptions →
 * one block per entity. Source: spec §3.2–3.3; DDR-Bench `data/<scenario>/`, `run_agent.py`.
 */
import { quoteIdent } from '../../util/sql.ts';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { LoupeInputError, errorMessage } from '../../util/errors.ts';
import { nullLogger } from '../../util/log.ts';
import type { Block, ChecklistItem, DatabaseInfo, LoadSuiteOptions, Suite } from '../../suites/types.ts';
import { fileSize, isDir, isFile, readJson, readUtf8, safeId } from '../../suites/util.ts';
import { readFetchStamp } from '../../suites/stamp.ts';
import { isHeldDatabaseFile } from '../../util/held-files.ts';
import { findTableFiles, importBookkeeping, importCsvFolder } from './import.ts';

const DB_EXT = /\.(sqlite3?|db)$/i;

/**
 * True when the file starts with the SQLite magic header. A database this process holds open (the run store) is not
 * opened to look (closing that descriptor would drop the process's SQLite locks, issue 39): it is one, its
 * `-wal`/`-shm`/`-journal` files are not.
 */
export function isSqliteFile(p: string): boolean {
  if (!isFile(p)) return false;
  if (isHeldDatabaseFile(p)) return !/-(wal|shm|journal)$/i.test(p);
  const fd = openSync(p, 'r');
  try {
    const b = Buffer.alloc(16);
    readSync(fd, b, 0, 16, 0);
    return b.toString('latin1') === 'SQLite format 3\u0000';
  } finally {
    closeSync(fd);
  }
}

/** Default place for an imported database: a cache file under the OS temp dir keyed by the folder. */
export function defaultImportPath(dir: string): string {
  return join(
    tmpdir(),
    'loupe-ddr',
    `${safeId(basename(dir))}-${createHash('sha1').update(resolve(dir)).digest('hex').slice(0, 10)}.sqlite`,
  );
}

/**
 * Parses `entity_ids.json` (a JSON list of strings or numbers).
 * @throws LoupeInputError naming the file for invalid JSON, non-UTF-8, or a non-list.
 */
export function readEntityIds(file: string): string[] {
  const j = readJson(file);
  if (!Array.isArray(j)) throw new LoupeInputError(file, 'expected a JSON list of entity ids');
  const bad = j.findIndex((x) => typeof x !== 'string' && typeof x !== 'number');
  if (bad >= 0) throw new LoupeInputError(`${file}[${bad}]`, 'entity id must be a string or number');
  return j.map(String);
}

/**
 * Parses a DDR `qa.json` checklist file (spec §3.2).
 * @returns entity id → checklist items, plus problems naming `file results[i]`.
 * @throws LoupeInputError for invalid JSON / non-UTF-8 / no `results` list.
 */
export function readChecklists(file: string): {
  byEntity: Map<string, ChecklistItem[]>;
  problems: string[];
  metadata: unknown;
} {
  const j = readJson(file);
  const o = j as { results?: unknown; metadata?: unknown };
  if (typeof o !== 'object' || o === null || !Array.isArray(o.results)) {
    throw new LoupeInputError(file, 'not a DDR checklist file (expected {"results": [...]})');
  }
  const byEntity = new Map<string, ChecklistItem[]>();
  const problems: string[] = [];
  o.results.forEach((r, i) => {
    const ro = r as { entity_id?: unknown; qa_pairs?: unknown };
    if (
      typeof ro !== 'object' ||
      ro === null ||
      (typeof ro.entity_id !== 'string' && typeof ro.entity_id !== 'number') ||
      !Array.isArray(ro.qa_pairs)
    ) {
      problems.push(`${file} results[${i}]: expected {entity_id, qa_pairs: [...]}; skipped`);
      return;
    }
    const id = String(ro.entity_id);
    const items: ChecklistItem[] = [];
    ro.qa_pairs.forEach((q, k) => {
      const qo = q as Record<string, unknown>;
      if (typeof qo !== 'object' || qo === null || typeof qo.question !== 'string' || typeof qo.answer !== 'string') {
        problems.push(`${file} results[${i}].qa_pairs[${k}]: expected {question, answer}; skipped`);
        return;
      }
      items.push({
        id: `c${items.length + 1}`,
        question: qo.question,
        answer: qo.answer,
        ...(typeof qo.source_text === 'string' && qo.source_text !== '' ? { sourceText: qo.source_text } : {}),
      });
    });
    byEntity.set(id, [...(byEntity.get(id) ?? []), ...items]);
  });
  return { byEntity, problems, metadata: o.metadata };
}

interface Comments {
  tables: Record<string, string>;
  columns: Record<string, Record<string, string>>;
  anyColumn: Record<string, string>;
}

function readMetadata(file: string, problems: string[]): Comments {
  const c: Comments = { tables: {}, columns: {}, anyColumn: {} };
  if (!isFile(file)) return c;
  try {
    const j = JSON.parse(readUtf8(file)) as Record<string, unknown>;
    if (j.TABLE_COMMENTS && typeof j.TABLE_COMMENTS === 'object') c.tables = j.TABLE_COMMENTS as Record<string, string>;
    if (j.COLUMN_COMMENTS && typeof j.COLUMN_COMMENTS === 'object') {
      c.columns = j.COLUMN_COMMENTS as Record<string, Record<string, string>>;
    }
    if (j.description_mapping && typeof j.description_mapping === 'object') {
      c.anyColumn = j.description_mapping as Record<string, string>;
    }
  } catch (e) {
    problems.push(errorMessage(e) + ` (${file})`);
  }
  return c;
}

/**
 * Reads GLOBEM-style field descriptions: `<table>_fields.json` files (`{field: description}`, or a
 * list of `{field|name|column, description}`) beside the tables, as column comments of `<table>`.
 */
function readFieldFiles(dir: string, c: Comments, problems: string[]): void {
  if (!isDir(dir)) return;
  for (const n of readdirSync(dir)) {
    const m = /^(.+)_fields\.json$/i.exec(n);
    if (!m) continue;
    const table = m[1]!.toLowerCase().replace(/[^a-z0-9_]+/g, '_');
    const file = join(dir, n);
    try {
      const j = JSON.parse(readUtf8(file)) as unknown;
      const cols = (c.columns[table] ??= {});
      if (Array.isArray(j)) {
        for (const e of j as Record<string, unknown>[]) {
          const name = e?.field ?? e?.name ?? e?.column;
          if (typeof name === 'string' && typeof e.description === 'string') cols[name] ??= e.description;
        }
      } else if (j && typeof j === 'object') {
        for (const [k, v] of Object.entries(j as Record<string, unknown>)) if (typeof v === 'string') cols[k] ??= v;
      }
    } catch (e) {
      problems.push(`${errorMessage(e)}${e instanceof LoupeInputError ? '' : ` (${file})`}`);
    }
  }
}

/**
 * Describes a SQLite database: tables (without Loupe's bookkeeping), columns with declared types,
 * row counts (from the import bookkeeping, or counted for files under 256 MB), and comments from DDR metadata or from `table_comments` / `column_comments` tables.
 * The bookkeeping is the sidecar `<database>.import.json`; a database an older Loupe imported has its `_loupe_import`
 * table moved there first (issue 36: the database the agent queries holds only the benchmark's tables).
 * @param path SQLite file (opened read-only). @param rel workspace-relative name.
 * @throws LoupeInputError(path) when an older database's bookkeeping table cannot be moved out (read-only file).
 */
export function describeDatabase(path: string, rel: string, comments?: Comments): DatabaseInfo {
  // Issue 36: an older import's `_loupe_import` table is moved to the sidecar before anything reads the database.
  const bookkeeping = importBookkeeping(path);
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const names = (
      db
        .prepare(
          `SELECT name FROM sqlite_master WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' ORDER BY name`,
        )
        .all() as { name: string }[]
    ).map((r) => r.name);
    const tc: Record<string, string> = { ...(comments?.tables ?? {}) };
    const cc: Record<string, Record<string, string>> = { ...(comments?.columns ?? {}) };
    if (names.includes('table_comments')) {
      try {
        for (const r of db.prepare('SELECT table_name, comment FROM table_comments').all() as {
          table_name: string;
          comment: string;
        }[]) {
          tc[r.table_name] ??= r.comment;
        }
      } catch {
        // not the DDR shape
      }
    }
    if (names.includes('column_comments')) {
      try {
        for (const r of db.prepare('SELECT table_name, column_name, comment FROM column_comments').all() as {
          table_name: string;
          column_name: string;
          comment: string;
        }[]) {
          (cc[r.table_name] ??= {})[r.column_name] ??= r.comment;
        }
      } catch {
        // not the DDR shape
      }
    }
    const q = quoteIdent;
    // Row counts: from Loupe's import bookkeeping, else counted only for databases under 256 MB
    // (COUNT(*) over a 200M-row MIMIC table would take minutes).
    const known = new Map<string, number>();
    for (const r of bookkeeping ?? []) known.set(r.table_name, r.rows);
    const countAll = fileSize(path) < 256 * 1024 * 1024;
    const tables = names.map((name) => {
      const cols = db.prepare(`PRAGMA table_info(${q(name)})`).all() as { name: string; type: string }[];
      const rows =
        known.get(name) ??
        (countAll ? (db.prepare(`SELECT COUNT(*) AS n FROM ${q(name)}`).get() as { n: number }).n : undefined);
      const comment = tc[name];
      return {
        name,
        ...(comment ? { comment } : {}),
        ...(rows !== undefined ? { rows } : {}),
        columns: cols.map((c) => {
          const cm = cc[name]?.[c.name] ?? comments?.anyColumn[c.name];
          return { name: c.name, type: c.type, ...(cm ? { comment: cm } : {}) };
        }),
      };
    });
    return { path, rel, tables };
  } finally {
    db.close();
  }
}

/**
 * Reads entity ids from `TABLE.COLUMN` of a database (distinct, non-null, sorted). `TABLE` may also
 * name a table imported from a subfolder (`patients` → `hosp_patients`) when that is unique.
 * @throws LoupeInputError('--entities') for a bad spec, unknown table or column, or no values.
 */
export function entitiesFromColumn(dbPath: string, spec: string): { ids: string[]; table: string; column: string } {
  const m = /^([^.]+)\.([^.]+)$/.exec(spec.trim());
  if (!m) throw new LoupeInputError('--entities', `expected TABLE.COLUMN, got '${spec}'`);
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const tables = (
      db.prepare(`SELECT name FROM sqlite_master WHERE type IN ('table','view')`).all() as { name: string }[]
    ).map((r) => r.name);
    let table = tables.find((t) => t === m[1]) ?? tables.find((t) => t.toLowerCase() === m[1]!.toLowerCase());
    if (!table) {
      const cands = tables.filter((t) => t.toLowerCase().endsWith(`_${m[1]!.toLowerCase()}`));
      if (cands.length === 1) table = cands[0];
      else {
        throw new LoupeInputError(
          '--entities',
          `no table '${m[1]}' in ${dbPath}${cands.length ? ` (ambiguous: ${cands.join(', ')})` : ''}`,
        );
      }
    }
    const q = quoteIdent;
    const cols = (db.prepare(`PRAGMA table_info(${q(table!)})`).all() as { name: string }[]).map((c) => c.name);
    const column = cols.find((c) => c === m[2]) ?? cols.find((c) => c.toLowerCase() === m[2]!.toLowerCase());
    if (!column) {
      throw new LoupeInputError('--entities', `table '${table}' has no column '${m[2]}' (columns: ${cols.join(', ')})`);
    }
    const ids = (
      db
        .prepare(
          `SELECT DISTINCT ${q(column)} AS v FROM ${q(table!)} WHERE ${q(column)} IS NOT NULL ORDER BY ${q(column)}`,
        )
        .all() as { v: unknown }[]
    ).map((r) => String(r.v));
    if (ids.length === 0) throw new LoupeInputError('--entities', `${table}.${column} has no values`);
    return { ids, table: table!, column };
  } finally {
    db.close();
  }
}

/** The entity noun of DDR's start prompts (spec §3.3): patient / company / user / entity. */
function entityNoun(
  column: string | undefined,
  ids: string[],
  metaDir: string,
): { noun: string; prompt: (id: string) => string } {
  const col = (column ?? '').toLowerCase();
  const scenario = basename(metaDir).toLowerCase();
  if (col === 'subject_id' || scenario.includes('mimic')) {
    return { noun: 'patient', prompt: (id) => `Analyze patient ${id}` };
  }
  if (col === 'cik' || scenario.includes('10k')) {
    return { noun: 'company', prompt: (id) => `Analyze company with CIK ${id}` };
  }
  if (col === 'pid' || scenario.includes('globem') || ids.some((i) => /^INS-W/.test(i))) {
    return { noun: 'user', prompt: (id) => `Analyze user ${id}` };
  }
  return { noun: 'entity', prompt: (id) => `Analyze ${column ? `${column} ` : 'entity '}${id}` };
}

/** The column holding an entity's id, by the entity noun of {@link entityNoun} (spec §3.3). */
const ENTITY_COLUMN: Record<string, string | undefined> = { patient: 'subject_id', company: 'cik', user: 'pid' };
/** Tables preferred for the lookup (smallest, one row per entity) by column. */
const ENTITY_TABLES: Record<string, string[]> = {
  subject_id: ['patients'],
  cik: ['companies', 'company', 'submissions', 'sub'],
  pid: ['participants', 'users', 'participantinfo'],
};

/**
 * Picks the table to look entity ids up in: one named for the entities (`patients`, also
 * `hosp_patients`), else the table with that column and the fewest known rows.
 */
function entityTable(db: DatabaseInfo, column: string): { table: string; column: string } | undefined {
  const cands = db.tables
    .map((t) => ({ t, c: t.columns.find((c) => c.name.toLowerCase() === column) }))
    .filter(
      (x): x is { t: DatabaseInfo['tables'][number]; c: DatabaseInfo['tables'][number]['columns'][number] } =>
        x.c !== undefined,
    );
  if (cands.length === 0) return undefined;
  const pref = ENTITY_TABLES[column] ?? [];
  const named = cands.find((x) =>
    pref.some((p) => x.t.name.toLowerCase() === p || x.t.name.toLowerCase().endsWith(`_${p}`)),
  );
  const pick =
    named ??
    [...cands].sort((a, b) => (a.t.rows ?? Infinity) - (b.t.rows ?? Infinity) || a.t.name.localeCompare(b.t.name))[0]!;
  return { table: pick.t.name, column: pick.c.name };
}

/** The ids with no row in `table.column` (compared as text, one scan per 500 ids). */
function absentIds(dbPath: string, table: string, column: string, ids: string[]): Set<string> {
  const q = quoteIdent;
  const found = new Set<string>();
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    for (let i = 0; i < ids.length; i += 500) {
      const batch = ids.slice(i, i + 500);
      const sql = `SELECT DISTINCT CAST(${q(column)} AS TEXT) AS v FROM ${q(table)} WHERE CAST(${q(column)} AS TEXT) IN (${batch.map(() => '?').join(',')})`;
      for (const r of db.prepare(sql).all(...batch) as { v: string }[]) found.add(r.v);
    }
  } finally {
    db.close();
  }
  return new Set(ids.filter((id) => !found.has(id)));
}

/** Names the other benchmark whose root `dir` is (LongDA: benchmark.csv; BLADE: dataset folders), if any. */
function otherSuiteRoot(dir: string, entries: string[]): string | undefined {
  if (entries.includes('benchmark.csv')) {
    try {
      const head = readFileSync(join(dir, 'benchmark.csv'), 'utf8').slice(0, 4096).split(/\r?\n/)[0] ?? '';
      if (/(^|,)survey(,|$)/.test(head) && /(^|,)answer_structure(,|$)/.test(head)) {
        return 'a LongDA root (benchmark.csv)';
      }
    } catch {
      /* unreadable: let the import report it */
    }
  }
  const blade = entries.filter(
    (n) =>
      isDir(join(dir, n)) &&
      (isFile(join(dir, n, 'annotations.csv')) ||
        (isFile(join(dir, n, 'info.json')) && isFile(join(dir, n, 'data.csv')))),
  );
  if (blade.length) return `a BLADE datasets/ root (${blade.slice(0, 3).join(', ')}${blade.length > 3 ? ', ...' : ''})`;
  return undefined;
}

/**
 * Loads a DDR-Bench suite.
 * @param root SQLite file, or folder holding a SQLite file and/or CSV/CSV.gz tables (imported with
 *   progress to `opts.database` or {@link defaultImportPath}), and/or `entity_ids.json`, `qa.json`,
 *   `metadata.json`.
 * @param opts `entities` (`TABLE.COLUMN`) when there is no entity file; `metadataDir` for the JSON
 *   files when they live elsewhere; `checklist` to override `qa.json`.
 * @returns one block per entity; visible = the database (read-only) and its description; hidden =
 *   the entity's checklist (blocks without one are runnable; their checklist is `[]`). Without a
 *   database every block is `runnable: false`; so is a block whose id (from `entity_ids.json`) has no
 *   row in the entity table (e.g. `hosp_patients.subject_id`), with a problem naming both. When the
 *   entity column cannot be told, the suite says the ids were not checked.
 * @throws LoupeInputError for a missing/empty root, a root that is not DDR, bad `--entities`, or unreadable JSON.
 */
export async function loadDdr(root: string, opts: LoadSuiteOptions = {}): Promise<Suite> {
  const log = opts.log ?? nullLogger;
  const abs = resolve(root);
  if (!existsSync(abs)) throw new LoupeInputError(abs, 'DDR root does not exist');
  const suiteProblems: string[] = [];
  let dbPath: string | undefined;
  let folder: string;
  if (isFile(abs)) {
    if (!isSqliteFile(abs)) throw new LoupeInputError(abs, 'not a DDR root: a file root must be a SQLite database');
    dbPath = abs;
    folder = dirname(abs);
  } else {
    folder = abs;
    const entries = readdirSync(abs).filter((n) => !n.startsWith('.'));
    if (entries.length === 0) throw new LoupeInputError(abs, 'empty folder: not a DDR root');
    const dbs = entries.filter((n) => DB_EXT.test(n) && isSqliteFile(join(abs, n)));
    if (dbs.length > 1) suiteProblems.push(`${abs}: several databases (${dbs.join(', ')}); using ${dbs[0]}`);
    if (dbs.length) dbPath = join(abs, dbs[0]!);
    else if (findTableFiles(abs).length) {
      // Another benchmark's root is not a folder of tables: importing it would copy its answers into a database.
      const other = otherSuiteRoot(abs, entries);
      if (other) {
        throw new LoupeInputError(
          abs,
          `not a DDR root: this is ${other} (use --suite ${other.startsWith('a LongDA') ? 'longda' : 'blade'})`,
        );
      }
      const dest = opts.database ? resolve(opts.database) : defaultImportPath(abs);
      const r = await importCsvFolder(abs, dest, {
        ...(opts.log ? { log: opts.log } : {}),
        ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
        ...(opts.tableFilter ? { tableFilter: opts.tableFilter } : {}),
      });
      suiteProblems.push(...r.problems);
      dbPath = r.database;
      log.info(`DDR: ${r.reused ? 'reused' : 'imported'} ${r.tables.length} tables into ${dbPath}`);
    }
  }
  const metaDir = opts.metadataDir ? resolve(opts.metadataDir) : folder;
  if (opts.metadataDir && !isDir(metaDir)) throw new LoupeInputError(metaDir, 'metadata folder does not exist');
  const entityFile = join(metaDir, 'entity_ids.json');
  const qaFile = opts.checklist ? resolve(opts.checklist) : join(metaDir, 'qa.json');
  if (!dbPath && !isFile(entityFile) && !isFile(qaFile)) {
    throw new LoupeInputError(
      abs,
      'not a DDR root: no SQLite database, no CSV/CSV.gz tables, no entity_ids.json or qa.json',
    );
  }
  if (opts.checklist && !isFile(qaFile)) throw new LoupeInputError(qaFile, 'checklist file does not exist');

  let ids: string[];
  let entityColumn: string | undefined;
  if (opts.entities) {
    if (!dbPath) throw new LoupeInputError('--entities', `needs a database, but ${abs} has none`);
    const r = entitiesFromColumn(dbPath, opts.entities);
    ids = r.ids;
    entityColumn = `${r.table}.${r.column}`;
  } else if (isFile(entityFile)) {
    ids = readEntityIds(entityFile);
  } else {
    throw new LoupeInputError(
      '--entities',
      `no entity_ids.json in ${metaDir}; name where entities come from with --entities TABLE.COLUMN (e.g. hosp_patients.subject_id)`,
    );
  }
  if (new Set(ids).size !== ids.length) {
    suiteProblems.push(`${entityColumn ?? entityFile}: duplicate entity ids (kept the first of each)`);
  }
  ids = [...new Set(ids)];

  let checklists = new Map<string, ChecklistItem[]>();
  let checklistBroken = false;
  if (isFile(qaFile)) {
    // A broken checklist file must not take the entities down: they stay runnable, unscored until fixed.
    let r: ReturnType<typeof readChecklists> = { byEntity: new Map(), problems: [], metadata: undefined };
    try {
      r = readChecklists(qaFile);
    } catch (e) {
      if (!(e instanceof LoupeInputError)) throw e;
      checklistBroken = true;
      suiteProblems.push(`${e.message}; no checklists loaded`);
    }
    checklists = r.byEntity;
    suiteProblems.push(...r.problems);
    const unknown = [...checklists.keys()].filter((k) => !ids.includes(k));
    if (unknown.length) {
      suiteProblems.push(
        `${qaFile}: ${unknown.length} checklist entit${unknown.length === 1 ? 'y is' : 'ies are'} not in the entity list (${unknown.slice(0, 3).join(', ')}${unknown.length > 3 ? ', ...' : ''})`,
      );
    }
  }
  const comments = readMetadata(join(metaDir, 'metadata.json'), suiteProblems);
  readFieldFiles(folder, comments, suiteProblems);
  if (metaDir !== folder) readFieldFiles(metaDir, comments, suiteProblems);
  const database = dbPath ? describeDatabase(dbPath, 'database.sqlite', comments) : undefined;
  const { noun, prompt } = entityNoun(entityColumn?.split('.')[1], ids, metaDir);
  const stamp = readFetchStamp(folder);
  const suiteId = `ddr:${safeId(basename(isFile(abs) ? abs.replace(DB_EXT, '') : abs))}`;
  const hiddenFiles = isFile(qaFile) ? [qaFile] : [];
  // Ids from entity_ids.json must exist in the database (ids from --entities were read from it).
  let absent = new Set<string>();
  let lookedUp: string | undefined;
  if (dbPath && database && !opts.entities) {
    const col = ENTITY_COLUMN[noun];
    const where = col ? entityTable(database, col) : undefined;
    if (!where) {
      suiteProblems.push(
        `${entityFile}: entity ids not checked against the database: ${col ? `no table has a column '${col}'` : 'the entity column is unknown'} (give it with --entities TABLE.COLUMN)`,
      );
    } else {
      lookedUp = `${where.table}.${where.column}`;
      absent = absentIds(dbPath, where.table, where.column, ids);
      if (absent.size) {
        suiteProblems.push(
          `${entityFile}: ${absent.size} entity id(s) not found in ${lookedUp} (${[...absent].slice(0, 3).join(', ')}${absent.size > 3 ? ', ...' : ''}); not runnable`,
        );
      }
    }
  }
  const used = new Set<string>();
  const blocks: Block[] = ids.map((id) => {
    let bid = safeId(`${noun}_${id}`);
    for (let k = 2; used.has(bid); k++) bid = `${safeId(`${noun}_${id}`)}-${k}`;
    used.add(bid);
    const checklist = checklists.get(id) ?? [];
    const problems: string[] = [];
    if (!database) problems.push(`no database in ${abs}: give a SQLite file or a folder of CSV/CSV.gz tables`);
    const missingInDb = absent.has(id);
    if (missingInDb) {
      problems.push(
        `entity id '${id}' (from ${entityFile}) is not in the database: no row of ${lookedUp} has it; not runnable`,
      );
    }
    return {
      id: bid,
      suite: 'ddr',
      suiteId,
      title: `${noun[0]!.toUpperCase()}${noun.slice(1)} ${id}`,
      items: [{ type: 'ddr-entity', id: 'task', entityId: id, prompt: prompt(id) }],
      visible: {
        data: [],
        docs: [],
        ...(database ? { database } : {}),
        missing: [],
      },
      hidden: { files: hiddenFiles, checklist },
      runnable: !!database && !missingInDb,
      problems: checklistBroken ? [...problems, `${qaFile} could not be read: no checklist for this entity`] : problems,
      ddr: { entityId: id, ...(entityColumn ? { entityColumn } : {}), checklistCount: checklist.length },
    };
  });
  log.info(`DDR: ${blocks.length} entities, ${blocks.reduce((n, b) => n + b.ddr!.checklistCount, 0)} checklist items`);
  return {
    id: suiteId,
    kind: 'ddr',
    title: 'DDR-Bench',
    version: stamp?.revision ?? 'unknown',
    root: abs,
    source: {
      kind: stamp ? 'fetched' : 'local',
      root: abs,
      upstream: 'https://github.com/thinkwee/DDR_Bench',
      ...(stamp?.revision ? { revision: stamp.revision } : {}),
    },
    blocks,
    problems: suiteProblems,
  };
}

/** Size of the database a block sees (bytes); 0 without one. */
export function databaseSize(b: Block): number {
  return b.visible.database ? fileSize(b.visible.database.path) : 0;
}
