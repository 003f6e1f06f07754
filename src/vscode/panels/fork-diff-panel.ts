/**
 * The "Compare Fork with Parent" panel (issue 43): a forked run and its parent aligned from the fork step — the hint,
 * the steps after it, the code diff, answers and score (view model `src/app/runs/fork-diff.ts`, the same as
 * `loupe runs --fork-diff RUN --json`). A step number opens the run's timeline at that step.
 */
import type * as vscode from 'vscode';
import { forkDiff, type ForkDiffView } from '../../app/runs/fork-diff.ts';
import { LoupeInputError } from '../../core/util/errors.ts';
import { oneLine } from '../../core/util/text-safety.ts';
import { OpenForkStepRequest, type ForkDiffState } from '../../protocol/fork-diff.ts';
import { DidChangeStateNotification } from '../../protocol/webview.ts';
import type { LoupeContext } from '../context.ts';
import { LoupePanel, PanelHost, SINGLETON } from './panel-base.ts';
import { TimelinePanel } from './timeline-panel.ts';

export class ForkDiffPanel extends LoupePanel {
  static readonly host = new PanelHost<ForkDiffPanel, typeof SINGLETON>({
    viewType: 'loupe.forkDiff',
    title: () => 'Fork and Parent',
    create: (ctx, panel) => new ForkDiffPanel(ctx, panel),
    restoreKey: () => SINGLETON,
    restored: async (_ctx, p, state) => {
      const id = (state as { runId?: unknown } | undefined)?.runId;
      if (typeof id === 'string') await p.load(id);
    },
  });
  #state: ForkDiffState = { view: null, message: null, runId: null };

  /** Opens (or reveals) the panel on the fork `runId`. @returns the diff shown, or undefined with the reason shown in the panel. */
  static async show(ctx: LoupeContext, runId: string): Promise<ForkDiffView | undefined> {
    const { panel } = ForkDiffPanel.host.show(ctx, SINGLETON);
    return panel.load(runId);
  }

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel) {
    super(ctx, panel, 'forkdiff', 'Fork and Parent');
    this.rpc.onRequest(OpenForkStepRequest, async ({ runId, step }) => {
      await TimelinePanel.show(ctx, runId, { focusStep: step });
    });
    this.disposables.push(
      ctx.onDidChangeRuns(() => {
        if (this.#state.runId) void this.load(this.#state.runId);
      }),
    );
  }

  /** Reads the diff from the store and shows it; a run that is not a fork is said in the panel. */
  async load(runId: string): Promise<ForkDiffView | undefined> {
    try {
      const view = await forkDiff(this.ctx.store(), runId);
      this.#state = { view, message: null, runId };
      this.panel.title = `Fork ${oneLine(runId).slice(-8)} vs parent`;
    } catch (e) {
      if (!(e instanceof LoupeInputError)) throw e;
      this.#state = { view: null, message: `Cannot compare: ${e.message}`, runId };
    }
    this.rpc.notify(DidChangeStateNotification, { state: this.#state });
    return this.#state.view ?? undefined;
  }

  protected state(): ForkDiffState {
    return this.#state;
  }
}
