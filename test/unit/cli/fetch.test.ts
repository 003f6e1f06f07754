import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../../src/cli/main.ts';
import { startMirror, type Mirror } from '../../helpers/mirror.ts';

const tmp = mkdtempSync(join(tmpdir(), 'loupe-cli-fetch-'));
let mirror: Mirror;
before(async () => {
  mirror = await startMirror();
});
after(async () => {
  await mirror.close();
  rmSync(tmp, { recursive: true, force: true });
});
function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s), env: process.env, cwd: process.cwd() },
  };
}

describe('cli/fetch against a local mirror', () => {
  it('downloads DDR-Bench checklists and the result loads with loupe blocks', async () => {
    const dest = join(tmp, 'ddr');
    const t = io();
    assert.equal(await main(['fetch', 'ddr', '--dest', dest, '--mirror', mirror.url], t.io), 0, t.err.join(''));
    assert.match(t.out.join(''), /8 downloaded, 0 resumed, 0 already present, 0 missing, 0 failed/);
    assert.match(t.err.join(''), /download 100%/);
    const b = io();
    assert.equal(await main(['blocks', '--suite', 'ddr', '--root', join(dest, '10k'), '--json'], b.io), 0);
    const rows = JSON.parse(b.out.join('')) as { checklistItems: number }[];
    assert.equal(
      rows.reduce((n, r) => n + r.checklistItems, 0),
      849,
    );
    const again = io();
    assert.equal(await main(['fetch', 'ddr', '--dest', dest, '--mirror', mirror.url], again.io), 0);
    assert.match(again.out.join(''), /0 downloaded, 0 resumed, 8 already present/);
  });
  it('exits 1 and lists files the source does not have; --json gives per-file status', async () => {
    const t = io();
    assert.equal(
      await main(
        [
          'fetch',
          'blade',
          '--dest',
          join(tmp, 'blade'),
          '--mirror',
          mirror.url,
          '--only',
          'datasets/{hurricane,fish}/info.json',
          '--json',
        ],
        t.io,
      ),
      1,
    );
    const r = JSON.parse(t.out.join('')) as { files: { dest: string; status: string }[]; ok: boolean };
    assert.deepEqual(
      r.files.map((f) => [f.dest, f.status]),
      [
        ['datasets/fish/info.json', 'missing'],
        ['datasets/hurricane/info.json', 'downloaded'],
      ],
    );
  });
  it('usage errors: no suite, unknown suite, no --dest', async () => {
    let t = io();
    assert.equal(await main(['fetch', '--dest', tmp], t.io), 2);
    t = io();
    assert.equal(await main(['fetch', 'nope', '--dest', tmp], t.io), 1);
    assert.match(t.err.join(''), /no download source for 'nope'/);
    t = io();
    assert.equal(await main(['fetch', 'blade'], t.io), 2);
  });
});
