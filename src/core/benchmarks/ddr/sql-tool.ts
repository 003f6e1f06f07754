/**
 * DDR-Bench SQL tools on a SQLite database opened read-only by SQLite itself, and the record of
 * which tables and columns each query touched (for the exploration metrics).
 *
 * Source: spec §3.3 "Tools: SQL MCP server" (DDR `tool_server/sqlite_mcp.py`). Differences, on purpose:
 * - read-only is enforced by SQLite (`readonly: true` + `PRAGMA query_only = ON`), not by a keyword
 *   filter (spec §3.7 item 6: the original's substring filter rejected `created_at`, `REPLACE()`...);
 * - the SQL is never rewritten (no `LIMIT` injection): rows are read up to a cap and the
 *   observation says so when more rows exist;
 * - results are capped per value (1000 chars, as the original) and in total characters, with a note.
 */
import { quoteIdent } from '../../util/sql.ts';
import { createRequire } from 'node:module';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import Database from 'better-sqlite3';
import sqlParser from 'node-sql-parser';
import { LoupeInputError, errorMessage } from '../../util/errors.ts';
import { findBubblewrap, sandboxBaseArgs } from '../../kernel/python-kernel.ts';

const { Parser } = sqlParser;

/** A read-only connection to a DDR database. */
export type ReadonlyDb = Database.Database;

/**
 * Opens a SQLite file read-only: SQLite's own `SQLITE_OPEN_READONLY` plus `PRAGMA query_only`.
 * Writes (INSERT, CREATE, ATTACH of a new file...) then fail inside SQLite with an error message.
 * @param path absolute path of the `.sqlite` / `.db` file.
 * @returns the open connection (caller closes it).
 * @throws LoupeInputError(path) when the file is missing or is not a SQLite database.
 */
export function openReadOnlyDatabase(path: string): ReadonlyDb {
  let db: ReadonlyDb;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    db.pragma('query_only = ON');
    db.prepare('SELECT count(*) FROM sqlite_master').get();
  } catch (e) {
    throw new LoupeInputError(path, `cannot open as a read-only SQLite database: ${errorMessage(e)}`);
  }
  return db;
}

/** Table and view names to hide from the agent (spec §3.3 `get_database_info`). */
function isHiddenTable(name: string): boolean {
  return (
    name.startsWith('sqlite_') ||
    name.startsWith('_loupe') ||
    name.endsWith('_comments') ||
    name.endsWith('_documentation')
  );
}

/** Table / column descriptions and row counts known from the suite (DDR metadata), used when the database has none. */
export interface DbMeta {
  tables: { name: string; comment?: string; rows?: number; columns: { name: string; comment?: string }[] }[];
}

function tableExists(db: ReadonlyDb, name: string): boolean {
  return !!db.prepare("SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?").get(name);
}

/** Schema of the visible tables: table name → column names (in order). */
export type DbSchema = Map<string, string[]>;

/**
 * Reads the schema of every visible table (views and comment tables excluded).
 * @param db an open connection.
 * @returns table → column names.
 */
export function readSchema(db: ReadonlyDb): DbSchema {
  const schema: DbSchema = new Map();
  const rows = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
    name: string;
  }[];
  for (const { name } of rows) {
    if (isHiddenTable(name)) continue;
    const cols = db.prepare(`SELECT name FROM pragma_table_info(?)`).all(name) as { name: string }[];
    schema.set(
      name,
      cols.map((c) => c.name),
    );
  }
  return schema;
}

/**
 * `get_database_info()`: the visible tables with their comments.
 * Source: spec §3.3 (`{database_path, table_count, tables, tables_info, filtered_out_count}`); the path
 * is given as `displayPath` so the agent never learns host paths. Loupe's import bookkeeping is not in the
 * database at all (issue 36: a sidecar file, `ddr/import.ts`); `_loupe*` names are still hidden from listings like
 * DDR's comment tables.
 * @param db an open connection; `displayPath` the name shown to the agent; `meta` suite metadata
 *   (comments used when the database has no `table_comments`).
 * @returns a JSON-serialisable object.
 */
export function databaseInfo(db: ReadonlyDb, displayPath: string, meta?: DbMeta): Record<string, unknown> {
  const all = db.prepare("SELECT name, type FROM sqlite_master WHERE type IN ('table','view') ORDER BY name").all() as {
    name: string;
    type: string;
  }[];
  const visible = all.filter((t) => t.type === 'table' && !isHiddenTable(t.name));
  const comments = new Map<string, string>();
  if (tableExists(db, 'table_comments')) {
    for (const r of db.prepare('SELECT table_name, comment FROM table_comments').all() as {
      table_name: string;
      comment: string;
    }[]) {
      comments.set(r.table_name, r.comment);
    }
  }
  for (const t of meta?.tables ?? []) if (t.comment && !comments.has(t.name)) comments.set(t.name, t.comment);
  return {
    database_path: displayPath,
    table_count: visible.length,
    tables: visible.map((t) => t.name),
    tables_info: visible.map((t) =>
      comments.has(t.name) ? { name: t.name, comment: comments.get(t.name) } : { name: t.name },
    ),
    filtered_out_count: all.length - visible.length,
  };
}

/**
 * `describe_table(table)`: row count, columns (name, type, not null, default, primary key, comment).
 * Source: spec §3.3. `meta` supplies comments and the row count when the suite knows them.
 * @throws LoupeInputError(table) when the table does not exist (message lists the tables).
 */
export function describeTable(db: ReadonlyDb, table: string, meta?: DbMeta): Record<string, unknown> {
  const schema = readSchema(db);
  if (!schema.has(table)) {
    throw new LoupeInputError(table, `no such table. Available tables: ${[...schema.keys()].join(', ')}`);
  }
  const cols = db
    .prepare('SELECT name, type, "notnull" AS nn, dflt_value, pk FROM pragma_table_info(?)')
    .all(table) as { name: string; type: string; nn: number; dflt_value: unknown; pk: number }[];
  const colComments = new Map<string, string>();
  let comment: string | undefined;
  if (tableExists(db, 'column_comments')) {
    for (const r of db.prepare('SELECT column_name, comment FROM column_comments WHERE table_name = ?').all(table) as {
      column_name: string;
      comment: string;
    }[]) {
      colComments.set(r.column_name, r.comment);
    }
  }
  if (tableExists(db, 'table_comments')) {
    comment = (
      db.prepare('SELECT comment FROM table_comments WHERE table_name = ?').get(table) as
        { comment?: string } | undefined
    )?.comment;
  }
  const m = meta?.tables.find((t) => t.name === table);
  comment ??= m?.comment;
  for (const c of m?.columns ?? []) if (c.comment && !colComments.has(c.name)) colComments.set(c.name, c.comment);
  // Row count from the suite's metadata when known (COUNT(*) over a huge table is slow).
  const rowCount = m?.rows ?? (db.prepare(`SELECT count(*) AS n FROM ${quoteIdent(table)}`).get() as { n: number }).n;
  return {
    table_name: table,
    row_count: rowCount,
    column_count: cols.length,
    comment: comment ?? '',
    columns: cols.map((c) => ({
      name: c.name,
      type: c.type,
      not_null: !!c.nn,
      default_value: c.dflt_value ?? null,
      primary_key: !!c.pk,
      comment: colComments.get(c.name) ?? '',
    })),
  };
}

/** Caps applied to a query result. */
export interface QueryCaps {
  /** Rows returned at most (default 100, the original's hard maximum). */
  maxRows: number;
  /** Characters kept per value (default 1000: 997 + "...", as the original). */
  maxValueChars: number;
  /** Characters of the whole JSON observation (default 20,000). */
  maxChars: number;
}

export const defaultQueryCaps: QueryCaps = { maxRows: 100, maxValueChars: 1000, maxChars: 20_000 };

/** Result of `execute_query`. */
export interface QueryResult {
  cols: string[];
  data: string[][];
  count: number;
  /** True when more rows existed than `maxRows`, or the characters cap cut rows. */
  truncated?: boolean;
  /** Human-readable notes on any cap applied. */
  note?: string;
}

/**
 * `execute_query(sql)`: runs one statement on the read-only connection and returns capped rows.
 * Source: spec §3.3 result shape `{cols, data, count, truncated?}`; caps per {@link QueryCaps}.
 * Self-contained (no references outside its body) so that the same code runs in the query worker
 * of {@link SqlRunner}.
 * @param sql one SQL statement (SELECT, WITH, EXPLAIN, PRAGMA...). Writes fail in SQLite.
 * @returns the result; SQL errors are thrown as `Error` with SQLite's message, enriched with the
 *   table list (no such table) or the columns of the named tables (no such column).
 */
export function executeQuery(
  db: ReadonlyDb,
  sql: string,
  caps: QueryCaps = { maxRows: 100, maxValueChars: 1000, maxChars: 20_000 },
): QueryResult {
  const msgOf = (e: unknown) => (e instanceof Error ? e.message : String(e));
  const enrich = (msg: string): string => {
    const tables = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]
    )
      .map((t) => t.name)
      .filter(
        (n) =>
          !n.startsWith('sqlite_') &&
          !n.startsWith('_loupe') &&
          !n.endsWith('_comments') &&
          !n.endsWith('_documentation'),
      );
    if (/no such table/i.test(msg)) return `${msg}. Available tables: ${tables.join(', ')}`;
    if (/no such column/i.test(msg)) {
      const named = tables.filter((t) => new RegExp(`\\b${t}\\b`, 'i').test(sql));
      const colsOf = (t: string) =>
        (db.prepare('SELECT name FROM pragma_table_info(?)').all(t) as { name: string }[])
          .map((c) => c.name)
          .join(', ');
      if (named.length) return `${msg}. Columns of ${named.map((t) => `${t}: ${colsOf(t)}`).join('; ')}`;
    }
    if (/readonly|read-only|query_only/i.test(msg)) {
      return `${msg}. The database is read-only: only queries that read are allowed.`;
    }
    return msg;
  };
  const cell = (v: unknown): string => {
    let t: string;
    if (v === null || v === undefined) t = 'None';
    else if (v instanceof Uint8Array) t = `<blob ${v.length} bytes>`;
    else t = String(v);
    return t.length > caps.maxValueChars ? t.slice(0, caps.maxValueChars - 3) + '...' : t;
  };
  let stmt: Database.Statement;
  try {
    stmt = db.prepare(sql);
  } catch (e) {
    throw new Error(enrich(msgOf(e)), { cause: e });
  }
  if (!stmt.reader) {
    try {
      stmt.run();
    } catch (e) {
      throw new Error(enrich(msgOf(e)), { cause: e });
    }
    return { cols: ['result'], data: [['Query executed successfully']], count: 1 };
  }
  const cols = stmt.columns().map((c) => c.name);
  const data: string[][] = [];
  let more = false;
  try {
    for (const row of stmt.raw(true).iterate() as Iterable<unknown[]>) {
      if (data.length >= caps.maxRows) {
        more = true;
        break;
      }
      data.push(row.map(cell));
    }
  } catch (e) {
    throw new Error(enrich(msgOf(e)), { cause: e });
  }
  const notes: string[] = [];
  if (more) {
    notes.push(
      `Only the first ${caps.maxRows} rows are shown; the query returned more. Use LIMIT, WHERE or aggregation to see the rest.`,
    );
  }
  // Characters cap: drop rows from the end until the JSON fits.
  let kept = data.length;
  const sizeOf = (n: number) => JSON.stringify({ cols, data: data.slice(0, n) }).length;
  if (sizeOf(kept) > caps.maxChars) {
    let lo = 0;
    let hi = kept;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (sizeOf(mid) <= caps.maxChars) lo = mid;
      else hi = mid - 1;
    }
    notes.push(`Output cut to ${lo} of ${kept}${more ? '+' : ''} rows to stay under ${caps.maxChars} characters.`);
    kept = lo;
  }
  const out: QueryResult = { cols, data: data.slice(0, kept), count: kept };
  if (more || kept < data.length) out.truncated = true;
  if (notes.length) out.note = notes.join(' ');
  return out;
}

interface QueryProcess {
  child: ChildProcessWithoutNullStreams;
  pending: Map<number, { resolve: (r: QueryResult) => void; reject: (e: Error) => void }>;
}

/** Options of a {@link SqlRunner}. */
export interface SqlRunnerOptions {
  /** Wall-clock limit per query in ms (default 30,000, DDR's code-server default). */
  timeoutMs?: number;
  /**
   * `bubblewrap` (default): the query process runs in its own bubblewrap sandbox that sees only the
   * database file (read-only), the Node runtime and better-sqlite3 — no run store, no suite root, no
   * network. `off`: an unsandboxed child process (the run record says so).
   */
  sandbox?: 'bubblewrap' | 'off';
  /** The `bwrap` executable (default: found on PATH, then /usr/bin, /usr/local/bin). */
  bubblewrapPath?: string;
  /** Size of the sandbox's /tmp (SQLite's temporary files for sorts) in MiB; default 256. */
  tmpSizeMb?: number;
  /** Tests only: skip {@link checkReadStatement}, to prove the sandbox contains what the check refuses. */
  uncheckedForTests?: boolean;
}

/** What a statement check decided. */
export interface StatementCheck {
  ok: boolean;
  /** Why the statement is refused (shown to the agent). */
  reason?: string;
  /** `parser` when node-sql-parser understood the SQL, `lexical` when the fallback scanner decided. */
  method: 'parser' | 'lexical';
}

const FORBIDDEN_WORDS = [
  'attach',
  'detach',
  'vacuum',
  'pragma',
  'load_extension',
  'insert',
  'update',
  'delete',
  'drop',
  'create',
  'alter',
  'replace into',
  'reindex',
  'begin',
  'commit',
  'rollback',
  'savepoint',
  'release',
  'analyze',
];

/** Strips SQL comments and string / quoted-identifier literals, keeping the structure (for the lexical check). */
function stripSqlLiterals(sql: string): string {
  return sql
    .replace(/--[^\n]*/g, ' ')
    .replace(/\/\*[\s\S]*?(\*\/|$)/g, ' ')
    .replace(/'(?:[^']|'')*'?/g, "''")
    .replace(/"(?:[^"]|"")*"?/g, '""')
    .replace(/`[^`]*`?/g, '``')
    .replace(/\[[^\]]*\]?/g, '[]');
}

/**
 * Accepts only what `execute_query` is for: exactly one `SELECT` (or `WITH … SELECT`, `VALUES`)
 * statement. Refuses `ATTACH`, `DETACH`, `VACUUM` (incl. `VACUUM INTO`), `PRAGMA`, writes, several
 * statements and extension loading with a clear reason. The check gives clear errors; containment is
 * the query sandbox's job (issue 11: better-sqlite3 has no authorizer hook and `stmt.readonly` is
 * true for `ATTACH`, so neither is a guard).
 * Source: DDR `tool_server/sqlite_mcp.py` allowed SELECT/WITH/EXPLAIN/PRAGMA behind a substring
 * filter (spec §3.3, §3.7 item 6); Loupe narrows it to reads of the block's database.
 * @param sql the agent's SQL text.
 * @returns `{ok, reason?, method}`; never throws.
 */
export function checkReadStatement(sql: string): StatementCheck {
  const refuse = (reason: string, method: StatementCheck['method']): StatementCheck => ({ ok: false, reason, method });
  const bare = stripSqlLiterals(sql).trim().replace(/;\s*$/, '');
  if (!bare) return refuse('empty query: give one SELECT statement.', 'lexical');
  if (bare.includes(';')) {
    return refuse('only one statement per call is allowed (found several separated by ";").', 'lexical');
  }
  const lower = bare.toLowerCase().replace(/\s+/g, ' ');
  for (const w of FORBIDDEN_WORDS) {
    const re = new RegExp(`(^|[^a-z0-9_$])${w.replace(' ', '\\s+')}([^a-z0-9_$]|$)`);
    if (!re.test(lower)) continue;
    // Words that are also harmless function / column names in a SELECT: only refuse them as statements.
    if (
      (w === 'replace into' ||
        w === 'release' ||
        w === 'begin' ||
        w === 'analyze' ||
        w === 'update' ||
        w === 'delete' ||
        w === 'insert' ||
        w === 'create' ||
        w === 'drop' ||
        w === 'alter' ||
        w === 'commit' ||
        w === 'rollback' ||
        w === 'savepoint' ||
        w === 'reindex') &&
      !new RegExp(`^(with\\b.*\\)\\s*)?${w.replace(' ', '\\s+')}\\b`).test(lower)
    ) {
      continue;
    }
    return refuse(
      `${w.toUpperCase()} is not allowed: the database is read-only and execute_query runs one SELECT statement.`,
      'lexical',
    );
  }
  try {
    const ast = parser.astify(sql, { database: 'sqlite' }) as unknown;
    const list = (Array.isArray(ast) ? ast : [ast]) as { type?: string }[];
    if (list.length !== 1) return refuse(`only one statement per call is allowed (found ${list.length}).`, 'parser');
    const type = String(list[0]?.type ?? '').toLowerCase();
    if (type !== 'select') {
      return refuse(
        `${type.toUpperCase() || 'this statement'} is not allowed: the database is read-only and execute_query runs one SELECT statement.`,
        'parser',
      );
    }
    return { ok: true, method: 'parser' };
  } catch {
    // node-sql-parser does not know every SQLite construct: the lexical check above decided.
    if (!/^(with|select|values)\b/.test(lower)) {
      return refuse(
        `only SELECT (or WITH ... SELECT) statements are allowed; this one starts with "${lower.split(' ')[0]}".`,
        'lexical',
      );
    }
    return { ok: true, method: 'lexical' };
  }
}

/** Directories a sandboxed Node process needs: the runtime's own folder (Electron ships several files) and better-sqlite3. */
function nodeRuntimePaths(req: NodeJS.Require): { node: string; mounts: string[]; betterSqlite: string } {
  const node = realpathSync(process.execPath);
  const pkgDir = dirname(realpathSync(req.resolve('better-sqlite3/package.json')));
  return { node, mounts: [dirname(node), pkgDir], betterSqlite: pkgDir };
}

/**
 * bwrap argv (without the command) for the SQL query process: a new user, pid, network, IPC and UTS
 * namespace, capabilities dropped, dies with its parent; visible: /usr and the loader paths, the Node
 * runtime and better-sqlite3 read-only, the database file read-only at `mountAs`, a sized /tmp;
 * nothing else of the host (no run store, no suite root, no $HOME, no network).
 * @param o.node real path of the Node binary; `readOnly` folders to mount read-only at their path;
 *   `database` real path of the SQLite file; `mountAs` its path inside; `tmpSizeMb` size of /tmp.
 */
export function sqlSandboxArgs(o: {
  node: string;
  readOnly: string[];
  database: string;
  mountAs: string;
  tmpSizeMb: number;
}): string[] {
  const a = sandboxBaseArgs('loupe-sql', [
    '/etc/ld.so.cache',
    '/etc/ld.so.conf',
    '/etc/ld.so.conf.d',
    '/etc/localtime',
  ]);
  const tmpBytes = String(Math.max(1, o.tmpSizeMb) * 1024 * 1024);
  a.push('--proc', '/proc', '--dev', '/dev', '--size', tmpBytes, '--tmpfs', '/tmp');
  for (const d of o.readOnly) a.push('--ro-bind', d, d);
  a.push('--dir', dirname(o.mountAs), '--ro-bind', o.database, o.mountAs);
  // A WAL database opened read-only needs its -wal / -shm files beside it.
  for (const ext of ['-wal', '-shm']) {
    if (existsSync(o.database + ext)) a.push('--ro-bind', o.database + ext, o.mountAs + ext);
  }
  a.push('--remount-ro', '/', '--chdir', '/tmp');
  return a;
}

/**
 * Runs `execute_query` in a separate Node process with a wall-clock limit, so a runaway query (a huge
 * join, an endless recursive CTE) can neither block the CLI or the VS Code extension host nor keep
 * burning CPU: on timeout the process is killed (SIGKILL) and the next query starts a fresh one.
 * SQLite cannot be interrupted from JavaScript through better-sqlite3, hence a process, not a thread.
 * By default the process runs inside bubblewrap and sees only the database file (read-only, at
 * `/db/<name>`), the Node runtime and better-sqlite3: an `ATTACH` of the run store, a `VACUUM INTO`
 * a host path or reading any other file cannot reach the host (issue 11). Every statement is first
 * checked by {@link checkReadStatement}. The child opens the file read-only itself (`readonly: true` +
 * `query_only`) and gets no environment beyond PATH (no API keys). Protocol: one JSON object per line
 * on stdin / stdout.
 */
export class SqlRunner {
  readonly path: string;
  readonly timeoutMs: number;
  readonly sandbox: 'bubblewrap' | 'off';
  #opts: SqlRunnerOptions;
  #proc: QueryProcess | undefined;
  #next = 1;

  /**
   * @param path SQLite file; `opts` a per-query time limit in ms (default 30,000) or {@link SqlRunnerOptions}.
   * @throws LoupeInputError('loupe.sandbox') when the sandbox is `bubblewrap` and bwrap is not installed.
   */
  constructor(path: string, opts: number | SqlRunnerOptions = {}) {
    const o: SqlRunnerOptions = typeof opts === 'number' ? { timeoutMs: opts } : opts;
    this.path = path;
    this.timeoutMs = o.timeoutMs ?? 30_000;
    this.sandbox = o.sandbox ?? 'bubblewrap';
    this.#opts = o;
    if (this.sandbox === 'bubblewrap' && !(o.bubblewrapPath ?? findBubblewrap())) {
      throw new LoupeInputError(
        'loupe.sandbox',
        'bubblewrap (bwrap) is not installed, so SQL queries cannot be sandboxed. Install it (Debian/Ubuntu: sudo apt-get install bubblewrap) or opt in to unsandboxed tools with the sandbox setting "off".',
      );
    }
  }

  #spawn(): QueryProcess {
    const req = createRequire(typeof __filename === 'string' ? __filename : import.meta.url);
    const rt = nodeRuntimePaths(req);
    const sandboxed = this.sandbox === 'bubblewrap';
    const dbPath = sandboxed
      ? `/db/${basename(this.path).replace(/[^A-Za-z0-9._-]/g, '_') || 'database.sqlite'}`
      : this.path;
    const src = `
const __name = (f) => f;
const Database = require(${JSON.stringify(rt.betterSqlite)});
const db = new Database(${JSON.stringify(dbPath)}, { readonly: true, fileMustExist: true });
db.pragma('query_only = ON');
const executeQuery = ${executeQuery.toString()};
let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => {
  buf += c;
  let i;
  while ((i = buf.indexOf('\\n')) >= 0) {
    const m = JSON.parse(buf.slice(0, i));
    buf = buf.slice(i + 1);
    let out;
    try { out = { id: m.id, ok: true, result: executeQuery(db, m.sql, m.caps) }; }
    catch (e) { out = { id: m.id, ok: false, error: e && e.message ? e.message : String(e) }; }
    process.stdout.write(JSON.stringify(out) + '\\n');
  }
});
process.stdin.on('end', () => process.exit(0));`;
    const env = { PATH: '/usr/bin:/bin', ELECTRON_RUN_AS_NODE: '1', SQLITE_TMPDIR: '/tmp' };
    let cmd: string;
    let args: string[];
    if (sandboxed) {
      cmd = this.#opts.bubblewrapPath ?? findBubblewrap() ?? 'bwrap';
      args = sqlSandboxArgs({
        node: rt.node,
        readOnly: rt.mounts,
        database: realpathSync(this.path),
        mountAs: dbPath,
        tmpSizeMb: this.#opts.tmpSizeMb ?? 256,
      });
      args.push(rt.node, '-e', src);
    } else {
      cmd = process.execPath;
      args = ['-e', src];
    }
    const child = spawn(cmd, args, {
      env: sandboxed ? env : { ...env, PATH: process.env.PATH ?? '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const proc = {
      child,
      pending: new Map<number, { resolve: (r: QueryResult) => void; reject: (e: Error) => void }>(),
    };
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (c: string) => {
      out += c;
      let i;
      while ((i = out.indexOf('\n')) >= 0) {
        const m = JSON.parse(out.slice(0, i)) as { id: number; ok: boolean; result?: QueryResult; error?: string };
        out = out.slice(i + 1);
        const p = proc.pending.get(m.id);
        if (!p) continue;
        proc.pending.delete(m.id);
        if (m.ok) p.resolve(m.result!);
        else p.reject(new Error(m.error));
      }
    });
    child.stderr.on('data', (c: Buffer) => {
      err = (err + c.toString()).slice(-4000);
    });
    child.on('exit', (code, sig) => {
      for (const p of proc.pending.values()) {
        p.reject(new Error(`query process exited (${sig ?? code}): ${err.trim().split('\n').slice(-3).join(' ')}`));
      }
      proc.pending.clear();
      if (this.#proc === proc) this.#proc = undefined;
    });
    child.unref();
    (child.stdout as unknown as { unref?: () => void }).unref?.();
    (child.stderr as unknown as { unref?: () => void }).unref?.();
    (child.stdin as unknown as { unref?: () => void }).unref?.();
    return proc;
  }

  /**
   * Runs one query with the caps and the time limit.
   * @throws Error with SQLite's (enriched) message, or "query timed out after N s and was cancelled".
   */
  query(sql: string, caps: QueryCaps = defaultQueryCaps): Promise<QueryResult> {
    const check = this.#opts.uncheckedForTests ? ({ ok: true } as StatementCheck) : checkReadStatement(sql);
    if (!check.ok) return Promise.reject(new Error(`query refused: ${check.reason}`));
    this.#proc ??= this.#spawn();
    const proc = this.#proc;
    const id = this.#next++;
    return new Promise<QueryResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        proc.pending.delete(id);
        if (this.#proc === proc) this.#proc = undefined;
        proc.child.kill('SIGKILL');
        reject(
          new Error(
            `query timed out after ${(this.timeoutMs / 1000).toFixed(1)} s and was cancelled. Narrow it (WHERE on the entity, LIMIT, fewer joins).`,
          ),
        );
      }, this.timeoutMs);
      proc.pending.set(id, {
        resolve: (r) => {
          clearTimeout(timer);
          resolve(r);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      proc.child.stdin.write(JSON.stringify({ id, sql, caps }) + '\n');
    });
  }

  /** Ends the query process. */
  close(): void {
    const p = this.#proc;
    this.#proc = undefined;
    if (p) {
      p.child.stdin.end();
      p.child.kill('SIGKILL');
    }
  }
}

/** Tables and columns one query touched. */
export interface TouchedFields {
  tables: string[];
  /** `table.column`, sorted, real columns only. */
  columns: string[];
  /** `parser` when node-sql-parser understood the SQL, `fallback` when names were matched as words. */
  method: 'parser' | 'fallback';
}

const parser = new Parser();

/**
 * Which real tables and `table.column`s a query touched, for DDR's exploration metrics.
 * Uses node-sql-parser (SQLite dialect): qualified columns map to their table (aliases and CTEs are
 * resolved by column name against the query's real tables), `*` expands to every column of the
 * query's real tables, names that are not real columns (aliases) are dropped. When the parser fails
 * (PRAGMA, dialect gaps) identifiers are matched as whole words against the schema.
 * @param sql the query text; `schema` from {@link readSchema}.
 * @returns sorted, de-duplicated tables and columns.
 */
export function touchedFields(sql: string, schema: DbSchema): TouchedFields {
  const lowerTables = new Map<string, string>([...schema.keys()].map((t) => [t.toLowerCase(), t]));
  try {
    const tl = parser.tableList(sql, { database: 'sqlite' });
    const cl = parser.columnList(sql, { database: 'sqlite' });
    const tables = new Set<string>();
    for (const t of tl) {
      const name = t.split('::')[2] ?? '';
      const real = lowerTables.get(name.toLowerCase());
      if (real) tables.add(real);
    }
    const columns = new Set<string>();
    const colOf = (table: string, col: string) => schema.get(table)?.find((c) => c.toLowerCase() === col.toLowerCase());
    for (const c of cl) {
      const [, qual, col] = c.split('::');
      if (!col) continue;
      if (col === '(.*)') {
        for (const t of tables) for (const cc of schema.get(t) ?? []) columns.add(`${t}.${cc}`);
        continue;
      }
      const realQual = qual && qual !== 'null' ? lowerTables.get(qual.toLowerCase()) : undefined;
      if (realQual && tables.has(realQual)) {
        const cc = colOf(realQual, col);
        if (cc) columns.add(`${realQual}.${cc}`);
        continue;
      }
      for (const t of tables) {
        const cc = colOf(t, col);
        if (cc) columns.add(`${t}.${cc}`);
      }
    }
    return { tables: [...tables].sort(), columns: [...columns].sort(), method: 'parser' };
  } catch {
    const words = new Set((sql.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? []).map((w) => w.toLowerCase()));
    const tables = [...schema.keys()].filter((t) => words.has(t.toLowerCase()));
    const columns: string[] = [];
    for (const t of tables) {
      for (const c of schema.get(t) ?? []) if (words.has(c.toLowerCase())) columns.push(`${t}.${c}`);
    }
    return { tables: tables.sort(), columns: columns.sort(), method: 'fallback' };
  }
}
