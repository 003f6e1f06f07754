/**
 * Task workspaces: a folder with `TASK.md` (what the agent is told) and the block's visible files
 * as symlinks or read-only copies. Hidden resources are never linked or copied; the result is
 * verified after creation. Source: issue 3 "Open Task as Workspace".
 */
import { chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { LoupeInputError } from '../util/errors.ts';
import { assertNotHeldDatabaseFile } from '../util/held-files.ts';
import type { Block, BlockItem, LongdaQuery, VisibleFile } from '../suites/types.ts';
import { fileSize } from '../suites/util.ts';
import { createGuard, visibleFiles } from '../suites/guard.ts';
import { getBenchmark } from './registry.ts';

/** `auto` workspaces copy the visible files when they total at most this many bytes. */
export const AUTO_COPY_LIMIT = 64 * 1024 * 1024;

/** Marker file written into every workspace Loupe creates. */
export const TASK_MARKER = '.loupe-task.json';

/** Item as shown to an agent: the LongDA ground truth (`groundTruth`, `answerText`) removed. */
export type PublicItem = Exclude<BlockItem, LongdaQuery> | Omit<LongdaQuery, 'groundTruth' | 'answerText'>;

/**
 * The block's items without hidden fields (LongDA ground truth). BLADE MCQ items and the other
 * item types carry no hidden fields.
 */
export function publicItems(block: Block): PublicItem[] {
  return block.items.map((it) => {
    if (it.type !== 'longda-query') return it;
    const { groundTruth: _g, answerText: _a, ...rest } = it;
    return rest;
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
export function createTaskWorkspace(block: Block, destDir: string, opts: { mode?: 'symlink' | 'copy' | 'auto'; copyLimitBytes?: number } = {}): WorkspaceResult {
  const guardFirst = createGuard(block);
  const totalBytes = guardFirst.files.reduce((n, f) => n + fileSize(f.path), 0);
  const mode: 'symlink' | 'copy' = opts.mode === 'copy' || opts.mode === 'symlink' ? opts.mode : totalBytes <= (opts.copyLimitBytes ?? AUTO_COPY_LIMIT) ? 'copy' : 'symlink';
  const dir = resolve(destDir);
  if (existsSync(dir)) {
    const entries = readdirSync(dir);
    if (entries.length > 0) {
      if (!entries.includes(TASK_MARKER)) throw new LoupeInputError(dir, 'folder exists and is not empty (and is not a Loupe task workspace)');
      rmSync(dir, { recursive: true, force: true });
    }
  }
  mkdirSync(dir, { recursive: true });
  const guard = guardFirst;
  const files: VisibleFile[] = [];
  const dropped = visibleFiles(block).length - guard.files.length;
  for (const f of guard.files) {
    const src = guard.resolve(f.rel);
    const dst = join(dir, ...f.rel.split('/'));
    if (!dst.startsWith(dir)) continue;
    mkdirSync(dirname(dst), { recursive: true });
    if (mode === 'symlink') symlinkSync(src, dst);
    else {
      assertNotHeldDatabaseFile(src);
      copyFileSync(src, dst);
      chmodSync(dst, 0o444);
    }
    files.push({ path: dst, rel: f.rel, size: f.size });
  }
  const taskFile = join(dir, 'TASK.md');
  writeFileSync(taskFile, taskMarkdown(block));
  writeFileSync(
    join(dir, TASK_MARKER),
    JSON.stringify({ block: block.id, suite: block.suite, suiteId: block.suiteId, mode, createdAt: new Date().toISOString(), files: files.map((f) => f.rel), droppedHidden: dropped }, null, 2),
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
    try {
      hidden.add(realpathSync(p));
    } catch {
      // not on disk
    }
  };
  for (const h of block.hidden.files) add(h);
  for (const p of block.hidden.publications ?? []) add(p);
  if (block.hidden.referenceReport) add(block.hidden.referenceReport);
  const walk = (d: string, depth: number) => {
    if (depth > 40) return;
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      const st = lstatSync(p);
      if (st.isDirectory()) walk(p, depth + 1);
      else {
        let r = p;
        try {
          r = realpathSync(p);
        } catch {
          // dangling link: fine
        }
        if (hidden.has(r)) {
          rmSync(p, { force: true });
          throw new Error(`leak: ${p} resolves to hidden resource ${r}`);
        }
      }
    }
  };
  walk(dir, 0);
}

/** Reads the marker of a workspace Loupe created, or undefined. */
export function readTaskMarker(dir: string): { block: string; suite: string; suiteId: string; files: string[] } | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, TASK_MARKER), 'utf8')) as { block: string; suite: string; suiteId: string; files: string[] };
  } catch {
    return undefined;
  }
}
