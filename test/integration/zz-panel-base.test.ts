/**
 * Panel base (issue 13): a test-only panel (test/fixtures/panels: one declaration + protocol + webview entry) opens,
 * talks to its host, and — checked by the runner after this suite, which reloads the window — is restored by its
 * serializer. Named zz- so it runs last and leaves the panel open for the reload.
 */
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { hasRunner, screenshot, webviewText } from './helpers/runner.ts';

describe('Panel base (test-only Echo panel)', function () {
  this.timeout(60_000);

  it('a panel declared once opens, gets its state on the ready handshake and answers a request', async function () {
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    if (!(await vscode.commands.getCommands(true)).includes('loupe.test.showEcho')) this.skip();
    // Alone in the window, so that after the runner's reload it is the active tab (VS Code revives a background
    // webview tab only when it is shown).
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('workbench.action.closeAllGroups');
    await vscode.commands.executeCommand('loupe.test.showEcho');
    if (!hasRunner()) return;
    const text = await webviewText({ title: 'Loupe Test Echo', expect: /echo: ping/ });
    assert.match(text, /hello from the host/);
    assert.match(text, /created 1/);
    await screenshot('panel-base-echo');
  });
});
