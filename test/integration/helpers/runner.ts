/**
 * Test-side half of the integration harness: asks the outside runner (test/integration/run.mjs, which drives
 * chromium) to act on the workbench. Requests go out as a console line `__LOUPE_RUNNER__ <json>`; the runner
 * answers by writing `<rpcDir>/<id>.json`, which this side polls for.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let nextId = 1;

/** True when the chromium runner is attached (run.mjs). Under @vscode/test-electron it is not. */
export const hasRunner = (): boolean => Boolean(process.env.LOUPE_RUNNER_RPC_DIR);

function rpcDir(): string {
  const dir = process.env.LOUPE_RUNNER_RPC_DIR;
  if (!dir) {
    throw new Error('LOUPE_RUNNER_RPC_DIR is not set: integration tests must be started by test/integration/run.mjs');
  }
  return dir;
}

export const screenshotDir = (): string =>
  process.env.LOUPE_SCREENSHOT_DIR ?? join(process.cwd(), 'test-results', 'screenshots');

type RunnerAction =
  | { action: 'screenshot'; path: string; webview?: boolean }
  | { action: 'webviewText'; title?: string; selector?: string }
  | { action: 'palette'; title: string }
  | { action: 'press'; key: string }
  | { action: 'type'; text: string }
  | { action: 'clickInWebview'; selector: string; title?: string }
  | { action: 'webviewValue'; selector: string; title?: string }
  | { action: 'webviewRects'; selector: string; title?: string }
  | { action: 'workbenchText'; selector: string }
  | { action: 'clickWorkbench'; selector: string }
  /** `fn`: the source of a self-contained `(element, arg) => json`, run on the first `selector` match of the webview. */
  | { action: 'webviewEval'; selector: string; fn: string; arg?: unknown; title?: string }
  /** Resizes the browser page (the whole workbench), CSS pixels; the default is 1400 × 900. */
  | { action: 'viewport'; width: number; height: number };

/** Sends one action to the runner and waits for its answer (default 60 s). */
export async function runner<T = unknown>(req: RunnerAction, timeoutMs = 60_000): Promise<T> {
  const id = `${process.pid}-${nextId++}`;
  const file = join(rpcDir(), `${id}.json`);
  rmSync(file, { force: true });
  console.log(`__LOUPE_RUNNER__ ${JSON.stringify({ id, ...req })}`);
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    if (existsSync(file)) {
      const res = JSON.parse(readFileSync(file, 'utf8')) as { ok: boolean; value?: T; error?: string };
      if (!res.ok) throw new Error(`runner ${req.action} failed: ${res.error}`);
      return res.value as T;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`runner did not answer ${req.action} within ${timeoutMs} ms`);
}

/** A box in a webview's CSS pixels. */
export interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
}
/** What `webviewRects` answers for each element: its box, its first character's box, what its clipping ancestors leave visible. */
export interface ElementRects {
  box: Box;
  first: Box | null;
  clip: Box;
  text: string;
  viewport: number;
}

/** Saves a PNG of the whole workbench to test-results/screenshots/<name>.png and returns its path. */
export async function screenshot(name: string): Promise<string> {
  const path = join(screenshotDir(), `${name}.png`);
  await runner({ action: 'screenshot', path });
  return path;
}

/**
 * Text rendered inside a webview (the visible one, or the one whose tab title is `title`), polled until it
 * matches `expect` or the timeout passes.
 */
export async function webviewText(opts: { title?: string; expect?: RegExp; timeoutMs?: number } = {}): Promise<string> {
  const t0 = Date.now();
  for (;;) {
    let last: string;
    try {
      last = await runner<string>({ action: 'webviewText', title: opts.title }, 15_000);
    } catch (e) {
      last = `(${e instanceof Error ? e.message : String(e)})`;
    }
    if (!opts.expect || opts.expect.test(last)) return last;
    if (Date.now() - t0 > (opts.timeoutMs ?? 30_000)) {
      throw new Error(
        `webview text did not match ${opts.expect} within ${opts.timeoutMs ?? 30_000} ms; last text: ${last.slice(0, 500)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 300));
  }
}

/**
 * The screenshot helper: open a command by its palette title (as a user would, F1 + type + Enter), wait until
 * the webview shows `expect`, then save a PNG. Returns the webview's text and the PNG path.
 */
export async function openByPaletteAndCapture(
  title: string,
  name: string,
  expect: RegExp,
): Promise<{ text: string; png: string }> {
  await runner({ action: 'palette', title });
  const text = await webviewText({ expect });
  await new Promise((r) => setTimeout(r, 400));
  const png = await screenshot(name);
  return { text, png };
}

/**
 * Runs the shipped CLI (dist/cli.js) as a user runs it next to the editor, from a scratch cwd, with `env` added to
 * the extension host's environment. Never rejects: the exit code, stdout and stderr come back (5 min at most).
 */
export function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ rc: number; out: string; err: string }> {
  const root = process.env.LOUPE_REPO_ROOT ?? process.cwd();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(root, 'dist', 'cli.js'), ...args],
      {
        env: { ...process.env, ...env, ELECTRON_RUN_AS_NODE: '1' },
        cwd: tmpdir(),
        maxBuffer: 64 << 20,
        timeout: 300_000,
      },
      (e, out, err) =>
        resolve({ rc: e ? (typeof e.code === 'number' ? e.code : 1) : 0, out: String(out), err: String(err) }),
    );
  });
}

/**
 * Presses `key` until `effect` holds: a key pressed while VS Code moves focus between the workbench and a webview's
 * frames can be dropped, and a person would press again. At most 4 presses, each watched for 1.5 s; on failure takes
 * the screenshot `<shotPrefix>-failed-<what>` and throws naming `what`, the key and `explain()` (what the panel shows).
 */
export async function pressUntil(
  key: string,
  effect: () => Promise<boolean>,
  what: string,
  opts: { shotPrefix: string; explain: () => Promise<string> },
): Promise<void> {
  for (let i = 0; i < 4; i++) {
    await runner({ action: 'press', key });
    for (let w = 0; w < 6; w++) {
      if (await effect()) return;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  await screenshot(`${opts.shotPrefix}-failed-${what.replace(/\W+/g, '-')}`).catch(() => '');
  throw new Error(`${what}: pressing ${key} had no effect; ${await opts.explain()}`);
}
