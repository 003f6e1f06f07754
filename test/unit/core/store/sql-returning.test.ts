/**
 * SQLite `StoreSql` (issue 41): a write with RETURNING (`INSERT … RETURNING`, which better-sqlite3 reports as a
 * reader) made outside a store transaction open on the same handle waits for that transaction like any other write,
 * so it is not rolled back with it. The annotation store, written once for both engines, inserts annotations this way.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { openStore, sqliteHandleOf } from '../../../../src/core/store/run-store.ts';
import { sqliteSql } from '../../../../src/core/store/sql.ts';

const tmp = mkdtempSync(join(tmpdir(), 'loupe-sql-returning-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

it('an INSERT … RETURNING made while a transaction is open on the handle survives that transaction rolling back', async () => {
  const s = openStore(join(tmp, 'a.sqlite'));
  try {
    const h = sqliteHandleOf(s);
    const q = sqliteSql(h);
    let opened!: () => void;
    const isOpen = new Promise<void>((r) => (opened = r));
    let fail!: () => void;
    const failing = new Promise<void>((r) => (fail = r));
    const tx = q.tx(null, async (t) => {
      await t.run(t.db.insertInto('migrations').values({ id: 9001, name: 'rolled back', applied_at: 'x' }));
      opened();
      await failing;
      throw new Error('injected failure');
    });
    await isOpen;
    assert.ok(h.inTransaction);
    const row = q.first(
      q.db.insertInto('migrations').values({ id: 9002, name: 'kept', applied_at: 'x' }).returning('name'),
    );
    const all = q.all(
      q.db.insertInto('migrations').values({ id: 9003, name: 'kept too', applied_at: 'x' }).returning('name'),
    );
    fail();
    await assert.rejects(tx, /injected failure/);
    assert.deepEqual(await row, { name: 'kept' });
    assert.deepEqual(await all, [{ name: 'kept too' }]);
    const names = (await q.all(q.db.selectFrom('migrations').select('name').where('id', '>', 9000).orderBy('id'))).map(
      (r) => r.name,
    );
    assert.deepEqual(names, ['kept', 'kept too']);
  } finally {
    await s.close();
  }
});
