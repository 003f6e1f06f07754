/**
 * A run's notebook (`<run folder>/notebook.ipynb`, opened with VS Code's built-in Jupyter serializer): every
 * `python` tool call appears as a code cell with its outputs as it happens. The Loupe notebook controller runs
 * cells the analyst adds on the same kernel; those are stored as analyst cells.
 */
import { containedFileExists, readContainedFile, writeContainedFile } from '../../core/util/contained.ts';
import { basename, dirname } from 'node:path';
import * as vscode from 'vscode';
import {
  buildRunNotebook,
  isInertMarkdown,
  kernelCellOutputs,
  notebookOutputItems,
  SAFE_OUTPUT_MIMES,
  sanitiseNotebook,
  type NotebookOutput,
} from '../../core/agent/notebook.ts';
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

/**
 * nbformat outputs → VS Code notebook outputs, item by item as `notebookOutputItems` says (issue 38: every output is
 * made safe first, so no item has a mime type VS Code renders as live HTML or code, whatever the outputs came from).
 */
export function toVscodeOutputs(outputs: NotebookOutput[]): vscode.NotebookCellOutput[] {
  return outputs.map(
    (o) =>
      new vscode.NotebookCellOutput(
        notebookOutputItems(o).map((it) => {
          if (it.error) return vscode.NotebookCellOutputItem.error(it.error);
          if (it.base64 !== undefined) {
            return new vscode.NotebookCellOutputItem(Buffer.from(it.base64, 'base64'), it.mime);
          }
          return vscode.NotebookCellOutputItem.text(it.text ?? '', it.mime);
        }),
      ),
  );
}

const STREAM = {
  'application/vnd.code.notebook.stdout': 'stdout',
  'application/vnd.code.notebook.stderr': 'stderr',
} as const;

/** A VS Code output back in nbformat form (streams, errors and mime bundles; images as base64). */
function toNbformat(o: vscode.NotebookCellOutput): NotebookOutput {
  const dec = new TextDecoder();
  const only = o.items.length === 1 ? o.items[0]! : undefined;
  if (only && only.mime in STREAM) {
    return { output_type: 'stream', name: STREAM[only.mime as keyof typeof STREAM], text: [dec.decode(only.data)] };
  }
  if (only?.mime === 'application/vnd.code.notebook.error') {
    let e: { name?: string; message?: string; stack?: string } = {};
    try {
      e = JSON.parse(dec.decode(only.data)) as typeof e;
    } catch {
      /* shown empty */
    }
    return {
      output_type: 'error',
      ename: String(e.name ?? 'Error'),
      evalue: String(e.message ?? ''),
      traceback: String(e.stack ?? '').split('\n'),
    };
  }
  const data: Record<string, string> = {};
  for (const it of o.items) {
    data[it.mime] = /^image\/(png|jpeg|gif)$/.test(it.mime)
      ? Buffer.from(it.data).toString('base64')
      : dec.decode(it.data);
  }
  return { output_type: 'display_data', data, metadata: {} };
}

/**
 * Issue 38, convert on read: a run notebook opened any way (the Explorer, a recent file) whose outputs hold a mime
 * type VS Code renders live (an agent's `text/html` in a notebook written before issue 38) gets those cells' outputs
 * replaced by their safe form (`notebookOutputItems`) and is saved. A notebook with unsaved changes is left alone.
 * @returns the number of cells changed.
 */
export async function sanitiseOpenNotebook(doc: vscode.NotebookDocument): Promise<number> {
  if (doc.isDirty || doc.isClosed) return 0;
  const dec = new TextDecoder();
  const unsafe = (o: vscode.NotebookCellOutput) =>
    o.items.some(
      (it) => !SAFE_OUTPUT_MIMES.has(it.mime) || (it.mime === 'text/markdown' && !isInertMarkdown(dec.decode(it.data))),
    );
  const edits: vscode.NotebookEdit[] = [];
  for (const cell of doc.getCells()) {
    if (!cell.outputs.some(unsafe)) continue;
    const d = new vscode.NotebookCellData(cell.kind, cell.document.getText(), cell.document.languageId);
    d.metadata = cell.metadata;
    d.outputs = toVscodeOutputs(cell.outputs.map(toNbformat));
    if (cell.executionSummary) d.executionSummary = cell.executionSummary;
    edits.push(vscode.NotebookEdit.replaceCells(new vscode.NotebookRange(cell.index, cell.index + 1), [d]));
  }
  if (!edits.length) return 0;
  const we = new vscode.WorkspaceEdit();
  we.set(doc.uri, edits);
  await vscode.workspace.applyEdit(we);
  await doc.save();
  return edits.length;
}

/** Outputs of a live kernel execution. */
export function executionOutputs(r: KernelExecuteResult): vscode.NotebookCellOutput[] {
  return toVscodeOutputs(
    kernelCellOutputs(
      {
        stdout: r.stdout,
        stderr: r.stderr,
        result: r.result ?? null,
        tables: r.tables ?? [],
        figures: (r.figures ?? []).map((f) => f.png),
        error: r.error ?? null,
        status: r.status,
      },
      null,
    ),
  );
}

function cellData(run: RunRecord, c: KernelCellRecord, n: number): vscode.NotebookCellData {
  const d = new vscode.NotebookCellData(vscode.NotebookCellKind.Code, c.code, 'python');
  d.outputs = toVscodeOutputs(kernelCellOutputs(c, n));
  const loupe: LoupeCellMeta = {
    runId: run.id,
    step: c.stepIndex,
    seq: c.seq,
    author: c.stepIndex < 0 ? 'analyst' : 'agent',
  };
  d.metadata = { loupe, metadata: { loupe } };
  d.executionSummary = { executionOrder: n, success: c.status === 'ok', timing: undefined };
  return d;
}

/**
 * Rewrites an `.ipynb` whose outputs hold a mime type VS Code would render live (an agent's `text/html` written
 * before issue 38) with those outputs as text. A file that is not JSON is left alone (VS Code then reports it).
 * @returns the number of outputs changed.
 */
export function sanitiseNotebookFile(path: string): number {
  let nb: { cells?: Array<{ outputs?: NotebookOutput[] }> };
  try {
    // the run folder may hold what an uncontained client planted: read and written contained (issue 36)
    nb = JSON.parse(readContainedFile(dirname(path), basename(path), 'utf8')) as typeof nb;
  } catch {
    return 0;
  }
  const n = sanitiseNotebook(nb);
  if (n) writeContainedFile(dirname(path), basename(path), JSON.stringify(nb, null, 1));
  return n;
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
    // the run folder may hold what an uncontained client planted: written contained (issue 36)
    writeContainedFile(dirname(this.uri.fsPath), basename(this.uri.fsPath), JSON.stringify(nb, null, 1));
  }

  /**
   * Opens (writing it first if missing) and shows the notebook. A notebook file written before issue 38 may hold an
   * agent's `text/html`: its outputs are made safe (`sanitiseNotebook`) before VS Code reads it.
   */
  async open(opts: { viewColumn?: vscode.ViewColumn; preserveFocus?: boolean } = {}): Promise<vscode.NotebookEditor> {
    if (!this.doc || this.doc.isClosed) {
      if (!containedFileExists(dirname(this.uri.fsPath), basename(this.uri.fsPath))) await this.writeFile();
      else sanitiseNotebookFile(this.uri.fsPath);
      this.doc = await vscode.workspace.openNotebookDocument(this.uri);
    }
    // Keep the notebook where the analyst already has it (revealing a cell from the timeline must not replace the
    // timeline in its editor group).
    const visible = vscode.window.visibleNotebookEditors.find((e) => e.notebook.uri.toString() === this.uri.toString());
    const viewColumn = opts.viewColumn ?? visible?.viewColumn ?? vscode.ViewColumn.One;
    return vscode.window.showNotebookDocument(this.doc, {
      viewColumn,
      preserveFocus: opts.preserveFocus ?? true,
      preview: false,
    });
  }

  /** Appends cells recorded since the last sync (call after each committed step). Serialised. */
  sync(): Promise<void> {
    this.syncing = this.syncing
      .then(() => this.doSync())
      .catch((e: unknown) => console.error('Loupe: notebook sync failed', e));
    return this.syncing;
  }

  private async doSync(): Promise<void> {
    const doc = this.doc;
    if (!doc || doc.isClosed) {
      await this.writeFile();
      return;
    }
    const run = await this.run();
    const metas = doc
      .getCells()
      .map((c) => cellMeta(c))
      .filter((m): m is LoupeCellMeta => m !== undefined);
    const present = new Set(metas.map((m) => m.seq));
    // Read only cells after the last agent cell shown: agent cells arrive in order; an analyst cell run here
    // meanwhile may hold a later seq than agent cells not yet shown, so it does not move the cursor.
    const sinceSeq = Math.max(-1, ...metas.filter((m) => m.step >= 0).map((m) => m.seq));
    const cells = (await this.store.getCells(run.id, { includeReplays: false, withFigures: true, sinceSeq })).filter(
      (c) => !present.has(c.seq),
    );
    if (!cells.length) return;
    const codeCount = doc.getCells().filter((c) => c.kind === vscode.NotebookCellKind.Code).length;
    const edit = new vscode.WorkspaceEdit();
    edit.set(doc.uri, [
      vscode.NotebookEdit.insertCells(
        doc.cellCount,
        cells.map((c, i) => cellData(run, c, codeCount + i + 1)),
      ),
    ]);
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
