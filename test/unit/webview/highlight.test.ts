import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { focusSnippet, highlight, matchRanges, mergeRanges, queryTerms } from '../../../webview/shared/highlight.ts';

describe('webview highlight', () => {
  it('keyword mode marks the whole query, case-insensitively', () => {
    const t = 'Body Mass Index (BMXBMI) ... body mass index';
    assert.deepEqual(matchRanges(t, 'body MASS index', 'keyword'), [
      [0, 15],
      [29, 44],
    ]);
  });

  it('bm25 mode marks word tokens, keeps variable names whole and skips stop words', () => {
    const t = 'The variable WTMEC2YR is the MEC exam weight; WTMEC2YRX is not.';
    const r = matchRanges(t, 'what is WTMEC2YR', 'bm25');
    assert.deepEqual(r, [[13, 21]]);
    assert.deepEqual(queryTerms('What is the weight of WTMEC2YR?', 'bm25').terms, ['weight', 'wtmec2yr']);
  });

  it('longta mode is case-sensitive on whole whitespace tokens', () => {
    const t = 'obesity Obesity OBESITY';
    assert.deepEqual(matchRanges(t, 'Obesity', 'longta'), [[8, 15]]);
    // "20" inside "2022" and "and" inside "band" are not LongTA token matches; "over," keeps its comma as a token.
    assert.deepEqual(matchRanges('In 2022 aged 20 and over, band', '20 and over', 'longta'), [
      [13, 15],
      [16, 19],
    ]);
  });

  it('highlight segments concatenate back to the text, with the primary range flagged', () => {
    const t = 'Age in years at screening (RIDAGEYR). Adults aged 20 and over.';
    const segs = highlight(t, 'ridageyr adults', 'bm25', [27, 35]);
    assert.equal(segs.map((s) => s.text).join(''), t);
    const marked = segs.filter((s) => s.mark).map((s) => s.text);
    assert.deepEqual(marked, ['RIDAGEYR', 'Adults']);
    assert.equal(segs.find((s) => s.text === 'RIDAGEYR')?.primary, true);
    assert.equal(segs.find((s) => s.text === 'Adults')?.primary, undefined);
  });

  it('an empty query marks nothing', () => {
    assert.deepEqual(highlight('abc', '  ', 'bm25'), [{ text: 'abc', mark: false }]);
  });

  it('merges overlapping ranges', () => {
    assert.deepEqual(
      mergeRanges([
        [5, 8],
        [0, 2],
        [1, 3],
        [8, 9],
      ]),
      [
        [0, 3],
        [5, 9],
      ],
    );
  });

  it('focusSnippet centres a long text on the first match', () => {
    const long = `${'x '.repeat(400)}NEEDLE${' y'.repeat(400)}`;
    const s = focusSnippet(long, 'needle', 'keyword', 100);
    assert.ok(s.includes('NEEDLE'));
    assert.ok(s.startsWith('…') && s.endsWith('…'));
    assert.ok(s.length <= 102);
  });

  it('focusSnippet starts and ends on word boundaries (never mid-word)', () => {
    const words = 'participants examination household questionnaire prevalence estimates weighted sample design';
    const long = `${words} `.repeat(20) + 'obesity NEEDLE obesity ' + `${words} `.repeat(20);
    for (const max of [97, 100, 103, 111, 130]) {
      const s = focusSnippet(long, 'needle', 'keyword', max).replace(/^…|…$/g, '');
      const first = s.split(' ')[0]!;
      const last = s.split(' ').pop()!;
      assert.ok(words.split(' ').includes(first) || first === 'obesity', `starts mid-word: "${first}" (max ${max})`);
      assert.ok(words.split(' ').includes(last) || last === 'obesity', `ends mid-word: "${last}" (max ${max})`);
    }
  });
});
