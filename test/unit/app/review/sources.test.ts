import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_RUBRIC } from '../../../../src/core/review/pairwise.ts';
import { criteriaByBlock, pairCriteria } from '../../../../src/app/review/sources.ts';
import type { RunRecord } from '../../../../src/core/store/records.ts';

/** A stored run whose suite folder is gone: its block cannot be reopened. */
const run = (id: string, blockId: string, suite = 'analystbench'): RunRecord =>
  ({ id, suite, blockId, params: { suiteRoot: `/nonexistent/loupe-suite-${id}` } }) as unknown as RunRecord;

describe('pair criteria', () => {
  it('takes a rubric when one is set (deduplicated, trimmed), else falls back to the default rubric', async () => {
    assert.deepEqual(await pairCriteria(run('r1', 'b1'), { rubric: [' Accuracy ', 'Clarity', 'Accuracy', ''] }), {
      criteria: ['Accuracy', 'Clarity'],
      from: 'rubric',
    });
    assert.deepEqual(await pairCriteria(run('r1', 'b1')), { criteria: [...DEFAULT_RUBRIC], from: 'default' });
  });

  it('criteriaByBlock asks once per benchmark and block', async () => {
    const of = criteriaByBlock({ rubric: ['A'] });
    const p1 = of(run('r1', 'b1'));
    assert.equal(of(run('r2', 'b1')), p1, 'a second run of the same block reuses the first answer');
    assert.notEqual(of(run('r3', 'b2')), p1, 'another block is asked anew');
    assert.notEqual(of(run('r4', 'b1', 'ddr')), p1, 'the same block id in another benchmark is another block');
    assert.deepEqual(await p1, ['A']);
    assert.deepEqual(await criteriaByBlock()(run('r5', 'b9')), [...DEFAULT_RUBRIC]);
  });
});
