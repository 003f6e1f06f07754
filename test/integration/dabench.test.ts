/**
 * Issue 44: InfiAgent-DABench, a benchmark that is only a manifest (benchmarks/dabench/loupe-benchmark.yaml), in the
 * real VS Code: listed in the Benchmarks view (blocks per table file), a block run with the reference agent and with a
 * scripted model through "Run Benchmark Block", scored, shown in the Results view, the two runs compared side by side,
 * the scripted run's failures opened for tagging; and a broken manifest folder in `loupe.suites` ({root} alone) shows
 * its file, line and field as that suite's error. Puts the settings back.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as vscode from 'vscode';
import { ExactOnlyJudge, MemoryJudgementStore } from '../../src/core/eval/judges/index.ts';
import { scoreStoredRun } from '../../src/core/runs/score-stored-run.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import { call, startScriptedLlm, type ScriptedLlm } from '../helpers/scripted-llm.ts';
import { hasRunner, runner, screenshot, webviewText } from './helpers/runner.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ROOT = join(
  resolve(process.env.LOUPE_SHARED ?? join(process.env.LOUPE_REPO_ROOT ?? process.cwd(), '..', 'shared')),
  'data',
  'dabench',
);

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
  throw new Error(`sidebar text did not match ${expect}; last: ${last.slice(0, 600)}`);
}

describe('InfiAgent-DABench (a manifest benchmark) in the extension', function () {
  this.timeout(300_000);
  let llm: ScriptedLlm | undefined;
  const cfg = () => vscode.workspace.getConfiguration('loupe');
  let suitesBefore: unknown;
  let modelsBefore: unknown;
  let runsDirBefore: unknown;
  const bad = mkdtempSync(join(tmpdir(), 'loupe-bad-manifest-'));
  const runIds: string[] = [];

  before(async function () {
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    if (!hasRunner()) this.skip();
    suitesBefore = cfg().inspect('suites')?.workspaceValue;
    modelsBefore = cfg().inspect('models')?.workspaceValue;
    // a store of its own: its runs, failure queue and scores stay out of the suites that read the shared store
    runsDirBefore = cfg().inspect('runsDirectory')?.workspaceValue;
    await cfg().update(
      'runsDirectory',
      mkdtempSync(join(tmpdir(), 'loupe-dabench-store-')),
      vscode.ConfigurationTarget.Workspace,
    );
    mkdirSync(join(bad, 'mine'));
    writeFileSync(
      join(bad, 'mine', 'loupe-benchmark.yaml'),
      'kind: mine\ntitle: Mine\nitems: { file: q.jsonl, id: id, instruction: question }\ngold: { file: q.jsonl, id: id, answer: answer }\nscoring:\n  scorer: fuzzy\n',
    );
    // the scripted model answers test_ave.csv: q0 right, q5 wrong, q6 half right, q7 and q8 not at all
    llm = await startScriptedLlm({
      scriptFor: () => [
        {
          content: 'Computing.',
          toolCalls: [
            call('python', {
              code: 'import pandas as pd\ndf = pd.read_csv("data/test_ave.csv")\nprint(round(df["Fare"].mean(), 2))',
            }),
          ],
        },
        {
          content: 'Answering.',
          toolCalls: [
            call('answer', { id: '0', response: '@mean_fare[34.65]' }),
            call('answer', { id: '5', response: '@correlation_coefficient[0.5]' }),
            call('answer', {
              id: '6',
              response: '@mean_fare_child[31.09] @mean_fare_teenager[31.98] @mean_fare_adult[1] @mean_fare_elderly[2]',
            }),
          ],
        },
        { content: 'Done.', toolCalls: [call('finish', {})] },
      ],
    });
    await cfg().update(
      'suites',
      [{ suite: 'dabench', root: ROOT }, { root: join(bad, 'mine') }],
      vscode.ConfigurationTarget.Workspace,
    );
    await cfg().update(
      'models',
      [{ name: 'scripted-dabench', baseUrl: llm.baseUrl, model: 'scripted-dabench', temperature: 0 }],
      vscode.ConfigurationTarget.Workspace,
    );
    assert.equal(
      await vscode.commands.executeCommand('loupe.setApiKey', { profile: 'scripted-dabench', key: 'k' }),
      true,
    );
  });

  after(async () => {
    await llm?.close();
    await cfg().update('runsDirectory', runsDirBefore, vscode.ConfigurationTarget.Workspace);
    if (suitesBefore !== undefined || modelsBefore !== undefined) {
      await cfg().update('suites', suitesBefore, vscode.ConfigurationTarget.Workspace);
      await cfg().update('models', modelsBefore, vscode.ConfigurationTarget.Workspace);
    }
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    for (const t of vscode.window.terminals) t.dispose();
  });

  it("lists the table-file blocks, and names the broken manifest's file, line and field", async () => {
    await vscode.commands.executeCommand('workbench.view.extension.loupe');
    await vscode.commands.executeCommand('loupe.benchmarks.focus');
    const text = await sidebarText(/InfiAgent-DABench[\s\S]*52\/52 runnable/, 60_000);
    assert.match(
      text,
      /benchmark manifest: mine[\s\S]*failed to load: \S*loupe-benchmark\.yaml:6: invalid benchmark manifest: \S*loupe-benchmark\.yaml:6: scoring\.scorer: must be one of "exact"/,
    );
    await screenshot('dabench-benchmarks-view');
  });

  it('runs a block with the reference agent and a scripted model, scores both, shows Results, review and failures', async () => {
    for (const profile of ['reference', 'scripted-dabench']) {
      const ids = await vscode.commands.executeCommand<string[] | undefined>('loupe.runBenchmarkBlock', {
        suite: 'dabench',
        root: ROOT,
        blockId: 'test_ave.csv',
        profile,
        repeats: 1,
      });
      assert.equal(ids?.length, 1, `one ${profile} run started`);
      runIds.push(ids![0]!);
    }
    const store = openStore(join(cfg().get<string>('runsDirectory') ?? '', 'runs.sqlite'));
    try {
      const scores = [];
      for (const id of runIds) {
        const run = await store.getRun(id);
        assert.equal(run?.status, 'finished', run?.statusReason ?? '');
        scores.push(await scoreStoredRun(store, id, { judge: new ExactOnlyJudge(new MemoryJudgementStore()) }));
      }
      assert.equal(scores[0]!.summary.accuracy_by_question, 0.6); // reference: q7, q8 miss (benchmarks/dabench/reference/README.md)
      assert.equal(scores[1]!.summary.accuracy_by_question, 0.3333); // scripted: 1 of the 3 answered right
      assert.equal(scores[1]!.summary.accuracy_proportional_by_sub_question, 0.5);
    } finally {
      await store.close();
    }
    await vscode.commands.executeCommand('loupe.showResults');
    const results = await webviewText({ title: 'Loupe Results', expect: /InfiAgent-DABench/, timeoutMs: 60_000 });
    assert.match(results, /accuracy_by_question|Accuracy by Question/);
    await sleep(800);
    await screenshot('dabench-results');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const queueId = await vscode.commands.executeCommand<string>('loupe.compareRuns', { run: { id: runIds[0] } }, [
      { run: { id: runIds[0] } },
      { run: { id: runIds[1] } },
    ]);
    assert.ok(queueId, 'a review queue was opened');
    const review = await webviewText({ title: 'Review:', expect: /Output A[\s\S]*Output B/, timeoutMs: 60_000 });
    assert.match(review, /Question 0[\s\S]*@mean_fare\[34\.65\]/);
    await sleep(800);
    await screenshot('dabench-review');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('loupe.tagFailures', runIds[1]);
    const failures = await webviewText({ title: 'Failure Analysis', expect: /Steps \(\d+\)/, timeoutMs: 60_000 });
    // the run's steps and its responses, one section per question, ready to be tagged
    assert.match(
      failures,
      /Steps \(3\)[\s\S]*answer \{"id":"0"[\s\S]*Question 0[\s\S]*Question 5[\s\S]*Question 6[\s\S]*@mean_fare\[34\.65\]/,
    );
    await sleep(800);
    await screenshot('dabench-failures');
  });
});
