/** The Welcome panel: environment checks, configured suites, and how to start. */
import * as vscode from 'vscode';
import { runChecks } from '../../core/env/doctor.ts';
import { LOUPE_VERSION } from '../../core/version.ts';
import { RefreshWelcomeRequest, type WelcomeState } from '../../protocol/welcome.ts';
import type { LoupeContext } from '../context.ts';
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
  }

  protected async state(): Promise<WelcomeState> {
    const s = this.ctx.settings;
    return {
      version: LOUPE_VERSION,
      vscodeVersion: vscode.version,
      node: process.version,
      suites: s.suites.map(({ suite, root }) => ({ suite, root })),
      checks: await runChecks({ python: s.pythonPath }),
    };
  }
}
