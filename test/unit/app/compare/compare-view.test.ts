/**
 * The "Compare two profiles" view model (issue 48) on a store built through the store API — two scripted profiles on
 * three LongDA publications × 3 repeats, and a third profile with an unscored run: the view shows exactly the numbers
 * of `loupe compare --json` for the same store, each disagreeing item names the runs of A and B on it, and the pickers
 * offer only profiles whose runs are all scored.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { compareChoices, compareView } from '../../../../src/app/compare/compare-view.ts';
import { main } from '../../../../src/cli/main.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';

const BLOCKS = ['pub-1', 'pub-2', 'pub-3'];
const QUERIES = 4;
function credit(model: string, b: number, q: number, r: number): number {
  const h = (b * 7 + q * 3 + r * 2 + (model === 'model-a' ? 1 : 0)) % 5;
  return model === 'model-a' ? (h < 3 ? 1 : 0) : h < 2 ? 1 : 0;
}

let dir = '';
let storeFile = '';
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-compare-view-'));
  storeFile = join(dir, 'runs.sqlite');
  const store = openStore(storeFile);
  let n = 0;
  const run = {
    suite: 'longda',
    agent: 'llm',
    params: { temperature: 0.7 },
    promptHash: 'h',
    toolSet: 'longda',
    dataChecksums: {},
    loupeVersion: 't',
    sandbox: 'off' as const,
    workspace: dir,
  };
  for (const model of ['model-a', 'model-b']) {
    for (const [bi, blockId] of BLOCKS.entries()) {
      for (let r = 0; r < 3; r++) {
        const id = `${model}-${blockId}-${r}`;
        await store.createRun({ ...run, id, blockId, model });
        await store.updateRun(id, { status: 'finished' });
        const rows = Array.from({ length: QUERIES }, (_, q) => ({
          qId: `q${q}`,
          survey: 'NHANES',
          source: blockId,
          internalId: q,
          answerStructure: 'single',
          rawAnswer: '1',
          match: credit(model, bi, q, r),
          given: 1,
          expected: 1,
        }));
        const summary = { match: rows.reduce((a, x) => a + x.match, 0) / QUERIES };
        const detail = {
          runId: id,
          suite: 'longda',
          blockId,
          model,
          agent: 'llm',
          status: 'finished',
          benchmark: 'longda',
          judgeId: 'none',
          options: {},
          summary,
          pending: 0,
          unjudged: 0,
          detail: { score: { rows } },
        };
        await store.scores.save({
          runId: id,
          benchmark: 'longda',
          judgeId: 'none',
          options: {},
          summary,
          detail,
          pending: 0,
          scoredAt: new Date(Date.UTC(2026, 0, 1) + n++).toISOString(),
        });
      }
    }
  }
  // a third profile with a run never scored: the pickers must not offer it
  await store.createRun({ ...run, id: 'model-c-unscored', blockId: 'pub-1', model: 'model-c' });
  await store.close();
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('compare view model', () => {
  it('shows exactly the numbers of loupe compare --json for the same store', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      out: (s: string) => void out.push(s),
      err: (s: string) => void err.push(s),
      env: process.env,
      cwd: dir,
    };
    assert.equal(
      await main(
        [
          'compare',
          '--store',
          storeFile,
          '--suite',
          'longda',
          '--a',
          'model-a',
          '--b',
          'model-b',
          '--json',
          '--resamples',
          '500',
          '--seed',
          '3',
        ],
        io,
      ),
      0,
      err.join(''),
    );
    const cli = JSON.parse(out.join(''));
    const store = openStore(storeFile);
    try {
      const v = await compareView(store, { suite: 'longda', a: 'model-a', b: 'model-b', bootstrap: 500, seed: 3 });
      assert.deepEqual(v.difference, cli.paired.difference);
      assert.deepEqual(v.pairedT, cli.paired.pairedT);
      assert.deepEqual(v.bootstrap, cli.paired.bootstrap);
      assert.deepEqual(v.permutation, cli.paired.permutation);
      assert.equal(v.minimumDetectable, cli.minimumDetectable);
      assert.ok(v.minimumDetectable !== null && v.minimumDetectable > 0);
      for (const side of ['a', 'b'] as const) {
        const f = v[side];
        const c = cli[side];
        assert.equal(f.profile.player, c.profile.player);
        assert.deepEqual(
          [f.mean, f.se, f.ci, f.n, f.clusters, f.repeats, f.withinItemVariance],
          [
            c.estimate.mean,
            c.estimate.se,
            c.estimate.ci,
            c.estimate.n,
            c.estimate.clusters,
            c.estimate.repeats,
            c.estimate.withinItemVariance,
          ],
        );
        assert.deepEqual(f.runIds, c.basis.runIds);
        assert.equal(f.clusterUnit, 'publication');
      }
      assert.equal(v.onlyA, cli.paired.onlyA.length);
      assert.deepEqual(
        v.disagreements.map((d) => [d.item, d.a, d.b, d.diff, d.repeatsA, d.repeatsB]),
        cli.paired.disagreements.map(
          (d: { item: string; a: number; b: number; diff: number; repeatsA: number; repeatsB: number }) => [
            d.item,
            d.a,
            d.b,
            d.diff,
            d.repeatsA,
            d.repeatsB,
          ],
        ),
      );
      assert.ok(v.disagreements.length > 0);
      // each disagreeing item names the runs of its own block, three repeats per side
      for (const d of v.disagreements) {
        const block = d.item.split('/')[0]!;
        assert.deepEqual(
          d.runIdsA.sort(),
          [0, 1, 2].map((r) => `model-a-${block}-${r}`),
        );
        assert.deepEqual(
          d.runIdsB.sort(),
          [0, 1, 2].map((r) => `model-b-${block}-${r}`),
        );
      }
    } finally {
      await store.close();
    }
  });

  it('pickers offer only profiles whose runs are all scored, naming the ones left out', async () => {
    const store = openStore(storeFile);
    try {
      const choices = await compareChoices(store);
      assert.equal(choices.length, 1);
      const c = choices[0]!;
      assert.equal(c.suite, 'longda');
      assert.deepEqual(c.profiles.map((p) => p.model).sort(), ['model-a', 'model-b']);
      assert.deepEqual(
        c.profiles.map((p) => [p.runs, p.blocks]),
        [
          [9, 3],
          [9, 3],
        ],
      );
      assert.equal(c.leftOut.length, 1);
      assert.match(c.leftOut[0]!.player, /model-c/);
      assert.equal(c.leftOut[0]!.unscored, 1);
    } finally {
      await store.close();
    }
  });
});
