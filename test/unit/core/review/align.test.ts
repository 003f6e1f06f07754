import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { alignReviewDocs, findNumbers, numberMatches, reviewDocFromMarkdown, reviewDocFromSections, traceNumbers } from '../../../../src/core/review/align.ts';

const REPORT = `Intro text with 3 sources.

# 1. Results

Adult obesity was 40.3% overall; men 39.2% and women 41.3%. Version v2 and F1 are not numbers.

| Group | Prevalence | n |
|---|---|---|
| Men | 39.2 | 1,234 |

\`\`\`python
x = 99.9
\`\`\`

![Obesity by sex](figures/a.png)

## Method

Between 2017-2018 we used \`weights = 17\` and -2.5 shifts.
`;

describe('review documents', () => {
  it('sections at headings (preamble first), numbers from prose and tables only, figures, HTML wraps numbers', () => {
    const d = reviewDocFromMarkdown('r1', REPORT);
    assert.deepEqual(d.sections.map((s) => [s.key, s.title]), [['preamble', 'Introduction'], ['results', '1. Results'], ['method', 'Method']]);
    assert.deepEqual(d.numbers.map((n) => n.raw), ['3', '1', '40.3%', '39.2%', '41.3%', '39.2', '1,234', '2017', '2018', '-2.5']);
    const n1234 = d.numbers.find((n) => n.raw === '1,234')!;
    assert.equal(n1234.value, 1234);
    assert.equal(n1234.label, 'men · n');
    assert.equal(d.numbers.find((n) => n.raw === '41.3%')!.label, 'women');
    assert.equal(d.numbers.find((n) => n.raw === '40.3%')!.label, 'adult obesity');
    assert.equal(d.numbers.find((n) => n.raw === '-2.5')!.value, -2.5);
    assert.equal(d.figures.length, 1);
    assert.equal(d.figures[0]!.section, 'results');
    const html = d.sections[1]!.html;
    assert.match(html, /<span class="loupe-num" data-num="2">40\.3%<\/span>/);
    assert.match(html, /x = 99\.9/);
    assert.doesNotMatch(html, /data-num="[^"]+">99\.9/);
    assert.doesNotMatch(d.sections[2]!.html, /data-num="[^"]+">17</, 'code spans untouched');
    assert.equal(reviewDocFromMarkdown('r0', '  ').empty, true);
  });

  it('findNumbers: signs, hyphenated ranges, glued letters', () => {
    assert.deepEqual(findNumbers('2017-2018, -3, x2, 3rd, 1.2.3, 12 percent').map((f) => [f.raw, f.value]), [['2017', 2017], ['2018', 2018], ['-3', -3], ['12 percent', 12]]);
  });

  it('numberMatches: precision, percent ↔ fraction both ways, sign', () => {
    const w = (raw: string) => findNumbers(raw)[0]!;
    assert.ok(numberMatches(w('12.3'), 12.3456));
    assert.ok(numberMatches(w('12.35'), 12.3456));
    assert.ok(!numberMatches(w('12.34'), 12.3456));
    assert.ok(numberMatches(w('12.3%'), 0.123));
    assert.ok(numberMatches(w('0.123'), 12.3));
    assert.ok(numberMatches(w('1,234'), 1234.4));
    assert.ok(!numberMatches(w('1,234'), 1234.5 + 1e-6));
    assert.ok(numberMatches(w('2.5'), 2.45), 'half away from zero');
    assert.ok(!numberMatches(w('-2.5'), 2.5));
    assert.ok(numberMatches(w('-2.5'), -2.45));
  });

  it('traces numbers to the last cell holding them; untraceable ones stay null', () => {
    const d = reviewDocFromMarkdown('r1', REPORT);
    traceNumbers(d, [
      { seq: 0, stdout: 'overall 0.4031\nmen 0.392', result: null, tables: [] },
      { seq: 1, stdout: '', result: '1234', tables: [{ text: 'women  41.29' }] },
      { seq: 2, stdout: 'men 39.2', result: null, tables: [] },
    ]);
    const src = (raw: string) => d.numbers.find((n) => n.raw === raw)!.source?.seq ?? null;
    assert.equal(src('40.3%'), 0);
    assert.equal(src('41.3%'), 1);
    assert.equal(src('39.2%'), 2, 'the last cell holding it');
    assert.equal(src('1,234'), 1);
    assert.equal(src('-2.5'), null);
  });
});

describe('alignment', () => {
  it('aligns equal keys in order, similar titles, one-sided sections; differing numbers under one label', () => {
    const a = reviewDocFromMarkdown('a', '# Results\n\nObesity was 40.3% and women 41.3%.\n\n## Method\n\nSurvey.\n\n## Limits\n\nFew.\n');
    const b = reviewDocFromMarkdown('b', '# Key results\n\nObesity was 42.0% and women 41.3%.\n\n## Trends\n\nUp 9.2%.\n\n## Limits\n\nMany.\n');
    const rows = alignReviewDocs(a, b);
    assert.deepEqual(rows.map((r) => [r.a?.title ?? null, r.b?.title ?? null]), [['Results', 'Key results'], ['Method', null], [null, 'Trends'], ['Limits', 'Limits']]);
    assert.deepEqual(rows[0]!.differing.map((d) => d.label), ['obesity']);
    assert.equal(a.numbers[rows[0]!.differing[0]!.a]!.raw, '40.3%');
  });

  it('structured sections keep their keys (BLADE decision types)', () => {
    const a = reviewDocFromSections('a', [{ key: 'model', title: 'Model', markdown: '```python\nols()\n```' }, { key: 'conceptual-variables', title: 'Conceptual variables', markdown: '- IV: x' }]);
    const b = reviewDocFromSections('b', [{ key: 'conceptual-variables', title: 'Conceptual variables', markdown: '- IV: y' }, { key: 'model', title: 'Model', markdown: 'glm' }]);
    const rows = alignReviewDocs(a, b);
    assert.equal(rows.filter((r) => r.a && r.b).length, 1, 'LCS keeps order: one of the two swapped sections aligns');
    assert.equal(rows.length, 3);
  });
});
