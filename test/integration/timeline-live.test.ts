/**
 * Issue 23 (perf, live timeline): a step a run in this window commits reaches its open Trajectory Timeline without
 * waiting for the store poll. The timelines of this suite poll once an hour (test hook `loupe.test.setTimelinePollMs`),
 * so only the run session's push can bring a row. A scripted model on 127.0.0.1 answers each turn only when the test
 * opens its gate, after it saw the step before it in the timeline: every row appears while the run is still running,
 * in order, once. After the run store is switched away and back, the same panel shows the run's rows again, once each,
 * and a new run's timeline still gets its steps pushed. Screenshots of the live timeline.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { openStore } from '../../src/core/store/run-store.ts';
import { call, startScriptedLlm, type ScriptedLlm, type Turn } from '../helpers/scripted-llm.ts';
import { hasRunner, screenshot, webviewText } from './helpers/runner.ts';

const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const TITLE = `Timeline: ${BLOCK}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** What step `k` of a run leaves in its timeline row (the python call's code, as the row summarises it). */
const mark = (run: string, k: number) => `live ${run} step ${k}`;

/** Turns that wait for their gate: turn k answers once `open(k)` was called. */
function gated(run: string, steps: number): { script: Turn[]; open(k: number): void } {
  const opens: (() => void)[] = [];
  const gates = Array.from({ length: steps + 1 }, () => new Promise<void>((r) => opens.push(r)));
  const script: Turn[] = gates.map((g, k) => async () => {
    await g;
    return k < steps
      ? { content: `Step ${k}.`, toolCalls: [call('python', { code: `print(${JSON.stringify(mark(run, k))})` })] }
      : { content: 'Done.', toolCalls: [call('final_answer', { summary: `${run} done` })] };
  });
  return { script, open: (k) => opens[k]!() };
}

/** The row's summary of step `k`'s python call. */
const rowOf = (run: string, k: number) => `python(code=print(${JSON.stringify(mark(run, k))}))`;
const rowRe = (run: string, k: number) => new RegExp(rowOf(run, k).replace(/[()"]/g, '\\$&'));

/** Where each step's row stands in the timeline's text (-1: absent) and how many rows it has. */
function rows(text: string, run: string, steps: number): { at: number[]; counts: number[] } {
  const at: number[] = [];
  const counts: number[] = [];
  for (let k = 0; k < steps; k++) {
    const row = rowOf(run, k);
    at.push(text.indexOf(row));
    counts.push(text.split(row).length - 1);
  }
  return { at, counts };
}

describe('Timeline gets the steps of a run in this window pushed (issue 23)', function () {
  this.timeout(420_000);
  let a: ScriptedLlm | undefined;
  let b: ScriptedLlm | undefined;
  let savedModels: unknown;
  let other = '';
  const cfg = () => vscode.workspace.getConfiguration('loupe');
  const storePath = () => join(cfg().get<string>('runsDirectory') ?? '', 'runs.sqlite');
  const root = () =>
    (cfg().get<{ suite: string; root: string }[]>('suites') ?? []).find((s) => s.suite === 'longda')?.root;

  async function until(what: string, ok: () => Promise<boolean>, ms = 120_000): Promise<void> {
    const t0 = Date.now();
    while (!(await ok())) {
      if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
      await sleep(200);
    }
  }

  async function runOf(model: string): Promise<{ id: string; status: string } | undefined> {
    const s = openStore(storePath());
    try {
      return (await s.listRuns({ blockId: BLOCK })).find((r) => r.model === model);
    } finally {
      await s.close();
    }
  }

  /** Opens each gate after the row before it showed in the live timeline; returns the text with every row. */
  async function drive(run: string, model: string, gates: { open(k: number): void }, steps: number): Promise<string> {
    await until(
      `the run on ${model} and its timeline`,
      async () => Boolean(await runOf(model)) && /running/.test(await webviewText({ title: TITLE }).catch(() => '')),
    );
    for (let k = 0; k < steps; k++) {
      gates.open(k);
      // bounded: with the hour-long poll only the push brings the row; the model's next turn waits for this check
      const text = await webviewText({ title: TITLE, expect: rowRe(run, k), timeoutMs: 60_000 });
      assert.match(text, /running/, `step ${k} arrived while the run was running`);
      const r = rows(text, run, steps);
      assert.deepEqual(
        r.counts,
        Array.from({ length: steps }, (_, i) => (i <= k ? 1 : 0)),
        `rows after step ${k}: each once, none ahead; timeline: ${text.slice(0, 1500)}`,
      );
      assert.deepEqual(
        r.at.slice(0, k + 1),
        [...r.at.slice(0, k + 1)].sort((x, y) => x - y),
        'rows in step order',
      );
      if (k === 1) {
        await sleep(400);
        await screenshot(`timeline-live-${run}`);
      }
    }
    gates.open(steps);
    return webviewText({ title: TITLE, expect: /finished/, timeoutMs: 120_000 });
  }

  before(async function () {
    if (!hasRunner()) this.skip();
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    savedModels = cfg().inspect('models')?.workspaceValue;
    other = mkdtempSync(join(tmpdir(), 'loupe-tl-live-'));
  });

  after(async () => {
    await vscode.commands.executeCommand('loupe.test.setTimelinePollMs');
    await cfg().update('store', undefined, vscode.ConfigurationTarget.Global);
    await cfg().update('models', savedModels, vscode.ConfigurationTarget.Workspace);
    await a?.close();
    await b?.close();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('workbench.action.closePanel');
    if (other) rmSync(other, { recursive: true, force: true });
  });

  it('shows each step of a live run at once with an hour-long poll, in order, once; again after a store switch', async () => {
    const STEPS = 3;
    const ga = gated('a', STEPS);
    const gb = gated('b', 2);
    a = await startScriptedLlm({ script: ga.script, models: ['scripted-live-a'] });
    b = await startScriptedLlm({ script: gb.script, models: ['scripted-live-b'] });
    const models = (cfg().get<{ name: string }[]>('models') ?? []).filter((m) => !/^scripted-live-/.test(m.name));
    await cfg().update(
      'models',
      [
        ...models,
        { name: 'scripted-live-a', baseUrl: a.baseUrl, model: 'scripted-live-a' },
        { name: 'scripted-live-b', baseUrl: b.baseUrl, model: 'scripted-live-b' },
      ],
      vscode.ConfigurationTarget.Workspace,
    );
    await vscode.commands.executeCommand('loupe.test.setTimelinePollMs', 3_600_000);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');

    void vscode.commands.executeCommand('loupe.runBenchmarkBlock', {
      suite: 'longda',
      root: root(),
      blockId: BLOCK,
      profile: 'scripted-live-a',
      repeats: 1,
    });
    let text = await drive('a', 'scripted-live-a', ga, STEPS);
    assert.deepEqual(rows(text, 'a', STEPS).counts, [1, 1, 1]);
    const runA = (await runOf('scripted-live-a'))!;
    assert.equal(runA.status, 'finished');

    // another store and back: the panel reads the run again from the store, each row once
    await cfg().update('store', join(other, 'runs.sqlite'), vscode.ConfigurationTarget.Global);
    await webviewText({ title: TITLE, expect: /Run not available/, timeoutMs: 30_000 });
    await cfg().update('store', undefined, vscode.ConfigurationTarget.Global);
    text = await webviewText({
      title: TITLE,
      expect: new RegExp(`finished[\\s\\S]*${rowRe('a', STEPS - 1).source}`),
      timeoutMs: 30_000,
    });
    assert.deepEqual(rows(text, 'a', STEPS).counts, [1, 1, 1]);

    // a run started after the switch (the store opened again): its timeline still gets its steps pushed
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    void vscode.commands.executeCommand('loupe.runBenchmarkBlock', {
      suite: 'longda',
      root: root(),
      blockId: BLOCK,
      profile: 'scripted-live-b',
      repeats: 1,
    });
    text = await drive('b', 'scripted-live-b', gb, 2);
    assert.deepEqual(rows(text, 'b', 2).counts, [1, 1]);
    assert.equal(
      rows(text, 'a', STEPS).counts.reduce((x, y) => x + y),
      0,
      "run a's rows are not in run b's timeline",
    );
    await sleep(400);
    await screenshot('timeline-live-finished');
  });

  it('a run in progress keeps writing to its store when loupe.store is switched meanwhile, and finishes there', async () => {
    const STEPS = 3;
    const gc = gated('c', STEPS);
    const c = await startScriptedLlm({ script: gc.script, models: ['scripted-live-c'] });
    try {
      const models = (cfg().get<{ name: string }[]>('models') ?? []).filter((m) => m.name !== 'scripted-live-c');
      await cfg().update(
        'models',
        [...models, { name: 'scripted-live-c', baseUrl: c.baseUrl, model: 'scripted-live-c' }],
        vscode.ConfigurationTarget.Workspace,
      );
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      void vscode.commands.executeCommand('loupe.runBenchmarkBlock', {
        suite: 'longda',
        root: root(),
        blockId: BLOCK,
        profile: 'scripted-live-c',
        repeats: 1,
      });
      await until(
        'the run on scripted-live-c and its timeline',
        async () =>
          Boolean(await runOf('scripted-live-c')) &&
          /running/.test(await webviewText({ title: TITLE }).catch(() => '')),
      );
      gc.open(0);
      await webviewText({ title: TITLE, expect: rowRe('c', 0), timeoutMs: 60_000 });
      // the user switches the store while the run is still running: views follow the new store at once ...
      await cfg().update('store', join(other, 'runs.sqlite'), vscode.ConfigurationTarget.Global);
      await webviewText({ title: TITLE, expect: /Run not available/, timeoutMs: 30_000 });
      for (let k = 1; k <= STEPS; k++) gc.open(k);
      // ... and the run's remaining steps still go to the store it started in, where it finishes
      await until(
        'run c finished in its own store',
        async () => !['pending', 'running'].includes((await runOf('scripted-live-c'))?.status ?? 'pending'),
        120_000,
      );
      const run = (await runOf('scripted-live-c'))!;
      const s = openStore(storePath());
      let steps: number;
      try {
        steps = (await s.getSteps(run.id)).length;
      } finally {
        await s.close();
      }
      assert.equal(run.status, 'finished', `run c ended ${run.status} after the store switch`);
      assert.equal(steps, STEPS + 1);
      await cfg().update('store', undefined, vscode.ConfigurationTarget.Global);
      const text = await webviewText({
        title: TITLE,
        expect: new RegExp(`finished[\\s\\S]*${rowRe('c', STEPS - 1).source}`),
        timeoutMs: 30_000,
      });
      assert.deepEqual(rows(text, 'c', STEPS).counts, [1, 1, 1]);
    } finally {
      await c.close();
    }
  });
});
