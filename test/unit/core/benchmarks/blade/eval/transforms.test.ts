import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import { sharedData } from '../../../../../helpers/shared.ts';
import { startBladePython, type BladePython } from '../../../../../../src/core/benchmarks/blade/eval/python.ts';
import {
  buildGroundTruthTransforms,
  buildSubmissionTransforms,
  matchTransforms,
  unitsFromExecution,
} from '../../../../../../src/core/benchmarks/blade/eval/transforms.ts';
import type { TSpec } from '../../../../../../src/core/benchmarks/blade/eval/dataflow.ts';
import { GT_SPECS, GT_SPECS_W_BRANCH, LLM_CODE, LLM_PATH_SPECS } from '../../../../../fixtures/blade/toy-specs.ts';

const mk = (a: TSpec[]) => new Map(a.map((s) => [s.id, structuredClone(s)]));

describe('BLADE toy oracle (spec §1.4.4, tests/test_transform_eval.py::test_specs_w_runs)', () => {
  let py: BladePython;
  let data: string;
  let cols: string[];
  before(async () => {
    py = await startBladePython();
    data = sharedData('blade', 'datasets', 'toy', 'data.csv');
    cols = (await py.columns(data)).columns;
  });
  after(async () => py.close());

  it('GT with branches: 9 expanded specs, 4 path graphs', async () => {
    const specs = mk(GT_SPECS_W_BRANCH);
    const s = await buildGroundTruthTransforms(py, data, specs, cols, undefined, [specs.get('D2')!]);
    assert.equal(s.expandedIdToSpec.size, 9);
    assert.equal(s.paths.length, 4);
    assert.deepEqual(s.failures, []);
  });

  it('GT without branches: 8 specs, 2 graphs, 14 value hashes, 15 graph hashes; LLM path 6/1/8/8; matches 2/4, vspecs 4/4, gspecs 6/6', async () => {
    const g = mk(GT_SPECS);
    const gt = await buildGroundTruthTransforms(py, data, g, cols, undefined, [g.get('D2')!]);
    assert.equal(gt.expandedIdToSpec.size, 8);
    assert.equal(gt.paths.length, 2);
    assert.equal(gt.valueHashes.size, 14);
    assert.equal(gt.graphHashes.size, 15);
    const l = mk(LLM_PATH_SPECS);
    const llm = await buildGroundTruthTransforms(py, data, l, cols, undefined, [l.get('D2')!]);
    assert.equal(llm.expandedIdToSpec.size, 6);
    assert.equal(llm.paths.length, 1);
    assert.equal(llm.valueHashes.size, 8);
    assert.equal(llm.graphHashes.size, 8);
    const m = matchTransforms(gt, llm);
    assert.equal(m.valueHashes.length, 2);
    assert.equal(m.graphHashes.length, 4);
    assert.equal(m.vspecs1.size, 4);
    assert.equal(m.vspecs2.size, 4);
    assert.equal(m.gspecs1.size, 6);
    assert.equal(m.gspecs2.size, 6);
  });

  it('splits the LLM code by execution into a groupby unit with its aggregations and a derive unit', async () => {
    const split = await py.split(data, LLM_CODE);
    assert.equal(split.status, 'ok');
    assert.deepEqual(
      split.units.map((u) => u.verb),
      ['groupby', 'derive'],
    );
    assert.deepEqual(split.units[0]!.groupbyCols, ['Education']);
    assert.deepEqual(split.units[0]!.mapping, [
      [['Income'], 'income_mean_ai'],
      [['Age'], 'age_mean_ai'],
      [['Has_Children'], 'children_mean_ai'],
    ]);
    assert.deepEqual(split.units[1]!.mapping, [
      [['income_mean_ai', 'children_mean_ai'], 'income_divide_half_if_children_ai'],
    ]);
    // executed units give the same value matches as the hand-written LLM path
    const g = mk(GT_SPECS);
    const gt = await buildGroundTruthTransforms(py, data, g, cols, undefined, [g.get('D2')!]);
    const sub = await buildSubmissionTransforms(unitsFromExecution(split.units), cols);
    const m = matchTransforms(gt, sub);
    assert.equal(m.valueHashes.length, 2);
    assert.equal(m.vspecs1.size, 4);
  });
});

describe('BLADE Python in the project kernel (sandboxed submission code)', () => {
  for (const sandbox of ['off', 'bubblewrap'] as const) {
    it(`kernel backend, sandbox ${sandbox}: same toy oracle matches as the process backend`, async (t) => {
      const data = sharedData('blade', 'datasets', 'toy', 'data.csv');
      let py: BladePython;
      try {
        py = await startBladePython({ backend: 'kernel', sandbox, readOnlyPaths: [dirname(data)], cwd: tmpdir() });
      } catch (e) {
        if (sandbox === 'bubblewrap') return t.skip(`bubblewrap unavailable: ${(e as Error).message}`);
        throw e;
      }
      try {
        const cols = (await py.columns(data)).columns;
        const g = mk(GT_SPECS);
        const gt = await buildGroundTruthTransforms(py, data, g, cols, undefined, [g.get('D2')!]);
        assert.equal(gt.valueHashes.size, 14);
        const split = await py.split(data, LLM_CODE);
        const sub = await buildSubmissionTransforms(unitsFromExecution(split.units), cols);
        assert.equal(matchTransforms(gt, sub).valueHashes.length, 2);
      } finally {
        await py.close();
      }
    });
  }
});
