import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import {
  alignReviewDocs,
  CellNumberIndex,
  findNumbers,
  numberMatches,
  reviewDocFromMarkdown,
  reviewDocFromSections,
  roundedKey,
  titleSimilarity,
  traceNumbers,
  TITLE_SIMILARITY,
  type ReviewDoc,
} from '../../../../src/core/review/align.ts';
import { analystReviewSource } from '../../../../src/core/benchmarks/analystbench/review.ts';
import { bladeReviewSections, bladeReviewSource } from '../../../../src/core/benchmarks/blade/review.ts';
import { ddrReviewSections, ddrReviewSource } from '../../../../src/core/benchmarks/ddr/review.ts';
import { longdaReviewSections, longdaReviewSource } from '../../../../src/core/benchmarks/longda/review.ts';
import type { AnswerRecord, RunRecord, StepRecord } from '../../../../src/core/store/records.ts';
import type { RunStore } from '../../../../src/core/store/types.ts';
import { LoupeInputError } from '../../../../src/core/util/errors.ts';

const REPORT = `Intro text with 3 sources.

# 1. Results

Adult obesity was 40.3% overall; men 39.2% and women 41.3%. Version v2 and F1 are not numbers.

| Group | Prevalence | n |
|---|---|---|
| Men | 39.2 | 1,234 |

\`\`\`python
x = 99.9
\`\`\`

![Obesity by sex](figures/fig-3-1.png) shows 3 groups.

## 2.1 Method

Between 2017-2018 we used \`weights = 17\` and -2.5 shifts, see [table 4](https://example.org/t/55).

![inline](data:image/png;base64,iVBORw0KGgo=)
`;

const num = (d: ReviewDoc, raw: string, k = 0) => d.numbers.filter((n) => n.raw === raw)[k]!;

describe('review documents from Markdown', () => {
  const d = reviewDocFromMarkdown('r1', REPORT);

  it('splits at headings: preamble, a document title, heading paths with numbering dropped', () => {
    assert.deepEqual(
      d.sections.map((s) => [s.key, s.title, s.level]),
      [
        ['preamble', 'Introduction', 0],
        ['title', '1. Results', 1],
        ['method', '2.1 Method', 2],
      ],
    );
    assert.equal(d.empty, false);
    assert.equal(d.keyed, false);
    assert.equal(d.sections.map((s) => s.markdown).join(''), REPORT, 'sections cover the report');
    const nested = reviewDocFromMarkdown('r', '# A\n\n## Men\n\n## Women\n\n# B\n\n## Men\n\nx\n\n## Men\n');
    assert.deepEqual(
      nested.sections.map((s) => s.key),
      ['a', 'a / men', 'a / women', 'b', 'b / men', 'b / men#2'],
    );
  });

  it('takes numbers from prose, tables, links and list items — not code, headings numbering, URLs or image sources', () => {
    assert.deepEqual(
      d.numbers.map((n) => n.raw),
      ['3', '40.3%', '39.2%', '41.3%', '39.2', '1,234', '3', '2017', '2018', '-2.5', '4'],
    );
    assert.deepEqual(
      d.numbers.map((n) => n.id),
      d.numbers.map((_, i) => i),
    );
    const n1234 = num(d, '1,234');
    assert.deepEqual([n1234.value, n1234.decimals, n1234.percent, n1234.section], [1234, 0, false, 'title']);
    assert.deepEqual([num(d, '40.3%').value, num(d, '40.3%').decimals, num(d, '40.3%').percent], [40.3, 1, true]);
    assert.equal(num(d, '-2.5').value, -2.5);
    assert.deepEqual(d.sections[1]!.numbers, [1, 2, 3, 4, 5, 6]);
  });

  it('labels: words before the number in its sentence, table row · column headers, words after at a sentence start', () => {
    assert.equal(num(d, '40.3%').label, 'adult obesity');
    assert.equal(num(d, '39.2%').label, 'men');
    assert.equal(num(d, '41.3%').label, 'women');
    assert.equal(num(d, '39.2').label, 'men · prevalence');
    assert.equal(num(d, '1,234').label, 'men · n');
    assert.equal(num(d, '4').label, 'shifts see table', 'a comma does not end the clause');
    const ages = reviewDocFromMarkdown(
      'r',
      'Prevalence among adults aged 20–29 was 31.3%. Between 2017 and 2018 it fell.',
    );
    assert.deepEqual(
      ages.numbers.map((n) => [n.raw, n.label]),
      [
        ['20', 'prevalence adults aged'],
        ['29', 'prevalence adults aged'],
        ['31.3%', 'prevalence adults aged'],
        ['2017', ''],
        ['2018', ''],
      ],
      'past earlier numbers, not past the sentence',
    );
    const s = reviewDocFromMarkdown('r', 'The median age of respondents\nwas 41 years. 12.5% were smokers.');
    assert.deepEqual(
      s.numbers.map((n) => n.label),
      ['median age respondents', 'smokers'],
      'a soft line break does not end the sentence',
    );
  });

  it('offsets point at the number in its section markdown', () => {
    for (const n of d.numbers) {
      const md = d.sections.find((s) => s.key === n.section)!.markdown;
      assert.equal(md.slice(n.start, n.end), n.raw, `${n.raw} at ${n.start}`);
    }
    assert.equal(
      num(d, '3', 1).start,
      d.sections[1]!.markdown.indexOf(' shows 3') + 7,
      'not the 3 of the figure file name',
    );
    const q = reviewDocFromMarkdown('r', '- item 5\n  continued 6\n\n> quote 8\n> more 9\n');
    for (const n of q.numbers) assert.equal(q.sections[0]!.markdown.slice(n.start, n.end), n.raw);
  });

  it('counts figures (files and data URIs) with their section', () => {
    assert.deepEqual(
      d.figures.map((f) => [f.section, f.alt, f.src.slice(0, 22)]),
      [
        ['title', 'Obesity by sex', 'figures/fig-3-1.png'],
        ['method', 'inline', 'data:image/png;base64,'],
      ],
    );
    const h = reviewDocFromMarkdown('r', 'See <img src="figures/b.png" alt="B"> here.');
    assert.deepEqual(h.figures, [{ section: 'preamble', alt: 'B', src: 'figures/b.png' }]);
  });

  it('HTML wraps each number with data-num and leaves code, URLs and figure files untouched', () => {
    const html = d.sections[1]!.html;
    assert.match(html, /was <span class="loupe-num" data-num="1">40\.3%<\/span> overall/);
    assert.match(html, /<td><span class="loupe-num" data-num="5">1,234<\/span><\/td>/);
    assert.match(html, /<code class="language-python">x = 99\.9\n<\/code>/);
    assert.match(html, /data-fig="0"[^>]*>\[figure: Obesity by sex\]/);
    assert.doesNotMatch(html, /style=|<script/);
    const m = d.sections[2]!.html;
    assert.match(m, /<code>weights = 17<\/code>/);
    assert.match(m, /href="https:\/\/example\.org\/t\/55">table <span class="loupe-num" data-num="10">4<\/span><\/a>/);
    assert.match(m, /<img src="data:image\/png;base64,iVBORw0KGgo=" alt="inline">/);
    assert.equal((m.match(/loupe-num/g) ?? []).length, 4);
    assert.match(
      reviewDocFromMarkdown('r', 'a < b & 5 > "2"').sections[0]!.html,
      /a &lt; b &amp; <span class="loupe-num" data-num="0">5<\/span> &gt; &quot;<span class="loupe-num" data-num="1">2<\/span>&quot;/,
    );
  });

  it('an empty report is "no report"; input that is not text is refused', () => {
    assert.equal(reviewDocFromMarkdown('r0', '  \n').empty, true);
    assert.equal(reviewDocFromMarkdown('r0', '').sections.length, 0);
    assert.throws(() => reviewDocFromMarkdown('r0', null as unknown as string), LoupeInputError);
    assert.throws(() => reviewDocFromSections('r0', [{ key: ' ', title: 't', markdown: 'x' }]), LoupeInputError);
  });
});

describe('numbers and the tracing rule', () => {
  it('findNumbers: signs, ranges, glued letters, versions, percent words, exponents', () => {
    assert.deepEqual(
      findNumbers('2017-2018, -3, −4, x2, 3rd, 1990s, 1.2.3, 12 percent, 5 per cent, 1.5e-3, $1,234,567.5').map((f) => [
        f.raw,
        f.value,
        f.decimals,
        f.percent,
      ]),
      [
        ['2017', 2017, 0, false],
        ['2018', 2018, 0, false],
        ['-3', -3, 0, false],
        ['−4', -4, 0, false],
        ['12 percent', 12, 0, true],
        ['5 per cent', 5, 0, true],
        ['1.5e-3', 0.0015, 4, false],
        ['1,234,567.5', 1234567.5, 1, false],
      ],
    );
  });

  const cases: Array<[string, number | string, boolean, string]> = [
    ['12.3', 12.3456, true, 'cell rounded to the one decimal written'],
    ['12.35', 12.3456, true, 'two decimals'],
    ['12.34', 12.3456, false, '12.3456 rounds to 12.35'],
    ['12.35', 12.345, true, 'half away from zero (exact on the decimal form)'],
    ['-12.35', -12.345, true, 'half away from zero, negative'],
    ['1.01', 1.005, true, 'no binary rounding error'],
    ['2.5', 2.45, true, 'half up'],
    ['12.30', 12.3, true, 'trailing zero written'],
    ['12.3%', 0.123, true, 'percent written, fraction printed'],
    ['12.3%', 12.3, true, 'percent written, percent value printed plainly'],
    ['12.3%', 0.1234, true, 'fraction rounded'],
    ['0.123', '12.3%', true, 'fraction written, percent printed'],
    ['0.123', 12.3, false, 'no % anywhere: not a percent'],
    ['12.3', '0.123', false, 'not written as a percent'],
    ['1,234', 1234, true, 'thousands separator written'],
    ['1234', '1,234.2', true, 'thousands separator printed'],
    ['1,234', 1234.4, true, 'integer within 0.5'],
    ['1,234', 1234.5, false, '1234.5 rounds to 1235'],
    ['1,234', 1233.5, true, 'half away from zero'],
    ['1,234', 1233.49, false, 'more than 0.5 away'],
    ['-2.5', 2.5, false, 'sign must agree'],
    ['2.5', -2.5, false, 'sign must agree (other way)'],
    ['-2.5', -2.46, true, 'negative rounded'],
    ['0.0', -0.01, true, 'zero has no sign'],
    ['40', 0.4, false, 'no percent: fraction not converted'],
    ['40%', 0.4, true, 'percent integer'],
  ];
  for (const [w, c, ok, why] of cases) {
    it(`numberMatches(${w}, ${JSON.stringify(c)}) is ${ok}: ${why}`, () => assert.equal(numberMatches(w, c), ok));
  }

  it('numberMatches takes parts too, and refuses a string that is not one number', () => {
    assert.ok(numberMatches({ value: 12.3, decimals: 1, percent: true }, { value: 0.123 }));
    assert.ok(!numberMatches({ value: 12.3, decimals: 1 }, { value: 0.123 }));
    assert.throws(() => numberMatches('about', 1), LoupeInputError);
    assert.throws(() => numberMatches('1 and 2', 1), LoupeInputError);
  });

  it('roundedKey rounds half away from zero on the decimal form', () => {
    assert.deepEqual(
      [
        roundedKey(1.005, 2),
        roundedKey(-1.005, 2),
        roundedKey(0.125, 2),
        roundedKey(0.0049, 2),
        roundedKey(-0.0049, 2),
        roundedKey(0.123, 1, 2),
        roundedKey(12.3, 3, -2),
        roundedKey(1234567.5, 0),
      ],
      ['101', '-101', '13', '0', '0', '123', '123', '1234568'],
    );
  });

  it('traces numbers to the cell holding them (best match, then latest); an untraceable one stays null', () => {
    const d = reviewDocFromMarkdown('r1', REPORT);
    traceNumbers(d, [
      { seq: 0, stdout: 'overall 0.4031\nmen 0.392', result: null, tables: [] },
      { seq: 1, stdout: '', result: '1,234', tables: [{ text: 'women  41.29' }] },
      { seq: 2, stdout: 'men 39.2', result: null, tables: [] },
      { seq: 3, stdout: 'men 39.21', result: null, tables: [] },
      { seq: 4, stdout: 'men 39.2', result: null, tables: [], replay: true } as never,
    ]);
    const src = (raw: string) => num(d, raw).source?.seq ?? null;
    assert.equal(src('40.3%'), 0, 'fraction 0.4031 → 40.3%');
    assert.equal(src('41.3%'), 1, 'in a table text');
    assert.equal(
      src('39.2%'),
      2,
      'printed as written beats rounded (seq 3) and converted (seq 0); the replay is skipped',
    );
    assert.equal(src('1,234'), 1);
    assert.equal(src('-2.5'), null, 'no source found');
    assert.equal(src('2017'), null);
    assert.equal(traceNumbers(reviewDocFromMarkdown('r', 'x 5'), []).numbers[0]!.source, null);
  });

  it('the cell index picks the latest among equally good cells', () => {
    const ix = new CellNumberIndex([
      { seq: 7, stdout: '5.0', result: null, tables: [] },
      { seq: 2, stdout: '5', result: null, tables: [] },
    ]);
    assert.equal(ix.size, 2);
    assert.deepEqual(ix.find({ value: 5, decimals: 0 }), { seq: 7, tier: 0 });
    assert.deepEqual(ix.find({ value: 5, decimals: 0, percent: true }), { seq: 7, tier: 0 });
    assert.equal(ix.find({ value: 6, decimals: 0 }), null);
  });
});

describe('alignment', () => {
  it('aligns equal keys in order, a renamed heading by title, one-sided sections in place; the changed number differs', () => {
    const a = reviewDocFromMarkdown(
      'a',
      '# Brief\n\n## Results\n\nObesity was 40.3% and women 41.3%.\n\n## Method\n\nSurvey of 2,000.\n\n## Limits\n\nFew.\n',
    );
    const b = reviewDocFromMarkdown(
      'b',
      '# Brief\n\n## Key results\n\nObesity was 42.0% and women 41.30%.\n\n## Trends\n\nUp 9.2%.\n\n## Limits\n\nMany.\n',
    );
    const rows = alignReviewDocs(a, b);
    assert.deepEqual(
      rows.map((r) => [r.titleA, r.titleB, r.match]),
      [
        ['Brief', 'Brief', 'key'],
        ['Results', 'Key results', 'title'],
        ['Method', null, null],
        [null, 'Trends', null],
        ['Limits', 'Limits', 'key'],
      ],
    );
    assert.deepEqual(
      rows.map((r) => r.key),
      ['title', 'results', 'method', 'trends', 'limits'],
    );
    assert.deepEqual(
      rows[1]!.differing.map((d) => [d.label, a.numbers[d.a]!.raw, b.numbers[d.b]!.raw]),
      [['obesity', '40.3%', '42.0%']],
      'women 41.3% = 41.30%',
    );
    assert.ok(rows.every((r, i) => i === 1 || !r.differing.length));
  });

  it('similar titles: threshold and containment', () => {
    assert.ok(titleSimilarity('Results', 'Key results') >= TITLE_SIMILARITY);
    assert.ok(titleSimilarity('3. Methods', 'Method') >= TITLE_SIMILARITY);
    assert.ok(titleSimilarity('Method', 'Trends') < TITLE_SIMILARITY);
    assert.equal(titleSimilarity('By sex', 'by  sex!'), 1);
  });

  it('a document with no sections still gives rows for the other; tables differ cell by cell', () => {
    const empty = reviewDocFromMarkdown('a', '');
    const b = reviewDocFromMarkdown('b', '## X\n\nt\n');
    assert.deepEqual(
      alignReviewDocs(empty, b).map((r) => [r.a, r.titleB]),
      [[null, 'X']],
    );
    const u1 = reviewDocFromMarkdown('a', 'Between 2017 and 2018.');
    const u2 = reviewDocFromMarkdown('b', 'Between 2017 and 2019.');
    assert.deepEqual(alignReviewDocs(u1, u2)[0]!.differing, [], 'unlabelled prose numbers are not compared');
    const t1 = reviewDocFromMarkdown('a', '| g | rate |\n|---|---|\n| men | 0.39 |\n| women | 0.41 |\n');
    const t2 = reviewDocFromMarkdown('b', '| g | rate |\n|---|---|\n| men | 39% |\n| women | 0.44 |\n');
    assert.deepEqual(
      alignReviewDocs(t1, t2)[0]!.differing.map((d) => d.label),
      ['women · rate'],
      '0.39 = 39%',
    );
  });

  it('structured sections align by key only (LongDA queries are not similar titles)', () => {
    const a = reviewDocFromSections('a', [
      { key: 'query:q1', title: 'Query q1', markdown: '0.41' },
      { key: 'query:q2', title: 'Query q2', markdown: '[1.5, 2]' },
    ]);
    const b = reviewDocFromSections('b', [
      { key: 'query:q2', title: 'Query q2', markdown: '[1.5, 3]' },
      { key: 'query:q3', title: 'Query q3', markdown: '7' },
    ]);
    assert.equal(a.keyed, true);
    const rows = alignReviewDocs(a, b);
    assert.deepEqual(
      rows.map((r) => [r.a?.key ?? null, r.b?.key ?? null]),
      [
        ['query:q1', null],
        ['query:q2', 'query:q2'],
        [null, 'query:q3'],
      ],
    );
    assert.deepEqual(
      rows[1]!.differing.map((d) => [a.numbers[d.a]!.raw, b.numbers[d.b]!.raw]),
      [['2', '3']],
    );
    const dup = reviewDocFromSections('d', [
      { key: 'k', title: 'K', markdown: '' },
      { key: 'k', title: 'K', markdown: '' },
    ]);
    assert.deepEqual(
      dup.sections.map((s) => s.key),
      ['k', 'k#2'],
    );
    assert.equal(dup.empty, true);
  });

  it("swapped sections still align by key, one row each, in A's order (BLADE decision types)", () => {
    const a = reviewDocFromSections('a', [
      { key: 'model', title: 'Model', markdown: '```python\nols()\n```' },
      { key: 'conceptual-variables', title: 'Conceptual variables', markdown: '- IV: x' },
    ]);
    const b = reviewDocFromSections('b', [
      { key: 'conceptual-variables', title: 'Conceptual variables', markdown: '- IV: y' },
      { key: 'model', title: 'Model', markdown: 'glm' },
    ]);
    const rows = alignReviewDocs(a, b);
    assert.deepEqual(
      rows.map((r) => [r.a?.key ?? null, r.b?.key ?? null, r.match]),
      [
        ['model', 'model', 'key'],
        ['conceptual-variables', 'conceptual-variables', 'key'],
      ],
    );
  });

  it('issue 42 defect 1: B answered q3 last — q3 is one row with both sides, a side is missing only when truly missing', () => {
    const a = reviewDocFromSections(
      'a',
      [1, 2, 3, 4].map((k) => ({ key: `query:q${k}`, title: `Query q${k}`, markdown: `${k}0` })),
    );
    const b = reviewDocFromSections('b', [
      { key: 'query:q1', title: 'Query q1', markdown: '10' },
      { key: 'query:q2', title: 'Query q2', markdown: '20' },
      { key: 'query:q4', title: 'Query q4', markdown: '40' },
      { key: 'query:q3', title: 'Query q3', markdown: '31' },
      { key: 'query:q5', title: 'Query q5', markdown: '5' },
    ]);
    const rows = alignReviewDocs(a, b);
    assert.deepEqual(
      rows.map((r) => [r.a?.key ?? null, r.b?.key ?? null]),
      [
        ['query:q1', 'query:q1'],
        ['query:q2', 'query:q2'],
        ['query:q3', 'query:q3'],
        ['query:q4', 'query:q4'],
        [null, 'query:q5'],
      ],
    );
    assert.deepEqual(
      rows[2]!.differing.map((d) => [a.numbers[d.a]!.raw, b.numbers[d.b]!.raw]),
      [['30', '31']],
    );
    // Markdown reports too: a moved heading is aligned by its key, not offered to a similar title elsewhere
    const m1 = reviewDocFromMarkdown('a', '## Results\n\nx\n\n## Method\n\ny\n\n## Limits\n\nz\n');
    const m2 = reviewDocFromMarkdown(
      'b',
      '## Method\n\ny\n\n## Limits\n\nz\n\n## Results\n\nx\n\n## Methods used\n\nw\n',
    );
    assert.deepEqual(
      alignReviewDocs(m1, m2).map((r) => [r.a?.key ?? null, r.b?.key ?? null, r.match]),
      [
        ['results', 'results', 'key'],
        ['method', 'method', 'key'],
        ['limits', 'limits', 'key'],
        [null, 'methods used', null],
      ],
    );
  });
});

// ------------------------------------------------------------------------------------------------ adapters

const run = (over: Partial<RunRecord> = {}): RunRecord => ({
  id: 'run-1',
  suite: 'x',
  blockId: 'b',
  agent: 'llm',
  model: 'm',
  params: {},
  promptHash: 'h',
  toolSet: 't',
  dataChecksums: {},
  loupeVersion: 't',
  sandbox: 'off',
  storedWorkspace: '/nonexistent',
  status: 'finished',
  statusReason: null,
  createdAt: '',
  startedAt: null,
  endedAt: null,
  durationMs: 0,
  steps: 0,
  tokens: { input: 0, output: 0, cached: 0 },
  costUsd: null,
  ...over,
});
const step = (index: number, content: string | null, tool?: string): StepRecord => ({
  runId: 'run-1',
  index,
  startedAt: '',
  endedAt: '',
  latencyMs: 0,
  toolMs: 0,
  assistant: { role: 'assistant', content },
  toolCalls: tool
    ? [
        {
          id: `c${index}`,
          name: tool,
          argumentsText: '{}',
          observation: 'ok',
          isError: false,
          truncated: false,
          durationMs: 0,
        },
      ]
    : [],
  extraMessages: [],
  usage: { input: 0, output: 0, cached: 0 },
  costUsd: null,
  finishReason: null,
});
const fakeStore = (o: {
  answers?: AnswerRecord[];
  extra?: Record<string, unknown>;
  steps?: StepRecord[];
  events?: Array<{ kind: string; message: string }>;
}) =>
  ({
    getAnswers: async () => o.answers ?? [],
    getExtraState: async () => o.extra ?? {},
    artefacts: { get: async () => undefined },
    getSteps: async () => o.steps ?? [],
    getEvents: async () => (o.events ?? []).map((e) => ({ runId: 'run-1', at: '', ...e })),
  }) as unknown as RunStore;

describe('per-benchmark review sources', () => {
  it('AnalystBench: the whole report.md, null without one', async () => {
    const ws = mkdtempSync(join(tmpdir(), 'loupe-review-'));
    try {
      assert.equal(
        await analystReviewSource(fakeStore({}), {
          runId: 'run-1',
          workspace: ws,
          runDir: dirname(ws),
          refused: null,
          absent: null,
        }),
        null,
      );
      writeFileSync(join(ws, 'report.md'), '# Brief\n\nRate 40.3%.\n');
      assert.deepEqual(
        await analystReviewSource(fakeStore({}), {
          runId: 'run-1',
          workspace: ws,
          runDir: dirname(ws),
          refused: null,
          absent: null,
        }),
        { markdown: '# Brief\n\nRate 40.3%.\n' },
      );
      writeFileSync(join(ws, 'report.md'), '\n  \n');
      assert.equal(
        await analystReviewSource(fakeStore({}), {
          runId: 'run-1',
          workspace: ws,
          runDir: dirname(ws),
          refused: null,
          absent: null,
        }),
        null,
      );
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it('BLADE: one section per decision type from the final valid submission, conclusion from its step on', async () => {
    const input = {
      conceptual_variables: [],
      transform_code: 'def transform(df):\n    return df\n',
      model_code: 'def model(df):\n    return smf.ols("y ~ x", df).fit()\n',
    };
    const extra = {
      blade: {
        submissions: [
          { stepIndex: 1, valid: false, errors: ['bad'], input },
          { stepIndex: 2, valid: true, errors: [], input, modelResult: 'coef x 0.412' },
        ],
        final: {
          cvars: {
            ivs: [{ description: 'femininity of the name', columns: ['masfem'] }],
            dv: { description: 'deaths', columns: ['alldeaths'] },
            controls: [
              { description: 'wind speed', is_moderator: true, moderator_on: 'femininity', columns: ['wind'] },
            ],
          },
          transform_code: input.transform_code,
          m_code: input.model_code,
        },
      },
    };
    const steps = [
      step(0, 'Exploring 3 columns.', 'python'),
      step(1, 'Try.', 'submit_analysis'),
      step(2, 'Feminine names: 0.41 more deaths per unit.', 'submit_analysis'),
    ];
    const src = await bladeReviewSource(fakeStore({ extra, steps }), run());
    assert.ok(src && 'sections' in src);
    assert.deepEqual(
      src.sections.map((s) => s.key),
      ['conceptual-variables', 'transforms', 'model', 'conclusion'],
    );
    assert.match(
      src.sections[0]!.markdown,
      /- \*\*IV\*\*: femininity of the name \(columns: `masfem`\)\n- \*\*DV\*\*: deaths[^\n]*\n- \*\*Control, moderator on femininity\*\*: wind speed/,
    );
    assert.match(src.sections[2]!.markdown, /^```python\ndef model/);
    assert.match(
      src.sections[3]!.markdown,
      /^Feminine names: 0\.41 more deaths per unit\.\n\nModel result:\n\n```text\ncoef x 0\.412\n```$/,
    );
    const doc = reviewDocFromSections('r', src.sections);
    assert.deepEqual(
      doc.numbers.map((n) => n.raw),
      ['0.41'],
      'code and model output are not prose',
    );
    assert.equal(
      await bladeReviewSource(
        fakeStore({
          extra: { blade: { submissions: [{ stepIndex: 1, valid: false, errors: ['x'], input }], final: null } },
        }),
        run(),
      ),
      null,
    );
    assert.equal(await bladeReviewSource(fakeStore({}), run()), null);
    const noWords = bladeReviewSections({ blade: { ...extra.blade, submissions: [] } }, []);
    assert.deepEqual(noWords && 'sections' in noWords ? noWords.sections.map((s) => s.key) : null, [
      'conceptual-variables',
      'transforms',
      'model',
    ]);
  });

  it('DDR: the final report (FINISH: dropped) and the insight list, from the recorded result or the trajectory', async () => {
    const recorded = {
      finalReport: 'FINISH: Patient 10502319 had 3 admissions; mean stay 4.5 days.',
      insights: [
        { stepIndex: 0, tool: 'sql', insight: 'Median age 67.' },
        { stepIndex: 1, tool: 'describe_table', insight: null },
        { stepIndex: 2, tool: 'sql', insight: 'Two\nlines 12%.' },
      ],
    };
    const src = await ddrReviewSource(
      fakeStore({ events: [{ kind: 'ddr-result', message: JSON.stringify(recorded) }] }),
      run(),
    );
    assert.deepEqual(src, {
      sections: [
        { key: 'report', title: 'Final report', markdown: 'Patient 10502319 had 3 admissions; mean stay 4.5 days.' },
        { key: 'insights', title: 'Insights (2)', markdown: '- Median age 67.\n- Two lines 12%.' },
      ],
    });
    const steps = [step(0, 'Look.', 'sql'), step(1, 'Age is 67 here.', 'sql'), step(2, 'FINISH: mean 4.5 days.')];
    const fromSteps = await ddrReviewSource(fakeStore({ steps }), run());
    assert.ok(fromSteps && 'sections' in fromSteps);
    assert.equal(fromSteps.sections[0]!.markdown, 'mean 4.5 days.');
    assert.equal(fromSteps.sections[1]!.markdown, '- Age is 67 here.\n- mean 4.5 days.');
    assert.equal(ddrReviewSections({ finalReport: null, insights: [] }, []), null);
    assert.equal(await ddrReviewSource(fakeStore({}), run()), null);
  });

  it('LongDA: one section per query, the last answer wins, in first-answered order', async () => {
    const ans = (queryId: string, answer: number | number[], raw: string): AnswerRecord => ({
      runId: 'run-1',
      queryId,
      answer,
      raw,
      stepIndex: 0,
    });
    const src = await longdaReviewSource(
      fakeStore({ answers: [ans('q2', 0.4, '0.40'), ans('q1', [1, 2], ''), ans('q2', 0.41, '0.41')] }),
      run(),
    );
    assert.deepEqual(src, {
      sections: [
        { key: 'query:q2', title: 'Query q2', markdown: '0.41' },
        { key: 'query:q1', title: 'Query q1', markdown: '[1, 2]' },
      ],
    });
    assert.equal(longdaReviewSections([]), null);
    assert.equal(await longdaReviewSource(fakeStore({}), run()), null);
  });
});
