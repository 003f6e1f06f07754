import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AnswerMark, TimelineStep } from '../../../src/protocol/timeline.ts';
import {
  argSections,
  filterSteps,
  formatDuration,
  formatTokens,
  stepVerdict,
  tallyText,
  toolGlyph,
  VERDICT_GLYPH,
  visibleRange,
  type ArgSection,
} from '../../../webview/shared/timeline-model.ts';

const row = (index: number, tools: string[], text: string): TimelineStep => ({
  index,
  startMs: 0,
  durationMs: 1,
  latencyMs: 1,
  toolMs: 0,
  tokensIn: 1,
  tokensOut: 1,
  tools,
  error: false,
  summary: text,
});

describe('webview timeline model', () => {
  it('filters by tool and by the search matches from the host', () => {
    const steps = [
      row(0, ['python'], 'Load DEMO_L.xpt'),
      row(1, ['search_doc'], 'keyword WTMEC2YR'),
      row(2, ['python', 'answer'], 'weighted mean WTMEC2YR'),
    ];
    assert.deepEqual(
      filterSteps(steps, 'python', null).map((s) => s.index),
      [0, 2],
    );
    assert.deepEqual(
      filterSteps(steps, '', new Set([1, 2])).map((s) => s.index),
      [1, 2],
    );
    assert.deepEqual(
      filterSteps(steps, 'python', new Set([1, 2])).map((s) => s.index),
      [2],
    );
  });

  it('formats durations and token counts', () => {
    assert.equal(formatDuration(950), '950 ms');
    assert.equal(formatDuration(12_300), '12.3 s');
    assert.equal(formatDuration(600_000), '10m 0s');
    assert.equal(formatTokens(12_345), '12.3k');
    assert.equal(toolGlyph('execute_query').cls, 'sql');
    assert.equal(toolGlyph('').glyph, 'Msg');
  });

  it('renders only the rows in view plus overscan', () => {
    assert.deepEqual(visibleRange(0, 260, 26, 10_000, 8), { start: 0, end: 19 });
    assert.deepEqual(visibleRange(26 * 5000, 260, 26, 10_000, 8), { start: 4992, end: 5019 });
    assert.deepEqual(visibleRange(26 * 9999, 260, 26, 10_000, 8), { start: 9991, end: 10_000 });
    assert.deepEqual(visibleRange(0, 260, 26, 0), { start: 0, end: 0 });
  });
});

describe('answer verdicts of a step (issue 22)', () => {
  const mark = (verdict: AnswerMark['verdict']): AnswerMark => ({
    ref: verdict,
    question: 'q',
    verdict,
    credit: verdict === 'right' ? 1 : verdict === 'pending' ? null : 0,
    given: '',
    expected: '',
  });
  it('one answer: its verdict in words', () => {
    assert.deepEqual(stepVerdict([mark('wrong')]), { verdict: 'wrong', text: `${VERDICT_GLYPH.wrong} wrong` });
  });
  it('several: right only when all are, wrong when none is, pending while any waits; counts per verdict', () => {
    assert.equal(stepVerdict([mark('right'), mark('right')]).verdict, 'right');
    assert.equal(stepVerdict([mark('wrong'), mark('unanswered')]).verdict, 'wrong');
    assert.equal(stepVerdict([mark('right'), mark('pending')]).verdict, 'pending');
    const mixed = stepVerdict([mark('right'), mark('right'), mark('wrong')]);
    assert.equal(mixed.verdict, 'partial');
    assert.equal(mixed.text, `2${VERDICT_GLYPH.right} 1${VERDICT_GLYPH.wrong}`);
  });
  it('tally text leaves out empty verdicts', () => {
    assert.equal(
      tallyText({ right: 2, partial: 0, wrong: 1, unanswered: 0, pending: 0, total: 3 }),
      '2 right · 1 wrong of 3 items',
    );
  });
});

describe('tool-call arguments as readable sections (issue 22)', () => {
  const submission = {
    conceptual_variables: [
      { description: 'femininity of the name', type: 'IV', columns: ['masfem'] },
      { description: 'deaths', type: 'DV', columns: ['log_deaths', 'x'] },
    ],
    transform_code: "def transform(df):\n    df['log_deaths'] = np.log1p(df['alldeaths'])\n    return df\n",
    model_code: "def model(df):\n    return smf.ols('log_deaths ~ masfem', data=df).fit()\n",
  };
  it('a BLADE submission: conceptual variables as a table, code with real line breaks', () => {
    const s = argSections(JSON.stringify(submission))!;
    assert.deepEqual(
      s.map((x) => [x.title, x.kind]),
      [
        ['Conceptual variables', 'table'],
        ['Transform code', 'code'],
        ['Model code', 'code'],
      ],
    );
    const t = s[0] as Extract<ArgSection, { kind: 'table' }>;
    assert.deepEqual(t.columns, ['Description', 'Type', 'Columns']);
    assert.deepEqual(t.rows[1], ['deaths', 'DV', 'log_deaths, x']);
    const code = s[1] as Extract<ArgSection, { kind: 'code' }>;
    assert.equal(code.text, submission.transform_code.trimEnd());
    assert.ok(!code.text.includes('\\n'), 'no escaped line breaks');
  });
  it('plain arguments stay as they are (null)', () => {
    assert.equal(argSections(JSON.stringify({ code: 'x = 1' })), null);
    assert.equal(argSections('not json'), null);
    assert.equal(argSections('[1, 2]'), null);
  });
});
