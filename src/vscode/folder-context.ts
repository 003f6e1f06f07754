/**
 * Which suite, block and run store a task or run workspace window belongs to (issue 22). `Open Task as Workspace` and
 * `Open Run Workspace` open a folder whose own settings are empty; the window they open must still know its suite and
 * store. That is kept in the extension's global state keyed by the opened folder — never written into the folder, so an
 * agent working there does not learn where the suite root and its answers are.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as vscode from 'vscode';
import type { SuiteSetting } from './config.ts';

/** What a task / run workspace window inherits from the window that opened it. */
export interface FolderContext {
  kind: 'task' | 'run';
  /** The suite the block comes from (as configured in the opening window, entities included). */
  suites: SuiteSetting[];
  /** The runs directory (run store) of the opening window, resolved. */
  runsDirectory: string;
  blockId: string;
  /** The run (run workspaces). */
  runId?: string;
}

const KEY = 'loupe.folderContexts';
/** At most this many folders are remembered (oldest dropped). */
const MAX = 200;

/** Remembers the context of `folder` (before it is opened). */
export async function rememberFolder(state: vscode.Memento, folder: string, fc: FolderContext): Promise<void> {
  const all = { ...(state.get<Record<string, FolderContext>>(KEY) ?? {}) };
  delete all[resolve(folder)];
  all[resolve(folder)] = fc;
  const keys = Object.keys(all);
  for (const k of keys.slice(0, Math.max(0, keys.length - MAX))) delete all[k];
  await state.update(KEY, all);
}

/** The remembered context of `folder`, if it was opened as a task or run workspace. */
export function folderContext(state: vscode.Memento, folder: string | undefined): FolderContext | undefined {
  if (!folder) return undefined;
  return (state.get<Record<string, FolderContext>>(KEY) ?? {})[resolve(folder)];
}

/** The context of this window's first workspace folder, if it is a task or run workspace. */
export function windowFolderContext(state: vscode.Memento): FolderContext | undefined {
  return folderContext(state, vscode.workspace.workspaceFolders?.[0]?.uri.fsPath);
}

/** In a task workspace window: opens its TASK.md when no editor is open yet. */
export async function openTaskFile(fc: FolderContext | undefined): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (!fc || fc.kind !== 'task' || !folder) return;
  const task = join(folder, 'TASK.md');
  if (!existsSync(task) || vscode.window.visibleTextEditors.length) return;
  await vscode.window.showTextDocument(vscode.Uri.file(task), { preview: false });
}
