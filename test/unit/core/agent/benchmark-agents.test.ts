/** Tool-set selection and named options for BLADE / DDR / AnalystBench runs (no kernel, no model). */
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { BLADE_REFERENCE_MAX_STEPS, benchmarkReferenceModel, benchmarkToolSet, parseToolSetOptions } from '../../../../src/core/runs/benchmark-agents.ts';
import { loadSuite } from '../../../../src/core/suites/index.ts';
import { LoupeInputError } from '../../../../src/core/util/errors.ts';
import { sharedData } from '../../../helpers/shared.ts';

test('named tool-set options are checked per suite', () => {
  assert.deepEqual(parseToolSetOptions('ddr', ['finishRule=code', 'queryTimeoutMs=5000', 'python=false']), { finishRule: 'code', queryTimeoutMs: '5000', python: 'false' });
  assert.deepEqual(parseToolSetOptions('analystbench', ['input=template', 'template=/x.md']), { input: 'template', template: '/x.md' });
  assert.throws(() => parseToolSetOptions('ddr', ['finishRule=sometimes']), /finishRule must be one of paper, code/);
  assert.throws(() => parseToolSetOptions('ddr', ['queryTimeoutMs=-1']), /positive number/);
  assert.throws(() => parseToolSetOptions('blade', ['finishRule=code']), (e: unknown) => e instanceof LoupeInputError && /unknown option 'finishRule' for suite blade \(options: useDataDescription\)/.test(e.message));
  assert.throws(() => parseToolSetOptions('longda', ['x=1']), /options: none/);
  assert.throws(() => parseToolSetOptions('ddr', ['finishRule']), /expected key=value/);
});

test('tool set per suite; the BLADE reference agent gets one step per candidate path', async () => {
  const blade = (await loadSuite('blade', sharedData('blade', 'datasets'))).blocks.find((b) => b.id === 'hurricane')!;
  assert.equal(benchmarkToolSet(blade).defaultMaxSteps, 10);
  assert.equal(benchmarkToolSet(blade, { agent: 'reference' }).defaultMaxSteps, BLADE_REFERENCE_MAX_STEPS);
  assert.equal(benchmarkToolSet(blade, { agent: 'reference', maxSteps: 3 }).defaultMaxSteps, 3);
  assert.doesNotMatch(benchmarkToolSet(blade, { options: { useDataDescription: 'false' } }).buildBlockPrompt(blade), /Simonsohn/);
  assert.equal(benchmarkReferenceModel(blade).model, 'reference');
  const mcq = (await loadSuite('blade-mcq', sharedData('blade', 'datasets'))).blocks.find((b) => b.id === 'hurricane')!;
  assert.equal(benchmarkToolSet(mcq).id, 'blade-mcq');
  assert.throws(() => benchmarkReferenceModel(mcq), /no reference agent for suite 'blade-mcq'/);
});
