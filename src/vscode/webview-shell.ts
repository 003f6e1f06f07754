/**
 * Shared shell for every Loupe webview: locked-down HTML (CSP default-src 'none' + crypto nonce),
 * localResourceRoots limited to dist/webview and media/, an RpcEndpoint over postMessage, and the
 * ready handshake (the webview asks for its state; the host never posts before that).
 */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { RpcEndpoint, type WireMessage } from '../protocol/ipc.ts';
import { ExecuteCommandRequest, WebviewReadyRequest, type PanelKind } from '../protocol/webview.ts';

/** Webview options shared by panels: scripts on, roots narrowed. */
export function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions & vscode.WebviewPanelOptions {
  return {
    enableScripts: true,
    localResourceRoots: [
      vscode.Uri.joinPath(extensionUri, 'dist', 'webview'),
      vscode.Uri.joinPath(extensionUri, 'media'),
    ],
  };
}

export function nonce(): string {
  return randomBytes(18).toString('base64url');
}

/** Escapes text for HTML. Data should travel by message; this is for the few strings in the page. */
export function escapeHtml(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

/**
 * The Content-Security-Policy of every Loupe panel. Panels show what agents wrote (reports, observations, insights),
 * so the policy assumes hostile markup reached the page despite the sanitiser (`webview/shared/agent-html.ts`,
 * issue 38): no inline style (`<style>` / `style="…"` cannot hide or restyle the blind review; Loupe's own CSS is
 * a stylesheet file or adopted through the CSSOM), scripts only by nonce or from the extension, no forms
 * (`form-action`), no `<base>` (`base-uri`), no frames (`frame-src`), nothing fetched beyond the extension's files
 * and `data:`/`blob:` images.
 */
export function webviewCsp(cspSource: string, scriptNonce: string): string {
  return [
    "default-src 'none'",
    `style-src ${cspSource}`,
    `font-src ${cspSource}`,
    `img-src ${cspSource} data: blob:`,
    `script-src 'nonce-${scriptNonce}' ${cspSource}`,
    `worker-src ${cspSource} blob:`,
    "form-action 'none'",
    "base-uri 'none'",
    "frame-src 'none'",
  ].join('; ');
}

/** Builds the page for a panel whose bundle is dist/webview/<panel>.js. */
export function webviewHtml(
  webview: vscode.Webview,
  extensionUri: vscode.Uri,
  panel: PanelKind,
  title: string,
): string {
  const n = nonce();
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', `${panel}.js`));
  const css = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'loupe.css'));
  const csp = webviewCsp(webview.cspSource, n);
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${css}">
<title>${escapeHtml(title)}</title>
</head>
<body data-panel="${panel}">
<div id="app" aria-busy="true"></div>
<script type="module" nonce="${n}" src="${script}"></script>
</body>
</html>`;
}

/** Connects an RpcEndpoint to a webview and answers the common requests. */
export function connectWebview(webview: vscode.Webview, getState: () => unknown | Promise<unknown>): RpcEndpoint {
  const rpc = new RpcEndpoint({
    post: (m: WireMessage) => void webview.postMessage(m),
    onMessage: (listener) => webview.onDidReceiveMessage(listener),
  });
  rpc.onRequest(WebviewReadyRequest, async () => ({ state: await getState() }));
  rpc.onRequest(ExecuteCommandRequest, async ({ command, args }) => {
    if (!command.startsWith('loupe.')) throw new Error(`Refused to run non-Loupe command ${command}`);
    await vscode.commands.executeCommand(command, ...(args ?? []));
  });
  return rpc;
}
