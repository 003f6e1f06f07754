/**
 * What the run pickers offer (issue 42 defect 7): only what can succeed. Host-neutral (no `vscode`): the VS Code
 * commands ask these before showing a quick pick.
 */
import type { RunRecord } from '../../core/store/records.ts';
import { interventionSupport } from '../../core/runs/intervene.ts';
import type { Block } from '../../core/suites/types.ts';

/** A run being driven in this window: whether it is paused (else running). */
export interface LiveRun {
  paused: boolean;
}

/**
 * Whether a hint can be added to a run now: a run of Loupe's own agent that is live in this window (running: it is
 * paused first; paused: at once), or stored and not live anywhere (`pending`, stopped or failed: the hint is sent when
 * it resumes). A finished run cannot (fork it instead); a run `running` in the store but not in this window is
 * driven by another process, which holds its lease.
 * @param live the run's session in this window, or null.
 * @returns ok, or the reason in one sentence.
 */
export function hintability(
  run: Pick<RunRecord, 'id' | 'agent' | 'status'>,
  live: LiveRun | null,
): { ok: true } | { ok: false; reason: string } {
  const sup = interventionSupport(run);
  if (!sup.ok) return sup;
  if (live) return { ok: true };
  if (run.status === 'finished') {
    return { ok: false, reason: `run ${run.id} has finished: fork it from a step to continue it with a hint` };
  }
  if (run.status === 'running') {
    return { ok: false, reason: `run ${run.id} is being run by another window or process: add the hint there` };
  }
  return { ok: true };
}

/**
 * The blocks a picker for running offers, in order: the runnable ones only; the count of the others (to say why
 * they are missing).
 */
export function runnableFirst<B extends Pick<Block, 'runnable'>>(
  blocks: readonly B[],
): { offered: B[]; hidden: number } {
  const offered = blocks.filter((b) => b.runnable);
  return { offered, hidden: blocks.length - offered.length };
}
