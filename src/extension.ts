/** Activation only: build the one context, register the command table and the panels (src/vscode/panels/index.ts). */
import { createRequire } from 'node:module';
import * as vscode from 'vscode';
import { createCommands, registerCommands } from './vscode/commands.ts';
import { LoupeContext } from './vscode/context.ts';
import { registerPanels } from './vscode/panels/index.ts';
import { TimelinePanel } from './vscode/panels/timeline-panel.ts';
import { registerRunUi } from './vscode/run/index.ts';
import { RunSession } from './vscode/run/run-session.ts';
import { registerBenchmarksView } from './vscode/views/benchmarks-view.ts';
import { registerMcpServers } from './vscode/mcp-servers.ts';
import { folderContext, openTaskFile, type FolderContext } from './vscode/folder-context.ts';
import { findBenchmark, registerBenchmark } from './core/benchmarks/registry.ts';
import type { BenchmarkDefinition } from './core/benchmarks/types.ts';
import { showErrorMessage } from './vscode/messages.ts';
import { registerExperimentUi } from './vscode/experiments.ts';

/** What a test-only bundle may add to the running extension. */
interface TestHooks {
  registerBenchmark(def: BenchmarkDefinition): void;
  /** The store polling interval of timelines opened from now on (ms): a test lengthens it to see pushed steps alone. */
  setTimelinePollMs(ms: number): void;
}

/** What `activate` returns: a small API other extensions and the integration tests can use. */
export interface LoupeApi {
  /** The transcript written to a run's terminal so far (colours stripped), or undefined if the run is not live here. */
  runTranscript(runId: string): string | undefined;
  /** The suite, block and store a folder opened as a task or run workspace inherits (issue 22), if any. */
  folderContext(folder: string): FolderContext | undefined;
}

export function activate(extension: vscode.ExtensionContext): LoupeApi {
  const t0 = Date.now();
  const ctx = new LoupeContext(extension);
  extension.subscriptions.push(ctx);
  try {
    registerCommands(ctx, createCommands());
    registerPanels(ctx);
    registerTestPanels(ctx);
    registerRunUi(ctx);
    registerExperimentUi(ctx);
    registerBenchmarksView(ctx);
    registerMcpServers(ctx);
    if (ctx.folderContext) {
      ctx.log.info(
        `task/run workspace of block ${ctx.folderContext.blockId}: suite ${ctx.folderContext.suites.map((x) => x.suite).join(', ')}, runs in ${ctx.folderContext.runsDirectory}`,
      );
      void openTaskFile(ctx.folderContext);
    }
    ctx.log.info(`Loupe activated in ${Date.now() - t0} ms (VS Code ${vscode.version}, node ${process.version})`);
  } catch (e) {
    // VS Code does not show a notification when an extension fails to activate, so we do it ourselves.
    const msg = e instanceof Error ? e.message : String(e);
    ctx.log.error(`activation failed: ${msg}`);
    void showErrorMessage(`Loupe failed to activate: ${msg}`);
  }
  return {
    runTranscript: (runId) => RunSession.get(runId)?.terminal.plain.join(''),
    folderContext: (folder) => folderContext(extension.globalState, folder),
  };
}

/**
 * Integration tests only: \`LOUPE_TEST_PANELS\` names a test bundle (out/test/panels.js) whose \`register(ctx, hooks)\`
 * adds test-only panels and benchmarks (through this bundle's registry). Not set in normal use; the bundle is never
 * part of dist/ or the .vsix.
 */
function registerTestPanels(ctx: LoupeContext): void {
  const entry = process.env.LOUPE_TEST_PANELS;
  if (!entry) return;
  const mod = createRequire(__filename)(entry) as { register(c: LoupeContext, hooks: TestHooks): void };
  mod.register(ctx, {
    registerBenchmark: (def) => {
      if (!findBenchmark(def.kind)) registerBenchmark(def);
    },
    setTimelinePollMs: (ms) => {
      TimelinePanel.pollIntervalMs = ms;
    },
  });
  ctx.log.info(`test panels registered from ${entry}`);
}

export function deactivate(): void {}
