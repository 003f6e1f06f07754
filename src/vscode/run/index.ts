/** Wires the run experience at activation: runs view, notebook controller, timeline reveal hook, status bar. */
import { notebookPathIn } from './run-folder.ts';
import * as vscode from 'vscode';
import type { LoupeContext } from '../context.ts';
import { TimelinePanel } from '../panels/timeline-panel.ts';
import { RunsViewProvider } from '../views/runs-view.ts';
import { RunNotebookController } from './notebook-controller.ts';
import { createRunStatusItem } from './run-commands.ts';
import { RunNotebook } from './run-notebook.ts';
import { RunSession } from './run-session.ts';
import { interveneCommand } from './intervene-commands.ts';
import { attachTimelineAssistance } from './timeline-assist.ts';
import { showErrorMessage } from '../messages.ts';
import { oneLine } from '../../core/util/text-safety.ts';

let runsView: RunsViewProvider | undefined;

export function registerRunUi(ctx: LoupeContext): void {
  runsView = ctx.register(new RunsViewProvider(ctx));
  const view = ctx.register(
    vscode.window.createTreeView('loupe.runs', {
      treeDataProvider: runsView,
      showCollapseAll: true,
      canSelectMany: true,
    }),
  );
  runsView.watch(view);
  runsView.view = view;
  ctx.register(new RunNotebookController(ctx));
  ctx.register(createRunStatusItem());
  // Issue 20: the transcript's `i` key and the timeline's run controls.
  RunSession.onInterveneKey = (s) => {
    if (!s.runId) return;
    if (!s.control.isPaused) {
      s.terminal.write('\r\n\x1b[33m✎ press p first: hints are added while the run is paused\x1b[0m\r\n');
      return;
    }
    void interveneCommand(ctx, s.runId).catch((e: unknown) => {
      const msg = e instanceof Error ? e.message : String(e);
      s.terminal.write(`\r\n\x1b[31m✘ hint not recorded: ${oneLine(msg, 2000)}\x1b[0m\r\n`);
      void showErrorMessage(`Loupe: ${msg}`);
    });
  };
  TimelinePanel.attachAssistance = attachTimelineAssistance;
  TimelinePanel.revealer = async (runId, stepIndex, callId, toolName, argumentsText) => {
    if (toolName === 'python') {
      const run = await ctx.store().getRun(runId);
      if (!run) return 'none';
      const nb = RunSession.get(runId)?.notebook ?? new RunNotebook(ctx.store(), run, notebookPathIn(ctx, run));
      const step = await ctx.store().getStep(runId, stepIndex);
      const nth = step ? step.toolCalls.filter((c) => c.name === 'python').findIndex((c) => c.id === callId) : 0;
      return (await nb.revealStep(stepIndex, Math.max(0, nth))) ? 'notebook' : 'none';
    }
    if (/^(read_doc|search_doc|retriever)$/.test(toolName)) {
      let args: Record<string, unknown>;
      try {
        args = JSON.parse(argumentsText) as Record<string, unknown>;
      } catch {
        return 'none';
      }
      const query = String(args.keyword ?? args.query ?? '');
      const mode = toolName === 'search_doc' ? 'keyword' : toolName === 'retriever' ? 'longta' : 'keyword';
      const commands = await vscode.commands.getCommands(true);
      if (!commands.includes('loupe.searchDocumentation')) return 'none';
      await vscode.commands.executeCommand('loupe.searchDocumentation', {
        runId,
        query,
        mode,
        file: typeof args.doc_path === 'string' ? args.doc_path : undefined,
      });
      return 'docsearch';
    }
    return 'none';
  };
}

export function refreshRuns(): void {
  runsView?.refresh();
}
