/**
 * The {@link StoreSql} of a run store, whichever its engine (issue 41): what the stores kept with the runs
 * (checklists, BLADE ground-truth versions, judgements, scores, artefacts) query through, written once for both engines.
 * Source: issue 41 "One query and schema source for SQLite and PostgreSQL".
 */
import { PgRunStore } from './pg-run-store.ts';
import { SqliteRunStore } from './run-store.ts';
import type { StoreSql } from './sql.ts';
import type { RunStore } from './types.ts';

/**
 * The query runner of a run store (same database and engine; the object is the store's own, so repeated calls share it).
 * @param what names the store asking, for the error.
 * @throws Error naming `what` and the engine when the run store is neither the SQLite nor the PostgreSQL engine.
 */
export function storeSqlOf(store: RunStore, what = 'this store'): StoreSql {
  if (store instanceof SqliteRunStore) return SqliteRunStore.sqlOf(store);
  if (store instanceof PgRunStore) return PgRunStore.sqlOf(store);
  throw new Error(`${what} is not available on the ${store.engine} run store at ${store.location}`);
}
