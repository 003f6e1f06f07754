/**
 * Issue 27 in the real VS Code: a sweep's units (runs with a sweep id in the team store) sit under their sweep in the
 * Runs view — sweep → model → block → run — with done / running / failed / queued per sweep and per model.
 */
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { openStoreAt } from '../../src/core/store/open.ts';
import type { RunStatus } from '../../src/core/store/records.ts';
import { startPg, type PgServer } from '../helpers/pg.ts';
import { runner, screenshot } from './helpers/runner.ts';

describe('Sweeps in the Runs view', function () {
  this.timeout(180_000);
  let srv: PgServer | undefined;
  const config = () => vscode.workspace.getConfiguration('loupe');

  before(async () => {
    srv = await startPg({ fsync: 'off' });
    const url = await srv.createDatabase('vscode_sweep');
    const s = await openStoreAt(url);
    const units: [string, string, RunStatus][] = [
      ['model-alpha', 'NHANES_NCHS_Data_Brief_No._508', 'finished'],
      ['model-alpha', 'NHANES_NCHS_Data_Brief_No._508', 'running'],
      ['model-alpha', 'NHIS_Early_Release', 'pending'],
      ['model-beta', 'NHANES_NCHS_Data_Brief_No._508', 'finished'],
      ['model-beta', 'NHANES_NCHS_Data_Brief_No._508', 'failed'],
      ['model-beta', 'NHIS_Early_Release', 'pending'],
    ];
    for (const [i, [model, blockId, status]] of units.entries()) {
      await s.createRun({
        id: `sweep-int-u000${i + 1}`,
        suite: 'longda',
        blockId,
        agent: 'llm',
        model,
        params: { repeat: 1 },
        promptHash: 'h',
        toolSet: 'longda',
        dataChecksums: {},
        loupeVersion: 't',
        sandbox: 'bubblewrap',
        workspace: `/nonexistent/u${i}/workspace`,
        status,
        sweepId: 'sweep-int',
      });
    }
    await s.updateRun('sweep-int-u0005', { statusReason: 'the model replied 5 times in a row without a tool call' });
    await s.close();
    await config().update('store', url.replace(/\?passwordEnv=.*$/, ''), vscode.ConfigurationTarget.Global);
    assert.equal(
      await vscode.commands.executeCommand('loupe.setStorePassword', { password: process.env[srv.passwordEnv] }),
      true,
    );
  });

  after(async () => {
    await config().update('store', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('loupe.refreshRuns');
    srv?.stop();
  });

  it('groups the units under their sweep with done / running / failed / queued per model', async () => {
    await vscode.commands.executeCommand('loupe.refreshRuns');
    await vscode.commands.executeCommand('loupe.runs.focus');
    let tree = '';
    for (let i = 0; i < 60 && !/sweep sweep-int/.test(tree); i++) {
      await new Promise((r) => setTimeout(r, 500));
      tree = await runner<string>({ action: 'workbenchText', selector: '[id="workbench.parts.sidebar"]' }).catch(
        () => '',
      );
    }
    assert.match(tree, /sweep sweep-int/, tree.slice(0, 800));
    assert.match(tree, /2\/6 done · 1 running · 1 failed · 2 queued/, tree.slice(0, 800));
    assert.match(tree, /model-alpha/);
    assert.match(tree, /1\/3 done · 1 running · 0 failed · 1 queued/);
    assert.match(tree, /1\/3 done · 0 running · 1 failed · 1 queued/);
    await screenshot('sweep-runs-view');
  });
});
