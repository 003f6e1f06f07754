/** `loupe results --matrix [--json]` (issue 43): the matrix of the view model, text and JSON, filters, bad flags. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../../src/cli/main.ts';
import { openStore } from '../../../src/core/store/run-store.ts';

let dir = '';
let storeFile = '';
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-results-cli-'));
  storeFile = join(dir, 'runs.sqlite');
  const store = openStore(storeFile);
  let n = 0;
  for (const model of ['model-a', 'model-b']) {
    for (let r = 0; r < 2; r++) {
      const id = `${model}-${r}`;
      await store.createRun({
        id,
        suite: 'longda',
        blockId: 'pub-1',
        agent: 'llm',
        model,
        params: {},
        promptHash: 'h',
        toolSet: 'longda',
        dataChecksums: {},
        loupeVersion: 't',
        sandbox: 'off',
        workspace: dir,
      });
      await store.updateRun(id, { status: 'finished' });
      const rows = [0, 1].map((q) => ({
        qId: `q${q}`,
        survey: 'NHANES',
        source: 'pub-1',
        internalId: q,
        answerStructure: 'single',
        rawAnswer: '1',
        match: model === 'model-a' || q === 0 ? 1 : 0,
        given: 1,
        expected: 42,
      }));
      const summary = { match: 0.5 };
      const detail = {
        runId: id,
        suite: 'longda',
        blockId: 'pub-1',
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
  await store.close();
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, {
    out: (s) => void out.push(s),
    err: (s) => void err.push(s),
    env: process.env,
    cwd: dir,
  });
  return { code, out: out.join(''), err: err.join('') };
}

describe('loupe results --matrix', () => {
  it('prints the matrix as JSON: profiles as columns, items as rows, no expected value unless asked', async () => {
    const r = await run(['results', '--matrix', '--suite', 'longda', '--store', storeFile, '--json']);
    assert.equal(r.code, 0, r.err);
    const m = JSON.parse(r.out);
    assert.equal(m.columns.length, 2);
    assert.deepEqual(
      m.rows.map((x: { key: string }) => x.key),
      ['pub-1/q0', 'pub-1/q1'],
    );
    assert.ok(!r.out.includes('"expected"'));
    const e = JSON.parse(
      (await run(['results', '--matrix', '--suite', 'longda', '--store', storeFile, '--json', '--expected'])).out,
    );
    assert.ok(e.rows.every((x: { expected?: string }) => typeof x.expected === 'string' && x.expected.length > 0));
  });

  it('--experiment shows only the runs tagged with it (issue 43: every view scoped to one experiment)', async () => {
    const tag = await run(['runs', '--store', storeFile, '--tag', 'model-b-0', 'ablation', '--annotator', 'ana']);
    assert.equal(tag.code, 0, tag.err);
    const r = await run([
      'results',
      '--matrix',
      '--suite',
      'longda',
      '--store',
      storeFile,
      '--json',
      '--experiment',
      'ablation',
    ]);
    assert.equal(r.code, 0, r.err);
    const m = JSON.parse(r.out);
    assert.deepEqual(
      m.columns.map((c: { runIds: string[] }) => c.runIds),
      [['model-b-0']],
    );
    const none = await run([
      'results',
      '--matrix',
      '--suite',
      'longda',
      '--store',
      storeFile,
      '--json',
      '--experiment',
      'ablation',
      '--run',
      'model-a-0',
    ]);
    assert.notEqual(none.code, 0, 'a run outside the experiment leaves nothing to show');
  });

  it('filters rows and prints text with one mark per repeat', async () => {
    const r = await run(['results', '--matrix', '--suite', 'longda', '--store', storeFile, '--filter', 'disagree']);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /1 of 2 items \(filter disagree\) × 2 profiles/);
    assert.match(r.out, /pub-1\/q1\s+\+ \+\s+x x/);
    assert.doesNotMatch(r.out, /pub-1\/q0/);
  });

  it('refuses bad flags naming them', async () => {
    assert.match((await run(['results', '--suite', 'longda', '--store', storeFile])).err, /--matrix/);
    assert.match(
      (await run(['results', '--matrix', '--suite', 'longda', '--store', storeFile, '--filter', 'bogus'])).err,
      /--filter must be one of/,
    );
    const p = await run(['results', '--matrix', '--suite', 'longda', '--store', storeFile, '--profile', 'nobody']);
    assert.notEqual(p.code, 0);
    assert.match(p.err, /no profile 'nobody'/);
  });
});
