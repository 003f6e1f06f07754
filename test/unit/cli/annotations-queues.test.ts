/**
 * Issue 43: `loupe annotations instructions | assign | progress | pending` and `--experiment` on queues.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../../src/cli/main.ts';
import { annotationStoreOf } from '../../../src/core/annotations/index.ts';
import { experimentStoreOf } from '../../../src/core/store/experiments.ts';
import { openStore } from '../../../src/core/store/run-store.ts';
import { seedQueue } from '../../helpers/queue-fixture.ts';

let dir = '';
let file = '';
let queue = '';
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
  dir = mkdtempSync(join(tmpdir(), 'loupe-annq-'));
  file = join(dir, 'runs.sqlite');
  const s = openStore(file);
  queue = await seedQueue(s);
  await experimentStoreOf(s).tag('r2', 'exp-B', 'lead');
  await s.close();
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('loupe annotations: instructions, assignment, progress', () => {
  it('sets and shows instructions (from text and from a file)', async () => {
    assert.match((await run('annotations', 'instructions', '--queue', queue)).out, /has no instructions/);
    assert.match(
      (await run('annotations', 'instructions', '--queue', queue, '--text', 'Label **supported** only when quoted.'))
        .out,
      /version 1/,
    );
    writeFileSync(join(dir, 'rubric.md'), '# Rubric\n\n1. read the claim\n2. check the evidence\n');
    assert.match((await run('annotations', 'instructions', '--queue', queue, '--file', 'rubric.md')).out, /version 2/);
    const shown = await run('annotations', 'instructions', '--queue', queue);
    assert.match(shown.out, /instructions v2 by ana\n# Rubric\n\n1\. read the claim/);
    assert.match((await run('annotations', 'instructions', '--queue', 'nope')).err, /--queue: no queue 'nope'/);
  });

  it('assigns, reports progress per annotator, lists what is pending for me, scoped to an experiment', async () => {
    assert.match(
      (await run('annotations', 'assign', '--queue', queue, '--to', 'ana', '--count', '3')).out,
      /3 item\(s\) of claims assigned to ana/,
    );
    assert.match(
      (await run('annotations', 'assign', '--queue', queue, '--to', 'bo', '--item', 'it-d')).out,
      /1 item\(s\)/,
    );
    assert.match((await run('annotations', 'assign', '--queue', queue, '--to', 'bo')).err, /say which items/);
    assert.match(
      (await run('annotations', 'assign', '--queue', queue, '--to', 'bo', '--item', 'it-zz')).err,
      /item it-zz: is not in queue/,
    );
    const s = openStore(file);
    await annotationStoreOf(s).annotate({ itemId: 'it-a', annotator: 'ana', verdict: { supported: true, reason: '' } });
    await s.close();
    const p = await run('annotations', 'progress', '--queue', queue);
    assert.match(
      p.out,
      /4 item\(s\), 0 unassigned\n {2}ana {2}1 \/ 3 assigned done\n {2}bo {2}0 \/ 1 assigned done\n$/,
    );
    const scoped = JSON.parse(
      (await run('annotations', 'progress', '--queue', queue, '--experiment', 'exp-B', '--json')).out,
    ) as { total: number; annotators: Array<{ annotator: string; assigned: number }> };
    assert.equal(scoped.total, 2);
    assert.deepEqual(
      scoped.annotators.map((a) => [a.annotator, a.assigned]),
      [
        ['ana', 1],
        ['bo', 1],
      ],
    );
    assert.match(
      (await run('annotations', 'pending')).out,
      /it-b {2}run r1\n.*it-c {2}run r2\n2 item\(s\) pending for ana/s,
    );
    assert.match(
      (await run('annotations', 'pending', '--experiment', 'exp-B')).out,
      /it-c {2}run r2\n1 item\(s\) pending/,
    );
    assert.match((await run('annotations', 'list', '--experiment', 'nope')).err, /no run is tagged 'nope'/);
    assert.match((await run('annotations', 'list', '--experiment', 'exp-B')).out, /2 item\(s\)/);
  });
});
