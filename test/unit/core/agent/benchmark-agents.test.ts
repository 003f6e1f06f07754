/** Tool-set selection and named tool-set options of each benchmark, through the registry (no kernel, no model). */
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { BLADE_REFERENCE_MAX_STEPS } from '../../../../src/core/benchmarks/blade/index.ts';
import { getBenchmark } from '../../../../src/core/benchmarks/registry.ts';
import { splitOptionPairs } from '../../../../src/core/benchmarks/options.ts';
import { parseToolOptions } from '../../../../src/core/runs/runner.ts';
import { loadSuite } from '../../../../src/core/benchmarks/index.ts';
import { LoupeInputError } from '../../../../src/core/util/errors.ts';
import { sharedData } from '../../../helpers/shared.ts';

const parse = (suite: string, pairs: string[]) => parseToolOptions(suite, splitOptionPairs(pairs, '--tool-option'));

test('named tool-set options are checked per suite and parsed once into typed values with their defaults', () => {
  assert.deepEqual(parse('ddr', ['finishRule=code', 'queryTimeoutMs=5000', 'python=false']), {
    finishRule: 'code',
    emptyInsights: 'zero',
    insights: 'separate-call',
    python: false,
    forcedSummary: true,
    queryTimeoutMs: 5000,
  });
  assert.deepEqual(parse('analystbench', ['input=template', 'template=/x.md']), {
    input: 'template',
    template: '/x.md',
  });
  assert.throws(
    () => parse('ddr', ['finishRule=sometimes']),
    /tool option finishRule: must be one of paper, code, got 'sometimes'/,
  );
  assert.throws(() => parse('ddr', ['queryTimeoutMs=-1']), /positive number/);
  assert.throws(
    () => parse('blade', ['finishRule=code']),
    (e: unknown) =>
      e instanceof LoupeInputError &&
      /tool option finishRule: unknown for suite blade \(options: useDataDescription\)/.test(e.message),
  );
  assert.throws(() => parse('longda', ['x=1']), /options: findVariables, findVariablesDecompose\)/);
  assert.deepEqual(parse('longda', []), { findVariables: false, findVariablesDecompose: 'off' }); // LongTA's tools exactly, unless asked
  assert.deepEqual(parse('longda', ['findVariables=true', 'findVariablesDecompose=run-model']), {
    findVariables: true,
    findVariablesDecompose: 'run-model',
  });
  assert.throws(
    () => parse('longda', ['findVariablesDecompose=yes']),
    /tool option findVariablesDecompose: must be one of off, run-model, got 'yes'/,
  );
  assert.throws(() => parse('ddr', ['finishRule']), /expected name=value/);
});

test('tool set per suite; the BLADE reference agent gets one step per candidate path', async () => {
  const blade = (await loadSuite('blade', sharedData('blade', 'datasets'))).blocks.find((b) => b.id === 'hurricane')!;
  const def = getBenchmark('blade');
  const ts = (o: { agent?: 'llm' | 'reference'; maxSteps?: number; options?: Record<string, string> } = {}) =>
    def.toolSet({
      block: blade,
      agent: o.agent ?? 'llm',
      options: parseToolOptions('blade', o.options),
      ...(o.maxSteps ? { maxSteps: o.maxSteps } : {}),
    });
  assert.equal(ts().defaultMaxSteps, 10);
  assert.equal(ts({ agent: 'reference' }).defaultMaxSteps, BLADE_REFERENCE_MAX_STEPS);
  assert.equal(ts({ agent: 'reference', maxSteps: 3 }).defaultMaxSteps, 3);
  assert.doesNotMatch(ts({ options: { useDataDescription: 'false' } }).buildBlockPrompt(blade), /Simonsohn/);
  assert.equal(def.referenceAgent!(blade, {}).model, 'reference');
  const mcq = (await loadSuite('blade-mcq', sharedData('blade', 'datasets'))).blocks.find((b) => b.id === 'hurricane')!;
  assert.equal(getBenchmark('blade-mcq').toolSet({ block: mcq, agent: 'llm', options: {} }).id, 'blade-mcq');
  assert.equal(getBenchmark('blade-mcq').referenceAgent, null, 'BLADE MCQ has no reference agent');
});
