/**
 * Runs a store test suite against every run-store engine: SQLite (a file in a temp dir) and PostgreSQL (a real
 * server started in a temp dir by `pg.ts`, one fresh database per `fresh()`). A suite written once as
 * `forEachEngine((e) => { it(...) })` runs as two `describe` blocks, `sqlite` and `postgres`. If the PostgreSQL
 * server cannot start, the `postgres` block fails with the reason (never skipped).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe } from 'node:test';
import type { Migration } from '../../src/core/store/migrations.ts';
import { openStoreAt } from '../../src/core/store/open.ts';
import type { RunStore } from '../../src/core/store/types.ts';
import { startPg, type PgServer } from './pg.ts';

export interface StoreEngine {
  name: 'sqlite' | 'postgres';
  /** A new, empty store location (a file path or a postgres:// URL). */
  fresh(): Promise<string>;
  /** Opens the store at a location (applying migrations). */
  open(location: string, extraMigrations?: Migration[]): Promise<RunStore>;
  /** The PostgreSQL server (postgres engine only). */
  server(): PgServer | undefined;
}

/** Declares `suite` once per engine, inside `describe(<engine name>)`, with the engine's setup and teardown. */
export function forEachEngine(
  suite: (e: StoreEngine) => void,
  pgSettings: Record<string, string> = { fsync: 'off' },
): void {
  describe('sqlite', () => {
    let dir = '';
    let n = 0;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'loupe-store-'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));
    suite({
      name: 'sqlite',
      fresh: async () => join(dir, `s${++n}`, 'runs.sqlite'),
      open: (loc, extra) => openStoreAt(loc, { extraMigrations: extra }),
      server: () => undefined,
    });
  });
  describe('postgres', () => {
    let srv: PgServer | undefined;
    let n = 0;
    before(async () => {
      srv = await startPg(pgSettings);
    });
    after(() => srv?.stop());
    suite({
      name: 'postgres',
      fresh: async () => srv!.createDatabase(`loupe_t${process.pid}_${++n}`),
      open: (loc, extra) => openStoreAt(loc, { extraMigrations: extra }),
      server: () => srv,
    });
  });
}
