/**
 * Issue 23: a bulk write's WAL checkpoint runs on a worker thread (store/wal.ts). The write is committed and visible
 * at once, the caller's commit does not checkpoint (automatic checkpoints are off until the worker is done), the
 * worker copies the WAL into the database file, and automatic checkpoints come back on; a failing write rolls back.
 */
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { bulkWriteWithBackgroundCheckpoint } from '../../../../src/core/store/wal.ts';

const dir = mkdtempSync(join(tmpdir(), 'loupe-wal-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function open(name: string): Database.Database {
  const db = new Database(join(dir, name));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  return db;
}

describe('core/store/wal bulk writes', () => {
  it('commits at once, leaves the checkpoint to a worker thread, then turns automatic checkpoints back on', async () => {
    const db = open('bulk.sqlite');
    const body = 'x'.repeat(1000);
    const { result, checkpointed } = bulkWriteWithBackgroundCheckpoint(db, () => {
      const ins = db.prepare('INSERT INTO t (body) VALUES (?)');
      for (let i = 0; i < 5000; i++) ins.run(body);
      return 5000;
    });
    assert.equal(result, 5000);
    assert.equal((db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n, 5000);
    // ~1,300 pages: the caller's commit would have checkpointed them; it left them in the WAL
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 0);
    const r = await checkpointed;
    assert.ok(r, 'the worker ran a checkpoint');
    assert.ok(r.log > 1000, `WAL frames ${r.log}`);
    assert.equal(r.checkpointed, r.log);
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 1000);
    // another connection sees every row
    const other = new Database(join(dir, 'bulk.sqlite'), { readonly: true });
    assert.equal((other.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n, 5000);
    other.close();
    db.close();
  });

  it('a throwing write rolls back and turns automatic checkpoints back on; in-memory databases just write', async () => {
    const db = open('fail.sqlite');
    assert.throws(
      () =>
        bulkWriteWithBackgroundCheckpoint(db, () => {
          db.prepare("INSERT INTO t (body) VALUES ('a')").run();
          throw new Error('boom');
        }),
      /boom/,
    );
    assert.equal((db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n, 0);
    assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 1000);
    db.close();
    const mem = new Database(':memory:');
    mem.exec('CREATE TABLE t (x)');
    const w = bulkWriteWithBackgroundCheckpoint(mem, () => mem.prepare('INSERT INTO t VALUES (1)').run().changes);
    assert.equal(w.result, 1);
    assert.equal(await w.checkpointed, undefined);
    mem.close();
  });
});
