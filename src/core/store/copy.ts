/**
 * Copies everything a run store holds into another one, of either engine (SQLite file ⇄ PostgreSQL team store):
 * runs, steps, answers, notes, saved code, kernel cells and figures, run events, interventions, run artefacts (content-
 * addressed files of the run folders, with their contents), judgements, scores,
 * annotation items / annotations / queues / reservations / drafts, checklist and ground-truth versions. Rows are
 * copied table by table with their ids and in their insertion order, as an upsert on each table's key (the source
 * wins for a row both hold, except in the append-only tables of {@link APPEND_ONLY_TABLES}, where a row the target
 * holds with other content is refused and named, issue 39; rows only the target holds are kept), all in one transaction of the target: a failed
 * copy writes nothing, and copying again changes nothing (idempotent). Run events have no key: the n-th of several
 * identical events is copied unless the target already holds n of them. Steps keep their `seq`; copied from SQLite to
 * PostgreSQL, their texts kept as run-folder blobs (over 1 MiB) are put back into the rows; annotations keep
 * the database role that wrote them (`db_role`: on PostgreSQL only the tables' owner may write it, so copy into a
 * team store as the role that owns it).
 * Source: issue 26 "Move data: `loupe store copy --from FILE.sqlite --to postgres://...` (and back)".
 */
import { dirname } from 'node:path';
import type pg from 'pg';
import { pgPoolOf, pgTransaction } from './pg-run-store.ts';
import { sqliteHandleOf, stepRowWithBlobTexts } from './run-store.ts';
import { trustedRunFolder } from './run-folder.ts';
import type { RunStore } from './types.ts';

type Row = Record<string, unknown>;

/**
 * Every table of the logical schema that holds data, parents first, with its key (null: no key) and, for tables of
 * large rows, the rows read and written at a time (default 500; artefact contents are up to 16 MiB each).
 */
export const COPY_TABLES: ReadonlyArray<{ name: string; key: string[] | null; page?: number }> = [
  { name: 'runs', key: ['id'] },
  { name: 'steps', key: ['run_id', 'idx'] },
  { name: 'answers', key: ['run_id', 'query_id'] },
  { name: 'notes', key: ['run_id', 'idx'] },
  { name: 'saved_code', key: ['run_id', 'step_idx'] },
  { name: 'kernel_cells', key: ['run_id', 'seq'] },
  { name: 'cell_figures', key: ['run_id', 'cell_seq', 'idx'] },
  { name: 'run_events', key: null },
  { name: 'interventions', key: ['run_id', 'seq'] },
  { name: 'artefact_blobs', key: ['sha256'], page: 4 },
  { name: 'run_artefacts', key: ['run_id', 'path'] },
  { name: 'judgements', key: ['cache_key'] },
  { name: 'scores', key: ['run_id', 'judge_id', 'options'] },
  { name: 'annotation_items', key: ['id'] },
  { name: 'annotations', key: ['id'] },
  { name: 'annotation_queues', key: ['id'] },
  { name: 'annotation_queue_items', key: ['queue_id', 'pos'] },
  { name: 'annotation_reservations', key: ['queue_id', 'item_id', 'annotator'] },
  { name: 'annotation_drafts', key: ['queue_id', 'item_id', 'annotator'] },
  { name: 'checklist_versions', key: ['suite_id', 'block_id', 'version'] },
  { name: 'blade_gt_versions', key: ['dataset', 'version'] },
  { name: 'run_labels', key: ['id'] },
  { name: 'saved_filters', key: ['id'] },
  { name: 'queue_instructions', key: ['queue_id', 'version'] },
  { name: 'queue_assignments', key: ['id'] },
];

/**
 * Tables whose rows are never changed once written (migration 18, issue 39: expert judgements are append-only). A copy
 * adds their rows the target lacks and never overwrites one: a source row whose key the target holds with other
 * content is refused and named (`CopyFailure.error` starts with {@link APPEND_ONLY_REFUSAL}), whatever the target's
 * engine and whoever copies (on PostgreSQL the tables' owner may edit them; a copy does not).
 */
export const APPEND_ONLY_TABLES: ReadonlySet<string> = new Set([
  'annotations',
  'checklist_versions',
  'blade_gt_versions',
  'run_labels',
  'saved_filters',
  'queue_instructions',
  'queue_assignments',
]);

/** How the error of a row refused because its append-only table already holds other content under its key begins. */
export const APPEND_ONLY_REFUSAL = 'refused:';

/** The error of a refused append-only row (see {@link APPEND_ONLY_TABLES}). */
function appendOnlyError(table: string): string {
  return `${APPEND_ONLY_REFUSAL} ${table} are append-only: the target holds a different row with this key (a correction is a new row that supersedes it; the target's row is kept)`;
}

/** Tables that are bookkeeping of one database, never copied (the target keeps its own). */
export const NOT_COPIED = ['migrations', 'annotation_sync'];

/** A source row the target refused (issue 39): its table, its key (keyless tables: its position), and why. */
export interface CopyFailure {
  table: string;
  /** The row's key columns and values; for a keyless table `{ row: n }` (1-based, in insertion order) plus `run_id`. */
  key: Record<string, unknown>;
  /** The target's error message. */
  error: string;
}

/**
 * Rows per table: read from the source, and added to the target (0 everywhere on a repeated copy); the rows the
 * target refused (absent when none).
 */
export interface CopyReport {
  from: string;
  to: string;
  tables: Array<{ table: string; rows: number; added: number }>;
  failed?: CopyFailure[];
}

const PAGE = 500;

/** Engine-level row access (inside `src/core/store/` only). */
interface RowIo {
  /** Logical columns of a table (PostgreSQL's `rid` ordering column excluded). */
  columns(table: string): Promise<string[]>;
  count(table: string): Promise<number>;
  /** A page of rows in insertion order. */
  read(table: string, cols: string[], key: string[] | null, offset: number, limit: number): Promise<Row[]>;
  /**
   * Runs `fn` in one transaction; `put` upserts rows (keyless tables: row i is added when the target holds fewer than
   * `nth[i]` identical rows). A batch the target refuses is rolled back to a savepoint and its rows written one by one
   * (each under its own savepoint): `put` returns the rows refused (index into `rows`, message); the others are kept.
   */
  transaction(fn: (put: Put) => Promise<void>): Promise<void>;
}

type Put = (
  table: string,
  cols: string[],
  key: string[] | null,
  rows: Row[],
  nth: number[],
) => Promise<Array<{ index: number; error: string }>>;

/** The indices of `rows` not refused already (`failed`) whose exact row the target does not hold (`holds(row)`). */
async function notHeld(
  table: string,
  rows: Row[],
  failed: Array<{ index: number; error: string }>,
  holds: (r: Row) => Promise<boolean>,
): Promise<Array<{ index: number; error: string }>> {
  const out = [...failed];
  const refused = new Set(failed.map((f) => f.index));
  for (const [i, r] of rows.entries()) {
    if (!refused.has(i) && !(await holds(r))) out.push({ index: i, error: appendOnlyError(table) });
  }
  return out.sort((a, b) => a.index - b.index);
}

/**
 * Writes `rows` as one batch under a savepoint; when the target refuses it, rolls back to the savepoint and writes
 * the rows one at a time, each under its own savepoint, collecting the refused ones.
 */
async function withSavepoints(
  exec: (sql: string) => Promise<void>,
  rows: Row[],
  write: (rows: Row[], first: number) => Promise<void>,
): Promise<Array<{ index: number; error: string }>> {
  await exec('SAVEPOINT loupe_copy');
  try {
    await write(rows, 0);
    await exec('RELEASE SAVEPOINT loupe_copy');
    return [];
  } catch {
    await exec('ROLLBACK TO SAVEPOINT loupe_copy');
    await exec('RELEASE SAVEPOINT loupe_copy');
  }
  const failed: Array<{ index: number; error: string }> = [];
  for (const [i, r] of rows.entries()) {
    await exec('SAVEPOINT loupe_copy_row');
    try {
      await write([r], i);
      await exec('RELEASE SAVEPOINT loupe_copy_row');
    } catch (e) {
      await exec('ROLLBACK TO SAVEPOINT loupe_copy_row');
      await exec('RELEASE SAVEPOINT loupe_copy_row');
      failed.push({ index: i, error: (e as Error).message });
    }
  }
  return failed;
}

const q = (c: string) => `"${c}"`;

function sqliteIo(store: RunStore): RowIo {
  const db = sqliteHandleOf(store);
  return {
    async columns(table) {
      return (db.prepare(`PRAGMA table_info(${q(table)})`).all() as { name: string }[]).map((r) => r.name);
    },
    async count(table) {
      return (db.prepare(`SELECT COUNT(*) AS n FROM ${q(table)}`).get() as { n: number }).n;
    },
    async read(table, cols, _key, offset, limit) {
      return db
        .prepare(`SELECT ${cols.map(q).join(', ')} FROM ${q(table)} ORDER BY rowid LIMIT ? OFFSET ?`)
        .all(limit, offset) as Row[];
    },
    async transaction(fn) {
      db.exec('BEGIN');
      try {
        await fn(async (table, cols, key, rows, nth) => {
          const values = cols.map(() => '?').join(', ');
          const appendOnly = key !== null && APPEND_ONLY_TABLES.has(table);
          const sql = key
            ? `INSERT INTO ${q(table)} (${cols.map(q).join(', ')}) VALUES (${values}) ON CONFLICT (${key.map(q).join(', ')}) DO ${
                appendOnly
                  ? 'NOTHING'
                  : `UPDATE SET ${cols
                      .filter((c) => !key.includes(c))
                      .map((c) => `${q(c)} = excluded.${q(c)}`)
                      .join(', ')}`
              }`
            : `INSERT INTO ${q(table)} (${cols.map(q).join(', ')}) SELECT ${values} WHERE (SELECT COUNT(*) FROM ${q(table)} WHERE ${cols.map((c) => `${q(c)} IS ?`).join(' AND ')}) < ?`;
          const st = db.prepare(sql);
          const failed = await withSavepoints(
            async (s) => {
              db.exec(s);
            },
            rows,
            async (batch, first) => {
              batch.forEach((r, i) => {
                const v = cols.map((c) => r[c] ?? null);
                st.run(...(key ? v : [...v, ...v, nth[first + i]]));
              });
            },
          );
          if (!appendOnly) return failed;
          const same = db.prepare(
            `SELECT 1 FROM ${q(table)} WHERE ${cols.map((c) => `${q(c)} IS ?`).join(' AND ')} LIMIT 1`,
          );
          return notHeld(table, rows, failed, async (r) => same.get(...cols.map((c) => r[c] ?? null)) !== undefined);
        });
        db.exec('COMMIT');
      } catch (e) {
        db.exec('ROLLBACK');
        throw e;
      }
    },
  };
}

function pgIo(store: RunStore): RowIo {
  const pool = pgPoolOf(store);
  const hasRid = new Map<string, boolean>();
  const columnsOf = async (table: string) => {
    const rows = (
      await pool.query(
        'SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position',
        [table],
      )
    ).rows as { column_name: string }[];
    hasRid.set(
      table,
      rows.some((r) => r.column_name === 'rid'),
    );
    return rows.map((r) => r.column_name).filter((c) => c !== 'rid');
  };
  return {
    columns: columnsOf,
    async count(table) {
      return Number((await pool.query(`SELECT COUNT(*) AS n FROM ${q(table)}`)).rows[0].n);
    },
    async read(table, cols, key, offset, limit) {
      if (!hasRid.has(table)) await columnsOf(table);
      const order = hasRid.get(table) ? 'rid' : (key ?? cols).map(q).join(', ');
      return (
        await pool.query(`SELECT ${cols.map(q).join(', ')} FROM ${q(table)} ORDER BY ${order} LIMIT $1 OFFSET $2`, [
          limit,
          offset,
        ])
      ).rows as Row[];
    },
    async transaction(fn) {
      const client: pg.PoolClient = await pool.connect();
      await pgTransaction(client, async () => {
        await fn(async (table, cols, key, rows, nth) => {
          const exec = async (s: string) => {
            await client.query(s);
          };
          if (!key) {
            const sql = `INSERT INTO ${q(table)} (${cols.map(q).join(', ')}) SELECT ${cols.map((_, i) => `$${i + 1}`).join(', ')}
              WHERE (SELECT COUNT(*) FROM ${q(table)} WHERE ${cols.map((c, i) => `${q(c)} IS NOT DISTINCT FROM $${i + 1}`).join(' AND ')}) < $${cols.length + 1}`;
            return withSavepoints(exec, rows, async (batch, first) => {
              for (const [i, r] of batch.entries()) {
                await client.query(sql, [...cols.map((c) => r[c] ?? null), nth[first + i]]);
              }
            });
          }
          const per = Math.max(1, Math.min(PAGE, Math.floor(60_000 / cols.length)));
          const rest = cols.filter((c) => !key.includes(c));
          const appendOnly = APPEND_ONLY_TABLES.has(table);
          const failed: Array<{ index: number; error: string }> = [];
          for (let i = 0; i < rows.length; i += per) {
            const refused = await withSavepoints(exec, rows.slice(i, i + per), async (batch) => {
              const params: unknown[] = [];
              const tuples = batch.map(
                (r) => `(${cols.map((c) => (params.push(r[c] ?? null), `$${params.length}`)).join(', ')})`,
              );
              await client.query(
                `INSERT INTO ${q(table)} (${cols.map(q).join(', ')}) VALUES ${tuples.join(', ')}
                ON CONFLICT (${key.map(q).join(', ')}) DO ${rest.length && !appendOnly ? `UPDATE SET ${rest.map((c) => `${q(c)} = excluded.${q(c)}`).join(', ')}` : 'NOTHING'}`,
                params,
              );
            });
            failed.push(...refused.map((f) => ({ ...f, index: f.index + i })));
          }
          if (!appendOnly) return failed;
          const same = `SELECT 1 FROM ${q(table)} WHERE ${cols.map((c, i) => `${q(c)} IS NOT DISTINCT FROM $${i + 1}`).join(' AND ')} LIMIT 1`;
          return notHeld(
            table,
            rows,
            failed,
            async (r) =>
              (
                await client.query(
                  same,
                  cols.map((c) => r[c] ?? null),
                )
              ).rows.length > 0,
          );
        });
      });
    },
  };
}

function rowIo(store: RunStore): RowIo {
  if (store.engine === 'sqlite') return sqliteIo(store);
  if (store.engine === 'postgres') return pgIo(store);
  throw new Error(
    `cannot copy the ${store.engine} run store at ${store.location}: only sqlite and postgres stores are copied`,
  );
}

/**
 * Copies every row of `from` into `to` (see the module comment), in one transaction of `to`. A row the target
 * refuses (a value its column type rejects, a constraint) is left out and named in `failed` (table and key); every
 * other row is copied (issue 39: one bad row used to abort the whole copy without naming it).
 * @param from an open run store (SQLite or PostgreSQL); a SQLite store's long step texts are read from run folders
 *   inside the store file's folder only (issue 36).
 * @param to an open run store at the same schema version (SQLite or PostgreSQL; may be the other engine).
 * @returns rows read per table, rows added to the target, and the rows refused (`failed`, absent when none).
 * @throws Error naming both stores when their schema versions differ, or a table or column is missing on one side;
 *   the target is then unchanged.
 */
export async function copyStore(from: RunStore, to: RunStore): Promise<CopyReport> {
  const [vf, vt] = [await from.schemaVersion(), await to.schemaVersion()];
  if (vf !== vt) {
    throw new Error(
      `cannot copy ${from.location} (schema ${vf}) to ${to.location} (schema ${vt}): open both with the same Loupe first`,
    );
  }
  const src = rowIo(from);
  const dst = rowIo(to);
  const plan: Array<{ name: string; key: string[] | null; page?: number; cols: string[]; before: number }> = [];
  for (const t of COPY_TABLES) {
    const cols = await src.columns(t.name);
    const have = new Set(await dst.columns(t.name));
    if (!cols.length || !have.size) {
      throw new Error(`table ${t.name} is missing in ${cols.length ? to.location : from.location}`);
    }
    const missing = cols.filter((c) => !have.has(c));
    if (missing.length) throw new Error(`${to.location}: table ${t.name} has no column ${missing.join(', ')}`);
    plan.push({ ...t, cols, before: await dst.count(t.name) });
  }
  const rows = new Map<string, number>();
  const failed: CopyFailure[] = [];
  // Long step texts a SQLite store keeps as files of the run folder (blobs/) go into the rows of a team store, which
  // has no run folders (a colleague reads the whole observation).
  const workspaces = new Map<string, string | undefined>();
  const inline = from.engine === 'sqlite' && to.engine !== 'sqlite';
  const withTexts = async (r: Row): Promise<Row> => {
    const id = r.run_id as string;
    if (!workspaces.has(id)) {
      // Issue 36: blobs are read only from a run folder inside the source store's folder (a crafted store cannot
      // point them at another folder of this machine).
      const run = await from.getRun(id);
      workspaces.set(id, run ? (trustedRunFolder(run, dirname(from.location)).runDir ?? undefined) : undefined);
    }
    return stepRowWithBlobTexts(r, workspaces.get(id));
  };
  await dst.transaction(async (put) => {
    for (const t of plan) {
      let n = 0;
      const seen = new Map<string, number>(); // keyless tables: how many identical rows so far
      for (;;) {
        const limit = t.page ?? PAGE;
        let page = await src.read(t.name, t.cols, t.key, n, limit);
        if (inline && t.name === 'steps') page = await Promise.all(page.map(withTexts));
        if (!page.length) break;
        const nth = t.key
          ? []
          : page.map((r) => {
              const sig = JSON.stringify(t.cols.map((c) => r[c] ?? null));
              const k = (seen.get(sig) ?? 0) + 1;
              seen.set(sig, k);
              return k;
            });
        for (const f of await put(t.name, t.cols, t.key, page, nth)) {
          const r = page[f.index]!;
          const key = t.key
            ? Object.fromEntries(t.key.map((c) => [c, r[c]]))
            : { row: n + f.index + 1, ...('run_id' in r ? { run_id: r.run_id } : {}) };
          failed.push({ table: t.name, key, error: f.error });
        }
        n += page.length;
        if (page.length < limit) break;
      }
      rows.set(t.name, n);
    }
  });
  const tables: CopyReport['tables'] = [];
  for (const t of plan) {
    tables.push({ table: t.name, rows: rows.get(t.name) ?? 0, added: (await dst.count(t.name)) - t.before });
  }
  return { from: from.location, to: to.location, tables, ...(failed.length ? { failed } : {}) };
}
