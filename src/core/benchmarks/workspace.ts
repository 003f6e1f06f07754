/**
 * Task workspaces: a folder with `TASK.md` (what the agent is told) and the block's visible files
 * as symlinks or read-only copies. Hidden resources are never linked or copied; the result is
 * verified after creation. Source: issue 3 "Open Task as Workspace".
 */
import { join, resolve } from 'node:path';
import {
  ensureFolder,
  listContained,
  readContainedFile,
  removeContainedEntry,
  removeFolderTree,
  symlinkContained,
  writeContainedFile,
} from '../util/contained.ts';
import { readSuiteFile, realPathOr } from '../suites/files.ts';
import { LoupeInputError } from '../util/errors.ts';
import type { Block, BlockItemBase, VisibleFile } from '../suites/types.ts';
import { fileSize } from '../suites/util.ts';
import { createGuard, visibleFiles } from '../suites/guard.ts';
import { getBenchmark, itemTypeView } from './registry.ts';

/** `auto` workspaces copy the visible files when they total at most this many bytes. */
export const AUTO_COPY_LIMIT = 64 * 1024 * 1024;

/** Marker file written into every workspace Loupe creates. */
export const TASK_MARKER = '.loupe-task.json';

/** Item as shown to an agent: its type's hidden fields (`ItemTypeView.hiddenFields`: LongDA's ground truth) removed. */
export type PublicItem = BlockItemBase;

/**
 * The block's items without the hidden fields their benchmark declares for their type (LongDA: `groundTruth`,
 * `answerText`; BLADE MCQ items and the other item types carry none).
 */
export function publicItems(block: Block): PublicItem[] {
  return block.items.map((it) => {
    const hide = itemTypeView(block.suite, it)?.hiddenFields ?? [];
    return hide.length
      ? (Object.fromEntries(Object.entries(it).filter(([k]) => !hide.includes(k))) as unknown as PublicItem)
      : it;
  });
}

const fmtFiles = (files: VisibleFile[], max = 400) => {
  const lines = files.slice(0, max).map((f) => `- \`${f.rel}\``);
  if (files.length > max) lines.push(`- … and ${files.length - max} more`);
  return lines.join('\n');
};

/**
 * Writes the agent-facing task description for a block, in Loupe's own words. Never includes
 * answers, annotations, checklists, MCQ keys or reference reports.
 * @returns markdown.
 */
export function taskMarkdown(block: Block): string {
  const v = block.visible;
  const out: string[] = [`# ${block.title}`, ''];
  const filesSection = () => {
    if (v.data.length) out.push('## Data files', '', fmtFiles(v.data), '');
    if (v.docs.length) out.push('## Documentation', '', fmtFiles(v.docs), '');
  };
  out.push(...getBenchmark(block.suite, `block ${block.id}`).taskText(block));
  filesSection();
  if (v.missing.length) out.push('## Referenced but not available', '', ...v.missing.map((m) => `- \`${m}\``), '');
  return out.join('\n').replace(/\n{3,}/g, '\n\n');
}

export interface WorkspaceResult {
  dir: string;
  taskFile: string;
  /** Visible files as placed in the workspace (`path` = workspace path). */
  files: VisibleFile[];
  mode: 'symlink' | 'copy';
}

/**
 * Creates a task workspace for a block.
 * @param block the block (its visible files must exist on disk).
 * @param destDir folder to create; it must not exist, be empty, or be a workspace Loupe made before
 *   (then it is replaced).
 * @param opts `mode`: `auto` (default: read-only copies when the visible files total at most
 *   `copyLimitBytes`, 64 MiB by default, else symlinks), `copy` (copies, chmod 0444) or `symlink`
 *   (links to the real files; the agent sandbox must mount them read-only, since a link cannot be).
 * @returns the folder, `TASK.md` path and the placed files.
 * @throws LoupeInputError when `destDir` is a non-empty folder Loupe did not create, or a visible file is missing.
 *   Throws Error if a hidden resource ended up in the workspace (should never happen; it is removed first).
 */
export function createTaskWorkspace(
  block: Block,
  destDir: string,
  opts: { mode?: 'symlink' | 'copy' | 'auto'; copyLimitBytes?: number } = {},
): WorkspaceResult {
  const guardFirst = createGuard(block);
  const totalBytes = guardFirst.files.reduce((n, f) => n + fileSize(f.path), 0);
  const mode: 'symlink' | 'copy' =
    opts.mode === 'copy' || opts.mode === 'symlink'
      ? opts.mode
      : totalBytes <= (opts.copyLimitBytes ?? AUTO_COPY_LIMIT)
        ? 'copy'
        : 'symlink';
  const dir = resolve(destDir);
  // an agent may have worked in an earlier workspace here: it is listed and removed without following anything (issue 36)
  let entries: string[];
  try {
    entries = listContained(dir, 10_000)
      .entries.filter((e) => !e.path.includes('/'))
      .map((e) => e.path);
  } catch {
    entries = []; // not there yet
  }
  if (entries.length > 0) {
    if (!entries.includes(TASK_MARKER)) {
      throw new LoupeInputError(dir, 'folder exists and is not empty (and is not a Loupe task workspace)');
    }
    removeFolderTree(dir);
  }
  ensureFolder(dir);
  const guard = guardFirst;
  const files: VisibleFile[] = [];
  const dropped = visibleFiles(block).length - guard.files.length;
  for (const f of guard.files) {
    const src = guard.resolve(f.rel);
    const dst = join(dir, ...f.rel.split('/'));
    if (!dst.startsWith(dir)) continue;
    if (mode === 'symlink') symlinkContained(dir, f.rel, src);
    else writeContainedFile(dir, f.rel, readSuiteFile(src), { mode: 0o444 });
    files.push({ path: dst, rel: f.rel, size: f.size });
  }
  const taskFile = join(dir, 'TASK.md');
  writeContainedFile(dir, 'TASK.md', taskMarkdown(block));
  writeContainedFile(
    dir,
    TASK_MARKER,
    JSON.stringify(
      {
        block: block.id,
        suite: block.suite,
        suiteId: block.suiteId,
        mode,
        createdAt: new Date().toISOString(),
        files: files.map((f) => f.rel),
        droppedHidden: dropped,
      },
      null,
      2,
    ),
  );
  verifyNoHidden(block, dir);
  return { dir, taskFile, files, mode };
}

/**
 * Walks a workspace and checks no file is, links to, or has the same bytes-path as a hidden resource.
 * @throws Error naming the offending workspace path.
 */
export function verifyNoHidden(block: Block, dir: string): void {
  const hidden = new Set<string>();
  const add = (p: string) => {
    hidden.add(resolve(p));
    hidden.add(realPathOr(p));
  };
  for (const h of block.hidden.files) add(h);
  // listed without following anything; a link's target is resolved only to compare it with the hidden files
  for (const e of listContained(dir).entries) {
    if (e.kind === 'dir' || e.path.split('/').length > 41) continue;
    const p = join(dir, ...e.path.split('/'));
    const r = realPathOr(p);
    if (hidden.has(r)) {
      removeContainedEntry(dir, e.path);
      throw new Error(`leak: ${p} resolves to hidden resource ${r}`);
    }
  }
}

/**
 * Reads the marker of a workspace Loupe created, contained (an agent works in the task workspace: a link, FIFO or
 * hard link planted as the marker is not read, issue 36).
 * @returns the marker, or undefined when absent, planted or not JSON.
 */
export function readTaskMarker(
  dir: string,
): { block: string; suite: string; suiteId: string; files: string[] } | undefined {
  try {
    return JSON.parse(readContainedFile(dir, TASK_MARKER, 'utf8', { maxBytes: 1 << 20 })) as {
      block: string;
      suite: string;
      suiteId: string;
      files: string[];
    };
  } catch {
    return undefined;
  }
}
