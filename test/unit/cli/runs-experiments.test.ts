/**
 * Issue 43: `loupe runs --tag / --untag / --rename / --experiment / --filter / --save-filter / --experiments`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../../src/cli/main.ts';
import { openStore } from '../../../src/core/store/run-store.ts';

let dir = '';
let file = '';
async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main([...args, '--store', file], {
    out: (s: string) => (out += s),
    err: (s: string) => (err += s),
    cwd: dir,
    env: { LOUPE_ANNOTATOR: 'ana' },
  } as never);
  return { code, out, err };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-runs-exp-'));
  file = join(dir, 'runs.sqlite');
  const s = openStore(file);
  const base = {
    suite: 'longda',
    blockId: 'b1',
    agent: 'llm',
    model: 'gpt-x',
    params: {},
    promptHash: 'h',
    toolSet: 't',
    dataChecksums: {},
    loupeVersion: 't',
    sandbox: 'off',
    workspace: dir,
  };
  for (const id of ['run-a', 'run-b', 'run-c']) await s.createRun({ ...base, id } as never);
  await s.updateRun('run-c', { status: 'failed' } as never);
  await s.close();
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('loupe runs: experiments', () => {
  it('tags, renames, lists an experiment and the experiments', async () => {
    assert.equal((await run('runs', '--tag', 'run-a', 'ablation-A')).code, 0);
    assert.match((await run('runs', '--tag', 'run-c', 'ablation-A')).out, /run run-c: tags ablation-A/);
    assert.match((await run('runs', '--rename', 'run-a', 'baseline', 'gpt')).out, /now named baseline gpt/);
    const listed = await run('runs', '--experiment', 'ablation-A');
    assert.equal(listed.code, 0);
    assert.deepEqual(
      listed.out
        .trim()
        .split('\n')
        .map((l) => l.split('  ')[0])
        .sort(),
      ['run-a', 'run-c'],
    );
    assert.match(listed.out, /“baseline gpt” {2}#ablation-A/);
    const json = (await run('runs', '--experiment', 'ablation-A', '--json')).out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string; tags: string[]; name: string | null });
    assert.deepEqual(
      json.find((r) => r.id === 'run-a'),
      { ...json.find((r) => r.id === 'run-a'), tags: ['ablation-A'], name: 'baseline gpt' },
    );
    await run('runs', '--untag', 'run-c', 'ablation-A');
    assert.match((await run('runs', '--experiments')).out, /^ablation-A {2}1 run\(s\)$/m);
    const none = await run('runs', '--experiment', 'nope');
    assert.equal(none.code, 2);
    assert.match(none.err, /no run is tagged 'nope'/);
  });

  it('refuses an unknown run, a missing label and a bad label', async () => {
    assert.match((await run('runs', '--tag', 'zzz', 'x')).err, /--tag: no run 'zzz'/);
    assert.match((await run('runs', '--tag', 'run-a')).err, /give the label/);
    const bad = await run('runs', '--tag', 'run-a', 'a'.repeat(81));
    assert.notEqual(bad.code, 0);
    assert.match(bad.err, /tag: is longer than 80/);
  });

  it('saved and built-in filters', async () => {
    assert.match(
      (await run('runs', '--save-filter', 'failed A', '--status', 'failed')).out,
      /saved filter failed A: status failed/,
    );
    assert.deepEqual(
      (await run('runs', '--filter', 'failed A')).out
        .trim()
        .split('\n')
        .map((l) => l.split('  ')[0]),
      ['run-c'],
    );
    // unscored: ended runs without a stored score (run-a, run-b are still pending)
    assert.deepEqual(
      (await run('runs', '--filter', 'unscored')).out
        .trim()
        .split('\n')
        .map((l) => l.split('  ')[0]),
      ['run-c'],
    );
    assert.match((await run('runs', '--filter', 'pending-for-me')).out, /no runs in .* match/);
    assert.match(
      (await run('runs', '--filter', 'nope')).err,
      /no filter 'nope' \(built in: tool-error, unscored, pending-for-me; saved: failed A\)/,
    );
    assert.match((await run('runs', '--experiments')).out, /filter failed A: \{"status":"failed"\}/);
  });
});
