/**
 * `loupe run --agent replay --run RUN`: re-executes a recorded run's python cells and SQL queries in
 * a fresh workspace and sandbox, stores the per-step comparison with the run (event `replay`) and
 * prints it. Source: issue 6 "Reference and replay agents".
 */
import { RunFolderRefusedError, requireRunFolder } from '../core/store/run-folder.ts';
import { plural } from './plural.ts';
import type { LoadSuiteOptions } from '../core/benchmarks/index.ts';
import { reopenRun } from '../core/runs/reopen.ts';
import type { RunStore } from '../core/store/run-store.ts';
import { defaultStartKernel, kernelPlacement, type KernelSettings } from '../core/runs/runner.ts';
import type { KernelLike } from '../core/agent/types.ts';
import { replayStoredRun } from '../core/runs/replay.ts';
import type { Logger } from '../core/util/log.ts';
import { UsageError, type CliIo } from './types.ts';

/** The `--json` line of a replay. */
export interface ReplayJsonLine {
  runId: string;
  suite: string;
  blockId: string;
  agent: 'replay';
  status: 'match' | 'differences';
  total: number;
  matched: number;
  steps: { stepIndex: number; actions: number; match: boolean }[];
  durationMs: number;
}

/**
 * Replays one stored run and prints the result.
 * @returns exit code: 0 when every action matched, 1 otherwise.
 * @throws UsageError when the run or its block cannot be found.
 */
export async function runReplayCommand(o: {
  store: RunStore;
  runsDir: string;
  runId: string;
  root?: string;
  suiteOpts?: LoadSuiteOptions;
  kernel: KernelSettings;
  log: Logger;
  io: CliIo;
  json: boolean;
}): Promise<number> {
  const run = await o.store.getRun(o.runId);
  if (!run) throw new UsageError(`--run: no run '${o.runId}' in ${o.store.location}`);
  if (!o.root && !run.params.suiteRoot) {
    throw new UsageError(`--run: run ${o.runId} does not record its suite root; pass --root`);
  }
  const { block } = await reopenRun(run, {
    ...(o.root ? { suiteRoot: o.root } : {}),
    ...(o.suiteOpts ? { loadOptions: o.suiteOpts } : {}),
  });
  // Issue 36: the fresh workspace goes into the run's folder only when it lies inside the runs folder of --store.
  let runDir: string;
  try {
    runDir = requireRunFolder(run, o.runsDir, 'it is not replayed', { allowAbsent: true }).runDir;
  } catch (e) {
    if (e instanceof RunFolderRefusedError) {
      throw new UsageError(
        `--run ${run.id}: ${e.reason}; it is not replayed (runs are replayed in their folder under ${o.runsDir}, the runs folder of --store)`,
        { showUsage: false },
      );
    }
    throw e;
  }
  o.io.err(`[${block.id}] replaying run ${run.id} in a fresh sandbox\n`);
  const report = await replayStoredRun({
    store: o.store,
    runId: run.id,
    block,
    runDir,
    prepare: (dir, b) => {
      const place = kernelPlacement(dir, b, o.kernel.sandbox);
      const workspace = place.cwd;
      const startKernel = (): Promise<KernelLike> => defaultStartKernel(o.kernel, b.suite, place, o.log);
      return { workspace, startKernel };
    },
  });
  for (const a of report.actions.filter((x) => !x.match)) {
    o.io.err(`[${block.id}] step ${a.stepIndex + 1} ${a.kind} differs: ${a.difference ?? ''}\n`);
  }
  const line: ReplayJsonLine = {
    runId: run.id,
    suite: run.suite,
    blockId: run.blockId,
    agent: 'replay',
    status: report.allMatch ? 'match' : 'differences',
    total: report.total,
    matched: report.matched,
    steps: report.steps,
    durationMs: report.durationMs,
  };
  if (o.json) o.io.out(JSON.stringify(line) + '\n');
  else {
    o.io.out(
      `${run.id}  ${run.blockId}  replay  ${line.status}  ${report.matched}/${report.total} actions match over ${plural(report.steps.length, 'step')}  ${(report.durationMs / 1000).toFixed(1)} s\n`,
    );
  }
  return report.allMatch ? 0 : 1;
}
