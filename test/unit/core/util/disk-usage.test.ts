/** diskUsage (issue 37): what a tree really costs its file system, not only the bytes of its regular files. */
import assert from 'node:assert/strict';
import { linkSync, mkdirSync, mkdtempSync, rmSync, statfsSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { diskUsage } from '../../../../src/core/util/disk-usage.ts';
import { treeBytes } from '../../../../src/core/util/contained.ts';

describe('core/util/disk-usage', () => {
  let root = '';
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'loupe-du-'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('charges every directory and empty file at least one block plus its name', () => {
    const d = join(root, 'empty');
    mkdirSync(d);
    const name = 'n'.repeat(200);
    for (let i = 0; i < 500; i++) {
      mkdirSync(join(d, `d${i}_${name}`));
      writeFileSync(join(d, `f${i}_${name}`), '');
    }
    const block = statfsSync(d).bsize;
    const u = diskUsage(d);
    assert.equal(u.inodes, 1000);
    assert.equal(u.entries, 1000);
    assert.ok(u.bytes >= 1000 * (block + 200), `${u.bytes} bytes for 1,000 entries`);
    assert.equal(treeBytes(d), 0, 'regular-file bytes alone see nothing here');
  });

  it('counts a hard-linked file once, a link as its own inode (never its target), and stops at maxEntries', () => {
    const d = join(root, 'links');
    mkdirSync(d);
    writeFileSync(join(d, 'big'), Buffer.alloc(1 << 20, 1));
    linkSync(join(d, 'big'), join(d, 'big2'));
    symlinkSync('/usr', join(d, 'usr'));
    const u = diskUsage(d);
    assert.equal(u.inodes, 2);
    assert.equal(u.entries, 3);
    assert.ok(u.bytes >= 1 << 20 && u.bytes < (1 << 20) + 64 * 1024, `${u.bytes}`);
    const cut = diskUsage(join(root, 'empty'), 10);
    assert.equal(cut.truncated, true);
    assert.equal(cut.entries, 10);
  });

  it('an unreadable root costs nothing and does not throw', () => {
    assert.deepEqual(diskUsage(join(root, 'missing')), { bytes: 0, inodes: 0, entries: 0, truncated: false });
  });
});
