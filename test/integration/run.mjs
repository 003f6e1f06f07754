#!/usr/bin/env node
// Runs test/integration inside the real VS Code: code-server (npm) + headless Debian chromium via playwright-core.
//   node test/integration/run.mjs [--grep PATTERN] [--keep]
// Steps: make sure code-server is installed (.cache/code-server), start it on 127.0.0.1 with a scratch profile,
// open the workbench with the test payload (extensionDevelopmentPath = this repo, extensionTestsPath = the bundled
// suite), serve runner actions the tests ask for (screenshots, palette, webview text), print the mocha output and
// a closing "N passed, N failed" line, stop everything.
import { spawn, spawnSync } from 'node:child_process';
import { format } from 'node:util';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, renameSync, cpSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CS_ENTRY, ensureCodeServer } from './code-server.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OUT = join(ROOT, 'test-results', 'integration');
const SHOTS = join(ROOT, 'test-results', 'screenshots');
const args = process.argv.slice(2);
const grep = args.includes('--grep') ? args[args.indexOf('--grep') + 1] : process.env.LOUPE_TEST_GREP;
const keep = args.includes('--keep');
const TOTAL_TIMEOUT_MS = Number(process.env.LOUPE_INTEGRATION_TIMEOUT_MS ?? 20 * 60_000);
const t0 = Date.now();
// Workbench chatter unrelated to Loupe (the AI features probe GitHub; there is no network here).
const NOISE =
  /^\[(AgentHost|ChatModelSelection)\]|builtin extensions (cache|from gallery)|Ignoring fetching additional builtin/;
const lap = (m) => console.log(`[integration ${((Date.now() - t0) / 1000).toFixed(1)}s] ${m}`);

function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
    s.on('error', rej);
  });
}

async function waitHealthy(url, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`code-server not healthy at ${url} after ${ms} ms`);
}

/** Prepares profile + workspace folders. Workspace settings point Loupe at the shared benchmark data. */
function prepareProfile() {
  const run = join(OUT, 'run');
  rmSync(run, { recursive: true, force: true });
  for (const d of ['ud/User', 'exts', 'home', 'tmp', 'rpc', 'ws/.vscode']) mkdirSync(join(run, d), { recursive: true });
  mkdirSync(SHOTS, { recursive: true });
  const shared = resolve(process.env.LOUPE_SHARED ?? join(ROOT, '..', 'shared'));
  const userSettings = {
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'workbench.welcomePage.walkthroughs.openOnInstall': false,
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true,
    'update.mode': 'none',
    'telemetry.telemetryLevel': 'off',
    'security.workspace.trust.enabled': false,
    'window.commandCenter': true,
    'chat.disableAIFeatures': true,
    'workbench.secondarySideBar.defaultVisibility': 'hidden',
    'workbench.colorTheme': process.env.LOUPE_THEME ?? 'Default Dark Modern',
  };
  writeFileSync(join(run, 'ud/User/settings.json'), JSON.stringify(userSettings, null, 2));
  const fixtureWs = join(ROOT, 'test', 'integration', 'workspace');
  if (existsSync(fixtureWs)) cpSync(fixtureWs, join(run, 'ws'), { recursive: true });
  const wsSettingsFile = join(run, 'ws/.vscode/settings.json');
  const wsSettings = existsSync(wsSettingsFile) ? JSON.parse(readFileSync(wsSettingsFile, 'utf8')) : {};
  const expand = (v) =>
    JSON.parse(JSON.stringify(v).replaceAll('${LOUPE_SHARED}', shared).replaceAll('${RUN_DIR}', run));
  writeFileSync(
    wsSettingsFile,
    JSON.stringify({ 'loupe.runsDirectory': join(run, 'loupe-runs'), ...expand(wsSettings) }, null, 2),
  );
  return { run, shared };
}

/**
 * One integration run at a time per checkout: every run wipes and reuses test-results/integration/run, so a second
 * run started meanwhile would delete the first one's store and profile. Waits (up to 20 min) for a live holder;
 * takes over a lock whose process is gone.
 */
async function acquireRunLock() {
  const lock = join(ROOT, 'test-results', 'integration.lock');
  mkdirSync(dirname(lock), { recursive: true });
  const end = Date.now() + 20 * 60_000;
  for (let waited = false; ;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      process.on('exit', () => rmSync(lock, { recursive: true, force: true }));
      return;
    } catch {
      let pid = 0;
      try {
        pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
      } catch {
        /* being created */
      }
      let alive = pid > 0;
      if (alive) {
        try {
          process.kill(pid, 0);
        } catch {
          alive = false;
        }
      }
      if (!alive && pid > 0) {
        rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > end) throw new Error(`another integration run (pid ${pid}) holds ${lock}`);
      if (!waited) {
        lap(`waiting for the integration run of pid ${pid} to finish`);
        waited = true;
      }
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
}

async function main() {
  ensureCodeServer();
  const suite = join(ROOT, 'out', 'test', 'integration', 'index.js');
  if (!existsSync(suite) || !existsSync(join(ROOT, 'dist', 'extension.js'))) {
    throw new Error('run `npm run build` first');
  }
  await acquireRunLock();
  const { run, shared } = prepareProfile();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    HOME: join(run, 'home'),
    TMPDIR: join(run, 'tmp'),
    EXTENSIONS_GALLERY: '{}',
    LOUPE_RUNNER_RPC_DIR: join(run, 'rpc'),
    LOUPE_SCREENSHOT_DIR: SHOTS,
    LOUPE_SHARED: shared,
    LOUPE_REPO_ROOT: ROOT,
    ...(grep ? { LOUPE_TEST_GREP: grep } : {}),
    // test-only panels (test/fixtures/panels, bundled to out/test/panels.js): see src/extension.ts registerTestPanels
    ...(existsSync(join(ROOT, 'out', 'test', 'panels.js'))
      ? { LOUPE_TEST_PANELS: join(ROOT, 'out', 'test', 'panels.js') }
      : {}),
  };
  const cs = spawn(
    process.execPath,
    [
      CS_ENTRY,
      '--config',
      join(run, 'cs.yaml'),
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--auth',
      'none',
      '--user-data-dir',
      join(run, 'ud'),
      '--extensions-dir',
      join(run, 'exts'),
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--vscode-option',
      'enable-smoke-test-driver',
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  const csLog = [];
  cs.stdout.on('data', (d) => csLog.push(String(d)));
  cs.stderr.on('data', (d) => csLog.push(String(d)));
  const stopCs = () => {
    try {
      process.kill(-cs.pid, 'SIGTERM');
    } catch {
      /* gone */
    }
  };
  process.on('exit', stopCs);
  await waitHealthy(`${base}/healthz`, 60_000);
  const csVersion = spawnSync(process.execPath, [CS_ENTRY, '--version'], { encoding: 'utf8' })
    .stdout.trim()
    .split('\n')[0];
  lap(`code-server ${csVersion} healthy on ${base} (node ${process.version})`);

  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: process.env.LOUPE_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const output = [];
  let passed = 0,
    failed = 0;
  const done = new Promise((resolveDone) => {
    page.exposeFunction('codeAutomationExit', (code) => resolveDone(code));
    page.exposeFunction('codeAutomationLog', (_type, a) => {
      // Extension-host console calls arrive as printf-style arguments (mocha's spec reporter uses '%s (%dms)').
      for (const line of format(...(a || [])).split('\n')) onLine(line);
    });
  });
  const handled = new Set();
  function onLine(line) {
    const m = line.match(/__LOUPE_RUNNER__ (\{.*\})/);
    if (m) {
      const req = JSON.parse(m[1]);
      if (!handled.has(req.id)) {
        handled.add(req.id);
        void serve(req);
      }
      return;
    }
    if (NOISE.test(line)) return;
    const pm = line.match(/^\s*(\d+) passing/);
    if (pm) passed = Number(pm[1]);
    const fm = line.match(/^\s*(\d+) failing/);
    if (fm) failed = Number(fm[1]);
    output.push(line);
    console.log(line);
  }
  page.on('console', (msg) => {
    const t = msg.text();
    if (t.includes('__LOUPE_RUNNER__')) onLine(t);
  });

  const webviewFrames = async (title) => {
    // Each webview is an iframe.webview (outer) containing #active-frame (the panel's document).
    const outers = page.locator('iframe.webview.ready');
    const n = await outers.count();
    const frames = [];
    for (let i = 0; i < n; i++) {
      const outer = outers.nth(i);
      if (!(await outer.isVisible())) continue;
      frames.push(page.frameLocator('iframe.webview.ready').nth(i).frameLocator('#active-frame'));
    }
    if (title) {
      // Bring the tab to front first so its frame is the visible one.
      const tab = page.locator(`.tabs-container .tab[aria-label^="${title}"]`).first();
      if (await tab.count()) await tab.click();
    }
    return frames;
  };

  async function serve(req) {
    const reply = (body) => {
      const file = join(run, 'rpc', `${req.id}.json`);
      writeFileSync(file + '.tmp', JSON.stringify(body));
      renameSync(file + '.tmp', file);
    };
    try {
      let value;
      switch (req.action) {
        case 'screenshot': {
          mkdirSync(dirname(req.path), { recursive: true });
          await page.screenshot({ path: req.path });
          lap(`screenshot ${req.path}`);
          break;
        }
        case 'webviewText': {
          const frames = await webviewFrames(req.title);
          const texts = [];
          for (const f of frames) {
            // with a selector, only the frames that have it answer (another visible webview is not an error)
            if (
              req.selector &&
              !(await f
                .locator(req.selector)
                .count()
                .catch(() => 0))
            ) {
              continue;
            }
            texts.push(
              await f
                .locator(req.selector ?? 'body')
                .first()
                .innerText({ timeout: 5000 }),
            );
          }
          value = texts.join('\n----\n');
          break;
        }
        case 'palette': {
          let found = false;
          for (let i = 0; i < 30 && !found; i++) {
            await page.keyboard.press('F1');
            await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: 10_000 });
            await page.keyboard.type(req.title);
            try {
              await page.waitForSelector(`.quick-input-list .monaco-list-row:has-text("${req.title}")`, {
                timeout: 3000,
              });
              found = true;
            } catch {
              await page.keyboard.press('Escape');
              await page.waitForTimeout(1000);
            }
          }
          if (!found) throw new Error(`command '${req.title}' not found in the palette`);
          await page.keyboard.press('Enter');
          break;
        }
        case 'press':
          await page.keyboard.press(req.key);
          break;
        case 'type':
          await page.keyboard.type(req.text);
          break;
        case 'clickInWebview': {
          // Notebook outputs are webviews too: click in the first visible one that has the element.
          let clicked = false;
          for (let i = 0; i < 50 && !clicked; i++) {
            for (const f of await webviewFrames(req.title)) {
              if (
                await f
                  .locator(req.selector)
                  .count()
                  .catch(() => 0)
              ) {
                await f.locator(req.selector).first().click({ timeout: 10_000 });
                clicked = true;
                break;
              }
            }
            if (!clicked) await page.waitForTimeout(200);
          }
          if (!clicked) throw new Error(`no visible webview has ${req.selector}`);
          break;
        }
        case 'workbenchText':
          value = await page.locator(req.selector).first().innerText({ timeout: 10_000 });
          break;
        case 'webviewValue': {
          // the value of an input / textarea / select in the first visible webview that has it
          value = null;
          for (const f of await webviewFrames(req.title)) {
            if (
              await f
                .locator(req.selector)
                .count()
                .catch(() => 0)
            ) {
              value = await f.locator(req.selector).first().inputValue({ timeout: 5000 });
              break;
            }
          }
          break;
        }
        case 'webviewRects': {
          // geometry of the elements matching the selector in the first visible webview that has them: each one's box,
          // the box of its first character, and what its clipping ancestors (itself included) leave visible of it
          value = [];
          for (const f of await webviewFrames(req.title)) {
            if (
              !(await f
                .locator(req.selector)
                .count()
                .catch(() => 0))
            ) {
              continue;
            }
            value = await f.locator(req.selector).evaluateAll((els) =>
              els.map((el) => {
                /* global document, NodeFilter, getComputedStyle -- runs in the webview's page */
                const box = (r) => ({ left: r.left, right: r.right, top: r.top, bottom: r.bottom });
                const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
                const t = walker.nextNode();
                let first = null;
                if (t && t.length) {
                  const rg = document.createRange();
                  rg.setStart(t, 0);
                  rg.setEnd(t, 1);
                  first = box(rg.getBoundingClientRect());
                }
                const clip = {
                  left: 0,
                  top: 0,
                  right: document.documentElement.clientWidth,
                  bottom: document.documentElement.clientHeight,
                };
                for (let a = el; a; a = a.parentElement) {
                  if (getComputedStyle(a).overflowX === 'visible') continue;
                  const r = a.getBoundingClientRect();
                  clip.left = Math.max(clip.left, r.left);
                  clip.right = Math.min(clip.right, r.right);
                  clip.top = Math.max(clip.top, r.top);
                  clip.bottom = Math.min(clip.bottom, r.bottom);
                }
                return {
                  box: box(el.getBoundingClientRect()),
                  first,
                  clip,
                  text: el.textContent,
                  viewport: document.documentElement.clientWidth,
                };
              }),
            );
            break;
          }
          break;
        }
        case 'clickWorkbench':
          await page.locator(req.selector).first().click({ timeout: 10_000 });
          break;
        case 'webviewEval': {
          // runs a self-contained function `(element, arg) => json` on the first element matching the selector in the
          // first visible webview that has it (the source is a test's string: no bundler helpers inside)
          const fn = new Function(`return (${req.fn});`)();
          value = null;
          for (const f of await webviewFrames(req.title)) {
            if (
              !(await f
                .locator(req.selector)
                .count()
                .catch(() => 0))
            ) {
              continue;
            }
            value = await f
              .locator(req.selector)
              .first()
              .evaluate(fn, req.arg ?? null);
            break;
          }
          if (value === null) throw new Error(`no visible webview has ${req.selector}`);
          break;
        }
        case 'viewport':
          await page.setViewportSize({ width: req.width, height: req.height });
          break;
        default:
          throw new Error(`unknown runner action ${req.action}`);
      }
      reply({ ok: true, value });
    } catch (e) {
      reply({ ok: false, error: e instanceof Error ? e.message : String(e) });
    }
  }

  const authority = new URL(base).host;
  const payload = JSON.stringify([
    ['extensionDevelopmentPath', `vscode-remote://${authority}${ROOT}`],
    ['extensionTestsPath', `vscode-remote://${authority}${suite}`],
  ]);
  // A loaded machine (several suites at once) can take over 30 s to serve the workbench.
  await page.goto(`${base}/?folder=${encodeURIComponent(join(run, 'ws'))}&payload=${encodeURIComponent(payload)}`, {
    timeout: 180_000,
  });
  lap('workbench loading; tests run in the extension host');
  const timeout = new Promise((_, rej) =>
    setTimeout(() => rej(new Error(`integration tests did not finish in ${TOTAL_TIMEOUT_MS} ms`)), TOTAL_TIMEOUT_MS),
  );
  let code;
  try {
    code = await Promise.race([done, timeout]);
  } catch (e) {
    await page.screenshot({ path: join(OUT, 'timeout.png') }).catch(() => {});
    console.error(String(e));
    code = 1;
  }
  // Restore after a window reload (issue 13): the suite left the test-only Echo panel open; reload the window with the
  // extension but without the tests, and check that the panel came back through its serializer in the fresh
  // extension host (it shows the host's state again; "created 1" is the new host's first construction).
  // Run on its own (`npm run test:integration:restore`): with the whole suite, other editors (dirty notebooks veto the
  // unload) keep the workbench from saving its editor state before the reload.
  if (code === 0 && grep && /panel base/i.test(grep) && existsSync(join(ROOT, 'out', 'test', 'panels.js'))) {
    try {
      const devOnly = JSON.stringify([['extensionDevelopmentPath', `vscode-remote://${authority}${ROOT}`]]);
      await page.goto(`${base}/?folder=${encodeURIComponent(join(run, 'ws'))}&payload=${encodeURIComponent(devOnly)}`, {
        timeout: 120_000,
      });
      let restored = '';
      for (let i = 0; i < 120 && !/echo: ping[\s\S]*created 1/.test(restored); i++) {
        await page.waitForTimeout(500);
        restored = '';
        for (const f of await webviewFrames('Loupe Test Echo')) {
          restored += await f
            .locator('body')
            .innerText({ timeout: 2000 })
            .catch(() => '');
        }
      }
      await page.screenshot({ path: join(SHOTS, 'panel-base-restored.png') });
      const ok = /hello from the host[\s\S]*echo: ping[\s\S]*created 1/.test(restored);
      console.log(
        `  ${ok ? '✔' : '✖'} after a window reload, the test-only panel is restored by its serializer (panel base)`,
      );
      if (ok) passed++;
      else failed++;
      // Issue 14: the annotation queue left beside it with a draft verdict comes back on the same item with the
      // draft, and the expert continues with the keyboard: the draft is submitted and stored.
      const marker = join(run, 'rpc', 'annotation-restore.json');
      if (existsSync(marker)) {
        const { storePath, queueId } = JSON.parse(readFileSync(marker, 'utf8'));
        const annText = async (sel) => {
          let t = '';
          for (const f of await webviewFrames('Annotate')) {
            t += await f
              .locator(sel)
              .innerText({ timeout: 2000 })
              .catch(() => '');
          }
          return t;
        };
        let draft = '';
        for (let i = 0; i < 20 && !/Supported = Not supported/.test(draft); i++) {
          await page.waitForTimeout(500);
          draft = await annText('#draft-summary');
        }
        let reopened = false;
        if (!draft) {
          // The workbench restores an editor only if it saved its layout before the reload (it saves on a timer), so
          // the panel may not come back by itself: the expert reopens the queue from the palette, as after a crash.
          reopened = true;
          await page.keyboard.press('F1');
          await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: 10_000 });
          await page.keyboard.type('Loupe: Open Annotation Queue');
          await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("Open Annotation Queue")', {
            timeout: 20_000,
          });
          await page.keyboard.press('Enter');
          await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("Pending: claim-support")', {
            timeout: 20_000,
          });
          await page.keyboard.type('Pending: claim-support');
          await page.waitForTimeout(300);
          await page.keyboard.press('Enter');
          for (let i = 0; i < 120 && !/Supported = Not supported/.test(draft); i++) {
            await page.waitForTimeout(500);
            draft = await annText('#draft-summary');
          }
        }
        const onItem2 = /item 2 of 3/.test(await annText('.an-task'));
        let saved = '';
        if (draft) {
          for (const f of await webviewFrames('Annotate')) {
            if (
              await f
                .locator('#queue-name')
                .count()
                .catch(() => 0)
            ) {
              await f.locator('#queue-name').click({ timeout: 5000 });
            }
          }
          for (let i = 0; i < 4 && !/Saved/.test(saved); i++) {
            await page.keyboard.press('Control+Enter');
            for (let w = 0; w < 6 && !/Saved/.test(saved); w++) {
              await page.waitForTimeout(250);
              saved = await annText('#message');
            }
          }
        }
        await page.screenshot({ path: join(SHOTS, 'annotation-restored.png') });
        const listed = spawnSync(
          process.execPath,
          [join(ROOT, 'dist', 'cli.js'), 'annotations', 'list', '--store', storePath, '--json'],
          { encoding: 'utf8' },
        );
        const items = listed.status === 0 ? JSON.parse(listed.stdout).items : [];
        const answered = items.filter((x) => x.humanLabels && x.humanLabels['restore-tester'] !== undefined).length;
        const ok2 = onItem2 && /Supported = Not supported/.test(draft) && /Saved/.test(saved) && answered === 2;
        console.log(
          `  ${ok2 ? '✔' : '✖'} after a window reload, the annotation queue ${queueId} is back on item 2 with its draft${reopened ? ' (reopened from the palette: the workbench had not saved its layout)' : ' (restored by its serializer)'}; submitting it stores the expert's 2nd verdict (item 2: ${onItem2}, draft: '${draft}', saved: '${saved}', stored: ${answered})`,
        );
        if (ok2) passed++;
        else failed++;
      }
    } catch (e) {
      console.log(`  ✖ reload check failed: ${e instanceof Error ? e.message : String(e)}`);
      failed++;
    }
  }
  writeFileSync(join(OUT, 'code-server.log'), csLog.join(''));
  writeFileSync(join(OUT, 'tests.log'), output.join('\n'));
  await browser.close();
  if (!keep) stopCs();
  lap(`extension tests exit code ${code}`);
  if (code !== 0 && passed + failed === 0) failed = 1;
  console.log(`integration: ${passed} passed, ${failed} failed`);
  process.exit(code === 0 && failed === 0 ? 0 : 1);
}

main().catch((e) => {
  console.error('integration runner failed:', e);
  console.log('integration: 0 passed, 1 failed');
  process.exit(1);
});
