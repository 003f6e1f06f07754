/**
 * Issue 43 in the real VS Code: atomic facts in the annotation panel (a compound report claim split at the cursor,
 * saved as an append-only fact-split annotation) and the fork diff — the "Compare Fork with Parent" panel, and the
 * review panel's fork-diff section beside the blind vote (only its relation before the vote). A store of its own.
 * Screenshots: atomic-facts-annotation, fork-diff-panel, fork-diff-review.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { openStore } from '../../src/core/store/run-store.ts';
import { judgementStoreOf } from '../../src/core/eval/store.ts';
import { CallbackJudge } from '../../src/core/eval/judges/judge.ts';
import { annotationStoreOf, expertFactSplit } from '../../src/core/annotations/index.ts';
import { FORK, PARENT, seedForkPair } from '../helpers/fork-fixture.ts';
import { hasRunner, runner, screenshot, webviewText } from './helpers/runner.ts';

const CLAIM = 'Obesity was 40.3% overall and 41.3% among women, up from 2017';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Atomic claims and fork diff (issue 43)', function () {
  this.timeout(300_000);
  const cfg = () => vscode.workspace.getConfiguration('loupe');
  let storePath = '';

  before(async function () {
    if (!hasRunner()) this.skip();
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    const dir = mkdtempSync(join(tmpdir(), 'loupe-atomic-fork-'));
    storePath = join(dir, 'runs.sqlite');
    const st = openStore(storePath);
    try {
      await seedForkPair(st, dir);
      // a claim-support judgement of the parent run: an item the annotation panel serves
      const judge = new CallbackJudge(
        'llm:scripted',
        (() => ({ supported: true, reason: 'the table says so' })) as never,
        judgementStoreOf(st),
      );
      const input = { claim: CLAIM, quote: 'Obesity was 40.3%.', sources: 'overall 40.3, women 41.3' };
      const j = await judge.judge('claim-support', input, { runId: PARENT });
      await annotationStoreOf(st).putItem({
        id: `j:claim-support:${j.inputHash}`,
        subject: { kind: 'judgement', task: 'claim-support', inputHash: j.inputHash },
        task: 'claim-support',
        input,
        inputHash: j.inputHash,
        criterion: null,
        suite: 'analystbench',
        runId: PARENT,
        itemRef: 'claim 1',
        suiteVersion: 'unknown',
      });
    } finally {
      await st.close();
    }
    await cfg().update('store', storePath, vscode.ConfigurationTarget.Global);
    await cfg().update('annotator', 'expert-a', vscode.ConfigurationTarget.Global);
  });

  after(async () => {
    await cfg().update('store', undefined, vscode.ConfigurationTarget.Global);
    await cfg().update('annotator', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it("the annotation panel shows a claim's atomic facts; an expert splits one at the cursor and saves it", async () => {
    await runner({ action: 'viewport', width: 1400, height: 950 });
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('loupe.openAnnotationQueue', { kind: 'audit' });
    let text = await webviewText({ title: 'Annotate', expect: /proposed by the list-marker rule/, timeoutMs: 60_000 });
    assert.match(text, /proposed by the list-marker rule/);
    // the claim is one fact by the rule; split it after "overall" with the cursor
    const at = CLAIM.indexOf(' and ');
    await runner({
      action: 'webviewEval',
      title: 'Annotate',
      selector: '#fact-0-0',
      fn: '(el, at) => { el.focus(); el.setSelectionRange(at, at); return true; }',
      arg: at,
    });
    // the split button reads the cursor of its input: click it (focus leaves the input after the click reads it)
    await runner({ action: 'clickInWebview', selector: '#atomic-facts .fact-row .split', title: 'Annotate' });
    await sleep(500);
    const values = await runner<string[]>({
      action: 'webviewEval',
      title: 'Annotate',
      selector: '#atomic-facts',
      fn: '(el) => [...el.querySelectorAll("input.fact")].map((i) => i.value)',
    });
    assert.deepEqual(values, ['Obesity was 40.3% overall', 'and 41.3% among women, up from 2017']);
    // edit the second fact so that it reads on its own, then save
    await runner({
      action: 'webviewEval',
      title: 'Annotate',
      selector: '#fact-0-1',
      fn: '(el) => { el.value = "Obesity was 41.3% among women"; el.dispatchEvent(new Event("input")); return true; }',
    });
    await runner({ action: 'clickInWebview', selector: '#save-split-0', title: 'Annotate' });
    text = await webviewText({ title: 'Annotate', expect: /split by expert-a/, timeoutMs: 30_000 });
    assert.match(text, /split of claim 1 saved/);
    const st = openStore(storePath);
    try {
      const split = await expertFactSplit(annotationStoreOf(st), PARENT, CLAIM);
      assert.deepEqual(split?.facts, ['Obesity was 40.3% overall', 'Obesity was 41.3% among women']);
    } finally {
      await st.close();
    }
    await sleep(400);
    await screenshot('atomic-facts-annotation');
  });

  it('Compare Fork with Parent: hint, steps, code diff, answers and score; agent markup is text', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const id = await vscode.commands.executeCommand<string | undefined>('loupe.compareForkWithParent', PARENT);
    assert.equal(id, FORK, 'on a parent, its newest fork is compared');
    const text = await webviewText({ title: 'Fork', expect: /Code after the fork point/, timeoutMs: 30_000 });
    for (const w of [
      'forked after step 1',
      'Use the <i>median</i>, incomes are skewed',
      '<b>Mean</b> of income.',
      "- x = df['income'].mean()",
      "+ x = df['income'].median()",
      'LongDA match',
      '+0.5',
    ]) {
      assert.ok(text.includes(w), `the panel does not show '${w}': ${text.slice(0, 1200)}`);
    }
    const marks = await runner<unknown[]>({
      action: 'webviewRects',
      selector: '.fork-diff i, .fork-diff b',
      title: 'Fork',
    }).catch(() => []);
    assert.equal(marks.length, 0, 'agent or analyst markup became elements');
    await sleep(400);
    await screenshot('fork-diff-panel');
  });

  it('the review panel shows the pair is a fork and its parent beside the blind vote, the diff only after voting', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('loupe.compareRuns', PARENT, [PARENT, FORK]);
    const text = await webviewText({ expect: /Fork diff: this pair is a fork and its parent/, timeoutMs: 60_000 });
    assert.match(text, /show here once you have voted/);
    assert.ok(!text.includes('incomes are skewed'), 'the hint (it names the fork) is hidden before the vote');
    // vote with the keyboard (a on every criterion), then the diff opens beside the vote
    await runner({ action: 'clickInWebview', selector: '#pair-title' });
    for (const k of ['a', 'j', 'a', 'j', 'a', 'j', 'a']) {
      await runner({ action: 'press', key: k });
      await sleep(150);
    }
    await runner({ action: 'press', key: 'Control+Enter' });
    const after = await webviewText({ expect: /incomes are skewed/, timeoutMs: 30_000 });
    assert.match(after, /Code after the fork point/);
    await runner({
      action: 'webviewEval',
      selector: '#fork-diff',
      fn: '(el) => { el.scrollIntoView(); return true; }',
    });
    await sleep(400);
    await screenshot('fork-diff-review');
  });
});
