/**
 * The experiment every view is scoped to (issue 43), host-neutral: an experiment is a tag, and the scope of a view is
 * the runs carrying it (or every run when none is selected). The Runs view, Results, the annotation queues and the
 * model × question matrix all ask {@link runScope} for the filter and apply it to the runs they list; the VS Code
 * host keeps the selected experiment (status bar, Runs view), the CLI takes `--experiment TAG`.
 */
import type { RunRecord } from '../../core/store/records.ts';
import type { RunStore } from '../../core/store/types.ts';
import { experimentStoreOf } from '../../core/store/experiments.ts';

/** The runs a view shows. */
export interface RunScope {
  /** The selected experiment (tag), or null: every run. */
  experiment: string | null;
  /** The ids of the experiment's runs, or null when no experiment is selected. */
  runIds: ReadonlySet<string> | null;
  /** True when a run is in scope. */
  includes(runId: string): boolean;
}

/** The scope of no experiment: every run. */
export const ALL_RUNS: RunScope = { experiment: null, runIds: null, includes: () => true };

/**
 * The run filter of the selected experiment.
 * @param experiment the tag, or null / '' for every run.
 * @returns the scope (an experiment no run carries scopes to no run: views then say so).
 */
export async function runScope(store: RunStore, experiment: string | null | undefined): Promise<RunScope> {
  if (!experiment) return ALL_RUNS;
  const ids = await experimentStoreOf(store).runsTagged(experiment);
  return { experiment, runIds: ids, includes: (id) => ids.has(id) };
}

/** The runs of a list that are in scope (same order). */
export function scopeRuns<R extends Pick<RunRecord, 'id'>>(runs: readonly R[], scope: RunScope): R[] {
  return scope.runIds ? runs.filter((r) => scope.includes(r.id)) : [...runs];
}

/** How a scope is named in a view's heading: `experiment ablation-A (3 runs)` or '' for every run. */
export function scopeCaption(scope: RunScope): string {
  if (!scope.experiment) return '';
  const n = scope.runIds?.size ?? 0;
  return `experiment ${scope.experiment} (${n} run${n === 1 ? '' : 's'})`;
}
