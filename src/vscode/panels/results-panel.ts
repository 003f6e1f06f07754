/**
 * The Results panel: scores from the run store per model × block, LongDA match vs tokens, tool-usage heatmaps,
 * BLADE metrics with CIs. Data shaping is in results-data.ts; every number opens its runs via `loupe.openRun`.
 */
import * as vscode from 'vscode';
import type { RpcEndpoint } from '../../protocol/ipc.ts';
import { OpenRunsRequest, RefreshResultsRequest, type ResultsState } from '../../protocol/results.ts';
import { DidChangeStateNotification } from '../../protocol/webview.ts';
import type { LoupeContext } from '../context.ts';
import { connectWebview, webviewHtml, webviewOptions } from '../webview-shell.ts';
import { buildResultsState } from '../../core/ui/results-data.ts';

export class ResultsPanel {
  static readonly viewType = 'loupe.results';
  private static current: ResultsPanel | undefined;
  private readonly ctx: LoupeContext;
  private readonly panel: vscode.WebviewPanel;
  private readonly rpc: RpcEndpoint;
  private readonly disposables: vscode.Disposable[] = [];

  static show(ctx: LoupeContext): ResultsPanel {
    if (ResultsPanel.current) {
      ResultsPanel.current.panel.reveal();
      ResultsPanel.current.push();
      return ResultsPanel.current;
    }
    const panel = vscode.window.createWebviewPanel(ResultsPanel.viewType, 'Loupe Results', vscode.ViewColumn.Active, webviewOptions(ctx.extension.extensionUri));
    return (ResultsPanel.current = new ResultsPanel(ctx, panel));
  }

  static registerSerializer(ctx: LoupeContext): vscode.Disposable {
    return vscode.window.registerWebviewPanelSerializer(ResultsPanel.viewType, {
      deserializeWebviewPanel: async (panel) => {
        panel.webview.options = webviewOptions(ctx.extension.extensionUri);
        ResultsPanel.current?.dispose();
        ResultsPanel.current = new ResultsPanel(ctx, panel);
      },
    });
  }

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel) {
    this.ctx = ctx;
    this.panel = panel;
    panel.iconPath = vscode.Uri.joinPath(ctx.extension.extensionUri, 'media', 'loupe.svg');
    this.rpc = connectWebview(panel.webview, () => this.state());
    this.rpc.onRequest(RefreshResultsRequest, () => this.state());
    this.rpc.onRequest(OpenRunsRequest, ({ runIds, label }) => openRuns(ctx, runIds, label));
    panel.webview.html = webviewHtml(panel.webview, ctx.extension.extensionUri, 'results', 'Loupe Results');
    panel.onDidDispose(() => this.dispose(), null, this.disposables);
    // Runs finishing or being re-scored elsewhere in this window.
    this.disposables.push(ctx.onDidChangeRuns(() => this.push()));
  }

  private state(): Promise<ResultsState> {
    return buildResultsState(this.ctx.store(), this.ctx.storePath);
  }

  private push(): void {
    this.state().then(
      (state) => this.rpc.notify(DidChangeStateNotification, { state }),
      (e: unknown) => this.ctx.log.warn(`Results: ${e instanceof Error ? e.message : String(e)}`),
    );
  }

  dispose(): void {
    if (ResultsPanel.current === this) ResultsPanel.current = undefined;
    this.rpc.dispose();
    this.panel.dispose();
    while (this.disposables.length) this.disposables.pop()?.dispose();
  }
}

/** Opens one run, or lets the user pick among several (label names the number that was clicked). */
export async function openRuns(ctx: LoupeContext, runIds: string[], label: string): Promise<void> {
  if (runIds.length === 1) {
    await vscode.commands.executeCommand('loupe.openRun', runIds[0]);
    return;
  }
  const store = ctx.store();
  const items = runIds.map((id) => {
    const r = store.getRun(id);
    return {
      label: r ? `${r.model ?? r.agent} · ${r.blockId}` : id,
      description: r ? `${r.status} · ${r.steps} steps · ${new Date(r.createdAt).toLocaleString()}` : 'not in the store',
      detail: id, id,
    };
  });
  const pick = await vscode.window.showQuickPick(items, { title: `Runs behind ${label}`, matchOnDetail: true });
  if (pick) await vscode.commands.executeCommand('loupe.openRun', pick.id);
}
