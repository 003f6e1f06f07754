#!/usr/bin/env node
// Packages Loupe as a .vsix, installs it into code-server with --install-extension (as a user would), starts the
// real VS Code with only that installed copy, opens "Loupe: Show Welcome" from the palette and checks what the
// webview renders (environment checks from the installed extension: better-sqlite3 prebuild, Python, bwrap), then
// runs the reference agent on the NHANES obesity block from the palette and checks the answers landed in the store.
// Prints "vsix: N passed, N failed". Usage: node test/integration/vsix.mjs [--skip-package]
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureCodeServer, CS_ENTRY } from './code-server.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const OUT = join(ROOT, 'test-results', 'vsix');
const VSIX = join(ROOT, 'dist', 'loupe.vsix');
const checks = [];
const check = (name, ok, detail = '') => {
  checks.push(ok);
  console.log(`${ok ? '✔' : '✘'} ${name}${detail ? ` — ${detail}` : ''}`);
};

async function main() {
  ensureCodeServer();
  if (!process.argv.includes('--skip-package') || !existsSync(VSIX)) {
    const r = spawnSync('npm', ['run', '-s', 'package'], { cwd: ROOT, encoding: 'utf8' });
    check('npm run package', r.status === 0 && existsSync(VSIX), r.status === 0 ? VSIX : r.stderr.slice(-800));
    if (r.status !== 0) return;
  }
  rmSync(OUT, { recursive: true, force: true });
  for (const d of ['exts', 'ud/User', 'home', 'tmp', 'ws/.vscode']) mkdirSync(join(OUT, d), { recursive: true });
  const shared = resolve(process.env.LOUPE_SHARED ?? join(ROOT, '..', 'shared'));
  writeFileSync(
    join(OUT, 'ws/.vscode/settings.json'),
    JSON.stringify(
      {
        'loupe.suites': [{ suite: 'longda', root: join(shared, 'data', 'longda', 'benchmark') }],
        'loupe.runsDirectory': join(OUT, 'runs'),
      },
      null,
      2,
    ),
  );
  writeFileSync(
    join(OUT, 'ud/User/settings.json'),
    JSON.stringify({
      'workbench.startupEditor': 'none',
      'security.workspace.trust.enabled': false,
      'chat.disableAIFeatures': true,
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
    }),
  );
  const env = { ...process.env, HOME: join(OUT, 'home'), TMPDIR: join(OUT, 'tmp'), EXTENSIONS_GALLERY: '{}' };
  const inst = spawnSync(
    process.execPath,
    [CS_ENTRY, '--extensions-dir', join(OUT, 'exts'), '--user-data-dir', join(OUT, 'ud'), '--install-extension', VSIX],
    { env, encoding: 'utf8' },
  );
  check(
    'code-server --install-extension dist/loupe.vsix',
    inst.status === 0,
    (inst.stdout + inst.stderr).trim().split('\n').pop(),
  );
  const list = spawnSync(
    process.execPath,
    [
      CS_ENTRY,
      '--extensions-dir',
      join(OUT, 'exts'),
      '--user-data-dir',
      join(OUT, 'ud'),
      '--list-extensions',
      '--show-versions',
    ],
    { env, encoding: 'utf8' },
  );
  check('installed extension is listed', /loupe-dev\.loupe@/.test(list.stdout), list.stdout.trim());

  // BLADE scoring from the shipped Python driver: the installed copy's CLI runs the reference agent on one dataset and
  // scores it; only dist/blade/blade_driver.py exists there (no src/), so the score proves the shipped file loads.
  const ext = join(
    OUT,
    'exts',
    readdirSync(join(OUT, 'exts')).find((d) => d.startsWith('loupe-dev.loupe-')) ?? 'missing',
  );
  check(
    'the .vsix ships the documentation extraction worker (dist/extract-worker.js)',
    existsSync(join(ext, 'dist', 'extract-worker.js')),
    ext,
  );
  // PDF text from the shipped PDFium WebAssembly build, in the shipped extraction worker (no node_modules of the repo)
  const idxRoot = join(OUT, 'idx-root');
  mkdirSync(idxRoot, { recursive: true });
  copyFileSync(
    join(shared, 'data', 'longda', 'benchmark', 'NHANES', 'docs', 'Examination', 'BMX_L.pdf'),
    join(idxRoot, 'BMX_L.pdf'),
  );
  const ix = spawnSync(
    process.execPath,
    [
      join(ext, 'dist', 'cli.js'),
      'index',
      '--root',
      idxRoot,
      '--cache',
      join(OUT, 'idx-cache'),
      '--workers',
      '2',
      '--json',
    ],
    { cwd: OUT, encoding: 'utf8', timeout: 120_000 },
  );
  let ixRep;
  try {
    ixRep = JSON.parse(ix.stdout);
  } catch {
    /* reported below */
  }
  check(
    'the installed CLI reads a codebook PDF with PDFium in its extraction workers',
    ix.status === 0 && ixRep?.pdfExtractor === 'pdfium' && ixRep.files?.[0]?.units > 10 && ixRep.skipped?.length === 0,
    `status ${ix.status}, extractor ${ixRep?.pdfExtractor}, units ${ixRep?.files?.[0]?.units}, skipped ${JSON.stringify(ixRep?.skipped)} ${ix.stderr.trim().split('\n').slice(-2).join(' | ')}`,
  );
  check(
    'the .vsix ships the BLADE driver as a Python file',
    existsSync(join(ext, 'dist', 'blade', 'blade_driver.py')) &&
      !existsSync(join(ext, 'src', 'core', 'benchmarks', 'blade', 'eval')),
    ext,
  );
  const bladeStore = join(OUT, 'blade.sqlite');
  const cliEnv = { ...process.env, HOME: join(OUT, 'home'), TMPDIR: join(OUT, 'tmp') };
  delete cliEnv.LOUPE_BLADE_DRIVER;
  const bRun = spawnSync(
    process.execPath,
    [
      join(ext, 'dist', 'cli.js'),
      'run',
      '--suite',
      'blade',
      '--root',
      join(shared, 'data', 'blade', 'datasets'),
      '--block',
      'hurricane',
      '--agent',
      'reference',
      '--store',
      bladeStore,
      '--json',
    ],
    { env: cliEnv, cwd: OUT, encoding: 'utf8', timeout: 300_000 },
  );
  const bScore = spawnSync(
    process.execPath,
    [join(ext, 'dist', 'cli.js'), 'score', '--store', bladeStore, '--all', '--json'],
    { env: cliEnv, cwd: OUT, encoding: 'utf8', timeout: 300_000 },
  );
  let f1;
  try {
    f1 = JSON.parse(bScore.stdout).runs?.[0]?.summary?.transformValuePrecision; // value hashing runs in the Python driver
  } catch {
    /* reported below */
  }
  check(
    'BLADE scoring runs from the installed extension (shipped blade_driver.py)',
    bRun.status === 0 && bScore.status === 0 && typeof f1 === 'number' && f1 > 0,
    `run ${bRun.status}, score ${bScore.status}, transformValuePrecision ${f1}; ${(bRun.stderr + bScore.stderr).trim().split('\n').slice(-3).join(' | ')}`,
  );

  const port = await new Promise((res) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => res(p));
    });
  });
  const cs = spawn(
    process.execPath,
    [
      CS_ENTRY,
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--auth',
      'none',
      '--user-data-dir',
      join(OUT, 'ud'),
      '--extensions-dir',
      join(OUT, 'exts'),
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--config',
      join(OUT, 'cs.yaml'),
    ],
    { env, stdio: 'ignore', detached: true },
  );
  const stop = () => {
    try {
      process.kill(-cs.pid, 'SIGTERM');
    } catch {
      /* gone */
    }
  };
  process.on('exit', stop);
  for (let i = 0; i < 300; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
    } catch {
      /* starting */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
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
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(join(OUT, 'ws'))}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 90_000 });
    let found = false;
    for (let i = 0; i < 40 && !found; i++) {
      await page.keyboard.press('F1');
      await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: 10_000 });
      await page.keyboard.type('Loupe: Show Welcome');
      try {
        await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("Loupe: Show Welcome")', {
          timeout: 3000,
        });
        found = true;
      } catch {
        await page.keyboard.press('Escape');
        await page.waitForTimeout(1000);
      }
    }
    check('the installed extension contributes "Loupe: Show Welcome" to the palette', found);
    if (found) {
      await page.keyboard.press('Enter');
      const frame = page.frameLocator('iframe.webview.ready').frameLocator('#active-frame');
      await frame.locator('[data-check="SQLite with FTS5"]').waitFor({ timeout: 120_000 });
      const text = await frame.locator('body').innerText();
      check(
        'the Welcome webview renders inside the installed extension',
        /Loupe/.test(text) && /This machine/.test(text),
      );
      check(
        'better-sqlite3 loads from the .vsix (prebuilt N-API binary)',
        /✔\s*SQLite with FTS5/.test(text),
        text.split('\n').find((l) => l.includes('SQLite')),
      );
      await page.waitForTimeout(500);
      await page.screenshot({ path: join(ROOT, 'test-results', 'screenshots', 'vsix-welcome.png') });
      // A new user's first run: the reference agent on the NHANES obesity block, from the palette.
      await page.keyboard.press('F1');
      await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: 10_000 });
      await page.keyboard.type('Loupe: Run Benchmark Block');
      await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("Loupe: Run Benchmark Block")', {
        timeout: 10_000,
      });
      await page.keyboard.press('Enter');
      await page.waitForSelector('.quick-input-title:has-text("(2/4)")', { timeout: 60_000 });
      await page.keyboard.type('Brief_No._508');
      await page.waitForSelector('.quick-input-list .monaco-list-row:has-text("NHANES_NCHS_Data_Brief_No._508")', {
        timeout: 10_000,
      });
      await page.screenshot({ path: join(ROOT, 'test-results', 'screenshots', 'vsix-palette-block.png') });
      await page.keyboard.press('Enter');
      await page.waitForSelector('.quick-input-title:has-text("(3/4)")', { timeout: 10_000 });
      await page.keyboard.type('reference');
      await page.waitForTimeout(300);
      await page.keyboard.press('Enter');
      await page.waitForSelector('.quick-input-title:has-text("(4/4)")', { timeout: 10_000 });
      await page.keyboard.type('1');
      await page.keyboard.press('Enter');
      const { default: Database } = await import('better-sqlite3');
      const storeFile = join(OUT, 'runs', 'runs.sqlite');
      let run;
      for (let i = 0; i < 360 && !(run && !['pending', 'running'].includes(run.status)); i++) {
        await page.waitForTimeout(500);
        if (!existsSync(storeFile)) continue;
        const db = new Database(storeFile, { readonly: true, fileMustExist: true });
        try {
          run = db
            .prepare(
              "SELECT id, status, status_reason AS reason FROM runs WHERE block_id = 'NHANES_NCHS_Data_Brief_No._508'",
            )
            .get();
          if (run) run.answers = db.prepare('SELECT query_id AS q, answer FROM answers WHERE run_id = ?').all(run.id);
        } finally {
          db.close();
        }
      }
      check(
        'the reference agent run finished from the palette',
        run?.status === 'finished',
        `${run?.status} ${run?.reason ?? ''}`,
      );
      check(
        'all 9 answers of Data Brief 508 recorded',
        run?.answers?.length === 9,
        JSON.stringify(run?.answers?.slice(0, 3)),
      );
      // The run's timeline opened beside the notebook and shows the finished run.
      let timeline = '';
      for (let i = 0; i < 60 && !/finished[\s\S]*final_answer/.test(timeline); i++) {
        await page.waitForTimeout(500);
        timeline = '';
        const frames = page.frameLocator('iframe.webview.ready');
        const n = await page.locator('iframe.webview.ready').count();
        for (let k = 0; k < n; k++) {
          timeline += await frames
            .nth(k)
            .frameLocator('#active-frame')
            .locator('body')
            .innerText({ timeout: 2000 })
            .catch(() => '');
        }
      }
      check(
        'the timeline of the run renders in the installed extension',
        /finished[\s\S]*final_answer/.test(timeline),
        timeline.replace(/\s+/g, ' ').slice(0, 160),
      );
      await page.waitForTimeout(500);
      await page.screenshot({ path: join(ROOT, 'test-results', 'screenshots', 'vsix-reference-run.png') });
    }
  } catch (e) {
    await browser
      .contexts()[0]
      ?.pages()[0]
      ?.screenshot({ path: join(OUT, 'failure.png') })
      .catch(() => undefined);
    throw e;
  } finally {
    await browser.close();
    stop();
  }
}

main()
  .catch((e) => {
    console.error('vsix check failed:', e);
    checks.push(false);
  })
  .finally(() => {
    const failed = checks.filter((c) => !c).length;
    console.log(`vsix: ${checks.length - failed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
  });
