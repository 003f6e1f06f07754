/**
 * Issue 45 in the real VS Code: Import Inspect Logs… on the shared Inspect logs (a store of its own) → the Runs view
 * shows them grouped by task (inspect:<task>); importing again adds nothing. Screenshot: inspect-import-runs-view.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { hasRunner, runner, screenshot } from './helpers/runner.ts';

const shared = () => process.env.LOUPE_SHARED ?? join(process.env.LOUPE_REPO_ROOT ?? process.cwd(), '..', 'shared');

describe('Import Inspect Logs', function () {
  this.timeout(300_000);
  const cfg = () => vscode.workspace.getConfiguration('loupe');
  let before: unknown;

  it('imports the shared logs into the Runs view, grouped by task; a second import adds nothing', async function () {
    if (!hasRunner()) this.skip();
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    before = cfg().inspect('store')?.globalValue;
    const dir = mkdtempSync(join(tmpdir(), 'loupe-inspect-int-'));
    await cfg().update('store', join(dir, 'runs.sqlite'), vscode.ConfigurationTarget.Global);
    try {
      const logs = join(shared(), 'data', 'inspect-logs');
      const first = await vscode.commands.executeCommand<
        Array<{ task: string; imported: string[]; skipped: string[] }>
      >('loupe.importInspectLogs', [logs]);
      const n = first.reduce((a, r) => a + r.imported.length, 0);
      assert.ok(n >= 9, `imported ${n}`);
      const second = await vscode.commands.executeCommand<Array<{ imported: string[]; skipped: string[] }>>(
        'loupe.importInspectLogs',
        [logs],
      );
      assert.equal(
        second.reduce((a, r) => a + r.imported.length, 0),
        0,
      );
      await vscode.commands.executeCommand('loupe.runs.focus');
      await vscode.commands.executeCommand('workbench.actions.treeView.loupe.benchmarks.collapseAll');
      await vscode.commands.executeCommand('loupe.runs.focus');
      const task = first.find((r) => r.imported.length)!.task;
      let tree = '';
      for (let i = 0; i < 60 && !tree.includes(`inspect:${task}`); i++) {
        await new Promise((r) => setTimeout(r, 500));
        tree = await runner<string>({ action: 'workbenchText', selector: '[id="workbench.parts.sidebar"]' }).catch(
          () => '',
        );
      }
      assert.ok(tree.includes(`inspect:${task}`), tree.slice(0, 800));
      await screenshot('inspect-import-runs-view');
    } finally {
      await cfg().update('store', before, vscode.ConfigurationTarget.Global);
    }
  });
});
