/** The Welcome panel: environment checks, configured suites, and how to start. */
import * as vscode from 'vscode';
import { runChecks } from '../../core/env/doctor.ts';
import { LOUPE_VERSION } from '../../core/version.ts';
import type { RpcEndpoint } from '../../protocol/ipc.ts';
import { RefreshWelcomeRequest, type WelcomeState } from '../../protocol/welcome.ts';
import type { LoupeContext } from '../context.ts';
import { connectWebview, webviewHtml, webviewOptions } from '../webview-shell.ts';

export class WelcomePanel {
  static readonly viewType = 'loupe.welcome';
  private static current: WelcomePanel | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly rpc: RpcEndpoint;
  private readonly panel: vscode.WebviewPanel;
  private readonly ctx: LoupeContext;

  /** Shows the panel, creating it if needed. */
  static show(ctx: LoupeContext): WelcomePanel {
    if (WelcomePanel.current) {
      WelcomePanel.current.panel.reveal();
      return WelcomePanel.current;
    }
    const panel = vscode.window.createWebviewPanel(WelcomePanel.viewType, 'Loupe', vscode.ViewColumn.Active, webviewOptions(ctx.extension.extensionUri));
    return (WelcomePanel.current = new WelcomePanel(ctx, panel));
  }

  /** Restores a panel after a window reload. */
  static registerSerializer(ctx: LoupeContext): vscode.Disposable {
    return vscode.window.registerWebviewPanelSerializer(WelcomePanel.viewType, {
      deserializeWebviewPanel: async (panel) => {
        panel.webview.options = webviewOptions(ctx.extension.extensionUri);
        WelcomePanel.current?.dispose();
        WelcomePanel.current = new WelcomePanel(ctx, panel);
      },
    });
  }

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel) {
    this.ctx = ctx;
    this.panel = panel;
    panel.iconPath = vscode.Uri.joinPath(ctx.extension.extensionUri, 'media', 'loupe.svg');
    this.rpc = connectWebview(panel.webview, () => this.state());
    this.rpc.onRequest(RefreshWelcomeRequest, () => this.state());
    panel.webview.html = webviewHtml(panel.webview, ctx.extension.extensionUri, 'welcome', 'Loupe');
    panel.onDidDispose(() => this.dispose(), null, this.disposables);
  }

  private async state(): Promise<WelcomeState> {
    const s = this.ctx.settings;
    return {
      version: LOUPE_VERSION,
      vscodeVersion: vscode.version,
      node: process.version,
      suites: s.suites.map(({ suite, root }) => ({ suite, root })),
      checks: await runChecks({ python: s.pythonPath }),
    };
  }

  dispose(): void {
    if (WelcomePanel.current === this) WelcomePanel.current = undefined;
    this.rpc.dispose();
    this.panel.dispose();
    while (this.disposables.length) this.disposables.pop()?.dispose();
  }
}
