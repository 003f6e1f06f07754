import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  checkDecision,
  saveDecision,
  startDecisionExecutor,
  staticProblems,
  type DecisionExecutor,
  type TransformForm,
} from '../../../../../src/core/benchmarks/blade/authoring.ts';
import { bladeGtStoreOf, parseGtCsv } from '../../../../../src/core/benchmarks/blade/gt-versions.ts';
import { openStore } from '../../../../../src/core/store/run-store.ts';
import { LoupeInputError } from '../../../../../src/core/util/errors.ts';
import { sharedData } from '../../../../helpers/shared.ts';

const DS = sharedData('blade', 'datasets', 'hurricane');
const dataPath = join(DS, 'data.csv');
const shippedCsv = readFileSync(join(DS, 'annotations.csv'), 'utf8');
const gt = parseGtCsv(shippedCsv, 'hurricane').annotations;
const KATRINA = '79d33ed08a8f4c46afd64392221ddc7b'; // remove_Katrina (filter), after remove_NA_in_elapsedyrs
const BOXCOX = '0ad014ab44934bbd952fe33c06011b96';

const transform = (over: Partial<TransformForm> = {}): TransformForm => ({
  kind: 'transform',
  specName: 'deaths_per_wind',
  specification: 'deaths per unit of wind speed',
  transVerb: ['derive'],
  code: "df['deaths_per_wind'] = df['alldeaths'] / df['wind']",
  rationale: 'severity-adjusted deaths',
  mapping: [{ inputs: ['alldeaths', 'wind'], output: 'deaths_per_wind' }],
  branches: [
    { dependencies: ['ROOT_SPEC_ID'], condition: '' },
    { dependencies: [KATRINA], condition: '' },
  ],
  ...over,
});

let ex: DecisionExecutor;
let dir = '';
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-authoring-'));
  ex = await startDecisionExecutor({ dataDir: DS, timeoutMs: 4000 });
});
after(async () => {
  await ex?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('BLADE authoring: executed checks', () => {
  it('a transform runs along each branch: columns, row counts (the Katrina branch drops rows), what it added', async () => {
    const r = await checkDecision(transform(), { annotations: gt, dataPath, executor: ex });
    assert.deepEqual(r.problems, []);
    assert.equal(r.ok, true);
    assert.equal(r.data.rows, 94);
    assert.equal(r.branches.length, 2);
    const [root, kat] = r.branches;
    assert.equal(root!.rows, 94);
    assert.deepEqual(root!.added, ['deaths_per_wind']);
    assert.ok(root!.columns!.includes('deaths_per_wind'));
    assert.deepEqual(
      kat!.steps.map((s) => s.name),
      ['remove_NA_in_elapsedyrs', 'remove_Katrina', 'deaths_per_wind'],
    );
    assert.ok(kat!.rows! < 94, `filtered branch has ${kat!.rows} rows`);
  });

  it('failing code: the error is shown for its branch and the check is not ok', async () => {
    const r = await checkDecision(
      transform({ code: "df['x'] = df['no_such_column'] * 2", mapping: [{ inputs: ['alldeaths'], output: 'x' }] }),
      { annotations: gt, dataPath, executor: ex },
    );
    assert.equal(r.ok, false);
    assert.match(r.branches[0]!.error!, /KeyError: 'no_such_column'/);
  });

  it('hanging code is stopped by the kernel limit, named, and the next check runs', async () => {
    const r = await checkDecision(transform({ code: 'while True:\n    pass' }), {
      annotations: gt,
      dataPath,
      executor: ex,
    });
    assert.equal(r.ok, false);
    assert.match(r.branches[0]!.error!, /ran longer than 4 s/);
    const again = await checkDecision(transform(), { annotations: gt, dataPath, executor: ex });
    assert.equal(again.ok, true, 'the kernel restarted for the next check');
  });

  it('a missing input column, an output the code does not make, a missing dependency and a cycle are named', async () => {
    const r = await checkDecision(
      transform({ mapping: [{ inputs: ['alldeaths', 'windspeed'], output: 'deaths_per_windspeed' }] }),
      { annotations: gt, dataPath, executor: ex },
    );
    assert.equal(r.ok, false);
    assert.ok(r.problems.some((p) => p.field === 'mapping[0].inputs' && /'windspeed' does not exist/.test(p.message)));
    assert.ok(
      r.problems.some(
        (p) =>
          p.field === 'mapping[0].output' && /does not produce output column 'deaths_per_windspeed'/.test(p.message),
      ),
    );
    const dep = staticProblems(
      transform({ branches: [{ dependencies: ['ghost'], condition: '' }] }),
      gt,
      r.data.columns,
    );
    assert.ok(dep.some((p) => p.field === 'branches[0]' && /ghost, which is not a transform/.test(p.message)));
    // editing remove_NA_in_elapsedyrs to depend on remove_Katrina (which depends on it) would make a cycle
    const cyc = staticProblems(
      transform({
        specId: '0acafa49f1104c1fbafa54a91ba1fb29',
        specName: 'remove_NA_in_elapsedyrs',
        branches: [{ dependencies: [KATRINA], condition: '' }],
      }),
      gt,
      r.data.columns,
    );
    assert.ok(
      cyc.some((p) => /dependency cycle/.test(p.message)),
      JSON.stringify(cyc),
    );
  });

  it("a model fits on its transforms' table; one naming a missing column does not", async () => {
    const ok = await checkDecision(
      {
        kind: 'model',
        specification: 'Linear Regression',
        specName: '',
        code: "import statsmodels.formula.api as smf\nmodel = smf.ols('alldeaths_boxcox ~ masfem + min', data=df).fit()",
        rationale: '',
        columnsOrig: ['masfem', 'min'],
        columnsDerived: ['alldeaths_boxcox'],
        onSpecIds: [BOXCOX],
      },
      { annotations: gt, dataPath, executor: ex },
    );
    assert.equal(ok.ok, true, JSON.stringify(ok.problems));
    assert.equal(ok.model?.type, 'RegressionResultsWrapper');
    assert.ok((ok.model?.nobs ?? 0) > 80);
    assert.ok(ok.model!.params!.includes('masfem'));
    const fn = await checkDecision(
      {
        kind: 'model',
        specification: 'OLS',
        specName: '',
        code: "def model(df):\n    return smf.ols('alldeaths ~ masfem', data=df).fit()",
        rationale: '',
        columnsOrig: ['masfem'],
        columnsDerived: [],
        onSpecIds: [],
      },
      { annotations: gt, dataPath, executor: ex },
    );
    assert.equal(fn.ok, true, 'def model(df) is called on the table');
    const bad = await checkDecision(
      {
        kind: 'model',
        specification: 'OLS',
        specName: '',
        code: "model = smf.ols('alldeaths_log ~ masfem', data=df).fit()",
        rationale: '',
        columnsOrig: ['masfem'],
        columnsDerived: [],
        onSpecIds: [],
      },
      { annotations: gt, dataPath, executor: ex },
    );
    assert.equal(bad.ok, false);
    assert.match(bad.model!.error!, /alldeaths_log/);
  });

  it('a conceptual variable with a column that does not exist is refused', async () => {
    const r = await checkDecision(
      {
        kind: 'cvar',
        variableType: 'IV',
        concept: 'name femininity',
        columnsOrig: ['masfem', 'femininity'],
        columnsDerived: ['masfem_mean'],
        interaction: false,
        on: '',
        rationale: '',
      },
      { annotations: gt, dataPath, executor: ex },
    );
    assert.equal(r.ok, false);
    assert.deepEqual(
      r.problems.map((p) => p.field),
      ['columnsOrig'],
    );
    assert.equal(r.branches[0]!.error, undefined, 'the derived column path ran');
  });
});

describe('BLADE authoring: save', () => {
  it('a checked transform becomes a new version; a failed or stale check saves nothing', async () => {
    const st = openStore(join(dir, 'runs.sqlite'));
    try {
      const gts = bladeGtStoreOf(st);
      const form = transform();
      const check = await checkDecision(form, { annotations: gt, dataPath, executor: ex });
      const bad = transform({ code: 'raise ValueError("no")' });
      const badCheck = await checkDecision(bad, { annotations: gt, dataPath, executor: ex });
      await assert.rejects(
        saveDecision({
          gts,
          dataset: 'hurricane',
          shippedCsv,
          parent: 0,
          form: bad,
          check: badCheck,
          author: 'expert-a',
        }),
        (e: unknown) =>
          e instanceof LoupeInputError && /check failed; nothing saved[\s\S]*ValueError: no/.test(e.message),
      );
      await assert.rejects(
        saveDecision({
          gts,
          dataset: 'hurricane',
          shippedCsv,
          parent: 0,
          form: { ...form, code: form.code + ' * 2' },
          check,
          author: 'expert-a',
        }),
        /changed since its check/,
      );
      await assert.rejects(
        saveDecision({ gts, dataset: 'hurricane', shippedCsv, parent: 0, form, check: undefined, author: 'expert-a' }),
        /run its check/,
      );
      assert.equal((await gts.versions('hurricane')).length, 0, 'nothing saved half-way');
      const { version, specId } = await saveDecision({
        gts,
        dataset: 'hurricane',
        shippedCsv,
        parent: 0,
        form,
        check,
        author: 'expert-a',
      });
      assert.equal(version.version, 1);
      const a = parseGtCsv(version.csv, 'v1');
      assert.deepEqual(a.problems, []);
      const t = a.annotations.transforms.find((x) => x.specId === specId)!;
      assert.equal(t.specName, 'deaths_per_wind');
      assert.deepEqual(
        t.branches.map((b) => b.dependencies),
        [['ROOT_SPEC_ID'], [KATRINA]],
      );
      assert.deepEqual(t.columnMappings, [{ inputs: ['alldeaths', 'wind'], output: 'deaths_per_wind' }]);
      assert.equal(a.annotations.transforms.length, gt.transforms.length + 1);
      assert.match(version.note, /added transform deaths_per_wind/);
    } finally {
      await st.close();
    }
  });
});

describe('BLADE authoring: CLI', () => {
  it('loupe blade gt check reports columns and exits 1 on a failing form; author saves a passing one as a new version', async () => {
    const { writeFileSync } = await import('node:fs');
    const { main } = await import('../../../../../src/cli/main.ts');
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      out: (s: string) => void out.push(s),
      err: (s: string) => void err.push(s),
      env: { LOUPE_ANNOTATOR: 'expert-cli' },
      cwd: dir,
    };
    const store = join(dir, 'cli.sqlite');
    const DATASETS = sharedData('blade', 'datasets');
    writeFileSync(join(dir, 'bad.json'), JSON.stringify(transform({ code: "df['x'] = df['nope']" })));
    writeFileSync(join(dir, 'good.json'), JSON.stringify(transform()));
    assert.equal(
      await main(
        [
          'blade',
          'gt',
          'check',
          '--store',
          store,
          '--root',
          DATASETS,
          '--dataset',
          'hurricane',
          '--file',
          join(dir, 'bad.json'),
        ],
        io,
      ),
      1,
    );
    assert.match(out.join(''), /check FAILED[\s\S]*KeyError: 'nope'/);
    out.length = 0;
    assert.equal(
      await main(
        [
          'blade',
          'gt',
          'author',
          '--store',
          store,
          '--root',
          DATASETS,
          '--dataset',
          'hurricane',
          '--file',
          join(dir, 'good.json'),
          '--note',
          'from the CLI',
        ],
        io,
      ),
      0,
      err.join(''),
    );
    assert.match(out.join(''), /check passed[\s\S]*added deaths_per_wind[\s\S]*saved hurricane ground truth version 1/);
  });
});
