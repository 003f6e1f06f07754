import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { annotationStoreOf, type Annotation, type AnnotationStore } from '../../../../../src/core/annotations/index.ts';
import {
  BLADE_REVIEW_TASK,
  consensusOf,
  decisionAgreement,
  decisionVerdict,
  ensureExpertDecisionItems,
  ensureRunDecisionItems,
  prefillForm,
  reviewQueueSpec,
  sampleDecisionItems,
  withReviewRows,
  type DecisionInput,
  type DecisionVerdict,
} from '../../../../../src/core/benchmarks/blade/decision-review.ts';
import { parseGtCsv } from '../../../../../src/core/benchmarks/blade/gt-versions.ts';
import { startBladePython, type BladePython } from '../../../../../src/core/benchmarks/blade/eval/python.ts';
import { openStore } from '../../../../../src/core/store/run-store.ts';
import type { RunStore } from '../../../../../src/core/store/types.ts';
import type { RunRecord } from '../../../../../src/core/store/records.ts';
import { LoupeInputError } from '../../../../../src/core/util/errors.ts';
import { sharedData } from '../../../../helpers/shared.ts';

const DS = sharedData('blade', 'datasets', 'hurricane');
const dataPath = join(DS, 'data.csv');
const shippedCsv = readFileSync(join(DS, 'annotations.csv'), 'utf8');
const gt = parseGtCsv(shippedCsv, 'hurricane').annotations;
const COLS = [
  'ind',
  'year',
  'name',
  'masfem',
  'min',
  'gender_mf',
  'category',
  'alldeaths',
  'ndam',
  'elapsedyrs',
  'source',
  'masfem_mturk',
  'wind',
  'ndam15',
];
const ANALYSIS = {
  cvars: {
    ivs: [{ description: 'femininity of the name', columns: ['masfem'] }],
    dv: { description: 'deaths', columns: ['log_deaths'] },
    controls: [
      {
        description: 'name gender moderates femininity',
        is_moderator: true,
        moderator_on: 'femininity of the name',
        columns: ['gender_mf'],
      },
    ],
  },
  transform_code:
    "def transform(df):\n    df = df[df['alldeaths'] < 1800]\n    df['log_deaths'] = np.log1p(df['alldeaths'])\n    df['deaths_per_wind'] = df['alldeaths'] / df['wind']\n    return df\n",
  m_code: "def model(df):\n    return smf.ols('log_deaths ~ masfem + min', data=df).fit()\n",
};

let dir = '';
let st: RunStore;
let ann: AnnotationStore;
let py: BladePython;
const run = (id: string) => ({ id, suite: 'blade', blockId: 'hurricane', dataChecksums: {} }) as unknown as RunRecord;
const extra = { getExtraState: async () => ({ blade: { submissions: [], final: ANALYSIS } }) } as unknown as RunStore;
const ds = async () => ({
  dataset: 'hurricane',
  dataPath,
  researchQuestion: 'Do feminine hurricanes kill more?',
  dataColumns: COLS,
});
const verdict = (type: DecisionVerdict['decisionType'], a: string) => {
  const fields = {
    cvar: ['is_reasonable', 'can_derive_from_data'],
    transform: ['is_suited_to_cv', 'is_steps_reasonable', 'annotator_is_rationale_reasonable'],
    model: ['is_reasonable'],
  }[type];
  return decisionVerdict(type, Object.fromEntries(fields.map((f) => [f, a])), `${a} from test`);
};

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-bladereview-'));
  st = openStore(join(dir, 'runs.sqlite'));
  ann = annotationStoreOf(st);
  py = await startBladePython({ backend: 'kernel', readOnlyPaths: [DS], cwd: DS });
});
after(async () => {
  await py?.close();
  await st?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('BLADE decision review', () => {
  it('a run yields its cvars, its transform split into units in the sandbox, and its model; the agent and model are not in the input', async () => {
    const { items, skipped } = await ensureRunDecisionItems(ann, [run('r1')], extra, ds, (p, code) =>
      py.split(p, code),
    );
    assert.deepEqual(skipped, []);
    const types = items.map((i) => (i.input as DecisionInput).decision.type);
    assert.deepEqual(types, ['cvar', 'cvar', 'cvar', 'transform', 'transform', 'transform', 'model']);
    const t = items.filter((i) => i.criterion === 'transform').map((i) => (i.input as DecisionInput).decision);
    assert.deepEqual(
      t.map((d) => (d.type === 'transform' ? d.verb : '')),
      ['filter', 'derive', 'derive'],
    );
    const m = (items.at(-1)!.input as DecisionInput).decision;
    assert.equal(m.type === 'model' && m.specification, 'Linear Regression');
    for (const i of items) {
      assert.doesNotMatch(
        JSON.stringify(i.input),
        /"(agent|model|runId)"\s*:/,
        'agent / model / run hidden from the input',
      );
    }
    assert.equal(items[0]!.task, BLADE_REVIEW_TASK);
    const again = await ensureRunDecisionItems(ann, [run('r1')], extra, ds, (p, code) => py.split(p, code));
    assert.deepEqual(
      again.items.map((i) => i.id),
      items.map((i) => i.id),
      'idempotent',
    );
  });

  it('sampling is seeded: N per dataset and source, the same for the same seed, another for another seed', async () => {
    await ensureRunDecisionItems(ann, [run('r2')], extra, ds, (p, code) => py.split(p, code));
    const all = await ann.listItems({ task: BLADE_REVIEW_TASK });
    const a = sampleDecisionItems(all, 5, 7);
    assert.equal(a.length, 5);
    assert.deepEqual(sampleDecisionItems([...all].reverse(), 5, 7), a, 'order of the items does not matter');
    assert.notDeepEqual(sampleDecisionItems(all, 5, 8), a);
    assert.throws(() => sampleDecisionItems(all, 0, 1), LoupeInputError);
    const q = await ann.openQueue(reviewQueueSpec({ runIds: ['r1', 'r2'], perDataset: 5, seed: 7 }), { reviewers: 2 });
    assert.equal((await ann.progress(q.id)).total, 5);
    // two annotators each get every item once
    for (const who of ['expert-a', 'expert-b']) {
      for (let k = 0; k < 5; k++) {
        const e = await ann.nextItem(q.id, who);
        assert.ok(e, `${who} item ${k + 1}`);
        const type = (e.item.input as DecisionInput).decision.type;
        await ann.annotate({
          itemId: e.item.id,
          annotator: who,
          verdict: verdict(type, who === 'expert-b' && k === 1 ? 'No' : 'Yes'),
          queueId: q.id,
        });
      }
      assert.equal(await ann.nextItem(q.id, who), undefined);
    }
    assert.equal((await ann.progress(q.id)).done, 5);
  });

  it("verdicts carry exactly BLADE's fields; a missing or foreign field is refused", () => {
    assert.deepEqual(verdict('transform', 'Unsure').labels, {
      is_suited_to_cv: 'Unsure',
      is_steps_reasonable: 'Unsure',
      annotator_is_rationale_reasonable: 'Unsure',
    });
    assert.throws(
      () => decisionVerdict('cvar', { is_reasonable: 'Yes' }, ''),
      /can_derive_from_data: answer Yes, No or Unsure/,
    );
    assert.throws(
      () => decisionVerdict('model', { is_reasonable: 'Yes', is_suited_to_cv: 'Yes' }, ''),
      /is_suited_to_cv.*not a field of a model review/,
    );
    assert.throws(
      () => decisionVerdict('cvar', { is_reasonable: 'Maybe', can_derive_from_data: 'Yes' }, ''),
      /'Maybe' is not Yes, No or Unsure/,
    );
  });

  it("consensus: all-yes needs every annotator's every field Yes; majority takes more than half; too few annotators is pending", () => {
    const a = (who: string, v: DecisionVerdict, at: string, extra: Partial<Annotation> = {}): Annotation => ({
      id: `${who}-${at}`,
      itemId: 'i',
      annotator: who,
      role: 'annotator',
      verdict: v,
      evidence: [],
      note: null,
      supersedes: null,
      final: false,
      origin: 't',
      createdAt: at,
      dbRole: null,
      ...extra,
    });
    const yes = verdict('transform', 'Yes');
    const mixed = decisionVerdict(
      'transform',
      { is_suited_to_cv: 'Yes', is_steps_reasonable: 'Yes', annotator_is_rationale_reasonable: 'Unsure' },
      '',
    );
    assert.equal(consensusOf([a('x', yes, '1')]).status, 'pending');
    assert.equal(consensusOf([a('x', yes, '1'), a('y', yes, '2')]).status, 'justifiable');
    assert.equal(
      consensusOf([a('x', yes, '1'), a('y', mixed, '2')]).status,
      'not-justifiable',
      "one Unsure field breaks the paper's rule",
    );
    const three = [a('x', yes, '1'), a('y', yes, '2'), a('z', mixed, '3')];
    assert.equal(consensusOf(three).status, 'not-justifiable');
    assert.equal(consensusOf(three, { kind: 'majority', minAnnotators: 2 }).status, 'justifiable');
    assert.equal(
      consensusOf([a('x', yes, '1'), a('y', mixed, '2')], { kind: 'majority', minAnnotators: 2 }).status,
      'not-justifiable',
      'a tie is no majority',
    );
    // an edit supersedes: y changes to Yes
    assert.equal(
      consensusOf([a('x', yes, '1'), a('y', mixed, '2'), a('y', yes, '3', { supersedes: 'y-2' })]).status,
      'justifiable',
    );
    assert.throws(() => consensusOf([], { kind: 'all-yes', minAnnotators: 0 }), /≥ 1/);
  });

  it('prefill: a moderator becomes a Control with interaction, columns split into original / derived, a unit joins after the GT transform making its input', async () => {
    const items = await ann.listItems({ task: BLADE_REVIEW_TASK, runIds: ['r1'] });
    const inp = (k: number) => items[k]!.input as DecisionInput;
    const mod = prefillForm(inp(2), gt);
    assert.deepEqual(mod, {
      kind: 'cvar',
      variableType: 'Control',
      concept: 'name gender moderates femininity',
      columnsOrig: ['gender_mf'],
      columnsDerived: [],
      interaction: true,
      on: 'femininity of the name',
      rationale: '',
    });
    const dv = prefillForm(inp(1), gt);
    assert.equal(dv.kind === 'cvar' && dv.columnsDerived[0], 'log_deaths');
    const unit = prefillForm(inp(5), gt);
    assert.equal(unit.kind, 'transform');
    if (unit.kind === 'transform') {
      assert.equal(unit.specName, 'deaths_per_wind');
      assert.deepEqual(unit.transVerb, ['derive']);
      assert.match(unit.code, /deaths_per_wind/);
      assert.deepEqual(unit.branches, [{ dependencies: ['ROOT_SPEC_ID'], condition: '' }]);
    }
    // a unit reading a GT-derived column joins after that GT transform
    const onBoxcox = prefillForm(
      {
        ...inp(5),
        decision: {
          type: 'transform',
          verb: 'derive',
          code: "df['z'] = df['alldeaths_boxcox'] * 2",
          mapping: [[['alldeaths_boxcox'], 'z']],
          groupbyCols: [],
          rationale: '',
        },
      },
      gt,
    );
    assert.deepEqual(onBoxcox.kind === 'transform' && onBoxcox.branches[0]!.dependencies, [
      '0ad014ab44934bbd952fe33c06011b96',
    ]);
    const model = prefillForm(inp(6), gt);
    assert.deepEqual(model.kind === 'model' && [model.specification, model.columnsOrig, model.columnsDerived], [
      'Linear Regression',
      ['masfem', 'min'],
      ['log_deaths'],
    ]);
  });

  it('agreement per decision type and source; expert decisions from the ground truth; export writes annotate_* rows', async () => {
    const experts = await ensureExpertDecisionItems(
      ann,
      { dataset: 'hurricane', researchQuestion: '', dataColumns: COLS },
      gt,
      0,
      'blade',
    );
    assert.equal(
      experts.length,
      gt.conceptualVars.length + gt.transforms.filter((t) => !t.isRoot).length + gt.models.length,
    );
    for (const e of experts.filter((x) => x.criterion === 'transform')) {
      await ann.annotate({ itemId: e.id, annotator: 'expert-a', verdict: verdict('transform', 'Yes') });
      await ann.annotate({ itemId: e.id, annotator: 'expert-b', verdict: verdict('transform', 'Yes') });
    }
    const rows = await decisionAgreement(ann);
    const et = rows.find((r) => r.source === 'expert' && r.type === 'transform')!;
    assert.equal(et.justifiable, 1);
    assert.equal(et.percentAgreement, 1);
    const agent = rows.filter((r) => r.source === 'agent' && r.pairable > 0);
    assert.ok(agent.length >= 1);
    const total = agent.reduce((n, r) => n + r.pairable, 0);
    assert.equal(total, 5);
    const justified = agent.reduce((n, r) => n + (r.justifiable ?? 0) * r.pairable, 0);
    assert.equal(Math.round(justified), 4, 'one item got a No from expert-b');
    assert.deepEqual(rows.find((r) => r.source === 'expert' && r.type === 'transform')!.annotators, [
      'expert-a',
      'expert-b',
    ]);
    // export
    const reviewed = (await ann.listItems({ task: BLADE_REVIEW_TASK, runIds: ['r1', 'r2'] })).filter(
      (i) => i.criterion !== 'model',
    );
    const byItem = await ann.annotationsByItem({ task: BLADE_REVIEW_TASK });
    const csv = withReviewRows(
      shippedCsv,
      reviewed.filter((i) => byItem.has(i.id)).map((i) => ({ item: i, annotations: byItem.get(i.id)! })),
    );
    const after = parseGtCsv(csv, 'export').annotations;
    const added =
      after.transformReviews.length - gt.transformReviews.length + after.cvarReviews.length - gt.cvarReviews.length;
    assert.ok(added >= 2, `${added} review rows`);
    const mine = after.transformReviews.find((r) => (r.raw.annotator as string)?.startsWith('expert-'));
    if (mine) assert.ok(['Yes', 'No'].includes(mine.isSuitedToCv));
    assert.deepEqual(after.transforms.length, gt.transforms.length, 'specs untouched');
  });
});
