/**
 * BLADE ground truth in the real VS Code (issue 17): the ground truth of `affairs` opens behind an explicit reveal,
 * its transform DAG is drawn, a node shows its code; a version saved in the store (an added transform) is picked and
 * shows the extra node. Screenshots: ground-truth-hidden, ground-truth-affairs, ground-truth-version.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { bladeGtStoreOf, editGtCsv } from '../../src/core/benchmarks/blade/gt-versions.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import { hasRunner, runner, screenshot, webviewText } from './helpers/runner.ts';

const shared = () => process.env.LOUPE_SHARED ?? join(process.env.LOUPE_REPO_ROOT ?? process.cwd(), '..', 'shared');
const TITLE = 'Ground truth';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('BLADE ground truth view', function () {
  this.timeout(300_000);
  const cfg = () => vscode.workspace.getConfiguration('loupe');
  let before_: unknown;
  const root = () => join(shared(), 'data', 'blade', 'datasets');

  before(async function () {
    if (!hasRunner()) this.skip();
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    before_ = cfg().inspect('suites')?.workspaceValue;
    await cfg().update('suites', [{ suite: 'blade', root: root() }], vscode.ConfigurationTarget.Workspace);
  });
  after(async () => {
    await cfg().update('suites', before_, vscode.ConfigurationTarget.Workspace);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('affairs: hidden until revealed, the DAG drawn, a node shows its code, a stored version is picked', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    assert.equal(
      await vscode.commands.executeCommand('loupe.showGroundTruth', {
        suite: 'blade',
        root: root(),
        blockId: 'affairs',
      }),
      'affairs',
    );
    const hidden = await webviewText({ title: TITLE, expect: /Show the ground truth/, timeoutMs: 60_000 });
    assert.match(hidden, /expert answers/);
    assert.doesNotMatch(hidden, /Transforms \(/, 'nothing shown before the reveal');
    await screenshot('ground-truth-hidden');
    await runner({ action: 'clickInWebview', title: TITLE, selector: '#reveal' });
    const text = await webviewText({ title: TITLE, expect: /Transforms \(\d+\)/, timeoutMs: 60_000 });
    assert.match(text, /Conceptual variables \(\d+\)/);
    assert.match(text, /Models \(\d+\)/);
    const nodes = Number(/Transforms \((\d+)\)/.exec(text)![1]);
    assert.ok(nodes > 0);
    await runner({ action: 'clickInWebview', title: TITLE, selector: '#dag .node:not(.root)' });
    const detail = await webviewText({ title: TITLE, expect: /Code/, timeoutMs: 20_000 });
    assert.match(
      await runner<string>({ action: 'webviewText', title: TITLE, selector: '#detail' }),
      /Verb[\s\S]*Columns[\s\S]*Code[\s\S]*df/,
    );
    void detail;
    await sleep(500);
    await screenshot('ground-truth-affairs');
    // a version with one more transform, saved in the store the extension uses, then picked in the view
    const storePath = join(cfg().get<string>('runsDirectory') ?? '', 'runs.sqlite');
    const shippedCsv = readFileSync(join(root(), 'affairs', 'annotations.csv'), 'utf8');
    const st = openStore(storePath);
    try {
      const edited = editGtCsv(shippedCsv, (rows) =>
        rows.push({
          spec_id: 'loupe_it_extra',
          transform_spec_json: JSON.stringify({
            spec_name: 'loupe_extra_step',
            specification: 'an added step',
            trans_verb: ['derive'],
            code: "df['x2'] = df['age'] * 2",
            rationale: 'test',
            conditions: '',
            input_cols_to_output_col_mapping: [[['age'], 'x2']],
            branches: [{ dependencies: ['ROOT_SPEC_ID'], condition: '' }],
          }),
        }),
      );
      await bladeGtStoreOf(st).save({
        dataset: 'affairs',
        csv: edited,
        author: 'expert-gt',
        note: 'one more step',
        parent: 0,
        shippedCsv,
      });
    } finally {
      await st.close();
    }
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('loupe.showGroundTruth', { suite: 'blade', root: root(), blockId: 'affairs' });
    await webviewText({ title: TITLE, expect: /Show the ground truth/, timeoutMs: 60_000 });
    await runner({ action: 'press', key: 'Enter' });
    let v = '';
    for (let i = 0; i < 20 && !/Transforms \(/.test(v); i++) {
      v = await runner<string>({ action: 'webviewText', title: TITLE }).catch(() => '');
      if (!/Transforms \(/.test(v)) {
        await runner({ action: 'clickInWebview', title: TITLE, selector: '#reveal' }).catch(() => undefined);
        await sleep(500);
      }
    }
    assert.match(v, new RegExp(`Transforms \\(${nodes + 1}\\)`), 'the newest version (latest) has one more transform');
    assert.match(
      await runner<string>({ action: 'webviewText', title: TITLE, selector: '#version' }),
      /v1 · expert-gt .*\+1 −0 ~0 · one more step/,
    );
    await sleep(500);
    await screenshot('ground-truth-version');
  });
});
