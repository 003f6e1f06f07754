/**
 * The BLADE decisions panel (issue 18): one per dataset. Author a ground-truth decision in a spec form whose check
 * runs on data.csv in the sandboxed kernel (shown inline), review sampled agent decisions with BLADE's review fields
 * by keyboard, see agreement per decision type, and accept a decision judged justifiable by consensus into a new
 * ground-truth version. All logic is the core's `BladeDecisionWorkbench`; this is glue.
 */
import * as vscode from 'vscode';
import type { DecisionForm } from '../../core/benchmarks/blade/authoring.ts';
import { DEFAULT_CONSENSUS, type ConsensusRule } from '../../core/benchmarks/blade/decision-review.ts';
import { BladeDecisionWorkbench } from '../../core/benchmarks/blade/decision-workbench.ts';
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import { errorMessage } from '../../core/util/errors.ts';
import {
  AcceptDecisionRequest,
  CheckFormRequest,
  NewFormRequest,
  NextDecisionRequest,
  SaveFormRequest,
  SetModeRequest,
  SubmitDecisionRequest,
  type BladeDecisionsState,
  type DecisionsMode,
} from '../../protocol/blade-decisions.ts';
import { DidChangeStateNotification } from '../../protocol/webview.ts';
import { readSettings } from '../config.ts';
import { annotationSettings, bladeReviewSettings, currentAnnotator } from '../config.ts';
import type { LoupeContext } from '../context.ts';
import { suiteRegistry } from '../suites.ts';
import { LoupePanel, PanelHost } from './panel-base.ts';
import { showErrorMessage, showInformationMessage, showWarningMessage } from '../messages.ts';

/** `<kind>\u0000<root>\u0000<block id>` */
type Key = string;

/** An empty form of a kind. */
export function emptyForm(kind: DecisionForm['kind']): DecisionForm {
  if (kind === 'cvar') {
    return {
      kind,
      variableType: 'IV',
      concept: '',
      columnsOrig: [],
      columnsDerived: [],
      interaction: false,
      on: '',
      rationale: '',
    };
  }
  if (kind === 'model') {
    return {
      kind,
      specification: '',
      specName: '',
      code: '',
      rationale: '',
      columnsOrig: [],
      columnsDerived: [],
      onSpecIds: [],
    };
  }
  return {
    kind,
    specName: '',
    specification: '',
    transVerb: ['derive'],
    code: '',
    rationale: '',
    mapping: [{ inputs: [], output: '' }],
    branches: [{ dependencies: ['ROOT_SPEC_ID'], condition: '' }],
  };
}

export class BladeDecisionsPanel extends LoupePanel {
  static readonly host = new PanelHost<BladeDecisionsPanel, Key>({
    viewType: 'loupe.bladeDecisions',
    title: (_ctx, key) => `BLADE decisions: ${key.split('\u0000')[2]}`,
    create: (ctx, panel, key) => new BladeDecisionsPanel(ctx, panel, key),
    restoreKey: (_ctx, state) => (state as { key?: string } | undefined)?.key,
  });
  readonly key: Key;
  #bench: Promise<BladeDecisionWorkbench> | undefined;
  mode: DecisionsMode = 'author';
  form: DecisionForm = emptyForm('transform');
  acceptItemId: string | null = null;
  queueId: string | null = null;
  rule: ConsensusRule = DEFAULT_CONSENSUS;
  #lastPos = -1;

  static show(ctx: LoupeContext, kind: string, root: string, blockId: string): BladeDecisionsPanel {
    return BladeDecisionsPanel.host.show(ctx, `${kind}\u0000${root}\u0000${blockId}`).panel;
  }

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel, key: Key) {
    super(ctx, panel, 'bladedecisions', 'BLADE decisions');
    this.key = key;
    this.rpc.onRequest(CheckFormRequest, async ({ form }) => {
      this.form = form;
      return (await this.bench()).check(form);
    });
    this.rpc.onRequest(SaveFormRequest, async ({ form, check, note, acceptItemId }) => {
      const b = await this.bench();
      const { version, specId } = await b.save(
        form,
        check ?? undefined,
        currentAnnotator(),
        note,
        acceptItemId ?? undefined,
      );
      this.acceptItemId = null;
      this.form = emptyForm(form.kind);
      return {
        message: `Saved as ground-truth version ${version.version} (spec ${specId.slice(0, 8)}): ${version.note}`,
        state: await this.state(),
      };
    });
    this.rpc.onRequest(SetModeRequest, async ({ mode, rule }) => {
      this.mode = mode;
      if (rule) this.rule = rule;
      return this.state();
    });
    this.rpc.onRequest(NextDecisionRequest, async ({ afterPos }) => {
      this.#lastPos = afterPos;
      return this.state(afterPos);
    });
    this.rpc.onRequest(SubmitDecisionRequest, async ({ itemId, labels, explanation }) => {
      const b = await this.bench();
      if (!this.queueId) throw new Error('No review queue is open: run Loupe: Review BLADE Decisions first.');
      const review = await b.submit(this.queueId, currentAnnotator(), itemId, labels, explanation);
      this.#lastPos = review.item?.pos ?? this.#lastPos;
      return { ...(await this.state(undefined, false)), review };
    });
    this.rpc.onRequest(AcceptDecisionRequest, async ({ itemId }) => {
      this.form = await (await this.bench()).prefill(itemId);
      this.acceptItemId = itemId;
      this.mode = 'author';
      return this.state();
    });
    this.rpc.onRequest(NewFormRequest, async ({ kind }) => {
      this.form = emptyForm(kind);
      this.acceptItemId = null;
      this.mode = 'author';
      return this.state();
    });
    this.onDisposed(() => {
      void this.#bench?.then(
        (b) => b.close(),
        () => undefined,
      );
    });
  }

  bench(): Promise<BladeDecisionWorkbench> {
    this.#bench ??= (async () => {
      const [kind, root, blockId] = this.key.split('\u0000') as [string, string, string];
      const found = await suiteRegistry(this.ctx).findBlock(kind, root, blockId);
      if (!found) throw new Error(`The dataset ${blockId} could not be loaded from ${root}.`);
      const s = readSettings();
      return new BladeDecisionWorkbench(this.ctx.store(), found.block, {
        sandbox: s.sandbox,
        ...(s.pythonPath ? { python: s.pythonPath } : {}),
      });
    })();
    this.#bench.catch(() => {
      this.#bench = undefined;
    });
    return this.#bench;
  }

  /** Opens (creating) the review queue of this dataset's runs and switches to review. */
  async openReview(o: {
    runIds?: string[];
    perDataset: number;
    seed: number;
    reviewers: number;
    includeExpert?: boolean;
  }): Promise<string> {
    const q = await (await this.bench()).openReview(o);
    this.queueId = q.id;
    this.mode = 'review';
    this.#lastPos = -1;
    return q.id;
  }

  /** Pushes fresh state to the webview (after a command changed the mode, the form or the queue). */
  async refresh(): Promise<void> {
    this.rpc.notify(DidChangeStateNotification, { state: await this.state() });
  }

  protected async state(afterPos?: number, withReview = true): Promise<BladeDecisionsState> {
    const b = await this.bench();
    const who = currentAnnotator();
    const review =
      withReview && this.mode === 'review' && this.queueId
        ? await b.reviewView(this.queueId, who, { afterPos: afterPos ?? this.#lastPos })
        : null;
    const agreement = this.mode === 'agreement' ? await b.agreement(this.rule) : null;
    return {
      key: this.key,
      mode: this.mode,
      annotator: who,
      context: await b.context(),
      form: this.form,
      check: null,
      acceptItemId: this.acceptItemId,
      review,
      agreement,
      message: '',
    };
  }
}

/** The BLADE dataset a command is about: from its argument (a block of the Benchmarks view, or `{ root, blockId }`), else picked. */
async function pickDataset(
  ctx: LoupeContext,
  arg: unknown,
  title: string,
): Promise<{ kind: string; root: string; blockId: string } | undefined> {
  const a = (arg ?? {}) as {
    suite?: { kind?: string; root?: string } | string;
    block?: { id?: string };
    root?: string;
    blockId?: string;
  };
  const kind = (typeof a.suite === 'object' ? a.suite.kind : a.suite) ?? 'blade';
  const root = typeof a.suite === 'object' ? a.suite.root : a.root;
  const blockId = a.block?.id ?? a.blockId;
  if (root && blockId) return { kind, root, blockId };
  const entries = (await suiteRegistry(ctx).loadAll()).filter(
    (e) => e.suite && findBenchmark(e.suite.kind)?.groundTruth,
  );
  if (!entries.length) {
    void showWarningMessage(
      'Loupe: no configured suite has a BLADE ground truth. Add a BLADE suite to the setting loupe.suites.',
    );
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    entries.flatMap((e) =>
      e.suite!.blocks.map((b) => ({
        label: b.title,
        description: e.suite!.kind,
        benchmark: e.suite!.kind,
        root: e.suite!.root,
        blockId: b.id,
      })),
    ),
    { title, matchOnDescription: true },
  );
  return pick ? { kind: pick.benchmark, root: pick.root, blockId: pick.blockId } : undefined;
}

/** `loupe.authorGroundTruth`: the authoring form of a dataset (optionally prefilled with `form`). */
export async function authorGroundTruthCommand(ctx: LoupeContext, arg?: unknown): Promise<string | undefined> {
  const d = await pickDataset(ctx, arg, 'Author Ground Truth: pick a BLADE dataset');
  if (!d) return undefined;
  const p = BladeDecisionsPanel.show(ctx, d.kind, d.root, d.blockId);
  const form = (arg as { form?: DecisionForm } | undefined)?.form;
  p.mode = 'author';
  if (form) {
    p.form = form;
    p.acceptItemId = null;
  }
  await p.refresh().catch(() => undefined);
  return d.blockId;
}

/**
 * `loupe.reviewBladeDecisions`: samples decisions of the dataset's recorded runs (seeded, N per dataset; settings
 * `loupe.bladeReview.perDataset`, `loupe.bladeReview.seed`, reviewers from `loupe.annotation.reviewersPerItem`) into
 * a review queue and shows its first item.
 */
export async function reviewBladeDecisionsCommand(ctx: LoupeContext, arg?: unknown): Promise<string | undefined> {
  const d = await pickDataset(ctx, arg, 'Review BLADE Decisions: pick a dataset');
  if (!d) return undefined;
  const a = { ...((arg ?? {}) as { runIds?: string[]; perDataset?: number; seed?: number; includeExpert?: boolean }) };
  // issue 42: a dataset with no recorded run has no decision to review: say so before asking anything or opening a tab
  if (!a.runIds && !(await ctx.store().listRuns({ suite: d.kind, blockId: d.blockId, limit: 1 })).length) {
    void showInformationMessage(
      `Loupe: ${d.blockId} has no recorded runs, so there are no agent decisions to review. Run an agent on it first (Run Benchmark Block).`,
    );
    return undefined;
  }
  const c = bladeReviewSettings();
  if (a.includeExpert === undefined && !a.runIds) {
    const pick = await vscode.window.showQuickPick(
      [
        { label: 'Agent decisions', description: 'sampled from the recorded runs of this dataset', expert: false },
        {
          label: 'Agent and expert decisions',
          description: "also the ground truth's decisions, for expert–expert agreement",
          expert: true,
        },
      ],
      { title: 'Review BLADE Decisions: which decisions?' },
    );
    if (!pick) return undefined;
    a.includeExpert = pick.expert;
  }
  const shown = BladeDecisionsPanel.host.show(ctx, `${d.kind}\u0000${d.root}\u0000${d.blockId}`);
  const p = shown.panel;
  try {
    const id = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Loupe: sampling decisions to review' },
      () =>
        p.openReview({
          ...(a.runIds ? { runIds: a.runIds } : {}),
          perDataset: a.perDataset ?? c.perDataset,
          seed: a.seed ?? c.seed,
          reviewers: annotationSettings().reviewers,
          ...(a.includeExpert !== undefined ? { includeExpert: a.includeExpert } : {}),
        }),
    );
    await p.refresh();
    return id;
  } catch (e) {
    // the tab this command opened would show the authoring form, as if the review had started: close it
    if (shown.created) p.dispose();
    void showErrorMessage(`Loupe: ${errorMessage(e)}`);
    return undefined;
  }
}

/** `loupe.showBladeDecisionAgreement`: agreement per decision type and the decisions offered for acceptance. */
export async function showBladeDecisionAgreementCommand(ctx: LoupeContext, arg?: unknown): Promise<string | undefined> {
  const d = await pickDataset(ctx, arg, 'BLADE Decision Agreement: pick a dataset');
  if (!d) return undefined;
  const p = BladeDecisionsPanel.show(ctx, d.kind, d.root, d.blockId);
  const rule = (arg as { rule?: ConsensusRule } | undefined)?.rule ?? {
    kind: bladeReviewSettings().consensus,
    minAnnotators: 2,
  };
  p.mode = 'agreement';
  p.rule = rule;
  await p.refresh();
  return d.blockId;
}
