/**
 * The contained file API (issue 36): reads, writes, existence checks and listings of an agent-writable folder never
 * follow a link, never open a FIFO, socket or device, refuse hard-linked files, bound what they read and name the
 * path and why. (Hangs are covered by test/unit/security/host-paths.test.ts in a watched child process.)
 */
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import {
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  ContainedPathError,
  containedFileExists,
  ensureFolder,
  listContained,
  mkdirContained,
  readContainedFile,
  removeContainedEntry,
  statContained,
  symlinkContained,
  writeContainedFile,
} from '../../../../src/core/util/contained.ts';

let dir = '';
let ws = '';
let host = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-contained-'));
  host = join(dir, 'host');
  mkdirSync(join(host, 'folder'), { recursive: true });
  writeFileSync(join(host, 'secret.txt'), 'HOST');
  ws = join(dir, 'ws');
  mkdirSync(join(ws, 'sub'), { recursive: true });
  writeFileSync(join(ws, 'ok.md'), 'fine');
  writeFileSync(join(ws, 'sub', 'deep.txt'), 'deep');
  symlinkSync(join(host, 'secret.txt'), join(ws, 'file-link.md'));
  symlinkSync(join(host, 'folder'), join(ws, 'dir-link'));
  execFileSync('mkfifo', [join(ws, 'fifo.md')]);
  linkSync(join(host, 'secret.txt'), join(ws, 'hard.md'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

const refused = (reason: RegExp, path: string) => (e: unknown) =>
  e instanceof ContainedPathError && e.message.startsWith(`${path}: `) && reason.test(e.message);

describe('contained reads', () => {
  it('read a regular file; refuse links, FIFOs, hard links, folders, paths leaving the root, naming the path and why', () => {
    assert.equal(readContainedFile(ws, 'ok.md', 'utf8'), 'fine');
    assert.equal(readContainedFile(ws, 'sub/deep.txt', null).toString(), 'deep');
    assert.throws(() => readContainedFile(ws, 'file-link.md', 'utf8'), refused(/symbolic link/, 'file-link.md'));
    assert.throws(
      () => readContainedFile(ws, 'dir-link/secret.txt', 'utf8'),
      refused(/symbolic link.*at dir-link/, 'dir-link/secret.txt'),
    );
    assert.throws(() => readContainedFile(ws, 'fifo.md', 'utf8'), refused(/FIFO/, 'fifo.md'));
    assert.throws(() => readContainedFile(ws, 'hard.md', 'utf8'), refused(/more than one hard link/, 'hard.md'));
    assert.throws(() => readContainedFile(ws, 'sub', 'utf8'), refused(/is a folder/, 'sub'));
    assert.throws(() => readContainedFile(ws, '../host/secret.txt', 'utf8'), refused(/outside/, '../host/secret.txt'));
    assert.throws(() => readContainedFile(ws, 'nope.md', 'utf8'), refused(/no such file/, 'nope.md'));
  });

  it('a file over the byte bound is refused with its size', () => {
    writeFileSync(join(ws, 'big.txt'), 'x'.repeat(5000));
    assert.throws(
      () => readContainedFile(ws, 'big.txt', 'utf8', { maxBytes: 1000 }),
      refused(/too large \(5000 bytes; Loupe reads at most 1000\)/, 'big.txt'),
    );
    assert.equal(readContainedFile(ws, 'big.txt', 'utf8', { maxBytes: 5000 }).length, 5000);
  });

  it('a root that is itself a link is refused', () => {
    symlinkSync(ws, join(dir, 'ws-link'));
    assert.throws(
      () => readContainedFile(join(dir, 'ws-link'), 'ok.md', 'utf8'),
      (e: unknown) => e instanceof ContainedPathError && /symbolic link/.test(e.message),
    );
  });
});

describe('contained existence and stat', () => {
  it('only a contained regular file exists: a link says no whatever it points to', () => {
    assert.equal(containedFileExists(ws, 'ok.md'), true);
    for (const p of [
      'file-link.md',
      'dir-link/secret.txt',
      'fifo.md',
      'hard.md',
      'nope.md',
      'sub',
      '../host/secret.txt',
    ]) {
      assert.equal(containedFileExists(ws, p), false, p);
    }
    assert.deepEqual({ ...statContained(ws, 'ok.md')!, mtimeMs: 0 }, { kind: 'file', size: 4, mtimeMs: 0 });
    assert.equal(statContained(ws, 'sub')!.kind, 'dir');
    assert.equal(statContained(ws, 'nope/x'), null);
    assert.throws(() => statContained(ws, 'fifo.md'), refused(/FIFO/, 'fifo.md'));
  });

  it('a listing names every entry with its kind and enters no link', () => {
    const { entries, truncated } = listContained(ws);
    assert.equal(truncated, false);
    const kinds = Object.fromEntries(entries.map((e) => [e.path, e.kind]));
    assert.equal(kinds['file-link.md'], 'link');
    assert.equal(kinds['dir-link'], 'link');
    assert.equal(kinds['fifo.md'], 'fifo');
    assert.equal(kinds['sub/deep.txt'], 'file');
    assert.ok(!entries.some((e) => e.path.startsWith('dir-link/')), 'the linked host folder was not entered');
    assert.equal(listContained(ws, 2).truncated, true);
  });
});

describe('contained writes', () => {
  const hostBefore = () =>
    JSON.stringify([
      readFileSync(join(host, 'secret.txt'), 'utf8'),
      statSync(join(host, 'secret.txt')).mtimeMs,
      readdirSync(join(host, 'folder')),
    ]);

  it('write a new file (folders made on the way) and replace a regular one; no temporary file is left', () => {
    writeContainedFile(ws, 'out/a/b.txt', 'one');
    writeContainedFile(ws, 'out/a/b.txt', 'two');
    assert.equal(readFileSync(join(ws, 'out', 'a', 'b.txt'), 'utf8'), 'two');
    assert.deepEqual(readdirSync(join(ws, 'out', 'a')), ['b.txt']);
    writeContainedFile(ws, 'ro.txt', 'r', { mode: 0o444 });
    assert.equal(statSync(join(ws, 'ro.txt')).mode & 0o777, 0o444);
  });

  it('never writes through a link, FIFO or hard link, at the target or on the way: refused, host unchanged', () => {
    const before = hostBefore();
    assert.throws(() => writeContainedFile(ws, 'file-link.md', 'X'), refused(/symbolic link/, 'file-link.md'));
    assert.throws(
      () => writeContainedFile(ws, 'dir-link/new.txt', 'X'),
      refused(/symbolic link.*at dir-link/, 'dir-link/new.txt'),
    );
    assert.throws(() => writeContainedFile(ws, 'fifo.md', 'X'), refused(/FIFO/, 'fifo.md'));
    assert.throws(() => writeContainedFile(ws, 'hard.md', 'X'), refused(/hard link/, 'hard.md'));
    assert.throws(() => writeContainedFile(ws, 'sub', 'X'), refused(/is a folder/, 'sub'));
    assert.throws(() => writeContainedFile(ws, '../host/new.txt', 'X'), refused(/outside/, '../host/new.txt'));
    assert.throws(() => mkdirContained(ws, 'dir-link/x'), refused(/symbolic link/, 'dir-link/x'));
    assert.equal(hostBefore(), before);
    assert.ok(!readdirSync(ws).some((n) => n.includes('.loupe-')), 'no temporary file left behind');
  });

  it("removes and makes Loupe's own links without following anything", () => {
    assert.equal(symlinkContained(ws, 'links/data', join(host, 'folder')), true);
    assert.equal(symlinkContained(ws, 'links/data', join(host, 'folder')), false, 'an existing entry is left');
    assert.equal(removeContainedEntry(ws, 'links/data'), true);
    assert.equal(readdirSync(join(host, 'folder')).length, 0, 'the target was not touched');
    assert.throws(() => symlinkContained(ws, 'dir-link/l', '/'), refused(/symbolic link/, 'dir-link/l'));
  });

  it('an export folder the user names is made; a link in its place is refused', () => {
    const out = ensureFolder(join(dir, 'exports', 'x'));
    writeContainedFile(out, 'r.md', 'r');
    assert.equal(readFileSync(join(out, 'r.md'), 'utf8'), 'r');
    assert.throws(
      () => ensureFolder(join(ws, 'dir-link')),
      (e: unknown) => e instanceof ContainedPathError && /symbolic link/.test(e.message),
    );
  });
});
