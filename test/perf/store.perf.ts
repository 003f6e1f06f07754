/**
 * Run store engines (issue 26): a step commit (one step with a tool call and a 2 KB observation, two answers, the
 * notes list) on the PostgreSQL team store over loopback against the embedded SQLite file, measured in the same run
 * (goal: PostgreSQL median ≤ 3× SQLite's). PostgreSQL runs with its default durability (fsync on, synchronous_commit
 * on); SQLite with the store's own settings (WAL, synchronous = NORMAL). Also: a read of 300 steps on each engine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StepRecord } from '../../src/core/agent/types.ts';
import { openStoreAt } from '../../src/core/store/open.ts';
import type { RunStore } from '../../src/core/store/types.ts';
import { startPg } from '../helpers/pg.ts';
import { verdict } from './verdict.ts';

const STEPS = 300;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)]!;

function step(runId: string, index: number): StepRecord {
  const args = JSON.stringify({ code: `df.groupby('x').mean()  # ${index}` });
  return {
    runId,
    index,
    startedAt: new Date().toISOString(),
    endedAt: new Date().toISOString(),
    latencyMs: 800,
    toolMs: 20,
    assistant: {
      role: 'assistant',
      content: `Step ${index}: grouping by x.`,
      tool_calls: [{ id: `c${index}`, type: 'function', function: { name: 'python', arguments: args } }],
    },
    toolCalls: [
      {
        id: `c${index}`,
        name: 'python',
        argumentsText: args,
        observation: 'row '.repeat(512),
        isError: false,
        truncated: false,
        durationMs: 20,
      },
    ],
    extraMessages: [],
    usage: { input: 4000 + index, output: 120, cached: 0 },
    costUsd: 0.001,
    finishReason: 'tool_calls',
  };
}

async function measure(store: RunStore): Promise<{ commit: number[]; read: number }> {
  await store.createRun({
    id: 'perf',
    suite: 'longda',
    blockId: 'b',
    agent: 'llm',
    model: 'm',
    params: {},
    promptHash: 'h',
    toolSet: 't',
    dataChecksums: {},
    loupeVersion: 'perf',
    sandbox: 'off',
    workspace: '/nonexistent/w',
  });
  const commit: number[] = [];
  const notes: string[] = [];
  for (let i = 0; i < STEPS; i++) {
    notes.push(`finding ${i}`);
    const t0 = performance.now();
    await store.commitStep(step('perf', i), {
      answers: [
        { runId: 'perf', queryId: `q${i % 5}`, answer: i, raw: String(i), stepIndex: i },
        { runId: 'perf', queryId: 'q-last', answer: [i, i], raw: '', stepIndex: i },
      ],
      notes: notes.slice(-20),
    });
    commit.push(performance.now() - t0);
  }
  const t0 = performance.now();
  const steps = await store.getSteps('perf');
  const read = performance.now() - t0;
  if (steps.length !== STEPS) throw new Error(`read ${steps.length} steps of ${STEPS}`);
  return { commit, read };
}

const dir = mkdtempSync(join(tmpdir(), 'loupe-store-perf-'));
const srv = await startPg();
try {
  // SQLite and PostgreSQL alternate, three rounds each on a fresh store; medians over every commit of an engine.
  const a = { commit: [] as number[], read: [] as number[] };
  const b = { commit: [] as number[], read: [] as number[] };
  for (let round = 0; round < 3; round++) {
    const sqlite = await openStoreAt(join(dir, `runs-${round}.sqlite`));
    const ra = await measure(sqlite);
    await sqlite.close();
    a.commit.push(...ra.commit);
    a.read.push(ra.read);
    const pg = await openStoreAt(await srv.createDatabase(`perf${round}`));
    const rb = await measure(pg);
    await pg.close();
    b.commit.push(...rb.commit);
    b.read.push(rb.read);
  }
  const ratio = median(b.commit) / median(a.commit);
  verdict(
    `step commit on PostgreSQL over loopback vs SQLite, ${STEPS} steps × 3 alternating rounds each (p95 ${p95(b.commit).toFixed(2)} vs ${p95(a.commit).toFixed(2)} ms)`,
    '≤ 3× SQLite',
    `${median(b.commit).toFixed(2)} ms median`,
    `SQLite ${median(a.commit).toFixed(2)} ms median`,
    ratio,
    ratio <= 3,
  );
  console.log(
    `read ${STEPS} steps (ms, median of 3): sqlite ${median(a.read).toFixed(1)}, postgres ${median(b.read).toFixed(1)}`,
  );
} finally {
  srv.stop();
  rmSync(dir, { recursive: true, force: true });
}
