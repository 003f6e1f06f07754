/**
 * Stepping into a run from VS Code (issue 20): "Add Hint to Run" (a paused live run of this window: through its
 * RunControl, recorded by the loop under the run lease; a stopped run: under the lease taken here, sent when it is
 * resumed), "Fork Run from Step" (a new run replaying the steps up to there without model calls, continuing with a
 * model profile the analyst picks, after an optional hint), the timeline's view of both, and the side-by-side review of
 * two forks of the same step.
 */
import * as vscode from 'vscode';
import type { InterventionRecord, RunRecord } from '../../core/store/records.ts';
import { assistanceLabel, assistanceOf, interveneStoredRun, interventionSupport } from '../../core/runs/intervene.ts';
import { reopenRun } from '../../core/runs/reopen.ts';
import { errorMessage } from '../../core/util/errors.ts';
import type { TimelineAssistance } from '../../protocol/intervention.ts';
import { currentAnnotator } from '../config.ts';
import type { LoupeContext } from '../context.ts';
import { llmConfig } from './run-commands.ts';
import { RunSession } from './run-session.ts';
import { showErrorMessage, showInformationMessage, showWarningMessage } from '../messages.ts';
import { oneLine } from '../../core/util/text-safety.ts';
import { hintability, type LiveRun } from '../../app/pickers/hintability.ts';
import { ForkDiffPanel } from '../panels/fork-diff-panel.ts';

async function runOf(ctx: LoupeContext, raw: unknown, title: string, hinting = false): Promise<RunRecord | undefined> {
  const store = ctx.store();
  const id = typeof raw === 'string' ? raw : (raw as { run?: RunRecord } | undefined)?.run?.id;
  if (id) {
    const r = await store.getRun(id);
    if (!r) throw new Error(`No run ${id} in ${ctx.storePath}`);
    return r;
  }
  const runs = await store.listRuns({ limit: 200 });
  // issue 42: the hint picker offers only runs that can take a hint (a fork needs no hint-able run: it offers all)
  const offered = hinting ? runs.filter((r) => hintability(r, liveState(r.id)).ok) : runs;
  if (!offered.length) {
    void showInformationMessage(
      hinting
        ? "Loupe: no run can take a hint now. A hint goes to a running or paused run of Loupe's own agent; to continue a finished run with a hint, fork it from a step (Fork Run from Step)."
        : 'Loupe: the store holds no run yet.',
    );
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    offered.map((r) => {
      const live = liveState(r.id);
      return {
        label: `${oneLine(r.blockId)} · ${live ? (live.paused ? 'paused' : 'running') : r.status}`,
        description: `${oneLine(r.model ?? r.agent)} · ${r.createdAt}`,
        detail: r.id,
        r,
      };
    }),
    {
      title,
      matchOnDetail: true,
      ...(hinting ? { placeHolder: "Runs that can take a hint: running or paused runs of Loupe's own agent" } : {}),
    },
  );
  return pick?.r;
}

/** Whether a run is live in this window, and paused. */
function liveState(runId: string): LiveRun | null {
  const s = RunSession.get(runId);
  return s && !s.result ? { paused: s.control.isPaused } : null;
}

/**
 * What the timeline shows of a run's assistance and run controls.
 * @returns the state for {@link TimelineAssistance}.
 */
export async function assistanceState(ctx: LoupeContext, runId: string): Promise<TimelineAssistance> {
  const store = ctx.store();
  const run = await store.getRun(runId);
  if (!run) throw new Error(`Run ${runId} is no longer in the store`);
  const [help, interventions, all] = await Promise.all([
    assistanceOf(store, [run]),
    store.getInterventions(runId),
    store.listRuns({ blockId: run.blockId }),
  ]);
  const a = help.get(runId)!;
  const session = RunSession.get(runId);
  const live = !!session && !session.result;
  const sup = interventionSupport(run);
  let cannot: string | null = sup.ok ? null : sup.reason;
  if (!cannot && run.status === 'finished') {
    cannot = 'The run has finished: fork it from a step to continue with a hint.';
  }
  if (!cannot && live && !session.control.isPaused) {
    cannot = 'Pause the run first (Pause, or key p in its terminal): hints are added between steps.';
  }
  return {
    runId,
    interventions: interventions.map(({ runId: _r, ...i }) => i),
    analystCode: !!a.analystCode,
    label: assistanceLabel(a) ?? null,
    forkOf: run.params.forkOf ?? null,
    forks: all
      .filter((r) => r.params.forkOf?.runId === runId)
      .reverse()
      .map((r) => ({ runId: r.id, step: r.params.forkOf!.step, model: r.model ?? r.agent })),
    live,
    paused: live && session.control.isParked,
    pausing: live && session.control.isPaused && !session.control.isParked,
    cannotIntervene: cannot,
  };
}

/**
 * Loupe: Add Hint to Run. Arguments (all optional): run id or Runs-view node, the text (asked for otherwise), `correction`.
 * @returns the recorded human step, or undefined when cancelled.
 */
export async function interveneCommand(
  ctx: LoupeContext,
  arg?: unknown,
  text?: unknown,
  kind?: unknown,
): Promise<InterventionRecord | undefined> {
  const run = await runOf(ctx, arg, 'Add Hint to Run', true);
  if (!run) return undefined;
  const sup = interventionSupport(run);
  if (!sup.ok) throw new Error(sup.reason);
  const session = RunSession.get(run.id);
  const live = !!session && !session.result;
  // a running run picked for a hint is paused here: the hint goes in at the next step boundary
  if (live && !session.control.isPaused) session.control.pause();
  if (!live && run.status === 'finished') {
    throw new Error(
      `Run ${run.id} has finished: fork it from a step (Fork from this step, on its timeline) to continue it with a hint.`,
    );
  }
  const next = run.steps + 1;
  const message =
    typeof text === 'string'
      ? text
      : await vscode.window.showInputBox({
          title: `Hint for the agent of ${run.blockId} (sent before step ${next})`,
          prompt:
            'Recorded as a human step (who, when, text); the run becomes assisted and its scores are kept apart. Nothing already recorded changes.',
          placeHolder: 'e.g. The exam weight is WTMEC2YR; exclude pregnant women.',
          ignoreFocusOut: true,
        });
  if (message === undefined) return undefined;
  if (!message.trim()) {
    void showWarningMessage('Loupe: the hint was empty; nothing was recorded.');
    return undefined;
  }
  const input = {
    who: currentAnnotator(),
    kind: kind === 'correction' ? ('correction' as const) : ('hint' as const),
    text: message,
  };
  let rec: InterventionRecord;
  if (live) {
    rec = await session.control.intervene(input);
    session.terminal.write(`\r\n\x1b[34m✎ ${rec.kind} recorded; press r to resume\x1b[0m\r\n`);
  } else {
    rec = await interveneStoredRun(ctx.store(), run.id, input);
    void showInformationMessage(
      `Loupe: ${rec.kind} recorded for run ${run.id}; it is sent when the run resumes.`,
      'Resume Run',
    ).then((x) => x && vscode.commands.executeCommand('loupe.resumeRun', run.id));
  }
  ctx.fireRunsChanged();
  return rec;
}

/**
 * Loupe: Fork Run from Step. Arguments (all optional): run id or node, the 1-based step, a model profile name, a hint
 * (`''` for none). Resolves when the fork has ended (or at once with `{ background: true }` as fifth argument).
 * @returns the fork's run id.
 */
export async function forkRunCommand(
  ctx: LoupeContext,
  arg?: unknown,
  stepArg?: unknown,
  profileArg?: unknown,
  hintArg?: unknown,
  opts?: unknown,
): Promise<string | undefined> {
  const run = await runOf(ctx, arg, 'Fork Run from Step');
  if (!run) return undefined;
  let step = typeof stepArg === 'number' ? stepArg : undefined;
  if (step === undefined) {
    const steps = await ctx.store().getStepSummaries(run.id);
    const pick = await vscode.window.showQuickPick(
      steps
        .map((s) => ({
          label: `Step ${s.index + 1}`,
          description: s.toolNames.join(', ') || 'message',
          detail: s.content.slice(0, 120),
          n: s.index + 1,
        }))
        .reverse(),
      { title: `Fork ${run.blockId} from step… (steps up to it are replayed without model calls)` },
    );
    if (!pick) return undefined;
    step = pick.n;
  }
  if (step > run.steps) {
    throw new Error(`Step ${step} is beyond the last step of run ${run.id} (it has ${run.steps} steps).`);
  }
  const profiles = ctx.settings.models;
  // Issue 24: a run an MCP client drove is forked like any other, but Loupe's own agent continues the fork (a client cannot)
  const mcp = run.agent.startsWith('mcp:')
    ? `steps 1–${step} were the MCP client ${run.params.mcp?.client ?? run.agent.slice(4)}'s calls; Loupe's own agent continues the fork, not the client`
    : undefined;
  if (!profiles.length) {
    throw new Error(
      `Add a model profile to the setting loupe.models first: a fork continues with a model${mcp ? ` (${mcp})` : ''}.`,
    );
  }
  let profile = typeof profileArg === 'string' ? profiles.find((p) => p.name === profileArg) : undefined;
  if (typeof profileArg === 'string' && !profile) throw new Error(`No model profile '${profileArg}' in loupe.models`);
  if (!profile) {
    const pick = await vscode.window.showQuickPick(
      profiles.map((p) => ({
        label: `$(hubot) ${p.name}`,
        description: `${p.model} · ${p.baseUrl}${p.model === run.model ? " · the parent's model" : ''}`,
        p,
      })),
      { title: `Fork from step ${step}: continue with which model profile?${mcp ? ` (${mcp})` : ''}` },
    );
    if (!pick) return undefined;
    profile = pick.p;
  }
  const hint =
    typeof hintArg === 'string'
      ? hintArg
      : await vscode.window.showInputBox({
          title: `Fork from step ${step}: hint for the agent (optional)`,
          prompt: 'Sent before the first new step and recorded as a human step. Leave empty to fork without a hint.',
          ignoreFocusOut: true,
        });
  if (hint === undefined) return undefined;
  let suite;
  let block;
  try {
    ({ suite, block } = await reopenRun(run));
  } catch (e) {
    throw new Error(`Run ${run.id}: its block ${run.blockId} could not be reopened (${errorMessage(e)})`, { cause: e });
  }
  const session = new RunSession(ctx, {
    suite,
    block,
    agent: 'llm',
    llm: await llmConfig(ctx, profile),
    forkOf: {
      runId: run.id,
      step,
      ...(hint.trim() ? { hint: { who: currentAnnotator(), kind: 'hint' as const, text: hint } } : {}),
    },
  });
  ctx.register(session);
  const done = session.run().then((r) => {
    // the offer waits on the user's click: never hold the command's result (and its callers) on it
    void offerForkComparison(ctx, run.id, step!, r.runId).catch(() => undefined);
    return r;
  });
  if ((opts as { background?: boolean } | undefined)?.background) {
    for (let i = 0; i < 200 && !session.runId; i++) await new Promise((r) => setTimeout(r, 50));
    void done.catch((e: unknown) => void showErrorMessage(`Loupe: fork failed: ${errorMessage(e)}`));
    return session.runId;
  }
  const r = await done;
  if (r.status === 'failed') void showWarningMessage(`Loupe: fork ${r.runId} failed: ${r.reason}`);
  return r.runId;
}

/** When another fork of the same run and step exists, offers the two side by side in the review. */
async function offerForkComparison(ctx: LoupeContext, parentId: string, step: number, forkId: string): Promise<void> {
  const siblings = (await ctx.store().listRuns()).filter(
    (r) => r.id !== forkId && r.params.forkOf?.runId === parentId && r.params.forkOf.step === step,
  );
  if (!siblings.length) return;
  const other = siblings[0]!;
  const pick = await showInformationMessage(
    `Loupe: run ${parentId} has two forks from step ${step}. Compare them side by side?`,
    'Compare Forks',
  );
  if (pick) await vscode.commands.executeCommand('loupe.compareRuns', other.id, [other.id, forkId]);
}

/**
 * Loupe: Compare Forks: the two newest forks of a run from the same step, side by side in the review.
 * @returns the review queue id, or undefined when the run has no two forks of one step.
 */
export async function compareForksCommand(ctx: LoupeContext, arg?: unknown): Promise<string | undefined> {
  const run = await runOf(ctx, arg, 'Compare Forks');
  if (!run) return undefined;
  const all = await ctx.store().listRuns({ blockId: run.blockId });
  // A fork's siblings (same parent and step), or the forks of this run.
  const parent = run.params.forkOf;
  const group = parent
    ? all.filter((r) => r.params.forkOf?.runId === parent.runId && r.params.forkOf.step === parent.step)
    : all.filter((r) => r.params.forkOf?.runId === run.id);
  const byStep = new Map<number, RunRecord[]>();
  for (const r of group) byStep.set(r.params.forkOf!.step, [...(byStep.get(r.params.forkOf!.step) ?? []), r]);
  const pair = parent
    ? group
        .filter((r) => r.id !== run.id)
        .slice(0, 1)
        .concat(run)
    : [...byStep.values()].find((g) => g.length >= 2)?.slice(0, 2);
  if (!pair || pair.length < 2) {
    void showInformationMessage(`Loupe: run ${run.id} has no two forks from the same step to compare yet.`);
    return undefined;
  }
  return vscode.commands.executeCommand<string | undefined>('loupe.compareRuns', pair[0]!.id, [
    pair[0]!.id,
    pair[1]!.id,
  ]);
}

/**
 * Loupe: Compare Fork with Parent (issue 43): the fork diff of a forked run (from the Runs view, the timeline or a
 * run id); on a run that is not a fork, its newest fork is compared with it.
 * @returns the fork's run id, or undefined when there is nothing to compare (said to the user).
 */
export async function compareForkWithParentCommand(ctx: LoupeContext, arg?: unknown): Promise<string | undefined> {
  const run = await runOf(ctx, arg, 'Compare Fork with Parent');
  if (!run) return undefined;
  let fork = run;
  if (!run.params.forkOf) {
    const forks = (await ctx.store().listRuns({ blockId: run.blockId })).filter(
      (r) => r.params.forkOf?.runId === run.id,
    );
    if (!forks.length) {
      void showInformationMessage(
        `Loupe: run ${run.id} is not a fork and has no fork yet. Fork it from a step first (Fork Run from Step).`,
      );
      return undefined;
    }
    fork = forks.sort((a, b) => b.createdAt.localeCompare(a.createdAt))[0]!;
  }
  await ForkDiffPanel.show(ctx, fork.id);
  return fork.id;
}

/** The commands of this module. */
export function interveneCommands(): Record<string, (ctx: LoupeContext, ...args: unknown[]) => unknown> {
  return {
    'loupe.intervene': (ctx, arg, text, kind) => interveneCommand(ctx, arg, text, kind),
    'loupe.forkRun': (ctx, arg, step, profile, hint, opts) => forkRunCommand(ctx, arg, step, profile, hint, opts),
    'loupe.compareForks': (ctx, arg) => compareForksCommand(ctx, arg),
    'loupe.compareForkWithParent': (ctx, arg) => compareForkWithParentCommand(ctx, arg),
  };
}
