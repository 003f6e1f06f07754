/**
 * Issue 26 in the real VS Code: the setting `loupe.store` names a PostgreSQL team store (a real server started in a
 * temp dir by the test); the password is set with Loupe: Set Team Store Password (SecretStorage, not the URL, not an
 * environment variable); the Runs view then lists the team's runs, and a run a colleague records appears without a
 * refresh (LISTEN/NOTIFY); clearing the setting returns to the SQLite file.
 */
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { openStoreAt } from '../../src/core/store/open.ts';
import { startPg, type PgServer } from '../helpers/pg.ts';
import { runner, screenshot } from './helpers/runner.ts';

describe('Team store (PostgreSQL) chosen by the loupe.store setting', function () {
  this.timeout(180_000);
  let srv: PgServer | undefined;
  let url = '';
  const config = () => vscode.workspace.getConfiguration('loupe');

  before(async () => {
    srv = await startPg({ fsync: 'off' });
    url = await srv.createDatabase('vscode_team');
    const s = await openStoreAt(url);
    await s.createRun({ id: 'team-run-1', suite: 'longda', blockId: 'NHANES_NCHS_Data_Brief_No._508', agent: 'llm', model: 'team-model', params: {}, promptHash: 'h', toolSet: 'longda', dataChecksums: {}, loupeVersion: 't', sandbox: 'off', workspace: '/nonexistent/team-run-1/workspace', status: 'finished' });
    await s.close();
  });

  after(async () => {
    await config().update('store', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('loupe.refreshRuns');
    srv?.stop();
  });

  it('the Runs view lists the team store\'s runs once the password is in SecretStorage', async () => {
    const bare = url.replace(/\?passwordEnv=.*$/, ''); // no environment variable: the password must come from SecretStorage
    assert.doesNotMatch(bare, /password/i);
    await config().update('store', bare, vscode.ConfigurationTarget.Global);
    assert.equal(await vscode.commands.executeCommand('loupe.setStorePassword', { password: process.env[srv!.passwordEnv] }), true);
    await vscode.commands.executeCommand('loupe.refreshRuns');
    await vscode.commands.executeCommand('loupe.runs.focus');
    let tree = '';
    for (let i = 0; i < 60 && !/team-model/.test(tree); i++) {
      await new Promise((r) => setTimeout(r, 500));
      tree = await runner<string>({ action: 'workbenchText', selector: '[id="workbench.parts.sidebar"]' }).catch(() => '');
    }
    assert.match(tree, /team-model/, tree.slice(0, 800));
    // A colleague records a run from another connection: the view shows it without a refresh (LISTEN/NOTIFY).
    const colleague = await openStoreAt(url);
    await colleague.createRun({ id: 'team-run-2', suite: 'longda', blockId: 'NHANES_NCHS_Data_Brief_No._508', agent: 'llm', model: 'colleague-model', params: {}, promptHash: 'h', toolSet: 'longda', dataChecksums: {}, loupeVersion: 't', sandbox: 'off', workspace: '/nonexistent/team-run-2/workspace', status: 'finished' });
    await colleague.close();
    const t0 = Date.now();
    for (let i = 0; i < 40 && !/colleague-model/.test(tree); i++) {
      await new Promise((r) => setTimeout(r, 250));
      tree = await runner<string>({ action: 'workbenchText', selector: '[id="workbench.parts.sidebar"]' }).catch(() => '');
    }
    assert.match(tree, /colleague-model/, `the colleague's run did not appear: ${tree.slice(0, 800)}`);
    console.log(`colleague's run shown after ${Date.now() - t0} ms`);
    await screenshot('team-store-runs-view');
  });
});
