import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CatalogVariable } from '../../../../src/core/docs/catalog.ts';
import {
  QuestionRetriever,
  cutOffs,
  inRange,
  namedIn,
  nameTokensOfFiles,
  splitClauses,
} from '../../../../src/core/docs/question.ts';
import { codebookTokens } from '../../../../src/core/docs/text.ts';
import type { DocIndex } from '../../../../src/core/docs/types.ts';

/** A documentation index over in-memory pages: bm25 stands in as "pages holding most query words first". */
function fakeIndex(pages: Record<string, string[]>): DocIndex {
  return {
    search(query: string, opts?: { top?: number }) {
      const q = new Set(codebookTokens(query));
      const hits: Array<{ file: string; unit: number; score: number }> = [];
      for (const [file, ps] of Object.entries(pages)) {
        ps.forEach((p, unit) => {
          const n = new Set(codebookTokens(p).filter((t) => q.has(t))).size;
          if (n) hits.push({ file, unit, score: n });
        });
      }
      return hits.sort((a, b) => b.score - a.score || (a.file < b.file ? -1 : 1)).slice(0, opts?.top ?? 10);
    },
    report() {
      return { files: Object.keys(pages).map((file) => ({ file })) };
    },
  } as unknown as DocIndex;
}

function v(name: string, label: string, doc: string, values: Array<[string, string]> = []): CatalogVariable {
  return {
    name,
    label,
    file: doc.replace(/^.*\//, '').replace(/\.\w+$/, ''),
    doc,
    page: '1',
    unitIndex: 0,
    universe: null,
    text: null,
    values: values.map(([code, l]) => ({ code, label: l })),
    documented: true,
  } as CatalogVariable;
}

const RANGE = (a: string): [string, string] => [a, 'Range of Values'];
const YESNO: Array<[string, string]> = [
  ['1', 'Yes'],
  ['2', 'No'],
];

// a survey without a design family: variables in five files, pages in those and in two documents
const VARS = [
  v('BPQ020', 'Ever told you had high blood pressure', 'S/docs/BPQ.pdf', YESNO),
  v('BPQ030', 'Told had high blood pressure - 2+ times', 'S/docs/BPQ.pdf', YESNO),
  v('BPXSY', 'Systolic blood pressure reading (mm Hg)', 'S/docs/BPX.pdf', [RANGE('60 to 230')]),
  v('LBXTC', 'Total cholesterol (mg/dL)', 'S/docs/TCHOL.pdf', [RANGE('62 to 438')]),
  v('LBXGH', 'Glycohemoglobin (%)', 'S/docs/GHB.pdf', [RANGE('3.2 to 17.1')]),
  v('DIQ010', 'Doctor told you have diabetes', 'S/docs/DIQ.pdf', YESNO),
  v('DIQ050', 'Taking insulin now', 'S/docs/DIQ.pdf', YESNO),
  v('DIQ070', 'Take diabetic pills to lower blood sugar', 'S/docs/DIQ.pdf', YESNO),
];
const PAGES: Record<string, string[]> = {
  'S/docs/BPQ.pdf': ['Blood pressure questionnaire: ever told high blood pressure'],
  'S/docs/BPX.pdf': ['Blood pressure examination: systolic readings'],
  'S/docs/TCHOL.pdf': ['Total cholesterol laboratory procedure'],
  'S/docs/GHB.pdf': ['Glycohemoglobin, also known as hemoglobin A1c or HbA1c, measured in whole blood'],
  'S/docs/DIQ.pdf': ['Diabetes questionnaire: diabetes, insulin, diabetic pills, blood sugar'],
  'S/docs/survey-design.pdf': [
    'Variance estimation: sample weights, strata and primary sampling units PSU; standard errors by Taylor series',
  ],
  'S/docs/Replicate_Weight_Instructions.pdf': [
    'How to use the replicate weights: 160 replicate weights for standard errors',
  ],
  'S/docs/poverty-guidelines-2024.pdf': ['Poverty guidelines for the 48 contiguous states'],
};

describe('question mode: concept-level retrieval (issue 49)', () => {
  it('splits a question into clauses at punctuation and joining words, keeping "or more" with its cut-off', () => {
    assert.deepEqual(
      splitClauses('adults 20 and older with non-HDL cholesterol 190 mg/dL or more, by sex (men, women)'),
      ['adults 20', 'older', 'non-HDL cholesterol 190 mg/dL or more', 'sex', 'men', 'women'],
    );
  });

  it('reads a cut-off only when the clause compares, and matches it against a documented range of values', () => {
    assert.deepEqual(cutOffs('HbA1c >= 6.5%'), [6.5]);
    assert.deepEqual(cutOffs('non-HDL cholesterol of 190 mg/dL or more'), [190]);
    assert.deepEqual(cutOffs('adults 20 years old'), []);
    assert.equal(inRange(VARS[4]!, [6.5]), true);
    assert.equal(inRange(VARS[4]!, [40]), false);
    assert.equal(inRange(VARS[0]!, [1]), false, 'a yes/no code is not a range');
  });

  it('a cut-off sends "high blood pressure" to the measured reading, not the yes/no questionnaire item', () => {
    const qr = new QuestionRetriever(fakeIndex(PAGES), VARS);
    const concept = (q: string) => qr.ask(q).files.find((f) => f.from.some((x) => x.startsWith('concepts #1')))?.file;
    assert.equal(concept('adults with high blood pressure'), 'S/docs/BPQ.pdf');
    assert.equal(concept('adults with high blood pressure of 130 or more'), 'S/docs/BPX.pdf');
  });

  it('finds every measure of a long definitional question, one clause each, including one named only in the pages', () => {
    const qr = new QuestionRetriever(fakeIndex(PAGES), VARS);
    const r = qr.ask(
      'Percentage of adults with two or more risk factors: high blood pressure 130 mm Hg or higher, total cholesterol 240 mg/dL or more, HbA1c >= 6.5%',
    );
    const conceptFiles = r.files
      .filter((f) => f.from.some((x) => x.startsWith('concepts')))
      .map((f) => f.file)
      .sort();
    assert.deepEqual(conceptFiles, ['S/docs/BPX.pdf', 'S/docs/GHB.pdf', 'S/docs/TCHOL.pdf']);
    assert.ok(
      r.variables.some((x) => x.name === 'LBXGH' && x.why === 'concept'),
      'the glycohemoglobin variable is proposed for "HbA1c"',
    );
  });

  it('proposes the design documentation found by its own words, and the document about the design words the question uses', () => {
    const qr = new QuestionRetriever(fakeIndex(PAGES), VARS);
    const plain = qr.ask('total cholesterol among adults');
    assert.ok(plain.files.find((f) => f.file === 'S/docs/survey-design.pdf')?.from.includes('design'));
    const rep = qr.ask('total cholesterol among adults, with standard errors from the replicate weights');
    assert.ok(
      rep.files.find((f) => f.file === 'S/docs/Replicate_Weight_Instructions.pdf')?.from.includes('design-terms'),
    );
  });

  it('a document the question names by its title or file name is proposed', () => {
    const named = nameTokensOfFiles(Object.keys(PAGES));
    assert.deepEqual(namedIn(codebookTokens('income relative to the 2024 poverty guidelines'), named), [
      'S/docs/poverty-guidelines-2024.pdf',
    ]);
    assert.deepEqual(
      namedIn(codebookTokens('income relative to poverty'), named),
      [],
      'one short word of a name is not a mention',
    );
    const qr = new QuestionRetriever(fakeIndex(PAGES), VARS);
    assert.ok(
      qr
        .ask('diabetes by family income, following poverty-guidelines-2024.pdf')
        .files.find((f) => f.file === 'S/docs/poverty-guidelines-2024.pdf')
        ?.from.includes('named'),
    );
  });
});
