/**
 * Bulk writes whose WAL checkpoint runs on a worker thread, not on the writer's thread (issue 23: the annotation
 * panel's first item). SQLite checkpoints automatically at the commit that leaves more than `wal_autocheckpoint`
 * pages (default 1,000) in the WAL: after a bulk write of ~10 MB (10,000 annotation items) that is ~2,400 pages
 * copied into the database file and two fsyncs, 60–130 ms on the committing thread — the extension host's, while an
 * expert waits for the first item. Here the commit leaves the WAL as it is and a worker thread, with its own
 * connection to the same file (the same SQLite library, so file locks are shared correctly), runs the checkpoint
 * while the caller goes on. Nothing is lost: a commit in WAL mode is complete without a checkpoint (readers see it;
 * SQLite recovers the WAL after a crash), and the checkpoint only moves pages into the main file.
 */
import type Database from 'better-sqlite3';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** The checkpoint as SQLite reports it: WAL frames, and frames copied into the database file. */
export interface CheckpointResult {
  log: number;
  checkpointed: number;
}

/** What {@link bulkWriteWithBackgroundCheckpoint} returns. */
export interface BulkWrite<T> {
  /** What `write` returned. */
  result: T;
  /**
   * Settles when the background checkpoint is over and automatic checkpoints are back on: its result, or undefined
   * when none ran in the background (in-memory or read-only database, automatic checkpoints already off, or the
   * worker could not start — the next commit then checkpoints as usual). Never rejects.
   */
  checkpointed: Promise<CheckpointResult | undefined>;
}

// CommonJS, evaluated in the worker: opens the same file with the same better-sqlite3 and checkpoints it (PASSIVE:
// never blocks the writer; pages written meanwhile are left for a later checkpoint).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.sqlite);
let db;
try {
  db = new Database(workerData.file, { fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  const [r] = db.pragma('wal_checkpoint(PASSIVE)');
  parentPort.postMessage({ log: r.log, checkpointed: r.checkpointed });
} catch (e) {
  parentPort.postMessage({ error: String(e && e.message || e) });
} finally {
  if (db) db.close();
}
`;

/** Connections whose automatic checkpoints are off until a background checkpoint ends. */
const pending = new WeakSet<Database.Database>();

/** better-sqlite3's entry file, for the worker (from a bundle, where it stays external, or from source). */
function sqliteModulePath(): string {
  return typeof require === 'function' && typeof require.resolve === 'function'
    ? require.resolve('better-sqlite3')
    : createRequire(import.meta.url).resolve('better-sqlite3');
}

/**
 * Runs `write` in one IMMEDIATE transaction with automatic checkpoints off, then checkpoints the WAL on a worker
 * thread (unref'd: it never keeps a process alive; a process that ends first leaves the WAL to the next open).
 * Automatic checkpoints come back on when the worker is done, so commits in between only add to the WAL.
 * @param db an open better-sqlite3 connection to a WAL-mode database file.
 * @param write the writes (synchronous, better-sqlite3 style); a throw rolls the transaction back and is rethrown.
 * @returns its result and a promise of the background checkpoint (see {@link BulkWrite.checkpointed}).
 * @throws whatever `write` throws (nothing is committed then, and automatic checkpoints are back on).
 */
export function bulkWriteWithBackgroundCheckpoint<T>(db: Database.Database, write: () => T): BulkWrite<T> {
  const restore = pauseAutoCheckpoints(db);
  if (!restore) return { result: db.transaction(write).immediate(), checkpointed: Promise.resolve(undefined) };
  let result: T;
  try {
    result = db.transaction(write).immediate();
  } catch (e) {
    restore();
    throw e;
  }
  return { result, checkpointed: checkpointInWorker(db, restore) };
}

/**
 * Turns `db`'s automatic checkpoints off. @returns the function turning them back on, or null when there are none to
 * turn off (in-memory or read-only database, automatic checkpoints off, or another bulk write's still pending).
 */
function pauseAutoCheckpoints(db: Database.Database): (() => void) | null {
  const every =
    db.memory || db.readonly || pending.has(db) ? 0 : (db.pragma('wal_autocheckpoint', { simple: true }) as number);
  if (!every) return null;
  db.pragma('wal_autocheckpoint = 0');
  pending.add(db);
  return () => {
    pending.delete(db);
    if (db.open) db.pragma(`wal_autocheckpoint = ${every}`);
  };
}

/** Checkpoints `db`'s WAL on a worker thread; `restore` (automatic checkpoints back on) runs when it ends or cannot start. */
function checkpointInWorker(db: Database.Database, restore: () => void): Promise<CheckpointResult | undefined> {
  let worker: Worker;
  try {
    worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { sqlite: sqliteModulePath(), file: db.name } });
  } catch {
    restore();
    return Promise.resolve(undefined);
  }
  worker.unref();
  return new Promise<CheckpointResult | undefined>((resolve) => {
    let r: CheckpointResult | undefined;
    worker.on('message', (m: CheckpointResult & { error?: string }) => {
      if (!m.error) r = { log: m.log, checkpointed: m.checkpointed };
    });
    worker.on('error', () => undefined);
    worker.on('exit', () => {
      restore();
      resolve(r);
    });
  });
}

/**
 * {@link bulkWriteWithBackgroundCheckpoint} for a write that runs its own transaction asynchronously (a `StoreSql`
 * transaction of a store written once for both engines, `store/sql.ts`): automatic checkpoints are off while it runs
 * (commits of other writers meanwhile only add to the WAL), then the WAL is checkpointed on a worker thread.
 * @param db an open better-sqlite3 connection to a WAL-mode database file (the handle `write`'s transaction uses).
 * @returns what `write` returned and a promise of the background checkpoint (see {@link BulkWrite.checkpointed}).
 * @throws whatever `write` throws (automatic checkpoints are back on then).
 */
export async function bulkWriteWithBackgroundCheckpointAsync<T>(
  db: Database.Database,
  write: () => Promise<T>,
): Promise<BulkWrite<T>> {
  const restore = pauseAutoCheckpoints(db);
  if (!restore) return { result: await write(), checkpointed: Promise.resolve(undefined) };
  let result: T;
  try {
    result = await write();
  } catch (e) {
    restore();
    throw e;
  }
  return { result, checkpointed: checkpointInWorker(db, restore) };
}
