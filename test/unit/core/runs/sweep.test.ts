/**
 * Sweeps in the run store (issue 27), on both engines: the units of a sweep are pending runs carrying the sweep id
 * (migration 17), listed by sweep, counted per model; a sweep id is used once; a worker records where the workspace
 * is on its machine. Unit planning and the settled / retry rule without a database.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import '../../../fixtures/benchmarks/register.ts';
import { forEachEngine } from '../../../helpers/store-engines.ts';
import { loadSuite } from '../../../../src/core/benchmarks/index.ts';
import {
  planSweep,
  recordSweepRuns,
  sweepProgress,
  sweepProgressOf,
  unitSettled,
  unitState,
  type SweepSpec,
} from '../../../../src/core/runs/sweep.ts';
import type { RunRecord } from '../../../../src/core/store/records.ts';
import { LoupeInputError } from '../../../../src/core/util/errors.ts';

async function suite() {
  const root = mkdtempSync(join(tmpdir(), 'loupe-sweep-core-'));
  mkdirSync(join(root, 'data'));
  writeFileSync(join(root, 'data', 'a.csv'), 'x\n1\n2\n');
  writeFileSync(join(root, 'data', 'b.csv'), 'x\n1\n');
  return loadSuite('count-rows', root);
}

const spec = (s: Awaited<ReturnType<typeof suite>>, over: Partial<SweepSpec> = {}): SweepSpec => ({
  sweepId: 'sw1',
  suite: s,
  blocks: s.blocks,
  repeats: 2,
  agent: 'llm',
  apiKeyEnv: 'MY_KEY',
  kernel: {},
  profiles: [
    { model: 'm1', baseUrl: 'http://127.0.0.1:9/v1' },
    { model: 'm2', baseUrl: 'http://127.0.0.1:9/v1' },
  ],
  ...over,
});

it('planSweep: blocks × repeats × profiles, ids numbered in order, no key in a unit; bad input names the thing', async () => {
  const s = await suite();
  const units = planSweep(spec(s));
  assert.equal(units.length, 2 * 2 * 2);
  assert.deepEqual(units.map((u) => [u.runId, u.blockId, u.repeat, u.profile?.model]).slice(0, 3), [
    ['sw1-u0001', 'a', 1, 'm1'],
    ['sw1-u0002', 'a', 1, 'm2'],
    ['sw1-u0003', 'a', 2, 'm1'],
  ]);
  assert.ok(units.every((u) => u.apiKeyEnv === 'MY_KEY' && !JSON.stringify(u).includes('apiKey"')));
  assert.throws(
    () => planSweep(spec(s, { sweepId: 'bad id!' })),
    (e: unknown) => e instanceof LoupeInputError && /sweep bad id!/.test(e.message),
  );
  assert.throws(() => planSweep(spec(s, { repeats: 0 })), /repeats: must be a whole number/);
  assert.throws(() => planSweep(spec(s, { profiles: [] })), /model profiles/);
  assert.equal(planSweep(spec(s, { agent: 'reference', profiles: [] })).length, 4);
});

it('unitSettled / unitState: outcomes complete a unit, a dead worker, a stop or an internal error retry it', () => {
  const r = (status: RunRecord['status'], statusReason: string | null = null) => ({ status, statusReason });
  assert.equal(unitSettled(r('finished')), true);
  assert.equal(unitSettled(r('budget_exhausted')), true);
  assert.equal(unitSettled(r('failed', 'the model replied 5 times in a row without a tool call')), true);
  assert.equal(unitSettled(r('failed', 'internal error: cannot reach PostgreSQL')), false);
  assert.equal(unitSettled(r('cancelled', 'worker stopping (SIGTERM)')), false);
  assert.equal(unitSettled(r('running')), false);
  assert.deepEqual(
    [r('pending'), r('running'), r('finished'), r('failed', 'x'), r('cancelled'), r('failed', 'internal error: y')].map(
      unitState,
    ),
    ['queued', 'running', 'done', 'failed', 'queued', 'queued'],
  );
});

forEachEngine((e) => {
  it("a sweep's units are pending runs of the sweep; progress per model; a sweep id is used once; a worker moves the workspace", async () => {
    const s = await suite();
    const store = await e.open(await e.fresh());
    try {
      const units = planSweep(spec(s));
      const runs = await recordSweepRuns(store, s, units, '/nowhere/runs');
      assert.equal(runs.length, 8);
      assert.ok(
        runs.every(
          (r) =>
            r.status === 'pending' &&
            r.sweepId === 'sw1' &&
            r.steps === 0 &&
            r.params.maxSteps === 3 &&
            r.params.repeat,
        ),
      );
      assert.equal(runs[0]!.storedWorkspace, '/nowhere/runs/sw1-u0001/workspace');
      assert.equal((await store.listRuns({ sweepId: 'sw1' })).length, 8);
      assert.equal((await store.listRuns({ sweepId: 'other' })).length, 0);
      await store.updateRun('sw1-u0001', { status: 'finished', workspace: '/worker/runs/sw1-u0001/workspace' });
      await store.updateRun('sw1-u0002', { status: 'running' });
      await store.updateRun('sw1-u0004', {
        status: 'failed',
        statusReason: 'the model replied 5 times in a row without a tool call',
      });
      assert.equal((await store.getRun('sw1-u0001'))!.storedWorkspace, '/worker/runs/sw1-u0001/workspace');
      const p = await sweepProgress(store, 'sw1');
      assert.deepEqual(
        p.models.map((m) => [m.model, m.total, m.done, m.running, m.failed, m.queued]),
        [
          ['m1', 4, 1, 0, 0, 3],
          ['m2', 4, 0, 1, 1, 2],
        ],
      );
      assert.deepEqual(p.total, { model: 'all', total: 8, done: 1, running: 1, failed: 1, queued: 5 });
      assert.deepEqual(sweepProgressOf('sw1', await store.listRuns({ sweepId: 'sw1' })), p);
      await assert.rejects(recordSweepRuns(store, s, units, '/nowhere/runs'), /sweep sw1: already exists/);
      await assert.rejects(sweepProgress(store, 'nope'), /sweep nope: no unit of this sweep/);
      // a unit that cannot be recorded (count-rows has no reference agent) records none of the sweep
      await assert.rejects(
        recordSweepRuns(
          store,
          s,
          planSweep(spec(s, { sweepId: 'sw2', agent: 'reference', profiles: [] })),
          '/nowhere/runs',
        ),
        /no reference agent/,
      );
      assert.equal((await store.listRuns({ sweepId: 'sw2' })).length, 0);
    } finally {
      await store.close();
    }
  });
});
