/**
 * Issue 38 in the real VS Code: a run whose agent cell returned a DataFrame with a patched `to_html` (`<script>`,
 * `<img onerror>`), hostile values and labels, and a stored agent name with markup. The run notebook, as VS Code's
 * ipynb serializer reads it, holds no output item VS Code renders as live HTML or code; the table is an escaped
 * Markdown table; a cell recorded before the change (text/html only in the store) shows as text; "Show Raw Output"
 * shows the agent's HTML as plain text. Screenshots: notebook-safety-table, notebook-safety-raw.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { openStore } from '../../src/core/store/run-store.ts';
import type { KernelCellRecord } from '../../src/core/store/records.ts';
import { hasRunner, screenshot } from './helpers/runner.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LIVE =
  /^(text\/html|image\/svg\+xml|application\/javascript|text\/javascript|text\/latex|application\/xhtml\+xml|application\/vnd\.jupyter\.widget-view\+json)$/i;
const HOSTILE_MD = /<script|<img|<iframe|<style|onerror\s*=|onload\s*=|javascript:|\]\(/i;
const RAW_HTML =
  '<script>alert(document.cookie)</script><img src=x onerror="alert(2)"><style>body{display:none}</style>';

describe('Run notebook shows agent output as data (issue 38)', function () {
  this.timeout(300_000);
  const runId = `i38-nb-${Date.now()}`;

  before(async () => {
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    const runsDir = vscode.workspace.getConfiguration('loupe').get<string>('runsDirectory') ?? '';
    const ws = join(runsDir, runId, 'workspace');
    mkdirSync(ws, { recursive: true });
    const st = openStore(join(runsDir, 'runs.sqlite'));
    try {
      await st.createRun({
        id: runId,
        suite: 'longda',
        blockId: 'NHANES_<img src=x onerror=alert(1)>',
        agent: 'mcp:`<img src=x onerror=alert(1)>`[x](javascript:alert(1))/1',
        model: null,
        params: {},
        promptHash: 'h',
        toolSet: 't',
        dataChecksums: {},
        loupeVersion: 't',
        sandbox: 'off',
        workspace: ws,
        status: 'finished',
      });
      const base = { runId, status: 'ok' as const, stderr: '', error: null, figures: [], durationMs: 5, replay: false };
      const cells: KernelCellRecord[] = [
        {
          ...base,
          stepIndex: 0,
          seq: 0,
          code: 'df',
          stdout: 'rows \x1b[2J\x1b]52;c;eA==\x07\n',
          result: 'DataFrame repr',
          tables: [
            {
              html: RAW_HTML,
              text: '  a<script>  b\n0  1  <img src=x onerror=alert(1)>',
              data: {
                columns: ['a<script>alert(1)</script>', 'b'],
                index: ['<b>r0</b>', 'r|1'],
                rows: [
                  ['1', '<img src=x onerror=alert(1)>'],
                  ['2', '[x](javascript:alert(1))'],
                ],
                shape: [2, 2],
                rowGap: null,
                colGap: null,
              },
            },
          ],
        },
        // Recorded before issue 38: raw HTML and text, no values.
        {
          ...base,
          stepIndex: 1,
          seq: 1,
          code: 'df2',
          stdout: '',
          result: 'old repr',
          tables: [{ html: RAW_HTML, text: '   a\n0  1' }],
        },
      ];
      for (const c of cells) await st.insertCell(c);
    } finally {
      await st.close();
    }
  });

  it('no output item is live HTML; the table is escaped Markdown; raw output is shown as text on demand', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('loupe.openRunNotebook', runId);
    let nb: vscode.NotebookDocument | undefined;
    for (let i = 0; i < 40 && !nb; i++) {
      nb = vscode.workspace.notebookDocuments.find((d) => d.uri.fsPath.endsWith(join(runId, 'notebook.ipynb')));
      if (!nb) await sleep(250);
    }
    assert.ok(nb, 'the run notebook opened');
    const header = nb.cellAt(0);
    assert.equal(header.kind, vscode.NotebookCellKind.Markup);
    assert.doesNotMatch(header.document.getText(), HOSTILE_MD, 'the header escapes the stored names');
    const code = nb.getCells().filter((c) => c.kind === vscode.NotebookCellKind.Code);
    assert.equal(code.length, 2);
    const items = code.flatMap((c) => c.outputs.flatMap((o) => o.items));
    assert.ok(items.length >= 4, `outputs: ${items.map((i) => i.mime).join(', ')}`);
    const dec = new TextDecoder();
    for (const it of items) {
      assert.doesNotMatch(it.mime, LIVE, `live mime ${it.mime}`);
      const t = dec.decode(it.data);
      if (it.mime === 'text/markdown') assert.doesNotMatch(t, HOSTILE_MD, t);
      assert.ok(!t.includes('\x1b'), `${it.mime}: no raw ESC`);
    }
    const first = code[0]!.outputs.find((o) => o.items.some((i) => i.mime === 'text/markdown'));
    assert.ok(first, 'the DataFrame is a Markdown table');
    assert.equal(first.items[0]!.mime, 'text/markdown', 'shown first');
    assert.ok(
      !code[1]!.outputs.some((o) => o.items.some((i) => i.mime === 'text/markdown')),
      'an old cell has text only',
    );
    const editor = await vscode.window.showNotebookDocument(nb, { viewColumn: vscode.ViewColumn.One });
    editor.revealRange(new vscode.NotebookRange(1, 2), vscode.NotebookEditorRevealType.AtTop);
    await sleep(2500);
    if (hasRunner()) await screenshot('notebook-safety-table');
    const raw = await vscode.commands.executeCommand<string>('loupe.showRawCellOutput', code[0]);
    assert.ok(raw?.includes(RAW_HTML), "the agent's HTML, raw, as text");
    const shown = vscode.window.activeTextEditor?.document;
    assert.equal(shown?.languageId, 'plaintext');
    assert.ok(shown?.getText().includes(RAW_HTML));
    await sleep(800);
    if (hasRunner()) await screenshot('notebook-safety-raw');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('a run notebook written before the change (agent text/html, SVG), opened as a file, shows its outputs as text', async () => {
    const runsDir = vscode.workspace.getConfiguration('loupe').get<string>('runsDirectory') ?? '';
    const oldId = `${runId}-old`;
    const ws = join(runsDir, oldId, 'workspace');
    mkdirSync(ws, { recursive: true });
    const st = openStore(join(runsDir, 'runs.sqlite'));
    try {
      await st.createRun({
        id: oldId,
        suite: 'longda',
        blockId: 'b',
        agent: 'llm',
        model: 'm',
        params: {},
        promptHash: 'h',
        toolSet: 't',
        dataChecksums: {},
        loupeVersion: 't',
        sandbox: 'off',
        workspace: ws,
        status: 'finished',
      });
    } finally {
      await st.close();
    }
    const loupe = { runId: oldId, step: 0, seq: 0, author: 'agent' };
    const file = join(runsDir, oldId, 'notebook.ipynb');
    writeFileSync(
      file,
      JSON.stringify({
        nbformat: 4,
        nbformat_minor: 5,
        metadata: { language_info: { name: 'python' } },
        cells: [
          {
            cell_type: 'code',
            id: 'c0',
            source: ['df'],
            metadata: { loupe },
            execution_count: 1,
            outputs: [
              {
                output_type: 'execute_result',
                execution_count: 1,
                metadata: {},
                data: { 'text/html': [RAW_HTML], 'text/plain': ['   a\n', '0  1'] },
              },
              {
                output_type: 'display_data',
                metadata: {},
                data: {
                  'image/svg+xml': [
                    '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><text y="20">hidden</text></svg>',
                  ],
                },
              },
            ],
          },
        ],
      }),
    );
    const nb = await vscode.workspace.openNotebookDocument(vscode.Uri.file(file));
    await vscode.window.showNotebookDocument(nb, { viewColumn: vscode.ViewColumn.One });
    const mimes = () => nb.getCells().flatMap((c) => c.outputs.flatMap((o) => o.items.map((i) => i.mime)));
    for (let i = 0; i < 60 && mimes().some((m) => LIVE.test(m)); i++) await sleep(250);
    assert.ok(!mimes().some((m) => LIVE.test(m)), `live mimes left: ${mimes().join(', ')}`);
    const texts = nb
      .cellAt(0)
      .outputs.flatMap((o) => o.items)
      .map((i) => new TextDecoder().decode(i.data))
      .join('\n');
    assert.match(texts, /0 {2}1/, "the table's text stays");
    assert.match(texts, /\[image\/svg\+xml output, shown as text\]\n<svg xmlns/, 'the SVG is shown as text');
    for (let i = 0; i < 60 && readFileSync(file, 'utf8').includes('"text/html"'); i++) await sleep(250);
    assert.doesNotMatch(readFileSync(file, 'utf8'), /"text\/html"/, 'the file was saved safe');
    for (let i = 0; i < 40 && nb.isDirty; i++) await sleep(250);
    assert.equal(nb.isDirty, false, 'saved');
    await sleep(1500);
    if (hasRunner()) await screenshot('notebook-safety-old-file');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
});
