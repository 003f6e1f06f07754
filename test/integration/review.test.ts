/**
 * Side-by-side review (issue 16) in the real VS Code: two runs of an AnalystBench-style block (reports whose numbers
 * come from notebook cells) are compared blind — aligned section by section, a number's source cell opened from the
 * report, three criteria and the overall preference voted by keyboard, the runs revealed after the vote; two BLADE
 * runs of hurricane are compared aligned by decision type; the ranking view shows ratings with CIs.
 * Screenshots: review-aligned, review-source-cell, review-revealed, review-blade, review-blade-pasted-submission, review-ranking.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { annotationStoreOf } from '../../src/core/annotations/index.ts';
import { leftSideFor, pairItemId, type PairwiseVerdict } from '../../src/core/review/pairwise.ts';
import type { KernelCellRecord } from '../../src/core/store/records.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import { HURRICANE_SUBMISSION, writeAnalystbenchDemo } from '../helpers/fixtures.ts';
import { call, startScriptedLlm } from '../helpers/scripted-llm.ts';
import { cli, hasRunner, pressUntil as helperPressUntil, runner, screenshot, webviewText } from './helpers/runner.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const shared = () => process.env.LOUPE_SHARED ?? join(process.env.LOUPE_REPO_ROOT ?? process.cwd(), '..', 'shared');
const TITLE = 'Review:';
const RUBRIC = ['Accuracy', 'Use of evidence', 'Clarity'];

const panelText = (selector: string, title = TITLE) =>
  runner<string>({ action: 'webviewText', title, selector }, 15_000).catch(() => '');

const pressUntil = (key: string, effect: () => Promise<boolean>, what: string) =>
  helperPressUntil(key, effect, what, {
    shotPrefix: 'review',
    explain: async () => `message '${await panelText('#message')}'`,
  });

/**
 * Votes the pair on screen by keyboard: one key per criterion, j to the next (a vote keeps the highlight, issue 42),
 * then the overall preference, then Ctrl+Enter.
 */
async function voteWithKeys(criteria: string[], keys: string[]): Promise<void> {
  await runner({ action: 'clickInWebview', title: TITLE, selector: '#queue-name' }); // focus the panel's document
  for (const [i, k] of keys.entries()) {
    if (i > 0) {
      await pressUntil(
        'j',
        async () =>
          (await panelText('.vote-row.active')).includes(criteria[i] === 'overall' ? 'Overall' : criteria[i]!),
        `j to ${criteria[i]}`,
      );
    }
    await pressUntil(
      k,
      async () => (await panelText(`.vote-row[data-criterion="${criteria[i]}"] .opt.on`)) !== '',
      `choice ${i + 1}`,
    );
  }
  await pressUntil('Control+Enter', async () => /Vote saved/.test(await panelText('#message')), 'submit');
}

const cell = (runId: string, seq: number, code: string, stdout: string): KernelCellRecord => ({
  runId,
  stepIndex: seq,
  seq,
  code,
  status: 'ok',
  stdout,
  stderr: '',
  result: null,
  error: null,
  tables: [],
  figures: [],
  durationMs: 5,
  replay: false,
});

describe('Side-by-side review', function () {
  this.timeout(600_000);
  let storePath = '';
  const blade: string[] = [];
  const cfg = () => vscode.workspace.getConfiguration('loupe');

  before(async function () {
    if (!hasRunner()) this.skip();
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    storePath = join(cfg().get<string>('runsDirectory') ?? '', 'runs.sqlite');
    await cfg().update('annotator', 'reviewer-1', vscode.ConfigurationTarget.Global);
    await cfg().update('annotation.reviewersPerItem', 1, vscode.ConfigurationTarget.Global);
    await cfg().update('review.rubric', RUBRIC, vscode.ConfigurationTarget.Global);
    // Two AnalystBench-style runs of one block: reports whose numbers were computed in the runs' notebook cells
    const dir = mkdtempSync(join(tmpdir(), 'loupe-review-int-'));
    const suite = writeAnalystbenchDemo(join(dir, 'ab'));
    const reports: Record<string, string> = {
      'rv-ab-1':
        '# Obesity brief\n\nAdult obesity was 40.3% overall.\n\n## By sex\n\nMen 39.2% and women 41.3%; the gap is small.\n\n## Method\n\nWeighted estimates from the survey table. It doubled since 1990.\n',
      'rv-ab-2':
        '# Obesity brief\n\nAdult obesity was 42.0% overall.\n\n## By sex\n\nMen 39.2% and women 44.1%.\n\n## Trends\n\nSevere obesity rose to 9.2%.\n',
    };
    const st = openStore(storePath);
    try {
      for (const [id, model] of [
        ['rv-ab-1', 'writer-a'],
        ['rv-ab-2', 'writer-b'],
      ] as const) {
        // a run's workspace lies in the runs folder, as a real run's (a recorded folder elsewhere is never read, issue 36)
        const ws = join(cfg().get<string>('runsDirectory') ?? '', id, 'workspace');
        mkdirSync(ws, { recursive: true });
        writeFileSync(join(ws, 'report.md'), reports[id]!);
        await st.createRun({
          id,
          suite: 'analystbench',
          blockId: 'demo',
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
      await st.insertCell(
        cell(
          'rv-ab-1',
          0,
          "t = pd.read_csv('table.csv')\nprint(t.prevalence.round(4).to_string())",
          'overall    0.4031\nmen        0.3920\nwomen      0.4129',
        ),
      );
      await st.insertCell(cell('rv-ab-2', 0, 'print(est)', 'overall 0.42\nmen 0.392\nwomen 0.441'));
    } finally {
      await st.close();
    }
    // Two BLADE runs of hurricane (real data), scripted analyses that differ in the model
    const other = {
      ...HURRICANE_SUBMISSION,
      model_code: "def model(df):\n    return smf.ols('log_deaths ~ masfem + min + wind', data=df).fit()\n",
    };
    for (const [model, sub] of [
      ['analyst-a', HURRICANE_SUBMISSION],
      ['analyst-b', other],
    ] as const) {
      // analyst-b pastes its submission into its message as models do (issue 22: it must not read as raw JSON)
      const words =
        model === 'analyst-b' ? `Submitting my analysis:\n\n\`\`\`json\n${JSON.stringify(sub)}\n\`\`\`` : 'Submit.';
      const llm = await startScriptedLlm({
        script: [{ content: words, toolCalls: [call('submit_analysis', sub)] }, { content: 'done' }],
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
          model,
          '--base-url',
          llm.baseUrl,
          '--json',
        ]);
        assert.equal(r.rc, 0, r.err);
        blade.push((JSON.parse(r.out.trim().split('\n').pop()!) as { runId: string }).runId);
      } finally {
        await llm.close();
      }
    }
  });

  after(async () => {
    for (const k of ['annotator', 'annotation.reviewersPerItem', 'review.rubric']) {
      await cfg().update(k, undefined, vscode.ConfigurationTarget.Global);
    }
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('two AnalystBench runs side by side: aligned, numbers traced to cells, blind vote of 3 criteria by keyboard, then revealed', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    // as from the Runs view with two runs selected
    const queueId = await vscode.commands.executeCommand<string>('loupe.compareRuns', { run: { id: 'rv-ab-1' } }, [
      { run: { id: 'rv-ab-1' } },
      { run: { id: 'rv-ab-2' } },
    ]);
    assert.ok(queueId, 'a review queue was opened');
    const text = await webviewText({ title: TITLE, expect: /Output A[\s\S]*Output B/, timeoutMs: 60_000 });
    assert.match(text, /blind until you vote/);
    assert.doesNotMatch(text, /writer-a|writer-b|rv-ab-/, 'runs hidden before the vote');
    // aligned: both have "By sex"; "Method" and "Trends" only on one side each
    const rows = await panelText('#aligned');
    assert.match(rows, /By sex[\s\S]*By sex/);
    assert.match(rows, /no “(Method|Trends)” section in this output/);
    // numbers traced: 40.3% → 0.4031 (cell 1 of run 1); "1990" and "9.2%" have no source; 41.3 vs 44.1 (women) differ
    const left = leftSideFor(pairItemId('demo', 'rv-ab-1', 'rv-ab-2'), 'reviewer-1');
    const leftRun = left === 'A' ? 'rv-ab-1' : 'rv-ab-2';
    const heads = `${await panelText('#head-left')} | ${await panelText('#head-right')}`;
    assert.match(heads, /3 of 4 numbers traced[\s\S]*\|[\s\S]*3 of 4 numbers traced/, heads);
    assert.notEqual(await panelText('.loupe-num.differ'), '', 'a differing number is highlighted');
    assert.notEqual(await panelText('.loupe-num.untraced'), '', 'a number with no source is marked');
    await screenshot('review-aligned');
    // a traced number opens its cell in the run's notebook
    await runner({ action: 'clickInWebview', title: TITLE, selector: '.rv-cell.left .loupe-num.traced' });
    const notebookOpen = () => vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => /notebook/i.test(t.label)));
    for (let i = 0; i < 40 && !notebookOpen(); i++) await sleep(250);
    assert.ok(notebookOpen(), 'the source cell opened in the run notebook');
    await sleep(1500);
    await screenshot('review-source-cell');
    await vscode.window.tabGroups.close(
      vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => /notebook/i.test(t.label)),
      true,
    );
    await sleep(500);
    // blind vote by keyboard: Accuracy a (left), Use of evidence b (right), Clarity t (tie), overall a (left)
    await voteWithKeys([...RUBRIC, 'overall'], ['a', 'b', 't', 'a']);
    await webviewText({ title: TITLE, expect: /Vote saved/ });
    assert.match(await panelText('#revealed-left'), leftRun === 'rv-ab-1' ? /writer-a/ : /writer-b/);
    await screenshot('review-revealed');
    const ann = annotationStoreOf(openStore(storePath));
    const votes = await ann.annotations(pairItemId('demo', 'rv-ab-1', 'rv-ab-2'));
    assert.equal(votes.length, 1);
    const v = votes[0]!.verdict as PairwiseVerdict;
    assert.equal(votes[0]!.annotator, 'reviewer-1');
    assert.equal(v.shownLeft, left);
    const other = left === 'A' ? 'B' : 'A';
    assert.deepEqual(v.criteria, [
      { criterion: 'Accuracy', choice: left },
      { criterion: 'Use of evidence', choice: other },
      { criterion: 'Clarity', choice: 'tie' },
    ]);
    assert.equal(v.overall, left);
  });

  it('two BLADE runs aligned by decision type; the ranking view shows ratings with CIs', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const queueId = await vscode.commands.executeCommand<string>('loupe.openPairwiseReview', undefined, [
      { run: { id: blade[0] } },
      { run: { id: blade[1] } },
    ]);
    assert.ok(queueId);
    const text = await webviewText({ title: TITLE, expect: /Output A[\s\S]*Output B/, timeoutMs: 60_000 });
    assert.match(text, /hurricane/);
    const rows = await panelText('#aligned');
    assert.match(rows, /Conceptual variables[\s\S]*Conceptual variables/i);
    assert.match(rows, /Model[\s\S]*Model/);
    // the submission analyst-b pasted into its words reads as sections (the timeline's renderer), not raw JSON
    assert.doesNotMatch(rows, /"transform_code"|"conceptual_variables"|\\n/, 'no raw submission JSON');
    assert.match(
      rows,
      /Conceptual variables[\s\S]*Description\s+Type\s+Columns[\s\S]*femininity of the hurricane name\s+IV\s+masfem[\s\S]*Transform code[\s\S]*def transform\(df\):[\s\S]*Model code/,
    );
    await screenshot('review-blade');
    // (a click scrolls the conclusion into view)
    await runner({ action: 'clickInWebview', title: TITLE, selector: '.rv-cell[data-key="conclusion"] .arg-section' });
    await screenshot('review-blade-pasted-submission');
    await voteWithKeys([...RUBRIC, 'overall'], ['b', 'b', 'b', 'b']);
    // the Runs view's re-score against a ground-truth version (issue 17): the shipped one, version 0 (the BLADE
    // decisions suite may have saved newer versions of hurricane in this store: the pick is filtered to 'shipped')
    const rs0 = openStore(storePath);
    const bladeRun = (await rs0.getRun(blade[0]!))!;
    await rs0.close();
    const rescored = vscode.commands.executeCommand<string | undefined>('loupe.rescoreRunGroundTruth', {
      run: bladeRun,
    });
    await sleep(1500);
    await runner({ action: 'type', text: 'shipped' });
    await sleep(300);
    await runner({ action: 'press', key: 'Enter' });
    const line = await rescored;
    assert.match(line ?? '', /cvar|transform|model/i, `re-score summary: ${line}`);
    const rs1 = openStore(storePath);
    try {
      const kept = (await rs1.scores.list(blade[0]!)).map((x) => (x.options as Record<string, unknown>).ground_truth);
      assert.ok(kept.includes('shipped'), `scores of ${blade[0]}: ${kept.join(', ')}`);
    } finally {
      await rs1.close();
    }
    await vscode.commands.executeCommand('loupe.showPairwiseRanking');
    const ranking = await webviewText({ title: 'Pairwise Ranking', expect: /Rating[\s\S]*95% CI/, timeoutMs: 60_000 });
    // one benchmark at a time (players of different benchmarks are never compared): AnalystBench first (ties by name)
    assert.match(ranking, /writer-a[\s\S]*writer-b|writer-b[\s\S]*writer-a/);
    assert.doesNotMatch(await panelText('#ranking', 'Pairwise Ranking'), /analyst-a|analyst-b/);
    assert.match(await panelText('#suite', 'Pairwise Ranking'), /blade/);
    assert.match(ranking, /\[\d+, \d+\]/);
    await sleep(1500);
    await screenshot('review-ranking');
    // the LLM pairwise judge of the settings, asked in both orders: it prefers the report with 42.0% wherever it is shown
    const judge = await startScriptedLlm({
      script: [
        (req) => {
          const u = String(req.messages.at(-1)?.content ?? '');
          const first = u.slice(u.indexOf('=== Output 1 ==='), u.indexOf('=== Output 2 ==='));
          const pick = first.includes('42.0%') ? 'first' : 'second';
          return {
            content: JSON.stringify({
              criteria: RUBRIC.map((criterion) => ({ criterion, choice: pick })),
              overall: pick,
              reason: 'scripted',
            }),
          };
        },
      ],
    });
    const saved = {
      models: cfg().inspect('models')?.globalValue,
      profile: cfg().inspect('judge.profile')?.globalValue,
    };
    try {
      await cfg().update(
        'models',
        [{ name: 'pair-judge', baseUrl: judge.baseUrl, model: 'pair-judge', temperature: 0 }],
        vscode.ConfigurationTarget.Global,
      );
      await cfg().update('judge.profile', 'pair-judge', vscode.ConfigurationTarget.Global);
      assert.equal(await vscode.commands.executeCommand('loupe.setApiKey', { profile: 'pair-judge', key: 'k' }), true);
      await runner({ action: 'clickInWebview', title: 'Pairwise Ranking', selector: '#judge-pairs' });
      // every AnalystBench pair of the store is judged: this suite's pair, and those an earlier suite queued in the same
      // store by any other suite; the scripted judge is consistent on each
      const status = await webviewText({
        title: 'Pairwise Ranking',
        expect: /(\d+) pairs? judged by llm:pair-judge; both orders agreed on \1\b/,
        timeoutMs: 60_000,
      });
      const n = Number(/(\d+) pairs? judged by llm:pair-judge/.exec(status)?.[1]);
      assert.ok(n >= 1, status);
      assert.match(status, new RegExp(`position consistency \\(both orders agree\\): ${n}/${n}`));
      assert.match(status, /LLM pairwise judge vs human resolution \(overall\): \d+ pair\(s\), agreement \d+\.\d%/);
      await screenshot('review-ranking-llm');
    } finally {
      await judge.close();
      await cfg().update('models', saved.models, vscode.ConfigurationTarget.Global);
      await cfg().update('judge.profile', saved.profile, vscode.ConfigurationTarget.Global);
    }
  });
});
