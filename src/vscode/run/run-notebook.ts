/**
 * A run's notebook (`<run folder>/notebook.ipynb`, opened with VS Code's built-in Jupyter serializer): every
 * `python` tool call appears as a code cell with its outputs as it happens. The Loupe notebook controller runs
 * cells the analyst adds on the same kernel; those are stored as analyst cells.
 */
import { existsSync, writeFileSync } from 'node:fs';
import * as vscode from 'vscode';
import { buildRunNotebook, kernelCellOutputs, type NotebookOutput } from '../../core/agent/notebook.ts';
import type { KernelCellRecord, KernelExecuteResult, RunRecord } from '../../core/agent/types.ts';
import type { RunStore } from '../../core/store/run-store.ts';

/** Loupe metadata on a notebook cell (kept at both places the ipynb serializer may put it). */
export interface LoupeCellMeta {
  runId: string;
  step: number;
  seq: number;
  author: 'agent' | 'analyst';
}

export function cellMeta(cell: vscode.NotebookCell | vscode.NotebookCellData): LoupeCellMeta | undefined {
  const m = cell.metadata as { loupe?: LoupeCellMeta; metadata?: { loupe?: LoupeCellMeta } } | undefined;
  return m?.loupe ?? m?.metadata?.loupe;
}

const join2 = (v: string | string[] | undefined): string => (Array.isArray(v) ? v.join('') : (v ?? ''));

/** nbformat outputs → VS Code notebook outputs. */
export function toVscodeOutputs(outputs: NotebookOutput[]): vscode.NotebookCellOutput[] {
  return outputs.map((o) => {
    if (o.output_type === 'stream') {
      const text = join2(o.text);
      return new vscode.NotebookCellOutput([o.name === 'stderr' ? vscode.NotebookCellOutputItem.stderr(text) : vscode.NotebookCellOutputItem.stdout(text)]);
    }
    if (o.output_type === 'error') {
      return new vscode.NotebookCellOutput([vscode.NotebookCellOutputItem.error({ name: o.ename ?? 'Error', message: o.evalue ?? '', stack: (o.traceback ?? []).join('\n') })]);
    }
    const items: vscode.NotebookCellOutputItem[] = [];
    for (const [mime, value] of Object.entries(o.data ?? {})) {
      if (mime === 'image/png') items.push(new vscode.NotebookCellOutputItem(Buffer.from(join2(value), 'base64'), mime));
      else items.push(vscode.NotebookCellOutputItem.text(join2(value), mime));
    }
    // Richest first: VS Code picks the first renderable item.
    items.sort((a, b) => rank(a.mime) - rank(b.mime));
    return new vscode.NotebookCellOutput(items);
  });
}

function rank(mime: string): number {
  return mime === 'image/png' ? 0 : mime === 'text/html' ? 1 : 2;
}

/** Outputs of a live kernel execution. */
export function executionOutputs(r: KernelExecuteResult): vscode.NotebookCellOutput[] {
  return toVscodeOutputs(kernelCellOutputs({
    stdout: r.stdout, stderr: r.stderr, result: r.result ?? null, tables: r.tables ?? [], figures: (r.figures ?? []).map((f) => f.png), error: r.error ?? null, status: r.status,
  }, null));
}

function cellData(run: RunRecord, c: KernelCellRecord, n: number): vscode.NotebookCellData {
  const d = new vscode.NotebookCellData(vscode.NotebookCellKind.Code, c.code, 'python');
  d.outputs = toVscodeOutputs(kernelCellOutputs(c, n));
  const loupe: LoupeCellMeta = { runId: run.id, step: c.stepIndex, seq: c.seq, author: c.stepIndex < 0 ? 'analyst' : 'agent' };
  d.metadata = { loupe, metadata: { loupe } };
  d.executionSummary = { executionOrder: n, success: c.status === 'ok', timing: undefined };
  return d;
}

export class RunNotebook {
  readonly uri: vscode.Uri;
  private readonly store: RunStore;
  private readonly runId: string;
  private doc: vscode.NotebookDocument | undefined;
  private syncing: Promise<void> = Promise.resolve();

  /** @param path where the .ipynb goes (`notebookPathIn`: the run folder only when it is trusted, issue 36). */
  constructor(store: RunStore, run: RunRecord, path: string) {
    this.store = store;
    this.runId = run.id;
    this.uri = vscode.Uri.file(path);
  }

  private async run(): Promise<RunRecord> {
    const r = await this.store.getRun(this.runId);
    if (!r) throw new Error(`run ${this.runId} is no longer in the store`);
    return r;
  }

  /** Writes the .ipynb from the store (agent and analyst cells, no resume replays). */
  async writeFile(): Promise<void> {
    const run = await this.run();
    const cells = await this.store.getCells(run.id, { includeReplays: false, withFigures: true });
    const nb = buildRunNotebook(run, cells, (c) => (c.stepIndex < 0 ? 'analyst' : 'agent'));
    writeFileSync(this.uri.fsPath, JSON.stringify(nb, null, 1));
  }

  /** Opens (writing it first if missing) and shows the notebook. */
  async open(opts: { viewColumn?: vscode.ViewColumn; preserveFocus?: boolean } = {}): Promise<vscode.NotebookEditor> {
    if (!this.doc || this.doc.isClosed) {
      if (!existsSync(this.uri.fsPath)) await this.writeFile();
      this.doc = await vscode.workspace.openNotebookDocument(this.uri);
    }
    // Keep the notebook where the analyst already has it (revealing a cell from the timeline must not replace the
    // timeline in its editor group).
    const visible = vscode.window.visibleNotebookEditors.find((e) => e.notebook.uri.toString() === this.uri.toString());
    const viewColumn = opts.viewColumn ?? visible?.viewColumn ?? vscode.ViewColumn.One;
    return vscode.window.showNotebookDocument(this.doc, { viewColumn, preserveFocus: opts.preserveFocus ?? true, preview: false });
  }

  /** Appends cells recorded since the last sync (call after each committed step). Serialised. */
  sync(): Promise<void> {
    this.syncing = this.syncing.then(() => this.doSync()).catch((e: unknown) => console.error('Loupe: notebook sync failed', e));
    return this.syncing;
  }

  private async doSync(): Promise<void> {
    const doc = this.doc;
    if (!doc || doc.isClosed) {
      await this.writeFile();
      return;
    }
    const run = await this.run();
    const metas = doc.getCells().map((c) => cellMeta(c)).filter((m): m is LoupeCellMeta => m !== undefined);
    const present = new Set(metas.map((m) => m.seq));
    // Read only cells after the last agent cell shown: agent cells arrive in order; an analyst cell run here
    // meanwhile may hold a later seq than agent cells not yet shown, so it does not move the cursor.
    const sinceSeq = Math.max(-1, ...metas.filter((m) => m.step >= 0).map((m) => m.seq));
    const cells = (await this.store.getCells(run.id, { includeReplays: false, withFigures: true, sinceSeq })).filter((c) => !present.has(c.seq));
    if (!cells.length) return;
    const codeCount = doc.getCells().filter((c) => c.kind === vscode.NotebookCellKind.Code).length;
    const edit = new vscode.WorkspaceEdit();
    edit.set(doc.uri, [vscode.NotebookEdit.insertCells(doc.cellCount, cells.map((c, i) => cellData(run, c, codeCount + i + 1)))]);
    await vscode.workspace.applyEdit(edit);
    await doc.save();
  }

  /** Shows the cell of the python call made in step `stepIndex` (the n-th python call of that step). */
  async revealStep(stepIndex: number, nth = 0): Promise<boolean> {
    await this.sync();
    const editor = await this.open({ preserveFocus: false });
    const cells = editor.notebook.getCells();
    const matches = cells.filter((c) => cellMeta(c)?.step === stepIndex);
    const target = matches[nth] ?? matches[0];
    if (!target) return false;
    const range = new vscode.NotebookRange(target.index, target.index + 1);
    editor.selections = [range];
    editor.revealRange(range, vscode.NotebookEditorRevealType.InCenterIfOutsideViewport);
    return true;
  }

  get document(): vscode.NotebookDocument | undefined {
    return this.doc;
  }
}
