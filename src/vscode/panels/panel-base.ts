/**
 * One base for every Loupe webview panel (issue 13). A panel is a small declaration — view type, webview
 * bundle, title, how to build it, how to find it again after a window reload — plus its protocol file in
 * `src/protocol/` and its webview entry in `webview/`. What every panel needs lives here once: the
 * singleton / one-per-key bookkeeping, restore after a reload (one serializer per view type, registered by
 * {@link registerPanelSerializers}), the locked-down page (CSP + nonce), the ready handshake and the IPC
 * endpoint. Anchors: GitLens' `registerWebviewPanel(...)`, Inspect's `InspectWebviewManager`.
 */
import * as vscode from 'vscode';
import type { RpcEndpoint } from '../../protocol/ipc.ts';
import type { PanelKind } from '../../protocol/webview.ts';
import type { LoupeContext } from '../context.ts';
import { connectWebview, webviewHtml, webviewOptions } from '../webview-shell.ts';

/** Base of a panel instance: owns the webview panel, its RPC endpoint and its disposables. */
export abstract class LoupePanel {
  protected readonly ctx: LoupeContext;
  readonly panel: vscode.WebviewPanel;
  protected readonly rpc: RpcEndpoint;
  protected readonly disposables: vscode.Disposable[] = [];
  #disposed = false;
  #onDisposed: (() => void)[] = [];
  readonly #page: { webview: PanelKind; title: string };

  /**
   * @param webview the bundle `dist/webview/<webview>.js`; `title` the page title.
   * The webview asks for {@link state} on its ready handshake (never before the subclass is constructed).
   */
  protected constructor(ctx: LoupeContext, panel: vscode.WebviewPanel, webview: PanelKind, title: string) {
    this.ctx = ctx;
    this.panel = panel;
    panel.iconPath = vscode.Uri.joinPath(ctx.extension.extensionUri, 'media', 'loupe.svg');
    this.rpc = connectWebview(panel.webview, () => this.state());
    this.#page = { webview, title };
    panel.webview.html = webviewHtml(panel.webview, ctx.extension.extensionUri, webview, title);
    panel.onDidDispose(() => this.dispose(), null, this.disposables);
  }

  /** Loads the page again (a fresh nonce, so the webview restarts): it asks for {@link state} anew on its ready handshake. */
  protected reloadWebview(): void {
    if (this.#disposed) return;
    this.panel.webview.html = webviewHtml(
      this.panel.webview,
      this.ctx.extension.extensionUri,
      this.#page.webview,
      this.#page.title,
    );
  }

  /** The state the webview receives on its ready handshake. */
  protected abstract state(): unknown;

  /** Runs `f` once when the panel is disposed. */
  onDisposed(f: () => void): void {
    this.#onDisposed.push(f);
  }

  /** Releases the panel; subclasses extend it with their own resources and call `super.dispose()`. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const f of this.#onDisposed.splice(0)) f();
    this.rpc.dispose();
    this.panel.dispose();
    while (this.disposables.length) this.disposables.pop()?.dispose();
  }
}

/** The declaration of a panel kind. `K` keys instances: a constant for singletons, e.g. a run id for timelines. */
export interface PanelDeclaration<P extends LoupePanel, K extends string> {
  viewType: string;
  /** Tab title of a new panel for `key` (a promise: the key shows until it resolves). */
  title(ctx: LoupeContext, key: K): string | Promise<string>;
  /** Builds the panel instance around a webview panel (new or restored). */
  create(ctx: LoupeContext, panel: vscode.WebviewPanel, key: K): P;
  /** The key of a panel restored after a reload, from the webview's saved state; undefined closes it. */
  restoreKey(ctx: LoupeContext, state: unknown): K | undefined | Promise<K | undefined>;
  /** Optional work after a restore (e.g. re-open the target the webview state names). */
  restored?(ctx: LoupeContext, panel: P, state: unknown): Promise<void>;
}

/** Instances of one panel kind: show (create or reveal), look up, restore after a reload. */
export class PanelHost<P extends LoupePanel, K extends string = string> {
  readonly declaration: PanelDeclaration<P, K>;
  readonly #instances = new Map<K, P>();

  constructor(declaration: PanelDeclaration<P, K>) {
    this.declaration = declaration;
  }

  get viewType(): string {
    return this.declaration.viewType;
  }

  /** The open panel for `key`, if any. */
  get(key: K): P | undefined {
    return this.#instances.get(key);
  }

  /** All open panels of this kind. */
  all(): P[] {
    return [...this.#instances.values()];
  }

  /**
   * Reveals the panel for `key`, creating it when needed.
   * @returns the panel and whether it was created now.
   */
  show(
    ctx: LoupeContext,
    key: K,
    column: vscode.ViewColumn = vscode.ViewColumn.Active,
  ): { panel: P; created: boolean } {
    const existing = this.#instances.get(key);
    if (existing) {
      existing.panel.reveal(column);
      return { panel: existing, created: false };
    }
    const title = this.declaration.title(ctx, key);
    const wp = vscode.window.createWebviewPanel(
      this.declaration.viewType,
      typeof title === 'string' ? title : String(key),
      column,
      webviewOptions(ctx.extension.extensionUri),
    );
    if (typeof title !== 'string') {
      void title.then(
        (t) => {
          wp.title = t;
        },
        () => undefined,
      );
    }
    return { panel: this.#adopt(ctx, wp, key), created: true };
  }

  #adopt(ctx: LoupeContext, wp: vscode.WebviewPanel, key: K): P {
    this.#instances.get(key)?.dispose();
    const p = this.declaration.create(ctx, wp, key);
    this.#instances.set(key, p);
    p.onDisposed(() => {
      if (this.#instances.get(key) === p) this.#instances.delete(key);
    });
    return p;
  }

  /** Restores panels of this kind after a window reload (register once, at activation). */
  serializer(ctx: LoupeContext): vscode.Disposable {
    return vscode.window.registerWebviewPanelSerializer(this.declaration.viewType, {
      deserializeWebviewPanel: async (wp, state: unknown) => {
        const key = await this.declaration.restoreKey(ctx, state);
        if (key === undefined) {
          wp.dispose();
          return;
        }
        wp.webview.options = webviewOptions(ctx.extension.extensionUri);
        const p = this.#adopt(ctx, wp, key);
        await this.declaration.restored?.(ctx, p, state);
      },
    });
  }
}

/** Key of singleton panels. */
export const SINGLETON = 'singleton';

/** Registers the serializers of every panel kind in one place (activation). */
export function registerPanelSerializers(ctx: LoupeContext, hosts: readonly PanelHost<LoupePanel, string>[]): void {
  for (const h of hosts) ctx.register(h.serializer(ctx));
}
