/**
 * `loupe runs --tag / --untag / --rename / --filter / --save-filter / --experiments` (issue 43): experiments and saved
 * filters from the command line, through the same store and rules as the Runs view.
 */
import { applyRunFilter, BUILTIN_FILTERS, describeFilter, filterChoices } from '../app/experiments/filters.ts';
import { experimentStoreOf, type RunFilterSpec } from '../core/store/experiments.ts';
import type { RunRecord } from '../core/store/records.ts';
import type { RunStore } from '../core/store/types.ts';
import { oneLine } from '../core/util/text-safety.ts';
import { UsageError, type CliIo } from './types.ts';

/** What `loupe runs` was asked to change about labels. */
export interface LabelArgs {
  tag?: string | undefined;
  untag?: string | undefined;
  rename?: string | undefined;
  'save-filter'?: string | undefined;
  'remove-filter'?: string | undefined;
  suite?: string | undefined;
  status?: string | undefined;
  experiment?: string | undefined;
}

/**
 * Applies a tag / untag / rename / saved-filter change, if one was asked for.
 * @returns true when one was (the command then prints what it did and stops).
 * @throws UsageError for a missing value or an unknown run.
 */
export async function changeLabels(
  store: RunStore,
  v: LabelArgs,
  positionals: string[],
  who: string,
  io: CliIo,
  storeFile: string,
): Promise<boolean> {
  const x = experimentStoreOf(store);
  const asked = (['tag', 'untag', 'rename', 'save-filter', 'remove-filter'] as const).filter((k) => v[k] !== undefined);
  if (!asked.length) return false;
  if (asked.length > 1) throw new UsageError(`give one of --${asked.join(', --')} at a time`);
  const which = asked[0]!;
  if (which === 'save-filter') {
    const spec: RunFilterSpec = {
      ...(v.experiment ? { tag: v.experiment } : {}),
      ...(v.suite ? { suite: v.suite } : {}),
      ...(v.status ? { status: v.status } : {}),
      ...(positionals.length ? { text: positionals.join(' ') } : {}),
    };
    const f = await x.saveFilter(v['save-filter']!, spec, who);
    io.out(`saved filter ${oneLine(f.name)}: ${oneLine(describeFilter(f.spec))}\n`);
    return true;
  }
  if (which === 'remove-filter') {
    if (!(await x.removeFilter(v['remove-filter']!, who))) {
      throw new UsageError(`--remove-filter: no saved filter '${v['remove-filter']}' in ${storeFile}`, {
        showUsage: false,
      });
    }
    io.out(`removed filter ${oneLine(v['remove-filter']!)}\n`);
    return true;
  }
  const runId = v[which]!;
  if (!(await store.getRun(runId))) {
    throw new UsageError(`--${which}: no run '${runId}' in ${storeFile}`, { showUsage: false });
  }
  const value = positionals.join(' ');
  if (which === 'rename') {
    await x.rename(runId, value, who);
    io.out(value.trim() ? `run ${runId} is now named ${oneLine(value.trim())}\n` : `run ${runId}: name cleared\n`);
    return true;
  }
  if (!value.trim()) throw new UsageError(`--${which} RUN LABEL: give the label after the run`);
  if (which === 'tag') await x.tag(runId, value, who);
  else await x.untag(runId, value, who);
  const l = (await x.labelsOf([runId])).get(runId);
  io.out(`run ${runId}: tags ${l?.tags.length ? l.tags.map((t) => oneLine(t)).join(', ') : '(none)'}\n`);
  return true;
}

/**
 * The runs a saved or built-in filter keeps.
 * @param name a saved filter's name, a built-in's id (`tool-error`, `unscored`, `pending-for-me`) or title.
 * @throws UsageError naming the filters on offer when none has that name.
 */
export async function filterRuns(
  store: RunStore,
  runs: readonly RunRecord[],
  name: string,
  who: string,
): Promise<RunRecord[]> {
  const choices = await filterChoices(store);
  const b = BUILTIN_FILTERS.find((f) => f.id === name);
  const spec = b ? { builtin: b.id } : choices.find((c) => c.name.toLowerCase() === name.toLowerCase())?.spec;
  if (!spec) {
    throw new UsageError(
      `--filter: no filter '${name}' (built in: ${BUILTIN_FILTERS.map((f) => f.id).join(', ')}; saved: ${
        choices
          .filter((c) => !c.builtin)
          .map((c) => c.name)
          .join(', ') || 'none'
      })`,
      { showUsage: false },
    );
  }
  return applyRunFilter(store, runs, spec, { annotator: who });
}
