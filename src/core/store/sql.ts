/**
 * One query source for both store engines (issue 41). The plain read/write stores (judgements, scores, artefacts,
 * checklists, BLADE ground-truth versions, ...) build each query once with Kysely against the typed tables of
 * {@link Database} and run it through {@link StoreSql}: on SQLite the run store's better-sqlite3 handle, on PostgreSQL
 * the run store's pool. Kysely compiles (its SQLite or PostgreSQL query compiler: `?` or `$n` parameters, quoting);
 * the engine runs the compiled text. Running through the engines' own paths rather than Kysely's drivers keeps
 * what each engine's path does: PostgreSQL's lossless-text client and type parsers (`pg-text.ts`), its retry of a
 * statement on a connection the server closed, its error messages naming the store, the wait for a lazily opened
 * store's migrations; SQLite's synchronous statements on the one handle of the process.
 *
 * What genuinely differs between the engines stays here, in {@link StoreSql.tx}: a transaction that serialises the
 * writers of one logical thing (a checklist's block, a dataset's ground truth) is `BEGIN IMMEDIATE` on SQLite (the
 * write lock up front, so two processes never both read then both insert) and `BEGIN` plus a transaction-scoped
 * advisory lock on a hash of the name on PostgreSQL (writers of other names proceed).
 * Source: issue 41 "One query and schema source for SQLite and PostgreSQL".
 */
import type BetterSqlite from 'better-sqlite3';
import type pg from 'pg';
import { type Compilable, type CompiledQuery, type Kysely } from 'kysely';
import { compilerOf, type SqlDialect } from './migrations.ts';
import type { Database } from './schema.ts';

/** What a store above the engine runs its queries with (one per run store; see {@link sqliteSql}, {@link pgSql}). */
export interface StoreSql {
  readonly dialect: SqlDialect;
  /** The query builder (compiles only: run what it builds with {@link all}, {@link first}, {@link run}). */
  readonly db: Kysely<Database>;
  /** The insertion-order column: SQLite's `rowid`, PostgreSQL's `rid`. */
  readonly rowid: 'rowid' | 'rid';
  /** Every row of a query. */
  all<R>(q: Compilable<R>): Promise<R[]>;
  /** The first row of a query, if any. */
  first<R>(q: Compilable<R>): Promise<R | undefined>;
  /** Runs a statement. */
  run(q: Compilable<unknown>): Promise<void>;
  /**
   * Runs `body` in one transaction (committed when it returns, rolled back when it throws), its queries through the
   * `StoreSql` it is given. With `lock`, writers of the same lock name run one after another.
   */
  tx<T>(lock: string | null, body: (t: StoreSql) => Promise<T>): Promise<T>;
}

/**
 * Runs `body` in a transaction on `client` — BEGIN (unless `begun`: the caller's retry loop began it), COMMIT, or
 * ROLLBACK when it throws — and releases the client (as broken when BEGIN or the ROLLBACK failed, so the pool drops
 * it). Used by the PostgreSQL engines of the annotation store, {@link pgSql}'s transactions and `loupe store copy`.
 * @returns what `body` returned. @throws what BEGIN, `body` or COMMIT threw.
 */
export async function pgTransaction<T>(
  client: pg.PoolClient,
  body: () => Promise<T>,
  opts: { begun?: boolean } = {},
): Promise<T> {
  if (!opts.begun) {
    try {
      await client.query('BEGIN');
    } catch (e) {
      client.release(e as Error);
      throw e;
    }
  }
  let broken: Error | undefined;
  try {
    const out = await body();
    await client.query('COMMIT');
    return out;
  } catch (e) {
    try {
      await client.query('ROLLBACK');
    } catch (r) {
      broken = r as Error;
    }
    throw e;
  } finally {
    client.release(broken);
  }
}

const compilers: Partial<Record<SqlDialect, Kysely<Database>>> = {};
/** The compile-only builder of a dialect (one per process). */
function builderOf(dialect: SqlDialect): Kysely<Database> {
  return (compilers[dialect] ??= compilerOf(dialect) as unknown as Kysely<Database>);
}

/** SQLite binds numbers, strings, bigints, buffers and null; Kysely passes booleans as given. */
const sqliteParam = (v: unknown) => (typeof v === 'boolean' ? (v ? 1 : 0) : v);

/** A SQLite handle's transaction state: the queue of {@link sqliteSql} transactions, and the one open now, if any. */
interface SqliteGate {
  queue: Promise<unknown>;
  /** Settles when the transaction open on the handle (between its BEGIN IMMEDIATE and COMMIT/ROLLBACK) ends. */
  open: Promise<void> | null;
}
const gates = new WeakMap<BetterSqlite.Database, SqliteGate>();
const gateOf = (handle: BetterSqlite.Database): SqliteGate => {
  let g = gates.get(handle);
  if (!g) gates.set(handle, (g = { queue: Promise.resolve(), open: null }));
  return g;
};

/**
 * Runs a synchronous write on a SQLite handle outside any {@link StoreSql.tx} transaction open on it.
 * Why: a `StoreSql` transaction's body awaits between its statements (the body is written once for both engines),
 * and SQLite has one connection per handle, so a statement another part of the process ran on the handle meanwhile
 * would join that transaction — and be lost with it when it rolls back (issue 41). Every writer of the handle outside
 * such a transaction (the run store's writes, the annotation store's, `StoreSql.run` outside a transaction) goes
 * through here: with no transaction open, `write` runs at once (synchronously, as before); with one open, it runs as
 * soon as that transaction has committed or rolled back — synchronously after the check, so no transaction can begin
 * in between. A transaction body must not call this (it would wait for itself): it writes through the `StoreSql` it
 * is given.
 * @returns what `write` returned (a promise of it when it had to wait). @throws what `write` throws.
 */
export function sqliteWrite<T>(handle: BetterSqlite.Database, write: () => T): T | Promise<T> {
  const g = gateOf(handle);
  if (!g.open) return write();
  return (async () => {
    // bounded: each pass waits for one transaction to end, and transactions end (commit or rollback)
    while (g.open) await g.open;
    return write();
  })();
}

/**
 * True when a compiled statement only reads: better-sqlite3's `reader` is also true of a write with RETURNING
 * (`INSERT … RETURNING`), which must go through {@link sqliteWrite} like any other write.
 */
function readOnly(c: CompiledQuery, st: BetterSqlite.Statement): boolean {
  return (
    st.reader &&
    (c.query.kind === 'SelectQueryNode' ||
      (c.query.kind === 'RawNode' && /^\s*(SELECT|WITH)\b/i.test(c.sql) && !/\bRETURNING\b/i.test(c.sql)))
  );
}

/**
 * The {@link StoreSql} of a SQLite run store's handle (`sqliteHandleOf`).
 * SQLite's transactions: `BEGIN IMMEDIATE` takes the write lock first (another process waits, `busy_timeout`); one
 * transaction at a time on the handle (a second waits for the first in this process; shared by every `StoreSql` of
 * the handle). While one is open, every other writer of the handle waits for it to end ({@link sqliteWrite}), so no
 * statement outside the body joins the transaction.
 */
export function sqliteSql(handle: BetterSqlite.Database): StoreSql {
  const gate = gateOf(handle);
  const on = (inTx: boolean): Omit<StoreSql, 'tx'> => {
    const write = <T>(w: () => T): T | Promise<T> => (inTx ? w() : sqliteWrite(handle, w));
    return {
      dialect: 'sqlite',
      db: builderOf('sqlite'),
      rowid: 'rowid',
      all: async <R>(q: Compilable<R>) => {
        const c = q.compile();
        const st = handle.prepare(c.sql);
        const params = c.parameters.map(sqliteParam);
        if (!st.reader) {
          await write(() => st.run(...params));
          return [] as R[];
        }
        return (readOnly(c, st) ? st.all(...params) : await write(() => st.all(...params))) as R[];
      },
      first: async <R>(q: Compilable<R>) => {
        const c = q.compile();
        const st = handle.prepare(c.sql);
        const params = c.parameters.map(sqliteParam);
        return (readOnly(c, st) ? st.get(...params) : await write(() => st.get(...params))) as R | undefined;
      },
      run: async (q: Compilable<unknown>) => {
        const c = q.compile();
        const st = handle.prepare(c.sql);
        await write(() => st.run(...c.parameters.map(sqliteParam)));
      },
    };
  };
  const inside: StoreSql = { ...on(true), tx: () => Promise.reject(new Error('nested store transaction')) };
  return {
    ...on(false),
    tx: <T>(_lock: string | null, body: (t: StoreSql) => Promise<T>): Promise<T> => {
      const turn = gate.queue.then(async () => {
        // a writer outside waits until this transaction ends (sqliteWrite); BEGIN runs synchronously after the check
        while (gate.open) await gate.open;
        let end!: () => void;
        gate.open = new Promise<void>((r) => (end = r));
        try {
          handle.exec('BEGIN IMMEDIATE');
          try {
            const out = await body(inside);
            handle.exec('COMMIT');
            return out;
          } catch (e) {
            if (handle.inTransaction) handle.exec('ROLLBACK');
            throw e;
          }
        } finally {
          gate.open = null;
          end();
        }
      });
      gate.queue = turn.catch(() => undefined);
      return turn;
    },
  };
}

/**
 * The {@link StoreSql} of a PostgreSQL run store (its pool once migrated: `pgReadyPoolOf`).
 * @param query runs one statement through the run store's retrying path (rows returned).
 * @param pool the run store's pool, for transactions on one connection.
 * @param closed true of an error a pooled connection the server closed (a restart) gives at BEGIN: nothing ran, the
 *   transaction starts again on a new connection (up to 5 times), as the run store's own transactions do.
 */
export function pgSql(
  query: (sql: string, params: readonly unknown[]) => Promise<unknown[]>,
  pool: () => Promise<pg.Pool>,
  closed: (e: unknown) => boolean = () => false,
): StoreSql {
  const on = (q: (sql: string, params: readonly unknown[]) => Promise<unknown[]>): Omit<StoreSql, 'tx'> => ({
    dialect: 'postgres',
    db: builderOf('postgres'),
    rowid: 'rid',
    all: async <R>(b: Compilable<R>) => {
      const c = b.compile();
      return (await q(c.sql, c.parameters)) as R[];
    },
    first: async <R>(b: Compilable<R>) => {
      const c = b.compile();
      return (await q(c.sql, c.parameters))[0] as R | undefined;
    },
    run: async (b: Compilable<unknown>) => {
      const c = b.compile();
      await q(c.sql, c.parameters);
    },
  });
  return {
    ...on(query),
    tx: async <T>(lock: string | null, body: (t: StoreSql) => Promise<T>): Promise<T> => {
      const p = await pool();
      let client = await p.connect();
      for (let attempt = 0; ; attempt++) {
        try {
          await client.query('BEGIN');
          break;
        } catch (e) {
          client.release(e as Error); // the pool drops it
          if (!closed(e) || attempt >= 5) throw e;
          client = await p.connect();
        }
      }
      const c = client;
      return pgTransaction(
        c,
        async () => {
          const q = async (sql: string, params: readonly unknown[]) =>
            (await c.query(sql, params as unknown[])).rows as unknown[];
          if (lock !== null) await q('SELECT pg_advisory_xact_lock(hashtext($1))', [lock]);
          return body({ ...on(q), tx: () => Promise.reject(new Error('nested store transaction')) });
        },
        { begun: true },
      );
    },
  };
}
