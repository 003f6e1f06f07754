/**
 * "Open Task as Workspace": creates a folder for one block under the runs directory (the core writes TASK.md and
 * links or copies the visible files read-only, never a hidden one) and opens it as a VS Code workspace.
 */
import { join } from 'node:path';
import * as vscode from 'vscode';
import { createTaskWorkspace, type Block, type Suite } from '../core/benchmarks/index.ts';
import type { LoupeContext } from './context.ts';
import { suiteRegistry } from './suites.ts';
import { rememberFolder } from './folder-context.ts';
import { isBlockNode } from './views/benchmarks-view.ts';
import { showWarningMessage } from './messages.ts';
import { runnableFirst } from '../app/pickers/hintability.ts';

/** Arguments accepted from other code and tests (the tree passes its block node instead). */
export interface OpenTaskArgs {
  suite: string;
  root: string;
  blockId: string;
  /** Open in a new window (default: ask when interactive, else false). */
  newWindow?: boolean;
  /** false: only create the folder and return its path (tests). */
  open?: boolean;
}

/** The folder of a block's task workspace: `<runsDirectory>/tasks/<suite id>/<block id>`. */
export function taskWorkspaceDir(runsDirectory: string, suite: Suite, block: Block): string {
  return join(runsDirectory, 'tasks', suite.id.replace(/[^A-Za-z0-9._-]+/g, '_'), block.id);
}

/**
 * Asks for a block of the configured suites (quick pick titled `title`; `runnableOnly`: only runnable blocks, the others
 * counted in the placeholder). @returns it, or undefined when cancelled or none is configured.
 */
export async function pickBlock(
  ctx: LoupeContext,
  title = 'Open Task as Workspace',
  opts: { runnableOnly?: boolean } = {},
): Promise<{ suite: Suite; block: Block } | undefined> {
  const entries = await suiteRegistry(ctx).loadAll();
  type Item = vscode.QuickPickItem & { pair?: { suite: Suite; block: Block } };
  const items: Item[] = [];
  let hidden = 0;
  for (const e of entries) {
    const suite = e.suite;
    if (!suite) continue;
    // issue 42: a picker for running offers runnable blocks only (typing a suite's name must not select a broken block)
    const shown = opts.runnableOnly ? runnableFirst(suite.blocks) : { offered: suite.blocks, hidden: 0 };
    hidden += shown.hidden;
    if (!shown.offered.length) continue;
    items.push({ label: suite.title, kind: vscode.QuickPickItemKind.Separator });
    for (const block of shown.offered) {
      items.push({
        label: `${block.runnable ? '$(pass)' : '$(error)'} ${block.title}`,
        description: `${suite.kind} · ${block.items.length} items${block.runnable ? '' : ' · not runnable'}`,
        detail: block.problems.length ? block.problems.slice(0, 2).join('; ') : block.id,
        pair: { suite, block },
      });
    }
  }
  if (!items.some((i) => i.pair) && hidden) {
    void showWarningMessage(
      `No configured block is runnable (${hidden} block${hidden === 1 ? ' is' : 's are'} not: see the Benchmarks view for why).`,
    );
    return undefined;
  }
  if (!items.some((i) => i.pair)) {
    const open = 'Open Settings';
    if ((await showWarningMessage('No benchmark suites are configured (setting loupe.suites).', open)) === open) {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'loupe.suites');
    }
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(items, {
    title,
    placeHolder: hidden
      ? `Which block? (runnable blocks only; ${hidden} not runnable are listed in the Benchmarks view)`
      : 'Which block?',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  return pick?.pair;
}

/** The command `loupe.openTaskAsWorkspace`. Returns the workspace folder (or undefined when cancelled). */
export async function openTaskAsWorkspace(ctx: LoupeContext, arg?: unknown): Promise<string | undefined> {
  let pair: { suite: Suite; block: Block } | undefined;
  let opts: Partial<OpenTaskArgs> = {};
  if (isBlockNode(arg)) {
    pair = { suite: arg.suite, block: arg.block };
  } else if (arg && typeof arg === 'object' && typeof (arg as OpenTaskArgs).blockId === 'string') {
    opts = arg as OpenTaskArgs;
    pair = await suiteRegistry(ctx).findBlock(opts.suite ?? '', opts.root ?? '', opts.blockId ?? '');
    if (!pair) throw new Error(`Block ${opts.blockId} not found in ${opts.suite} suite ${opts.root}`);
  } else {
    pair = await pickBlock(ctx);
  }
  if (!pair) return undefined;
  if (!pair.block.runnable) {
    const go = 'Create Anyway';
    const why = pair.block.problems.slice(0, 3).join('; ');
    if (opts.open !== false && (await showWarningMessage(`${pair.block.title} is not runnable: ${why}`, go)) !== go) {
      return undefined;
    }
  }
  const made = createTaskWorkspace(pair.block, taskWorkspaceDir(ctx.runsDirectory, pair.suite, pair.block));
  const folder = made.dir;
  ctx.log.info(`task workspace for ${pair.block.id}: ${folder} (${made.files.length} files, ${made.mode})`);
  // Issue 22: the window opened on this folder knows its suite, block and store from the extension's state (not the folder).
  const suite = pair.suite;
  const setting = suiteRegistry(ctx)
    .settings()
    .find((x) => x.suite === suite.kind && x.root === suite.root) ?? { suite: suite.kind, root: suite.root };
  await rememberFolder(ctx.extension.globalState, folder, {
    kind: 'task',
    suites: [setting],
    runsDirectory: ctx.runsDirectory,
    blockId: pair.block.id,
  });
  if (opts.open === false) return folder;
  let newWindow = opts.newWindow;
  if (newWindow === undefined) {
    const choice = await vscode.window.showQuickPick(
      [
        { label: '$(window) Open in a new window', value: true },
        { label: '$(folder-opened) Open in this window', value: false },
      ],
      { title: `Task workspace ready: ${folder}`, placeHolder: 'Where to open it?' },
    );
    if (!choice) return folder;
    newWindow = choice.value;
  }
  await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(folder), { forceNewWindow: newWindow });
  return folder;
}
