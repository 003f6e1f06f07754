/**
 * Runs every LongDA NHANES reference script (benchmarks/longda/reference/<block-id>.py) in the
 * sandboxed kernel, in a real task workspace built from ../shared, and scores its answers against
 * benchmark.csv with LongDA's tolerance τ = max(0.05·|g|, 1) (spec §2.4).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PythonKernel, LONGTA_IMPORT_ALLOWLIST, findBubblewrap } from '../../../../../src/core/kernel/index.ts';
import { kernelPlacement } from '../../../../../src/core/runs/runner.ts';
import { loadLongda } from '../../../../../src/core/benchmarks/longda/load.ts';
import { compareLongdaValues } from '../../../../../src/core/benchmarks/longda/eval.ts';
import type { Block } from '../../../../../src/core/suites/types.ts';
import { repoRoot, sharedData } from '../../../../helpers/shared.ts';
import type { LongdaQuery } from '../../../../../src/core/benchmarks/longda/items.ts';

const REF_DIR = join(repoRoot, 'benchmarks', 'longda', 'reference');

/**
 * What each script is expected to reproduce: every element within tolerance, except the listed
 * `q<i>[element]` misses, each with its reason (documented in benchmarks/longda/reference/README.md).
 */
const EXPECTED: Record<string, { misses: string[]; why?: string }> = {
  'NHANES_NCHS_Data_Brief_No._508': { misses: [] },
  'NHANES_NCHS_Data_Brief_No._511': { misses: [] },
  'NHANES_NCHS_Data_Brief_No._515': { misses: [] },
  'NHANES_NCHS_Data_Brief_No._516': { misses: [] },
  'NHANES_NCHS_Data_Brief_No._527': {
    misses: ['q2[0]', 'q4[0]', 'q5[0]', 'q7[2]', 'q8[0]'],
    why: 'DPQ_L in the snapshot has ages 18+ only: the 12–19 group is 18–19-year-olds and 12+ estimates are 18+',
  },
};
/** NHANES blocks with no script, and why. */
const NOT_COMPUTABLE: Record<string, string> = {
  'NHANES_NCHS_Data_Brief_No._533':
    'needs the 24-hour dietary recall files DR1IFF_L / DR1TOT_L, absent from the snapshot',
  'NHANES_NCHS_Data_Brief_No._538':
    'needs the dietary interview fish/shellfish items of DR1TOT_L, absent from the snapshot',
};

describe('benchmarks/longda/reference scripts on the real NHANES data', () => {
  let blocks: Block[];
  let runDir: string;
  let kernel: PythonKernel;

  before(async () => {
    const suite = loadLongda(sharedData('longda', 'benchmark'));
    blocks = suite.blocks.filter((b) => b.longda?.survey === 'NHANES');
    runDir = mkdtempSync(join(tmpdir(), 'loupe-ref-'));
    // Every NHANES block shows the same survey files, so one workspace and one kernel serve all.
    const sandbox = findBubblewrap() ? 'bubblewrap' : 'off';
    kernel = await PythonKernel.start({
      ...kernelPlacement(runDir, blocks[0]!, sandbox),
      sandbox,
      importAllowlist: LONGTA_IMPORT_ALLOWLIST,
      preamble: 'DATA_DIR = "data"',
    });
  });
  after(async () => {
    await kernel?.close();
    if (runDir) rmSync(runDir, { recursive: true, force: true });
  });

  it('has a script for every computable NHANES block and a reason for the others', () => {
    assert.ok(blocks.length >= 7, `NHANES blocks: ${blocks.map((b) => b.id).join(', ')}`);
    for (const b of blocks) {
      const has = existsSync(join(REF_DIR, `${b.id}.py`));
      if (NOT_COMPUTABLE[b.id]) assert.ok(!has, `${b.id} is listed as not computable but has a script`);
      else assert.ok(has && EXPECTED[b.id], `block ${b.id} has no reference script / expectation`);
    }
  });

  for (const [blockId, expected] of Object.entries(EXPECTED)) {
    it(`${blockId}: computes every answer from the microdata within LongDA tolerance${expected.misses.length ? `, except the documented known differences ${expected.misses.join(', ')}` : ''}`, async (t) => {
      const block = blocks.find((b) => b.id === blockId);
      assert.ok(block, `block ${blockId} not in benchmark.csv`);
      const code = readFileSync(join(REF_DIR, `${blockId}.py`), 'utf8');
      const r = await kernel.execute(code, { timeoutMs: 60_000 });
      assert.equal(r.status, 'ok', `${r.stderr}\n${r.error?.traceback.join('\n') ?? ''}`);
      const last = r.stdout.trim().split('\n').pop() ?? '';
      const answers = JSON.parse(last) as Record<string, number | number[]>;
      const queries = block.items as LongdaQuery[];
      assert.deepEqual(Object.keys(answers).sort(), queries.map((q) => q.id).sort(), 'one answer per query');
      const misses: string[] = [];
      const lines: string[] = [];
      for (const q of queries) {
        const a = answers[q.id]!;
        const g = q.groundTruth;
        if (q.answerStructure.kind === 'list') {
          assert.ok(
            Array.isArray(a) && a.length === q.answerStructure.length,
            `${q.id}: list of ${q.answerStructure.length}`,
          );
        }
        const c = compareLongdaValues(a, g);
        assert.equal(c.comparable, 1, `${q.id} comparable`);
        c.hits!.forEach((h, i) => {
          if (h !== 1) misses.push(Array.isArray(g) ? `${q.id}[${i}]` : q.id);
        });
        lines.push(`${q.id}: ${JSON.stringify(a)} vs ${JSON.stringify(g)}${c.matchStrict ? '' : '  <-- miss'}`);
      }
      t.diagnostic(
        `${blockId}: ${queries.length - new Set(misses.map((m) => m.split('[')[0])).size}/${queries.length} queries fully within tolerance\n${lines.join('\n')}`,
      );
      assert.deepEqual(
        misses,
        expected.misses,
        `${blockId} misses${expected.why ? ` (${expected.why})` : ''}:\n${lines.join('\n')}`,
      );
    });
  }

  it('508 and 515 reproduce the published values exactly (not just within tolerance)', async () => {
    for (const [id, checks] of [
      ['NHANES_NCHS_Data_Brief_No._508', { q1: 40.3, q2: [39.2, 41.3], q3: [35.5, 46.4, 38.9] }],
      ['NHANES_NCHS_Data_Brief_No._515', { q1: 11.3 }],
    ] as const) {
      const r = await kernel.execute(readFileSync(join(REF_DIR, `${id}.py`), 'utf8'));
      const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
      for (const [k, v] of Object.entries(checks)) assert.deepEqual(out[k], v, `${id} ${k}`);
    }
  });
});
