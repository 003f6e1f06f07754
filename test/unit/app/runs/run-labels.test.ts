/**
 * Issue 42 defect 6: runs of one profile on one block are told apart (profile + repeat index, short id, start time),
 * forks sit under their parent, and a DDR run whose every tool call failed is flagged, not "finished" like a good one.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore } from '../../../../src/core/store/run-store.ts';
import type { StepRecord } from '../../../../src/core/store/records.ts';
import type { RunStore } from '../../../../src/core/store/types.ts';
import { forkTree, runListings, runsWithEveryCallFailed, shortRunId } from '../../../../src/app/runs/run-labels.ts';

let dir = '';
let store: RunStore;
const base = (id: string, over: Record<string, unknown> = {}) => ({
  id,
  suite: 'ddr',
  blockId: 'mimic-10502319',
  agent: 'llm',
  model: 'scripted-1',
  params: {},
  promptHash: 'h',
  toolSet: 'ddr',
  dataChecksums: {},
  loupeVersion: 't',
  sandbox: 'off',
  workspace: join(dir, id),
  ...over,
});
const step = (runId: string, index: number, errors: boolean[]): StepRecord => {
  const now = new Date().toISOString();
  return {
    runId,
    index,
    startedAt: now,
    endedAt: now,
    latencyMs: 1,
    toolMs: 1,
    assistant: { role: 'assistant', content: '' },
    toolCalls: errors.map((e, k) => ({
      id: `c${index}-${k}`,
      name: 'execute_sql',
      argumentsText: '{"sql":"select 1"}',
      observation: e ? 'Error: no such table' : '1',
      isError: e,
      truncated: false,
      durationMs: 1,
    })),
    extraMessages: [],
    usage: { input: 1, output: 1, cached: 0 },
    costUsd: null,
    finishReason: 'tool_calls',
  };
};

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-run-labels-'));
  store = openStore(join(dir, 'runs.sqlite'));
  // two repeats of one profile; every call of the first failed, the second had one good call among failures
  await store.createRun(base('20261128T040001-aaaa1111'));
  for (let i = 0; i < 3; i++) await store.commitStep(step('20261128T040001-aaaa1111', i, [true, true]));
  await store.updateRun('20261128T040001-aaaa1111', { status: 'finished', startedAt: '2026-11-28T04:00:01Z' });
  await new Promise((r) => setTimeout(r, 5)); // distinct creation times
  await store.createRun(base('20261128T040502-bbbb2222'));
  await store.commitStep(step('20261128T040502-bbbb2222', 0, [true]));
  await store.commitStep(step('20261128T040502-bbbb2222', 1, [true, false]));
  await store.updateRun('20261128T040502-bbbb2222', { status: 'finished', startedAt: '2026-11-28T04:05:02Z' });
  await new Promise((r) => setTimeout(r, 5));
  // a fork of the second, and another profile (temperature) on the same block
  await store.createRun(
    base('20261128T041003-cccc3333', { params: { forkOf: { runId: '20261128T040502-bbbb2222', step: 1 } } }),
  );
  await store.createRun(base('20261128T041504-dddd4444', { params: { temperature: 0.7 } }));
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('run labels (issue 42 defect 6)', () => {
  it('two runs of one profile read differently: repeat index, short id, start time', async () => {
    const runs = await store.listRuns();
    const failed = await runsWithEveryCallFailed(store, runs);
    const l = runListings(runs, failed);
    const a = l.get('20261128T040001-aaaa1111')!;
    const b = l.get('20261128T040502-bbbb2222')!;
    assert.equal(a.label, 'scripted-1 #1');
    assert.equal(b.label, 'scripted-1 #2');
    assert.equal(a.ident, 'aaaa1111 · 11-28 04:00Z');
    assert.equal(b.ident, 'bbbb2222 · 11-28 04:05Z');
    assert.notEqual(`${a.label} ${a.ident}`, `${b.label} ${b.ident}`);
    assert.equal(
      l.get('20261128T041504-dddd4444')!.label,
      'scripted-1 · T=0.7 #1',
      'another profile numbers its own repeats',
    );
    // every call failed: flagged; one good call among failures: not
    assert.deepEqual([...failed.keys()], ['20261128T040001-aaaa1111']);
    assert.equal(a.status, 'finished, every tool call failed (6 calls)');
    assert.ok(a.flag);
    assert.equal(b.status, 'finished');
    assert.equal(b.flag, null);
  });

  it('forks sit under their parent; a fork of a run not listed, or a loop, stays at the top', async () => {
    const runs = await store.listRuns();
    const t = forkTree(runs);
    assert.deepEqual(
      t.forks.get('20261128T040502-bbbb2222')?.map((r) => r.id),
      ['20261128T041003-cccc3333'],
    );
    assert.ok(!t.roots.some((r) => r.id === '20261128T041003-cccc3333'));
    assert.equal(t.roots.length, 3);
    const loop = forkTree([
      { id: 'x', params: { forkOf: { runId: 'y', step: 1 } } },
      { id: 'y', params: { forkOf: { runId: 'x', step: 1 } } },
    ]);
    assert.equal(loop.roots.length + [...loop.forks.values()].flat().length, 2, 'no run lost in a loop');
    assert.ok(loop.roots.length >= 1);
    assert.equal(shortRunId('sf-longda-1'), 'sf-longda-1');
  });
});
