/**
 * SQLite: a run-store write made while a store transaction (a checklist save) is open on the same handle is not
 * part of that transaction (issue 41). The transaction's body awaits between its statements; before the write gate
 * (`sqliteWrite` in `store/sql.ts`) the step committed meanwhile joined it on the one connection and was rolled back
 * with it when the save failed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import type { StepRecord } from '../../../../src/core/agent/types.ts';
import { checklistStoreOf } from '../../../../src/core/annotations/checklists.ts';
import { annotationStoreOf } from '../../../../src/core/annotations/index.ts';
import { openStore, sqliteHandleOf } from '../../../../src/core/store/run-store.ts';

const tmp = mkdtempSync(join(tmpdir(), 'loupe-tx-interleave-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const KEY = { suite: 'ddr', suiteId: 'ddr:x', blockId: 'b1' };
const step = (runId: string, index: number): StepRecord => ({
  runId,
  index,
  startedAt: '2026-01-01T00:00:00.000Z',
  endedAt: '2026-01-01T00:00:01.000Z',
  latencyMs: 5,
  toolMs: 1,
  assistant: { role: 'assistant', content: `step ${index}`, tool_calls: [] },
  toolCalls: [],
  extraMessages: [],
  usage: { input: 10, output: 3, cached: 1 },
  costUsd: 0.5,
  finishReason: 'stop',
});
const run = {
  id: 'r1',
  suite: 'longda',
  blockId: 'B',
  agent: 'llm',
  model: 'm',
  params: {},
  promptHash: 'h',
  toolSet: 'longda',
  dataChecksums: {},
  loupeVersion: '0.1.0',
  sandbox: 'off',
  workspace: '/tmp/w',
};

/** Waits (bounded in turns) until a transaction is open on the handle. */
async function untilInTransaction(h: { inTransaction: boolean }): Promise<void> {
  for (let i = 0; i < 1000 && !h.inTransaction; i++) await Promise.resolve();
  assert.ok(h.inTransaction, 'the checklist save opened its transaction');
}

it('a step committed while a checklist save is inside its transaction survives that transaction failing', async () => {
  const s = openStore(join(tmp, 'a.sqlite'));
  try {
    await s.createRun(run);
    const h = sqliteHandleOf(s);
    // the save's INSERT fails inside its transaction (after the reads the body awaits)
    h.exec(
      `CREATE TRIGGER fail_checklist BEFORE INSERT ON checklist_versions BEGIN SELECT RAISE(ABORT, 'injected failure'); END`,
    );
    const save = checklistStoreOf(s).save(KEY, {
      base: null,
      items: [
        { id: 'c1', kind: 'fact', question: 'q?', answer: 'a', author: 'ann', updatedAt: '2026-01-01T00:00:00.000Z' },
      ],
      author: 'ann',
    });
    await untilInTransaction(h);
    const commit = s.commitStep(step('r1', 0), { notes: ['kept'] });
    const event = s.addEvent('r1', 'info', 'kept too');
    const draft = annotationStoreOf(s).release('q-none', 'i-none', 'ann');
    await assert.rejects(save, /injected failure/);
    await Promise.all([commit, event, draft]);
    assert.equal(h.inTransaction, false);
    assert.deepEqual(
      (await s.getSteps('r1')).map((x) => x.index),
      [0],
    );
    assert.equal((await s.getRun('r1'))?.steps, 1);
    assert.deepEqual(await s.getNotes('r1'), ['kept']);
    assert.deepEqual(
      (await s.getEvents('r1')).map((e) => e.message),
      ['kept too'],
    );
    assert.deepEqual(await checklistStoreOf(s).versions(KEY), []);
    // the handle is usable afterwards: a save without the fault commits
    h.exec('DROP TRIGGER fail_checklist');
    assert.equal((await checklistStoreOf(s).save(KEY, { base: null, items: [], author: 'ann' })).version.version, 1);
  } finally {
    await s.close();
  }
});

it('a step committed while a checklist save is open waits for it and lands after it commits', async () => {
  const s = openStore(join(tmp, 'b.sqlite'));
  try {
    await s.createRun(run);
    const h = sqliteHandleOf(s);
    const save = checklistStoreOf(s).save(KEY, { base: null, items: [], author: 'ann' });
    await untilInTransaction(h);
    const commit = s.commitStep(step('r1', 0));
    await Promise.all([save, commit]);
    assert.deepEqual(
      (await s.getSteps('r1')).map((x) => x.index),
      [0],
    );
    assert.equal((await checklistStoreOf(s).versions(KEY)).length, 1);
  } finally {
    await s.close();
  }
});
