/**
 * Issue 43 in the real VS Code: experiments and queue instructions/assignment. Runs are tagged from the Runs view's
 * command (Tag Run…, Rename Run…), an experiment is selected (status bar / Runs view), the Runs view and Results show
 * only its runs; an annotation queue gets Markdown instructions (a planted <script> and link stay text) and items
 * assigned to named annotators, and the annotation panel shows the instructions beside the item and progress per
 * annotator, serving the annotator's own items first.
 * Screenshots: exp-runs-view-scoped, exp-results-scoped, exp-annotation-instructions.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { annotationStoreOf } from '../../src/core/annotations/index.ts';
import { loadLongdaGroundTruth, scoreLongda } from '../../src/core/benchmarks/longda/eval.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import { hasRunner, runner, screenshot, webviewText } from './helpers/runner.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const shared = () => process.env.LOUPE_SHARED ?? join(process.env.LOUPE_REPO_ROOT ?? process.cwd(), '..', 'shared');
const sidebar = () =>
  runner<string>({ action: 'workbenchText', selector: '[id="workbench.parts.sidebar"]' }).catch(() => '');
const panelText = (selector: string, title: string) =>
  runner<string>({ action: 'webviewText', title, selector }, 15_000).catch(() => '');

describe('Experiments and queue assignment (issue 43)', function () {
  this.timeout(600_000);
  const cfg = () => vscode.workspace.getConfiguration('loupe');
  let storePath = '';
  let queueId = '';

  before(async function () {
    if (!hasRunner()) this.skip();
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    // a store of its own: its runs, tags and queues stay out of the other suites
    storePath = join(mkdtempSync(join(tmpdir(), 'loupe-exp-store-')), 'runs.sqlite');
    const gt = loadLongdaGroundTruth(join(shared(), 'data', 'longda', 'benchmark', 'benchmark.csv'));
    const block = gt.filter((q) => q.source === 'NCHS Data Brief No. 508');
    const blockId = `${block[0]!.survey}_${block[0]!.source}`;
    const st = openStore(storePath);
    try {
      const right = Object.fromEntries(block.map((q) => [q.longdaId, q.answerText]));
      for (const [id, model] of [
        ['exp-r1', 'alpha-model'],
        ['exp-r2', 'beta-model'],
        ['exp-r3', 'gamma-model'],
      ] as const) {
        await st.createRun({
          id,
          suite: 'longda',
          blockId,
          agent: 'llm',
          model,
          params: { model },
          promptHash: 'h',
          toolSet: 'longda',
          dataChecksums: {},
          loupeVersion: 't',
          sandbox: 'off',
          workspace: storePath,
        });
        await st.updateRun(id, { status: 'finished' });
        const score = scoreLongda(block, right);
        await st.scores.save({
          runId: id,
          benchmark: 'longda',
          judgeId: 'none',
          options: {},
          summary: { queries: score.n, coverage: score.coverage, match: score.match },
          detail: score,
          pending: 0,
          scoredAt: new Date().toISOString(),
        });
      }
      const ann = annotationStoreOf(st);
      for (const [k, run] of [
        [1, 'exp-r1'],
        [2, 'exp-r2'],
        [3, 'exp-r2'],
        [4, 'exp-r3'],
      ] as const) {
        const input = { claim: `exp claim ${k}: obesity was ${40 + k}%`, quote: 'q', sources: 's' };
        await ann.putItem({
          id: `exp-claim-${k}`,
          subject: { kind: 'step', runId: run, from: 0, to: 0 },
          task: 'claim-support',
          input,
          inputHash: null,
          criterion: null,
          suite: 'longda',
          runId: run,
          itemRef: `claim ${k}`,
          suiteVersion: 'v',
        });
      }
      queueId = (
        await ann.openQueue(
          { kind: 'sampled', itemIds: [1, 2, 3, 4].map((k) => `exp-claim-${k}`) },
          { name: 'Claims of the ablation', reviewers: 1 },
        )
      ).id;
    } finally {
      await st.close();
    }
    await cfg().update('store', storePath, vscode.ConfigurationTarget.Global);
    await cfg().update('annotator', 'ana', vscode.ConfigurationTarget.Global);
    await cfg().update('annotation.reviewersPerItem', 1, vscode.ConfigurationTarget.Global);
  });

  after(async () => {
    await vscode.commands.executeCommand('loupe.selectExperiment', null);
    await vscode.commands.executeCommand('loupe.filterRuns', null);
    for (const k of ['annotator', 'annotation.reviewersPerItem', 'store']) {
      await cfg().update(k, undefined, vscode.ConfigurationTarget.Global);
    }
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('tag and rename runs, select the experiment: the Runs view shows only its runs, named and tagged', async () => {
    assert.equal(await vscode.commands.executeCommand('loupe.tagRun', 'exp-r2', 'ablation-A'), true);
    // from a Runs view node (as the context menu passes it)
    assert.equal(
      await vscode.commands.executeCommand('loupe.tagRun', { kind: 'run', run: { id: 'exp-r3' } }, 'ablation-A'),
      true,
    );
    assert.equal(
      await vscode.commands.executeCommand(
        'loupe.renameRun',
        { kind: 'run', run: { id: 'exp-r2' } },
        'Beta, prompt v2',
      ),
      true,
    );
    assert.equal(await vscode.commands.executeCommand('loupe.selectExperiment', 'ablation-A'), true);
    await vscode.commands.executeCommand('loupe.runs.focus');
    let tree = '';
    for (let i = 0; i < 40 && !(/Beta, prompt v2/.test(tree) && /gamma-model/.test(tree)); i++) {
      if (i > 0) {
        await runner({
          action: 'clickWorkbench',
          selector: '[id="workbench.parts.sidebar"] .monaco-list-row[aria-expanded="false"]',
        }).catch(() => undefined);
      }
      await sleep(500);
      tree = await sidebar();
    }
    assert.match(tree, /Beta, prompt v2/, tree.slice(0, 800));
    assert.match(tree, /#ablation-A/);
    assert.match(tree, /Experiment ablation-A — 2 runs/, 'the view says what it is scoped to');
    assert.doesNotMatch(tree, /alpha-model/, 'a run outside the experiment is not listed');
    const status = await runner<string>({
      action: 'workbenchText',
      selector: '[id="workbench.parts.statusbar"]',
    }).catch(() => '');
    assert.match(status, /ablation-A/, 'the status bar names the selected experiment');
    await screenshot('exp-runs-view-scoped');
  });

  it("Results show only the experiment's runs", async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('loupe.showResults');
    const RES = 'Loupe Results';
    const text = await webviewText({ title: RES, expect: /beta-model/, timeoutMs: 60_000 });
    assert.match(text, /experiment ablation-A \(2 runs\)/);
    assert.match(text, /gamma-model/);
    assert.doesNotMatch(text, /alpha-model/);
    await screenshot('exp-results-scoped');
    // every run again: the open Results follow the selection
    await vscode.commands.executeCommand('loupe.selectExperiment', null);
    await webviewText({ title: RES, expect: /alpha-model/, timeoutMs: 30_000 });
    await vscode.commands.executeCommand('loupe.selectExperiment', 'ablation-A');
  });

  it("annotation panel: instructions beside the item (sanitised), assignment progress per annotator, my items first, only the experiment's", async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    assert.equal(await vscode.commands.executeCommand<string>('loupe.openAnnotationQueue', { queueId }), queueId);
    await webviewText({ title: 'Annotate', expect: /annotating as ana/, timeoutMs: 60_000 });
    const rubric =
      '## Rubric\n\n- **Supported**: the quote states the number.\n- Otherwise *not supported*.\n\n<script>document.title="pwned"</script><img src=x onerror="document.title=1"> [link](javascript:alert(1))';
    assert.equal(await vscode.commands.executeCommand('loupe.setQueueInstructions', { queueId, text: rubric }), true);
    assert.equal(
      await vscode.commands.executeCommand('loupe.assignQueueItems', {
        queueId,
        annotator: 'bo',
        itemIds: ['exp-claim-2'],
      }),
      1,
    );
    assert.equal(
      await vscode.commands.executeCommand('loupe.assignQueueItems', {
        queueId,
        annotator: 'ana',
        itemIds: ['exp-claim-3', 'exp-claim-1'],
      }),
      2,
    );
    const text = await webviewText({ title: 'Annotate', expect: /Instructions/, timeoutMs: 30_000 });
    assert.match(text, /experiment ablation-A/);
    // ana's item in the experiment (claim 3, run exp-r2) is served first; claim 1 (run exp-r1) is outside the experiment
    assert.match(await panelText('.an-task', 'Annotate'), /run exp-r2/);
    assert.match(await panelText('#assigned-to', 'Annotate'), /assigned to you/);
    const ins = await panelText('#instructions', 'Annotate');
    assert.match(ins, /Rubric/);
    assert.match(ins, /Supported: the quote states the number/);
    const html = await runner<string>({
      action: 'webviewEval',
      title: 'Annotate',
      selector: '#instructions',
      fn: '(el) => el.innerHTML',
    }).catch((e: unknown) => `eval failed: ${String(e)}`);
    assert.doesNotMatch(html, /<script|onerror=|href="javascript/i, html.slice(0, 600));
    assert.match(html, /<strong>Supported<\/strong>/, 'the Markdown is rendered');
    let progress = '';
    for (let i = 0; i < 40 && !/unassigned/.test(progress); i++) {
      if (i) await sleep(500);
      progress = await panelText('#assignment', 'Annotate');
    }
    if (!/unassigned/.test(progress)) await screenshot('exp-annotation-failed');
    // counted within the experiment: ana has claim 3 (of runs r2/r3), bo has claim 2; claim 4 is unassigned
    assert.match(progress, /ana \(you\)\s+0 \/ 1/, progress);
    assert.match(progress, /bo\s+0 \/ 1/, progress);
    assert.match(progress, /1 unassigned/, progress);
    await runner({ action: 'viewport', width: 1600, height: 1000 }).catch(() => undefined);
    await screenshot('exp-annotation-instructions');
    // answering moves ana's progress
    await runner({ action: 'clickInWebview', title: 'Annotate', selector: '.opt[data-value="true"]' });
    await runner({ action: 'clickInWebview', title: 'Annotate', selector: '#submit' });
    await webviewText({ title: 'Annotate', expect: /ana \(you\)\s+1 \/ 1/, timeoutMs: 30_000 });
    await screenshot('exp-annotation-progress');
  });
});
