/**
 * Issue 24 in the real VS Code: "Loupe: Evaluate Chat Agent on Block" makes the block's task workspace (no hidden file,
 * no link, nothing naming the suite root) and registers the block's MCP server through `vscode.lm`; the server
 * definition the editor would start (command, arguments, environment, working folder) is started with the MCP SDK's
 * client, which solves part of NHANES Data Brief 508; the run it records is in this window's store, shows in the Runs
 * view, and opens in the timeline (screenshot). Forking that run from its timeline: the profile pick says Loupe's own
 * agent continues the fork (screenshot); the fork replays the client's steps without model calls and the scripted
 * model (OpenAI-compatible, 127.0.0.1) continues.
 */
import assert from 'node:assert/strict';
import { lstatSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { openStore } from '../../src/core/store/run-store.ts';
import { hasRunner, runner, screenshot, webviewText } from './helpers/runner.ts';
import { call, startScriptedLlm } from '../helpers/scripted-llm.ts';

const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const Q = (n: number) => `NHANES_NCHS Data Brief No. 508_q${n}`;

interface Served {
  suite: string;
  root: string;
  blockId: string;
  workspace: string;
  label: string;
  command: string;
  args: string[];
}

function walk(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

describe('Evaluate Chat Agent on Block: the block served over MCP, recorded and shown (issue 24)', function () {
  this.timeout(300_000);
  let served: Served;
  let runId = '';
  const root = () =>
    (vscode.workspace.getConfiguration('loupe').get<{ suite: string; root: string }[]>('suites') ?? []).find(
      (s) => s.suite === 'longda',
    )!.root;

  before(async function () {
    if (!hasRunner()) this.skip();
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
  });

  it("registers the block's server through vscode.lm and makes a task workspace without hidden files or the suite path", async () => {
    assert.equal(
      typeof vscode.lm.registerMcpServerDefinitionProvider,
      'function',
      'the editor offers the MCP server definition API',
    );
    served = (await vscode.commands.executeCommand<Served | undefined>('loupe.evaluateChatAgent', {
      suite: 'longda',
      root: root(),
      blockId: BLOCK,
      open: false,
    }))!;
    assert.ok(served, 'the command returned the served block');
    assert.match(served.label, /^Loupe: /);
    assert.deepEqual(served.args.slice(1, 8), ['mcp', '--suite', 'longda', '--root', root(), '--block', BLOCK]);
    const files = walk(served.workspace);
    assert.ok(files.some((f) => f.endsWith('TASK.md')));
    assert.ok(
      files.some((f) => f.endsWith('DEMO_L.xpt')),
      'the visible data is there',
    );
    assert.ok(!files.some((f) => /benchmark\.csv$/.test(f)), 'no hidden file');
    for (const f of files) {
      assert.ok(!lstatSync(f).isSymbolicLink(), `${f} is a link`);
      if (/\.(md|json|txt)$/.test(f)) assert.ok(!readFileSync(f, 'utf8').includes(root()), `${f} names the suite root`);
    }
  });

  it('the registered server, started as the editor would, records a run that shows in the Runs view and the timeline', async () => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
    const c = new Client({ name: 'vscode-agent-mode-test', version: '1.0' });
    await c.connect(
      new StdioClientTransport({
        command: served.command,
        args: served.args,
        env: { ...env, ELECTRON_RUN_AS_NODE: '1' },
        cwd: served.workspace,
        stderr: 'pipe',
      }),
    );
    const tools = (await c.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes('python') && tools.includes('final_answer'), tools.join());
    const out = await c.callTool({
      name: 'python',
      arguments: { code: "import pandas as pd\nd = pd.read_sas('data/Demographics/DEMO_L.xpt')\nprint(len(d))" },
    });
    assert.match(JSON.stringify(out), /\d{4,}/);
    await c.callTool({ name: 'answer', arguments: { action: 'add', q_id: Q(1), answer: 40.3 } });
    await c.callTool({ name: 'final_answer', arguments: { summary: 'q1' } });
    await c.close();
    const storePath = join(
      vscode.workspace.getConfiguration('loupe').get<string>('runsDirectory') ?? '',
      'runs.sqlite',
    );
    const s = openStore(storePath);
    try {
      const run = (await s.listRuns()).find((r) => r.agent === 'mcp:vscode-agent-mode-test/1.0');
      assert.ok(run, "the run is in this window's store");
      runId = run.id;
      assert.equal(run.status, 'finished');
      assert.equal(run.tokens, null);
    } finally {
      await s.close();
    }
    await vscode.commands.executeCommand('loupe.refreshRuns');
    await vscode.commands.executeCommand('loupe.openTimeline', runId);
    const tl = await webviewText({ title: 'Timeline', expect: /final_answer/ });
    assert.match(tl, /tokens unknown/);
    // MCP runs cannot be given hints: the timeline says why, and the command records nothing
    const why = await webviewText({ title: 'Timeline', expect: /cannot be intervened on/ });
    assert.match(why, /external MCP client \(vscode-agent-mode-test\/1\.0\)/);
    await screenshot('mcp-run-timeline');
    // a step's detail: the tool call and its observation, token use unknown
    await runner({ action: 'clickInWebview', selector: '.tl-row[data-step="0"]', title: 'Timeline' });
    await webviewText({ title: 'Timeline', expect: /Step 1 · tokens unknown/ });
    await runner({ action: 'clickInWebview', selector: '.tl-row[data-step="1"]', title: 'Timeline' });
    assert.match(await webviewText({ title: 'Timeline', expect: /Step 2 · tokens unknown/ }), /answer/);
    await screenshot('mcp-run-step-detail');
    assert.equal(await vscode.commands.executeCommand('loupe.intervene', runId, 'try again'), undefined);
    const s2 = openStore(storePath);
    try {
      assert.deepEqual(await s2.getInterventions(runId), []);
    } finally {
      await s2.close();
    }
  });

  it("forks the MCP run from its timeline: Loupe's own agent continues after the client's replayed steps", async () => {
    const cfg = () => vscode.workspace.getConfiguration('loupe');
    const before = cfg().inspect('models')?.workspaceValue;
    const never = (): never => {
      throw new Error('a replayed step called the model');
    };
    const llm = await startScriptedLlm({
      script: [
        never,
        never,
        { content: 'Done.', toolCalls: [call('final_answer', { summary: 'q1 from the client' })] },
      ],
    });
    const storePath = join(cfg().get<string>('runsDirectory') ?? '', 'runs.sqlite');
    try {
      await cfg().update(
        'models',
        [{ name: 'scripted-mcp-fork', baseUrl: llm.baseUrl, model: 'scripted-mcp-fork', temperature: 0 }],
        vscode.ConfigurationTarget.Workspace,
      );
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      await vscode.commands.executeCommand('loupe.openTimeline', runId, 1);
      await webviewText({ title: 'Timeline', expect: /Fork from this step/ });
      await runner({ action: 'clickInWebview', selector: '#fork-step', title: 'Timeline' });
      let pick = '';
      for (let i = 0; i < 60 && !/continues the fork/.test(pick); i++) {
        await new Promise((r) => setTimeout(r, 500));
        pick = await runner<string>({ action: 'workbenchText', selector: '.quick-input-widget' }).catch(() => '');
      }
      assert.match(
        pick,
        /steps 1–2 were the MCP client vscode-agent-mode-test's calls; Loupe's own agent continues the fork, not the client/,
      );
      await screenshot('mcp-fork-profile-pick');
      await runner({ action: 'press', key: 'Escape' });
      const forkId = await vscode.commands.executeCommand<string>('loupe.forkRun', runId, 2, 'scripted-mcp-fork', '');
      assert.ok(forkId);
      assert.equal(llm.requests.length, 1, 'the two replayed steps made no model call');
      const s = openStore(storePath);
      try {
        const fork = (await s.getRun(forkId))!;
        assert.equal(fork.status, 'finished', fork.statusReason ?? '');
        assert.deepEqual(fork.params.forkOf, { runId, step: 2 });
        assert.deepEqual(
          (await s.getSteps(forkId)).map((x) => [x.toolCalls[0]?.name, x.finishReason === 'replayed']),
          [
            ['python', true],
            ['answer', true],
            ['final_answer', false],
          ],
        );
        assert.deepEqual(
          (await s.getAnswers(forkId)).map((x) => [x.queryId, x.answer]),
          [[Q(1), 40.3]],
        );
        assert.ok(
          (await s.getEvents(forkId)).some((e) =>
            /were the MCP client vscode-agent-mode-test 1\.0's calls, replayed; Loupe's agent continues with scripted-mcp-fork/.test(
              e.message,
            ),
          ),
        );
      } finally {
        await s.close();
      }
    } finally {
      await llm.close();
      await cfg().update('models', before, vscode.ConfigurationTarget.Workspace);
    }
  });
});
