import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findPython, runChecks } from '../../../../src/core/env/doctor.ts';

describe('core/env/doctor', () => {
  it('finds an interpreter that imports pandas even when the first python3 on PATH cannot', async () => {
    const py = await findPython(undefined, { PATH: '/nonexistent-dir' });
    assert.match(py.version, /^3\.\d+\.\d+ \d+\.\d+/);
  });

  it('names every candidate when none works', async () => {
    await assert.rejects(findPython('/no/such/python'), (e: Error) => {
      assert.match(e.message, /\/no\/such\/python: not found/);
      assert.match(e.message, /loupe\.python\.path/);
      return true;
    });
  });

  it('reports Node, Python, bubblewrap and SQLite checks', async () => {
    const checks = await runChecks();
    assert.deepEqual(
      checks.map((c) => c.name),
      ['Node ≥ 22', 'Python with pandas', 'bubblewrap sandbox', 'SQLite with FTS5'],
    );
    assert.ok(checks.find((c) => c.name === 'SQLite with FTS5')?.ok, 'better-sqlite3 with FTS5 must load');
  });
});

it('findPython caches its probe across processes (keyed by interpreter path, size, mtime); doctor probes afresh', async () => {
  const { mkdtempSync, readFileSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'loupe-probe-'));
  try {
    const env = { ...process.env, LOUPE_CACHE: dir };
    const first = await findPython('', env);
    const file = join(dir, 'python-probe.json');
    const cache = JSON.parse(readFileSync(file, 'utf8')) as Record<string, { version: string; at: number }>;
    const key = Object.keys(cache).find((k) => k.startsWith(`${first.path}\u0000`))!;
    assert.ok(key, 'the probe was cached');
    cache[key]!.version = 'from-cache';
    writeFileSync(file, JSON.stringify(cache));
    assert.equal(
      (await findPython('', env)).version,
      'from-cache',
      'a later process reads the cache instead of importing pandas',
    );
    assert.notEqual((await findPython('', env, { cache: false })).version, 'from-cache', 'doctor probes afresh');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
