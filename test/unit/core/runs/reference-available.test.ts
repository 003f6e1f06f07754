/** Issue 22: the run picker offers the reference agent only for blocks it can run, and says why not in words. */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadSuite } from '../../../../src/core/benchmarks/index.ts';
import { defaultReferenceDir } from '../../../../src/core/benchmarks/paths.ts';
import { referenceAgentAvailable } from '../../../../src/core/runs/runner.ts';
import { sharedData } from '../../../helpers/shared.ts';

describe('reference agent availability (issue 22)', () => {
  it('LongDA: blocks with a reference script can run it; the others say which script is missing', async () => {
    const suite = await loadSuite('longda', sharedData('longda', 'benchmark'), {});
    const dir = defaultReferenceDir('longda');
    const withScript = suite.blocks.filter((b) => existsSync(join(dir, `${b.id}.py`)));
    const without = suite.blocks.filter((b) => !existsSync(join(dir, `${b.id}.py`)));
    assert.ok(withScript.length > 0 && without.length > 0, `${withScript.length} with, ${without.length} without`);
    assert.deepEqual(referenceAgentAvailable(withScript[0]!), { ok: true });
    const no = referenceAgentAvailable(without[0]!);
    assert.equal(no.ok, false);
    assert.match(
      !no.ok ? no.reason : '',
      new RegExp(`no reference script for block ${without[0]!.id.replace(/[.]/g, '\\.')}`),
    );
    assert.doesNotMatch(!no.ok ? no.reason : '', /--\w/, 'no CLI flag in the reason');
  });

  it('a benchmark without a reference agent (BLADE MCQ) says so', async () => {
    const suite = await loadSuite('blade-mcq', sharedData('blade', 'datasets'), {});
    const r = referenceAgentAvailable(suite.blocks[0]!);
    assert.deepEqual(r, { ok: false, reason: 'BLADE MCQ has no reference agent' });
  });
});
