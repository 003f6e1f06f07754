/**
 * Issue 36: a FIFO an agent names `report.md` does not hang `loupe score` (it did: the report was read without
 * checking for a regular file, and a FIFO read blocks until a writer comes). The scoring runs in a child process with a
 * time limit, since a blocked read stops the whole process; the run is scored as having no report.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';

it('loupe score of a run whose report.md is a FIFO ends, scoring the run as one without a report (exit 1: a failed run)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'loupe-score-fifo-'));
  try {
    const r = spawnSync(process.execPath, [join(import.meta.dirname, 'score-fifo.child.ts'), dir], {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON' },
    });
    assert.equal(
      r.signal,
      null,
      `loupe score hung on a FIFO named report.md (killed after 120 s): ${r.stdout}${r.stderr}`,
    );
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^EXIT 1\n/, 'a run without a report is a failed run: exit 1');
    const json = JSON.parse(r.stdout.slice(r.stdout.indexOf('\n') + 1, r.stdout.indexOf('\n---\n'))) as {
      runs: Array<{ error?: string }>;
    };
    assert.match(json.runs[0]!.error ?? '', /no report/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
