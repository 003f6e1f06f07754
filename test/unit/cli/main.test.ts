import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { main } from '../../../src/cli/main.ts';
import { LOUPE_VERSION } from '../../../src/core/version.ts';
import { repoRoot } from '../../helpers/shared.ts';

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s), env: process.env, cwd: process.cwd() },
  };
}

describe('cli/main', () => {
  it('prints help listing every command', async () => {
    const t = io();
    assert.equal(await main(['--help'], t.io), 0);
    assert.match(t.out.join(''), /Usage: loupe <command>/);
    assert.match(t.out.join(''), /doctor/);
  });

  it('rejects an unknown command with exit code 2', async () => {
    const t = io();
    assert.equal(await main(['frobnicate'], t.io), 2);
    assert.match(t.err.join(''), /unknown command 'frobnicate'/);
  });

  it('reports a bad option as a usage error', async () => {
    const t = io();
    assert.equal(await main(['doctor', '--nope'], t.io), 2);
    assert.match(t.err.join(''), /usage: loupe doctor/);
  });

  it('keeps LOUPE_VERSION in step with package.json', () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    assert.equal(LOUPE_VERSION, pkg.version);
  });
});
