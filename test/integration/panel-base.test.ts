/**
 * Panel base (issue 13): a test-only panel (test/fixtures/panels: one declaration + protocol + webview entry) opens,
 * talks to its host, and — checked by the runner after this suite, which reloads the window — is restored by its
 * serializer. Its annotation queue lives in a store of its own (setting `loupe.store`), so what other suites wrote does
 * not join it and it leaves nothing in theirs; when no reload follows (it is not run on its own with --grep "Panel
 * base"), it puts the settings back and closes its editors, so it may run in any place of the full run.
 */
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HumanJudge } from '../../src/core/eval/judges/index.ts';
import { judgementStoreOf } from '../../src/core/eval/store.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import { hasRunner, runner, screenshot, webviewText } from './helpers/runner.ts';

describe('Panel base (test-only Echo panel)', function () {
  this.timeout(60_000);
  // The runner reloads the window after this suite only when it runs on its own (test/integration/run.mjs).
  const reloadFollows = /panel base/i.test(process.env.LOUPE_TEST_GREP ?? '');

  after(async () => {
    if (reloadFollows) return;
    const cfg = vscode.workspace.getConfiguration('loupe');
    await cfg.update('annotator', undefined, vscode.ConfigurationTarget.Global);
    await cfg.update('store', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('workbench.action.closeAllGroups');
  });

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

  it('an annotation queue with a draft verdict is open beside it (the runner reloads the window and continues the queue)', async function () {
    this.timeout(240_000);
    if (!hasRunner()) this.skip();
    const cfg = vscode.workspace.getConfiguration('loupe');
    await cfg.update('annotator', 'restore-tester', vscode.ConfigurationTarget.Global);
    // a store of its own (a fresh file each run): exactly this suite's three claims in the queue
    const storePath = join(cfg.get<string>('runsDirectory') ?? '', `panel-base-${Date.now()}.sqlite`);
    await cfg.update('store', storePath, vscode.ConfigurationTarget.Global);
    const rs = openStore(storePath);
    try {
      const judge = new HumanJudge(judgementStoreOf(rs));
      for (const claim of ['Obesity was 40.3% overall.', 'It doubled since 1990.', 'Women 41.3%.']) {
        await judge.judge('claim-support', { claim, sources: 'Obesity prevalence was 40.3 percent overall.' });
      }
    } finally {
      rs.close();
    }
    await vscode.commands.executeCommand('workbench.action.newGroupRight');
    let queueId = await vscode.commands.executeCommand<string>('loupe.openAnnotationQueue', {
      kind: 'items',
      task: 'claim-support',
    });
    try {
      await webviewText({ title: 'Annotate', expect: /item 1 of 3/, timeoutMs: 30_000 });
    } catch {
      // after a long full run a webview's frame has stayed blank once (never ready): a fresh panel of the same queue
      await screenshot('annotation-restore-blank');
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      queueId = await vscode.commands.executeCommand<string>('loupe.openAnnotationQueue', {
        kind: 'items',
        task: 'claim-support',
      });
      try {
        await webviewText({ title: 'Annotate', expect: /item 1 of 3/, timeoutMs: 60_000 });
      } catch (e) {
        await screenshot('annotation-restore-failed');
        throw e;
      }
    }
    await runner({ action: 'clickInWebview', selector: '#queue-name', title: 'Annotate' });
    const press = async (key: string, expect: RegExp, selector: string) => {
      for (let i = 0; i < 4; i++) {
        await runner({ action: 'press', key });
        for (let w = 0; w < 6; w++) {
          if (
            expect.test(await runner<string>({ action: 'webviewText', title: 'Annotate', selector }).catch(() => ''))
          ) {
            return;
          }
          await new Promise((r) => setTimeout(r, 250));
        }
      }
      throw new Error(`pressing ${key} did not show ${expect}`);
    };
    await press('y', /Your verdict/, '#draft-summary');
    await press('Control+Enter', /Saved/, '#message');
    await press('Enter', /item 2 of 3/, '.an-task');
    await press('n', /Your verdict: Supported = Not supported/, '#draft-summary'); // a draft: chosen, not submitted
    writeFileSync(
      join(process.env.LOUPE_RUNNER_RPC_DIR ?? '', 'annotation-restore.json'),
      JSON.stringify({ storePath, queueId }),
    );
    await screenshot('annotation-before-reload');
  });
});
