/**
 * Issue 40: LongDA has one `benchmark.csv` reader (`load.ts` `readLongdaCsv`) and one query type (`items.ts`
 * `LongdaQuery`) from the loader to the score: the suite's items and the ground truth a results file is scored against
 * are the same objects, with the same parsed answer structure.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadSuite } from '../../../../../src/core/benchmarks/index.ts';
import {
  loadLongdaGroundTruth,
  parseLongtaAnswers,
  scoreLongda,
} from '../../../../../src/core/benchmarks/longda/eval.ts';
import { longdaQueriesOf } from '../../../../../src/core/benchmarks/longda/score.ts';
import { repoRoot, sharedData } from '../../../../helpers/shared.ts';

describe('LongDA: one benchmark.csv reader, one query type', () => {
  it("the ground truth read for scoring is the loaded suite's queries, field for field", async () => {
    const root = sharedData('longda', 'benchmark');
    const suite = await loadSuite('longda', root);
    const items = suite.blocks.flatMap((b) => longdaQueriesOf(b)).sort((a, b) => a.row - b.row);
    const gt = loadLongdaGroundTruth(join(root, 'benchmark.csv'));
    assert.equal(gt.length, 474);
    assert.deepEqual(gt, items);
  });

  it("a results file's rows keep a structure the parser refuses (structural coverage 0) and are numbered like the suite", () => {
    const text = [
      'survey,source,internal_id,query,answer_structure,additional_info,answer,my_answer',
      'S,P,1,q one,single_number,,4.0,4.1',
      'S,P,2,q two,"men, women",,"[1, 2]","[1, 2]"',
      'S,P,3,q three,"[a, b]",,"[1, 2]","[1, 2]"',
    ].join('\n');
    const { queries, answers } = parseLongtaAnswers(text, 'r.csv');
    assert.deepEqual(
      queries.map((q) => [q.longdaId, q.answerStructure.kind]),
      [
        ['S_P_q1', 'single_number'],
        ['S_P_q2', 'invalid'],
        ['S_P_q3', 'list'],
      ],
    );
    const s = scoreLongda(queries, answers, { answers_csv: 'text' });
    assert.deepEqual(
      s.rows.map((r) => [r.answerStructure, r.coverageStructural, r.coverageComparable]),
      [
        ['single_number', 1, 1],
        ['men, women', 0, 1],
        ['[a, b]', 1, 1],
      ],
    );
  });

  it('no file of the LongDA folder but load.ts reads CSV text', () => {
    const dir = join(repoRoot, 'src', 'core', 'benchmarks', 'longda');
    const readers = readdirSync(dir).filter(
      (f) => f.endsWith('.ts') && /from 'csv-parse|parseCsvFile\(/.test(readFileSync(join(dir, f), 'utf8')),
    );
    assert.deepEqual(readers, ['load.ts']);
  });
});
