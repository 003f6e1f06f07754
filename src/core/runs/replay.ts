/**
 * Replay of a stored run in a fresh workspace and kernel (see `agent/replay.ts` `replayRun`); the report is
 * stored with the run as a `replay` event. Source: issue 6 (replay).
 */
import { join } from 'node:path';
import type { KernelLike } from '../agent/types.ts';
import { replayRun, type ReplayReport } from './replay-run.ts';
import type { RunStore } from '../store/run-store.ts';
import type { Block } from '../suites/types.ts';

/**
 * Replays a stored run: re-executes its python cells and SQL queries and compares each with what was recorded.
 * @param o.prepare makes the fresh workspace under `runDir` and returns its folder and a kernel starter.
 * @returns the per-action comparison.
 */
export async function replayStoredRun(o: {
  store: RunStore;
  runId: string;
  block: Block;
  runDir: string;
  prepare: (runDir: string, block: Block) => { workspace: string; startKernel: () => Promise<KernelLike> };
}): Promise<ReplayReport> {
  const dir = join(o.runDir, `replay-${new Date().toISOString().replace(/[-:.]/g, '')}`);
  const { startKernel } = o.prepare(dir, o.block);
  const run = await o.store.getRun(o.runId);
  const sandbox = run?.sandbox === 'off' ? 'off' : 'bubblewrap';
  return replayRun({ store: o.store, runId: o.runId, startKernel, sandbox, block: o.block });
}
