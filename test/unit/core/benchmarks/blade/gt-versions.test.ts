import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../../../../src/cli/main.ts';
import {
  bladeGtStoreOf,
  diffGroundTruth,
  editGtCsv,
  gtHash,
  parseGtCsv,
} from '../../../../../src/core/benchmarks/blade/gt-versions.ts';
import { parseBladeAnnotations } from '../../../../../src/core/benchmarks/blade/annotations.ts';
import { openStore } from '../../../../../src/core/store/run-store.ts';
import { forEachEngine } from '../../../../helpers/store-engines.ts';
import { HURRICANE_SUBMISSION } from '../../../../helpers/fixtures.ts';
import { call, startScriptedLlm } from '../../../../helpers/scripted-llm.ts';
import { sharedData } from '../../../../helpers/shared.ts';
import type { BladeAnnotations } from '../../../../../src/core/benchmarks/blade/items.ts';

const DATASETS = sharedData('blade', 'datasets');
const specs = (a: BladeAnnotations) =>
  JSON.stringify({
    c: a.conceptualVars,
    t: a.transforms,
    m: a.models,
    tr: a.transformReviews,
    cr: a.cvarReviews,
    g: a.dependencyGraph ?? null,
  });

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-bladegt-'));
});
after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('BLADE ground truth versions', () => {
  it('every shipped annotations.csv loads, exports through the CSV writer and re-loads to identical specs', () => {
    const names = readdirSync(DATASETS).filter((d) => {
      try {
        readFileSync(join(DATASETS, d, 'annotations.csv'));
        return true;
      } catch {
        return false;
      }
    });
    assert.ok(names.length >= 9, `${names.length} datasets with annotations.csv`);
    for (const d of names) {
      const file = join(DATASETS, d, 'annotations.csv');
      const text = readFileSync(file, 'utf8');
      const a = parseBladeAnnotations(file);
      const again = parseGtCsv(
        editGtCsv(text, () => undefined),
        `${d}@export`,
      );
      assert.equal(specs(again.annotations), specs(a.annotations), `${d}: specs differ after export`);
      assert.equal(again.problems.length, a.problems.length, `${d}: problems`);
      assert.ok(a.annotations.transforms.length + a.annotations.conceptualVars.length > 0, `${d} has specs`);
    }
  });

  it('an old list-of-lists branches row loads, exports and re-loads the same; the view reports a missing dependency and a cycle', async () => {
    const { transformGraph } = await import('../../../../../src/core/benchmarks/blade/gt-view.ts');
    const t = (id: string, deps: unknown) =>
      JSON.stringify({
        spec_name: id,
        specification: id,
        trans_verb: ['derive'],
        code: `df['${id}'] = 1`,
        rationale: '',
        conditions: '',
        input_cols_to_output_col_mapping: [[['a'], id]],
        branches: deps,
      });
    const csv = editGtCsv('Unnamed: 0,spec_id,transform_spec_json\n', (rows) => {
      rows.push({
        'Unnamed: 0': '0',
        spec_id: 'ROOT_SPEC_ID',
        transform_spec_json: JSON.stringify({ spec_name: 'ROOT' }),
      });
      rows.push({ 'Unnamed: 0': '1', spec_id: 'old', transform_spec_json: t('old', [['ROOT_SPEC_ID'], ['ghost']]) });
      rows.push({
        'Unnamed: 0': '2',
        spec_id: 'c1',
        transform_spec_json: t('c1', [{ dependencies: ['c2'], condition: '' }]),
      });
      rows.push({
        'Unnamed: 0': '3',
        spec_id: 'c2',
        transform_spec_json: t('c2', [{ dependencies: ['c1'], condition: '' }]),
      });
    });
    const a = parseGtCsv(csv, 'old.csv').annotations;
    const old = a.transforms.find((x) => x.specId === 'old')!;
    assert.deepEqual(old.branches, [
      { dependencies: ['ROOT_SPEC_ID'], condition: '' },
      { dependencies: ['ghost'], condition: '' },
    ]);
    assert.equal(
      specs(
        parseGtCsv(
          editGtCsv(csv, () => undefined),
          'again',
        ).annotations,
      ),
      specs(a),
    );
    const g = transformGraph(a);
    assert.ok(
      g.problems.some((p) => /old.*depends on ghost, which is not a spec/.test(p)),
      g.problems.join('; '),
    );
    assert.ok(
      g.problems.some((p) => /dependency cycle/.test(p)),
      g.problems.join('; '),
    );
    assert.ok(g.edges.some((e) => e.from === 'ROOT_SPEC_ID' && e.to === 'old' && !e.alternative));
  });

  it('keeps Unnamed: n columns and names the row and column of a bad cell', () => {
    const csv =
      'Unnamed: 0,spec_id,conceptual_spec_json,transform_spec_json\n0,ROOT_SPEC_ID,,"{""spec_name"": ""ROOT""}"\n1,abc,"{not json",\n';
    const out = editGtCsv(csv, (rows) => rows.push({ 'Unnamed: 0': '2', spec_id: 'def', conceptual_spec_json: '' }));
    assert.match(out.split('\n')[0]!, /^Unnamed: 0,spec_id,conceptual_spec_json,transform_spec_json/);
    const { problems } = parseGtCsv(out, 'fixture.csv');
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /fixture\.csv:3 column conceptual_spec_json: invalid JSON/);
  });
});

forEachEngine((e) =>
  describe('BLADE ground truth versions in the store', () => {
    it('versions hash on content; equal content saves nothing; a bad row is refused with its line; diff by spec', async () => {
      const rs = await e.open(await e.fresh());
      try {
        const gts = bladeGtStoreOf(rs);
        const shipped = readFileSync(join(DATASETS, 'affairs', 'annotations.csv'), 'utf8');
        const same = await gts.save({ dataset: 'affairs', csv: shipped, author: 'x', parent: 0, shippedCsv: shipped });
        assert.equal(same.version, 0, 'the shipped content is version 0');
        const edited = editGtCsv(shipped, (rows) =>
          rows.push({
            spec_id: 'loupe_t1',
            transform_spec_json: JSON.stringify({
              spec_name: 'extra',
              specification: 'extra',
              trans_verb: ['derive'],
              code: "df['x2'] = df['age'] * 2",
              rationale: '',
              conditions: '',
              input_cols_to_output_col_mapping: [[['age'], 'x2']],
              branches: [{ dependencies: ['ROOT_SPEC_ID'], condition: '' }],
            }),
          }),
        );
        const v1 = await gts.save({
          dataset: 'affairs',
          csv: edited,
          author: 'expert',
          note: 'add x2',
          parent: 0,
          shippedCsv: shipped,
        });
        assert.equal(v1.version, 1);
        assert.equal(v1.hash, gtHash(edited));
        assert.notEqual(v1.hash, gtHash(shipped));
        assert.equal(
          (await gts.save({ dataset: 'affairs', csv: edited, author: 'expert', parent: 1, shippedCsv: shipped }))
            .version,
          1,
          'same content as the parent: no new version',
        );
        const bad = editGtCsv(edited, (rows) => rows.push({ spec_id: 'broken', model_spec_json: '{oops' }));
        await assert.rejects(
          gts.save({ dataset: 'affairs', csv: bad, author: 'expert', parent: 1, shippedCsv: shipped }),
          /1 row problem.*column model_spec_json: invalid JSON/s,
        );
        assert.equal((await gts.versions('affairs')).length, 1, 'nothing saved');
        const d = diffGroundTruth(parseGtCsv(shipped, 'a').annotations, parseGtCsv(edited, 'b').annotations);
        assert.deepEqual(d, { added: ['transform:loupe_t1'], removed: [], changed: [] });
      } finally {
        await rs.close();
      }
    });
  }),
);

describe('scoring against a ground-truth version', () => {
  it(
    'a transform missing from the shipped ground truth counts once a version adds it; each score names its version; both are kept',
    { timeout: 300_000 },
    async () => {
      const store = join(dir, 'runs.sqlite');
      const submission = {
        ...HURRICANE_SUBMISSION,
        transform_code:
          "def transform(df):\n    df['log_deaths'] = np.log1p(df['alldeaths'])\n    df['wind_sqrt'] = np.sqrt(df['wind'])\n    return df\n",
        conceptual_variables: HURRICANE_SUBMISSION.conceptual_variables.map((v) =>
          v.type === 'Control' ? { ...v, columns: ['min', 'wind_sqrt'] } : v,
        ),
        model_code: "def model(df):\n    return smf.ols('log_deaths ~ masfem + min + wind_sqrt', data=df).fit()\n",
      };
      const llm = await startScriptedLlm({
        script: [{ content: 'Submit.', toolCalls: [call('submit_analysis', submission)] }, { content: 'done' }],
      });
      const out: string[] = [];
      const err: string[] = [];
      const io = {
        out: (s: string) => void out.push(s),
        err: (s: string) => void err.push(s),
        env: { LOUPE_ANNOTATOR: 'expert' },
        cwd: dir,
      };
      let runId = '';
      try {
        assert.equal(
          await main(
            [
              'run',
              '--store',
              store,
              '--suite',
              'blade',
              '--root',
              DATASETS,
              '--block',
              'hurricane',
              '--agent',
              'llm',
              '--model',
              'm',
              '--base-url',
              llm.baseUrl,
              '--json',
            ],
            io,
          ),
          0,
          err.join(''),
        );
        runId = (JSON.parse(out.join('').trim().split('\n').pop()!) as { runId: string }).runId;
      } finally {
        await llm.close();
      }
      const score = async (args: string[]) => {
        out.length = 0;
        assert.equal(await main(['score', '--store', store, '--run', runId, '--json', ...args], io), 0, err.join(''));
        return (
          JSON.parse(out.join('')) as {
            runs: Array<{
              summary: Record<string, number>;
              groundTruth: { source: string; version: number; specs: { transforms: number } };
              error?: string;
            }>;
          }
        ).runs[0]!;
      };
      const s0 = await score(['--gt-version', 'shipped']);
      assert.equal(s0.error, undefined);
      assert.deepEqual([s0.groundTruth.source, s0.groundTruth.version], ['shipped', 0]);
      // an expert adds the transform to the ground truth (programmatically here) and saves version 1
      const shippedFile = join(DATASETS, 'hurricane', 'annotations.csv');
      const shipped = readFileSync(shippedFile, 'utf8');
      const edited = editGtCsv(shipped, (rows) => {
        const id = 'loupe_wind_sqrt';
        rows.push({
          spec_id: id,
          transform_spec_json: JSON.stringify({
            spec_name: 'wind_sqrt',
            specification: 'square root of wind speed',
            trans_verb: ['derive'],
            code: "df['wind_sqrt'] = np.sqrt(df['wind'])",
            rationale: 'wind is skewed',
            conditions: '',
            input_cols_to_output_col_mapping: [[['wind'], 'wind_sqrt']],
            branches: [{ dependencies: ['ROOT_SPEC_ID'], condition: '' }],
            annotator: null,
          }),
        });
        const g = rows.find((r) => r.dependency_graph);
        if (g) {
          const graph = JSON.parse(g.dependency_graph!) as {
            nodes: Array<{ id: string }>;
            links: Array<{ source: string; target: string }>;
          };
          graph.nodes.push({ id });
          graph.links.push({ source: 'ROOT_SPEC_ID', target: id });
          g.dependency_graph = JSON.stringify(graph);
        }
      });
      const edFile = join(dir, 'hurricane-edited.csv');
      writeFileSync(edFile, edited);
      out.length = 0;
      assert.equal(
        await main(
          [
            'blade',
            'gt',
            'save',
            '--store',
            store,
            '--root',
            DATASETS,
            '--dataset',
            'hurricane',
            '--file',
            edFile,
            '--note',
            'wind_sqrt is justified',
          ],
          io,
        ),
        0,
        err.join(''),
      );
      assert.match(out.join(''), /saved hurricane ground truth version 1/);
      const s1 = await score([]);
      assert.deepEqual([s1.groundTruth.source, s1.groundTruth.version], ['authored', 1]);
      assert.equal(s1.groundTruth.specs.transforms, s0.groundTruth.specs.transforms + 1);
      assert.ok(
        s1.summary.transformValuePrecision! > s0.summary.transformValuePrecision!,
        `transform precision ${s0.summary.transformValuePrecision} → ${s1.summary.transformValuePrecision}`,
      );
      // both scores kept (keyed on the ground truth used), and the version exports byte for byte
      const rs = openStore(store);
      try {
        const kept = (await rs.scores.list(runId))
          .map((x) => (x.options as Record<string, unknown>).ground_truth)
          .sort();
        assert.deepEqual(kept, ['shipped', 'v1']);
      } finally {
        await rs.close();
      }
      out.length = 0;
      const exported = join(dir, 'exported.csv');
      assert.equal(
        await main(
          [
            'blade',
            'gt',
            'export',
            '--store',
            store,
            '--root',
            DATASETS,
            '--dataset',
            'hurricane',
            '--version',
            '1',
            '--out',
            exported,
          ],
          io,
        ),
        0,
        err.join(''),
      );
      assert.equal(readFileSync(exported, 'utf8'), edited);
      err.length = 0;
      assert.notEqual(await main(['score', '--store', store, '--run', runId, '--gt-version', '7'], io), 0);
      assert.match(err.join(''), /ground-truth version 7.*hurricane has versions 0 \(shipped\), 1/);
    },
  );
});
