/**
 * Issue 44: `loupe score --native-outputs` on InfiAgent-DABench responses equals the official
 * `examples/DA-Agent/eval_closed_form.py` (commit d02d18a, run unchanged on Debian's /usr/bin/python3) on every metric,
 * for adversarial responses (test/fixtures/dabench-parity: spacing, tolerance edges, missing and partial sub-answers,
 * empty and null responses, duplicate and unknown ids, a round-half-even tie). The expected JSON files are the official
 * code's own `eval_outputs/*_evaluation_analysis.json` (see the fixture's README for the command).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { main } from '../../../../../src/cli/main.ts';
import { repoRoot, sharedData } from '../../../../helpers/shared.ts';

const FIX = join(repoRoot, 'test', 'fixtures', 'dabench-parity');

interface Official {
  main_results: Record<string, number>;
  concept_accuracy_analysis: Record<string, number>;
  concept_count_accuracy_analysis: Record<string, number>;
  two_or_more_concepts_accuracy: number | null;
}

async function score(
  file: string,
  extra: string[] = [],
): Promise<{
  summary: Record<string, number | null>;
  breakdowns: Record<string, Record<string, number>>;
  counted: number;
  questions: number;
  unknownIds: number;
  options: Record<string, unknown>;
  preset: string;
}> {
  const out: string[] = [];
  const err: string[] = [];
  const rc = await main(
    [
      'score',
      '--native-outputs',
      join(FIX, file),
      '--suite',
      'dabench',
      '--root',
      sharedData('dabench'),
      '--json',
      ...extra,
    ],
    { out: (s) => out.push(s), err: (s) => err.push(s), env: {}, cwd: FIX },
  );
  assert.equal(rc, 0, err.join(''));
  return JSON.parse(out.join('')) as never;
}

describe('DABench native outputs equal eval_closed_form.py (issue 44)', () => {
  for (const name of ['responses', 'responses-b', 'responses-c']) {
    it(`${name}.jsonl: every metric of the official output, exactly`, async () => {
      const want = JSON.parse(
        readFileSync(join(FIX, 'expected', `${name}_evaluation_analysis.json`), 'utf8'),
      ) as Official;
      const got = await score(`${name}.jsonl`);
      assert.equal(got.preset, 'official');
      assert.equal(got.options.denominator, 'answered');
      assert.deepEqual(
        {
          'Accuracy by Question': got.summary.accuracy_by_question,
          'Accuracy Proportional by Sub-Question': got.summary.accuracy_proportional_by_sub_question,
          'Accuracy by Sub-Question': got.summary.accuracy_by_sub_question,
        },
        want.main_results,
      );
      assert.deepEqual(got.breakdowns.concept_accuracy, want.concept_accuracy_analysis);
      assert.deepEqual(got.breakdowns.concept_count_accuracy, want.concept_count_accuracy_analysis);
      assert.equal(got.summary.concept_count_accuracy_at_least_2, want.two_or_more_concepts_accuracy);
    });
  }

  it('the 1/32 tie rounds half to even as Python does (0.0312, not 0.0313)', async () => {
    const got = await score('responses-c.jsonl');
    assert.equal(got.summary.accuracy_by_question, 0.0312);
  });

  it('--preset paper divides by every question (unanswered count as wrong) and records it', async () => {
    const off = await score('responses.jsonl');
    const paper = await score('responses.jsonl', ['--preset', 'paper']);
    assert.equal(paper.options.denominator, 'all');
    assert.equal(paper.counted, 257);
    assert.ok(off.counted < 257);
    const right = Math.round(off.summary.accuracy_by_question! * off.counted);
    assert.equal(paper.summary.accuracy_by_question, Math.round((right / 257) * 1e4) / 1e4);
    assert.ok(paper.unknownIds >= 2);
  });
});
