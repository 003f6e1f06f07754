/**
 * The Failure Analysis panel (issue 19): tag a step, a step range or a report span of a run with classes of a
 * failure taxonomy, a severity and a note (keyboard first); work a sampled failure-analysis or hallucination queue
 * (each item served with its trajectory); see the Fig. 8 / Table 6 figures. One panel; the data and every rule are
 * in src/core/failures (this file only wires the store, the settings and the webview).
 */
import * as vscode from 'vscode';
import { annotationStoreOf, currentAnnotations, type AnnotationStore } from '../../core/annotations/index.ts';
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import {
  FAILURE_CASE_TASK,
  HALLUCINATION_CHECK_TASK,
  failureClassSpec,
  failureFigures,
  hallucinationSpec,
  recordFailureCase,
  recordHallucinationCheck,
  tagSpan,
  tagSteps,
  ensureFailureCase,
  type FailureCaseInput,
  type FailureCaseVerdict,
  type FailureTagVerdict,
  type HallucinationInput,
  type HallucinationVerdict,
} from '../../core/failures/index.ts';
import { findTaxonomy, taxonomyCatalog, type TaxonomyCatalog } from '../../app/failures/registry.ts';
import { openFailureQueue, openHallucinationQueue } from '../../app/failures/sampling.ts';
import { failureArtefacts, failureRunView } from '../../app/failures/run-view.ts';
import { errorMessage } from '../../core/util/errors.ts';
import {
  GetFailureStepRequest,
  OpenInTimelineRequest,
  ShowFailureFiguresRequest,
  SkipCaseRequest,
  SubmitCaseRequest,
  TagFailureRequest,
  type FailureArtefact,
  type FailureCaseView,
  type FailureRunView,
  type FailuresState,
} from '../../protocol/failures.ts';
import { DidChangeStateNotification } from '../../protocol/webview.ts';
import { currentAnnotator, failureSampling } from '../config.ts';
import type { LoupeContext } from '../context.ts';
import { fireFailureTagsChanged, onDidChangeFailureTags } from './failure-tag-events.ts';
import { LoupePanel, PanelHost } from './panel-base.ts';
import { TimelinePanel } from './timeline-panel.ts';
import { oneLine } from '../../core/util/text-safety.ts';

type Mode =
  | { kind: 'run'; runId: string; caseItemId?: string; focusStep?: number }
  | { kind: 'queue'; queueId: string }
  | { kind: 'figures' };

export class FailuresPanel extends LoupePanel {
  static readonly host = new PanelHost<FailuresPanel, 'failures'>({
    viewType: 'loupe.failures',
    title: () => 'Failure Analysis',
    create: (ctx, panel) => new FailuresPanel(ctx, panel),
    restoreKey: () => 'failures',
  });
  static readonly viewType = FailuresPanel.host.viewType;
  private mode: Mode = { kind: 'figures' };
  private readonly ann: AnnotationStore;
  /** The queue item on screen (queue mode). */
  private current: { itemId: string; pos: number } | undefined;
  private message: string | undefined;

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel) {
    super(ctx, panel, 'failures', 'Failure Analysis');
    this.ann = annotationStoreOf(ctx.store());
    this.rpc.onRequest(GetFailureStepRequest, async ({ runId, index }) => ({
      text: await this.stepText(runId, index),
    }));
    this.rpc.onRequest(TagFailureRequest, async (p) => {
      const runId = this.runId();
      if (!runId) throw new Error('No run is shown.');
      const cat = this.catalog();
      const taxonomy = findTaxonomy(cat, p.taxonomy);
      const common = {
        taxonomy,
        classes: p.classes,
        severity: p.severity,
        note: p.note,
        annotator: currentAnnotator(),
        origin: 'panel',
        ...(this.caseItemId() ? { caseItemId: this.caseItemId()! } : {}),
      };
      if (p.target.kind === 'steps') {
        const r = await tagSteps(this.ann, this.ctx.store(), {
          ...common,
          runId,
          from: p.target.from,
          to: p.target.to,
        });
        this.message = `Tagged ${r.item.itemRef}: ${(r.annotation.verdict as FailureTagVerdict).classes.join(', ')} (${p.severity}).`;
      } else {
        const t = p.target;
        const art = (await this.artefacts(runId)).find((a) => a.name === t.artefact);
        if (!art) throw new Error(`The run has no ${t.artefact} to tag.`);
        const r = await tagSpan(this.ann, this.ctx.store(), {
          ...common,
          runId,
          artefact: art.name,
          text: art.text,
          start: t.start,
          end: t.end,
        });
        this.message = `Tagged ${r.item.itemRef}: ${(r.annotation.verdict as FailureTagVerdict).classes.join(', ')} (${p.severity}).`;
      }
      this.selfTagged = true;
      fireFailureTagsChanged(runId);
      this.selfTagged = false;
      return this.build();
    });
    this.rpc.onRequest(SubmitCaseRequest, async (p) => {
      const item = await this.ann.getItem(p.itemId);
      if (!item) throw new Error(`Item ${p.itemId} is no longer in the store.`);
      const queueId = this.mode.kind === 'queue' ? this.mode.queueId : undefined;
      if (item.task === FAILURE_CASE_TASK) {
        const taxonomy = findTaxonomy(this.catalog(), (item.input as FailureCaseInput).taxonomy);
        await recordFailureCase(this.ann, taxonomy, {
          itemId: item.id,
          annotator: currentAnnotator(),
          classes: p.classes,
          severity: p.severity,
          judgeWrong: p.judgeWrong,
          note: p.note,
          origin: 'panel',
          ...(queueId ? { queueId } : {}),
        });
      } else if (item.task === HALLUCINATION_CHECK_TASK) {
        await recordHallucinationCheck(this.ann, {
          itemId: item.id,
          annotator: currentAnnotator(),
          correct: p.correct,
          derivable: p.derivable,
          note: p.note,
          origin: 'panel',
          ...(queueId ? { queueId } : {}),
        });
      } else throw new Error(`Item ${p.itemId} is not a failure case or a hallucination check.`);
      this.message = `Saved ${item.itemRef ?? item.id}.`;
      if (this.mode.kind === 'queue') await this.advance();
      return this.build();
    });
    this.rpc.onRequest(SkipCaseRequest, async ({ itemId }) => {
      if (this.mode.kind === 'queue') {
        await this.ann.release(this.mode.queueId, itemId, currentAnnotator());
        await this.advance(true);
      }
      return this.build();
    });
    this.rpc.onRequest(ShowFailureFiguresRequest, async () => this.build(true));
    // tag in the timeline instead (same tags, same store), the failed item carried along
    this.rpc.onRequest(OpenInTimelineRequest, async ({ step }) => {
      const runId = this.runId();
      if (!runId) throw new Error('No run is shown.');
      const caseId = this.caseItemId();
      const item = caseId ? await this.ann.getItem(caseId) : undefined;
      await TimelinePanel.show(this.ctx, runId, {
        focusStep: step,
        ...(item?.task === FAILURE_CASE_TASK ? { caseItemId: item.id } : {}),
      });
    });
    // a tag saved in the timeline (same store, same tags) shows here at once
    this.disposables.push(
      onDidChangeFailureTags((id) => {
        if (!this.selfTagged && id === this.runId()) void this.push(this.mode.kind === 'figures');
      }),
    );
  }

  /** Set while this panel announces its own tag (its answer already carries the new state). */
  private selfTagged = false;

  /** Shows a run to tag (optionally with the failure case it was opened for, and a step to select). */
  static async showRun(
    ctx: LoupeContext,
    runId: string,
    opts: { caseItemId?: string; focusStep?: number } = {},
  ): Promise<FailuresPanel> {
    if (!(await ctx.store().getRun(runId))) throw new Error(`No run ${runId} in the store ${ctx.storePath}`);
    return FailuresPanel.open(ctx, { kind: 'run', runId, ...opts });
  }

  /** Works a sampled queue: serves this annotator's next item with its trajectory. */
  static async showQueue(ctx: LoupeContext, queueId: string): Promise<FailuresPanel> {
    const p = await FailuresPanel.open(ctx, { kind: 'queue', queueId }, false);
    p.current = undefined;
    await p.advance();
    await p.push();
    return p;
  }

  /** Shows the figures. */
  static async showFigures(ctx: LoupeContext): Promise<FailuresPanel> {
    const p = await FailuresPanel.open(ctx, { kind: 'figures' }, false);
    await p.push(true);
    return p;
  }

  private static async open(ctx: LoupeContext, mode: Mode, push = true): Promise<FailuresPanel> {
    const { panel, created } = FailuresPanel.host.show(ctx, 'failures');
    panel.mode = mode;
    panel.message = undefined;
    if (!created && push) await panel.push();
    return panel;
  }

  /** Sends a fresh state to an open webview (after the first handshake the webview listens for it). */
  private async push(withFigures = false): Promise<void> {
    this.rpc.notify(DidChangeStateNotification, { state: await this.build(withFigures) });
  }

  private catalog(): TaxonomyCatalog {
    const ws = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return taxonomyCatalog(ws);
  }

  private runId(): string | undefined {
    return this.mode.kind === 'run' ? this.mode.runId : this.current ? this.currentRunId : undefined;
  }

  private currentRunId: string | undefined;

  private caseItemId(): string | undefined {
    if (this.mode.kind === 'run') return this.mode.caseItemId;
    return this.current?.itemId;
  }

  /** Serves the annotator's next open item of the queue (after the current one). */
  private async advance(skip = false): Promise<void> {
    if (this.mode.kind !== 'queue') return;
    const e = await this.ann.nextItem(
      this.mode.queueId,
      currentAnnotator(),
      this.current ? { afterPos: this.current.pos } : {},
    );
    if (skip && e && this.current && e.item.id === this.current.itemId) {
      this.current = undefined;
      return;
    }
    this.current = e ? { itemId: e.item.id, pos: e.pos } : undefined;
    this.currentRunId = e?.item.runId ?? undefined;
  }

  protected state(): Promise<FailuresState> {
    return this.build(this.mode.kind === 'figures');
  }

  private async stepText(runId: string, index: number): Promise<string> {
    const s = await this.ctx.store().getStep(runId, index);
    if (!s) throw new Error(`Step ${index + 1} of run ${runId} no longer exists.`);
    const parts = [s.assistant.reasoning ? `Reasoning:\n${s.assistant.reasoning}` : '', s.assistant.content ?? ''];
    for (const c of s.toolCalls) {
      parts.push(`▶ ${c.name}(${c.argumentsText})${c.isError ? '  [error]' : ''}\n${c.observation}`);
    }
    return parts.filter(Boolean).join('\n\n');
  }

  private artefacts(runId: string): Promise<FailureArtefact[]> {
    return failureArtefacts(this.ctx.store(), runId, this.ctx.runsDirectory);
  }

  /** The run on screen, opened on the attached case's item in run and queue mode alike (issue 42). */
  private runView(runId: string, focusStep?: number): Promise<FailureRunView> {
    const caseItemId = this.caseItemId();
    return failureRunView(this.ctx.store(), this.ann, runId, {
      ...(caseItemId ? { caseItemId } : {}),
      ...(focusStep !== undefined ? { focusStep } : {}),
      runsRoot: this.ctx.runsDirectory,
      taxonomy: this.catalog().taxonomies[0]?.id ?? '',
    });
  }

  private async caseView(): Promise<FailureCaseView | null> {
    if (this.mode.kind !== 'queue' || !this.current) return null;
    const q = await this.ann.getQueue(this.mode.queueId);
    const item = await this.ann.getItem(this.current.itemId);
    if (!q || !item) return null;
    const prog = await this.ann.progress(q.id);
    const mineA = currentAnnotations(await this.ann.annotations(item.id)).byAnnotator.get(currentAnnotator());
    const base = {
      itemId: item.id,
      queueId: q.id,
      queueName: q.name,
      pos: this.current.pos,
      total: prog.total,
      done: prog.done,
    };
    if (item.task === FAILURE_CASE_TASK) {
      const i = item.input as FailureCaseInput;
      const v = mineA?.verdict as FailureCaseVerdict | undefined;
      return {
        kind: 'failure-case',
        ...base,
        model: i.model,
        scenario: i.scenario,
        ref: i.ref,
        question: i.question,
        detail: i.detail,
        taxonomy: i.taxonomy,
        mine: v
          ? {
              classes: v.classes,
              ...(v.severity ? { severity: v.severity } : {}),
              ...(v.judgeWrong ? { judgeWrong: true } : {}),
              note: mineA!.note,
            }
          : null,
      };
    }
    const i = item.input as HallucinationInput;
    const v = mineA?.verdict as HallucinationVerdict | undefined;
    return {
      kind: 'hallucination-check',
      ...base,
      model: i.model,
      scenario: i.scenario,
      ref: `insight ${i.index + 1}`,
      question: i.text,
      detail:
        i.stepIndex === null
          ? 'the final report: the agent saw the whole trajectory'
          : `written after step ${i.stepIndex + 1}: the agent saw steps 1–${i.stepIndex + 1}`,
      taxonomy: '',
      mine: v ? { correct: v.correct, derivable: v.derivable, note: mineA!.note } : null,
    };
  }

  private async build(withFigures = false): Promise<FailuresState> {
    const cat = this.catalog();
    const message = this.message;
    this.message = undefined;
    const state: FailuresState = {
      annotator: currentAnnotator(),
      taxonomies: cat.taxonomies,
      taxonomyErrors: cat.errors.map((e) => e.message),
      run: null,
      case: null,
      figures: null,
      ...(message ? { message } : {}),
    };
    try {
      if (this.mode.kind === 'run') state.run = await this.runView(this.mode.runId, this.mode.focusStep);
      if (this.mode.kind === 'queue') {
        state.case = await this.caseView();
        if (state.case) {
          const item = await this.ann.getItem(state.case.itemId);
          const hi = item?.task === HALLUCINATION_CHECK_TASK ? (item.input as HallucinationInput).stepIndex : undefined;
          state.run = await this.runView(item!.runId!, hi ?? undefined);
        } else {
          const q = await this.ann.getQueue(this.mode.queueId);
          const p = q ? await this.ann.progress(q.id) : { total: 0, done: 0 };
          state.queueDone = { queueName: q?.name ?? this.mode.queueId, total: p.total, done: p.done };
        }
      }
      if (withFigures || this.mode.kind === 'figures') {
        const figs = await failureFigures(this.ann, cat.taxonomies);
        state.figures = {
          fig8: failureClassSpec(figs.fig8),
          table6: hallucinationSpec(figs.table6),
          fig8Rows: figs.fig8.length,
          table6Rows: figs.table6.length,
          counts: figs.counts,
        };
      }
    } catch (e) {
      state.message = errorMessage(e);
    }
    return state;
  }
}

/** `loupe.tagFailures`: a run's trajectory and report to tag (arg: a run id or a runs-view item; else picked). */
export async function tagFailuresCommand(ctx: LoupeContext, arg?: unknown): Promise<boolean> {
  let id =
    typeof arg === 'string'
      ? arg
      : ((arg as { runId?: string; run?: { id?: string } } | undefined)?.runId ??
        (arg as { run?: { id?: string } } | undefined)?.run?.id);
  if (!id) {
    const runs = await ctx.store().listRuns({ limit: 200 });
    const pick = await vscode.window.showQuickPick(
      runs.map((r) => ({
        label: `${oneLine(r.model ?? r.agent)} · ${oneLine(r.blockId)}`,
        description: `${r.suite} · ${r.status}`,
        detail: r.id,
        id: r.id,
      })),
      { title: 'Tag Failures in a Run', matchOnDetail: true },
    );
    id = pick?.id;
  }
  if (!id) return false;
  await FailuresPanel.showRun(ctx, id);
  return true;
}

/**
 * `loupe.tagFailure`: "Tag failure" on a failed item (a checklist item judged not supported, a wrong answer): its
 * failure case is created and the run's trajectory opens with the item attached. Arg: `{ runId, ref, question, detail? }`.
 */
export async function tagFailureOfItemCommand(ctx: LoupeContext, arg?: unknown): Promise<boolean> {
  const a = (arg ?? {}) as { runId?: string; ref?: string; question?: string; detail?: string; step?: number };
  if (!a.runId || !a.ref) throw new Error('Tag failure needs a run and the item that failed.');
  const store = ctx.store();
  const run = await store.getRun(a.runId);
  if (!run) throw new Error(`No run ${a.runId} in the store ${ctx.storePath}`);
  const fa = findBenchmark(run.suite)?.failureAnalysis;
  if (!fa) throw new Error(`${run.suite} runs have no failure taxonomy.`);
  const score = (await store.scores.list(run.id))[0]?.detail as { model?: string } | undefined;
  const steps = (await store.getStepSummaries(run.id)).length;
  const item = await ensureFailureCase(annotationStoreOf(store), run, steps, {
    benchmark: run.suite,
    runId: run.id,
    blockId: run.blockId,
    model: score?.model ?? run.model ?? run.agent,
    scenario: score ? fa.scenario(score as never) : 'unscored',
    ref: a.ref,
    question: a.question ?? a.ref,
    detail: a.detail ?? 'judged incorrect',
    taxonomy: fa.taxonomy.id,
  });
  await FailuresPanel.showRun(ctx, run.id, {
    caseItemId: item.id,
    ...(a.step !== undefined ? { focusStep: a.step } : {}),
  });
  return true;
}

/** `loupe.openFailureQueue`: samples (seeded, N per model × scenario from the settings) and works the queue. */
export async function openFailureQueueCommand(ctx: LoupeContext, arg?: unknown): Promise<string | undefined> {
  const kind =
    typeof arg === 'string'
      ? arg
      : (
          await vscode.window.showQuickPick(
            [
              {
                label: '$(bug) Failure analysis',
                description: 'items judged incorrect, per model × scenario, each with its trajectory (DDR-Bench §6)',
                queue: 'failures',
              },
              {
                label: '$(eye) Hallucination audit',
                description: 'insights: are their facts correct and derivable from what the agent saw? (DDR-Bench §7)',
                queue: 'hallucination',
              },
            ],
            { title: 'Open Failure Queue' },
          )
        )?.queue;
  if (!kind) return undefined;
  const sel = failureSampling();
  const ann = annotationStoreOf(ctx.store());
  const q =
    kind === 'hallucination'
      ? await openHallucinationQueue(ann, ctx.store(), sel)
      : await openFailureQueue(ann, ctx.store(), sel);
  ctx.log.info(
    `failure queue ${q.queue.name}: ${q.items.length} items over ${q.strata.length} strata; skipped ${q.skipped.length} runs`,
  );
  await FailuresPanel.showQueue(ctx, q.queue.id);
  return q.queue.id;
}

/** `loupe.showFailureFigures`. */
export async function showFailureFiguresCommand(ctx: LoupeContext): Promise<boolean> {
  await FailuresPanel.showFigures(ctx);
  return true;
}
