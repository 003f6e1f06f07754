/**
 * "Loupe run kernel": a NotebookController for run notebooks (`<run folder>/notebook.ipynb`). Cells the analyst
 * adds run on the run's own kernel while the agent runs (queued between agent cells; the run is then marked
 * "assisted"), or, after the run, on a fresh sandboxed kernel whose state is rebuilt by replaying the agent's
 * recorded cells first (the notebook says so).
 */
import { requireRunFolderIn } from './run-folder.ts';
import { basename, dirname } from 'node:path';
import * as vscode from 'vscode';
import { defaultStartKernel, kernelPlacement } from '../../core/runs/runner.ts';
import { reopenRun } from '../../core/runs/reopen.ts';
import { errorMessage } from '../../core/util/errors.ts';
import type { LoupeContext } from '../context.ts';
import { cellMeta, executionOutputs, sanitiseOpenNotebook } from './run-notebook.ts';
import { RunSession } from './run-session.ts';
import { SharedKernel } from './shared-kernel.ts';

export class RunNotebookController implements vscode.Disposable {
  static readonly id = 'loupe-run-kernel';
  private readonly controller: vscode.NotebookController;
  private readonly ctx: LoupeContext;
  private order = 0;
  /** Post-run kernels by run id. */
  private readonly postRun = new Map<string, Promise<SharedKernel>>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(ctx: LoupeContext) {
    this.ctx = ctx;
    this.controller = vscode.notebooks.createNotebookController(
      RunNotebookController.id,
      'jupyter-notebook',
      'Loupe run kernel',
    );
    this.controller.supportedLanguages = ['python'];
    this.controller.supportsExecutionOrder = true;
    this.controller.description = 'the sandboxed kernel of a Loupe run';
    this.controller.executeHandler = (cells, nb) => this.execute(cells, nb);
    this.disposables.push(vscode.workspace.onDidOpenNotebookDocument((nb) => this.prefer(nb)));
    for (const nb of vscode.workspace.notebookDocuments) this.prefer(nb);
    // Issue 22: who wrote a cell is visible on the cell (agent step n, or analyst).
    this.disposables.push(
      vscode.notebooks.registerNotebookCellStatusBarItemProvider('jupyter-notebook', {
        provideCellStatusBarItems: (cell) => {
          const m = cellMeta(cell);
          if (!m) return [];
          const item =
            m.author === 'agent'
              ? new vscode.NotebookCellStatusBarItem(
                  `$(hubot) agent · step ${m.step + 1}`,
                  vscode.NotebookCellStatusBarAlignment.Left,
                )
              : new vscode.NotebookCellStatusBarItem('$(person) analyst', vscode.NotebookCellStatusBarAlignment.Left);
          item.tooltip =
            m.author === 'agent'
              ? 'Written and run by the agent; its recorded output is never changed (re-running it runs a copy below)'
              : 'Added by an analyst (the run is marked assisted if this ran while the agent was running)';
          return [item];
        },
      }),
    );
  }

  /** The run a notebook belongs to: `<runsDirectory>/<runId>/notebook.ipynb`. */
  async runIdOf(nb: vscode.NotebookDocument): Promise<string | undefined> {
    if (basename(nb.uri.fsPath) !== 'notebook.ipynb') return undefined;
    const runId = basename(dirname(nb.uri.fsPath));
    return (await this.ctx.store().getRun(runId)) ? runId : undefined;
  }

  private prefer(nb: vscode.NotebookDocument): void {
    void this.runIdOf(nb).then(
      (id) => {
        if (!id) return;
        this.controller.updateNotebookAffinity(nb, vscode.NotebookControllerAffinity.Preferred);
        // Issue 38: a notebook written before agent HTML was kept out shows its outputs as text from now on.
        void sanitiseOpenNotebook(nb).catch((e: unknown) =>
          this.ctx.log.warn(`run notebook ${nb.uri.fsPath}: outputs not made safe: ${errorMessage(e)}`),
        );
      },
      () => undefined,
    );
  }

  private async kernelFor(runId: string, onNote: (s: string) => void): Promise<SharedKernel> {
    const live = RunSession.get(runId)?.kernel;
    if (live && !live.closed) return live;
    let k = this.postRun.get(runId);
    if (!k) {
      k = this.startPostRunKernel(runId, onNote);
      this.postRun.set(runId, k);
      k.catch(() => this.postRun.delete(runId));
    }
    return k;
  }

  private async startPostRunKernel(runId: string, onNote: (s: string) => void): Promise<SharedKernel> {
    const store = this.ctx.store();
    const run = await store.getRun(runId);
    if (!run) throw new Error(`run ${runId} not found`);
    const settings = this.ctx.settings;
    const { runDir } = requireRunFolderIn(this.ctx, run, 'no analyst kernel is started in it', { allowAbsent: true });
    // Mount exactly what the agent's kernel saw: the block's visible files, from the suite the run recorded.
    let block;
    try {
      ({ block } = await reopenRun(run));
    } catch (e) {
      throw new Error(
        `Run ${run.id}: its block ${run.blockId} could not be reopened from ${run.params.suiteRoot ?? 'an unrecorded folder'} (${errorMessage(e)})`,
        { cause: e },
      );
    }
    const sandbox = (run.sandbox as 'bubblewrap' | 'off') || settings.sandbox;
    const inner = await defaultStartKernel(
      { sandbox, python: settings.pythonPath || undefined },
      run.suite,
      kernelPlacement(runDir, block, sandbox),
      this.ctx.log,
    );
    const kernel = new SharedKernel(inner);
    kernel.agentRunning = false;
    const cells = (await store.getCells(runId, { includeReplays: false })).filter((c) => c.stepIndex >= 0);
    onNote(`Fresh kernel for run ${runId}: replaying ${cells.length} recorded agent cell(s) to rebuild its state…\n`);
    for (const c of cells) await kernel.execute(c.code);
    await store.addEvent(
      runId,
      'analyst-kernel',
      `analyst kernel started after the run; replayed ${cells.length} agent cells`,
    );
    return kernel;
  }

  private async execute(cells: vscode.NotebookCell[], nb: vscode.NotebookDocument): Promise<void> {
    const runId = await this.runIdOf(nb);
    for (const original of cells) {
      let cell = original;
      // Issue 22: the recorded output of an agent cell is never changed. Re-running one runs a copy in a new analyst
      // cell right below it, which gets the output (and any kernel notice).
      if (runId && cellMeta(cell)?.author === 'agent') {
        const copy = await this.analystCopyBelow(nb, cell);
        if (!copy) continue;
        cell = copy;
      }
      const exec = this.controller.createNotebookCellExecution(cell);
      exec.executionOrder = ++this.order;
      exec.start(Date.now());
      if (!runId) {
        await exec.replaceOutput(
          new vscode.NotebookCellOutput([
            vscode.NotebookCellOutputItem.error(
              new Error('This notebook is not a Loupe run notebook (expected <runs>/<runId>/notebook.ipynb).'),
            ),
          ]),
        );
        exec.end(false, Date.now());
        continue;
      }
      const notes: string[] = [];
      try {
        const kernel = await this.kernelFor(runId, (s) => {
          notes.push(s);
          this.ctx.log.info(`run ${runId} notebook: ${s.trim()}`);
        });
        const r = await kernel.executeAsAnalyst(this.ctx.store(), runId, cell.document.getText());
        const outs = executionOutputs(r);
        if (notes.length) {
          outs.unshift(new vscode.NotebookCellOutput([vscode.NotebookCellOutputItem.stdout(notes.join(''))]));
        }
        await exec.replaceOutput(outs);
        const loupe = {
          runId,
          step: -1,
          seq: (await this.ctx.store().nextCellSeq(runId)) - 1,
          author: 'analyst' as const,
        };
        const edit = new vscode.WorkspaceEdit();
        edit.set(nb.uri, [
          vscode.NotebookEdit.updateCellMetadata(cell.index, {
            ...cell.metadata,
            loupe,
            metadata: { ...(cell.metadata.metadata as object | undefined), loupe },
          }),
        ]);
        await vscode.workspace.applyEdit(edit);
        exec.end(r.status === 'ok', Date.now());
      } catch (e) {
        await exec.replaceOutput(
          new vscode.NotebookCellOutput([
            vscode.NotebookCellOutputItem.error(e instanceof Error ? e : new Error(String(e))),
          ]),
        );
        exec.end(false, Date.now());
      }
    }
    this.ctx.fireRunsChanged();
  }

  /** Inserts a copy of an agent cell as an analyst cell right below it; returns the new cell (undefined if it failed). */
  private async analystCopyBelow(
    nb: vscode.NotebookDocument,
    cell: vscode.NotebookCell,
  ): Promise<vscode.NotebookCell | undefined> {
    const at = cell.index + 1;
    const data = new vscode.NotebookCellData(
      vscode.NotebookCellKind.Code,
      cell.document.getText(),
      cell.document.languageId,
    );
    const edit = new vscode.WorkspaceEdit();
    edit.set(nb.uri, [vscode.NotebookEdit.insertCells(at, [data])]);
    if (!(await vscode.workspace.applyEdit(edit))) return undefined;
    this.ctx.log.info(
      `run notebook ${nb.uri.fsPath}: agent cell ${cell.index + 1} re-run as a new analyst cell ${at + 1} (the agent cell's recorded output is kept)`,
    );
    return nb.cellAt(at);
  }

  dispose(): void {
    for (const k of this.postRun.values()) {
      void k.then(
        (x) => x.close(),
        () => undefined,
      );
    }
    this.controller.dispose();
    while (this.disposables.length) this.disposables.pop()?.dispose();
  }
}
