/**
 * `loupe compare` and `loupe power` (issue 48) on a store built through the store API: two scripted profiles, three
 * LongDA blocks (publications) of several queries, three repeats each; the numbers equal src/core/stats on the same
 * observations, unscored runs are refused by name, and profiles resolve by model name.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../../src/cli/main.ts';
import { pairedDifference, type Observation } from '../../../src/core/stats/index.ts';
import { openStore } from '../../../src/core/store/run-store.ts';

function io(cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s), env: process.env, cwd } };
}

const BLOCKS = ['pub-1', 'pub-2', 'pub-3'];
const QUERIES = 4;
/** Scripted credit of a query: A right more often than B, repeats differ. */
function credit(model: string, b: number, q: number, r: number): number {
  const h = (b * 7 + q * 3 + r * 2 + (model === 'model-a' ? 1 : 0)) % 5;
  return model === 'model-a' ? (h < 3 ? 1 : 0) : h < 2 ? 1 : 0;
}

let dir = '';
let storeFile = '';
const expected: Record<string, Observation[]> = { 'model-a': [], 'model-b': [] };
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-compare-'));
  storeFile = join(dir, 'runs.sqlite');
  const store = openStore(storeFile);
  const now = new Date().toISOString();
  let n = 0;
  for (const model of ['model-a', 'model-b']) {
    for (const [bi, blockId] of BLOCKS.entries()) {
      for (let r = 0; r < 3; r++) {
        const id = `${model}-${blockId}-${r}`;
        await store.createRun({
          id,
          suite: 'longda',
          blockId,
          agent: 'llm',
          model,
          params: { temperature: 0.7 },
          promptHash: 'h',
          toolSet: 'longda',
          dataChecksums: {},
          loupeVersion: 't',
          sandbox: 'off',
          workspace: dir,
        });
        await store.updateRun(id, { status: 'finished' });
        const rows = Array.from({ length: QUERIES }, (_, q) => {
          const match = credit(model, bi, q, r);
          expected[model]!.push({ item: `${blockId}/q${q}`, cluster: blockId, value: match });
          return {
            qId: `q${q}`,
            survey: 'NHANES',
            source: blockId,
            internalId: q,
            answerStructure: 'single',
            rawAnswer: '1',
            match,
            given: 1,
            expected: 1,
          };
        });
        const summary = { match: rows.reduce((a, x) => a + x.match, 0) / QUERIES };
        const score = {
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
          detail: score,
          pending: 0,
          scoredAt: new Date(Date.parse(now) + n++).toISOString(),
        });
      }
    }
  }
  await store.close();
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('loupe compare / power', () => {
  it('prints the paired difference equal to src/core/stats, clustered on publications, naming the runs', async () => {
    const t = io(dir);
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
          '200',
        ],
        t.io,
      ),
      0,
      t.err.join(''),
    );
    const c = JSON.parse(t.out.join(''));
    const ref = pairedDifference(expected['model-a']!, expected['model-b']!, {
      bootstrap: 200,
      permutations: 200,
      seed: 0,
    });
    assert.equal(c.paired.difference.n, 12);
    assert.equal(c.paired.difference.clusters, 3);
    assert.ok(Math.abs(c.paired.difference.mean - ref.difference.mean) < 1e-12);
    assert.ok(Math.abs(c.paired.difference.se - ref.difference.se) < 1e-12);
    assert.deepEqual(c.paired.bootstrap, ref.bootstrap);
    assert.equal(c.a.basis.clusterUnit, 'publication');
    assert.equal(c.a.basis.runIds.length, 9);
    assert.ok(c.a.basis.runIds.every((r: string) => r.startsWith('model-a-')));
    assert.equal(c.a.estimate.repeats.min, 3);
    assert.ok(c.a.estimate.withinItemVariance > 0);
    assert.ok(c.minimumDetectable > 0);
    const text = io(dir);
    assert.equal(
      await main(
        ['compare', '--store', storeFile, '--suite', 'longda', '--a', 'model-a', '--b', 'model-b', '--resamples', '50'],
        text.io,
      ),
      0,
    );
    const out = text.out.join('');
    assert.match(out, /A − B: /);
    assert.match(out, /in 3 publications/);
    assert.match(out, /could detect differences ≥ /);
    assert.match(out, /model-a-pub-1-0/);
  });

  it('the block-level metric uses the run summary, one value per block', async () => {
    const t = io(dir);
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
          '--metric',
          'match',
          '--json',
          '--resamples',
          '0',
        ],
        t.io,
      ),
      0,
      t.err.join(''),
    );
    const c = JSON.parse(t.out.join(''));
    assert.equal(c.a.basis.unit, 'blocks');
    assert.equal(c.paired.difference.n, 3);
  });

  it('power gives repeats and items needed from the observed variances', async () => {
    const t = io(dir);
    assert.equal(
      await main(
        ['power', '--store', storeFile, '--suite', 'longda', '--profile', 'model-a', '--delta', '0.1', '--json'],
        t.io,
      ),
      0,
      t.err.join(''),
    );
    const p = JSON.parse(t.out.join(''));
    assert.ok(p.itemsNeeded.items > 0 && p.itemsNeeded.clusters === Math.ceil(p.itemsNeeded.items / 4));
    assert.ok(p.minimumDetectable > 0);
    assert.equal(p.design.repeats, 3);
    const bad = io(dir);
    assert.equal(
      await main(['power', '--store', storeFile, '--suite', 'longda', '--profile', 'model-a', '--delta', 'x'], bad.io),
      2,
    );
  });

  it('refuses an unknown profile and a profile with an unscored run, naming it', async () => {
    const t = io(dir);
    assert.notEqual(
      await main(['compare', '--store', storeFile, '--suite', 'longda', '--a', 'nope', '--b', 'model-b'], t.io),
      0,
    );
    assert.match(t.err.join(''), /no profile 'nope'/);
    const store = openStore(storeFile);
    await store.createRun({
      id: 'model-b-unscored',
      suite: 'longda',
      blockId: 'pub-1',
      agent: 'llm',
      model: 'model-b',
      params: { temperature: 0.7 },
      promptHash: 'h',
      toolSet: 'longda',
      dataChecksums: {},
      loupeVersion: 't',
      sandbox: 'off',
      workspace: dir,
    });
    await store.close();
    const u = io(dir);
    assert.notEqual(
      await main(['compare', '--store', storeFile, '--suite', 'longda', '--a', 'model-a', '--b', 'model-b'], u.io),
      0,
    );
    assert.match(u.err.join(''), /model-b-unscored.*not mixed/);
  });
});
