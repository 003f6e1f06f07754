/**
 * The Results panel: scores from the run store per model × block, LongDA match vs tokens, tool-usage heatmaps,
 * BLADE metrics with CIs. Data shaping is in results-data.ts; every number opens its runs via `loupe.openRun`.
 */
import { currentScope, onDidChangeExperiment } from '../experiments.ts';
import * as vscode from 'vscode';
import { OpenRunsRequest, OpenStepRequest, RefreshResultsRequest, type ResultsState } from '../../protocol/results.ts';
import { TimelinePanel } from './timeline-panel.ts';
import { DidChangeStateNotification } from '../../protocol/webview.ts';
import type { LoupeContext } from '../context.ts';
import { LoupePanel, PanelHost, SINGLETON } from './panel-base.ts';
import { buildResultsState } from '../../app/results/results-data.ts';
import { annotationStoreOf } from '../../core/annotations/index.ts';
import { failureClassSpec, failureFigures } from '../../core/failures/index.ts';
import { taxonomyCatalog } from '../../app/failures/registry.ts';
import { oneLine } from '../../core/util/text-safety.ts';

/** The Fig. 8-form chart of resolved failure cases (issue 19), when there are any. */
async function failuresChart(ctx: LoupeContext): Promise<Pick<ResultsState, 'failures'>> {
  try {
    const figs = await failureFigures(
      annotationStoreOf(ctx.store()),
      taxonomyCatalog(vscode.workspace.workspaceFolders?.[0]?.uri.fsPath).taxonomies,
    );
    if (!figs.fig8.length) return {};
    return {
      failures: { fig8: failureClassSpec(figs.fig8), cases: figs.counts.cases, resolved: figs.counts.casesResolved },
    };
  } catch (e) {
    ctx.log.warn(`Results: failure figures: ${e instanceof Error ? e.message : String(e)}`);
    return {};
  }
}

export class ResultsPanel extends LoupePanel {
  static readonly host = new PanelHost<ResultsPanel, typeof SINGLETON>({
    viewType: 'loupe.results',
    title: () => 'Loupe Results',
    create: (ctx, panel) => new ResultsPanel(ctx, panel),
    restoreKey: () => SINGLETON,
  });
  static readonly viewType = ResultsPanel.host.viewType;

  static show(ctx: LoupeContext): ResultsPanel {
    const { panel, created } = ResultsPanel.host.show(ctx, SINGLETON);
    if (!created) panel.push();
    return panel;
  }

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel) {
    super(ctx, panel, 'results', 'Loupe Results');
    this.rpc.onRequest(RefreshResultsRequest, () => this.state());
    this.rpc.onRequest(OpenRunsRequest, ({ runIds, label }) => openRuns(ctx, runIds, label));
    this.rpc.onRequest(OpenStepRequest, async ({ runId, stepIndex }) => {
      await TimelinePanel.show(ctx, runId, { focusStep: stepIndex });
    });
    // Runs finishing or being re-scored elsewhere in this window.
    this.disposables.push(
      ctx.onDidChangeRuns(() => this.push()),
      onDidChangeExperiment(() => this.push()),
    );
  }

  protected async state(): Promise<ResultsState> {
    const state = await buildResultsState(this.ctx.store(), this.ctx.storePath, await currentScope(this.ctx));
    return { ...state, ...(await failuresChart(this.ctx)) };
  }

  #building = false;
  #again = false;

  /**
   * Rebuilds and sends the state. Store changes arrive per step while runs go on: one build at a time, and changes
   * during a build make one more build after it (never one concurrent build per event, which piled up without bound).
   */
  private push(): void {
    if (this.#building) {
      this.#again = true;
      return;
    }
    this.#building = true;
    this.state()
      .then(
        (state) => this.rpc.notify(DidChangeStateNotification, { state }),
        (e: unknown) => this.ctx.log.warn(`Results: ${e instanceof Error ? e.message : String(e)}`),
      )
      .finally(() => {
        this.#building = false;
        if (this.#again) {
          this.#again = false;
          this.push();
        }
      });
  }
}

/** Opens one run, or lets the user pick among several (label names the number that was clicked). */
export async function openRuns(ctx: LoupeContext, runIds: string[], label: string): Promise<void> {
  if (runIds.length === 1) {
    await vscode.commands.executeCommand('loupe.openRun', runIds[0]);
    return;
  }
  const store = ctx.store();
  const items = await Promise.all(
    runIds.map(async (id) => {
      const r = await store.getRun(id);
      return {
        label: r ? `${oneLine(r.model ?? r.agent)} · ${oneLine(r.blockId)}` : id,
        description: r
          ? `${r.status} · ${r.steps} steps · ${new Date(r.createdAt).toLocaleString()}`
          : 'not in the store',
        detail: id,
        id,
      };
    }),
  );
  const pick = await vscode.window.showQuickPick(items, { title: `Runs behind ${label}`, matchOnDetail: true });
  if (pick) await vscode.commands.executeCommand('loupe.openRun', pick.id);
}
