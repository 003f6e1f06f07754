import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, sqliteHandleOf } from '../../../../src/core/store/run-store.ts';
import { migrations } from '../../../../src/core/store/migrations.ts';
import type { StepRecord } from '../../../../src/core/agent/types.ts';

function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'loupe-store-'));
}

function step(runId: string, index: number): StepRecord {
  return {
    runId, index, startedAt: new Date().toISOString(), endedAt: new Date().toISOString(), latencyMs: 5, toolMs: 1,
    assistant: { role: 'assistant', content: `step ${index}`, tool_calls: [] }, toolCalls: [], extraMessages: [],
    usage: { input: 10, output: 3, cached: 1 }, costUsd: 0.5, finishReason: 'stop',
  };
}

const base = {
  suite: 'longda', blockId: 'B', agent: 'llm', model: 'm', params: { temperature: 0 }, promptHash: 'h', toolSet: 'longda',
  dataChecksums: { 'a.csv': 'x' }, loupeVersion: '0.1.0', sandbox: 'off', workspace: '/tmp/w',
};

test('store: migrations applied once, WAL on, reopen keeps data', async () => {
  const dir = tmp();
  try {
    const file = join(dir, 'runs.sqlite');
    const s = openStore(file);
    const last = migrations[migrations.length - 1]!.id;
    assert.equal(await s.schemaVersion(), last);
    assert.equal(sqliteHandleOf(s).pragma('journal_mode', { simple: true }), 'wal');
    await s.createRun({ ...base, id: 'r1' });
    s.close();
    const s2 = openStore(file, [{ id: last + 1, name: 'extra', sql: 'CREATE TABLE extra_t (x INTEGER)' }]);
    assert.equal(await s2.schemaVersion(), last + 1);
    assert.equal((await s2.getRun('r1'))?.blockId, 'B');
    s2.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('store: duplicate migration ids are refused with both names', () => {
  assert.throws(() => openStore(':memory:', [{ id: 1, name: 'clash', sql: 'SELECT 1' }]), /two migrations share id 1/);
});

test('store: commitStep is atomic with effects, sums tokens and cost, refuses duplicates', async () => {
  const s = openStore(':memory:');
  await s.createRun({ ...base, id: 'r1' });
  await s.commitStep(step('r1', 0), {
    answers: [{ runId: 'r1', queryId: 'q1', answer: 40.3, raw: '40.3', stepIndex: 0 }], notes: ['n1'], savedCode: 'print(1)',
    cells: [{ runId: 'r1', seq: 0, stepIndex: 0, code: '1+1', status: 'ok', stdout: '', stderr: '', result: '2', error: null, tables: [], figures: [Buffer.from('png').toString('base64')], durationMs: 3, replay: false }],
    extra: { k: 1 },
  });
  await s.commitStep(step('r1', 1), { answers: [{ runId: 'r1', queryId: 'q1', answer: [1, 2], raw: '[1, 2]', stepIndex: 1 }] });
  await assert.rejects(s.commitStep(step('r1', 1)), /UNIQUE|constraint/i);
  const run = (await s.getRun('r1'))!;
  assert.equal(run.steps, 2);
  assert.deepEqual(run.tokens, { input: 20, output: 6, cached: 2 });
  assert.equal(run.costUsd, 1);
  assert.deepEqual((await s.getAnswers('r1')).map((a) => a.answer), [[1, 2]]);
  assert.deepEqual(await s.getNotes('r1'), ['n1']);
  assert.equal(await s.getSavedCode('r1'), 'print(1)');
  assert.deepEqual(await s.getExtraState('r1'), { k: 1 });
  const cells = await s.getCells('r1');
  assert.equal(cells.length, 1);
  assert.equal(Buffer.from(cells[0]!.figures[0]!, 'base64').toString(), 'png');
  assert.equal(await s.nextCellSeq('r1'), 1);
  assert.deepEqual((await s.getSteps('r1')).map((x) => x.index), [0, 1]);
  assert.deepEqual((await s.getSteps('r1', 1)).map((x) => x.index), [1]);
  assert.equal((await s.getStep('r1', 1))?.index, 1);
  assert.equal((await s.getStep('r1', 0))?.index, 0);
  assert.equal(await s.getStep('r1', 7), undefined);
  s.close();
});

test('store: a failed step transaction leaves no partial effects', async () => {
  const s = openStore(':memory:');
  await s.createRun({ ...base, id: 'r1' });
  await s.commitStep(step('r1', 0));
  await assert.rejects(s.commitStep(step('r1', 0), { answers: [{ runId: 'r1', queryId: 'qX', answer: 1, raw: '1', stepIndex: 0 }] }));
  assert.equal((await s.getAnswers('r1')).length, 0);
  assert.equal((await s.getRun('r1'))!.steps, 1);
  s.close();
});

test('store: listRuns filters, subscribeSteps sees steps written by another connection', async () => {
  const dir = tmp();
  try {
    const file = join(dir, 'runs.sqlite');
    const writer = openStore(file);
    const reader = openStore(file);
    await writer.createRun({ ...base, id: 'r1' });
    await writer.createRun({ ...base, id: 'r2', blockId: 'C' });
    assert.deepEqual((await reader.listRuns({ blockId: 'C' })).map((r) => r.id), ['r2']);
    const seen: string[] = [];
    const unsub = reader.subscribeSteps((st) => seen.push(`${st.runId}:${st.index}`), { intervalMs: 10 });
    await writer.commitStep(step('r1', 0));
    await writer.commitStep(step('r2', 0));
    for (let i = 0; i < 100 && seen.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    unsub();
    assert.deepEqual(seen, ['r1:0', 'r2:0']);
    writer.close();
    reader.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
