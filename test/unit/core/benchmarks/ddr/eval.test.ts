import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { touchedFields } from '../../../../../src/core/benchmarks/ddr/sql-tool.ts';
import {
  bradleyTerry,
  ddrExploration,
  ddrExplorationFromSql,
  ddrOptions,
  ddrOverallAverage,
  novelInsights,
  scoreDdrChecklists,
  scoreDdrHallucination,
  scoreDdrNovelty,
  trendCategory,
  validInsights,
  type DdrEntityRun,
} from '../../../../../src/core/benchmarks/ddr/eval.ts';
import {
  CallbackJudge,
  HumanJudge,
  MemoryJudgementStore,
  type JudgeInput,
} from '../../../../../src/core/eval/judges/index.ts';
import { sharedData } from '../../../../helpers/shared.ts';

type Qa = {
  results: Array<{ entity_id: string; qa_pairs: Array<{ question: string; answer: string; source_text: string }> }>;
};
const mimic = JSON.parse(readFileSync(sharedData('ddr', 'mimic', 'qa.json'), 'utf8')) as Qa;
const checklistOf = (i: number) =>
  mimic.results[i]!.qa_pairs.map((q) => ({ question: q.question, answer: q.answer, sourceText: q.source_text }));

/** Scripted checker: "not <answer>" contradicts, containing the answer supports, else insufficient. */
function scriptedSupport(input: JudgeInput<'checklist-support'>) {
  const ans = input.answer.toLowerCase();
  const texts = input.insights ?? [input.report ?? ''];
  const contra = texts.findIndex((t) => t.toLowerCase().includes(`not ${ans}`));
  if (contra >= 0) {
    return {
      label: 'INCORRECT_INFO' as const,
      supporting: [],
      contradicting: input.insights ? [contra] : [],
      evidence: '',
      reasoning: '',
    };
  }
  const sup = texts.findIndex((t) => t.toLowerCase().includes(ans));
  if (sup >= 0) {
    return {
      label: 'CORRECT_INFO' as const,
      supporting: input.insights ? [sup] : [],
      contradicting: [],
      evidence: '',
      reasoning: '',
    };
  }
  return { label: 'INSUFFICIENT_INFO' as const, supporting: [], contradicting: [], evidence: '', reasoning: '' };
}
const seen: Array<JudgeInput<'checklist-support'>> = [];
const scripted = () =>
  new CallbackJudge('scripted', ((task: string, input: JudgeInput<'checklist-support'>) => {
    seen.push(input);
    return task === 'checklist-support' ? scriptedSupport(input) : undefined;
  }) as never);

const runs: DdrEntityRun[] = [
  {
    entityId: mimic.results[0]!.entity_id,
    checklist: checklistOf(0),
    insights: [
      'Admitted under the MEDICINE service.',
      'NO INSIGHT',
      '  ',
      'Sex recorded: not Female.',
      'Allergies: Penicillins; Codeine; Vicodin; Morphine',
    ],
    report: 'FINISH: Female patient on the MEDICINE service, complaining of abdominal pain.',
  },
  { entityId: mimic.results[1]!.entity_id, checklist: checklistOf(1), insights: [], report: null },
  {
    entityId: mimic.results[2]!.entity_id,
    checklist: checklistOf(2),
    insights: ['NO INSIGHT: nothing found', 'Chief complaint: Abdominal pain', 'female'],
    report: '',
  },
];

describe('eval/ddr checklist accuracy on real MIMIC checklists', () => {
  it('checklists have the documented sizes', () => {
    assert.equal(mimic.results.length, 100);
    assert.equal(
      mimic.results.reduce((s, e) => s + e.qa_pairs.length, 0),
      774,
    );
    assert.deepEqual(
      [0, 1, 2].map((i) => checklistOf(i).length),
      [10, 10, 9],
    );
  });

  it('entities without insights score 0 (paper) — sample- and item-averaged by hand', async () => {
    const s = await scoreDdrChecklists(runs, scripted(), { scenario: 'mimic' });
    // message-wise: e1 2/10 (MEDICINE, allergies; sex contradicted), e2 0/10 (no insights), e3 2/9 (abdominal pain; "female" by exact text)
    assert.equal(s.messageWise.sampleAveraged, (2 / 10 + 0 + 2 / 9) / 3);
    assert.equal(s.messageWise.itemAveraged, 4 / 29);
    // trajectory-wise: e1 3/10 (Female, MEDICINE, Abdominal pain), e2 and e3 have no report → 0
    assert.equal(s.trajectoryWise.sampleAveraged, 0.3 / 3);
    assert.equal(s.trajectoryWise.itemAveraged, 3 / 29);
    assert.equal(s.perEntity[0]!.validInsights, 3);
    assert.equal(s.judgements.exact, 1);
    assert.equal(s.judgements.done, 29);
    const k5 = s.topK[0]!;
    assert.equal(k5.k, 5);
    assert.equal(k5.correct, 4 / 29);
    assert.equal(k5.incorrect, 1 / 29);
    assert.equal(ddrOverallAverage([s]), ((2 / 10 + 2 / 9) / 3 + 4 / 29 + 0.1 + 3 / 29) / 4);
  });

  it('drop mode reproduces the shipped code (entities without context leave the averages)', async () => {
    const s = await scoreDdrChecklists(runs, scripted(), { scenario: 'mimic', empty_insights: 'drop' });
    assert.equal(s.messageWise.sampleAveraged, (2 / 10 + 2 / 9) / 2);
    assert.equal(s.messageWise.itemAveraged, 4 / 19);
    assert.equal(s.trajectoryWise.sampleAveraged, 0.3);
    assert.equal(s.trajectoryWise.itemAveraged, 3 / 10);
    assert.equal(s.options.empty_insights, 'drop');
  });

  it('uses the lenient wording for 10-K only (code behaviour) unless told otherwise', async () => {
    seen.length = 0;
    await scoreDdrChecklists([runs[0]!], scripted(), { scenario: '10k' });
    assert.ok(seen.length > 0 && seen.every((x) => x.lenient === true));
    seen.length = 0;
    await scoreDdrChecklists([runs[0]!], scripted(), { scenario: 'mimic' });
    assert.ok(seen.every((x) => x.lenient === false));
    assert.throws(() => ddrOptions({ empty_insights: 'skip' }), /option empty_insights/);
  });

  it('human judge: items stay pending and are excluded from denominators, counted', async () => {
    const s = await scoreDdrChecklists([runs[2]!], new HumanJudge(new MemoryJudgementStore()), { scenario: 'mimic' });
    assert.equal(s.messageWise.pending, 8, 'one of 9 was decided by identical text');
    assert.equal(s.messageWise.itemAveraged, 1);
    assert.equal(s.judgements.pending, 8);
  });

  it('NO INSIGHT filter: substring (code) vs exact', () => {
    const raw = ['NO INSIGHT', 'There is NO INSIGHT to be had, but the MEDICINE service', 'x'];
    assert.deepEqual(validInsights(raw, 'substring'), ['x']);
    assert.deepEqual(validInsights(raw, 'exact'), [raw[1], 'x']);
  });
});

describe('eval/ddr exploration', () => {
  it('coverage and normalised entropy from fields touched by SQL (node-sql-parser)', () => {
    const schema = new Map([
      ['hosp_patients', ['subject_id', 'gender', 'anchor_age']],
      ['hosp_admissions', ['subject_id', 'hadm_id', 'admission_type']],
    ]);
    const sqls = [
      'SELECT gender, anchor_age FROM hosp_patients WHERE subject_id = 1',
      'SELECT a.admission_type FROM hosp_admissions a WHERE a.subject_id = 1',
      'SELECT gender FROM hosp_patients',
    ];
    const touched = sqls.map((q) => touchedFields(q, schema).columns);
    const e = ddrExploration(touched, 6);
    // fields: patients.gender ×2, anchor_age ×1, subject_id ×1; admissions.admission_type ×1, subject_id ×1 → n = 5, N = 6
    assert.equal(e.fieldsAccessed, 5);
    assert.equal(e.coverage, 5 / 6);
    const h = -(2 / 6) * Math.log2(2 / 6) - 4 * (1 / 6) * Math.log2(1 / 6);
    assert.ok(Math.abs(e.entropy - h) < 1e-12);
    assert.ok(Math.abs(e.normalizedEntropy! - h / Math.log2(5)) < 1e-12);
    assert.deepEqual(e.counts[0], ['hosp_patients.gender', 2]);
  });
  it('straight from SQL, CTEs and aliases resolved; total defaults to the schema size', () => {
    const schema = new Map([
      ['hosp_patients', ['subject_id', 'gender', 'anchor_age']],
      ['hosp_admissions', ['subject_id', 'hadm_id', 'admission_type']],
    ]);
    const e = ddrExplorationFromSql(
      [
        'WITH a AS (SELECT subject_id, admission_type FROM hosp_admissions) SELECT p.gender, a.admission_type FROM hosp_patients p JOIN a ON a.subject_id = p.subject_id',
        'SELECT * FROM hosp_patients',
      ],
      schema,
    );
    assert.equal(e.totalFields, 6);
    assert.ok(e.counts.some(([f]) => f === 'hosp_admissions.admission_type'));
    assert.ok(
      e.counts.some(([f]) => f === 'hosp_patients.anchor_age'),
      '* expands to every column',
    );
    assert.equal(e.fieldsAccessed, e.counts.length);
    assert.equal(e.coverage, e.fieldsAccessed / 6);
  });
  it('uniform access has normalised entropy 1; a single field has none', () => {
    assert.equal(ddrExploration([['a'], ['b'], ['c'], ['d']], 10).normalizedEntropy, 1);
    assert.equal(ddrExploration([['a'], ['a']], 10).normalizedEntropy, null);
  });
});

describe('eval/ddr novelty and hallucination', () => {
  it('Bradley–Terry MM: closed form for two players, ties as half wins', () => {
    const two = bradleyTerry([
      { a: 'A', b: 'B', winner: 'a' },
      { a: 'A', b: 'B', winner: 'a' },
      { a: 'B', b: 'A', winner: 'b' },
      { a: 'A', b: 'B', winner: 'b' },
    ]);
    assert.ok(Math.abs(two.strengths.A! - 0.75) < 1e-9);
    const tie = bradleyTerry([
      { a: 'A', b: 'B', winner: 'a' },
      { a: 'A', b: 'B', winner: 'tie' },
    ]);
    assert.ok(Math.abs(tie.strengths.A! - 0.75) < 1e-9);
    assert.equal(bradleyTerry([{ a: 'A', b: 'B', winner: 'tie' }], { ties: 'ignore' }).strengths.A, 0.5);
  });
  it('Bradley–Terry MM matches the maximum-likelihood fit of a 4-player example', () => {
    // wins[i][j] = times i beat j; reference MLE computed independently with scipy BFGS on the log-likelihood:
    // [0.49223488, 0.20935964, 0.20935965, 0.08904583]
    const P = ['A', 'B', 'C', 'D'];
    const W = [
      [0, 3, 2, 4],
      [1, 0, 3, 2],
      [2, 1, 0, 3],
      [0, 2, 1, 0],
    ];
    const outcomes = [];
    for (let i = 0; i < 4; i++) {
      for (let j = 0; j < 4; j++) {
        for (let k = 0; k < W[i]![j]!; k++) outcomes.push({ a: P[i]!, b: P[j]!, winner: 'a' as const });
      }
    }
    const fit = bradleyTerry(outcomes);
    assert.ok(fit.converged);
    const ref = [0.49223488, 0.20935964, 0.20935965, 0.08904583];
    P.forEach((p, i) => assert.ok(Math.abs(fit.strengths[p]! - ref[i]!) < 1e-7, `${p}: ${fit.strengths[p]}`));
    assert.equal(fit.ranking[0], 'A');
    assert.equal(fit.ranking[3], 'D');
  });
  it('novelty compares novel insights pairwise with seeded swaps and maps winners back', async () => {
    assert.deepEqual(novelInsights(['a', 'b', 'c'], [1]), ['a', 'c']);
    // judge: the side with more novel insights wins
    const judge = new CallbackJudge('scripted-novelty', ((_t: string, i: JudgeInput<'pairwise-novelty'>) => ({
      winner: i.insightsA.length > i.insightsB.length ? 'A' : i.insightsA.length < i.insightsB.length ? 'B' : 'TIE',
      reason: '',
    })) as never);
    const inputs = ['e1', 'e2'].flatMap((e) => [
      { model: 'big', entityId: e, insights: ['x1', 'x2', 'x3', 'x4'], usedIndices: [0] },
      { model: 'mid', entityId: e, insights: ['y1', 'y2', 'y3'], usedIndices: [0] },
      { model: 'small', entityId: e, insights: ['z1', 'z2'], usedIndices: [0, 1] },
    ]);
    const s = await scoreDdrNovelty(inputs, judge, { seed: 7, scenario: 'mimic' });
    assert.equal(s.comparisons.length, 6);
    assert.ok(s.comparisons.some((c) => c.swapped) && s.comparisons.some((c) => !c.swapped), 'both orders occur');
    assert.deepEqual(s.fit.ranking, ['big', 'mid', 'small']);
    for (const c of s.comparisons) assert.equal(c.winner, 'a', `${c.a} vs ${c.b}`);
  });
  it('hallucination rate from judge labels', async () => {
    const judge = new CallbackJudge('scripted-h', ((_t: string, i: JudgeInput<'hallucination'>) => ({
      hallucinated: /guideline/.test(i.insight),
      reason: '',
    })) as never);
    const r = await scoreDdrHallucination(
      [
        { insight: 'Creatinine rose to 2.1', evidence: 'labevents: creatinine 2.1' },
        { insight: 'Per AHA guideline this is stage 2', evidence: 'bp 150/95' },
        { insight: 'bp 150/95 recorded twice', evidence: 'bp 150/95' },
      ],
      judge,
    );
    assert.equal(r.rate, 1 / 3);
  });
});

describe('eval/ddr GLOBEM and failed judgements', () => {
  const globem = JSON.parse(readFileSync(sharedData('ddr', 'globem', 'qa.json'), 'utf8')) as Qa;
  it('GLOBEM: the judge answers the trend and the category is compared exactly (paper: exact match)', async () => {
    const e = globem.results[0]!;
    const checklist = e.qa_pairs.map((q) => ({ question: q.question, answer: q.answer }));
    assert.deepEqual(
      checklist.map((c) => trendCategory(c.answer)).filter((x) => x === null),
      [],
      'every GLOBEM answer has a category',
    );
    const improved = checklist.filter((c) => c.answer === 'It improved.').length;
    const judge = new CallbackJudge('scripted-trend', ((task: string, i: JudgeInput<'trend-answer'>) => {
      assert.equal(task, 'trend-answer');
      return i.insights
        ? { answer: 'improved', used: [0], reasoning: '' }
        : { answer: 'no_idea', used: [], reasoning: '' };
    }) as never);
    const s = await scoreDdrChecklists(
      [{ entityId: e.entity_id, checklist, insights: ['Support scores went up.'], report: 'FINISH: not sure.' }],
      judge,
      { scenario: 'globem' },
    );
    assert.equal(s.messageWise.itemAveraged, improved / checklist.length);
    assert.equal(s.trajectoryWise.itemAveraged, 0);
    const wrong = s.perEntity[0]!.messageWise.items.filter((x) => x.label === 'INCORRECT_INFO');
    assert.equal(wrong.length, checklist.length - improved);
    assert.ok(wrong.every((x) => x.contradicting[0] === 0));
  });
  it('failed judge calls: excluded (default) or counted as not correct (code)', async () => {
    let n = 0;
    const flaky = () =>
      new CallbackJudge('flaky', ((_t: string, i: JudgeInput<'checklist-support'>) =>
        n++ % 2 === 0 ? scriptedSupport(i) : undefined) as never);
    const run = {
      entityId: 'x',
      checklist: checklistOf(0).slice(0, 4),
      insights: ['MEDICINE service', 'Sex: Female', 'Allergies: Penicillins; Codeine; Vicodin; Morphine'],
      report: null,
    };
    n = 0;
    const ex = await scoreDdrChecklists([run], flaky(), { scenario: 'mimic', empty_insights: 'drop' });
    n = 0;
    const ct = await scoreDdrChecklists([run], flaky(), {
      scenario: 'mimic',
      empty_insights: 'drop',
      failed_judgements: 'count',
    });
    assert.equal(ex.messageWise.errors, 2);
    assert.equal(ex.messageWise.items, 2);
    assert.equal(ct.messageWise.items, 4);
    assert.equal(ct.messageWise.itemAveraged, ex.messageWise.correct / 4);
  });
});
