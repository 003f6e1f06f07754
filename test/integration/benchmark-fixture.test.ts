/**
 * A benchmark is its folder plus one registry line (issue 12): the test-only "count rows" benchmark
 * (test/fixtures/benchmarks/count-rows) is registered in the running extension by the test-only bundle
 * (test/fixtures/panels/register.ts → out/test/panels.js, never in dist/ or the .vsix), shown in the Benchmarks view,
 * its block's item listed with the benchmark's own icon and label (issue 40: its item view lives in its folder),
 * run from the run command with a scripted model, and scored by the core. It puts the suites and models settings back
 * and waits until the Benchmarks view no longer lists the fixture suite (collapsed), so the suites after it see the
 * configured suites, whatever order the suites run in.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as vscode from 'vscode';
import '../fixtures/benchmarks/register.ts';
import { ExactOnlyJudge, MemoryJudgementStore } from '../../src/core/eval/judges/index.ts';
import { scoreStoredRun } from '../../src/core/runs/score-stored-run.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import { call, startScriptedLlm, type ScriptedLlm } from '../helpers/scripted-llm.ts';
import { hasRunner, runner, screenshot } from './helpers/runner.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ROOT = join(process.env.LOUPE_REPO_ROOT ?? process.cwd(), 'test', 'fixtures', 'benchmarks', 'count-rows');

/** Waits until the sidebar no longer shows `gone` (the Benchmarks view reloaded after the settings were put back). */
async function sidebarTextWithout(gone: RegExp, timeoutMs = 30_000): Promise<string> {
  const t0 = Date.now();
  let last = '';
  while (Date.now() - t0 < timeoutMs) {
    last = await runner<string>({ action: 'workbenchText', selector: '.part.sidebar' }, 12_000).catch(() => '');
    if (last && !gone.test(last)) return last;
    await sleep(400);
  }
  throw new Error(`sidebar still shows ${gone}; last: ${last.slice(0, 400)}`);
}

async function sidebarText(expect: RegExp, timeoutMs = 30_000): Promise<string> {
  const t0 = Date.now();
  let last = '';
  while (Date.now() - t0 < timeoutMs) {
    last = await runner<string>({ action: 'workbenchText', selector: '.part.sidebar' }, 12_000).catch((e: unknown) =>
      String(e),
    );
    if (expect.test(last)) return last;
    await sleep(400);
  }
  throw new Error(`sidebar text did not match ${expect}; last: ${last.slice(0, 400)}`);
}

describe('A test-only benchmark (count rows) in the extension', function () {
  this.timeout(180_000);
  let llm: ScriptedLlm | undefined;
  const cfg = () => vscode.workspace.getConfiguration('loupe');
  let suitesBefore: unknown;
  let modelsBefore: unknown;

  before(async function () {
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    if (!hasRunner() || !(await vscode.commands.getCommands(true)).includes('loupe.test.showEcho')) this.skip();
    suitesBefore = cfg().inspect('suites')?.workspaceValue;
    modelsBefore = cfg().inspect('models')?.workspaceValue;
    llm = await startScriptedLlm({
      scriptFor: (first) => [
        { content: 'Counting.', toolCalls: [call('submit_count', { count: first.includes('seven.csv') ? 7 : 2 })] },
      ],
    });
    await cfg().update('suites', [{ suite: 'count-rows', root: ROOT }], vscode.ConfigurationTarget.Workspace);
    await cfg().update(
      'models',
      [{ name: 'scripted-count', baseUrl: llm.baseUrl, model: 'scripted-count', temperature: 0 }],
      vscode.ConfigurationTarget.Workspace,
    );
    assert.equal(
      await vscode.commands.executeCommand('loupe.setApiKey', { profile: 'scripted-count', key: 'k' }),
      true,
    );
  });

  after(async () => {
    await llm?.close();
    if (suitesBefore !== undefined || modelsBefore !== undefined) {
      await cfg().update('suites', suitesBefore, vscode.ConfigurationTarget.Workspace);
      await cfg().update('models', modelsBefore, vscode.ConfigurationTarget.Workspace);
    }
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    if (hasRunner()) {
      await vscode.commands.executeCommand('loupe.benchmarks.focus');
      await vscode.commands.executeCommand('workbench.actions.treeView.loupe.benchmarks.collapseAll');
      await sidebarTextWithout(/count-rows · \d+\/\d+ runnable/); // the suite's row (its runs stay in the Runs view)
    }
    for (const t of vscode.window.terminals) t.dispose();
  });

  it('is listed in the Benchmarks view with its blocks, runs from the run command and is scored by the core', async () => {
    await vscode.commands.executeCommand('workbench.view.extension.loupe');
    await vscode.commands.executeCommand('loupe.benchmarks.focus');
    await sidebarText(/Count Rows/);
    // Expand the suite (the only one configured); list commands act on the focused tree, which a focus move can miss.
    let tree = '';
    for (let i = 0; i < 10 && !tree; i++) {
      await vscode.commands.executeCommand('loupe.benchmarks.focus');
      await vscode.commands.executeCommand('list.focusFirst');
      await vscode.commands.executeCommand('list.expand');
      tree = await sidebarText(/Count the rows of seven\.csv[\s\S]*Count the rows of small\.csv/, 3000).catch(() => '');
    }
    tree ||= await sidebarText(/Count the rows of seven\.csv[\s\S]*Count the rows of small\.csv/);
    assert.match(tree, /count-rows · 2\/2 runnable/);
    // Issue 40: its block's item shows with the benchmark's own item view (label and icon from its definition's
    // itemTypes, declared in its folder): expand the first block under the suite.
    let items = '';
    for (let i = 0; i < 10 && !items; i++) {
      await vscode.commands.executeCommand('loupe.benchmarks.focus');
      await vscode.commands.executeCommand('list.focusFirst');
      await vscode.commands.executeCommand('list.focusDown');
      await vscode.commands.executeCommand('list.expand');
      items = await sidebarText(/Rows of data\/seven\.csv/, 3000).catch(() => '');
    }
    if (!items) await sidebarText(/Rows of data\/seven\.csv/);
    const row = await runner<string>(
      { action: 'workbenchText', selector: '.part.sidebar .monaco-list-row:has(.codicon-symbol-number)' },
      12_000,
    );
    assert.match(row, /Rows of data\/seven\.csv/, "the item row carries the benchmark's own icon (symbol-number)");
    await screenshot('benchmarks-view-count-rows');

    const runIds = await vscode.commands.executeCommand<string[] | undefined>('loupe.runBenchmarkBlock', {
      suite: 'count-rows',
      root: ROOT,
      blockId: 'seven',
      profile: 'scripted-count',
      repeats: 1,
    });
    assert.equal(runIds?.length, 1, 'one run started');
    const store = openStore(join(cfg().get<string>('runsDirectory') ?? '', 'runs.sqlite'));
    try {
      const run = await store.getRun(runIds![0]!);
      assert.equal(run?.suite, 'count-rows');
      assert.equal(run?.status, 'finished', run?.statusReason ?? '');
      const score = await scoreStoredRun(store, run!.id, { judge: new ExactOnlyJudge(new MemoryJudgementStore()) });
      assert.equal(score.benchmark, 'count-rows');
      assert.deepEqual(score.detail, { given: 7, expected: 7 });
      assert.equal(score.summary.correct, 1);
    } finally {
      await store.close();
    }
    // The Runs view groups the run under its benchmark like any other.
    await vscode.commands.executeCommand('loupe.runs.focus');
    await sidebarText(/count-rows/);
    await screenshot('runs-view-count-rows');
  });
});
