/** The Welcome panel: environment checks, configured suites, and how to start. */
import * as vscode from 'vscode';
import { runChecks } from '../../core/env/doctor.ts';
import { LOUPE_VERSION } from '../../core/version.ts';
import { ConfigureSuitesRequest, RefreshWelcomeRequest, type WelcomeState } from '../../protocol/welcome.ts';
import type { LoupeContext } from '../context.ts';
import { DidChangeStateNotification } from '../../protocol/webview.ts';
import { LoupePanel, PanelHost, SINGLETON } from './panel-base.ts';

export class WelcomePanel extends LoupePanel {
  static readonly host = new PanelHost<WelcomePanel, typeof SINGLETON>({
    viewType: 'loupe.welcome',
    title: () => 'Loupe',
    create: (ctx, panel) => new WelcomePanel(ctx, panel),
    restoreKey: () => SINGLETON,
  });
  static readonly viewType = WelcomePanel.host.viewType;

  /** Shows the panel, creating it if needed. */
  static show(ctx: LoupeContext): WelcomePanel {
    return WelcomePanel.host.show(ctx, SINGLETON).panel;
  }

  private constructor(ctx: LoupeContext, panel: vscode.WebviewPanel) {
    super(ctx, panel, 'welcome', 'Loupe');
    this.rpc.onRequest(RefreshWelcomeRequest, () => this.state());
    this.rpc.onRequest(ConfigureSuitesRequest, async () => {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'loupe.suites');
    });
    // A suite configured while the page is open changes its next step.
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('loupe.suites')) {
          void this.state().then(
            (state) => this.rpc.notify(DidChangeStateNotification, { state }),
            () => undefined,
          );
        }
      }),
    );
  }

  protected async state(): Promise<WelcomeState> {
    const s = this.ctx.settings;
    return {
      version: LOUPE_VERSION,
      vscodeVersion: vscode.version,
      node: process.version,
      suites: s.suites.map(({ suite, root }) => ({ suite, root })),
      checks: await runChecks({ python: s.pythonPath }),
      runs: (
        await this.ctx
          .store()
          .listRuns({ limit: 1 })
          .catch(() => [])
      ).length,
    };
  }
}
