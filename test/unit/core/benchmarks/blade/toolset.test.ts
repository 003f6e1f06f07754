import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Block } from '../../../../../src/core/suites/types.ts';
import { PythonKernel } from '../../../../../src/core/kernel/index.ts';
import {
  bladeMultiRunResults,
  bladeState,
  createBladeToolSet,
  parseBladeMcqAnswer,
  toEntireAnalysis,
} from '../../../../../src/core/benchmarks/blade/toolset.ts';
import { sharedData } from '../../../../helpers/shared.ts';
import { toolContext } from '../../../../helpers/toolsets.ts';

/** A BLADE block built straight from a dataset's info.json (independent of the suites loader). */
function bladeBlock(name: string): Block {
  const dir = sharedData('blade', 'datasets', name);
  const info = JSON.parse(readFileSync(join(dir, 'info.json'), 'utf8'));
  return {
    id: name,
    suite: 'blade',
    suiteId: 'blade:datasets',
    title: name,
    items: [{ type: 'blade-question', id: name, question: info.research_questions[0] }],
    visible: {
      data: [{ path: join(dir, 'data.csv'), rel: 'data.csv', size: 0 }],
      docs: [],
      missing: [],
      researchQuestions: info.research_questions,
      datasetDescription: info.data_desc.dataset_description,
      columns: info.data_desc.fields.map((f: { column: string; properties: Record<string, unknown> }) => ({
        name: f.column,
        description: String(f.properties.description ?? ''),
        dtype: String(f.properties.dtype ?? ''),
        properties: f.properties,
      })),
    },
    hidden: { files: [join(dir, 'annotations.csv')] },
    runnable: true,
    problems: [],
  };
}

describe('BLADE tool set on hurricane (real kernel, sandboxed)', () => {
  const block = bladeBlock('hurricane');
  let kernel: PythonKernel;
  let ws = '';
  before(async () => {
    ws = mkdtempSync(join(tmpdir(), 'loupe-blade-ws-'));
    symlinkSync(block.visible.data[0]!.path, join(ws, 'data.csv'));
    kernel = await PythonKernel.start({
      cwd: ws,
      sandbox: 'bubblewrap',
      readOnlyPaths: [sharedData('blade', 'datasets', 'hurricane')],
      writablePaths: [ws],
    });
  });
  after(async () => kernel?.close());

  it('prompt has the question, description and schema; python sees df', async () => {
    const ts = createBladeToolSet();
    assert.equal(ts.defaultMaxSteps, 10);
    const p = ts.buildBlockPrompt(block);
    assert.match(p, /Research question: Hurricanes with more feminine names/);
    assert.match(p, /- masfem \(number; range 1\.055556–10\.444445/);
    assert.match(p, /Simonsohn/);
    const ctx = toolContext(block, ws, kernel);
    const r = await ts.tools.find((t) => t.name === 'python')!.run({ code: 'print(df.shape); smf.__name__' }, ctx);
    assert.equal(r.isError, false, r.observation);
    assert.match(r.observation, /\(94, 14\)/);
    assert.match(r.observation, /statsmodels\.formula\.api/);
  });

  it('rejects a submission naming a missing column, then a crashing transform, then accepts the fix', async () => {
    const ts = createBladeToolSet();
    const submit = ts.tools.find((t) => t.name === 'submit_analysis')!;
    const ctx = toolContext(block, ws, kernel);
    const cvars = [
      { description: 'femininity of the hurricane name', type: 'IV', columns: ['masfem'] },
      { description: 'number of deaths', type: 'DV', columns: ['log_deaths'] },
      { description: 'hurricane strength', type: 'Control', columns: ['min', 'wind_speed'] },
    ];
    const model = "def model(df):\n    return smf.ols('log_deaths ~ masfem + min', data=df).fit()\n";
    ctx.stepIndex = 1;
    const r1 = await submit.run(
      {
        conceptual_variables: cvars,
        transform_code: "def transform(df):\n    df['log_deaths'] = np.log1p(df['alldeaths'])\n    return df\n",
        model_code: model,
      },
      ctx,
    );
    assert.equal(r1.isError, true);
    assert.equal(r1.finish, undefined);
    assert.match(r1.observation, /Control: hurricane strength: column 'wind_speed' not in the transformed table/);
    assert.match(r1.observation, /Columns of the transformed table: .*log_deaths/);
    ctx.stepIndex = 2;
    const r2 = await submit.run(
      {
        conceptual_variables: cvars,
        transform_code: "def transform(df):\n    df['log_deaths'] = np.log1p(df['all_deaths'])\n    return df\n",
        model_code: model,
      },
      ctx,
    );
    assert.equal(r2.isError, true);
    assert.match(r2.observation, /error in transform:[\s\S]*KeyError: 'all_deaths'/);
    ctx.stepIndex = 3;
    const fixed = cvars.map((v) => (v.type === 'Control' ? { ...v, columns: ['min', 'wind'] } : v));
    const r3 = await submit.run(
      {
        conceptual_variables: fixed,
        transform_code: "def transform(df):\n    df['log_deaths'] = np.log1p(df['alldeaths'])\n    return df\n",
        model_code: model,
      },
      ctx,
    );
    assert.equal(r3.isError, undefined, r3.observation);
    assert.equal(r3.finish, true);
    assert.match(r3.observation, /OLS Regression Results/);
    const st = bladeState(ctx.state.extra);
    assert.deepEqual(
      st.submissions.map((s) => [s.stepIndex, s.valid]),
      [
        [1, false],
        [2, false],
        [3, true],
      ],
    );
    assert.deepEqual(st.final!.cvars.controls, [
      { description: 'hurricane strength', is_moderator: false, columns: ['min', 'wind'] },
    ]);
    assert.deepEqual(st.final!.cvars.dv, { description: 'number of deaths', columns: ['log_deaths'] });
    // The validation neither used nor changed the agent's namespace.
    const chk = await kernel.execute("'log_deaths' in df.columns, '__loupe_validate' in globals()");
    assert.equal(chk.result, '(False, False)');
  });

  it('shape errors come back as observations', async () => {
    const ts = createBladeToolSet();
    const ctx = toolContext(block, ws, kernel);
    const r = await ts.tools
      .find((t) => t.name === 'submit_analysis')!
      .run(
        {
          conceptual_variables: [{ description: 'x', type: 'Outcome', columns: [] }],
          transform_code: '',
          model_code: 'x = 1',
        },
        ctx,
      );
    assert.equal(r.isError, true);
    assert.match(r.observation, /type must be one of IV, DV, Control, Moderator/);
    assert.match(r.observation, /columns must be a non-empty list/);
    assert.match(r.observation, /transform_code` is empty/);
    assert.match(r.observation, /must define `def model/);
    // A formula naming several missing columns: all of them, sorted (patsy alone names one, at random).
    const r2 = await ts.tools
      .find((t) => t.name === 'submit_analysis')!
      .run(
        {
          conceptual_variables: [
            { description: 'femininity', type: 'IV', columns: ['masfem'] },
            { description: 'deaths', type: 'DV', columns: ['alldeaths'] },
          ],
          transform_code: 'def transform(df):\n    return df',
          model_code:
            "def model(df):\n    return smf.ols('alldeaths ~ masfem + zeta + alpha + np.log(wind)', data=df).fit()",
        },
        ctx,
      );
    assert.equal(r2.isError, true);
    assert.match(
      r2.observation,
      /PatsyError: the model formula uses names that are not columns of the transformed table: alpha, zeta\n/,
    );
  });
});

describe('BLADE submission JSON and MCQ parsing', () => {
  it('EntireAnalysis / MultiRunResults follow spec §1.2.5', () => {
    const a = toEntireAnalysis({
      conceptual_variables: [
        { description: 'iv', type: 'IV', columns: ['a'] },
        { description: 'dv', type: 'DV', columns: ['y'] },
        { description: 'mod', type: 'Moderator', columns: ['m'], moderator_on: 'iv' },
      ],
      transform_code: 'def transform(df):\n    return df',
      model_code: 'def model(df):\n    return 1',
    });
    assert.deepEqual(a.cvars.controls, [
      { description: 'mod', is_moderator: true, moderator_on: 'iv', columns: ['m'] },
    ]);
    const m = bladeMultiRunResults('hurricane', [{ final: a }, { final: null }]);
    assert.equal(m.n, 2);
    assert.deepEqual(m.analyses['1'], [2, 'no valid submission']);
  });

  it('parses answer letters strictly', () => {
    const v = ['A', 'B', 'C'];
    assert.equal(parseBladeMcqAnswer('{"answer": "B", "rationale": "x"}', v), 'B');
    assert.equal(parseBladeMcqAnswer('```json\n{"answer":"C"}\n```', v), 'C');
    assert.equal(parseBladeMcqAnswer('A\nbecause ...', v), 'A');
    assert.equal(parseBladeMcqAnswer('Answer: (B).', v), 'B');
    assert.equal(parseBladeMcqAnswer('{"answer": "D"}', v), null);
    assert.equal(parseBladeMcqAnswer('A or B', v), null);
    assert.equal(parseBladeMcqAnswer('The answer is B', v), null);
    assert.equal(parseBladeMcqAnswer('{"answer": "AB"}', v), null);
    assert.equal(parseBladeMcqAnswer('', v), null);
  });
});
