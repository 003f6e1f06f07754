import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sharedData } from '../../../../../helpers/shared.ts';
import { startBladePython, type BladePython } from '../../../../../../src/core/benchmarks/blade/eval/python.ts';
import {
  groundTruthFrom,
  modelCvarsMatch,
  parseBladeAnalysis,
  scoreBladeRun,
  type BladeAnalysis,
  type BladeGroundTruth,
} from '../../../../../../src/core/benchmarks/blade/eval/score.ts';
import { canonicalText } from '../../../../../../src/core/eval/judges/tasks.ts';
import type { SemanticJudge } from '../../../../../../src/core/benchmarks/blade/eval/semantic.ts';
import { extractModel } from '../../../../../../src/core/benchmarks/blade/eval/semantic.ts';
import { addGraphHash, DEFAULT_DATAFLOW_OPTIONS } from '../../../../../../src/core/benchmarks/blade/eval/dataflow.ts';
import { DiGraph } from '../../../../../../src/core/benchmarks/blade/eval/graph.ts';
import {
  buildSubmissionTransforms,
  unitsFromExecution,
} from '../../../../../../src/core/benchmarks/blade/eval/transforms.ts';
import { LoupeInputError } from '../../../../../../src/core/util/errors.ts';
import { llmSplitFallback, parseSplitReply } from '../../../../../../src/core/benchmarks/blade/eval/llm-split.ts';
import { startScriptedLlm } from '../../../../../helpers/scripted-llm.ts';
import type {
  BladeAnnotations,
  BladeConceptualVarSpec,
  BladeModelSpec,
} from '../../../../../../src/core/benchmarks/blade/items.ts';

/** Deterministic fake judge: identical text or a listed synonym pair. */
function fakeJudge(pairs: [string, string][]): SemanticJudge & { calls: number } {
  const set = new Set(pairs.map(([a, b]) => `${canonicalText(a)}|${canonicalText(b)}`));
  const j = {
    id: 'fake',
    calls: 0,
    async same(_k: 'conceptual-variable' | 'model', a: string, b: string) {
      j.calls++;
      return {
        match: canonicalText(a) === canonicalText(b) || set.has(`${canonicalText(a)}|${canonicalText(b)}`),
        judgeId: 'fake',
        status: 'done' as const,
      };
    },
  };
  return j;
}

const cv = (
  specId: string,
  type: 'IV' | 'DV' | 'Control',
  concept: string,
  orig: string[],
  derived: string[] = [],
  moderatorOn = '',
): BladeConceptualVarSpec => ({
  specId,
  variableType: type,
  effectiveType: moderatorOn ? 'Moderator' : type,
  concept,
  interaction: !!moderatorOn,
  on: moderatorOn,
  columnsOrig: orig,
  columnsDerived: derived,
  derivedSpecIds: [],
  leafSpecIds: [],
  rationale: '',
  raw: {},
});
const model = (specId: string, name: string, orig: string[], derived: string[] = []): BladeModelSpec => ({
  specId,
  specification: name,
  specName: specId,
  code: '',
  rationale: '',
  columnsOrig: orig,
  columnsDerived: derived,
  derivedSpecIds: [],
  leafSpecIds: [],
  specifiedSpecIds: [],
  raw: {},
});
const tspec = (specId: string, verb: string, code: string, mapping: [string[], string][], deps: string[]) => ({
  specId,
  specName: specId,
  specification: '',
  verb,
  transVerb: [verb],
  code,
  rationale: '',
  columnMappings: mapping.map(([inputs, output]) => ({ inputs, output })),
  branches: [{ dependencies: deps, condition: '' }],
  isRoot: false,
  raw: {},
});

/** Hand-written toy annotations: a filter then a derive; two same-named models with different variables. */
const ANN: BladeAnnotations = {
  file: 'toy-annotations',
  transforms: [
    { ...tspec('ROOT_SPEC_ID', '', '', [], []), isRoot: true, branches: [] },
    tspec('F', 'filter', "df = df[df['Income'] > 50000]", [[['Income'], '']], ['ROOT_SPEC_ID']),
    tspec('D', 'derive', "df['age_sq'] = df['Age'] ** 2", [[['Age'], 'age_sq']], ['F']),
  ],
  conceptualVars: [
    cv('c1', 'IV', 'age', ['Age'], ['age_sq']),
    cv('c2', 'DV', 'income', ['Income']),
    cv('c3', 'Control', 'education', ['Education']),
    cv('c4', 'Control', 'children', ['Has_Children']),
  ],
  models: [
    model('m1', 'Linear Regression', ['Income', 'Age', 'Has_Children']),
    model('m2', 'linear regression ', ['Income', 'Age', 'Education']),
    model('m3', 'Logistic Regression', ['Has_Children']),
  ],
  transformReviews: [],
  cvarReviews: [],
};

const JUDGE_PAIRS: [string, string][] = [
  ['IV: age', 'IV: age of person.'],
  ['DV: income', 'DV: yearly income.'],
  ['Control: education.', 'Control: education level.'],
];

const analysis = (over: Partial<BladeAnalysis> = {}): BladeAnalysis => ({
  cvars: {
    ivs: [{ description: 'age of person', columns: ['age_sq'] }],
    dv: { description: 'yearly income', columns: ['Income'] },
    controls: [
      { description: 'education level', is_moderator: false, columns: ['Education'] },
      { description: 'something moderating', is_moderator: true, moderator_on: 'age', columns: ['Last_Purchase_Date'] },
    ],
  },
  transform_code:
    "def transform(data):\n    data = data[data['Income'] > 50000]\n    data['age_sq'] = data['Age'] ** 2\n    return data\n",
  m_code: "def model(df):\n    return smf.ols('Income ~ age_sq + C(Education)', data=df).fit()\n",
  ...over,
});

describe('BLADE run scoring with a deterministic judge', () => {
  let py: BladePython;
  let gt: BladeGroundTruth;
  let data: string;
  before(async () => {
    py = await startBladePython();
    data = sharedData('blade', 'datasets', 'toy', 'data.csv');
    gt = await groundTruthFrom(
      { dataset: 'toy', dataPath: data, annotations: structuredClone(ANN), researchQuestion: 'toy' },
      py,
    );
  });
  after(async () => py.close());

  it('scores transforms, cvars (types the GT lacks are not sent), model and model+cvars', async () => {
    assert.equal(gt.counts.numTspecs, 2);
    assert.equal(gt.counts.numMspecsUnique, 2);
    const s = await scoreBladeRun({ runId: 'r1', analysis: analysis() }, gt, {
      python: py,
      judge: fakeJudge(JUDGE_PAIRS),
    });
    assert.equal(s.status, 'ok');
    assert.equal(s.metrics.transformValue.precision, 1);
    assert.deepEqual(s.metrics.transformValue.gtItems.sort(), ['D__derive_age_sq', 'F']);
    assert.equal(s.metrics.transformGraph.precision, 1);
    // GT has no Moderator: the submitted moderator is never sent (N₂ = 3)
    assert.equal(s.metrics.cvar.denominator, 3);
    assert.equal(s.metrics.cvar.precision, 1);
    assert.deepEqual(s.metrics.cvar.gtItems.sort(), ['Control: education.', 'DV: income', 'IV: age']);
    assert.equal(s.model.extracted.name, 'Linear Regression');
    assert.deepEqual(s.model.matchedGtNames, ['linear regression']);
    assert.equal(s.metrics.model.precision, 1);
    assert.equal(s.metrics.modelCvar.precision, 1);
    assert.equal(s.model.modelCvarMatchedSpec, 'm2');
    assert.ok(s.judges.done > 0 && s.judges.pending === 0);
  });

  it('§1.7 #6 / §5.3 #4: same-named alternative GT models are compared (all-specs); BLADE compares only the representative', async () => {
    const paper = await scoreBladeRun({ analysis: analysis() }, gt, {
      python: py,
      judge: fakeJudge(JUDGE_PAIRS),
      modelCvarAlternatives: 'all-specs',
    });
    const code = await scoreBladeRun({ analysis: analysis() }, gt, {
      python: py,
      judge: fakeJudge(JUDGE_PAIRS),
      modelCvarAlternatives: 'representative',
    });
    assert.equal(paper.metrics.modelCvar.precision, 1);
    assert.equal(code.metrics.modelCvar.precision, 0, 'm1 (the representative) needs a children control the run lacks');
    assert.equal(code.options.modelCvarAlternatives, 'representative');
  });

  it('§1.7 #7: a model with no associated cvars fails model+cvars (strict) instead of crashing or passing vacuously (blade)', async () => {
    const a = analysis({
      m_code: "def model(df):\n    return smf.ols('Last_Purchase_Date ~ Has_Children', data=df).fit()\n",
    });
    a.cvars = {
      ivs: [{ description: 'age of person', columns: ['age_sq'] }],
      dv: { description: 'yearly income', columns: ['Income'] },
      controls: [],
    };
    const s = await scoreBladeRun({ analysis: a }, gt, { python: py, judge: fakeJudge(JUDGE_PAIRS) });
    assert.equal(s.metrics.model.precision, 1);
    assert.equal(s.metrics.modelCvar.precision, 0);
    const judge = fakeJudge(JUDGE_PAIRS);
    assert.equal(await modelCvarsMatch(ANN.conceptualVars, [], judge, undefined, 'strict'), false);
    assert.equal(
      await modelCvarsMatch(ANN.conceptualVars, [], judge, undefined, 'blade'),
      true,
      'BLADE passes vacuously',
    );
  });

  it('a failed transform keeps cvars and model scored (BLADE continues); generation failures are zero runs', async () => {
    const s = await scoreBladeRun(
      { analysis: analysis({ transform_code: "def transform(df):\n    df['x'] = df['nope'] + 1\n    return df\n" }) },
      gt,
      { python: py, judge: fakeJudge(JUDGE_PAIRS) },
    );
    assert.equal(s.transform.status, 'execution_failed');
    assert.match(s.transform.error ?? '', /KeyError/);
    assert.equal(s.metrics.transformValue.precision, 0);
    assert.equal(s.metrics.cvar.precision, 1);
    const g = await scoreBladeRun({ generationFailed: 'empty response' }, gt, { python: py });
    assert.equal(g.status, 'generation_failed');
    assert.equal(g.metrics.cvar.precision, 0);
  });

  it('uses the LLM fallback for statements execution cannot split (rows grew)', async () => {
    const code =
      "def transform(df):\n    df = pd.concat([df, df])\n    df['inc_k'] = df['Income'] / 1000\n    return df\n";
    const without = await scoreBladeRun({ analysis: analysis({ transform_code: code }) }, gt, { python: py });
    assert.equal(without.transform.conversion, 'execution-with-unsplit-statements');
    let asked = '';
    const withFb = await scoreBladeRun({ analysis: analysis({ transform_code: code }) }, gt, {
      python: py,
      splitFallback: async (c, reason) => {
        asked = reason;
        assert.equal(c, code);
        return [
          { code: 'df = pd.concat([df, df])', verb: 'other', mapping: [], groupbyCols: [] },
          {
            code: "df['inc_k'] = df['Income'] / 1000",
            verb: 'derive',
            mapping: [[['Income'], 'inc_k']],
            groupbyCols: [],
          },
        ];
      },
    });
    assert.match(asked, /row count grew/);
    assert.equal(withFb.transform.conversion, 'execution+llm-fallback');
    assert.deepEqual(
      withFb.transform.units.map((u) => [u.verb, u.source]),
      [
        ['other', 'llm-fallback'],
        ['derive', 'llm-fallback'],
      ],
    );
  });

  it('LLM split fallback on a scripted OpenAI-compatible endpoint: invalid reply, corrective retry, executed units, cache', async () => {
    const code =
      "def transform(df):\n    df = pd.concat([df, df])\n    df['inc_k'] = df['Income'] / 1000\n    return df\n";
    const good = JSON.stringify({
      units: [
        { code: 'df = pd.concat([df, df])', verb: 'filter', mapping: [[[], '']], groupby_cols: [] },
        {
          code: "df['inc_k'] = df['Income'] / 1000",
          verb: 'derive',
          mapping: [[['Income'], 'inc_k']],
          groupby_cols: [],
        },
      ],
    });
    const srv = await startScriptedLlm({
      script: [{ content: 'Sure! Here are the steps.' }, { content: '```json\n' + good + '\n```' }],
    });
    try {
      const fb = llmSplitFallback({ baseUrl: srv.baseUrl, model: 'scripted' });
      const s = await scoreBladeRun({ analysis: analysis({ transform_code: code }) }, gt, {
        python: py,
        splitFallback: fb,
      });
      assert.equal(s.transform.conversion, 'execution+llm-fallback');
      assert.deepEqual(
        s.transform.units.map((u) => [u.verb, u.source]),
        [
          ['filter', 'llm-fallback'],
          ['derive', 'llm-fallback'],
        ],
      );
      assert.equal(srv.requests.length, 2, 'one corrective retry');
      assert.equal(srv.requests[0]!.body.temperature, 0);
      await fb(code, 'again');
      assert.equal(srv.requests.length, 2, 'cached by code');
    } finally {
      await srv.close();
    }
    assert.match(String(parseSplitReply('{"units": [{"code": "x", "verb": "slice"}]}')), /verb must be one of/);
  });

  it('rejects malformed analyses naming the field', () => {
    assert.throws(
      () =>
        parseBladeAnalysis(
          { cvars: { ivs: [], dv: { description: 'x', columns: 'y' } }, transform_code: '', m_code: '' },
          'run 3',
        ),
      (e: unknown) => e instanceof LoupeInputError && /run 3: cvars.dv.columns/.test(e.message),
    );
    assert.throws(
      () => parseBladeAnalysis({ cvars: { ivs: [], dv: { description: 'x', columns: [] } }, m_code: '' }, 'run 4'),
      /transform_code/,
    );
  });
});

describe('BLADE transform splitting by execution (spec §1.4.1, improved)', () => {
  let py: BladePython;
  let data: string;
  before(async () => {
    py = await startBladePython();
    data = sharedData('blade', 'datasets', 'toy', 'data.csv');
  });
  after(async () => py.close());
  const verbs = async (code: string) =>
    (await py.split(data, code)).units.map((u) => [u.verb, u.mapping, u.groupbyCols]);

  it('filter + derive with the argument renamed to df', async () => {
    assert.deepEqual(
      await verbs(
        "def transform(data):\n    data = data[data['Age'] > 30]\n    data['inc_k'] = data.Income / 1000\n    return data\n",
      ),
      [
        ['filter', [[['Age'], '']], []],
        ['derive', [[['Income'], 'inc_k']], []],
      ],
    );
  });
  it('orderby, deduplicate, column selection (no unit), rename (derive from the old column)', async () => {
    assert.deepEqual(await verbs("df = df.sort_values('Age')"), [['orderby', [[['Age'], '']], []]]);
    assert.deepEqual(await verbs("df = df.drop_duplicates(subset=['Education'])"), [
      ['deduplicate', [[['Education'], '']], []],
    ]);
    assert.deepEqual(await verbs("df = df[['Age', 'Income']]"), []);
    assert.deepEqual(await verbs("df = df.rename(columns={'Age': 'age_years'})"), [
      ['derive', [[['Age'], 'age_years']], []],
    ]);
  });
  it('impute after blanking values; group-wise transform keeps rows (rollup with group keys)', async () => {
    const u = await verbs(
      "df.loc[df['Age'] > 60, 'Income'] = np.nan\ndf['Income'] = df['Income'].fillna(df['Income'].median())",
    );
    assert.deepEqual(u[1], ['impute', [[['Income'], 'Income']], []]);
    assert.deepEqual(await verbs("df['age_by_edu'] = df.groupby('Education')['Age'].transform('mean')"), [
      ['rollup', [[['Age'], 'age_by_edu']], ['Education']],
    ]);
  });
  it('a groupby held in a variable, then aggregated', async () => {
    assert.deepEqual(await verbs("g = df.groupby('Education')\ndf = g.agg(mean_age=('Age', 'mean')).reset_index()"), [
      ['groupby', [[['Age'], 'mean_age']], ['Education']],
    ]);
  });
  it('a hanging transform times out and the driver restarts; sys.exit() in submitted code is an execution failure', async () => {
    const quick = await startBladePython({ timeoutMs: 3000 });
    try {
      assert.equal((await quick.split(data, 'import sys\nsys.exit(3)')).status, 'execution_failed');
      await assert.rejects(quick.split(data, 'while True:\n    pass'), /timed out/);
      assert.deepEqual((await quick.columns(data)).columns.slice(0, 2), ['Age', 'Income'], 'a fresh driver answers');
    } finally {
      await quick.close();
    }
  });

  it('strings that are values are not columns (hurricane has columns named category, min, name)', async () => {
    const h = sharedData('blade', 'datasets', 'hurricane', 'data.csv');
    const v = async (code: string) => (await py.split(h, code)).units.map((u) => [u.verb, u.mapping]);
    assert.deepEqual(await v("df['gender_mf'] = df['gender_mf'].astype('category')"), [
      ['derive', [[['gender_mf'], 'gender_mf']]],
    ]);
    assert.deepEqual(await v("df['wind_max'] = df['wind'].max() - df['wind'].min()"), [
      ['derive', [[['wind'], 'wind_max']]],
    ]);
    assert.deepEqual(await v("df = df.query('alldeaths > 10 and year >= 1960')"), [
      ['filter', [[['year', 'alldeaths'], '']]],
    ]);
    assert.deepEqual(await v("cols = ['masfem', 'masfem_mturk']\ndf['fem'] = df[cols].mean(axis=1)"), [
      ['derive', [[['masfem', 'masfem_mturk'], 'fem']]],
    ]);
    assert.deepEqual(await v("for c in ['wind', 'min']:\n    df[c] = (df[c] - df[c].mean()) / df['ndam15'].std()"), [
      [
        'derive',
        [
          [['min', 'ndam15'], 'min'],
          [['wind', 'ndam15'], 'wind'],
        ],
      ],
    ]);
  });

  it('reports syntax errors, empty code and execution failures', async () => {
    assert.equal((await py.split(data, 'def transform(df):\n    df = (\n')).status, 'syntax_error');
    assert.equal((await py.split(data, 'def transform(df):\n    return df\n')).status, 'empty');
    assert.equal((await py.split(data, "df = df['missing']")).status, 'execution_failed');
  });

  it('§1.7 #15: orderby/deduplicate are whole-table nodes (fixed); BLADE expands orderby per column and drops deduplicate', async () => {
    const split = await py.split(
      data,
      "df = df.sort_values('Age')\ndf = df.drop_duplicates(subset=['Education'])\ndf['a2'] = df['Age'] * 2",
    );
    const units = unitsFromExecution(split.units);
    const cols = ['Age', 'Income', 'Education', 'Has_Children', 'Last_Purchase_Date'];
    const fixed = await buildSubmissionTransforms(units, cols);
    const blade = await buildSubmissionTransforms(units, cols, {
      ...DEFAULT_DATAFLOW_OPTIONS,
      wholeTableVerbs: 'blade',
    });
    assert.equal(fixed.expandedIdToSpec.size - 1, 3); // orderby, deduplicate, derive a2
    assert.equal(blade.expandedIdToSpec.size - 1, 5 + 1); // orderby_<col> × 5 columns, no deduplicate node, derive a2
  });
});

describe('BLADE graph-hash table (§1.7 #9)', () => {
  it('keeps every non-isomorphic subgraph under a colliding hash (BLADE kept only the last)', () => {
    const g1 = new DiGraph();
    g1.addNode('a', { val: 'x' });
    g1.addNode('b', { val: 'derive' });
    g1.addEdge('a', 'b', { type: 'data' });
    const g2 = new DiGraph();
    g2.addNode('a', { val: 'y' });
    g2.addNode('b', { val: 'derive' });
    g2.addEdge('a', 'b', { type: 'data' });
    const st = (nid: string) => ({ col: 'c', nid, expandedSpecId: nid, valueHash: nid, catHash: nid, pathIndex: 0 });
    const keepAll = new Map();
    addGraphHash(keepAll, 'H', g1, st('1'), DEFAULT_DATAFLOW_OPTIONS);
    addGraphHash(keepAll, 'H', g2, st('2'), DEFAULT_DATAFLOW_OPTIONS);
    addGraphHash(keepAll, 'H', g1.copy(), st('3'), DEFAULT_DATAFLOW_OPTIONS);
    assert.equal(keepAll.get('H').length, 2);
    assert.deepEqual(
      keepAll.get('H')[0].states.map((s: { nid: string }) => s.nid),
      ['1', '3'],
    );
    const keepLast = new Map();
    addGraphHash(keepLast, 'H', g1, st('1'), { ...DEFAULT_DATAFLOW_OPTIONS, graphHashCollisions: 'keep-last' });
    addGraphHash(keepLast, 'H', g2, st('2'), { ...DEFAULT_DATAFLOW_OPTIONS, graphHashCollisions: 'keep-last' });
    assert.equal(keepLast.get('H').length, 1);
  });

  it('reads model family and columns from code without an LLM', () => {
    const m = extractModel("md = smf.mixedlm('eval ~ beauty + C(gender) * age', data, groups=data['prof'])", [
      'eval',
      'beauty',
      'gender',
      'age',
      'prof',
      'other',
    ]);
    assert.equal(m.name, 'Linear Mixed Effects Model');
    assert.deepEqual(m.columns, ['eval', 'beauty', 'gender', 'age', 'prof']);
    assert.equal(extractModel('sm.GLM(y, X, family=sm.families.Binomial()).fit()', []).name, 'Logistic Regression');
    assert.equal(extractModel('print(1)', []).how, 'unknown');
  });
});
