/**
 * The expert annotation panel: one queue per panel, one item at a time, keyboard first; evidence opens where it
 * lives (timeline step, notebook cell, documentation page). The agreement view shows κ / α / AC1-AC2 with a
 * Vega-Lite confusion matrix. All data goes through the annotation store (src/core/annotations). Source: issue 14.
 */
import * as vscode from 'vscode';
import {
  agreementReport,
  annotationStoreOf,
  annotatorLabel,
  type AnnotationQueue,
  type AnnotationStore,
  type QueueSpec,
} from '../../core/annotations/index.ts';
import {
  annotationState,
  queueView,
  RunEvidenceCache,
  saveFactSplit,
  verdictFromChoice,
} from '../../app/annotation/annotation.ts';
import { errorMessage } from '../../core/util/errors.ts';
import {
  AgreementChangedNotification,
  ItemAtRequest,
  NextItemRequest,
  OpenEvidenceRequest,
  QueueProgressNotification,
  RefreshAgreementRequest,
  SaveDraftRequest,
  SaveFactSplitRequest,
  SubmitVerdictRequest,
  type AgreementState,
  type AnnotationState,
  type CitedEvidence,
} from '../../protocol/annotation.ts';
import { annotationSettings, currentAnnotator } from '../config.ts';
import type { LoupeContext } from '../context.ts';
import { LoupePanel, PanelHost, SINGLETON } from './panel-base.ts';
import { TimelinePanel } from './timeline-panel.ts';
import { assignedPick, itemsInScope, withQueueExtras } from '../../app/annotation/queue-assignment.ts';
import { queueAssignmentStoreOf } from '../../core/annotations/queues.ts';
import { currentScope, onDidChangeExperiment } from '../experiments.ts';

export class AnnotationPanel extends LoupePanel {
  static readonly host = new PanelHost<AnnotationPanel>({
    viewType: 'loupe.annotation',
    title: (_ctx, queueId) => `Annotate: ${queueId}`,
    create: (ctx, panel, queueId) => new AnnotationPanel(ctx, panel, queueId),
    restoreKey: (_ctx, state) => (state as { queueId?: string } | undefined)?.queueId,
  });
  static readonly viewType = AnnotationPanel.host.viewType;
  readonly queueId: string;
  private readonly annotations: AnnotationStore;
  /** A run's steps, cells and documentation searches, read once per run while the panel is open. */
  private readonly evidence = new RunEvidenceCache();

  /** Opens (creating or refreshing) the queue of `spec` and shows its panel. */
  static async open(ctx: LoupeContext, spec: QueueSpec): Promise<AnnotationPanel> {
    const store = annotationStoreOf(ctx.store());
    const q = await store.openQueue(spec, annotationSettings());
    const existing = AnnotationPanel.host.get(q.id);
    if (existing) {
      existing.panel.reveal();
      return existing;
    }
    const { panel } = AnnotationPanel.host.show(ctx, q.id);
    panel.panel.title = `Annotate: ${q.name}`;
    return panel;
  }

  static get(queueId: string): AnnotationPanel | undefined {
    return AnnotationPanel.host.get(queueId);
  }

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel, queueId: string) {
    super(ctx, panel, 'annotation', 'Annotate');
    this.queueId = queueId;
    this.annotations = annotationStoreOf(ctx.store());
    this.rpc.onRequest(NextItemRequest, ({ afterPos }) => this.serve(afterPos));
    this.rpc.onRequest(ItemAtRequest, async ({ pos }) => {
      const q = await this.queue();
      const e = await this.annotations.itemAt(q.id, pos);
      return this.track(
        await this.extras(
          await annotationState(this.annotations, this.ctx.store(), q, currentAnnotator(), e, this.evidence),
        ),
      );
    });
    this.rpc.onRequest(SubmitVerdictRequest, async (p) => {
      const q = await this.queue();
      const item = await this.annotations.getItem(p.itemId);
      if (!item) throw new Error(`The item ${p.itemId} is no longer in the store`);
      let verdict: unknown;
      try {
        verdict = verdictFromChoice(item.task, p.choice, p.note);
      } catch (e) {
        throw new Error(`Verdict not saved: ${errorMessage(e)}`, { cause: e });
      }
      await this.annotations.annotate({
        itemId: p.itemId,
        annotator: currentAnnotator(),
        verdict,
        evidence: p.evidence,
        note: p.note,
        supersedes: p.supersedes,
        role: q.spec.kind === 'disagreement' ? 'adjudicator' : 'annotator',
        origin: 'panel',
        queueId: q.id,
      });
      for (const other of AnnotationPanel.host.all()) if (other !== this) void other.refreshProgress();
      return this.track(
        await this.extras(
          await annotationState(
            this.annotations,
            this.ctx.store(),
            q,
            currentAnnotator(),
            { pos: p.pos, item },
            this.evidence,
          ),
        ),
      );
    });
    this.rpc.onRequest(SaveFactSplitRequest, async (p) => {
      const q = await this.queue();
      const item = await this.annotations.getItem(p.itemId);
      if (!item) throw new Error(`The item ${p.itemId} is no longer in the store`);
      try {
        await saveFactSplit(this.annotations, item, p.index, p.facts, currentAnnotator());
      } catch (e) {
        throw new Error(`Split not saved: ${errorMessage(e)}`, { cause: e });
      }
      return this.track(
        await annotationState(
          this.annotations,
          this.ctx.store(),
          q,
          currentAnnotator(),
          { pos: p.pos, item },
          this.evidence,
        ),
      );
    });
    this.rpc.onRequest(OpenEvidenceRequest, ({ evidence }) => this.openEvidence(evidence));
    this.rpc.onRequest(SaveDraftRequest, (d) =>
      this.annotations.saveDraft(this.queueId, d.itemId, currentAnnotator(), {
        choice: d.choice,
        note: d.note,
        evidence: d.evidence,
      }),
    );
    // Colleagues' annotations on a team store (LISTEN/NOTIFY, through the context): the progress follows; the item
    // being answered and its draft are untouched.
    this.disposables.push(
      ctx.onDidChangeAnnotations(() => {
        this.refreshProgress().catch((e: unknown) =>
          this.ctx.log.warn(`Annotation queue ${this.queueId}: ${errorMessage(e)}`),
        );
      }),
      onDidChangeExperiment(() => {
        this.refreshProgress().catch((e: unknown) =>
          this.ctx.log.warn(`Annotation queue ${this.queueId}: ${errorMessage(e)}`),
        );
      }),
    );
  }

  /** Shows the queue afresh (its instructions or assignment changed); the draft is kept (webview state and store). */
  reload(): void {
    this.reloadWebview();
  }

  /** Adds the queue's instructions, assignment progress and experiment scope (issue 43) to a state. */
  private async extras(s: AnnotationState): Promise<AnnotationState> {
    const scope = await currentScope(this.ctx);
    return withQueueExtras(this.ctx.store(), s, scope, await itemsInScope(this.ctx.store(), scope));
  }

  private async queue(): Promise<AnnotationQueue> {
    const q = await this.annotations.getQueue(this.queueId);
    if (!q) throw new Error(`The annotation queue ${this.queueId} is no longer in the store ${this.ctx.storePath}`);
    return q;
  }

  /** Serves the next item for this window's annotator (reserved for them). */
  async serve(afterPos: number): Promise<AnnotationState> {
    const q = await this.queue();
    const who = currentAnnotator();
    // issue 43: items assigned to this annotator first, then unassigned ones, never others'; only the experiment's
    const scope = await currentScope(this.ctx);
    const within = await itemsInScope(this.ctx.store(), scope);
    const assigned = await queueAssignmentStoreOf(this.ctx.store()).assignments(q.id);
    const pick = assigned.size || within ? { pick: assignedPick(assigned, who, within, afterPos) } : {};
    const e = await this.annotations.nextItem(q.id, who, { afterPos, ...pick });
    return this.track(
      await withQueueExtras(
        this.ctx.store(),
        await annotationState(this.annotations, this.ctx.store(), q, who, e, this.evidence),
        scope,
        within,
      ),
    );
  }

  private track(s: AnnotationState): AnnotationState {
    this.currentRunId = s.item?.runId ?? undefined;
    return s;
  }

  /** Tells the webview the queue's progress changed (another panel submitted); its draft is untouched. */
  private async refreshProgress(): Promise<void> {
    const q = await this.annotations.getQueue(this.queueId);
    if (q) {
      this.rpc.notify(QueueProgressNotification, {
        queue: (await this.extras({ queue: await queueView(this.annotations, q, currentAnnotator()), item: null }))
          .queue,
      });
    }
  }

  protected async state(): Promise<AnnotationState> {
    return this.serve(-1);
  }

  private async openEvidence(ev: CitedEvidence): Promise<void> {
    switch (ev.kind) {
      case 'step':
        await TimelinePanel.show(this.ctx, ev.runId, { focusStep: ev.step, column: vscode.ViewColumn.Beside });
        return;
      case 'cell':
        await vscode.commands.executeCommand('loupe.openRunNotebook', ev.runId, ev.seq);
        return;
      case 'doc':
        await vscode.commands.executeCommand('loupe.searchDocumentation', {
          ...(this.currentRunId ? { runId: this.currentRunId } : {}),
          query: ev.query ?? '',
          files: ev.path ? [ev.path] : undefined,
        });
        return;
      case 'span':
        return;
    }
  }

  /** The run of the item last shown (documentation evidence opens against it). */
  currentRunId: string | undefined;
}

/** Opens a queue from the command palette, the Runs view (a run) or a spec given by a caller. */
export async function openAnnotationQueueCommand(ctx: LoupeContext, arg: unknown): Promise<string | undefined> {
  let spec: QueueSpec | undefined;
  const a = arg as (Partial<QueueSpec> & { id?: string; run?: { id?: string } }) | undefined;
  if (a && typeof a === 'object' && typeof a.kind === 'string' && ['items', 'audit', 'disagreement'].includes(a.kind)) {
    spec = a as QueueSpec;
  } else if (a && typeof a === 'object' && typeof (a as { queueId?: unknown }).queueId === 'string') {
    // an existing queue by id (issue 43: a queue someone assigned you items of)
    const q = await annotationStoreOf(ctx.store()).getQueue((a as { queueId: string }).queueId);
    if (!q) {
      throw new Error(
        `There is no annotation queue ${(a as { queueId: string }).queueId} in the store ${ctx.storePath}.`,
      );
    }
    spec = q.spec;
  } else if (typeof arg === 'string') spec = { kind: 'items', runIds: [arg] };
  else if (a && typeof a === 'object' && (a.run?.id || typeof a.id === 'string')) {
    spec = { kind: 'items', runIds: [a.run?.id ?? a.id!] };
  }
  if (!spec) {
    const store = annotationStoreOf(ctx.store());
    await store.syncFromJudgements();
    const tasks = [...new Set((await store.listItems()).map((i) => i.task))].sort();
    const pick = await vscode.window.showQuickPick(
      [
        {
          label: '$(checklist) Pending items',
          description: 'every item a human judge is waiting for',
          spec: { kind: 'items' } as QueueSpec,
        },
        ...tasks.map((t) => ({
          label: `$(filter) Pending: ${t}`,
          description: 'one judge task',
          spec: { kind: 'items', task: t } as QueueSpec,
        })),
        {
          label: '$(search) Audit the LLM judge',
          description: 'a seeded sample of 10 LLM verdicts per criterion',
          spec: { kind: 'audit', perCriterion: 10, seed: 0 } as QueueSpec,
        },
        {
          label: '$(git-compare) Disagreements',
          description: 'adjudicate items where annotators, or the judge and the annotators, disagree',
          spec: { kind: 'disagreement' } as QueueSpec,
        },
      ],
      {
        title: 'Open Annotation Queue',
        placeHolder: tasks.length ? 'Which items?' : 'No judge items yet: score a run with the human judge first',
      },
    );
    spec = pick?.spec;
  }
  if (!spec) return undefined;
  const p = await AnnotationPanel.open(ctx, spec);
  return p.queueId;
}

export class AgreementPanel extends LoupePanel {
  static readonly host = new PanelHost<AgreementPanel, typeof SINGLETON>({
    viewType: 'loupe.agreement',
    title: () => 'Annotation Agreement',
    create: (ctx, panel) => new AgreementPanel(ctx, panel),
    restoreKey: () => SINGLETON,
  });
  static readonly viewType = AgreementPanel.host.viewType;

  static show(ctx: LoupeContext): AgreementPanel {
    return AgreementPanel.host.show(ctx, SINGLETON).panel;
  }

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel) {
    super(ctx, panel, 'agreement', 'Annotation Agreement');
    this.rpc.onRequest(RefreshAgreementRequest, () => this.state());
    // New annotations (a colleague's, on a team store) recompute the report; runs and steps landing do not.
    this.disposables.push(
      ctx.onDidChangeAnnotations(() => {
        this.state().then(
          (s) => this.rpc.notify(AgreementChangedNotification, s),
          (e: unknown) => this.ctx.log.warn(`Agreement: ${errorMessage(e)}`),
        );
      }),
    );
  }

  protected async state(): Promise<AgreementState> {
    const report = await agreementReport(annotationStoreOf(this.ctx.store()));
    const labels = Object.fromEntries(
      report.groups.flatMap((g) => g.annotators.map((a) => [a, annotatorLabel(a, g.roles[a])] as const)),
    );
    return { title: `Agreement · ${this.ctx.storePath}`, report, labels };
  }
}
