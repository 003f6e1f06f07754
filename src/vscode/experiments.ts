/**
 * Experiments in VS Code (issue 43): the selected experiment (a tag; kept per workspace, shown and chosen in the
 * status bar and the Runs view's title bar), the active run filter of the Runs view, and the commands that tag,
 * untag and rename runs. Views scoped to the experiment (Runs, Results, annotation queues) ask {@link currentScope}
 * and follow {@link onDidChangeExperiment}.
 */
import * as vscode from 'vscode';
import { ALL_RUNS, runScope, type RunScope } from '../app/experiments/scope.ts';
import { describeFilter, filterChoices } from '../app/experiments/filters.ts';
import { experimentStoreOf, type RunFilterSpec } from '../core/store/experiments.ts';
import { oneLine } from '../core/util/text-safety.ts';
import { currentAnnotator } from './config.ts';
import type { LoupeContext } from './context.ts';
import { showInformationMessage } from './messages.ts';

const KEY = 'loupe.experiment';
const changed = new vscode.EventEmitter<void>();
/** Fires when the selected experiment or the Runs view's filter changes. */
export const onDidChangeExperiment = changed.event;

let filter: { name: string; spec: RunFilterSpec } | null = null;
let status: vscode.StatusBarItem | undefined;

/** The selected experiment (tag), or null for every run. */
export function currentExperiment(ctx: LoupeContext): string | null {
  return ctx.extension.workspaceState.get<string | null>(KEY) ?? null;
}

/** The run scope of the selected experiment (every run when none, or when the store cannot say). */
export async function currentScope(ctx: LoupeContext): Promise<RunScope> {
  const e = currentExperiment(ctx);
  if (!e) return ALL_RUNS;
  try {
    return await runScope(ctx.store(), e);
  } catch (err) {
    ctx.log.warn(`experiment ${e}: ${err instanceof Error ? err.message : String(err)}`);
    return { experiment: e, runIds: new Set(), includes: () => false };
  }
}

/** The Runs view's active filter, or null. */
export function currentRunFilter(): { name: string; spec: RunFilterSpec } | null {
  return filter;
}

function showStatus(ctx: LoupeContext): void {
  if (!status) return;
  const e = currentExperiment(ctx);
  status.text = `$(beaker) ${e ? oneLine(e, 40) : 'All runs'}`;
  status.tooltip = e
    ? `Loupe: views show the runs of experiment ${e}. Click to choose another.`
    : 'Loupe: views show every run. Click to choose an experiment (a run tag).';
  void vscode.commands.executeCommand('setContext', 'loupe.experimentSelected', !!e);
  void vscode.commands.executeCommand('setContext', 'loupe.runFilterActive', !!filter);
}

/** Selects an experiment (null: every run) and tells the scoped views. */
export async function setExperiment(ctx: LoupeContext, tag: string | null): Promise<void> {
  await ctx.extension.workspaceState.update(KEY, tag || null);
  showStatus(ctx);
  changed.fire();
}

/** Creates the status-bar selector (at activation). */
export function registerExperimentUi(ctx: LoupeContext): void {
  status = ctx.register(vscode.window.createStatusBarItem('loupe.experiment', vscode.StatusBarAlignment.Left, 50));
  status.name = 'Loupe Experiment';
  status.command = 'loupe.selectExperiment';
  showStatus(ctx);
  status.show();
  ctx.register(ctx.onDidSwitchStore(() => changed.fire()));
}

/** The run id of a command's argument: a Runs view node, a run id, or the view's selection. */
function runIdOf(arg: unknown): string | undefined {
  if (typeof arg === 'string') return arg;
  const n = arg as { kind?: string; run?: { id?: string } } | undefined;
  return n?.kind === 'run' ? n.run?.id : undefined;
}

async function pickRun(ctx: LoupeContext, arg: unknown): Promise<string | undefined> {
  const id = runIdOf(arg);
  if (id) return id;
  const runs = await ctx.store().listRuns({ limit: 200 });
  const pick = await vscode.window.showQuickPick(
    runs.map((r) => ({
      label: oneLine(r.model ?? r.agent, 80),
      description: `${oneLine(r.blockId, 60)} · ${r.id}`,
      id: r.id,
    })),
    { title: 'Choose a run' },
  );
  return pick?.id;
}

/** `loupe.tagRun`: tags a run (an experiment is a tag); offers the experiments there are, or a new one. */
export async function tagRunCommand(ctx: LoupeContext, arg: unknown, label?: unknown): Promise<boolean> {
  const runId = await pickRun(ctx, arg);
  if (!runId) return false;
  const x = experimentStoreOf(ctx.store());
  let tag = typeof label === 'string' ? label : undefined;
  if (tag === undefined) {
    const have = new Set((await x.labelsOf([runId])).get(runId)?.tags ?? []);
    const offered = (await x.experiments()).filter((e) => !have.has(e.tag));
    const NEW = '$(add) New experiment…';
    const pick = offered.length
      ? await vscode.window.showQuickPick(
          [
            ...offered.map((e) => ({ label: e.tag, description: `${e.runs} run${e.runs === 1 ? '' : 's'}` })),
            { label: NEW, description: '' },
          ],
          { title: 'Tag Run: choose an experiment' },
        )
      : { label: NEW };
    if (!pick) return false;
    tag =
      pick.label === NEW
        ? await vscode.window.showInputBox({
            title: 'Tag Run',
            prompt: 'Experiment (tag) for this run',
            validateInput: (v) => (v.trim() ? null : 'Give the experiment a name'),
          })
        : pick.label;
    if (tag === undefined) return false;
  }
  await x.tag(runId, tag, currentAnnotator());
  changed.fire();
  return true;
}

/** `loupe.untagRun`: removes one of a run's tags. */
export async function untagRunCommand(ctx: LoupeContext, arg: unknown, label?: unknown): Promise<boolean> {
  const runId = await pickRun(ctx, arg);
  if (!runId) return false;
  const x = experimentStoreOf(ctx.store());
  let tag = typeof label === 'string' ? label : undefined;
  if (tag === undefined) {
    const tags = (await x.labelsOf([runId])).get(runId)?.tags ?? [];
    if (!tags.length) {
      void showInformationMessage('This run has no tags.');
      return false;
    }
    tag = await vscode.window.showQuickPick(tags, { title: 'Untag Run: remove which experiment?' });
    if (tag === undefined) return false;
  }
  await x.untag(runId, tag, currentAnnotator());
  changed.fire();
  return true;
}

/** `loupe.renameRun`: names a run (an empty name clears it). */
export async function renameRunCommand(ctx: LoupeContext, arg: unknown, name?: unknown): Promise<boolean> {
  const runId = await pickRun(ctx, arg);
  if (!runId) return false;
  const x = experimentStoreOf(ctx.store());
  let n = typeof name === 'string' ? name : undefined;
  if (n === undefined) {
    const now = (await x.labelsOf([runId])).get(runId)?.name ?? '';
    n = await vscode.window.showInputBox({
      title: 'Rename Run',
      prompt: 'A name for this run (empty: show its profile again)',
      value: now,
    });
    if (n === undefined) return false;
  }
  await x.rename(runId, n, currentAnnotator());
  changed.fire();
  return true;
}

/** `loupe.selectExperiment`: every view shows the runs of one experiment (or every run). */
export async function selectExperimentCommand(ctx: LoupeContext, arg?: unknown): Promise<boolean> {
  if (arg === null || typeof arg === 'string') {
    await setExperiment(ctx, arg);
    return true;
  }
  const ex = await experimentStoreOf(ctx.store()).experiments();
  const cur = currentExperiment(ctx);
  const ALL = 'All runs';
  const pick = await vscode.window.showQuickPick(
    [
      { label: ALL, description: cur ? '' : 'selected', tag: null as string | null },
      ...ex.map((e) => ({
        label: e.tag,
        description: `${e.runs} run${e.runs === 1 ? '' : 's'}${e.tag === cur ? ' · selected' : ''}`,
        tag: e.tag as string | null,
      })),
    ],
    {
      title: 'Select Experiment',
      placeHolder: ex.length
        ? 'Runs, Results and annotation queues show the runs of this experiment'
        : 'No experiment yet: tag runs in the Runs view (Tag Run…)',
    },
  );
  if (!pick) return false;
  await setExperiment(ctx, pick.tag);
  return true;
}

/**
 * `loupe.filterRuns`: the Runs view shows only the runs a filter keeps (built in or saved); also clears the filter or
 * saves the selected experiment as a filter. An argument `{ name }` (or null: clear) applies without asking.
 */
export async function filterRunsCommand(ctx: LoupeContext, arg?: unknown): Promise<boolean> {
  const choices = await filterChoices(ctx.store());
  let chosen: { name: string; spec: RunFilterSpec } | null | undefined;
  if (arg === null) chosen = null;
  else if (arg && typeof arg === 'object' && typeof (arg as { name?: unknown }).name === 'string') {
    const name = (arg as { name: string }).name;
    const c = choices.find((x) => x.name === name || x.spec.builtin === name);
    if (!c) throw new Error(`No run filter is named ${name}.`);
    chosen = c;
  } else {
    const CLEAR = 'Show every run (no filter)';
    const SAVE = '$(save) Save the selected experiment as a filter…';
    const pick = await vscode.window.showQuickPick(
      [
        ...choices.map((c) => ({
          label: c.name,
          description: c.builtin ? 'built in' : 'saved',
          detail: c.description,
        })),
        ...(filter ? [{ label: CLEAR, description: '', detail: '' }] : []),
        ...(currentExperiment(ctx) ? [{ label: SAVE, description: '', detail: '' }] : []),
      ],
      { title: 'Filter Runs' },
    );
    if (!pick) return false;
    if (pick.label === SAVE) {
      const name = await vscode.window.showInputBox({
        title: 'Save Filter',
        prompt: 'Name of the filter',
        validateInput: (v) => (v.trim() ? null : 'Give the filter a name'),
      });
      if (!name) return false;
      const f = await experimentStoreOf(ctx.store()).saveFilter(
        name,
        { tag: currentExperiment(ctx)! },
        currentAnnotator(),
      );
      chosen = { name: f.name, spec: f.spec };
    } else chosen = pick.label === CLEAR ? null : (choices.find((c) => c.name === pick.label) ?? null);
  }
  filter = chosen ? { name: chosen.name, spec: chosen.spec } : null;
  showStatus(ctx);
  changed.fire();
  return true;
}

/** What the Runs view says above its tree about its scope: the experiment and the filter, or undefined. */
export function runsViewMessage(ctx: LoupeContext, shown: number): string | undefined {
  const e = currentExperiment(ctx);
  if (!e && !filter) return undefined;
  return (
    [
      e ? `Experiment ${oneLine(e, 60)}` : '',
      filter
        ? `filter: ${oneLine(filter.name, 60)}${filter.spec.builtin ? '' : ` (${oneLine(describeFilter(filter.spec), 80)})`}`
        : '',
    ]
      .filter(Boolean)
      .join(' · ') + ` — ${shown} run${shown === 1 ? '' : 's'}`
  );
}
