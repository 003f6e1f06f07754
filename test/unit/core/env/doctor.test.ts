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
    assert.deepEqual(checks.map((c) => c.name), ['Node ≥ 22', 'Python with pandas', 'bubblewrap sandbox', 'SQLite with FTS5']);
    assert.ok(checks.find((c) => c.name === 'SQLite with FTS5')?.ok, 'better-sqlite3 with FTS5 must load');
  });
});
