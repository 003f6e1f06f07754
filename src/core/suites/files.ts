/**
 * Suite files (the originals a block's manifest names: read-only inputs, never a run's workspace): their checksums
 * and listings for the runner. What an agent may write is read only through `util/contained.ts` (issue 36); these
 * helpers are for the suite's own folders. Source: issue 5 (data checksums of a run); issue 11 (no link followed).
 */
import { createReadStream, existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { walkNoFollow } from '../util/contained.ts';
import { assertNotHeldDatabaseFile } from '../util/held-files.ts';

const checksumCache = new Map<string, Promise<string>>();

/**
 * sha256 of a suite file (cached by path, size and mtime for this process; concurrent callers share one read).
 * @param path the file's absolute path. @returns the hex digest.
 * @throws Error from the file system (missing, unreadable).
 */
export function fileSha256(path: string): Promise<string> {
  assertNotHeldDatabaseFile(path); // issue 39: never open the open run store outside SQLite
  const st = statSync(path);
  const key = `${path}\u0000${st.size}\u0000${st.mtimeMs}`;
  let p = checksumCache.get(key);
  if (!p) {
    p = new Promise<string>((res, rej) => {
      const h = createHash('sha256');
      createReadStream(path)
        .on('data', (c) => h.update(c))
        .on('end', () => res(h.digest('hex')))
        .on('error', rej);
    });
    checksumCache.set(key, p);
    p.catch(() => checksumCache.delete(key));
  }
  return p;
}

/**
 * Every file (and link) under a suite folder, recursive, following no links.
 * @returns absolute paths, or undefined when the folder does not exist.
 */
export function listAllFiles(dir: string): string[] | undefined {
  if (!existsSync(dir)) return undefined;
  return walkNoFollow(dir)
    .filter((e) => e.isFile() || e.isSymbolicLink())
    .map((e) => join(e.parentPath, e.name));
}

/**
 * The bytes of a suite file (a visible file a task workspace copies).
 * @throws LoupeInputError when it is a database this process holds open (issue 39); Error from the file system.
 */
export function readSuiteFile(path: string): Buffer {
  assertNotHeldDatabaseFile(path); // issue 39: never open the open run store outside SQLite
  return readFileSync(path);
}

/**
 * The real path of a suite path (links resolved), or the path itself when it does not resolve (a dangling link).
 * For comparing what a workspace entry stands for with the block's hidden files; nothing is read.
 */
export function realPathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
