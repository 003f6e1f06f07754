/**
 * The Benchmarks view, Documentation Search and Results panels in the real VS Code, on real data from $LOUPE_SHARED
 * (`loupe.suites` in test/integration/workspace/.vscode/settings.json). Asserts on what is rendered inside the
 * workbench and the webview frames, and saves screenshots under test-results/screenshots/.
 */
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { StepRecord } from '../../src/core/agent/types.ts';
import { loadLongdaGroundTruth, scoreLongda } from '../../src/core/benchmarks/longda/eval.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import { hasRunner, runner, screenshot, webviewText } from './helpers/runner.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function shared(): string {
  const s = process.env.LOUPE_SHARED;
  if (!s) throw new Error('LOUPE_SHARED is not set');
  return s;
}

async function activate(): Promise<void> {
  const ext = vscode.extensions.getExtension('loupe-dev.loupe');
  assert.ok(ext);
  await ext.activate();
}

/** Polls a workbench element's text until it matches. */
async function workbenchText(selector: string, expect: RegExp, timeoutMs = 30_000): Promise<string> {
  const t0 = Date.now();
  let last = '';
  while (Date.now() - t0 < timeoutMs) {
    try {
      last = await runner<string>({ action: 'workbenchText', selector }, 12_000);
      if (expect.test(last)) return last;
    } catch (e) {
      last = `(${e instanceof Error ? e.message : String(e)})`;
    }
    await sleep(400);
  }
  throw new Error(`workbench text of ${selector} did not match ${expect}; last: ${last.slice(0, 400)}`);
}

function pngOk(p: string): void {
  assert.ok(existsSync(p) && statSync(p).size > 10_000, `screenshot ${p} missing or empty`);
}

describe('Benchmarks view, Documentation Search and Results', function () {
  this.timeout(240_000);

  before(async function () {
    if (!hasRunner()) this.skip();
    await activate();
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('shows the configured suites with blocks, runnable and problem icons', async () => {
    await vscode.commands.executeCommand('workbench.view.extension.loupe');
    await vscode.commands.executeCommand('loupe.benchmarks.focus');
    await vscode.commands.executeCommand('workbench.actions.treeView.loupe.benchmarks.collapseAll'); // an earlier suite may have expanded one
    const root = '.part.sidebar';
    const suites = await workbenchText(root, /LongDA[\s\S]*BLADE/);
    assert.match(suites, /longda · \d+\/\d+ runnable/);
    // A wider sidebar so block titles and their "not runnable" descriptions are readable in the screenshots.
    // (The size commands act on the focused part: shrinking the editor area widens the sidebar.)
    await vscode.commands.executeCommand('workbench.action.focusActiveEditorGroup');
    for (let i = 0; i < 4; i++) await vscode.commands.executeCommand('workbench.action.decreaseViewWidth');
    await vscode.commands.executeCommand('loupe.benchmarks.focus');
    // Expand the BLADE suite (last row once every suite is collapsed: an earlier suite may have expanded one):
    // datasets without data.csv show as problems.
    await vscode.commands.executeCommand('workbench.actions.treeView.loupe.benchmarks.collapseAll');
    await vscode.commands.executeCommand('loupe.benchmarks.focus');
    await vscode.commands.executeCommand('list.focusLast');
    await vscode.commands.executeCommand('list.expand');
    const blade = await workbenchText(root, /soccer/);
    assert.match(blade, /conversation[^\n]*not runnable/);
    pngOk(await screenshot('benchmarks-view-blade'));
    // Then the LongDA suite (first row).
    await vscode.commands.executeCommand('workbench.actions.treeView.loupe.benchmarks.collapseAll');
    await vscode.commands.executeCommand('loupe.benchmarks.focus');
    await vscode.commands.executeCommand('list.focusFirst');
    await vscode.commands.executeCommand('list.expand');
    // Blocks in file order: the first LongDA surveys (docs only in the mirror) are listed as not runnable.
    const text = await workbenchText(root, /ASFIN: Annual Survey of State Government Finances/);
    assert.match(text, /\d+ items/);
    assert.match(text, /not runnable/, 'blocks without data show as not runnable');
    console.log(`benchmarks view:\n${text.slice(0, 1500)}`);
    pngOk(await screenshot('benchmarks-view'));
    await vscode.commands.executeCommand('workbench.action.focusActiveEditorGroup');
    for (let i = 0; i < 4; i++) await vscode.commands.executeCommand('workbench.action.increaseViewWidth');
  });

  it('shows a welcome message with a settings button when no suite is configured, and refreshes on change', async () => {
    const cfg = vscode.workspace.getConfiguration('loupe');
    const before = cfg.inspect<unknown[]>('suites')?.workspaceValue;
    try {
      await cfg.update('suites', [], vscode.ConfigurationTarget.Workspace);
      const text = await workbenchText('.part.sidebar', /No benchmark suites are configured yet/);
      assert.match(text, /Configure Suites/);
      pngOk(await screenshot('benchmarks-view-welcome'));
    } finally {
      await cfg.update('suites', before, vscode.ConfigurationTarget.Workspace);
    }
    await workbenchText('.part.sidebar', /LongDA/);
  });

  it('creates a task workspace for a block without hidden files', async () => {
    const root = join(shared(), 'data', 'longda', 'benchmark');
    let folder: string | undefined;
    try {
      folder = await vscode.commands.executeCommand<string | undefined>('loupe.openTaskAsWorkspace', {
        suite: 'longda',
        root,
        blockId: 'NHANES_NCHS_Data_Brief_No._508',
        open: false,
      });
    } catch (e) {
      folder = undefined;
      console.log(`openTaskAsWorkspace: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (folder === undefined) {
      // The command reports failures as an error message rather than throwing; it returns the folder on success.
      assert.fail('Open Task as Workspace returned no folder (see the Loupe log)');
    }
    assert.ok(existsSync(join(folder, 'TASK.md')), 'TASK.md written');
    assert.ok(!existsSync(join(folder, 'benchmark.csv')), 'no ground truth in the workspace');
  });

  it('searches documentation from the palette and renders a PDF page with pdf.js', async () => {
    await runner({ action: 'palette', title: 'Loupe: Search Documentation' });
    // The quick pick lists suites and blocks: choose the Data Brief 508 block.
    await sleep(1500);
    await runner({ action: 'type', text: 'NCHS Data Brief No. 508' });
    await sleep(800);
    await runner({ action: 'press', key: 'Enter' });
    const ready = await webviewText({ title: 'Docs:', expect: /Index ready: \d+ files/, timeoutMs: 150_000 });
    assert.match(ready, /Documentation Search/);
    await runner({ action: 'clickInWebview', selector: '#query', title: 'Docs:' });
    await runner({ action: 'type', text: 'BMXBMI body mass index' });
    await runner({ action: 'press', key: 'Enter' });
    const results = await webviewText({
      title: 'Docs:',
      expect: /docs\/Examination\/\s*BMX_L\.pdf[\s\S]*Page \d+/,
      timeoutMs: 30_000,
    });
    assert.match(results, /\d+ results · BM25/);
    assert.match(results, /BMXBMI/);
    pngOk(await screenshot('docsearch-results'));
    // Keyboard: from the search box ↓ enters the list, ↓ again selects the second hit and shows its unit,
    // ↑ goes back, Enter on a PDF hit renders its page. (Reads pass no tab title: clicking the tab would take the
    // keyboard focus away from the webview.)
    const selectedUnit = () =>
      runner<string>({ action: 'webviewText', selector: '#results .hit[aria-selected="true"] .hit-unit' });
    const detailUnit = () => runner<string>({ action: 'webviewText', selector: '#detail-unit' });
    await runner({ action: 'clickInWebview', selector: '#query' });
    const first = await selectedUnit();
    await runner({ action: 'press', key: 'ArrowDown' });
    await sleep(300);
    await runner({ action: 'press', key: 'ArrowDown' });
    await sleep(700);
    const second = await selectedUnit();
    const hits = await runner<string>({ action: 'webviewText', title: 'Docs:', selector: '#hit-1 .hit-unit' });
    assert.equal(second.trim(), hits.trim(), 'ArrowDown selected the second hit');
    assert.equal((await detailUnit()).trim(), second.trim(), "the detail pane shows the selected hit's unit");
    await runner({ action: 'clickInWebview', selector: '#hit-1' }); // the list keeps the keyboard focus after a click
    await runner({ action: 'press', key: 'ArrowUp' });
    await sleep(500);
    assert.equal((await selectedUnit()).trim(), first.trim());
    await runner({ action: 'press', key: 'Enter' });
    const page = await webviewText({ title: 'Docs:', expect: /Page \d+ of \d+/, timeoutMs: 60_000 });
    assert.match(page, /match(es)? marked/);
    await sleep(800);
    pngOk(await screenshot('docsearch-pdf-page'));
  });

  it("opens on a run's own search and lists the run's searches for replay (the timeline's hook)", async () => {
    const dir = vscode.workspace.getConfiguration('loupe').get<string>('runsDirectory');
    assert.ok(dir);
    const store = openStore(join(dir, 'runs.sqlite'));
    const id = 'ui-docsearch-run';
    const now = new Date().toISOString();
    if (!(await store.getRun(id))) {
      await store.createRun({
        id,
        suite: 'longda',
        blockId: 'NHANES_NCHS_Data_Brief_No._508',
        agent: 'llm',
        model: 'ui-model',
        params: {},
        promptHash: 'h',
        toolSet: 'longda',
        dataChecksums: {},
        loupeVersion: '0.1.0',
        sandbox: 'off',
        workspace: dir,
      });
      const calls = [
        { name: 'search_doc', args: { keyword: 'WTMEC2YR', doc_path: 'docs/Demographics/DEMO_L.pdf' } },
        { name: 'retriever', args: { query: 'obesity prevalence adults aged 20 and over' } },
      ];
      for (const [i, c] of calls.entries()) {
        await store.commitStep({
          runId: id,
          index: i,
          startedAt: now,
          endedAt: now,
          latencyMs: 1,
          toolMs: 1,
          assistant: { role: 'assistant', content: '', tool_calls: [] },
          toolCalls: [
            {
              id: `c${i}`,
              name: c.name,
              argumentsText: JSON.stringify(c.args),
              observation: '',
              isError: false,
              truncated: false,
              durationMs: 1,
            },
          ],
          extraMessages: [],
          usage: { input: 1, output: 1, cached: 0 },
          costUsd: null,
          finishReason: 'tool_calls',
        });
      }
    }
    store.close();
    await vscode.commands.executeCommand('loupe.searchDocumentation', {
      runId: id,
      query: 'WTMEC2YR',
      mode: 'keyword',
      file: 'docs/Demographics/DEMO_L.pdf',
    });
    const text = await webviewText({
      title: 'Docs:',
      expect: /Searches[\s\S]*step 2 · retriever[\s\S]*docs\/Demographics\/\s*DEMO_L\.pdf[\s\S]*Page \d+/,
      timeoutMs: 120_000,
    });
    assert.match(text, /step 1 · search_doc\s+WTMEC2YR/);
    assert.match(text, /results? · Keyword/);
    // Replaying the second search switches to LongTA mode with its query.
    await runner({ action: 'clickInWebview', selector: 'a[data-history="1"]' });
    await webviewText({ expect: /results? · LongTA/, timeoutMs: 30_000 });
    pngOk(await screenshot('docsearch-run-searches'));
  });

  it('shows scored runs per model × block and opens the run behind a number', async () => {
    const dir = vscode.workspace.getConfiguration('loupe').get<string>('runsDirectory');
    assert.ok(dir, 'loupe.runsDirectory is set by the harness');
    const store = openStore(join(dir, 'runs.sqlite'));
    const gt = loadLongdaGroundTruth(join(shared(), 'data', 'longda', 'benchmark', 'benchmark.csv'));
    const block = gt.filter((q) => q.source === 'NCHS Data Brief No. 508');
    const blockId = 'NHANES_NCHS_Data_Brief_No._508';
    const now = new Date().toISOString();
    const step = (runId: string, index: number, names: string[], input: number, output: number): StepRecord => ({
      runId,
      index,
      startedAt: now,
      endedAt: now,
      latencyMs: 1,
      toolMs: 1,
      assistant: { role: 'assistant', content: '', tool_calls: [] },
      toolCalls: names.map((name, i) => ({
        id: `${index}-${i}`,
        name,
        argumentsText: '{}',
        observation: '',
        isError: false,
        truncated: false,
        durationMs: 1,
      })),
      extraMessages: [],
      usage: { input, output, cached: 0 },
      costUsd: null,
      finishReason: 'tool_calls',
    });
    // Two answer sets scored by the real LongDA scorer: the ground truth itself, and one that answers 3 of 9.
    const sets: [string, string, Record<string, string>][] = [
      ['ui-results-a', 'ui-model-a', Object.fromEntries(block.map((q) => [q.longdaId, q.answerText]))],
      ['ui-results-b', 'ui-model-b', Object.fromEntries(block.slice(0, 3).map((q) => [q.longdaId, q.answerText]))],
    ];
    for (const [id, model, answers] of sets) {
      if (!(await store.getRun(id))) {
        await store.createRun({
          id,
          suite: 'longda',
          blockId,
          agent: 'llm',
          model,
          params: {},
          promptHash: 'h',
          toolSet: 'longda',
          dataChecksums: {},
          loupeVersion: '0.1.0',
          sandbox: 'off',
          workspace: dir,
        });
        await store.commitStep(step(id, 0, ['search_doc', 'retriever'], 12_000, 400));
        await store.commitStep(step(id, 1, ['read_doc', 'search_doc'], 20_000, 600));
        await store.commitStep(step(id, 2, ['answer', 'answer', 'save_code'], 26_000, 900));
        // model-b wanders: more steps and tokens for fewer right answers.
        if (model === 'ui-model-b') {
          for (let i = 3; i < 9; i++) {
            await store.commitStep(
              step(id, i, i % 2 ? ['retriever'] : ['read_doc', 'search_doc'], 30_000 + i * 4000, 700),
            );
          }
        }
      }
      const s = scoreLongda(block, answers);
      await store.scores.save({
        runId: id,
        benchmark: 'longda',
        judgeId: 'none',
        options: s.options as unknown as Record<string, unknown>,
        summary: { queries: s.n, coverage: s.coverage, match: s.match },
        detail: {},
        pending: 0,
        scoredAt: now,
      });
    }
    store.close();

    const { text } = await (async () => {
      await runner({ action: 'palette', title: 'Loupe: Show Results' });
      return {
        text: await webviewText({ title: 'Loupe Results', expect: /ui-model-b[\s\S]*33\.3%/, timeoutMs: 30_000 }),
      };
    })();
    assert.match(text, /LongDA/);
    assert.match(text, /ui-model-a[\s\S]*100\.0%/);
    assert.match(text, /list_scoring=partial/);
    await webviewText({ title: 'Loupe Results', expect: /match vs total tokens[\s\S]*Tool usage/ });
    await sleep(1500); // charts render asynchronously
    pngOk(await screenshot('results-view'));
    // Scroll to the tool-usage heatmaps for a second screenshot.
    await runner({ action: 'clickInWebview', selector: 'header h1', title: 'Loupe Results' });
    await runner({ action: 'press', key: 'End' });
    await sleep(600);
    pngOk(await screenshot('results-view-heatmaps'));
    // A number opens the run behind it (its timeline).
    await runner({ action: 'clickInWebview', selector: 'a.metric[data-runs="ui-results-b"]', title: 'Loupe Results' });
    const t0 = Date.now();
    let opened = false;
    while (!opened && Date.now() - t0 < 20_000) {
      opened = vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => /Timeline/.test(t.label)));
      if (!opened) await sleep(300);
    }
    assert.ok(opened, "clicking a number opened the run's timeline");
  });

  it('shows BLADE precision, coverage and F1 with bootstrap CIs per decision type, from real scoring', async function () {
    this.timeout(180_000);
    const dir = vscode.workspace.getConfiguration('loupe').get<string>('runsDirectory');
    assert.ok(dir);
    const { startBladePython } = await import('../../src/core/benchmarks/blade/eval/python.ts');
    const { loadBladeGroundTruth, scoreBladeRun } = await import('../../src/core/benchmarks/blade/eval/score.ts');
    const { referencePath, verifiedReferencePath } =
      await import('../../src/core/benchmarks/blade/eval/reference-path.ts');
    const store = openStore(join(dir, 'runs.sqlite'));
    const py = await startBladePython();
    try {
      // Two "agents" that submit ground-truth analyses (BLADE's own reference paths), scored by the real BLADE
      // scorer: the verified path (transforms, cvars and model all from the GT) and the single-path one.
      for (const ds of ['affairs', 'reading', 'caschools']) {
        const gt = await loadBladeGroundTruth(join(shared(), 'data', 'blade', 'datasets', ds), py);
        const verified = (await verifiedReferencePath(gt, py)).analysis;
        const single = referencePath(gt.annotations, { scope: 'single-path' }).analysis;
        // `ui-blade-mixed` has two runs per dataset (one of each), so its bootstrap CIs have width.
        const analyses = [
          ['ui-blade-verified', 'a', verified],
          ['ui-blade-single-path', 'a', single],
          ['ui-blade-mixed', 'a', verified],
          ['ui-blade-mixed', 'b', single],
        ] as const;
        for (const [model, rep, analysis] of analyses) {
          const id = `${model}-${ds}-${rep}`;
          const score = await scoreBladeRun({ runId: id, analysis }, gt, { python: py });
          if (!(await store.getRun(id))) {
            await store.createRun({
              id,
              suite: 'blade',
              blockId: ds,
              agent: 'reference',
              model,
              params: {},
              promptHash: 'h',
              toolSet: 'blade',
              dataChecksums: {},
              loupeVersion: '0.1.0',
              sandbox: 'off',
              workspace: dir,
            });
          }
          const m = score.metrics;
          const summary = {
            cvarPrecision: m.cvar.precision,
            modelPrecision: m.model.precision,
            transformValuePrecision: m.transformValue.precision,
            transformGraphPrecision: m.transformGraph.precision,
          };
          const runScore = {
            runId: id,
            suite: 'blade',
            blockId: ds,
            model,
            agent: 'reference',
            status: 'done',
            benchmark: 'blade',
            judgeId: 'none',
            options: score.options as unknown as Record<string, unknown>,
            summary,
            pending: 0,
            unjudged: 0,
            detail: { score, gtCounts: gt.counts, dataset: ds },
          };
          await store.scores.save({
            runId: id,
            benchmark: 'blade',
            judgeId: 'none',
            options: runScore.options,
            summary,
            detail: runScore,
            pending: 0,
            scoredAt: new Date().toISOString(),
          });
        }
      }
    } finally {
      await py.close();
      store.close();
    }
    await runner({ action: 'palette', title: 'Loupe: Show Results' });
    await runner({ action: 'clickInWebview', selector: '#refresh' });
    const text = await webviewText({
      expect: /BLADE: precision, coverage and F1[\s\S]*ui-blade-verified[\s\S]*weighted/,
      timeoutMs: 60_000,
    });
    assert.match(text, /ui-blade-single-path/);
    assert.match(text, /\[\d\.\d\d, \d\.\d\d\]/, 'values carry a 95% CI');
    const mixed = text.split('\n').filter((l) => l.startsWith('ui-blade-mixed'));
    assert.ok(
      mixed.some((l) => /\[(\d\.\d\d), (?!\1\])\d\.\d\d\]/.test(l)),
      `a model with two runs per dataset has a CI with width: ${mixed.join(' / ')}`,
    );
    assert.match(text, /samples=1000/);
    await webviewText({ expect: /BLADE per run/ });
    await runner({ action: 'clickInWebview', selector: '#blade h2' });
    await runner({ action: 'press', key: 'End' });
    await sleep(1500);
    pngOk(await screenshot('results-view-blade'));
  });
});
