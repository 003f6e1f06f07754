/** Issue 43: the fork diff — a fork and its parent aligned from the fork step (hint, steps, code, answers, score). */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore } from '../../../../src/core/store/run-store.ts';
import type { RunStore } from '../../../../src/core/store/types.ts';
import { forkDiff, forkDiffLines } from '../../../../src/app/runs/fork-diff.ts';
import { FORK, PARENT, seedForkPair } from '../../../helpers/fork-fixture.ts';
import { main } from '../../../../src/cli/main.ts';

let dir = '';
let store: RunStore;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-fork-diff-'));
  store = openStore(join(dir, 'runs.sqlite'));
  await seedForkPair(store, dir);
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('fork diff (issue 43)', () => {
  it('aligns the steps after the fork point and keeps the hint given there', async () => {
    const d = await forkDiff(store, FORK);
    assert.equal(d.parent.id, PARENT);
    assert.equal(d.forkStep, 1);
    assert.deepEqual(
      d.hints,
      [{ who: 'ana', kind: 'hint', text: 'Use the <i>median</i>, incomes are skewed' }],
      'the hint as written (data, not markup)',
    );
    assert.equal(d.steps.length, 3, 'parent has 2 steps after the fork point, the fork 3');
    assert.equal(d.steps[0]!.parent!.text, '<b>Mean</b> of income.');
    assert.equal(d.steps[0]!.fork!.text, 'Median of income.');
    assert.equal(d.steps[2]!.parent, null);
    assert.equal(d.steps[2]!.fork!.index, 3);
  });

  it('diffs only the code run after the fork point (replayed cells left out)', async () => {
    const d = await forkDiff(store, FORK);
    const changed = d.code.filter((l) => l.op !== ' ').map((l) => `${l.op}${l.text}`);
    assert.deepEqual(changed, ["-x = df['income'].mean()", "+x = df['income'].median()", '+', '+print(len(df))']);
    assert.ok(!d.code.some((l) => l.text.includes('read_csv')), 'the replayed step 1 is shared, not diffed');
    assert.deepEqual({ p: d.codeStats.parentCells, f: d.codeStats.forkCells }, { p: 2, f: 3 });
  });

  it('answers and the newest score on each side, the headline metric first', async () => {
    const d = await forkDiff(store, FORK);
    assert.deepEqual(d.answers, [
      { queryId: 'q1', parent: '41.5', fork: '38', same: false },
      { queryId: 'q2', parent: '3', fork: '3', same: true },
    ]);
    assert.equal(d.metrics[0]!.key, 'match');
    assert.equal(d.metrics[0]!.label, 'LongDA match');
    assert.equal(d.metrics[0]!.delta, 0.5);
    assert.deepEqual(d.scores.fork?.options, { summation: 'official' });
    const text = forkDiffLines(d).join('\n');
    assert.match(text, /hint by ana: Use the <i>median<\/i>/);
    assert.match(text, /\* q1: 41\.5 → 38/);
    assert.match(text, /LongDA match: 0\.5 → 1 \(\+0\.5\)/);
  });

  it('refuses a run that is not a fork, naming it', async () => {
    await assert.rejects(forkDiff(store, PARENT), /20261128T050001-aaaa0001: is not a fork/);
    await assert.rejects(forkDiff(store, 'nope'), /run nope: not in the store/);
  });

  it('loupe runs --fork-diff RUN [--json]', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { cwd: dir, out: (s: string) => void out.push(s), err: (s: string) => void err.push(s), env: {} };
    const db = join(dir, 'runs.sqlite');
    assert.equal(await main(['runs', '--store', db, '--fork-diff', FORK, '--json'], io as never), 0, err.join(''));
    const j = JSON.parse(out.join(''));
    assert.equal(j.forkStep, 1);
    assert.equal(j.parent.id, PARENT);
    out.length = 0;
    assert.equal(await main(['runs', '--store', db, '--fork-diff', FORK], io as never), 0);
    assert.match(out.join(''), /from step 1/);
    err.length = 0;
    assert.notEqual(await main(['runs', '--store', db, '--fork-diff', PARENT], io as never), 0);
    assert.match(err.join(''), /is not a fork/);
  });
});
