import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import * as vscode from 'vscode';
import { hasRunner, openByPaletteAndCapture } from './helpers/runner.ts';

const EXTENSION_ID = 'loupe-dev.loupe';

describe('Loupe in the real VS Code', () => {
  it('runs inside a real extension host', () => {
    console.log(
      `vscode.version=${vscode.version} appName=${vscode.env.appName} remoteName=${vscode.env.remoteName} ` +
        `extension host node=${process.version} execPath=${process.execPath}`,
    );
    assert.match(vscode.version, /^1\.\d+\.\d+/);
    assert.ok(Number(process.versions.node.split('.')[0]) >= 22, 'extension host must run Node >= 22');
  });

  it('activates', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `extension ${EXTENSION_ID} not found`);
    await ext.activate();
    assert.equal(ext.isActive, true);
  });

  it('registers every contributed command, and contributes every registered loupe command', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext);
    await ext.activate();
    const contributed = (ext.packageJSON.contributes.commands as { command: string }[]).map((c) => c.command);
    const registered = (await vscode.commands.getCommands(true)).filter((c) => c.startsWith('loupe.'));
    const missing = contributed.filter((c) => !registered.includes(c));
    assert.deepEqual(missing, [], `contributed but not registered: ${missing.join(', ')}`);
    // View-scoped commands VS Code registers itself (e.g. loupe.benchmarks.focus) are not ours to contribute.
    // loupe.test.* come from the test-only panels (test/fixtures/panels), registered only under the integration runner.
    const ours = registered
      .filter((c) => !c.startsWith('loupe.test.'))
      .filter(
        (c) => !/\.(focus|resetViewLocation|toggleVisibility|removeView|open)$/.test(c) || contributed.includes(c),
      );
    const undeclared = ours.filter((c) => !contributed.includes(c));
    assert.deepEqual(undeclared, [], `registered but not in package.json: ${undeclared.join(', ')}`);
  });

  it('opens the Welcome webview from the palette and renders the environment checks', async function () {
    if (!hasRunner()) this.skip();
    const { text, png } = await openByPaletteAndCapture('Loupe: Show Welcome', 'welcome', /Python with pandas/);
    assert.match(text, /Loupe/);
    assert.match(text, /Node ≥ 22/);
    assert.match(text, /SQLite with FTS5/);
    assert.ok(existsSync(png) && statSync(png).size > 10_000, `screenshot ${png} missing or empty`);
  });
});
