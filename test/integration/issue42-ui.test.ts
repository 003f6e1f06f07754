/**
 * Issue 42 (defects 7, 9, 10) in the real VS Code: pickers offer only what can succeed; the pairwise vote's keyboard
 * model (a vote keeps the highlight, j moves one criterion, Ctrl+Enter goes to the first unanswered one) and its
 * compact, foldable panel at 1000 px; layouts at 1000×1000 and 1600×1000 (ground-truth DAG beside or above its detail
 * pane, never under it; the timeline header's live elapsed time; the agreement view's small-sample warning).
 * Screenshots: i42-pick-chat-agent, i42-pick-hint, i42-blade-review-no-runs, i42-vote-{1000,1600}, i42-vote-folded,
 * i42-gt-dag-{1000,1600}, i42-timeline-live, i42-agreement-small-n.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { annotationStoreOf } from '../../src/core/annotations/index.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import { writeAnalystbenchDemo } from '../helpers/fixtures.ts';
import {
  hasRunner,
  pressUntil as helperPressUntil,
  runner,
  screenshot,
  webviewText,
  type ElementRects,
} from './helpers/runner.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const shared = () => process.env.LOUPE_SHARED ?? join(process.env.LOUPE_REPO_ROOT ?? process.cwd(), '..', 'shared');
const REVIEW = 'Review:';
const RUBRIC = ['Accuracy', 'Use of evidence', 'Clarity'];
const panelText = (selector: string, title = REVIEW) =>
  runner<string>({ action: 'webviewText', title, selector }, 15_000).catch(() => '');
const pressUntil = (key: string, effect: () => Promise<boolean>, what: string) =>
  helperPressUntil(key, effect, what, {
    shotPrefix: 'i42',
    explain: async () =>
      `active '${await panelText('.vote-row.active .crit')}', message '${await panelText('#message')}'`,
  });
const rects = (selector: string, title: string) => runner<ElementRects[]>({ action: 'webviewRects', selector, title });

describe('Issue 42 pickers, pairwise keyboard and layouts', function () {
  this.timeout(600_000);
  const cfg = () => vscode.workspace.getConfiguration('loupe');
  let storePath = '';

  before(async function () {
    if (!hasRunner()) this.skip();
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    // a store of its own: its open pair and annotations stay out of the other suites' queues and rankings
    storePath = join(mkdtempSync(join(tmpdir(), 'loupe-i42-store-')), 'runs.sqlite');
    await cfg().update('store', storePath, vscode.ConfigurationTarget.Global);
    await cfg().update('annotator', 'reviewer-42', vscode.ConfigurationTarget.Global);
    await cfg().update('annotation.reviewersPerItem', 1, vscode.ConfigurationTarget.Global);
    await cfg().update('review.rubric', RUBRIC, vscode.ConfigurationTarget.Global);
    const dir = mkdtempSync(join(tmpdir(), 'loupe-i42-'));
    const suite = writeAnalystbenchDemo(join(dir, 'ab'));
    const long = (w: string) =>
      `# Obesity brief\n\n${Array.from({ length: 14 }, (_, k) => `## Part ${k + 1}\n\n${w} paragraph ${k + 1}: obesity was ${40 + k}.${k}% in group ${k + 1}.`).join('\n\n')}\n`;
    const st = openStore(storePath);
    try {
      for (const [id, model] of [
        ['i42-ab-1', 'writer-a'],
        ['i42-ab-2', 'writer-b'],
      ] as const) {
        const ws = join(cfg().get<string>('runsDirectory') ?? '', id, 'workspace');
        mkdirSync(ws, { recursive: true });
        writeFileSync(join(ws, 'report.md'), long(model));
        await st.createRun({
          id,
          suite: 'analystbench',
          blockId: 'demo42',
          agent: 'llm',
          model,
          params: { suiteRoot: suite, model },
          promptHash: 'h',
          toolSet: 'analystbench-toc',
          dataChecksums: {},
          loupeVersion: 't',
          sandbox: 'off',
          workspace: ws,
        });
        await st.updateRun(id, { status: 'finished' });
      }
      // a run "running" for 21 s (the timeline header must not say 0 ms)
      await st.createRun({
        id: 'i42-live',
        suite: 'analystbench',
        blockId: 'demo42',
        agent: 'llm',
        model: 'live-model',
        params: { suiteRoot: suite, model: 'live-model' },
        promptHash: 'h',
        toolSet: 'analystbench-toc',
        dataChecksums: {},
        loupeVersion: 't',
        sandbox: 'off',
        workspace: dir,
      });
      await st.updateRun('i42-live', { status: 'running', startedAt: new Date(Date.now() - 21_000).toISOString() });
      // two items judged by two experts: κ on n = 2
      const ann = annotationStoreOf(st);
      for (const k of [1, 2]) {
        const input = { claim: `i42 claim ${k}`, quote: 'q', sources: 's' };
        await ann.putItem({
          id: `i42-claim-${k}`,
          subject: { kind: 'span', runId: 'i42-ab-1', artefact: 'report.md', start: 0, end: 1, quote: 'q' },
          task: 'claim-support',
          input,
          inputHash: null,
          criterion: null,
          suite: 'analystbench',
          runId: null,
          itemRef: `i42 claim ${k}`,
          suiteVersion: 'v',
        });
        for (const who of ['expert-a', 'expert-b']) {
          await ann.annotate({
            itemId: `i42-claim-${k}`,
            annotator: who,
            verdict: { supported: k === 1 || who === 'expert-a', reason: '' },
          });
        }
      }
    } finally {
      await st.close();
    }
  });

  after(async () => {
    for (const k of ['annotator', 'annotation.reviewersPerItem', 'review.rubric', 'store']) {
      await cfg().update(k, undefined, vscode.ConfigurationTarget.Global);
    }
    await runner({ action: 'viewport', width: 1600, height: 1000 }).catch(() => undefined);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('pickers: Evaluate Chat Agent offers runnable blocks only; Add Hint offers no finished run; BLADE review of a dataset without runs opens nothing', async () => {
    await runner({ action: 'viewport', width: 1600, height: 1000 });
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await runner({ action: 'palette', title: 'Loupe: Evaluate Chat Agent on Block' });
    await sleep(2500);
    await runner({ action: 'type', text: 'longda' });
    await sleep(1000);
    const offered = await runner<string>({ action: 'workbenchText', selector: '.quick-input-widget' });
    const active = await runner<string>({
      action: 'workbenchText',
      selector: '.quick-input-list .monaco-list-row.focused',
    }).catch(() => '');
    await screenshot('i42-pick-chat-agent');
    await runner({ action: 'press', key: 'Escape' });
    assert.doesNotMatch(offered, /not runnable ·|\$\(error\)/, 'no unrunnable block is offered');
    assert.doesNotMatch(active, /ASFIN/, `the selected block is runnable: ${active}`);
    assert.match(offered, /longda · \d+ items/, 'runnable LongDA blocks are found by typing the suite name');
    assert.match(active, /longda · \d+ items/);
    // the messages the extension shows (same extension host: the window API is shared), recorded and still shown
    const shown: string[] = [];
    const w = vscode.window as unknown as Record<string, (...a: unknown[]) => unknown>;
    const originals = Object.fromEntries(
      ['showErrorMessage', 'showWarningMessage', 'showInformationMessage'].map((k) => [k, w[k]!]),
    );
    for (const [k, f] of Object.entries(originals)) {
      w[k] = (...a: unknown[]) => {
        shown.push(String(a[0]));
        return f.apply(vscode.window, a);
      };
    }
    try {
      // Add Hint: the store holds only finished runs and one run driven elsewhere: nothing can take a hint, no picker
      const hint = await Promise.race([
        vscode.commands.executeCommand('loupe.intervene'),
        sleep(15_000).then(() => 'timed out (a picker is open)'),
      ]);
      await sleep(800);
      await screenshot('i42-pick-hint');
      await runner({ action: 'press', key: 'Escape' });
      assert.equal(hint, undefined, String(hint));
      assert.match(shown.join('\n'), /no run can take a hint now/);
      // Review BLADE Decisions on a dataset with no runs: says so; no tab opens
      const tabsBefore = vscode.window.tabGroups.all.flatMap((g) => g.tabs).length;
      const r = await vscode.commands.executeCommand('loupe.reviewBladeDecisions', {
        suite: { kind: 'blade', root: join(shared(), 'data', 'blade', 'datasets') },
        block: { id: 'affairs' },
      });
      await sleep(800);
      await screenshot('i42-blade-review-no-runs');
      assert.equal(r, undefined);
      assert.match(shown.join('\n'), /affairs has no recorded runs/);
      assert.doesNotMatch(shown.join('\n'), /Loupe: .*error|failed/i);
      assert.equal(
        vscode.window.tabGroups.all.flatMap((g) => g.tabs).length,
        tabsBefore,
        'no BLADE decisions tab was opened',
      );
    } finally {
      Object.assign(w, originals);
    }
  });

  it('pairwise keyboard: a vote keeps the highlight, j moves one, Ctrl+Enter goes to the first unanswered; at 1000 px the vote panel leaves the outputs visible', async () => {
    await vscode.commands.executeCommand('notifications.clearAll');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await runner({ action: 'viewport', width: 1000, height: 1000 });
    await sleep(500);
    const queueId = await vscode.commands.executeCommand<string>('loupe.compareRuns', { run: { id: 'i42-ab-1' } }, [
      { run: { id: 'i42-ab-1' } },
      { run: { id: 'i42-ab-2' } },
    ]);
    assert.ok(queueId);
    await webviewText({ title: REVIEW, expect: /Output A[\s\S]*Output B/, timeoutMs: 60_000 });
    assert.match(await panelText('#keys'), /the highlight stays[\s\S]*j \/ k next \/ previous criterion/);
    await runner({ action: 'clickInWebview', title: REVIEW, selector: '#queue-name' });
    const activeRow = () => panelText('.vote-row.active .crit');
    assert.equal((await activeRow()).trim(), 'Accuracy');
    await pressUntil(
      'a',
      async () => (await panelText('.vote-row[data-criterion="Accuracy"] .opt.on')) !== '',
      'vote Accuracy',
    );
    assert.equal((await activeRow()).trim(), 'Accuracy', 'a vote does not move the highlight');
    await pressUntil('j', async () => (await activeRow()).trim() === 'Use of evidence', 'j to the next criterion');
    await pressUntil('j', async () => (await activeRow()).trim() === 'Clarity', 'j to Clarity');
    await pressUntil(
      'b',
      async () => (await panelText('.vote-row[data-criterion="Clarity"] .opt.on')) !== '',
      'vote Clarity',
    );
    // Ctrl+Enter with "Use of evidence" and the overall unanswered: highlights and focuses the first, says so
    // (reads without a tab title here: clicking the tab would move the keyboard focus)
    const noTitle = (selector: string) => runner<string>({ action: 'webviewText', selector }, 15_000).catch(() => '');
    for (let i = 0; i < 4 && !/Not submitted/.test(await noTitle('#message')); i++) {
      await runner({ action: 'press', key: 'Control+Enter' });
      await sleep(1000);
    }
    const focused = await runner<string>({
      action: 'webviewEval',
      selector: '#vote',
      fn: '() => document.activeElement?.closest(".vote-row")?.dataset.criterion ?? `(focus on ${document.activeElement?.tagName}#${document.activeElement?.id})`',
    });
    assert.equal(focused, 'Use of evidence', 'the keyboard focus is on the first unanswered criterion');
    assert.equal((await activeRow()).trim(), 'Use of evidence');
    assert.match(await panelText('#message'), /2 criteria unanswered\. “Use of evidence” is highlighted/);
    // the vote panel at 1000 px: at most ~35% of the height; outputs visible above it
    const vote = (await rects('#vote', REVIEW))[0]!;
    const grid = (await rects('#aligned', REVIEW))[0]!;
    const height = await runner<number>({
      action: 'webviewEval',
      title: REVIEW,
      selector: '#vote',
      fn: '() => document.documentElement.clientHeight',
    });
    const share = (vote.clip.bottom - vote.clip.top) / height;
    await sleep(400);
    await screenshot('i42-vote-1000');
    assert.ok(share <= 0.36, `vote panel takes ${(share * 100).toFixed(0)}% of ${height} px`);
    assert.ok(
      vote.clip.top - grid.box.top > height * 0.4,
      'the outputs get more than 40% of the height above the vote panel',
    );
    await pressUntil('v', async () => (await panelText('#fold')).includes('Show vote'), 'fold');
    const folded = (await rects('#vote', REVIEW))[0]!;
    const open = vote.box.bottom - vote.box.top;
    assert.ok(
      folded.box.bottom - folded.box.top < open * 0.6,
      `folded vote panel (${folded.box.bottom - folded.box.top} px) is much smaller than open (${open} px)`,
    );
    assert.equal(await panelText('.vote-row'), '', 'no criterion rows while folded');
    await screenshot('i42-vote-folded');
    await pressUntil('v', async () => (await panelText('#fold')).includes('Fold'), 'unfold');
    await runner({ action: 'viewport', width: 1600, height: 1000 });
    await sleep(800);
    await screenshot('i42-vote-1600');
  });

  it('layouts: the ground-truth DAG is never under its detail pane (1000 and 1600 px); live elapsed time; κ on n = 2 warned', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const root = join(shared(), 'data', 'blade', 'datasets');
    for (const width of [1600, 1000]) {
      await runner({ action: 'viewport', width, height: 1000 });
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      await vscode.commands.executeCommand('loupe.showGroundTruth', { suite: 'blade', root, blockId: 'hurricane' });
      await webviewText({ title: 'Ground truth', expect: /Show the ground truth/, timeoutMs: 60_000 });
      await runner({ action: 'clickInWebview', title: 'Ground truth', selector: '#reveal' });
      await webviewText({ title: 'Ground truth', expect: /Transforms \(\d+\)/, timeoutMs: 60_000 });
      await runner({ action: 'clickInWebview', title: 'Ground truth', selector: '#dag .node:not(.root)' });
      await sleep(600);
      const svg = (await rects('#dag svg', 'Ground truth'))[0]!;
      const det = (await rects('#detail', 'Ground truth'))[0]!;
      const beside = det.box.left >= svg.box.right - 0.5;
      const below = det.box.top >= svg.box.bottom - 0.5;
      await screenshot(`i42-gt-dag-${width}`);
      assert.ok(
        beside || below,
        `at ${width} px the detail pane overlaps the DAG (svg ${JSON.stringify(svg.box)}, detail ${JSON.stringify(det.box)})`,
      );
      assert.ok(
        svg.clip.right - svg.clip.left >= svg.box.right - svg.box.left - 1,
        `at ${width} px the DAG is cut (drawn ${svg.box.right - svg.box.left} px, visible ${svg.clip.right - svg.clip.left} px)`,
      );
    }
    // timeline of a run that has been running for 21 s
    await runner({ action: 'viewport', width: 1600, height: 1000 });
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('loupe.openTimeline', 'i42-live');
    const text = await webviewText({ title: 'Timeline', expect: /elapsed/, timeoutMs: 60_000 });
    const elapsed = await panelText('#run-elapsed', 'Timeline');
    const m = /^(?:(\d+)m )?(\d+(?:\.\d)?) ?s elapsed$/.exec(elapsed.trim());
    assert.ok(
      m && Number(m[1] ?? 0) * 60 + Number(m[2]) >= 20,
      `header shows '${elapsed}' for a run started 21 s ago (header: ${text.slice(0, 200)})`,
    );
    await sleep(2200);
    assert.notEqual(await panelText('#run-elapsed', 'Timeline'), elapsed, 'the elapsed time ticks');
    await screenshot('i42-timeline-live');
    // agreement view: κ on two items is flagged
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('loupe.showAgreement');
    const ag = await webviewText({
      title: 'Annotation Agreement',
      expect: /claim-support[\s\S]*Cohen's κ/,
      timeoutMs: 60_000,
    });
    assert.match(ag, /κ on n = 2 is not informative/);
    assert.match(ag, /⚠ n = 2: not informative/);
    await sleep(800);
    await screenshot('i42-agreement-small-n');
  });

  it('Documentation Search at 1000 px: Search and Open buttons whole, paths cut in the middle keeping the file name', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await runner({ action: 'viewport', width: 1000, height: 1000 });
    await runner({ action: 'palette', title: 'Loupe: Search Documentation' });
    await sleep(1500);
    await runner({ action: 'type', text: 'NCHS Data Brief No. 508' });
    await sleep(800);
    await runner({ action: 'press', key: 'Enter' });
    await webviewText({ title: 'Docs:', expect: /Index ready: \d+ files/, timeoutMs: 150_000 });
    await runner({ action: 'clickInWebview', selector: '#query', title: 'Docs:' });
    await runner({ action: 'type', text: 'BMXBMI body mass index' });
    await runner({ action: 'press', key: 'Enter' });
    await webviewText({ title: 'Docs:', expect: /BMX_L\.pdf/, timeoutMs: 30_000 });
    await runner({ action: 'clickInWebview', selector: '#hit-0', title: 'Docs:' });
    await webviewText({ title: 'Docs:', expect: /Open file/, timeoutMs: 30_000 });
    await sleep(800);
    await screenshot('i42-docsearch-1000');
    const whole = async (selector: string) => {
      const rs = await rects(selector, 'Docs:');
      assert.ok(rs.length, `${selector} shown`);
      for (const r of rs) {
        assert.ok(
          r.clip.right >= r.box.right - 0.5 && r.clip.left <= r.box.left + 0.5,
          `${selector} is clipped: box ${JSON.stringify(r.box)}, visible ${JSON.stringify(r.clip)}`,
        );
      }
    };
    await whole('#search');
    await whole('#open-file');
    await whole('#hit-0 .hit-file .base');
    await whole('#detail-file .base');
    assert.match(
      await runner<string>({ action: 'webviewText', title: 'Docs:', selector: '#hit-0 .hit-file .base' }),
      /BMX_L\.pdf/,
    );
    for (const sel of ['#hit-0 .hit-file .base', '#detail-file .base']) {
      const cut = await runner<string>({
        action: 'webviewEval',
        selector: sel,
        fn: '(el) => el.scrollWidth > el.clientWidth + 1 ? `${el.scrollWidth} > ${el.clientWidth}` : ""',
      });
      assert.equal(cut, '', `${sel}: the file name is cut by an ellipsis (${cut})`);
    }
    // no path runs into the unit beside it (in the list and in the detail header)
    const files = await rects('#results .hit-file', 'Docs:');
    const units = await rects('#results .hit-head .hit-unit', 'Docs:');
    files.forEach((f, k) =>
      assert.ok(
        f.box.right <= units[k]!.box.left + 0.5,
        `hit ${k}: its path (right ${f.box.right}) runs into its unit (left ${units[k]!.box.left})`,
      ),
    );
    const df = (await rects('#detail-file', 'Docs:'))[0]!;
    const du = (await rects('#detail-unit', 'Docs:'))[0]!;
    assert.ok(df.box.right <= du.box.left + 0.5, 'the detail path does not run into its unit');
  });
});
