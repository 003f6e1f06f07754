/**
 * "Run Benchmark Block" as a user meets it, in the real VS Code: palette → block → model profile → repeats, against a
 * scripted OpenAI-compatible model on 127.0.0.1, on the real NHANES obesity block (NCHS Data Brief 508). Asserts on
 * what is rendered: notebook cells with outputs (text, table, figure), the terminal transcript, the timeline rows and
 * the heatmap inside their webviews, the Runs view. Saves screenshots of each.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { openStore } from '../../src/core/store/run-store.ts';
import { call, startScriptedLlm, type ChatRequestBody, type ScriptedLlm } from '../helpers/scripted-llm.ts';
import { hasRunner, runner, screenshot, webviewText } from './helpers/runner.ts';

const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
/** LongDA's own query ids (benchmark.csv). */
const Q = (n: number) => `NHANES_NCHS Data Brief No. 508_q${n}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const API_KEY = 'sk-loupe-integration-7f3a9c';

/** Last tool observation in a request (the model "reads" it to answer). */
function lastObservation(req: ChatRequestBody): string {
  const msgs = req.messages as { role: string; content?: string | null }[];
  for (let i = msgs.length - 1; i >= 0; i--) if (msgs[i]?.role === 'tool') return String(msgs[i]?.content ?? '');
  return '';
}

const OBESITY = `import pandas as pd, numpy as np
demo = pd.read_sas('data/Demographics/DEMO_L.xpt')
bmx = pd.read_sas('data/Examination/BMX_L.xpt')
d = demo.merge(bmx, on='SEQN')
d = d[(d.RIDAGEYR >= 20) & (d.RIDEXPRG != 1) & d.BMXBMI.notna() & (d.WTMEC2YR > 0)]
w = d.WTMEC2YR
overall = round(100 * np.average(d.BMXBMI >= 30, weights=w), 1)
by_sex = d.groupby('RIAGENDR').apply(lambda g: round(100 * np.average(g.BMXBMI >= 30, weights=g.WTMEC2YR), 1))
print('overall', overall)
print('men', by_sex[1.0], 'women', by_sex[2.0])
by_sex.rename({1.0: 'men', 2.0: 'women'}).to_frame('obesity %')`;

// LongTA's import allowlist has no matplotlib: a plotting attempt must come back as an error cell.
const FIGURE = `import matplotlib.pyplot as plt
plt.plot([1, 2])`;

describe('Run Benchmark Block (palette → notebook, terminal, timeline, runs view)', function () {
  this.timeout(300_000);
  let llm: ScriptedLlm;
  let runId = '';

  before(async function () {
    if (!hasRunner()) this.skip();
    const script = [
      {
        content: 'Let me find the weight variable in the documentation.',
        toolCalls: [call('search_doc', { keyword: 'WTMEC2YR', max_matches: 3 })],
      },
      {
        content: 'Now compute weighted obesity prevalence for adults 20+, excluding pregnant women.',
        toolCalls: [call('python', { code: OBESITY })],
      },
      (req: ChatRequestBody) => {
        const m = lastObservation(req).match(/overall ([\d.]+)/);
        return {
          content: 'Recording the overall prevalence and plotting.',
          toolCalls: [
            call('answer', { action: 'add', q_id: Q(1), answer: Number(m?.[1] ?? 'NaN') }),
            call('python', { code: FIGURE }),
          ],
        };
      },
      (req: ChatRequestBody) => {
        const text = (req.messages as { role: string; content?: string | null }[])
          .map((x) => x.content ?? '')
          .join('\n');
        const m = text.match(/men ([\d.]+) women ([\d.]+)/);
        return {
          content: 'Recording men and women.',
          toolCalls: [call('answer', { action: 'add', q_id: Q(2), answer: [Number(m?.[1]), Number(m?.[2])] })],
        };
      },
      {
        content: 'Done for now.',
        toolCalls: [call('final_answer', { summary: 'Answered q1 and q2 from DEMO_L and BMX_L with WTMEC2YR.' })],
      },
    ];
    // The server refuses requests without the key, so the run proves the key travels from SecretStorage.
    llm = await startScriptedLlm({ script, models: ['scripted-analyst'], requireKey: API_KEY });
    const cfg = vscode.workspace.getConfiguration('loupe');
    await cfg.update(
      'models',
      [{ name: 'scripted', baseUrl: llm.baseUrl, model: 'scripted-analyst', temperature: 0 }],
      vscode.ConfigurationTarget.Workspace,
    );
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    assert.equal(await vscode.commands.executeCommand('loupe.setApiKey', { profile: 'scripted', key: API_KEY }), true);
  });

  after(async () => {
    await llm?.close();
    // Leave the workbench as we found it for the suites that follow.
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('workbench.action.closePanel');
    for (const t of vscode.window.terminals) t.dispose();
  });

  it('runs the block from the palette and records answers matching Data Brief 508', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await runner({ action: 'palette', title: 'Loupe: Run Benchmark Block' });
    /** Waits until the quick pick shows step `n` of the flow (suite loading can take a while on a busy machine). */
    const step = async (n: number, rowText?: string) => {
      for (let i = 0; i < 240; i++) {
        const t = await runner<string>({ action: 'workbenchText', selector: '.quick-input-widget' }).catch(() => '');
        if (t.includes(`(${n}/4)`) && (!rowText || t.includes(rowText))) return;
        await sleep(250);
      }
      throw new Error(`quick pick step ${n}/4${rowText ? ` showing ${rowText}` : ''} did not appear`);
    };
    // The suite step is skipped when one suite is configured; otherwise pick LongDA.
    for (let i = 0; i < 240; i++) {
      const t = await runner<string>({ action: 'workbenchText', selector: '.quick-input-widget' }).catch(() => '');
      if (t.includes('(2/4)')) break;
      if (t.includes('(1/4)') && t.includes('longda')) {
        await runner({ action: 'type', text: 'longda' });
        await sleep(300);
        await screenshot('run-palette-suite');
        await runner({ action: 'press', key: 'Enter' });
        break;
      }
      await sleep(250);
    }
    await step(2);
    await runner({ action: 'type', text: 'Brief_No._508' });
    await step(2, BLOCK);
    await screenshot('run-palette-block');
    await runner({ action: 'press', key: 'Enter' });
    await step(3);
    await runner({ action: 'type', text: 'scripted' });
    await step(3, 'scripted-analyst');
    await screenshot('run-palette-profile');
    await runner({ action: 'press', key: 'Enter' });
    await step(4);
    await runner({ action: 'type', text: '1' });
    await runner({ action: 'press', key: 'Enter' });

    const storePath = join(
      vscode.workspace.getConfiguration('loupe').get<string>('runsDirectory') ?? '',
      'runs.sqlite',
    );
    const t0 = Date.now();
    let status = '';
    for (;;) {
      await sleep(1000);
      let store;
      try {
        store = openStore(storePath);
      } catch {
        continue;
      }
      try {
        const run = (await store.listRuns({ blockId: BLOCK })).find(
          (r) => r.model === 'scripted-analyst' && r.agent === 'llm',
        );
        if (run) {
          runId = run.id;
          status = run.status;
          if (!['running', 'pending'].includes(status)) {
            const answers = await store.getAnswers(run.id);
            const q1 = answers.find((a) => a.queryId === Q(1));
            const q2 = answers.find((a) => a.queryId === Q(2));
            assert.equal(q1?.answer, 40.3, 'published overall obesity prevalence 40.3');
            assert.deepEqual(q2?.answer, [39.2, 41.3], 'published men/women 39.2/41.3');
            break;
          }
        }
      } finally {
        store.close();
      }
      if (Date.now() - t0 > 180_000) throw new Error(`run did not finish in 180 s (status ${status || 'not created'})`);
    }
    assert.equal(status, 'finished');
    // The key reached the model server but never the store or the run folder.
    assert.ok(llm.requests.every((r) => r.authorization === `Bearer ${API_KEY}`));
    const { readFileSync, readdirSync, statSync } = await import('node:fs');
    const runsDir = vscode.workspace.getConfiguration('loupe').get<string>('runsDirectory') ?? '';
    const walk = (d: string): string[] =>
      readdirSync(d).flatMap((f) => {
        const p = join(d, f);
        const st = statSync(p, { throwIfNoEntry: false });
        return !st ? [] : st.isDirectory() ? walk(p) : st.isFile() && st.size < 50_000_000 ? [p] : [];
      });
    const leaks = walk(runsDir).filter((f) => readFileSync(f).includes(API_KEY));
    assert.deepEqual(leaks, [], 'API key written to disk');
  });

  it('exports the run as a JSONL trajectory and a LongDA results folder', async () => {
    const { tmpdir } = await import('node:os');
    const jsonl = await vscode.commands.executeCommand<string>(
      'loupe.exportRun',
      runId,
      'jsonl',
      join(tmpdir(), `loupe-export-${runId}.jsonl`),
    ); // target given: no save dialog
    const { readFileSync, existsSync } = await import('node:fs');
    const lines = readFileSync(jsonl, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(lines.length >= 5, `${lines.length} JSONL lines`);
    const folder = await vscode.commands.executeCommand<string>(
      'loupe.exportRun',
      runId,
      'longda',
      join(tmpdir(), `loupe-export-${runId}-longda`),
    );
    assert.ok(existsSync(join(folder, 'answers_progress.csv')), `${folder}/answers_progress.csv`);
    assert.match(readFileSync(join(folder, 'answers_progress.csv'), 'utf8'), /40\.3/);
    assert.ok(existsSync(join(folder, 'run_summary.json')));
  });

  it('shows the agent code as notebook cells with text, table and error outputs', async () => {
    const nb = vscode.workspace.notebookDocuments.find((d) => d.uri.fsPath.endsWith(join(runId, 'notebook.ipynb')));
    assert.ok(nb, 'the run notebook is open');
    let code: vscode.NotebookCell[] = [];
    for (let i = 0; i < 50; i++) {
      code = nb.getCells().filter((c) => c.kind === vscode.NotebookCellKind.Code);
      if (code.length >= 2) break;
      await sleep(200);
    }
    assert.equal(code.length, 2, 'two python tool calls → two code cells');
    const mimes = code.flatMap((c) => c.outputs.flatMap((o) => o.items.map((i) => i.mime)));
    assert.ok(mimes.includes('application/vnd.code.notebook.stdout'), `stdout output present (${mimes.join(', ')})`);
    // issue 38: a DataFrame is a table Loupe builds from its values (inert Markdown), never the agent's own HTML
    assert.ok(mimes.includes('text/markdown'), `the DataFrame result is a Markdown table (${mimes.join(', ')})`);
    assert.ok(
      !mimes.some((m) => /html|svg|javascript/.test(m)),
      `no output item VS Code would render as live markup (${mimes.join(', ')})`,
    );
    assert.ok(
      mimes.includes('application/vnd.code.notebook.error'),
      'the refused matplotlib import is an error output',
    );
    const stdout = new TextDecoder().decode(
      code[0]?.outputs.flatMap((o) => o.items).find((i) => i.mime.endsWith('stdout'))?.data,
    );
    assert.match(stdout, /overall 40\.3/);
    await vscode.window.showNotebookDocument(nb, { viewColumn: vscode.ViewColumn.One });
    await sleep(1500);
    await screenshot('run-notebook');
  });

  it('runs an analyst cell on a kernel rebuilt from the recorded cells and stores it as an analyst cell', async () => {
    const nb = vscode.workspace.notebookDocuments.find((d) => d.uri.fsPath.endsWith(join(runId, 'notebook.ipynb')));
    assert.ok(nb);
    const edit = new vscode.WorkspaceEdit();
    edit.set(nb.uri, [
      vscode.NotebookEdit.insertCells(nb.cellCount, [
        new vscode.NotebookCellData(
          vscode.NotebookCellKind.Code,
          'print("check", overall, round(float(by_sex[2.0]) - float(by_sex[1.0]), 1))',
          'python',
        ),
      ]),
    ]);
    await vscode.workspace.applyEdit(edit);
    const editor = await vscode.window.showNotebookDocument(nb, { viewColumn: vscode.ViewColumn.One });
    await vscode.commands.executeCommand('notebook.selectKernel', {
      editor,
      id: 'loupe-run-kernel',
      extension: 'loupe-dev.loupe',
    });
    const last = nb.cellAt(nb.cellCount - 1);
    await vscode.commands.executeCommand('notebook.cell.execute', {
      ranges: [{ start: last.index, end: last.index + 1 }],
      document: nb.uri,
    });
    let out = '';
    for (let i = 0; i < 150 && !/check/.test(out); i++) {
      await sleep(200);
      out = last.outputs
        .flatMap((o) => o.items)
        .map((it) => new TextDecoder().decode(it.data))
        .join('\n');
    }
    assert.match(out, /replaying 2 recorded agent cell/);
    assert.match(out, /check 40\.3 2\.1/);
    const store = openStore(
      join(vscode.workspace.getConfiguration('loupe').get<string>('runsDirectory') ?? '', 'runs.sqlite'),
    );
    try {
      const analyst = (await store.getCells(runId)).filter((c) => c.stepIndex < 0);
      assert.equal(analyst.length, 1);
      assert.ok((await store.getEvents(runId)).some((e) => e.kind === 'analyst-kernel'));
    } finally {
      store.close();
    }
    await sleep(500);
    await screenshot('run-notebook-analyst-cell');
  });

  it('streams a transcript with tool calls and the end status to the terminal', async () => {
    const api = vscode.extensions.getExtension<{ runTranscript(id: string): string | undefined }>(
      'loupe-dev.loupe',
    )?.exports;
    const text = api?.runTranscript(runId) ?? '';
    assert.match(text, /▶ search_doc/);
    assert.match(text, /▶ python import pandas as pd/);
    assert.match(text, /tokens \d+ in \/ \d+ out/);
    assert.match(text, /run finished after 5 steps/);
    const term = vscode.window.terminals.find((t) => t.name === `Loupe: ${BLOCK}`);
    assert.ok(term, 'terminal "Loupe: <block>" exists');
    term.show(false);
    await sleep(1000);
    await screenshot('run-terminal');
  });

  it('renders the finished run in the timeline and its tool-usage heatmap', async () => {
    await vscode.commands.executeCommand('workbench.action.closePanel');
    await vscode.commands.executeCommand('loupe.openTimeline', runId);
    const text = await webviewText({ title: 'Timeline', expect: /final_answer/ });
    assert.match(text, /finished/);
    assert.match(text, /search_doc\(keyword=WTMEC2YR\)/);
    assert.match(text, /5 steps/);
    await runner({ action: 'clickInWebview', selector: '.tl-row[data-step="1"]', title: 'Timeline' });
    await webviewText({ title: 'Timeline', expect: /Reveal in notebook/ });
    await sleep(500);
    await screenshot('run-timeline');
    // A python step reveals its notebook cell.
    await runner({ action: 'clickInWebview', selector: '.tl-detail vscode-button.reveal', title: 'Timeline' });
    let revealed = '';
    for (let i = 0; i < 100 && !/read_sas/.test(revealed); i++) {
      await sleep(200);
      const ed = vscode.window.activeNotebookEditor;
      const sel = ed?.selections[0];
      if (ed && sel) revealed = ed.notebook.cellAt(sel.start).document.getText();
    }
    assert.match(
      revealed,
      /read_sas\('data\/Demographics\/DEMO_L\.xpt'\)/,
      "the python step's cell is selected in the notebook",
    );
    // A documentation step opens the Documentation Search panel at the agent's query.
    await vscode.commands.executeCommand('loupe.openTimeline', runId, 0);
    await webviewText({ title: 'Timeline', expect: /Open in Documentation Search/ });
    await runner({ action: 'clickInWebview', selector: '.tl-detail vscode-button.reveal', title: 'Timeline' });
    // The panel indexes the block's documentation first (tens of seconds on a cold cache), then shows the hits.
    const doc = await webviewText({ title: 'Docs', expect: /Demographics\/\s*DEMO_L\.pdf/, timeoutMs: 180_000 });
    assert.match(doc, /WTMEC2YR/);
    await sleep(800);
    await screenshot('run-timeline-docsearch');
    await vscode.commands.executeCommand('loupe.showToolHeatmap', runId);
    const heat = await webviewText({ title: 'Timeline', expect: /Tool usage over normalised progress/ });
    assert.match(heat, /python/);
    await sleep(800);
    await screenshot('run-heatmap');
  });

  it('lists the run in the Runs view', async () => {
    await vscode.commands.executeCommand('loupe.runs.focus');
    // Collapse the Benchmarks pane so the Runs pane has room to render its rows.
    await runner({
      action: 'clickWorkbench',
      selector: '.pane-header[aria-label^="Benchmarks"][aria-expanded="true"]',
    }).catch(() => undefined);
    await vscode.commands.executeCommand('loupe.refreshRuns');
    let tree = '';
    for (let i = 0; i < 40 && !/scripted-analyst[^\n]*? · (?:[\d.]+% · )?finished/.test(tree); i++) {
      // a block with more than three runs starts collapsed (other suites may have added runs to it): open one group a turn
      if (i > 0) {
        await runner({
          action: 'clickWorkbench',
          selector: '[id="workbench.parts.sidebar"] .monaco-list-row[aria-expanded="false"]',
        }).catch(() => undefined);
      }
      await sleep(250);
      tree = await runner<string>({ action: 'workbenchText', selector: '[id="workbench.parts.sidebar"]' });
    }
    assert.match(tree, /longda/);
    assert.match(tree, /NHANES_NCHS_Data_Brief_No/);
    assert.match(tree, /scripted-analyst[^\n]*? · (?:[\d.]+% · )?finished/); // with its headline metric once scored (issue 22)
    await screenshot('runs-view');
  });

  it('pauses, resumes and stops a live run from its terminal keys (p / r / s)', async () => {
    const slow = await startScriptedLlm({
      latencyMs: 700,
      script: Array.from({ length: 30 }, (_, i) => ({
        content: `Looking around (${i}).`,
        toolCalls: [call('notes', { action: 'add', content: `note ${i}` })],
      })),
    });
    try {
      const cfg = vscode.workspace.getConfiguration('loupe');
      const models = cfg.get<unknown[]>('models') ?? [];
      await cfg.update(
        'models',
        [...models, { name: 'scripted-slow', baseUrl: slow.baseUrl, model: 'scripted-slow' }],
        vscode.ConfigurationTarget.Workspace,
      );
      const root = (cfg.get<{ suite: string; root: string }[]>('suites') ?? [])[0]?.root;
      void vscode.commands.executeCommand('loupe.runBenchmarkBlock', {
        suite: 'longda',
        root,
        blockId: BLOCK,
        profile: 'scripted-slow',
        repeats: 1,
      });
      const storePath = join(cfg.get<string>('runsDirectory') ?? '', 'runs.sqlite');
      const api = vscode.extensions.getExtension<{ runTranscript(id: string): string | undefined }>(
        'loupe-dev.loupe',
      )?.exports;
      const until = async (what: string, ok: () => boolean | Promise<boolean>, ms = 60_000) => {
        const t0 = Date.now();
        while (!(await ok())) {
          if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
          await sleep(100);
        }
      };
      let id = '';
      // One reader connection for the whole test (the extension host writes the same WAL file meanwhile).
      const reader = openStore(storePath);
      try {
        await until('the run to start', async () => {
          id ||= (await reader.listRuns({ blockId: BLOCK })).find((r) => r.model === 'scripted-slow')?.id ?? '';
          return Boolean(id) && /step 2/.test(api?.runTranscript(id) ?? '');
        });
      } finally {
        reader.close();
      }
      // The newest "Loupe: <block>" terminal belongs to this run.
      const term = vscode.window.terminals.filter((t) => t.name === `Loupe: ${BLOCK}`).at(-1);
      assert.ok(term);
      term.sendText('p', false);
      await until('pause', () => /paused before step/.test(api?.runTranscript(id) ?? ''));
      const stepsAtPause = (api?.runTranscript(id)?.match(/── step \d+ ──/g) ?? []).length;
      await sleep(2500);
      assert.equal(
        (api?.runTranscript(id)?.match(/── step \d+ ──/g) ?? []).length,
        stepsAtPause,
        'no new step while paused',
      );
      term.sendText('r', false);
      await until('resume', () => /▶ resumed/.test(api?.runTranscript(id) ?? ''));
      await until(
        'a step after resuming',
        () => (api?.runTranscript(id)?.match(/── step \d+ ──/g) ?? []).length > stepsAtPause,
      );
      term.sendText('s', false);
      await until('stop', () => /run cancelled/.test(api?.runTranscript(id) ?? ''));
      const st = openStore(storePath);
      try {
        assert.equal((await st.getRun(id))?.status, 'cancelled');
      } finally {
        st.close();
      }
      term.show(false);
      await sleep(800);
      await screenshot('run-terminal-controls');
      // Delete from the Runs view's action: gone from the store and from disk.
      assert.equal(await vscode.commands.executeCommand('loupe.deleteRun', id, true), true);
      const st2 = openStore(storePath);
      try {
        assert.equal(await st2.getRun(id), undefined);
      } finally {
        st2.close();
      }
    } finally {
      await slow.close();
    }
  });
});
