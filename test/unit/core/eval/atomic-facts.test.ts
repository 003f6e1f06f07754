import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkability,
  factTerms,
  relevantSteps,
  splitAtomicFacts,
  termsMentioned,
} from '../../../../src/core/eval/atomic-facts.ts';

describe('eval/atomic-facts: splitting a compound insight (issue 42 defect 4)', () => {
  it('splits an inline numbered enumeration into one fact per item', () => {
    const f = splitAtomicFacts('1. multiple admissions 2. hypertension 3. female, aged 61');
    assert.deepEqual(
      f.map((x) => x.text),
      ['multiple admissions', 'hypertension', 'female, aged 61'],
    );
    assert.deepEqual(
      f.map((x) => x.index),
      [0, 1, 2],
    );
  });
  it('keeps the lead in front of each fact so it reads as a statement', () => {
    const f = splitAtomicFacts('The patient has: 1) multiple admissions; 2) hypertension; and 3) female, aged 61.');
    assert.deepEqual(
      f.map((x) => x.statement),
      ['The patient has: multiple admissions', 'The patient has: hypertension', 'The patient has: female, aged 61.'],
    );
  });
  it('splits numbered lines and bulleted lines', () => {
    assert.equal(splitAtomicFacts('Findings:\n1. A1c rose to 7.2\n2. BMI 31').length, 2);
    const b = splitAtomicFacts('Key facts\n- takes metformin\n- LDL 160 mg/dL\n  (fasting)');
    assert.deepEqual(
      b.map((x) => x.text),
      ['takes metformin', 'LDL 160 mg/dL (fasting)'],
    );
    assert.equal(b[0]!.statement, 'Key facts: takes metformin');
  });
  it('does not split on decimals, a lone number or an out-of-order marker', () => {
    for (const t of [
      'Mean BMI rose from 27.5 to 29.1 between 2. and 3. visits',
      'She had 3. admissions',
      'Glucose was 5.6 mmol/L. 2. readings were high.',
    ]) {
      assert.equal(splitAtomicFacts(t).length, 1, t);
    }
    assert.deepEqual(splitAtomicFacts('   '), []);
  });
});

describe('eval/atomic-facts: the checkability rule', () => {
  const cases: Array<[string, boolean, string | null]> = [
    ['Diagnoses.', false, null],
    ['Key findings:', false, null],
    ['Lab results', false, null],
    ['The patient information.', false, null],
    ['female, aged 61', true, 'value'],
    ['multiple admissions', true, 'value'],
    ['BMI of 31.2 kg/m²', true, 'value'],
    ['hypertension', true, 'entity'],
    ['"WTMEC2YR" is the exam weight', true, 'value'],
    ['uses the admission_type column', true, 'entity'],
    ['women have higher cholesterol than men', true, 'relation'],
    ['glucose rose after discharge', true, 'relation'],
  ];
  for (const [text, ok, kind] of cases) {
    it(`${ok ? 'checkable' : 'filler'}: ${JSON.stringify(text)}`, () => {
      const c = checkability(text);
      assert.equal(c.checkable, ok, c.reason);
      assert.equal(c.kind, kind);
      assert.ok(c.reason.length > 0);
    });
  }
});

describe('eval/atomic-facts: relevant steps', () => {
  const steps = [
    { index: 0, text: 'execute_sql(SELECT gender, anchor_age FROM patients) → F | 61' },
    { index: 1, text: 'execute_sql(SELECT count(*) FROM admissions) → 4' },
    { index: 2, text: 'execute_sql(SELECT * FROM diagnoses_icd) → I10 hypertension' },
    { index: 3, text: 'execute_sql(SELECT * FROM labevents LIMIT 5) → 50912 1.1' },
    { index: 4, text: 'execute_sql(SELECT age FROM x) → 61' },
  ];
  it('finds every earlier step mentioning a value or entity of the fact, and the step the insight follows', () => {
    assert.deepEqual(
      relevantSteps('female, aged 61', steps, 3).steps.map((s) => s.index),
      [0, 3],
    );
    assert.deepEqual(
      relevantSteps('multiple admissions', steps, 3).steps.map((s) => s.index),
      [1, 3],
    );
    assert.deepEqual(
      relevantSteps('hypertension', steps, 3).steps.map((s) => s.index),
      [2, 3],
    );
  });
  it('never shows a step after the insight, and names what no step mentions', () => {
    const r = relevantSteps('aged 61 with diabetes', steps, 2);
    assert.deepEqual(
      r.steps.map((s) => s.index),
      [0, 2],
    );
    assert.ok(r.unseen.includes('diabete') || r.unseen.includes('diabetes'), r.unseen.join(','));
  });
  it('matches whole numbers and word starts only', () => {
    assert.deepEqual(termsMentioned(['61', '6', 'admission'], 'values 616 and 6.1; admissions'), ['admission']);
    assert.deepEqual(factTerms('1,250 patients, 12% with hypertension'), ['1250', '12', 'patient', 'hypertension']);
  });
});
