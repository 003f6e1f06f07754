/**
 * Issue 22: the existing surfaces as an expert uses them, in the real VS Code. A LongDA block (NCHS Data Brief 508,
 * real ground truth from $LOUPE_SHARED) answered by repeats that get queries right, partly right and wrong: the
 * timeline marks each answer step with its verdict and shows the expected value only when asked; the Runs view shows
 * each run's headline metric; the Results drill-down lists each repeat's answer against the truth with the spread.
 * Screenshots: surfaces-timeline-verdicts, surfaces-timeline-expected, surfaces-results-drilldown, ...
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { loadLongdaGroundTruth } from '../../src/core/benchmarks/longda/eval.ts';
import { parseAnswerArg } from '../../src/core/benchmarks/longda/toolset.ts';
import type { StepRecord } from '../../src/core/store/records.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import { hasRunner, pressUntil as helperPressUntil, runner, screenshot, webviewText } from './helpers/runner.ts';

const shared = () => process.env.LOUPE_SHARED ?? join(process.env.LOUPE_REPO_ROOT ?? process.cwd(), '..', 'shared');
const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const TL = 'Timeline:';

const panelText = (selector: string, title?: string) => runner<string>({ action: 'webviewText', ...(title ? { title } : {}), selector }, 15_000).catch(() => '');
const pressUntil = (key: string, effect: () => Promise<boolean>, what: string) =>
  helperPressUntil(key, effect, what, { shotPrefix: 'surfaces', explain: async () => `detail '${(await panelText('#detail', TL)).slice(0, 300)}'` });

function answerStep(runId: string, index: number, q: string, v: number | number[]): StepRecord {
  const now = new Date(Date.now() + index * 1000).toISOString();
  return {
    runId, index, startedAt: now, endedAt: now, latencyMs: 800, toolMs: 20, assistant: { role: 'assistant', content: `Recording ${q}.` },
    toolCalls: [{ id: `c${index}`, name: 'answer', argumentsText: JSON.stringify({ action: 'add', q_id: q, answer: v }), observation: `Answer for ${q} recorded.`, isError: false, truncated: false, durationMs: 20 }],
    extraMessages: [], usage: { input: 1200, output: 80, cached: 0 }, costUsd: null, finishReason: 'tool_calls',
  };
}

describe('Surfaces as an expert uses them (issue 22)', function () {
  this.timeout(600_000);
  let storePath = '';
  const cfg = () => vscode.workspace.getConfiguration('loupe');
  const root = () => join(shared(), 'data', 'longda', 'benchmark');
  const gt = () => loadLongdaGroundTruth(join(root(), 'benchmark.csv')).filter((q) => q.source === 'NCHS Data Brief No. 508');
  const truth = (i: number) => (parseAnswerArg(gt()[i]!.answer) as { value: number | number[] }).value;
  const off = (v: number | number[]): number | number[] => (Array.isArray(v) ? v.map((x) => x * 3 + 10) : v * 3 + 10);

  before(async function () {
    if (!hasRunner()) this.skip();
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    storePath = join(cfg().get<string>('runsDirectory') ?? '', 'runs.sqlite');
    const st = openStore(storePath);
    try {
      // Three repeats of one block: q1 right/right/wrong, q2 (a list) partly right/right/right, q3 wrong/right/right.
      const q2 = truth(1) as number[];
      const plans: Array<Array<number | number[]>> = [
        [truth(0), [q2[0]!, ...q2.slice(1).map((x) => x * 3 + 10)], off(truth(2))],
        [truth(0), truth(1), truth(2)],
        [off(truth(0)), truth(1), truth(2)],
      ];
      for (const [k, plan] of plans.entries()) {
        const id = `sf-longda-${k + 1}`;
        await st.createRun({ id, suite: 'longda', blockId: BLOCK, agent: 'llm', model: 'analyst-model', params: { suiteRoot: root(), repeat: k + 1 }, promptHash: 'h', toolSet: 'longda', dataChecksums: {}, loupeVersion: 't', sandbox: 'off', workspace: join(storePath, '..', id) });
        await st.updateRun(id, { status: 'running', startedAt: new Date().toISOString() });
        for (const [i, v] of plan.entries()) {
          const q = gt()[i]!.qId;
          await st.commitStep(answerStep(id, i, q, v), { answers: [{ runId: id, queryId: q, answer: v, raw: JSON.stringify(v), stepIndex: i }] });
        }
        await st.updateRun(id, { status: 'finished', endedAt: new Date().toISOString() });
      }
    } finally {
      await st.close();
    }
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('timeline: each answer step shows right / partial / wrong; the expected value stays hidden until asked', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('loupe.openRun', 'sf-longda-1');
    const text = await webviewText({ title: TL, expect: /1 right · 1 partial · 1 wrong/, timeoutMs: 60_000 });
    assert.match(text, /scored live against the ground truth/);
    const rows = await panelText('#steps', TL);
    assert.match(rows, /✓ right[\s\S]*◐ partial[\s\S]*✗ wrong/, rows);
    // the wrong answer: its verdict and what was given, not the truth
    await runner({ action: 'clickInWebview', title: TL, selector: '.tl-row[data-step="2"]' });
    const detail = await webviewText({ title: TL, expect: /Answers recorded at this step[\s\S]*wrong/ });
    const expected = JSON.stringify(truth(2));
    assert.ok(!detail.includes(`expected ${expected}`), 'the expected value is hidden until asked');
    await screenshot('surfaces-timeline-verdicts');
    await runner({ action: 'clickInWebview', title: TL, selector: '.show-expected' });
    const shown = await webviewText({ title: TL, expect: /expected \[|expected \d/ });
    assert.ok(shown.includes(`expected ${expected}`), shown.slice(0, 600));
    await screenshot('surfaces-timeline-expected');
    // by keyboard: ↑ selects the partly right step
    await runner({ action: 'clickInWebview', title: TL, selector: '.tl-row.selected' });
    await pressUntil('ArrowUp', async () => /partial/.test(await panelText('#step-answers', TL)), 'ArrowUp to the partial answer');
  });
});
