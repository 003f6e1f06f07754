/**
 * The command table: every `loupe.*` command id maps to its handler. package.json
 * `contributes.commands` must list the same ids (an integration test checks both directions).
 */
import * as vscode from 'vscode';
import { inSettingsTerms } from './config.ts';
import { AgreementPanel, openAnnotationQueueCommand } from './panels/annotation-panel.ts';
import { editChecklistCommand, rescoreRunCommand } from './panels/checklist-panel.ts';
import type { LoupeContext } from './context.ts';
import { WelcomePanel } from './panels/welcome-panel.ts';
import { refreshRuns } from './run/index.ts';
import { runCommands } from './run/run-commands.ts';
import { interveneCommands } from './run/intervene-commands.ts';
import { searchDocumentationCommand } from './panels/docsearch-panel.ts';
import { ResultsPanel } from './panels/results-panel.ts';
import { rescoreRunGroundTruthCommand, showGroundTruthCommand } from './panels/ground-truth-panel.ts';
import {
  authorGroundTruthCommand,
  reviewBladeDecisionsCommand,
  showBladeDecisionAgreementCommand,
} from './panels/blade-decisions-panel.ts';
import {
  compareRunsCommand,
  judgePairsCommand,
  openPairwiseReviewCommand,
  showPairwiseRankingCommand,
} from './panels/review-panel.ts';
import { TimelinePanel } from './panels/timeline-panel.ts';
import { ItemPanel } from './panels/item-panel.ts';
import {
  openFailureQueueCommand,
  showFailureFiguresCommand,
  tagFailureOfItemCommand,
  tagFailuresCommand,
} from './panels/failures-panel.ts';
import { browseVariablesCommand } from './panels/variables-panel.ts';
import { compareProfilesCommand } from './panels/compare-panel.ts';
import { openMatrixCommand } from './panels/matrix-panel.ts';
import { suiteRegistry } from './suites.ts';
import { openTaskAsWorkspace } from './task-workspace.ts';
import { setStorePassword } from './store-password.ts';
import { evaluateChatAgentCommand } from './mcp-servers.ts';
import { showErrorMessage } from './messages.ts';
import { oneLine } from '../core/util/text-safety.ts';
import {
  filterRunsCommand,
  renameRunCommand,
  selectExperimentCommand,
  tagRunCommand,
  untagRunCommand,
} from './experiments.ts';
import { assignQueueItemsCommand, setQueueInstructionsCommand } from './queue-commands.ts';

export type CommandHandler = (ctx: LoupeContext, ...args: unknown[]) => unknown;

export function createCommands(): Record<string, CommandHandler> {
  return {
    'loupe.showWelcome': (ctx) => {
      WelcomePanel.show(ctx);
      return true;
    },
    'loupe.showLog': (ctx) => ctx.output.show(true),
    'loupe.setStorePassword': (ctx, arg) => setStorePassword(ctx, arg),
    ...runCommands(),
    ...interveneCommands(),
    'loupe.refreshRuns': () => refreshRuns(),
    // Benchmarks view, Documentation Search, Results (issues 3, 4, 8)
    'loupe.refreshBenchmarks': (ctx) => suiteRegistry(ctx).refresh(),
    'loupe.openTaskAsWorkspace': (ctx, arg) => openTaskAsWorkspace(ctx, arg),
    'loupe.evaluateChatAgent': (ctx, arg) => evaluateChatAgentCommand(ctx, arg),
    'loupe.searchDocumentation': (ctx, arg) => searchDocumentationCommand(ctx, arg),
    // Variable catalog (issue 25)
    'loupe.browseVariables': (ctx, arg) => browseVariablesCommand(ctx, arg),
    'loupe.openAnnotationQueue': (ctx, arg) => openAnnotationQueueCommand(ctx, arg),
    'loupe.editChecklist': (ctx, arg) => editChecklistCommand(ctx, arg),
    'loupe.rescoreRunChecklist': (ctx, arg) => rescoreRunCommand(ctx, arg),
    'loupe.compareRuns': (ctx, arg, selection) => compareRunsCommand(ctx, arg, selection),
    'loupe.openPairwiseReview': (ctx, arg, selection) => openPairwiseReviewCommand(ctx, arg, selection),
    'loupe.showPairwiseRanking': (ctx) => showPairwiseRankingCommand(ctx),
    'loupe.judgePairs': (ctx, arg) => judgePairsCommand(ctx, arg),
    'loupe.showGroundTruth': (ctx, arg) => showGroundTruthCommand(ctx, arg),
    /** Issue 22: an item clicked in the Benchmarks view (its ground truth hidden until asked). */
    'loupe.showBenchmarkItem': async (ctx, arg) => {
      const n = arg as
        { suite?: { kind?: string; root?: string }; block?: { id?: string }; item?: { id?: string } } | undefined;
      if (!n?.suite?.kind || !n.suite.root || !n.block?.id || !n.item?.id) {
        throw new Error('Choose an item in the Benchmarks view.');
      }
      await ItemPanel.show(ctx, { kind: n.suite.kind, root: n.suite.root, blockId: n.block.id, itemId: n.item.id });
      return true;
    },
    'loupe.rescoreRunGroundTruth': (ctx, arg) => rescoreRunGroundTruthCommand(ctx, arg),
    'loupe.authorGroundTruth': (ctx, arg) => authorGroundTruthCommand(ctx, arg),
    'loupe.reviewBladeDecisions': (ctx, arg) => reviewBladeDecisionsCommand(ctx, arg),
    'loupe.showBladeDecisionAgreement': (ctx, arg) => showBladeDecisionAgreementCommand(ctx, arg),
    // Failure-mode analysis (issue 19)
    'loupe.tagFailures': (ctx, arg) => tagFailuresCommand(ctx, arg),
    'loupe.tagFailure': (ctx, arg) => tagFailureOfItemCommand(ctx, arg),
    'loupe.openFailureQueue': (ctx, arg) => openFailureQueueCommand(ctx, arg),
    'loupe.showFailureFigures': (ctx) => showFailureFiguresCommand(ctx),
    'loupe.showAgreement': (ctx) => {
      AgreementPanel.show(ctx);
      return true;
    },
    'loupe.showResults': (ctx) => {
      ResultsPanel.show(ctx);
      return true;
    },
    // Experiments and queue assignment (issue 43)
    'loupe.tagRun': (ctx, arg, label) => tagRunCommand(ctx, arg, label),
    'loupe.untagRun': (ctx, arg, label) => untagRunCommand(ctx, arg, label),
    'loupe.renameRun': (ctx, arg, name) => renameRunCommand(ctx, arg, name),
    'loupe.selectExperiment': (ctx, arg) => selectExperimentCommand(ctx, arg),
    'loupe.filterRuns': (ctx, arg) => filterRunsCommand(ctx, arg),
    'loupe.setQueueInstructions': (ctx, arg) => setQueueInstructionsCommand(ctx, arg),
    'loupe.assignQueueItems': (ctx, arg) => assignQueueItemsCommand(ctx, arg),
    /** Compare two profiles (issue 48). Arg `{ suite, a, b }`; without it the user picks. Returns the comparison shown. */
    'loupe.compareProfiles': (ctx, arg) => compareProfilesCommand(ctx, arg),
    'loupe.openMatrix': (ctx, arg) => openMatrixCommand(ctx, arg),
    /** Opens one run (its timeline). Arg: a run id; without one the user picks a run. */
    'loupe.openRun': async (ctx, runId) => {
      let id = typeof runId === 'string' ? runId : undefined;
      if (!id) {
        const runs = await ctx.store().listRuns({ limit: 200 });
        const pick = await vscode.window.showQuickPick(
          runs.map((r) => ({
            label: `${oneLine(r.model ?? r.agent)} · ${oneLine(r.blockId)}`,
            description: r.status,
            detail: r.id,
            id: r.id,
          })),
          { title: 'Open Run', matchOnDetail: true },
        );
        id = pick?.id;
      }
      if (!id) return false;
      await TimelinePanel.show(ctx, id);
      return true;
    },
  };
}

/** Registers every command of the table. */
export function registerCommands(ctx: LoupeContext, table: Record<string, CommandHandler>): void {
  for (const [id, handler] of Object.entries(table)) {
    ctx.register(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          return await handler(ctx, ...args);
        } catch (e) {
          const msg = inSettingsTerms(e instanceof Error ? e.message : String(e));
          ctx.log.error(`${id} failed: ${msg}`);
          void showErrorMessage(`Loupe: ${msg}`);
          return undefined;
        }
      }),
    );
  }
}
