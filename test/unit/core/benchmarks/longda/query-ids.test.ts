/**
 * Issue 40: LongDA scoring has one query id (LongTA's q_id) and one documented mapping from the ids stored runs
 * used (`q1`, the uid, the q_id: `longdaQIdOf`). Runs recorded with each id score exactly as the code before the
 * change scored them (test/fixtures/longda-ids/expected.json, printed by the tree at d84c5fa; see its README).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { longdaQIdOf } from '../../../../../src/core/benchmarks/longda/score.ts';
import type { Block } from '../../../../../src/core/suites/types.ts';
import { sharedData } from '../../../../helpers/shared.ts';

const FIX = join(import.meta.dirname, '../../../../fixtures/longda-ids');
const ROOT = join(import.meta.dirname, '../../../../..');

it('runs whose answers name queries by id, uid or q_id score as before the single query id', () => {
  const r = spawnSync(process.execPath, [join(FIX, 'record.ts'), ROOT, sharedData('longda', 'benchmark')], {
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON' },
  });
  assert.equal(r.status, 0, r.stderr);
  const got = JSON.parse(r.stdout) as { runs: Array<{ runId: string; summary: Record<string, unknown> }> };
  assert.deepEqual(got, JSON.parse(readFileSync(join(FIX, 'expected.json'), 'utf8')));
  // the three id kinds give one score
  assert.deepEqual(got.runs[0]!.summary, got.runs[1]!.summary);
  assert.deepEqual(got.runs[1]!.summary, got.runs[2]!.summary);
});

it('longdaQIdOf maps q1, the uid and the q_id to the q_id, and keeps unknown ids', () => {
  const block = { items: [{ type: 'longda-query', id: 'q1', uid: 'B/q1', longdaId: 'S_P_q1' }] } as unknown as Block;
  const of = longdaQIdOf(block);
  assert.deepEqual(['q1', 'B/q1', 'S_P_q1', 'q9'].map(of), ['S_P_q1', 'S_P_q1', 'S_P_q1', 'q9']);
});
