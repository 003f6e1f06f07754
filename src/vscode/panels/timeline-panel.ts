/** The Trajectory Timeline panel: one per run, live while the run writes steps to the store. */
import * as vscode from 'vscode';
import { annotationStoreOf } from '../../core/annotations/index.ts';
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import {
  FAILURE_CASE_TASK,
  tagSteps,
  type FailureCaseInput,
  type FailureTagVerdict,
} from '../../core/failures/index.ts';
import { findTaxonomy, taxonomyCatalog } from '../../app/failures/registry.ts';
import { failureTagViews } from '../../app/failures/failure-tags.ts';
import { timelineScoring } from '../../app/results/outcomes.ts';
import type { Suite } from '../../core/suites/types.ts';
import {
  followTimeline,
  openTimeline,
  TIMELINE_POLL_MS,
  timelineHeatmap,
  toTimelineRun,
  type OpenedTimeline,
  type TimelineFollow,
} from '../../app/timeline/timeline.ts';
import {
  DidAppendStepsNotification,
  DidChangeFailureTagsNotification,
  FocusStepNotification,
  GetStepDetailRequest,
  RevealToolCallRequest,
  SearchStepsRequest,
  TagStepsRequest,
  type StepDetail,
  type TimelineFailures,
  type TimelineScoring,
  type TimelineState,
  type TimelineStep,
} from '../../protocol/timeline.ts';
import { currentAnnotator } from '../config.ts';
import type { LoupeContext } from '../context.ts';
import type { RunRecord } from '../../core/store/records.ts';
import type { RpcEndpoint } from '../../protocol/ipc.ts';
import { fireFailureTagsChanged, onDidChangeFailureTags } from './failure-tag-events.ts';
import { LoupePanel, PanelHost } from './panel-base.ts';

/** Reveals what a tool call produced elsewhere (notebook cell, documentation search). Set by the run UI. */
export type ToolCallRevealer = (
  runId: string,
  stepIndex: number,
  callId: string,
  toolName: string,
  argumentsText: string,
) => Promise<'notebook' | 'docsearch' | 'none'>;

export class TimelinePanel extends LoupePanel {
  static readonly host = new PanelHost<TimelinePanel>({
    viewType: 'loupe.timeline',
    title: async (ctx, runId) => `Timeline: ${(await ctx.store().getRun(runId))?.blockId ?? runId}`,
    create: (ctx, panel, runId) => new TimelinePanel(ctx, panel, runId),
    restoreKey: async (ctx, state) => {
      const runId = (state as { runId?: string } | undefined)?.runId;
      return runId && (await ctx.store().getRun(runId)) ? runId : undefined;
    },
  });
  static readonly viewType = TimelinePanel.host.viewType;
  /** Hook used by the Documentation Search / notebook integration (see run-ui.ts). */
  static revealer: ToolCallRevealer | undefined;
  /** Issue 20: wires human steps, run controls and forks into a timeline (set by the run UI, `run/timeline-assist.ts`). */
  static attachAssistance: ((ctx: LoupeContext, rpc: RpcEndpoint, runId: string) => vscode.Disposable) | undefined;
  /**
   * How often an open timeline reads the store for steps other processes committed (ms). Steps of a run in this
   * window come at once (`ctx.onDidCommitSteps`). Integration tests lengthen it (test hooks, src/extension.ts).
   */
  static pollIntervalMs = TIMELINE_POLL_MS;
  readonly runId: string;
  private steps: TimelineStep[] = [];
  private follow: TimelineFollow | undefined;
  /** Updates go to the webview one after another, in the order they were read (their reads are asynchronous). */
  private sending: Promise<void> = Promise.resolve();
  /** Counts the subscriptions: an update read under an earlier one (before a store switch) is not sent. */
  private generation = 0;
  private opts: { focusStep?: number; showHeatmap?: boolean } = {};
  /** The failure case (a failed item) the timeline was opened for: tags made here are linked to it. */
  private caseItemId: string | undefined;

  /** Shows the timeline of `runId` (creating the panel if needed). */
  static async show(
    ctx: LoupeContext,
    runId: string,
    opts: { focusStep?: number; showHeatmap?: boolean; column?: vscode.ViewColumn; caseItemId?: string } = {},
  ): Promise<TimelinePanel> {
    const existing = TimelinePanel.host.get(runId);
    if (existing) {
      existing.panel.reveal(opts.column);
      if (opts.caseItemId && opts.caseItemId !== existing.caseItemId) {
        existing.caseItemId = opts.caseItemId;
        const failures = await existing.failures().catch(() => undefined);
        if (failures) existing.rpc.notify(DidChangeFailureTagsNotification, { runId, failures });
      }
      if (opts.focusStep !== undefined) existing.rpc.notify(FocusStepNotification, { index: opts.focusStep });
      return existing;
    }
    if (!(await ctx.store().getRun(runId))) throw new Error(`No run ${runId} in the store ${ctx.storePath}`);
    const { panel } = TimelinePanel.host.show(ctx, runId, opts.column ?? vscode.ViewColumn.Active);
    panel.opts = opts; // read on the webview's ready handshake, which comes after this
    panel.caseItemId = opts.caseItemId;
    return panel;
  }

  /** All open timelines (tests and the run UI use it). */
  static get(runId: string): TimelinePanel | undefined {
    return TimelinePanel.host.get(runId);
  }

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel, runId: string) {
    super(ctx, panel, 'timeline', `Timeline: ${runId}`);
    this.runId = runId;
    this.rpc.onRequest(GetStepDetailRequest, ({ runId: id, index }) => this.detail(id, index));
    this.rpc.onRequest(SearchStepsRequest, async ({ runId: id, query }) => ({
      indices: await this.ctx.store().searchSteps(id, query),
    }));
    this.rpc.onRequest(RevealToolCallRequest, async ({ runId: id, index, callId }) => {
      const step = await this.ctx.store().getStep(id, index);
      const call = step?.toolCalls.find((c) => c.id === callId);
      if (!call || !TimelinePanel.revealer) return { revealed: 'none' as const };
      return { revealed: await TimelinePanel.revealer(id, index, callId, call.name, call.argumentsText) };
    });
    // issue 19: tag a step or a step range as a failure, through the same code and store as the Failure Analysis panel
    this.rpc.onRequest(TagStepsRequest, async (p) => {
      if (p.runId !== this.runId) throw new Error(`This timeline shows run ${this.runId}, not ${p.runId}.`);
      const taxonomy = findTaxonomy(this.catalog(), p.taxonomy);
      const r = await tagSteps(annotationStoreOf(this.ctx.store()), this.ctx.store(), {
        taxonomy,
        classes: p.classes,
        severity: p.severity,
        note: p.note,
        annotator: currentAnnotator(),
        origin: 'timeline',
        runId: this.runId,
        from: p.from,
        to: p.to,
        ...(this.caseItemId ? { caseItemId: this.caseItemId } : {}),
      });
      fireFailureTagsChanged(this.runId);
      return {
        failures: await this.failures(),
        message: `Tagged ${r.item.itemRef}: ${(r.annotation.verdict as FailureTagVerdict).classes.join(', ')} (${p.severity}).`,
      };
    });
    this.disposables.push(
      onDidChangeFailureTags(async (id) => {
        if (id !== this.runId) return;
        const failures = await this.failures().catch(() => undefined);
        if (failures) this.rpc.notify(DidChangeFailureTagsNotification, { runId: this.runId, failures });
      }),
    );
    this.onDisposed(() => this.stopLiveUpdates());
    // Another run store (the Loupe: Store setting, a new team store password): read the run again from it.
    this.disposables.push(ctx.onDidSwitchStore(() => this.followStore()));
    // A run in this window committed a step (or ended): read it now through the poll's own read, not at the next tick.
    this.disposables.push(
      ctx.onDidCommitSteps((e) => {
        if (e.runId !== this.runId) return;
        this.follow?.poll();
        if (e.ended) this.checkStatus();
      }),
    );
    // A score saved elsewhere (Results, `loupe score`, the checklist panel) updates the marks.
    this.disposables.push(ctx.onDidChangeRuns(() => void this.pushScoring()));
    if (TimelinePanel.attachAssistance) this.disposables.push(TimelinePanel.attachAssistance(ctx, this.rpc, runId));
  }

  protected state(): Promise<TimelineState> {
    return this.initialState(this.opts);
  }

  /**
   * The run store in use changed: stop following the old one and load the page again, which reads the run from the
   * new store (or says it is not there; switching back shows it again).
   */
  private followStore(): void {
    this.stopLiveUpdates();
    this.lastStatus = '';
    this.scoredKey = '';
    this.reloadWebview();
  }

  private async initialState(opts: { focusStep?: number; showHeatmap?: boolean }): Promise<TimelineState> {
    let location: string;
    try {
      location = this.ctx.storePath;
    } catch (e) {
      throw new Error(
        `The Loupe: Store setting does not name a run store, so run ${this.runId} cannot be shown: ${e instanceof Error ? e.message : String(e)}`,
        { cause: e },
      );
    }
    const found = await this.ctx
      .store()
      .getRun(this.runId)
      .then(
        (r) => !!r,
        (e: unknown) => {
          throw new Error(
            `The run store ${location} cannot be read, so run ${this.runId} cannot be shown: ${e instanceof Error ? e.message : String(e)}`,
            { cause: e },
          );
        },
      );
    if (!found) {
      throw new Error(
        `Run ${this.runId} is not in the run store now in use (${location}). It is still in the store it was recorded in: set Loupe: Store back to that store to see it here, or open one of this store's runs from the Runs view.`,
      );
    }
    // Summaries only, read off the host's thread: observations stay in the store until a step's detail is asked for (issue 23).
    const opened = await openTimeline(this.ctx.store(), this.runId);
    const { run } = opened;
    this.steps = opened.steps;
    this.startLiveUpdates(opened);
    // the failure tags are read alongside the scoring (one small indexed query each), not after it
    const [scoring, failures] = await Promise.all([
      this.scoring(run),
      this.failures().catch((e: unknown) => {
        this.ctx.log.warn(`Timeline ${run.id}: failure tags: ${e instanceof Error ? e.message : String(e)}`);
        return undefined;
      }),
    ]);
    return {
      run: toTimelineRun(run),
      steps: this.steps,
      heatmap: opened.heatmap,
      focusStep: opts.focusStep,
      showHeatmap: opts.showHeatmap,
      scoring,
      ...(failures ? { failures } : {}),
    };
  }

  private catalog() {
    return taxonomyCatalog(vscode.workspace.workspaceFolders?.[0]?.uri.fsPath);
  }

  /** The run's failure tags and the taxonomies to tag with (the run's benchmark's preselected). */
  private async failures(): Promise<TimelineFailures> {
    const run = await this.ctx.store().getRun(this.runId);
    const cat = this.catalog();
    const own = run ? findBenchmark(run.suite)?.failureAnalysis?.taxonomy.id : undefined;
    const item = this.caseItemId ? await annotationStoreOf(this.ctx.store()).getItem(this.caseItemId) : undefined;
    const c = item?.task === FAILURE_CASE_TASK ? (item.input as FailureCaseInput) : undefined;
    return {
      ...(c ? { attached: { ref: c.ref, question: c.question, detail: c.detail } } : {}),
      taxonomies: cat.taxonomies,
      taxonomy: c?.taxonomy ?? own ?? cat.taxonomies[0]?.id ?? '',
      tags: await failureTagViews(annotationStoreOf(this.ctx.store()), this.runId),
      annotator: currentAnnotator(),
      errors: cat.errors.map((e) => e.message),
    };
  }

  private readonly suites = new Map<string, Promise<Suite>>();
  /** What the last scoring saw (answers and status), so a live run is re-scored only when its answers change. */
  private scoredKey = '';

  /** Right / wrong / partial marks of the run (issue 22); null when the run has no per-item score, a failure is logged. */
  private async scoring(run: RunRecord): Promise<TimelineScoring | null> {
    try {
      const answers = await this.ctx.store().getAnswers(run.id);
      this.scoredKey = `${run.status}|${answers.map((a) => `${a.queryId}@${a.stepIndex}`).join(',')}`;
      return await timelineScoring(this.ctx.store(), run, this.suites);
    } catch (e) {
      this.ctx.log.warn(`Timeline ${run.id}: scoring: ${e instanceof Error ? e.message : String(e)}`);
      return null;
    }
  }

  /** Re-scores the run and sends the marks (after a score was saved). */
  private async pushScoring(): Promise<void> {
    const run = await this.ctx
      .store()
      .getRun(this.runId)
      .catch(() => undefined);
    if (!run) return;
    const scoring = await this.scoring(run);
    this.rpc.notify(DidAppendStepsNotification, {
      runId: this.runId,
      steps: [],
      heatmap: timelineHeatmap(this.steps),
      run: toTimelineRun(run),
      scoring,
    });
  }

  /** The scoring to send with an update: undefined when nothing it depends on changed. */
  private async rescore(run: RunRecord): Promise<TimelineScoring | null | undefined> {
    const answers = await this.ctx
      .store()
      .getAnswers(run.id)
      .catch(() => []);
    const key = `${run.status}|${answers.map((a) => `${a.queryId}@${a.stepIndex}`).join(',')}`;
    return key === this.scoredKey ? undefined : this.scoring(run);
  }

  private statusTimer: ReturnType<typeof setInterval> | undefined;

  private stopLiveUpdates(): void {
    this.follow?.();
    this.follow = undefined;
    this.generation++;
    this.statusQueued = false;
    clearInterval(this.statusTimer);
    this.statusTimer = undefined;
  }

  /** Queues an update for the webview after the ones before it; dropped when the subscription it was read under ended. */
  private send(update: () => Promise<void>): void {
    const generation = this.generation;
    this.sending = this.sending
      .then(async () => {
        if (generation === this.generation) await update();
      })
      .catch((e: unknown) =>
        this.ctx.log.warn(`Timeline ${this.runId}: update: ${e instanceof Error ? e.message : String(e)}`),
      );
  }

  /**
   * Follows the store for steps committed after the ones already shown: polled (any process may be writing), and read
   * at once when a run in this window commits one (`ctx.onDidCommitSteps`).
   */
  private startLiveUpdates(opened: OpenedTimeline): void {
    this.stopLiveUpdates();
    const store = this.ctx.store();
    // Only steps committed after the summaries were read (a step is never read twice, observations never in bulk).
    this.follow = followTimeline(
      store,
      opened,
      new Set(this.steps.map((s) => s.index)),
      (rows) => {
        this.steps.push(...rows);
        const heatmap = timelineHeatmap(this.steps);
        this.send(async () => {
          const run = await store.getRun(this.runId).catch(() => undefined);
          if (!run) return;
          const scoring = await this.rescore(run);
          this.rpc.notify(DidAppendStepsNotification, {
            runId: this.runId,
            steps: rows,
            heatmap,
            run: toTimelineRun(run),
            ...(scoring !== undefined ? { scoring } : {}),
          });
        });
      },
      { intervalMs: TimelinePanel.pollIntervalMs },
    );
    // Status changes without new steps (finished, cancelled) still update the header.
    this.statusTimer = setInterval(() => this.checkStatus(), 500);
  }

  /** Sends the run's header when its status changed since the last one sent. */
  private checkStatus(): void {
    // one check waiting at a time (a slow team store must not pile up the 500 ms timer's checks)
    if (!this.follow || this.statusQueued) return;
    this.statusQueued = true;
    const store = this.ctx.store();
    this.send(async () => {
      this.statusQueued = false;
      const run = await store.getRun(this.runId).catch(() => undefined);
      if (run && run.status !== this.lastStatus) {
        this.lastStatus = run.status;
        const scoring = await this.rescore(run);
        this.rpc.notify(DidAppendStepsNotification, {
          runId: this.runId,
          steps: [],
          heatmap: timelineHeatmap(this.steps),
          run: toTimelineRun(run),
          ...(scoring !== undefined ? { scoring } : {}),
        });
      }
    });
  }

  private lastStatus = '';
  private statusQueued = false;

  private async detail(runId: string, index: number): Promise<StepDetail> {
    const step = await this.ctx.store().getStep(runId, index);
    if (!step) throw new Error(`Step ${index + 1} of run ${runId} not found`);
    return {
      index,
      content: step.assistant.content ?? '',
      reasoning: step.assistant.reasoning ?? '',
      toolCalls: step.toolCalls.map((c) => ({
        id: c.id,
        name: c.name,
        argumentsText: c.argumentsText,
        observation: c.observation,
        isError: c.isError,
        truncated: c.truncated,
        durationMs: c.durationMs,
        ...(c.modelUse
          ? {
              modelUse: {
                calls: c.modelUse.calls,
                input: c.modelUse.usage.input,
                output: c.modelUse.usage.output,
                costUsd: c.modelUse.costUsd,
              },
            }
          : {}),
      })),
      usage: step.usage,
      finishReason: step.finishReason,
    };
  }
}
