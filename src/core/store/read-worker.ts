/**
 * Reads of a SQLite run store that scan every step's texts run on a worker thread, not on the caller's (issue 23:
 * the timeline of a 10,000-step run whose observations are 20 KB each). SQLite keeps a step's small columns after
 * its JSON texts in the row, so even a summary walks ~200 MB of overflow pages and parses their JSON: 0.4–0.5 s that
 * used to block the extension host while the panel opened, and the same for a search. Here a worker thread with its
 * own read-only connection to the same file (the same better-sqlite3, so WAL locks are shared correctly) runs the
 * statement and posts the rows back; the caller's thread only receives them. A WAL reader sees every committed
 * step, so the result is what the caller's own connection would have read.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

type Row = Record<string, unknown>;

// CommonJS, evaluated in the worker: one read-only connection, opened on the first statement, kept for the next.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.sqlite);
let db;
parentPort.on('message', (m) => {
  try {
    if (!db) {
      db = new Database(workerData.file, { readonly: true, fileMustExist: true });
      db.pragma('busy_timeout = 5000');
    }
    parentPort.postMessage({ id: m.id, rows: db.prepare(m.sql).all(...m.params) });
  } catch (e) {
    parentPort.postMessage({ id: m.id, error: String((e && e.message) || e) });
  }
});
`;

/** better-sqlite3's entry file, for the worker (from a bundle, where it stays external, or from source). */
function sqliteModulePath(): string {
  return typeof require === 'function' && typeof require.resolve === 'function'
    ? require.resolve('better-sqlite3')
    : createRequire(import.meta.url).resolve('better-sqlite3');
}

/**
 * One worker thread reading one SQLite file, started on the first {@link OffThreadReader.all}. It never keeps a
 * process alive when nothing is asked of it (unref'd between statements).
 */
export class OffThreadReader {
  readonly #file: string;
  #worker: Worker | undefined;
  /** Set when the worker could not start or died: every later read answers undefined (the caller reads in-thread). */
  #broken = false;
  #next = 1;
  readonly #pending = new Map<number, (rows: Row[] | undefined) => void>();

  /** @param file path of a SQLite database file in WAL mode (not `:memory:`). */
  constructor(file: string) {
    this.#file = file;
  }

  /**
   * Runs one read-only statement on the worker thread.
   * @param sql a SELECT; `params` its positional parameters (strings, numbers, null).
   * @returns the rows as better-sqlite3 returns them (objects keyed by column name), or undefined when the worker
   *   cannot answer (could not start, died, closed, or the statement failed there): the caller then runs the
   *   statement on its own connection, which reports any error itself. Never rejects.
   */
  all(sql: string, params: unknown[]): Promise<Row[] | undefined> {
    const w = this.#start();
    if (!w) return Promise.resolve(undefined);
    const id = this.#next++;
    return new Promise((resolve) => {
      if (this.#pending.size === 0) w.ref();
      this.#pending.set(id, resolve);
      w.postMessage({ id, sql, params });
    });
  }

  /** Ends the worker; reads still pending answer undefined. Idempotent. */
  close(): void {
    this.#broken = true;
    this.#settleAll();
    void this.#worker?.terminate();
    this.#worker = undefined;
  }

  #start(): Worker | undefined {
    if (this.#worker || this.#broken) return this.#worker;
    try {
      const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { file: this.#file, sqlite: sqliteModulePath() } });
      w.unref();
      w.on('message', (m: { id: number; rows?: Row[]; error?: string }) => {
        const done = this.#pending.get(m.id);
        if (!done) return;
        this.#pending.delete(m.id);
        if (this.#pending.size === 0) w.unref();
        done(m.error === undefined ? m.rows : undefined);
      });
      const fail = () => {
        this.#broken = true;
        this.#worker = undefined;
        this.#settleAll();
      };
      w.on('error', fail);
      w.on('exit', fail);
      this.#worker = w;
      return w;
    } catch {
      this.#broken = true;
      return undefined;
    }
  }

  #settleAll(): void {
    for (const done of this.#pending.values()) done(undefined);
    this.#pending.clear();
  }
}
