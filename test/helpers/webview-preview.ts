/**
 * Renders a Loupe webview bundle outside VS Code, in headless chromium, with a host implemented in Node, and saves
 * a PNG. The page gets the same CSP as in VS Code (default-src 'none', nonce, no unsafe-eval), so a bundle that
 * needs eval or a fetch fails here too. Used by hand while developing and by test/helpers/preview-*.ts scripts:
 *
 *   node esbuild.js && node test/helpers/preview-panels.ts
 *
 * Needs `/usr/bin/chromium` (or LOUPE_CHROMIUM). Binds only 127.0.0.1.
 */
import { readFileSync, existsSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WireMessage } from '../../src/protocol/ipc.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Answers a request method with its result, or throws (sent back as an error response). */
export type PreviewHandler = (method: string, params: unknown) => unknown;

export interface PreviewOptions {
  panel: string;
  handle: PreviewHandler;
  png: string;
  width?: number;
  height?: number;
  /** Runs in Node against the page after the state arrived (type, press keys, click...). */
  act?: (
    page: import('playwright-core').Page,
    frame: import('playwright-core').FrameLocator,
    notify: (method: string, params: unknown) => Promise<void>,
  ) => Promise<void>;
  /** Waits until this selector exists inside the panel before the screenshot. */
  waitFor?: string;
  theme?: 'dark' | 'light';
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.map': 'application/json',
};

// A subset of VS Code's Dark Modern / Light Modern theme variables, enough for the panels to look as they do there.
const DARK = `--vscode-font-family: system-ui, "Segoe UI", Ubuntu, sans-serif; --vscode-font-size: 13px; --vscode-editor-font-family: "DejaVu Sans Mono", monospace; --vscode-editor-font-size: 13px;
--vscode-foreground: #cccccc; --vscode-descriptionForeground: #9d9d9d; --vscode-editor-background: #1f1f1f; --vscode-errorForeground: #f85149;
--vscode-panel-border: #2b2b2b; --vscode-editorWidget-border: #454545; --vscode-focusBorder: #0078d4; --vscode-textLink-foreground: #4daafc;
--vscode-list-hoverBackground: #2a2d2e; --vscode-list-activeSelectionBackground: #04395e; --vscode-list-activeSelectionForeground: #ffffff;
--vscode-list-inactiveSelectionBackground: #37373d; --vscode-editor-findMatchHighlightBackground: rgba(234, 92, 0, 0.33); --vscode-editor-findMatchBackground: #9e6a03;
--vscode-badge-background: #616161; --vscode-badge-foreground: #f8f8f8; --vscode-button-background: #0078d4; --vscode-button-foreground: #ffffff;
--vscode-button-secondaryBackground: #313131; --vscode-button-secondaryForeground: #cccccc; --vscode-input-background: #313131; --vscode-input-foreground: #cccccc;
--vscode-input-border: #3c3c3c; --vscode-settings-dropdownBackground: #313131; --vscode-settings-dropdownBorder: #3c3c3c; --vscode-charts-blue: #3794ff;
--vscode-textCodeBlock-background: #2b2b2b; --vscode-editorWarning-foreground: #cca700; --vscode-progressBar-background: #0078d4;`;
const LIGHT = `--vscode-font-family: system-ui, "Segoe UI", Ubuntu, sans-serif; --vscode-font-size: 13px; --vscode-editor-font-family: "DejaVu Sans Mono", monospace; --vscode-editor-font-size: 13px;
--vscode-foreground: #3b3b3b; --vscode-descriptionForeground: #717171; --vscode-editor-background: #ffffff; --vscode-errorForeground: #f85149;
--vscode-panel-border: #e5e5e5; --vscode-editorWidget-border: #c8c8c8; --vscode-focusBorder: #005fb8; --vscode-textLink-foreground: #005fb8;
--vscode-list-hoverBackground: #f2f2f2; --vscode-list-activeSelectionBackground: #e8e8e8; --vscode-list-activeSelectionForeground: #000000;
--vscode-editor-findMatchHighlightBackground: rgba(234, 92, 0, 0.33); --vscode-badge-background: #cccccc; --vscode-badge-foreground: #3b3b3b;
--vscode-button-background: #005fb8; --vscode-button-foreground: #ffffff; --vscode-input-background: #ffffff; --vscode-charts-blue: #1a85ff;`;

function panelHtml(panel: string, origin: string, theme: 'dark' | 'light'): string {
  const n = 'previewnonce';
  const csp = [
    "default-src 'none'",
    `style-src ${origin}`,
    `font-src ${origin}`,
    `img-src ${origin} data: blob:`,
    `script-src 'nonce-${n}' ${origin}`,
    `worker-src ${origin} blob:`,
    "form-action 'none'",
    "base-uri 'none'",
    "frame-src 'none'",
  ].join('; ');
  // as in src/vscode/webview-shell.ts (no inline style); the theme's variables come before the policy, as VS Code's do
  return `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">
<style>body { ${theme === 'dark' ? DARK : LIGHT} }</style>
<meta http-equiv="Content-Security-Policy" content="${csp}">
<link rel="stylesheet" href="${origin}/media/loupe.css"><title>${panel}</title></head>
<body data-panel="${panel}" class="vscode-${theme}"><div id="app" aria-busy="true"></div>
<script type="module" nonce="${n}" src="${origin}/dist/webview/${panel}.js"></script></body></html>`;
}

const OUTER = `<!DOCTYPE html><html><body style="margin:0;background:#1f1f1f"><iframe id="f" style="border:0;width:100vw;height:100vh"></iframe>
<script>
const f = document.getElementById('f');
// ArrayBuffers cannot cross playwright's exposeFunction; the Node side sends { __bytes: base64 }.
const revive = (v) => {
  if (v && typeof v === 'object' && typeof v.__bytes === 'string') {
    const bin = atob(v.__bytes); const u = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i);
    return u.buffer;
  }
  if (Array.isArray(v)) return v.map(revive);
  if (v && typeof v === 'object') { for (const k of Object.keys(v)) v[k] = revive(v[k]); }
  return v;
};
window.addEventListener('message', async (ev) => {
  if (ev.source !== f.contentWindow) return;
  const reply = await window.loupeHost(ev.data);
  if (reply) f.contentWindow.postMessage(revive(reply), '*');
});
window.loupeNotify = (m) => f.contentWindow.postMessage(m, '*');
f.src = location.search.slice(1);
</script></body></html>`;

function serve(panel: string, theme: 'dark' | 'light'): Promise<{ server: Server; origin: string }> {
  return new Promise((res) => {
    const server = createServer((req, resp) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      if (url.pathname === '/') {
        resp.writeHead(200, { 'content-type': 'text/html' }).end(OUTER);
        return;
      }
      if (url.pathname === '/panel') {
        resp.writeHead(200, { 'content-type': 'text/html' }).end(panelHtml(panel, origin, theme));
        return;
      }
      const file = join(ROOT, url.pathname);
      if ((url.pathname.startsWith('/dist/webview/') || url.pathname.startsWith('/media/')) && existsSync(file)) {
        resp
          .writeHead(200, {
            'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
            'access-control-allow-origin': '*',
          })
          .end(readFileSync(file));
        return;
      }
      resp.writeHead(404).end();
    });
    server.listen(0, '127.0.0.1', () =>
      res({ server, origin: `http://127.0.0.1:${(server.address() as { port: number }).port}` }),
    );
  });
}

/** Opens the panel with the given host, runs `act`, saves the PNG. Returns the panel's text and console errors. */
export async function preview(o: PreviewOptions): Promise<{ text: string; errors: string[] }> {
  const { chromium } = await import('playwright-core');
  const { server, origin } = await serve(o.panel, o.theme ?? 'dark');
  const browser = await chromium.launch({
    executablePath: process.env.LOUPE_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--headless'],
  });
  const errors: string[] = [];
  try {
    const page = await browser.newPage({ viewport: { width: o.width ?? 1300, height: o.height ?? 860 } });
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') errors.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    await page.exposeFunction('loupeHost', async (msg: WireMessage) => {
      if (msg.kind !== 'request') return undefined;
      try {
        const result = await o.handle(msg.method, msg.params);
        // ArrayBuffers cannot cross exposeFunction (JSON); send them as arrays and rebuild them in the page.
        return { kind: 'response', id: msg.id, ok: true, result: toJsonSafe(result) };
      } catch (e) {
        return { kind: 'response', id: msg.id, ok: false, error: e instanceof Error ? e.message : String(e) };
      }
    });
    await page.goto(`${origin}/?${origin}/panel`);
    const frame = page.frameLocator('#f');
    await frame.locator('#app:not([aria-busy])').waitFor({ timeout: 20_000 });
    const notify = async (method: string, params: unknown) => {
      await page.evaluate((m) => (globalThis as unknown as { loupeNotify(x: unknown): void }).loupeNotify(m), {
        kind: 'notification',
        method,
        params,
      } as WireMessage);
    };
    if (o.act) await o.act(page, frame, notify);
    if (o.waitFor) await frame.locator(o.waitFor).first().waitFor({ timeout: 30_000 });
    await page.waitForTimeout(500);
    mkdirSync(dirname(o.png), { recursive: true });
    await page.screenshot({ path: o.png });
    const text = await frame.locator('body').innerText();
    return { text, errors };
  } finally {
    await browser.close();
    server.close();
  }
}

function toJsonSafe(v: unknown): unknown {
  if (v instanceof ArrayBuffer) return { __bytes: Buffer.from(v).toString('base64') };
  if (Array.isArray(v)) return v.map(toJsonSafe);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJsonSafe(x)]));
  return v;
}
