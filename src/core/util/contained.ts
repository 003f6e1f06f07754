/**
 * Reading what an agent wrote without following what it planted. An agent's workspace is the one place
 * agent code may write; it may also plant symbolic links there (`report.md -> /suite/benchmark.csv`).
 * Host code that reads workspace files (reports, figures, exports, replay) goes through these helpers:
 * a path that leaves the workspace or passes through a link is refused, and links are removed when a
 * run ends. Source: issue 11 (run folder and disk bounded).
 */
import { lstatSync, readdirSync, readFileSync, unlinkSync, type Dirent } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { LoupeInputError } from './errors.ts';
import { assertNotHeldDatabaseFile } from './held-files.ts';

/**
 * Resolves `rel` inside `root` without following links.
 * @param root the workspace folder (absolute); `rel` a path relative to it (absolute paths must lie inside it).
 * @returns the absolute path.
 * @throws LoupeInputError(rel) when the path leaves `root`, or any component of it below `root` is a
 *   symbolic link, or it does not exist.
 */
export function containedPath(root: string, rel: string): string {
  const base = resolve(root);
  const abs = resolve(base, rel);
  const r = relative(base, abs);
  if (r === '' || r.startsWith('..') || isAbsolute(r)) throw new LoupeInputError(rel, `path is outside the workspace ${base}`);
  let cur = base;
  for (const part of r.split(sep)) {
    cur = join(cur, part);
    let st;
    try {
      st = lstatSync(cur);
    } catch {
      throw new LoupeInputError(rel, 'no such file in the workspace');
    }
    if (st.isSymbolicLink()) throw new LoupeInputError(rel, 'is (or passes through) a symbolic link planted in the workspace; links are never followed');
  }
  return abs;
}

/**
 * Reads a file the agent wrote, refusing links and paths outside the workspace (see {@link containedPath}).
 * @returns the contents as UTF-8 text, or as bytes when `encoding` is null.
 * @throws LoupeInputError as {@link containedPath}, or naming the file when it is a database this process holds
 *   open (the run store or its -wal/-shm: reading it would drop the process's SQLite locks, issue 39); Error from the
 *   file system.
 */
export function readContainedFile(root: string, rel: string, encoding: 'utf8'): string;
export function readContainedFile(root: string, rel: string, encoding: null): Buffer;
export function readContainedFile(root: string, rel: string, encoding: 'utf8' | null): string | Buffer {
  const p = containedPath(root, rel);
  assertNotHeldDatabaseFile(p);
  return encoding ? readFileSync(p, encoding) : readFileSync(p);
}

/**
 * Every entry below `root`, not following links (links are listed, their targets not entered).
 * Node's `readdirSync(..., { recursive: true })` follows links to folders (a planted `x -> /` walks the
 * whole host), so the walk is done here, one folder at a time, entering real folders only.
 * @param maxEntries stop after this many entries (a planted tree of millions of files cannot stall the host).
 */
export function walkNoFollow(root: string, maxEntries = 1_000_000): Dirent[] {
  const out: Dirent[] = [];
  const stack = [root];
  while (stack.length && out.length < maxEntries) {
    const dir = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      out.push(e);
      if (e.isDirectory()) stack.push(join(dir, e.name));
    }
  }
  return out;
}

const walk = walkNoFollow;

/**
 * Removes every symbolic link below `root` (links Loupe made itself are not there when the sandbox
 * mounts the block's files; with the sandbox off the caller passes `keep`).
 * @param keep absolute paths of links to keep (Loupe's own, sandbox off).
 * @returns the removed links, relative to `root`.
 */
export function removePlantedLinks(root: string, keep: ReadonlySet<string> = new Set()): string[] {
  const removed: string[] = [];
  for (const e of walk(root)) {
    if (!e.isSymbolicLink()) continue;
    const p = join(e.parentPath, e.name);
    if (keep.has(resolve(p))) continue;
    try {
      unlinkSync(p);
      removed.push(relative(root, p));
    } catch {
      /* gone already */
    }
  }
  return removed;
}

/**
 * Bytes used below `root` by regular files (links not followed, each inode counted once; allocated
 * blocks, so sparse files count what they occupy).
 * @returns total bytes.
 */
export function treeBytes(root: string): number {
  let total = 0;
  const seen = new Set<string>();
  for (const e of walk(root)) {
    if (!e.isFile()) continue;
    try {
      const st = lstatSync(join(e.parentPath, e.name));
      const key = `${st.dev}:${st.ino}`;
      if (seen.has(key)) continue;
      seen.add(key);
      total += Math.max(st.size > 0 && st.blocks === 0 ? 0 : st.blocks * 512, 0);
    } catch {
      /* removed meanwhile */
    }
  }
  return total;
}
