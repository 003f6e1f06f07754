#!/usr/bin/env node
// Runs the same integration suite through @vscode/test-electron (downloads desktop VS Code; needs internet and a
// display, e.g. xvfb-run). Tests that need the chromium runner (screenshots, palette typing, webview text) skip
// themselves there; everything else runs.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runTests } from '@vscode/test-electron';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const version = process.env.LOUPE_VSCODE_VERSION ?? 'stable';
try {
  await runTests({
    version,
    extensionDevelopmentPath: ROOT,
    extensionTestsPath: join(ROOT, 'out', 'test', 'integration', 'index.js'),
    launchArgs: ['--disable-extensions', '--disable-workspace-trust'],
    extensionTestsEnv: { LOUPE_SHARED: resolve(process.env.LOUPE_SHARED ?? join(ROOT, '..', 'shared')) },
  });
} catch (e) {
  console.error('integration tests (electron) failed:', e);
  process.exit(1);
}
