/**
 * The timeline opens from the store off the host's thread (issue 23): a store file answers summaries and searches
 * from a worker thread with the same results as in-thread; openTimeline's watermark lets followTimeline deliver only
 * steps committed after the open, each once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../../../src/core/store/run-store.ts';
import { OffThreadReader } from '../../../../src/core/store/read-worker.ts';
import { followTimeline, openTimeline, toTimelineStep } from '../../../../src/app/timeline/timeline.ts';
import type { StepRecord } from '../../../../src/core/agent/types.ts';
import type { TimelineStep } from '../../../../src/protocol/timeline.ts';

const T0 = Date.UTC(2026, 0, 1);
function step(runId: string, i: number): StepRecord {
  const t = new Date(T0 + i * 1000).toISOString();
  return {
    runId,
    index: i,
    startedAt: t,
    endedAt: t,
    latencyMs: 10 + i,
    toolMs: i,
    assistant: { role: 'assistant', content: `step ${i}` },
    toolCalls: [
      {
        id: `c${i}`,
        name: i % 2 ? 'python' : 'notes',
        argumentsText: JSON.stringify({ code: `x = ${i}` }),
        observation: `obs ${i} ${'y'.repeat(3000)}`,
        isError: i === 3,
        truncated: false,
        durationMs: 1,
      },
    ],
    extraMessages: [],
    usage: { input: 5, output: 1, cached: 0 },
    costUsd: null,
    finishReason: 'tool_calls',
  };
}
const newRun = (id: string, dir: string) => ({
  id,
  suite: 'longda',
  blockId: 'b',
  agent: 'llm',
  model: 'm',
  params: {},
  promptHash: 'h',
  toolSet: 't',
  dataChecksums: {},
  loupeVersion: 'test',
  sandbox: 'off' as const,
  workspace: dir,
});

test('a store file reads summaries and searches on a worker thread, with the in-thread results and seqs', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loupe-tl-open-'));
  const file = openStore(join(dir, 'runs.sqlite'));
  const mem = openStore(':memory:');
  try {
    for (const s of [file, mem]) {
      await s.createRun(newRun('a', dir));
      await s.createRun(newRun('b', dir));
      for (let i = 0; i < 12; i++) {
        await s.commitStep(step('a', i));
        await s.commitStep(step('b', i));
      }
    }
    const fromFile = await file.getStepSummaries('a');
    assert.deepEqual(fromFile, await mem.getStepSummaries('a'));
    assert.deepEqual(
      fromFile.map((x) => x.seq),
      Array.from({ length: 12 }, (_, i) => 2 * i + 1),
      'global commit order',
    );
    for (const q of ['python', 'obs 7', 'X = 1', 'nothing']) {
      assert.deepEqual(await file.searchSteps('a', q), await mem.searchSteps('a', q), q);
    }
    // the worker answered (not the in-thread fallback): the same statement through a reader of that file
    const r = new OffThreadReader(join(dir, 'runs.sqlite'));
    assert.equal((await r.all('SELECT count(*) AS n FROM steps WHERE run_id = ?', ['a']))?.[0]?.n, 12);
    r.close();
    assert.equal(
      await r.all('SELECT 1', []),
      undefined,
      'a closed reader answers undefined (the caller reads in-thread)',
    );
  } finally {
    await file.close();
    await mem.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('openTimeline + followTimeline: rows from summaries, then only steps committed after the open, once each', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loupe-tl-follow-'));
  const path = join(dir, 'runs.sqlite');
  const writer = openStore(path);
  const reader = openStore(path);
  try {
    await writer.createRun(newRun('a', dir));
    await writer.createRun(newRun('other', dir));
    for (let i = 0; i < 5; i++) await writer.commitStep(step('a', i));
    const opened = await openTimeline(reader, 'a');
    assert.equal(opened.steps.length, 5);
    assert.deepEqual(
      opened.steps,
      (await reader.getSteps('a')).map((s) => toTimelineStep(s, opened.runStartMs)),
    );
    assert.equal(opened.lastSeq, 5);
    const got: TimelineStep[] = [];
    const known = new Set(opened.steps.map((s) => s.index));
    const stop = followTimeline(reader, opened, known, (rows) => got.push(...rows));
    for (let i = 5; i < 8; i++) {
      await writer.commitStep(step('a', i));
      await writer.commitStep(step('other', i));
    }
    const until = Date.now() + 5000;
    while (got.length < 3 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 250));
    stop();
    assert.deepEqual(
      got.map((s) => s.index),
      [5, 6, 7],
      'new steps of this run only, each once',
    );
    assert.ok(known.has(7));
    await assert.rejects(openTimeline(reader, 'nope'), /nope/);
  } finally {
    await writer.close();
    await reader.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('followTimeline.poll(): a step committed in this process reaches the timeline without its poll, once, in order', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loupe-tl-push-'));
  const store = openStore(join(dir, 'runs.sqlite'));
  try {
    await store.createRun(newRun('a', dir));
    await store.createRun(newRun('other', dir));
    for (let i = 0; i < 2; i++) await store.commitStep(step('a', i));
    const opened = await openTimeline(store, 'a');
    const batches: number[][] = [];
    const known = new Set(opened.steps.map((s) => s.index));
    // a poll no test waits for: rows can only come from poll(), as the run session's step-end triggers it
    const follow = followTimeline(store, opened, known, (rows) => batches.push(rows.map((r) => r.index)), {
      intervalMs: 3_600_000,
    });
    const settle = async (n: number) => {
      for (let i = 0; i < 200 && batches.flat().length < n; i++) await new Promise((r) => setTimeout(r, 10));
    };
    await store.commitStep(step('a', 2));
    follow.poll();
    await settle(1);
    assert.deepEqual(batches, [[2]]);
    // a burst: several commits, a poll after each (and a spare one) — in commit order, no step twice, and the rows
    // read within the batching window of a message go together in the next one
    for (let i = 3; i < 6; i++) {
      await store.commitStep(step('a', i));
      await store.commitStep(step('other', i));
      follow.poll();
    }
    follow.poll();
    await settle(4);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(batches.flat(), [2, 3, 4, 5]);
    assert.ok(batches.length < 4, `the burst was batched: ${JSON.stringify(batches)}`);
    // two steps in one read: one message
    await store.commitStep(step('a', 6));
    await store.commitStep(step('a', 7));
    follow.poll();
    await settle(6);
    assert.deepEqual(batches.at(-1), [6, 7]);
    assert.deepEqual(
      [...known].sort((x, y) => x - y),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );
    follow();
    await store.commitStep(step('a', 8));
    follow.poll();
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(batches.flat(), [2, 3, 4, 5, 6, 7], 'nothing after stop');
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
