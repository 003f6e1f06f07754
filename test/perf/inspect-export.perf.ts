/**
 * Inspect export (issue 45): exporting one run of 2,000 steps as an Inspect log (`.eval` and `.json`), in-process,
 * from the store to the file — absolute goal ≤ 1 s — printed beside writing the same run as trajectory JSONL
 * (`exportTrajectoryJsonl` + write), measured in the same process.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeInspectLog } from '../../src/core/runs/inspect/write-log.ts';
import { exportTrajectoryJsonl } from '../../src/core/store/export.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import { verdict } from './verdict.ts';

const STEPS = 2000;
const dir = mkdtempSync(join(tmpdir(), 'loupe-inspect-perf-'));
const store = openStore(join(dir, 'runs.sqlite'));
try {
  await store.createRun({
    id: 'perf-run',
    suite: 'perf',
    blockId: 'b1',
    agent: 'loupe',
    model: 'openai/gpt-x',
    params: { repeat: 1 },
    promptHash: 'h',
    toolSet: 't',
    dataChecksums: {},
    loupeVersion: '0',
    sandbox: 'bwrap',
    workspace: join(dir, 'ws'),
  });
  const obs = 'row,value\n'.repeat(60);
  for (let i = 0; i < STEPS; i++) {
    const args = JSON.stringify({ code: `df = pd.read_csv('data_${i}.csv')\nprint(df.describe())` });
    await store.commitStep({
      runId: 'perf-run',
      index: i,
      startedAt: '2026-01-01T00:00:00Z',
      endedAt: '2026-01-01T00:00:01Z',
      latencyMs: 10,
      toolMs: 5,
      costUsd: null,
      finishReason: 'tool_calls',
      assistant: {
        role: 'assistant',
        content: `Step ${i}: I will look at the data again.`,
        reasoning: 'because',
        tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'python', arguments: args } }],
      },
      toolCalls: [
        {
          id: `c${i}`,
          name: 'python',
          argumentsText: args,
          observation: obs,
          isError: i % 50 === 0,
          truncated: false,
          durationMs: 5,
        },
      ],
      extraMessages: [],
      usage: { input: 1000 + i, output: 50, cached: 0 },
    });
  }
  await store.updateRun('perf-run', { status: 'finished' });
  const time = async (f: () => Promise<unknown>): Promise<number> => {
    const best: number[] = [];
    for (let k = 0; k < 3; k++) {
      const t0 = performance.now();
      await f();
      best.push(performance.now() - t0);
    }
    return Math.min(...best);
  };
  const jsonl = await time(async () =>
    writeFileSync(join(dir, 'run.jsonl'), await exportTrajectoryJsonl(store, 'perf-run')),
  );
  for (const ext of ['eval', 'json']) {
    const ms = await time(() => writeInspectLog(store, ['perf-run'], join(dir, `run.${ext}`)));
    verdict(
      `export a ${STEPS}-step run as an Inspect .${ext} log (in-process)`,
      '≤ 1000 ms (absolute)',
      `${ms.toFixed(0)} ms`,
      `trajectory JSONL of the same steps ${jsonl.toFixed(0)} ms (ratio: measured / goal)`,
      ms / 1000,
      ms <= 1000,
    );
  }
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
