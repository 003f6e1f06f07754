/**
 * Expert annotation panel (issue 14) in the real VS Code: an AnalystBench-style run and a scripted BLADE run are
 * scored with `--judge human`; an expert answers items with the keyboard only (reloading the webview mid-queue),
 * a second annotator answers the same items, the agreement view shows κ / α, an adjudication resolves a
 * disagreement, and `loupe score --judge human` then reports the human verdicts.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { annotationStoreOf } from '../../src/core/annotations/index.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import { HURRICANE_SUBMISSION, writeAnalystbenchDemo } from '../helpers/fixtures.ts';
import { call, startScriptedLlm } from '../helpers/scripted-llm.ts';
import {
  cli as shippedCli,
  hasRunner,
  pressUntil as helperPressUntil,
  runner,
  screenshot,
  webviewText,
} from './helpers/runner.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const shared = () => process.env.LOUPE_SHARED ?? join(process.env.LOUPE_REPO_ROOT ?? process.cwd(), '..', 'shared');

/** The shipped CLI as annotator 'cli'. */
const cli = (args: string[]) => shippedCli(args, { LOUPE_ANNOTATOR: 'cli' });

/** Text of `selector` in the annotation panel ('' when absent). */
async function panelText(selector: string): Promise<string> {
  return runner<string>({ action: 'webviewText', title: 'Annotate', selector }, 15_000).catch(() => '');
}

const pressUntil = (key: string, effect: () => Promise<boolean>, what: string) =>
  helperPressUntil(key, effect, what, {
    shotPrefix: 'annotation',
    explain: async () =>
      `panel message '${await panelText('#message')}'; evidence '${(await panelText('#evidence')).slice(0, 200)}'`,
  });

/** Waits for the panel to show item `n` (1-based); on failure says what the panel shows. */
async function waitItem(n: number): Promise<string> {
  try {
    return await webviewText({ title: 'Annotate', expect: new RegExp(`item ${n} of`), timeoutMs: 20_000 });
  } catch (e) {
    throw new Error(
      `item ${n} not shown: message '${await panelText('#message')}', task '${await panelText('.an-task')}' (${e instanceof Error ? e.message.slice(0, 100) : String(e)})`,
      { cause: e },
    );
  }
}

/** Submits with Ctrl+Enter and waits for the confirmation. */
async function submitWithKeys(): Promise<void> {
  await pressUntil('Control+Enter', async () => /Saved\. Enter: next item/.test(await panelText('#message')), 'submit');
}

/** Goes to the next item with Enter (after a submit) and waits for item `n`. */
async function nextWithEnter(n: number): Promise<string> {
  await pressUntil('Enter', async () => new RegExp(`item ${n} of`).test(await panelText('.an-task')), `next item ${n}`);
  return waitItem(n);
}

/** Answers the item on screen with the keyboard, according to its task. */
async function answerWithKeys(text: string, variant: 'a' | 'b'): Promise<void> {
  const chosen = async (n: number) => ((await panelText('#draft-summary')).match(/ = /g) ?? []).length >= n;
  if (/Do the two name the same thing/.test(text)) {
    await pressUntil(variant === 'a' ? 'y' : 'n', () => chosen(1), 'verdict');
  } else if (/Score the response on this criterion/.test(text)) {
    await pressUntil(variant === 'a' ? '4' : '2', () => chosen(1), 'score');
  } else if (/Rate the generated figure/.test(text)) {
    for (let i = 1; i <= 4; i++) await pressUntil('3', () => chosen(i), `scale ${i}`);
  } else if (/Is the claim supported/.test(text)) await pressUntil('y', () => chosen(1), 'verdict');
  else throw new Error(`unexpected item: ${text.slice(0, 300)}`);
}

describe('Annotation panel', function () {
  this.timeout(600_000);
  let storePath = '';
  let bladeRun = '';
  let pendingBefore = 0;
  const paints: number[] = [];

  before(async function () {
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    const cfg = vscode.workspace.getConfiguration('loupe');
    storePath = join(cfg.get<string>('runsDirectory') ?? '', 'runs.sqlite');
    await cfg.update('annotator', 'expert-a', vscode.ConfigurationTarget.Global);
    await cfg.update('annotation.reviewersPerItem', 2, vscode.ConfigurationTarget.Global);
    // AnalystBench-style task with a report
    const dir = mkdtempSync(join(tmpdir(), 'loupe-annot-int-'));
    const suite = writeAnalystbenchDemo(join(dir, 'ab'));
    // a run's workspace lies in the runs folder, as a real run's (a recorded folder elsewhere is never read, issue 36)
    const ws = join(cfg.get<string>('runsDirectory') ?? '', 'ab-annot', 'workspace');
    mkdirSync(ws, { recursive: true });
    writeFileSync(
      join(ws, 'report.md'),
      '# Obesity\n\nObesity was 40.3% overall, men 39.2% and women 41.3%.\n\nIt doubled since 1990.\n\n![Obesity prevalence among men and women (by sex)](figures/a.png)\n',
    );
    const st = openStore(storePath);
    await st.createRun({
      id: 'ab-annot',
      suite: 'analystbench',
      blockId: 'demo',
      agent: 'llm',
      model: 'writer',
      params: { suiteRoot: suite },
      promptHash: 'h',
      toolSet: 'analystbench-toc',
      dataChecksums: {},
      loupeVersion: 't',
      sandbox: 'off',
      workspace: ws,
    });
    st.close();
    // BLADE: a scripted, imperfect analysis of hurricane (real data, real BLADE scorer through Python)
    const llm = await startScriptedLlm({
      script: [{ content: 'Submit.', toolCalls: [call('submit_analysis', HURRICANE_SUBMISSION)] }, { content: 'done' }],
    });
    try {
      const r = await cli([
        'run',
        '--store',
        storePath,
        '--suite',
        'blade',
        '--root',
        join(shared(), 'data', 'blade', 'datasets'),
        '--block',
        'hurricane',
        '--agent',
        'llm',
        '--model',
        'scripted',
        '--base-url',
        llm.baseUrl,
        '--json',
      ]);
      assert.equal(r.rc, 0, r.err);
      bladeRun = (JSON.parse(r.out.trim().split('\n').pop()!) as { runId: string }).runId;
    } finally {
      await llm.close();
    }
    // The LLM judge's verdicts on the same items (a scripted OpenAI-compatible judge), for judge–human agreement.
    const judge = await startScriptedLlm({
      script: [
        (req) => {
          const sys = String(req.messages[0]?.content ?? '');
          if (/same thing|name the same/i.test(sys)) return { content: '{"match": true, "reason": "same construct"}' };
          if (/four 1–5 scales/.test(sys)) {
            return {
              content: '{"readability": 3, "groundedness": 3, "task_utility": 3, "reproducibility": 3, "reason": "ok"}',
            };
          }
          if (/claims/i.test(sys) && /quote/i.test(sys)) return { content: '{"claims": []}' };
          return { content: '{"score": 4, "reason": "mostly"}' };
        },
      ],
    });
    try {
      const l = await cli([
        'score',
        '--store',
        storePath,
        '--run',
        'ab-annot',
        '--run',
        bladeRun,
        '--judge',
        'llm',
        '--judge-model',
        'judge-m',
        '--judge-base-url',
        judge.baseUrl,
        '--no-save',
        '--json',
      ]);
      assert.equal(l.rc, 0, l.err);
    } finally {
      await judge.close();
    }
    const s = await cli([
      'score',
      '--store',
      storePath,
      '--run',
      'ab-annot',
      '--run',
      bladeRun,
      '--judge',
      'human',
      '--no-save',
      '--json',
    ]);
    assert.equal(s.rc, 0, s.err);
    pendingBefore = (JSON.parse(s.out) as { runs: Array<{ pending: number }> }).runs.reduce((n, r) => n + r.pending, 0);
    assert.ok(pendingBefore >= 5, `the human judge queued ${pendingBefore} items`);
  });

  after(async () => {
    const cfg = vscode.workspace.getConfiguration('loupe');
    await cfg.update('annotator', undefined, vscode.ConfigurationTarget.Global);
    await cfg.update('annotation.reviewersPerItem', undefined, vscode.ConfigurationTarget.Global);
  });

  it('an expert opens the queue from the palette and answers 5 items with the keyboard, reloading mid-queue without loss', async function () {
    if (!hasRunner()) this.skip();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await runner({ action: 'palette', title: 'Loupe: Open Annotation Queue' });
    await sleep(800);
    await runner({ action: 'press', key: 'Enter' }); // "Pending items", the first choice
    let text = await webviewText({ title: 'Annotate', expect: /item 1 of \d+/, timeoutMs: 60_000 });
    assert.match(text, /annotating as expert-a/);
    assert.match(text, /0 \/ \d+ done/);
    await screenshot('annotation-queue');
    await runner({ action: 'clickInWebview', selector: '#queue-name', title: 'Annotate' }); // focus the panel's document
    let cited = false;
    for (let k = 0; k < 5; k++) {
      text = await waitItem(k + 1);
      const ms = /shown in (\d+) ms/.exec(text);
      if (ms) paints.push(Number(ms[1]));
      if (!cited && text.includes(`run ${bladeRun}`)) {
        // cite evidence with the keyboard (e, Space), and open it where it lives (Enter: the notebook cell / timeline step)
        await pressUntil('e', async () => (await panelText('#evidence .sel')) !== '', 'evidence mode');
        await pressUntil('Space', async () => /Evidence \(1 cited\)/i.test(await panelText('#evidence-title')), 'cite');
        const evidenceOpen = () =>
          vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => /notebook|Timeline/.test(t.label)));
        await pressUntil('Enter', async () => evidenceOpen(), 'open evidence');
        await sleep(1500);
        await screenshot('annotation-item-evidence');
        const opened = vscode.window.tabGroups.all
          .flatMap((g) => g.tabs)
          .filter((t) => /notebook|Timeline/.test(t.label));
        await vscode.window.tabGroups.close(opened, true);
        await sleep(500);
        await runner({ action: 'clickInWebview', selector: '#queue-name', title: 'Annotate' });
        await pressUntil('Escape', async () => !(await panelText('#evidence.active')), 'leave evidence');
        cited = true;
      }
      await answerWithKeys(text, 'a');
      if (k === 2) {
        // a draft (choice made, not submitted) survives a reload of the panel
        const before = await panelText('#draft-summary');
        await vscode.commands.executeCommand('workbench.action.webview.reloadWebviewAction');
        await sleep(1500);
        await webviewText({ title: 'Annotate', expect: /item 3 of/, timeoutMs: 60_000 });
        assert.match(before, /Your verdict: /);
        assert.equal(await panelText('#draft-summary'), before, 'the draft choice is back after the reload');
        await runner({ action: 'clickInWebview', selector: '#queue-name', title: 'Annotate' });
      }
      await submitWithKeys();
      if (k === 0) {
        text = await webviewText({ title: 'Annotate', expect: /Other verdicts/i });
        assert.match(text, /Resolution: single/, 'revealed after submitting');
      }
      if (k < 4) await nextWithEnter(k + 2);
    }
    assert.ok(cited, 'an item with evidence was cited');
    await webviewText({ title: 'Annotate', expect: /expert-a: 5/ });
    const st = annotationStoreOf(openStore(storePath));
    const mine = (await st.annotationsByItem()).size;
    assert.ok(mine >= 5, `${mine} items annotated`);
    console.log(
      `      webview: first item painted in ${paints[0] ?? '—'} ms, next items in ${paints.slice(1).join(', ')} ms (reported, not asserted)`,
    );
  });

  it('a second annotator answers the same items; the agreement view shows κ and α', async function () {
    if (!hasRunner()) this.skip();
    await vscode.workspace.getConfiguration('loupe').update('annotator', 'expert-b', vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('loupe.openAnnotationQueue', { kind: 'items' });
    await webviewText({ title: 'Annotate', expect: /annotating as expert-b/, timeoutMs: 60_000 });
    let text: string;
    await runner({ action: 'clickInWebview', selector: '#queue-name', title: 'Annotate' });
    for (let k = 0; k < 5; k++) {
      text = await waitItem(k + 1);
      await answerWithKeys(text, k % 2 ? 'b' : 'a');
      await submitWithKeys();
      await sleep(300);
      await runner({ action: 'press', key: 'Enter' });
    }
    await webviewText({ title: 'Annotate', expect: /expert-b: 5/ });
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await runner({ action: 'palette', title: 'Loupe: Show Agreement' });
    text = await webviewText({ title: 'Annotation Agreement', expect: /Cohen's κ/, timeoutMs: 60_000 });
    assert.match(text, /Krippendorff's α \(nominal\)/);
    assert.match(text, /expert-a, expert-b/);
    assert.match(text, /LLM judge vs/, 'judge–human agreement is shown');
    await webviewText({ title: 'Annotation Agreement', expect: /LLM judge \(rows\)|human resolution/ });
    await sleep(1500);
    await screenshot('annotation-agreement');
  });

  it('an adjudicator resolves a disagreement; loupe score --judge human then reports the human verdicts', async function () {
    if (!hasRunner()) this.skip();
    await vscode.workspace.getConfiguration('loupe').update('annotator', 'lead', vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('loupe.openAnnotationQueue', { kind: 'disagreement' });
    const text = await webviewText({
      title: 'Annotate',
      expect: /Adjudication: your verdict is final/,
      timeoutMs: 60_000,
    });
    assert.match(text, /expert-a/, 'the adjudicator sees both verdicts');
    await runner({ action: 'clickInWebview', selector: '#queue-name', title: 'Annotate' });
    await answerWithKeys(text, 'a');
    await submitWithKeys();
    await webviewText({ title: 'Annotate', expect: /Resolution: adjudicated/ });
    await screenshot('annotation-adjudicated');
    const s = await cli([
      'score',
      '--store',
      storePath,
      '--run',
      'ab-annot',
      '--run',
      bladeRun,
      '--judge',
      'human',
      '--no-save',
      '--json',
    ]);
    assert.equal(s.rc, 0, s.err);
    const runs = (JSON.parse(s.out) as { runs: Array<{ decided: { human: number; pending: number } }> }).runs;
    const human = runs.reduce((n, r) => n + r.decided.human, 0);
    const pending = runs.reduce((n, r) => n + r.decided.pending, 0);
    // 5 items answered by two experts: 3 agreements, 2 ties of which 1 adjudicated → 4 decided by the experts
    assert.ok(human >= 4, `${human} judgements decided by the experts`);
    assert.equal(pending, pendingBefore - human, 'every item the experts decided left the pending count');
  });
});
