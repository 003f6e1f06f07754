/**
 * One migration source, two engines (issue 41): a SQLite file and a real PostgreSQL database migrated by today's
 * migrations have the same tables, columns (types mapped, nullability, defaults), primary keys and indexes. The only
 * differences are the engines' own and are named here: PostgreSQL's `rid` insertion-order column (SQLite's implicit
 * rowid) and the server-filled default of `annotations.db_role` (PostgreSQL roles).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { migrations, migrationsFor } from '../../../../src/core/store/migrations.ts';
import { openStoreAt } from '../../../../src/core/store/open.ts';
import { sqliteHandleOf } from '../../../../src/core/store/run-store.ts';
import { startPg, type PgServer } from '../../../helpers/pg.ts';
import { pgSchema, sqliteSchema, type SchemaShape } from '../../../helpers/schema.ts';

let dir = '';
let srv: PgServer;
let lite: SchemaShape;
let post: SchemaShape;

/** Tables without PostgreSQL's rid: read by key only, or the runners' own. */
const NO_RID = ['annotation_sync', 'migrations', 'scores'];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-schema-'));
  srv = await startPg({ fsync: 'off' });
  const s = await openStoreAt(join(dir, 'runs.sqlite'));
  lite = sqliteSchema(sqliteHandleOf(s));
  await s.close();
  const url = await srv.createDatabase('parity');
  await (await openStoreAt(url)).close();
  const c = new pg.Client({
    host: srv.host,
    port: srv.port,
    user: srv.user,
    password: process.env[srv.passwordEnv],
    database: 'parity',
  });
  await c.connect();
  try {
    post = await pgSchema(c);
  } finally {
    await c.end();
  }
});

after(() => {
  srv?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('run store schema: SQLite and PostgreSQL from one migration source', () => {
  it('both dialects render the same migration ids and names', () => {
    assert.deepEqual(
      migrationsFor('postgres').map((m) => [m.id, m.name]),
      migrations.map((m) => [m.id, m.name]),
    );
  });

  it('the same tables', () => {
    assert.ok(Object.keys(lite).length >= 20, Object.keys(lite).join(', '));
    assert.deepEqual(Object.keys(post).sort(), Object.keys(lite).sort());
  });

  it('the same columns per table: names, order, mapped types, nullability, defaults', () => {
    for (const [table, t] of Object.entries(lite)) {
      const p = post[table]!;
      const pgCols = p.columns.map((c) =>
        table === 'annotations' && c.name === 'db_role'
          ? { ...c, default: c.default === 'CURRENT_USER' ? null : `unexpected ${c.default}` }
          : c,
      );
      assert.deepEqual(pgCols, t.columns, `columns of ${table}`);
    }
  });

  it('the same primary keys and indexes (names, columns, uniqueness, partial)', () => {
    for (const [table, t] of Object.entries(lite)) {
      assert.deepEqual(post[table]!.primaryKey, t.primaryKey, `primary key of ${table}`);
      assert.deepEqual(post[table]!.indexes, t.indexes, `indexes of ${table}`);
    }
  });

  it("PostgreSQL has rid (SQLite's rowid) on every table read in insertion order", () => {
    for (const [table, p] of Object.entries(post)) assert.equal(p.rid, !NO_RID.includes(table), `rid of ${table}`);
  });
});
