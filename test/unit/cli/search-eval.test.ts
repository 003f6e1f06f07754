import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { main } from '../../../src/cli/main.ts';

function io(cache: string) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: {
      out: (s: string) => out.push(s),
      err: (s: string) => err.push(s),
      env: { ...process.env, LOUPE_CACHE: cache },
      cwd: process.cwd(),
    },
  };
}

describe('loupe search-eval --all-surveys (issue 49)', () => {
  it('evaluates each survey the labels name on its own index, per survey and over all questions, with a split by question id', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-search-eval-'));
    try {
      const root = join(dir, 'bench');
      for (const [s, files] of Object.entries({
        A: { 'cholesterol.txt': 'Total cholesterol in mg/dL\n', 'weights.txt': 'Sample weights and strata\n' },
        B: { 'pain.txt': 'Chronic pain most days\n', 'other.txt': 'Housing tenure\n' },
      })) {
        mkdirSync(join(root, s, 'docs'), { recursive: true });
        for (const [f, t] of Object.entries(files)) writeFileSync(join(root, s, 'docs', f), t);
      }
      const labels = join(dir, 'labels.json');
      writeFileSync(
        labels,
        JSON.stringify({
          questions: [
            { id: 'A-1', survey: 'A', q: 'total cholesterol', files: ['A/docs/cholesterol.txt'] },
            { id: 'A-2', survey: 'A', q: 'sample weights', files: ['A/docs/weights.txt'] },
            { id: 'B-1', q: 'chronic pain', files: ['B/docs/pain.txt'] },
          ],
        }),
      );
      const split = join(dir, 'split.json');
      writeFileSync(split, JSON.stringify({ design: ['A-1'], heldOut: ['A-2', 'B-1'] }));
      const x = io(join(dir, 'cache'));
      const code = await main(
        [
          'search-eval',
          '--labels',
          labels,
          '--root',
          root,
          '--all-surveys',
          '--split',
          split,
          '--modes',
          'bm25,question',
          '--json',
        ],
        x.io,
      );
      assert.equal(code, 0, x.err.join(''));
      const r = JSON.parse(x.out.join('')) as {
        parts: Record<string, Record<string, { questions: number }>>;
        surveys: Record<string, { parts: Record<string, Record<string, { questions: number; recallAtK: number }>> }>;
      };
      assert.deepEqual(Object.keys(r.surveys), ['A', 'B'], 'B is taken from the first path component of its files');
      assert.equal(r.parts.all!.question!.questions, 3);
      assert.equal(r.parts.heldOut!.question!.questions, 2);
      assert.equal(r.surveys.A!.parts.design!.question!.questions, 1);
      assert.equal(r.surveys.B!.parts.heldOut!.bm25!.recallAtK, 1);
      const bad = io(join(dir, 'cache'));
      await assert.rejects(
        main(['search-eval', '--labels', labels, '--root', root, '--all-surveys', '--survey', 'A'], bad.io).then(
          (c) => {
            if (c !== 0) throw new Error(bad.err.join(''));
          },
        ),
        /exclude each other/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
