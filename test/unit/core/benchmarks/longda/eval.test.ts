import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  compareLongdaValues,
  countToolCallsInCode,
  longdaEfficiency,
  longdaOptions,
  loadLongdaGroundTruth,
  longdaToleranceSensitivity,
  normalizeAnswerValue,
  parseLongdaGroundTruth,
  scoreLongda,
  structuralCoverage,
  toolUsageHeatmap,
} from '../../../../../src/core/benchmarks/longda/eval.ts';
import { parsePyLiteral } from '../../../../../src/core/eval/py-literal.ts';
import { LoupeInputError } from '../../../../../src/core/util/errors.ts';
import { sharedData } from '../../../../helpers/shared.ts';
import { parseAnswerStructure } from '../../../../../src/core/benchmarks/longda/parse.ts';

const gt = loadLongdaGroundTruth(sharedData('longda', 'benchmark', 'benchmark.csv'));
const DB508 = 'NHANES_NCHS Data Brief No. 508';

describe('eval/longda normalisation (spec §2.4, §5.2 examples)', () => {
  it('reproduces the documented examples', () => {
    assert.equal(normalizeAnswerValue('12.5%'), 12.5);
    assert.equal(normalizeAnswerValue('1,234'), 1234);
    assert.deepEqual(normalizeAnswerValue('[1.0, 2.0]'), [1, 2]);
    assert.deepEqual(normalizeAnswerValue('men: 1.2, women: 3.4'), { kind: 'dict', entries: { men: 1.2, women: 3.4 } });
    assert.equal(normalizeAnswerValue('45 +- 3'), 45);
    assert.equal(normalizeAnswerValue('NA.'), null);
  });
  it('handles dashes, ±, +/-, empty strings, quoted numbers, tuples and free text', () => {
    assert.equal(normalizeAnswerValue('−3.5'), -3.5);
    assert.equal(normalizeAnswerValue('45.2 ± 1.3%'), 45.2);
    assert.equal(normalizeAnswerValue('7 +/- 0.5'), 7);
    assert.equal(normalizeAnswerValue('   '), null);
    assert.equal(normalizeAnswerValue(null), null);
    assert.equal(normalizeAnswerValue("'42'"), 42);
    assert.deepEqual(normalizeAnswerValue('(1, 2)'), [1, 2]);
    assert.deepEqual(normalizeAnswerValue('13.0, 14.7, 8.4'), [13, 14.7, 8.4]);
    assert.equal(normalizeAnswerValue('3.1 trillion'), 3.1);
    assert.deepEqual(normalizeAnswerValue('about 3 and 4'), [3, 4]);
    assert.equal(normalizeAnswerValue('no idea'), null);
    assert.deepEqual(normalizeAnswerValue("['1.5', None]"), [1.5, null]);
    assert.deepEqual(normalizeAnswerValue([1, '2%']), [1, 2]);
  });
  it('reproduces the thousands-separator quirk on lists without spaces (spec §2.7 item 4)', () => {
    assert.deepEqual(normalizeAnswerValue('[12.5,100.0]'), [12.51, 0]);
    assert.deepEqual(normalizeAnswerValue('[12.5, 100.0]'), [12.5, 100]);
  });
  it('parses Python literals like ast.literal_eval and rejects what it would reject', () => {
    assert.deepEqual(parsePyLiteral("{'a': 1, 'b': [2, 3.5]}"), {
      kind: 'dict',
      entries: [
        ['a', 1],
        ['b', [2, 3.5]],
      ],
    });
    assert.equal(parsePyLiteral('1_000'), 1000);
    assert.equal(parsePyLiteral('-.5e1'), -5);
    assert.equal(parsePyLiteral('True'), true);
    assert.equal(parsePyLiteral('abc'), undefined);
    assert.equal(parsePyLiteral('1 + 2'), undefined);
    assert.equal(parsePyLiteral('012'), undefined);
    assert.equal(parsePyLiteral('"a" \'b\''), 'ab');
  });
});

describe('eval/longda matching', () => {
  it('uses τ = max(ε·|g|, 1)', () => {
    assert.equal(compareLongdaValues(101, 100).matchPartial, 1);
    assert.equal(compareLongdaValues(105, 100).matchPartial, 1);
    assert.equal(compareLongdaValues(105.01, 100).matchPartial, 0);
    assert.equal(compareLongdaValues(1.4, 0.488).matchPartial, 1, 'floor of 1 for small values');
    assert.equal(compareLongdaValues(105, 100, { tolerance: 0.01, tolerance_floor: 1 }).matchPartial, 0);
    assert.equal(compareLongdaValues(NaN, 1).comparable, 0);
  });
  it('scores lists partially or strictly, and length mismatches as not comparable', () => {
    const c = compareLongdaValues([10, 50], [10, 40]);
    assert.equal(c.matchPartial, 0.5);
    assert.equal(c.matchStrict, 0);
    assert.equal(compareLongdaValues([10], [10, 40]).comparable, 0);
    assert.equal(compareLongdaValues(10, [10]).comparable, 0);
    const skip = compareLongdaValues([10, null], [10, 40]);
    assert.equal(skip.comparable, 1);
    assert.equal(skip.matchPartial, 1);
    assert.equal(skip.matchStrict, 0);
    assert.equal(compareLongdaValues([null, null], [10, 40]).comparable, 0);
  });
  it('checks paper (structural) coverage against answer_structure', () => {
    assert.deepEqual(parseAnswerStructure('[men, women]'), {
      ok: true,
      value: { kind: 'list', labels: ['men', 'women'], length: 2 },
    });
    assert.equal(structuralCoverage(3, 'single_number'), 1);
    assert.equal(
      structuralCoverage([3, 4], { kind: 'list', labels: ['men', 'women'], length: 2 }),
      1,
      'a parsed structure is used as it is',
    );
    assert.equal(structuralCoverage([3, 4], '[a, a]'), 0, 'a structure the loader refuses conforms to nothing');
    assert.equal(structuralCoverage([3], 'single_number'), 0);
    assert.equal(structuralCoverage([3, 4], '[men, women]'), 1);
    assert.equal(structuralCoverage([3, null], '[men, women]'), 0);
  });
  it('validates options and names the option at fault', () => {
    assert.deepEqual(longdaOptions({ tolerance: '0.1', list_scoring: 'strict' }), {
      tolerance: 0.1,
      tolerance_floor: 1,
      list_scoring: 'strict',
      coverage: 'comparable',
      infinite_mae: 'inf',
      literals: 'cpython',
      summation: 'numpy',
      by_source: 'source',
      answers_csv: 'pandas',
    });
    assert.throws(
      () => longdaOptions({ list_scoring: 'lenient' }),
      (e: unknown) => e instanceof LoupeInputError && /list_scoring/.test(e.message),
    );
    assert.throws(() => longdaOptions({ tolerance: '-1' }), LoupeInputError);
  });
});

describe('eval/longda on the real benchmark.csv', () => {
  it('assigns q_ids and blocks as LongTA main.py does', () => {
    assert.equal(gt.length, 474);
    const b = gt.filter((q) => `${q.survey}_${q.source}` === DB508);
    assert.equal(b.length, 9);
    assert.equal(b[0]!.longdaId, 'NHANES_NCHS Data Brief No. 508_q1');
    for (const q of gt) assert.ok(q.answerStructure.kind !== 'invalid', q.longdaId);
  });
  it('scores the ground truth against itself as 100% (both coverages, both list modes)', () => {
    const answers = new Map(gt.map((q) => [q.longdaId, q.answerText]));
    const s = scoreLongda(gt, answers);
    assert.equal(s.n, 474);
    assert.equal(s.match, 1);
    assert.equal(s.matchStrict, 1);
    assert.equal(s.coverageComparable, 1);
    assert.equal(s.coverageStructural, 1, 'every GT answer conforms to its own answer_structure');
    assert.equal(s.mae, 0);
    assert.equal(s.bySource.length, 27);
    assert.deepEqual(s.unknownQIds, []);
  });
  it('scores Data Brief 508 published values 9/9', () => {
    const block = gt.filter((q) => `${q.survey}_${q.source}` === DB508);
    const published = [
      '40.3',
      '[39.2, 41.3]',
      '[35.5, 46.4, 38.9]',
      '[44.6, 45.0, 31.6]',
      '9.4',
      '[9.5, 12.0, 6.6]',
      '[6.7, 12.1]',
      '[6.1, 9.2, 4.3]',
      '[13.0, 14.7, 8.4]',
    ];
    const s = scoreLongda(block, Object.fromEntries(block.map((q, i) => [q.longdaId, published[i]])));
    assert.equal(s.match * s.n, 9);
  });
  it('gives the hand-computed fractions for perturbed Data Brief 508 answers', () => {
    const block = gt.filter((q) => `${q.survey}_${q.source}` === DB508);
    const id = (i: number) => `${DB508}_q${i}`;
    const answers = {
      [id(1)]: '40.3%', // hit
      [id(2)]: '[39.2, 45.0]', // 45.0 vs 41.3: |3.7| > 2.065 → 1/2
      [id(3)]: '[35.5, 46.4]', // wrong length → not comparable, not structural
      [id(4)]: 'hs: 44.6, some: 45.0, ba: 31.6', // dict → not comparable
      [id(5)]: '10.3', // |0.9| ≤ floor 1 → hit
      [id(6)]: '[9.5, None, 6.6]', // skipped pair: partial 2/2, strict 0, not structural
      [id(7)]: '[8.0, 12.1]', // |1.3| > 1 → 1/2
      // q8 unanswered
      [id(9)]: '13.0, 14.7, 8.4', // bare tuple → hit
      'NHANES_NCHS Data Brief No. 999_q1': '1',
    };
    const s = scoreLongda(block, answers);
    assert.equal(s.n, 9);
    assert.equal(s.answered, 8);
    assert.equal(s.match, 5 / 9);
    assert.equal(s.matchStrict, 3 / 9);
    assert.equal(s.coverageComparable, 6 / 9);
    assert.equal(s.coverageStructural, 5 / 9);
    assert.equal(s.coverage, 6 / 9);
    assert.deepEqual(s.unknownQIds, ['NHANES_NCHS Data Brief No. 999_q1']);
    const strict = scoreLongda(block, answers, { list_scoring: 'strict', coverage: 'structural' });
    assert.equal(strict.match, 3 / 9);
    assert.equal(strict.coverage, 5 / 9);
    assert.deepEqual(strict.options, {
      tolerance: 0.05,
      tolerance_floor: 1,
      list_scoring: 'strict',
      coverage: 'structural',
      infinite_mae: 'inf',
      literals: 'cpython',
      summation: 'numpy',
      by_source: 'source',
      answers_csv: 'pandas',
    });
    // scalar q1, q5 both hit; lists: 0.5 + 0 + 0 + 1 + 0.5 + 0 + 1 = 3 of 7
    assert.equal(s.byType.scalar.match, 1);
    assert.equal(s.byType.list.match, 3 / 7);
    // ε grid: the 41.3 element (miss by 3.7) turns into a hit once 41.3·ε ≥ 3.7, i.e. ε ≥ 0.0896 → +0.5 on q2
    const sens = longdaToleranceSensitivity(block, answers, [0.05, 0.1]);
    assert.deepEqual(
      sens.map((p) => p.match),
      [5 / 9, 5.5 / 9],
    );
    // ε = 0: q5 still hits through the floor; q1 exact; q9 exact; q2/q7 unchanged.
    assert.equal(scoreLongda(block, answers, { tolerance: 0 }).match, 5 / 9);
    // floor 0 and ε = 0.05: q5 |0.9| > 0.47 → miss.
    assert.equal(scoreLongda(block, answers, { tolerance_floor: 0 }).match, 4 / 9);
  });
  it('rejects a CSV without the answer column, naming the file', () => {
    assert.throws(
      () => parseLongdaGroundTruth('survey,source,query,answer_structure\nA,B,q,single_number\n', 'x.csv'),
      /x\.csv: missing column 'answer'/,
    );
  });
});

describe('eval/longda efficiency and tool usage', () => {
  it('sums tokens, steps and wall time; averages steps per block', () => {
    const e = longdaEfficiency([
      { blockId: 'a', inputTokens: 100, outputTokens: 10, steps: 4, wallSeconds: 60, toolCalls: { answer: 2 } },
      {
        blockId: 'b',
        inputTokens: 50,
        outputTokens: 5,
        steps: 7,
        wallSeconds: 30,
        toolCalls: { answer: 1, read_doc: 3 },
      },
    ]);
    assert.equal(e.totalTokens, 165);
    assert.equal(e.avgStepsPerBlock, 5.5);
    assert.equal(e.wallSeconds, 90);
    assert.deepEqual(e.toolCalls, { answer: 3, read_doc: 3 });
    assert.throws(
      () => longdaEfficiency([{ blockId: 'z', inputTokens: -1, outputTokens: 0, steps: 0, wallSeconds: 0 }]),
      /block z/,
    );
  });
  it('counts tool calls by substring like the figure script', () => {
    assert.deepEqual(countToolCallsInCode('x = read_doc("a")\nread_doc("b")\nanswer(action="add")'), [
      'read_doc',
      'read_doc',
      'answer',
    ]);
    assert.deepEqual(countToolCallsInCode('build_prompt(1)'), ['prompt']);
  });
  it('bins steps relative to the last tool-calling step and normalises columns', () => {
    // trajectory 1: 4 steps, last tool step = 3 → bins: 1/3*20=6, 2/3*20=13, 3/3*20→19; step 4 has no tools
    // trajectory 2: 2 steps → step1 bin 10, step2 bin 19
    const h = toolUsageHeatmap([
      [['prompt'], ['read_doc', 'read_doc'], ['answer'], []],
      [['read_doc'], ['answer', 'save_code']],
    ]);
    assert.equal(h.matrix.length, 7);
    const col = (b: number) => h.tools.map((_, t) => h.counts[t]![b]);
    assert.deepEqual(col(6), [1, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(col(13), [0, 0, 2, 0, 0, 0, 0]);
    assert.deepEqual(col(10), [0, 0, 1, 0, 0, 0, 0]);
    assert.deepEqual(col(19), [0, 0, 0, 0, 0, 2, 1]);
    const m19 = h.tools.map((_, t) => h.matrix[t]![19]);
    assert.deepEqual(m19, [0, 0, 0, 0, 0, 2 / 3, 1 / 3]);
    assert.equal(h.matrix[0]![0], 0);
    // untracked tools (final_answer) do not move max_step: python at 1/2 → bin 10, answer at 2/2 → bin 19
    const r = toolUsageHeatmap([[['python'], ['answer'], ['final_answer']]], { tools: ['python', 'answer'] });
    assert.deepEqual(r.counts, [
      [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
      [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
    ]);
    assert.equal(r.otherCalls, 1);
  });
});

describe('LongDA answer parsing equals LongTA utils.py (issue 21 items 2 and 3)', () => {
  it('strips every "X +- Y" / "X ± Y", not only a trailing one', () => {
    assert.deepEqual(normalizeAnswerValue('men 40.3 +- 1.2, women 39.2 ± 0.8 (5,929 adults)'), [40.3, 39.2, 5929]);
    assert.equal(normalizeAnswerValue('45 +- 3'), 45);
    assert.deepEqual(normalizeAnswerValue('1,234 +- 5 and 7'), [1234, 7]);
  });
  it('reads Unicode decimal digits as Python float() does', () => {
    assert.equal(normalizeAnswerValue('１２.５'), 12.5);
    assert.equal(normalizeAnswerValue('١٢'), 12);
    assert.deepEqual(normalizeAnswerValue('about ４５ and ७'), [45, 7]);
  });
});
