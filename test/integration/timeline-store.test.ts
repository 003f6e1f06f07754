/**
 * An open Trajectory Timeline follows a switch of the run store (setting `loupe.store`: a SQLite file ↔ a PostgreSQL
 * team store, a real server started in a temp dir): a run the new store holds too is read again from it (here the team
 * copy differs: it was cancelled); a run it does not hold is replaced by a message in VS Code's words with a Show Runs
 * button that works by keyboard; switching back shows the run again in the same panel.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { openStoreAt } from '../../src/core/store/open.ts';
import type { StepRecord } from '../../src/core/store/records.ts';
import { seedFailureFixture } from '../helpers/failure-fixtures.ts';
import { startPg, type PgServer } from '../helpers/pg.ts';
import { hasRunner, pressUntil, runner, screenshot, webviewText } from './helpers/runner.ts';

describe('Timeline follows a switch of the run store', function () {
  this.timeout(180_000);
  let srv: PgServer | undefined;
  let url = '';
  let dir = '';
  let file = '';
  const RUN = 'ddr-model-a-mimic-e1';
  const LOCAL = 'timeline-local-only';
  const MODEL_USE = 'timeline-model-use';
  const own = { input: 100, output: 10, cached: 0 };
  const dec = { input: 700, output: 50, cached: 0 };
  const config = () => vscode.workspace.getConfiguration('loupe');
  const useStore = (v: string | undefined) => config().update('store', v, vscode.ConfigurationTarget.Global);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'loupe-tl-store-'));
    file = join(dir, 'local.sqlite');
    srv = await startPg({ fsync: 'off' });
    url = await srv.createDatabase('vscode_timeline'); // carries ?passwordEnv=: the extension host has the variable
    const local = await openStoreAt(file);
    await seedFailureFixture(local, join(dir, 'ws'));
    await local.createRun({
      id: LOCAL,
      suite: 'ddr',
      blockId: 'local-block',
      agent: 'llm',
      model: 'local-model',
      params: {},
      promptHash: 'h',
      toolSet: 'ddr',
      dataChecksums: {},
      loupeVersion: 't',
      sandbox: 'off',
      workspace: join(dir, 'ws'),
    });
    const at = new Date(Date.UTC(2026, 0, 1)).toISOString();
    const step: StepRecord = {
      // one step of the run only the file holds
      runId: LOCAL,
      index: 0,
      startedAt: at,
      endedAt: at,
      latencyMs: 120,
      toolMs: 5,
      assistant: { role: 'assistant', content: 'Only in the local file.' },
      toolCalls: [],
      extraMessages: [],
      usage: { input: 10, output: 2, cached: 0 },
      costUsd: null,
      finishReason: 'stop',
    };
    await local.commitStep(step);
    await local.updateRun(LOCAL, { status: 'finished' });
    // a step whose find_variables call asked the run's model (issue 25): the step's tokens include that call's
    await local.createRun({
      id: MODEL_USE,
      suite: 'longda',
      blockId: 'model-use-block',
      agent: 'llm',
      model: 'm',
      params: {},
      promptHash: 'h',
      toolSet: 'longda',
      dataChecksums: {},
      loupeVersion: 't',
      sandbox: 'off',
      workspace: join(dir, 'ws'),
    });
    await local.commitStep({
      ...step,
      runId: MODEL_USE,
      usage: { input: own.input + dec.input, output: own.output + dec.output, cached: 0 },
      costUsd: 0.0021,
      assistant: { role: 'assistant', content: 'Which variables?' },
      toolCalls: [
        {
          id: 'fv',
          name: 'find_variables',
          argumentsText: '{"question":"anemia by sex"}',
          observation: 'Variables (best first):',
          isError: false,
          truncated: false,
          durationMs: 40,
          modelUse: { calls: 1, usage: dec, costUsd: 0.0019 },
        },
      ],
    });
    await local.updateRun(MODEL_USE, { status: 'finished' });
    await local.close();
    const team = await openStoreAt(url);
    await seedFailureFixture(team, join(dir, 'ws'));
    await team.commitStep({
      ...step,
      runId: RUN,
      index: 6,
      assistant: { role: 'assistant', content: 'A step only the team copy has.' },
    });
    await team.updateRun(RUN, { status: 'cancelled', statusReason: 'the team copy' });
    await team.close();
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await useStore(undefined);
    await vscode.commands.executeCommand('loupe.refreshRuns');
    srv?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reloads the run from the new store, says so when the run is not there, and shows it again after switching back', async function () {
    if (!hasRunner()) this.skip();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await useStore(file);
    await vscode.commands.executeCommand('loupe.openTimeline', RUN);
    let text = await webviewText({ title: 'Timeline: e1', expect: /finished[\s\S]*6 steps/, timeoutMs: 60_000 });
    assert.doesNotMatch(text, /cancelled/);

    // to the team store: the same run id there is the team's copy (cancelled, one step more), its steps read again
    await useStore(url);
    await webviewText({
      title: 'Timeline: e1',
      expect: /cancelled[\s\S]*7 steps[\s\S]*A step only the team copy has/,
      timeoutMs: 30_000,
    });
    await screenshot('timeline-store-switched');

    // back to the file: the local copy again, and a second timeline of a run only the file holds
    await useStore(file);
    text = await webviewText({ title: 'Timeline: e1', expect: /finished[\s\S]*6 steps/, timeoutMs: 30_000 });
    assert.doesNotMatch(text, /A step only the team copy has/);
    await vscode.commands.executeCommand('loupe.openTimeline', LOCAL);
    await webviewText({ title: 'Timeline: local-block', expect: /local-model[\s\S]*1 steps?/, timeoutMs: 60_000 });

    // to the team store, which does not hold it: a message in the panel, no command-line flags, Show Runs by keyboard
    await useStore(url);
    text = await webviewText({ title: 'Timeline: local-block', expect: /Run not available/, timeoutMs: 30_000 });
    assert.match(text, new RegExp(`Run ${LOCAL} is not in the run store now in use \\(postgres://`));
    assert.match(
      text,
      /set Loupe: Store back to that store to see it here, or open one of this store's runs from the Runs view/,
    );
    assert.doesNotMatch(text, /--\w|password=/);
    await new Promise((r) => setTimeout(r, 400));
    await screenshot('timeline-store-run-missing');
    await vscode.commands.executeCommand('workbench.action.closeSidebar');
    // into the panel (a click on its heading), then Tab to the button and Enter, as a keyboard user does
    await runner({ action: 'clickInWebview', title: 'Timeline: local-block', selector: '#unavailable h1' });
    await runner({ action: 'press', key: 'Tab' });
    const sidebar = () =>
      runner<string>({ action: 'workbenchText', selector: '[id="workbench.parts.sidebar"]' }).catch(() => '');
    // the Runs view lists the team store's 12 runs (the file holds 13)
    await pressUntil('Enter', async () => /ddr\s*12 runs/.test(await sidebar()), 'Show Runs', {
      shotPrefix: 'timeline-store',
      explain: async () => `sidebar: ${(await sidebar()).slice(0, 300)}`,
    });
    // the other timeline followed too
    await webviewText({
      title: 'Timeline: e1',
      expect: /cancelled[\s\S]*A step only the team copy has/,
      timeoutMs: 30_000,
    });

    // back: the same panel shows the run again
    await useStore(file);
    text = await webviewText({
      title: 'Timeline: local-block',
      expect: /local-model[\s\S]*1 steps?/,
      timeoutMs: 30_000,
    });
    assert.doesNotMatch(text, /Run not available/);
    await screenshot('timeline-store-switched-back');
  });

  it("shows the part of a step's tokens its tool's own model call used", async function () {
    if (!hasRunner()) this.skip();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await useStore(file);
    await vscode.commands.executeCommand('loupe.openTimeline', MODEL_USE, 0);
    const text = await webviewText({ title: 'Timeline: model-use-block', expect: /Step 1 ·/, timeoutMs: 60_000 });
    assert.match(
      text,
      new RegExp(
        `Step 1 · ${own.input + dec.input} in / ${own.output + dec.output} out tokens \\(incl\\. ${dec.input} in / ${dec.output} out by find_variables\\)`,
      ),
    );
    assert.match(
      text,
      new RegExp(`find_variables\\s*· 40 ms · its model call: ${dec.input} in / ${dec.output} out tokens, \\$0\\.0019`),
    );
    await screenshot('timeline-tool-model-use');
  });
});
