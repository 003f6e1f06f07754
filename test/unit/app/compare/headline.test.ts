/**
 * The headline table a paper publishes (issue 48): `loupe report` prints each profile's mean ± clustered SE [CI] and
 * the best profile's paired difference from the others, and `--results-json` writes the same figures machine-readably;
 * the figures equal `loupe compare` on the same store; a profile with an unscored run gets a reason, never a number;
 * differences with no variation give no test instead of an astronomically large t.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { headlineTables, publishedForm } from '../../../../src/app/compare/headline.ts';
import { main } from '../../../../src/cli/main.ts';
import { clusteredMean, pairedDifference } from '../../../../src/core/stats/index.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';

const BLOCKS = ['pub-1', 'pub-2', 'pub-3', 'pub-4'];
const QUERIES = 5;
function credit(model: string, b: number, q: number, r: number): number {
  const h = (b * 7 + q * 3 + r * 2 + (model === 'model-a' ? 1 : 0)) % 5;
  return model === 'model-a' ? (h < 3 ? 1 : 0) : h < 2 ? 1 : 0;
}

let dir = '';
let storeFile = '';
const io = (out: string[], err: string[]) => ({
  out: (s: string) => void out.push(s),
  err: (s: string) => void err.push(s),
  env: process.env,
  cwd: dir,
});
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-headline-'));
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
          detail: {
            score: { rows, match: summary.match, coverage: 1, n: QUERIES },
            efficiency: { inputTokens: 1000, outputTokens: 100 },
            toolSteps: [],
            heatmap: { tools: ['python'] },
          },
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
  // model-c: one scored run and one unscored (not a LongDA run the report can score: its block is unknown) — no figure
  await store.createRun({ ...run, id: 'model-c-1', blockId: 'pub-1', model: 'model-c' });
  await store.scores.save({
    runId: 'model-c-1',
    benchmark: 'longda',
    judgeId: 'none',
    options: {},
    summary: { match: 1 },
    detail: {
      runId: 'model-c-1',
      suite: 'longda',
      blockId: 'pub-1',
      model: 'model-c',
      agent: 'llm',
      status: 'finished',
      benchmark: 'longda',
      judgeId: 'none',
      options: {},
      summary: { match: 1 },
      pending: 1,
      unjudged: 0,
      detail: {
        score: { rows: [{ qId: 'q0', match: 1 }], match: 1, coverage: 1, n: 1 },
        efficiency: { inputTokens: 1000, outputTokens: 100 },
        toolSteps: [],
        heatmap: { tools: ['python'] },
      },
    },
    pending: 1,
    scoredAt: new Date(Date.UTC(2026, 0, 2)).toISOString(),
  });
  await store.close();
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('loupe report: the headline table (issue 48)', () => {
  it('prints mean ± clustered SE [CI] per profile and the paired difference, equal to loupe compare, and writes them as JSON', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const json = join(dir, 'results.json');
    assert.equal(
      await main(
        ['report', '--store', storeFile, '--suite', 'longda', '--results-json', json, '--seed', '3'],
        io(out, err),
      ),
      0,
      err.join(''),
    );
    const md = out.join('');
    const results = JSON.parse(readFileSync(json, 'utf8'));
    assert.equal(results.format, 'loupe-results');
    assert.equal(results.suites.length, 1);
    const s = results.suites[0];
    assert.equal(s.suite, 'longda');
    assert.equal(s.clusterUnit, 'publication');
    assert.equal(s.percent, true);

    const cmpOut: string[] = [];
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
          '2000',
          '--seed',
          '3',
        ],
        io(cmpOut, err),
      ),
      0,
      err.join(''),
    );
    const cmp = JSON.parse(cmpOut.join(''));
    const rowA = s.rows.find((r: { profile: { model: string } }) => r.profile.model === 'model-a');
    const rowB = s.rows.find((r: { profile: { model: string } }) => r.profile.model === 'model-b');
    assert.equal(rowA.figure.mean, cmp.a.estimate.mean);
    assert.equal(rowA.figure.se, cmp.a.estimate.se);
    assert.deepEqual(rowA.figure.ci, cmp.a.estimate.ci);
    assert.equal(rowB.figure.se, cmp.b.estimate.se);
    assert.equal(rowA.figure.items, BLOCKS.length * QUERIES);
    assert.equal(rowA.figure.clusters, BLOCKS.length);
    assert.deepEqual(rowA.figure.repeats, { min: 3, max: 3, total: BLOCKS.length * QUERIES * 3 });
    assert.deepEqual(rowA.runIds.length, BLOCKS.length * 3);
    // model-a is the best: the comparison is A − B as loupe compare computes it
    const c = s.comparisons.find((x: { b: string }) => x.b === rowB.profile.player);
    assert.equal(c.a, rowA.profile.player);
    assert.equal(c.difference, cmp.paired.difference.mean);
    assert.equal(c.se, cmp.paired.difference.se);
    assert.deepEqual(c.ci, cmp.paired.difference.ci);
    assert.equal(c.p, cmp.paired.pairedT.p);
    assert.deepEqual(c.bootstrapCi, cmp.paired.bootstrap.ci);
    assert.equal(c.minimumDetectable, cmp.minimumDetectable);
    // the Markdown shows the same figures in the published form
    assert.match(md, /## Headline/);
    assert.ok(md.includes(publishedForm(rowA.figure.mean, rowA.figure.se, rowA.figure.ci, true)), md);
    assert.ok(md.includes(publishedForm(c.difference, c.se, c.ci, true)), md);
    // the profile with a pending score has a reason instead of a number, and is not compared
    const rowC = s.rows.find((r: { profile: { model: string } }) => r.profile.model === 'model-c');
    assert.equal(rowC.figure, null);
    assert.match(rowC.reason, /not scored/, JSON.stringify(rowC));
    assert.ok(!s.comparisons.some((x: { b: string }) => x.b === rowC.profile.player));
  });

  it('a profile with too few clusters gets a reason, not a number', () => {
    const run = (id: string, model: string) => ({
      id,
      suite: 'longda',
      blockId: 'pub-1',
      model,
      agent: 'llm',
      params: {},
      promptHash: 'h',
      toolSet: 'longda',
      dataChecksums: {},
      loupeVersion: 't',
      sandbox: 'off',
      workspace: dir,
      status: 'finished',
      createdAt: '',
      updatedAt: '',
    });
    const score = (id: string) => ({
      runId: id,
      benchmark: 'longda',
      judgeId: 'none',
      options: {},
      summary: {},
      pending: 0,
      scoredAt: '',
      detail: {
        detail: {
          score: {
            rows: [
              { qId: 'q1', match: 1 },
              { qId: 'q2', match: 0 },
            ],
          },
        },
      },
    });
    const t = headlineTables([{ run: run('r1', 'm') as never, score: score('r1') }]);
    assert.equal(t[0]!.rows[0]!.figure, null);
    assert.match(t[0]!.rows[0]!.reason!, /at least 2 clusters/);
  });
});

describe('zero variation up to rounding (issue 48)', () => {
  it('values equal up to rounding have SE exactly 0, and a paired comparison gives no test instead of a huge t', () => {
    // 0.1 three times: the mean is not exactly 0.1, so without the guard the SE is a rounding residue (~1e-17)
    const vals = ['a', 'b', 'c', 'a', 'b', 'c'].map((cluster) => ({ cluster, value: 0.1 }));
    vals.push({ cluster: 'c', value: 0.1 + 0.2 - 0.2 });
    const m = clusteredMean(vals);
    assert.equal(m.se, 0);
    assert.equal(m.seMillerUncorrected, 0);
    assert.equal(m.noVariation, true);
    const obs = (shift: number) =>
      ['q1', 'q2', 'q3', 'q4'].map((item, i) => ({ item, cluster: `c${i % 2}`, value: 0.3 + (i % 2) * 0.1 + shift }));
    const pd = pairedDifference(obs(0.1), obs(0), { bootstrap: 0, permutations: 0 });
    assert.equal(pd.difference.se, 0);
    assert.ok(Number.isNaN(pd.pairedT.t) && Number.isNaN(pd.pairedT.p));
    assert.match(pd.pairedT.degenerate!, /no variation/);
  });
  it('genuinely small differences still get their SE', () => {
    const m = clusteredMean([
      { cluster: 'a', value: 1 },
      { cluster: 'b', value: 1 + 1e-9 },
      { cluster: 'a', value: 1 - 1e-9 },
    ]);
    assert.ok(m.se > 0 && !m.noVariation);
  });
});
