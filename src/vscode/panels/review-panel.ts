/**
 * Side-by-side review (issue 16): the review panel (one pairwise queue per panel: two runs of one block aligned
 * section by section, numbers traced to notebook cells, blind votes per criterion, keyboard first) and the pairwise
 * ranking view. Votes are annotations of the annotation model (src/core/annotations) through src/core/review.
 */
import * as vscode from 'vscode';
import { annotationStoreOf, type AnnotationQueue, type AnnotationStore } from '../../core/annotations/index.ts';
import {
  choiceFromSides,
  ensurePairItem,
  judgePairs,
  leftSideFor,
  nextPair,
  openPairwiseQueue,
  pairOf,
  PAIRWISE_TASK,
  pairwiseVerdict,
} from '../../core/review/pairwise.ts';
import { criteriaByBlock, pairInstruction, reviewMarkdown, reviewSourceOf } from '../../app/review/sources.ts';
import { createJudge } from '../../core/eval/judges/factory.ts';
import { judgementStoreOf } from '../../core/eval/store.ts';
import { apiKeySecretName } from '../config.ts';
import type { Suite } from '../../core/suites/types.ts';
import { pairGroundTruth, pairView, rankingState, reviewQueueView } from '../../app/review/review.ts';
import { LoupeInputError } from '../../core/util/errors.ts';
import { errorMessage } from '../../core/util/errors.ts';
import {
  JudgePairsRequest,
  NextPairRequest,
  OpenTracedCellRequest,
  PairGroundTruthRequest,
  RankingRequest,
  ReviewProgressNotification,
  SubmitVoteRequest,
  type RankingState,
  type ReviewState,
} from '../../protocol/review.ts';
import { DidChangeStateNotification } from '../../protocol/webview.ts';
import { annotationSettings, currentAnnotator, reviewRubric } from '../config.ts';
import type { LoupeContext } from '../context.ts';
import { LoupePanel, PanelHost, SINGLETON } from './panel-base.ts';
import { showInformationMessage, showWarningMessage } from '../messages.ts';

export class ReviewPanel extends LoupePanel {
  static readonly host = new PanelHost<ReviewPanel>({
    viewType: 'loupe.review',
    title: () => 'Side-by-Side Review',
    create: (ctx, panel, queueId) => new ReviewPanel(ctx, panel, queueId),
    restoreKey: (_ctx, state) => (state as { queueId?: string } | undefined)?.queueId,
  });
  static readonly viewType = ReviewPanel.host.viewType;
  readonly queueId: string;
  private readonly ann: AnnotationStore;
  /** Run ids behind the screen sides of the pair on screen. */
  private sides: { itemId: string; left: string; right: string } | undefined;

  /** Shows the review panel of a pairs queue. */
  static show(ctx: LoupeContext, q: AnnotationQueue): ReviewPanel {
    const { panel } = ReviewPanel.host.show(ctx, q.id);
    panel.panel.title = `Review: ${q.name}`;
    return panel;
  }

  static get(queueId: string): ReviewPanel | undefined {
    return ReviewPanel.host.get(queueId);
  }

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel, queueId: string) {
    super(ctx, panel, 'review', 'Side-by-Side Review');
    this.queueId = queueId;
    this.ann = annotationStoreOf(ctx.store());
    this.rpc.onRequest(NextPairRequest, async ({ skip }) => {
      if (skip) await this.ann.release(this.queueId, skip, currentAnnotator());
      return this.serve(skip);
    });
    this.rpc.onRequest(SubmitVoteRequest, async (p) => {
      const item = await this.ann.getItem(p.itemId);
      if (!item) throw new Error(`The pair ${p.itemId} is no longer in the store`);
      const who = currentAnnotator();
      const shownLeft = leftSideFor(item.id, who);
      const criteria: Record<string, string> = {};
      for (const [k, v] of Object.entries(p.criteria)) criteria[k] = choiceFromSides(v, shownLeft);
      let verdict;
      try {
        verdict = pairwiseVerdict(
          pairOf(item).criteria,
          criteria,
          p.overall ? choiceFromSides(p.overall, shownLeft) : undefined,
          p.rationale,
          shownLeft,
        );
      } catch (e) {
        throw new Error(`Vote not saved: ${errorMessage(e)}`, { cause: e });
      }
      await this.ann.annotate({ itemId: item.id, annotator: who, verdict, origin: 'panel', queueId: this.queueId });
      for (const other of ReviewPanel.host.all()) if (other !== this) void other.refreshProgress();
      void RankingPanel.host.get(SINGLETON)?.refresh();
      return this.stateFor(item.id, 'Vote saved. The runs are now named above each output. Press n for the next pair.');
    });
    this.rpc.onRequest(PairGroundTruthRequest, async ({ itemId, ref }) => {
      const item = await this.ann.getItem(itemId);
      if (!item) throw new Error(`The pair ${itemId} is no longer in the store`);
      try {
        return await pairGroundTruth(
          this.ann,
          this.ctx.store(),
          item,
          currentAnnotator(),
          (await this.queue()).blind,
          ref,
        );
      } catch (e) {
        if (e instanceof LoupeInputError) throw new Error(e.message.replace(/^[^:]*: /, ''), { cause: e });
        throw e;
      }
    });
    this.rpc.onRequest(OpenTracedCellRequest, async ({ itemId, side, seq }) => {
      if (!this.sides || this.sides.itemId !== itemId) throw new Error('That pair is no longer on screen');
      await vscode.commands.executeCommand(
        'loupe.openRunNotebook',
        side === 'left' ? this.sides.left : this.sides.right,
        seq,
      );
    });
  }

  private async queue(): Promise<AnnotationQueue> {
    const q = await this.ann.getQueue(this.queueId);
    if (!q) throw new Error(`The review queue ${this.queueId} is no longer in the store ${this.ctx.storePath}`);
    return q;
  }

  /** The next pair for this window's reviewer (most uncertain first, reserved for them). */
  async serve(skip?: string): Promise<ReviewState> {
    const q = await this.queue();
    const who = currentAnnotator();
    let e = await nextPair(this.ann, this.ctx.store(), q.id, who);
    if (e && skip && e.item.id === skip) {
      // skipping: serve another pair when there is one, the skipped one otherwise
      const again = await this.ann.nextItem(q.id, who, { pick: (es) => es.find((x) => x.item.id !== skip) ?? es[0] });
      e = again ?? e;
    }
    if (!e) {
      this.sides = undefined;
      return {
        queue: await reviewQueueView(this.ann, q, who),
        pair: null,
        message: 'Nothing left to review for you in this queue. Loupe: Show Pairwise Ranking shows the ratings.',
      };
    }
    return this.stateFor(e.item.id, null);
  }

  private async stateFor(itemId: string, message: string | null): Promise<ReviewState> {
    const q = await this.queue();
    const who = currentAnnotator();
    const item = await this.ann.getItem(itemId);
    if (!item) throw new Error(`The pair ${itemId} is no longer in the store`);
    const { view, sides } = await pairView(this.ann, this.ctx.store(), item, who, this.ctx.runsDirectory, q.blind);
    this.sides = { itemId, ...sides };
    return { queue: await reviewQueueView(this.ann, q, who), pair: view, message };
  }

  private async refreshProgress(): Promise<void> {
    const q = await this.ann.getQueue(this.queueId);
    if (q) {
      this.rpc.notify(ReviewProgressNotification, { queue: await reviewQueueView(this.ann, q, currentAnnotator()) });
    }
  }

  protected async state(): Promise<ReviewState> {
    return this.serve();
  }
}

export class RankingPanel extends LoupePanel {
  static readonly host = new PanelHost<RankingPanel, typeof SINGLETON>({
    viewType: 'loupe.ranking',
    title: () => 'Pairwise Ranking',
    create: (ctx, panel) => new RankingPanel(ctx, panel),
    restoreKey: () => SINGLETON,
  });
  static readonly viewType = RankingPanel.host.viewType;
  private current: { suite: string | null; criterion: string; source: 'human' | 'llm' | 'all' } = {
    suite: null,
    criterion: 'overall',
    source: 'human',
  };

  static show(ctx: LoupeContext): RankingPanel {
    return RankingPanel.host.show(ctx, SINGLETON).panel;
  }

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel) {
    super(ctx, panel, 'ranking', 'Pairwise Ranking');
    this.rpc.onRequest(RankingRequest, async (p) => {
      this.current = { suite: p.suite, criterion: p.criterion, source: p.source };
      return this.state();
    });
    this.rpc.onRequest(JudgePairsRequest, async (p) => {
      const r = await judgePairsWithSettings(ctx, p.suite);
      this.current = { suite: p.suite, criterion: p.criterion, source: 'llm' };
      return { ...(await this.state()), judged: r };
    });
  }

  /** Recomputes after a vote elsewhere. */
  async refresh(): Promise<void> {
    this.rpc.notify(DidChangeStateNotification, { state: await this.state() });
  }

  protected async state(): Promise<RankingState> {
    return rankingState(annotationStoreOf(this.ctx.store()), this.ctx.store(), {
      ...this.current,
      title: `Pairwise ranking · ${this.ctx.storePath}`,
    });
  }
}

/** Run ids from a Runs view invocation: the selection (multi-select) or the clicked run, or run ids given by a caller. */
function runIdsOf(arg: unknown, selection: unknown): string[] {
  const idOf = (x: unknown): string | undefined =>
    typeof x === 'string' ? x : (x as { run?: { id?: string } } | undefined)?.run?.id;
  if (Array.isArray(selection) && selection.length) return selection.map(idOf).filter((x): x is string => !!x);
  if (Array.isArray(arg)) return arg.map(idOf).filter((x): x is string => !!x);
  const one = idOf(arg);
  return one ? [one] : [];
}

/** `loupe.compareRuns`: two runs selected in the Runs view (or two run ids) side by side, blind. */
export async function compareRunsCommand(
  ctx: LoupeContext,
  arg: unknown,
  selection: unknown,
): Promise<string | undefined> {
  const ids = runIdsOf(arg, selection);
  if (ids.length !== 2) {
    void showWarningMessage(
      `Loupe: select exactly two runs of one block in the Runs view to compare them side by side (${ids.length} selected).`,
    );
    return undefined;
  }
  const rs = ctx.store();
  const ann = annotationStoreOf(rs);
  const first = await rs.getRun(ids[0]!);
  if (!first) throw new Error(`The run ${ids[0]} is no longer in the store.`);
  const criteria = await criteriaByBlock({ rubric: reviewRubric() })(first);
  const item = await ensurePairItem(ann, rs, ids[0]!, ids[1]!, criteria);
  const p = pairOf(item);
  const q = await ann.openQueue(
    { kind: 'pairs', runIds: [p.runA, p.runB] },
    { name: `Compare ${p.blockId}`, reviewers: annotationSettings().reviewers, blind: true },
  );
  ReviewPanel.show(ctx, q);
  return q.id;
}

/** `loupe.openPairwiseReview`: a queue of pairs over the selected runs, or over every finished run of a benchmark the user picks. */
export async function openPairwiseReviewCommand(
  ctx: LoupeContext,
  arg: unknown,
  selection: unknown,
): Promise<string | undefined> {
  const rs = ctx.store();
  let sel: { suite?: string; runIds?: string[] } | undefined;
  const ids = runIdsOf(arg, selection);
  if (ids.length >= 2) sel = { runIds: ids };
  else if (
    arg &&
    typeof arg === 'object' &&
    typeof (arg as { suite?: unknown }).suite === 'string' &&
    !(arg as { run?: unknown }).run
  ) {
    sel = { suite: (arg as { suite: string }).suite };
  }
  if (!sel) {
    const runs = await rs.listRuns({});
    const bySuite = new Map<string, number>();
    for (const r of runs) {
      if (r.status === 'finished' || r.status === 'budget_exhausted') {
        bySuite.set(r.suite, (bySuite.get(r.suite) ?? 0) + 1);
      }
    }
    if (!bySuite.size) {
      void showWarningMessage(
        'Loupe: there are no finished runs to review yet. Run a benchmark block twice (two models or settings) first.',
      );
      return undefined;
    }
    const pick = await vscode.window.showQuickPick(
      [...bySuite.entries()].map(([suite, n]) => ({
        label: suite,
        description: `${n} finished run${n === 1 ? '' : 's'}`,
        suite,
      })),
      { title: 'Open Pairwise Review', placeHolder: 'Review pairs of runs of which benchmark?' },
    );
    if (!pick) return undefined;
    sel = { suite: pick.suite };
  }
  const res = await openPairwiseQueue(annotationStoreOf(rs), rs, sel, criteriaByBlock({ rubric: reviewRubric() }), {
    reviewers: annotationSettings().reviewers,
  });
  ReviewPanel.show(ctx, res.queue);
  return res.queue.id;
}

/**
 * Runs the LLM pairwise judge of the settings (`loupe.judge.profile`) on the pairs of a benchmark (both orders; an
 * inconsistent choice is a tie). @returns a one-line summary. @throws Error in settings terms when no profile is set.
 */
export async function judgePairsWithSettings(ctx: LoupeContext, suite: string | null): Promise<string> {
  const rs = ctx.store();
  const j = ctx.settings.judge;
  const profile = ctx.settings.models.find((m) => m.name === j.profile);
  if (!profile) {
    throw new Error(
      `The LLM pairwise judge needs a model profile: set loupe.judge.profile to one of ${ctx.settings.models.map((m) => m.name).join(', ') || 'the profiles of loupe.models (none yet)'}.`,
    );
  }
  const apiKey = (await ctx.extension.secrets.get(apiKeySecretName(profile.name))) ?? '';
  const judge = createJudge(
    { kind: 'llm', model: profile.model, baseUrl: profile.baseUrl, apiKey },
    judgementStoreOf(rs),
    async () => undefined,
  );
  const items = await annotationStoreOf(rs).listItems({ task: PAIRWISE_TASK, ...(suite ? { suite } : {}) });
  if (!items.length) throw new Error('There are no pairs to judge yet: open a pairwise review first.');
  const suites = new Map<string, Promise<Suite>>();
  const res = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `Loupe: LLM pairwise judge (${profile.name}) on ${items.length} pair${items.length === 1 ? '' : 's'}`,
    },
    () =>
      judgePairs(
        rs,
        judge,
        items,
        async (id) => reviewMarkdown((await reviewSourceOf(rs, id, ctx.runsDirectory)).source),
        (p) => pairInstruction(rs, p, suites),
      ),
  );
  const line = `${res.judged} pair${res.judged === 1 ? '' : 's'} judged by ${judge.id}; both orders agreed on ${res.consistent}${res.failed.length ? `; ${res.failed.length} not judged (${res.failed[0]!.error})` : ''}`;
  void RankingPanel.host.get(SINGLETON)?.refresh();
  return line;
}

/** `loupe.judgePairs`: the LLM pairwise judge on a benchmark's pairs (picked when several have pairs). */
export async function judgePairsCommand(ctx: LoupeContext, arg: unknown): Promise<string | undefined> {
  let suite = typeof arg === 'string' ? arg : ((arg as { suite?: string } | undefined)?.suite ?? null);
  if (!suite) {
    const suites = [
      ...new Set(
        (await annotationStoreOf(ctx.store()).listItems({ task: PAIRWISE_TASK }))
          .map((i) => i.suite)
          .filter((x): x is string => !!x),
      ),
    ].sort();
    if (suites.length > 1) {
      suite =
        (await vscode.window.showQuickPick(suites, {
          title: 'Judge Pairs with the LLM',
          placeHolder: 'Pairs of which benchmark?',
        })) ?? null;
    } else suite = suites[0] ?? null;
    if (!suite) return undefined;
  }
  const line = await judgePairsWithSettings(ctx, suite);
  void showInformationMessage(`Loupe: ${line}.`);
  return line;
}

/** `loupe.showPairwiseRanking`. */
export function showPairwiseRankingCommand(ctx: LoupeContext): boolean {
  RankingPanel.show(ctx);
  return true;
}
