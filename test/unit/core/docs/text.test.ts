import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  SYNONYM_WEIGHT,
  codebookQueryTerms,
  codebookTokens,
  longtaTokens,
  splitChunks,
  stem,
} from '../../../../src/core/docs/text.ts';
import { RANK_BM25_DEFAULTS, okapiIdf, okapiScores, rawIdf } from '../../../../src/core/docs/bm25.ts';
import { findAllCaseInsensitive, longtaSnippet, parseRange } from '../../../../src/core/docs/format.ts';

const chunks = (text: string, size: number, overlap: number) =>
  splitChunks(text, size, overlap).map((s) => text.slice(s.start, s.end));

describe('docs/text: tokenizers', () => {
  it('codebook tokens keep NHANES variable names whole and are case-insensitive', () => {
    assert.deepEqual(codebookTokens('Weight WTMEC2YR, RIDAGEYR; BMXBMI.'), [
      'weight',
      'wtmec2yr',
      'ridageyr',
      'bmxbmi',
    ]);
    assert.deepEqual(codebookTokens('wtmec2yr'), codebookTokens('WTMEC2YR'));
    assert.deepEqual(codebookTokens('A_AGE and the 40.3 percent of 2021-2023'), [
      'a_age',
      '40.3',
      'percent',
      '2021',
      '2023',
    ]);
  });
  it('codebook tokens drop stop words and strip plurals', () => {
    assert.deepEqual(codebookTokens('What are the measures of the bodies'), ['measure', 'body']);
    assert.deepEqual(codebookTokens('Vitamin A, RAE'), ['vitamin', 'a', 'rae'], 'single letters are kept (Vitamin A)');
    assert.equal(stem('glasses'), 'glasse');
    assert.equal(stem('status'), 'status');
    assert.equal(stem('adults'), 'adult');
    assert.equal(stem('BMXBMI'), 'BMXBMI');
  });
  it('default-mode queries drop question words, dedupe terms and add survey synonyms at lower weight', () => {
    assert.deepEqual(codebookQueryTerms('What were the hypertension prevalences for men and women?'), [
      { term: 'hypertension', weight: 1 },
      { term: 'men', weight: 1 },
      { term: 'women', weight: 1 },
      { term: 'high', weight: SYNONYM_WEIGHT },
      { term: 'blood', weight: SYNONYM_WEIGHT },
      { term: 'pressure', weight: SYNONYM_WEIGHT },
      { term: 'gender', weight: SYNONYM_WEIGHT },
      { term: 'male', weight: SYNONYM_WEIGHT },
      { term: 'female', weight: SYNONYM_WEIGHT },
    ]);
    assert.deepEqual(codebookQueryTerms('BMXBMI bmxbmi'), [{ term: 'bmxbmi', weight: 1 }]);
    assert.deepEqual(
      codebookQueryTerms('percentage'),
      [{ term: 'percentage', weight: 1 }],
      'a query of only question words is kept',
    );
  });
  it('longta tokens are Python str.split(): whitespace only, case kept', () => {
    assert.deepEqual(longtaTokens('  Body Mass\tIndex (kg/m**2)\n'), ['Body', 'Mass', 'Index', '(kg/m**2)']);
    assert.deepEqual(longtaTokens(''), []);
  });
});

describe('docs/text: RecursiveCharacterTextSplitter port', () => {
  it('returns short text as one chunk, stripped', () => {
    assert.deepEqual(chunks('  hello world  ', 500, 100), ['hello world']);
    assert.deepEqual(chunks('   ', 500, 100), []);
  });
  it('merges words up to the size with overlap like LangChain (keep_separator=start)', () => {
    // LangChain: RecursiveCharacterTextSplitter(chunk_size=10, chunk_overlap=4).split_text("aaa bbb ccc ddd eee")
    // → ['aaa bbb', 'bbb ccc', 'ccc ddd', 'ddd eee']
    assert.deepEqual(chunks('aaa bbb ccc ddd eee', 10, 4), ['aaa bbb', 'bbb ccc', 'ccc ddd', 'ddd eee']);
    // chunk_size=11, overlap=0 → 'aaa bbb ccc' is exactly 11 chars: fits
    assert.deepEqual(chunks('aaa bbb ccc ddd eee', 11, 0), ['aaa bbb ccc', 'ddd eee']);
  });
  it('splits a word longer than the chunk into characters', () => {
    assert.deepEqual(chunks('abcdefghij', 4, 1), ['abcd', 'defg', 'ghij']);
  });
  it('offsets point into the unit text and every character is covered', () => {
    const text = Array.from({ length: 400 }, (_, i) => `w${i}`).join(' ');
    const spans = splitChunks(text, 500, 100);
    assert.ok(spans.length > 3);
    for (const s of spans) assert.ok(s.end - s.start <= 500);
    assert.equal(spans[0]!.start, 0);
    assert.equal(spans.at(-1)!.end, text.length);
    for (let i = 1; i < spans.length; i++) {
      assert.ok(spans[i]!.start < spans[i - 1]!.end, 'chunks overlap');
      assert.ok(spans[i - 1]!.end - spans[i]!.start <= 100, 'overlap at most 100');
    }
  });
});

describe('docs/bm25: rank_bm25 BM25Okapi', () => {
  it('matches hand-computed rank_bm25 scores', () => {
    const docs = [['a', 'b'], ['a', 'c', 'c'], ['d']];
    // N = 3, avgdl = 2; idf(c) = ln(3-1+.5) - ln(1+.5) = ln(2.5/1.5)
    const s = okapiScores(docs, ['c']);
    const idf = Math.log(2.5 / 1.5);
    const { k1, b } = RANK_BM25_DEFAULTS;
    const expect = (idf * (2 * (k1 + 1))) / (2 + k1 * (1 - b + (b * 3) / 2));
    assert.ok(Math.abs(s[1]! - expect) < 1e-12);
    assert.equal(s[0], 0);
  });
  it('replaces negative idf by epsilon × mean idf (rank_bm25 quirk)', () => {
    // 'a' is in 2 of 3 docs: raw idf ln(1.5) - ln(2.5) < 0
    assert.ok(rawIdf(3, 2) < 0);
    const avg = (rawIdf(3, 2) + rawIdf(3, 1) * 3) / 4; // vocabulary a, b, c, d
    assert.ok(Math.abs(okapiIdf(3, 2, avg) - 0.25 * avg) < 1e-12);
    const s = okapiScores([['a', 'b'], ['a', 'c', 'c'], ['d']], ['a', 'a']);
    const { k1, b } = RANK_BM25_DEFAULTS;
    const one = (0.25 * avg * (k1 + 1)) / (1 + k1 * (1 - b + (b * 2) / 2));
    assert.ok(Math.abs(s[0]! - 2 * one) < 1e-12, 'repeated query tokens count twice');
  });
});

describe('docs/format', () => {
  it('parses one-based ranges', () => {
    assert.deepEqual(parseRange('1-3,5'), [1, 2, 3, 5]);
    assert.deepEqual(parseRange(' 2 , 2-3 '), [2, 3]);
    assert.equal(parseRange('a-b'), undefined);
    assert.equal(parseRange('5-3'), undefined);
    assert.equal(parseRange(''), undefined);
  });
  it('LongTA snippet: ±200 around a literal match, else the first 200 chars', () => {
    const chunk = 'x'.repeat(300) + 'Body Mass Index' + 'y'.repeat(300);
    assert.equal(longtaSnippet(chunk, 'Body Mass Index'), 'x'.repeat(200) + 'Body Mass Index' + 'y'.repeat(200));
    assert.equal(longtaSnippet(chunk, 'body mass index'), 'x'.repeat(200));
  });
  it('finds case-insensitive literal occurrences', () => {
    assert.deepEqual(findAllCaseInsensitive('BMXBMI and bmxbmi', 'BmxBmi'), [
      [0, 6],
      [11, 17],
    ]);
    assert.deepEqual(findAllCaseInsensitive('a.b a-b', 'a.b'), [[0, 3]]);
  });
});
