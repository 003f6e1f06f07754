/**
 * THE contained file API (issue 36 "one contained file API"): every host-side read, write, listing and existence
 * check of a place agent code can write — a run's workspace, its run folder, a task workspace — goes through this
 * module, and an ESLint rule (`eslint.config.mjs`, "contained file access") keeps `node:fs` out of tool sets, runs,
 * scoring, review, failure tagging, artefact capture and export code.
 *
 * What an agent may have planted there: symbolic links (`report.md -> ~/.bashrc`, `figures -> ~/`), FIFOs (a read
 * blocks forever), UNIX sockets, device nodes, hard links to host files, trees of millions of files, huge files.
 * The rules:
 * - A path is given as a `root` (Loupe's own folder: the run workspace, the export folder; it must be a folder and
 *   not itself a link; folders above it may be links of the user's own layout; resolved once with `realpath`) and a
 *   path `rel` inside it. Whether a root read from the store may be used at all is the caller's check. Each component of `rel` is looked at with `lstat`, never followed:
 *   every folder on the way must be a real folder, the last component a regular file (or a folder where asked).
 * - Links, FIFOs, sockets and devices are refused, and so is a regular file with more than one hard link (it may be
 *   a host file's other name). A refusal is a {@link ContainedPathError} naming the path and why.
 * - A file is opened with `O_NOFOLLOW | O_NONBLOCK` (a FIFO swapped in after the check never blocks), the opened
 *   descriptor's `fstat` must be the file `lstat` saw (device and inode: a swap between check and open is refused),
 *   and on Linux the descriptor's real path (`/proc/self/fd`) must lie where the walk said (a folder swapped for a
 *   link meanwhile is refused).
 * - Reads are bounded in bytes ({@link CONTAINED_READ_MAX_BYTES} by default; a clear error names the file and its
 *   size) and in time (checked between chunks).
 * - Writes create a new file (`O_CREAT | O_EXCL | O_NOFOLLOW`) in the target folder, after checking the folder is
 *   contained, and rename it into place: nothing is ever written through a link, a FIFO or a hard link. An existing
 *   target that is not a regular file with one link is refused, not replaced.
 * - Existence checks say "exists" only for a contained regular file: a link answers false whatever it points to, so
 *   they are no oracle of host files.
 *
 * Source: issue 36 (host-side code never follows what an agent planted); issue 11 (run folder and disk bounded).
 */
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  realpathSync,
  renameSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeSync,
  type Dirent,
  type Stats,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';
import { LoupeInputError } from './errors.ts';
import { assertNotHeldDatabaseFile } from './held-files.ts';

/** Largest file a contained read returns by default (bytes): 64 MiB. */
export const CONTAINED_READ_MAX_BYTES = 64 * 1024 * 1024;
/** Longest a contained read may take by default (ms): 30 s. */
export const CONTAINED_READ_TIMEOUT_MS = 30_000;

/** Why a path was refused: the kind of thing planted, or the bound it broke. */
export type ContainedRefusal =
  | 'outside'
  | 'absent'
  | 'link'
  | 'fifo'
  | 'socket'
  | 'device'
  | 'hard link'
  | 'not a file'
  | 'not a folder'
  | 'changed'
  | 'too large'
  | 'timed out';

const REASON: Record<ContainedRefusal, string> = {
  outside: 'is outside the folder it must stay in',
  absent: 'no such file or folder',
  link: 'is (or passes through) a symbolic link; links in an agent-writable folder are never followed',
  fifo: 'is a FIFO (named pipe), not a regular file; it is never opened',
  socket: 'is a socket, not a regular file; it is never opened',
  device: 'is a device node, not a regular file; it is never opened',
  'hard link':
    'is a regular file with more than one hard link (possibly another name of a host file); it is never read or written',
  'not a file': 'is a folder, not a regular file',
  'not a folder': 'is not a folder',
  changed: 'changed while Loupe opened it (swapped for another file or a link); refused',
  'too large': 'is too large',
  'timed out': 'took too long to read',
};

/**
 * A refused contained access: `subject` is the path as given (relative to its root), `reason` what was wrong.
 * The message reads `<path>: <why>`.
 */
export class ContainedPathError extends LoupeInputError {
  readonly reason: ContainedRefusal;
  constructor(path: string, reason: ContainedRefusal, detail?: string) {
    super(path, detail ? `${REASON[reason]} (${detail})` : REASON[reason]);
    this.name = 'ContainedPathError';
    this.reason = reason;
  }
}

/** The kind of a file system entry as `lstat` sees it (links not followed). */
export type EntryKind = 'file' | 'dir' | 'link' | 'fifo' | 'socket' | 'device';

function kindOf(st: Stats): EntryKind {
  if (st.isSymbolicLink()) return 'link';
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'dir';
  if (st.isFIFO()) return 'fifo';
  if (st.isSocket()) return 'socket';
  return 'device';
}

function refusalOf(kind: EntryKind): ContainedRefusal {
  return kind === 'dir' ? 'not a file' : kind === 'file' ? 'not a folder' : kind;
}

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw e;
  }
}

/** The root's real path; it must be a folder, and not itself a link (folders above it may be: the user's layout). */
function realRoot(root: string): string {
  const own = lstatOrNull(resolve(root));
  if (own?.isSymbolicLink()) throw new ContainedPathError(root, 'link');
  let r: string;
  try {
    r = realpathSync(resolve(root));
  } catch {
    throw new ContainedPathError(root, 'absent');
  }
  if (!lstatSync(r).isDirectory()) throw new ContainedPathError(root, 'not a folder');
  return r;
}

/** The components of `rel` inside `root` (`rel` may be absolute when it lies inside `root`). */
function partsOf(root: string, rel: string): string[] {
  if (typeof rel !== 'string' || rel === '' || rel.includes('\0')) {
    throw new ContainedPathError(String(rel), 'outside', 'an empty or malformed path');
  }
  const abs = isAbsolute(rel) ? normalize(rel) : resolve(root, rel);
  let r = relative(resolve(root), abs);
  if (isAbsolute(rel) && (r.startsWith('..') || isAbsolute(r))) {
    // an absolute path through the root's real path
    try {
      r = relative(realpathSync(resolve(root)), abs);
    } catch {
      /* keep */
    }
  }
  if (r === '' || r === '..' || r.startsWith('..' + sep) || isAbsolute(r)) throw new ContainedPathError(rel, 'outside');
  return r.split(sep).filter((p) => p !== '' && p !== '.');
}

/** On Linux, the real path of an open descriptor; undefined where `/proc` is not there. */
function fdPath(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/**
 * Walks the folders of `parts` (all but the last) below the real root, refusing any that is not a real folder.
 * @param create make missing folders (one `mkdir` each, never through a link).
 * @returns the absolute path of the last folder and the (dev, ino) of each folder walked.
 */
function walkFolders(
  real: string,
  rel: string,
  parts: readonly string[],
  create: boolean,
): { dir: string; seen: Array<[string, number, number]> } {
  let cur = real;
  const seen: Array<[string, number, number]> = [];
  for (let i = 0; i < parts.length; i++) {
    cur = join(cur, parts[i]!);
    let st = lstatOrNull(cur);
    if (!st && create) {
      try {
        mkdirSync(cur, 0o755);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      st = lstatOrNull(cur);
    }
    const shown = parts.slice(0, i + 1).join('/');
    if (!st) throw new ContainedPathError(rel, 'absent', i + 1 < parts.length || !create ? `no ${shown}` : undefined);
    const k = kindOf(st);
    if (k !== 'dir') {
      throw new ContainedPathError(
        rel,
        k === 'file' ? 'not a folder' : refusalOf(k),
        shown === rel ? undefined : `at ${shown}`,
      );
    }
    seen.push([cur, st.dev, st.ino]);
  }
  return { dir: cur, seen };
}

/** After opening: the folders walked are still the same ones (no swap for a link meanwhile). */
function sameFolders(seen: ReadonlyArray<[string, number, number]>): boolean {
  return seen.every(([p, dev, ino]) => {
    const st = lstatOrNull(p);
    return !!st && st.isDirectory() && st.dev === dev && st.ino === ino;
  });
}

/** What {@link statContained} reports of a contained entry. */
export interface ContainedStat {
  kind: 'file' | 'dir';
  /** Bytes (files). */
  size: number;
  /** Last modification, ms since the epoch. */
  mtimeMs: number;
}

/** `lstat` of the last component of `rel`, its folders walked contained; null when it or a folder above is absent. */
function lstatLast(root: string, rel: string): Stats | null {
  const real = realRoot(root);
  const parts = partsOf(root, rel);
  let dir: string;
  try {
    dir = walkFolders(real, rel, parts.slice(0, -1), false).dir;
  } catch (e) {
    if (e instanceof ContainedPathError && e.reason === 'absent') return null;
    throw e;
  }
  return lstatOrNull(join(dir, parts[parts.length - 1]!));
}

/**
 * Looks at `rel` inside `root` without following anything.
 * @param root Loupe's folder (run workspace, export folder); `rel` a path inside it.
 * @returns `{ kind, size, mtimeMs }` for a regular file with one link or a real folder; null when it does not exist.
 * @throws ContainedPathError (a LoupeInputError naming `rel`) for a path leaving `root`, a link, FIFO, socket, device
 *   or hard-linked file at or above it. Source: issue 36.
 */
export function statContained(root: string, rel: string): ContainedStat | null {
  const st = lstatLast(root, rel);
  if (!st) return null;
  const k = kindOf(st);
  if (k !== 'file' && k !== 'dir') throw new ContainedPathError(rel, k);
  if (k === 'file' && st.nlink > 1) throw new ContainedPathError(rel, 'hard link');
  return { kind: k, size: st.size, mtimeMs: st.mtimeMs };
}

/**
 * Whether `rel` is a contained regular file of `root` (one link, no link on the way). A link, FIFO, socket, device or
 * hard-linked file answers false whatever it points to: no existence oracle of host files. Source: issue 36.
 * @returns true only for a contained regular file.
 * @throws nothing for a planted entry; Error only for an unreadable `root`.
 */
export function containedFileExists(root: string, rel: string): boolean {
  try {
    return statContained(root, rel)?.kind === 'file';
  } catch (e) {
    if (e instanceof ContainedPathError) return false;
    throw e;
  }
}

/**
 * Reads a file an agent may have written, contained (see the module comment).
 * @param root Loupe's folder (the run workspace); `rel` the file inside it (`report.md`, `figures/fig-1-1.png`).
 * @param encoding `utf8` for text, null for bytes.
 * @param opts `maxBytes` largest size read (default {@link CONTAINED_READ_MAX_BYTES}); `timeoutMs` longest read
 *   (default {@link CONTAINED_READ_TIMEOUT_MS}).
 * @returns the contents.
 * @throws ContainedPathError naming `rel`: outside `root`, absent, a link (at or above it), FIFO, socket, device,
 *   hard-linked file, a folder, swapped while opened, larger than `maxBytes` (its size in the message), slower than
 *   `timeoutMs`. Source: issue 36 (a FIFO named report.md hung `loupe score`).
 */
export function readContainedFile(
  root: string,
  rel: string,
  encoding: 'utf8',
  opts?: { maxBytes?: number; timeoutMs?: number },
): string;
export function readContainedFile(
  root: string,
  rel: string,
  encoding: null,
  opts?: { maxBytes?: number; timeoutMs?: number },
): Buffer;
export function readContainedFile(
  root: string,
  rel: string,
  encoding: 'utf8' | null,
  opts: { maxBytes?: number; timeoutMs?: number } = {},
): string | Buffer {
  const maxBytes = opts.maxBytes ?? CONTAINED_READ_MAX_BYTES;
  const deadline = Date.now() + (opts.timeoutMs ?? CONTAINED_READ_TIMEOUT_MS);
  const real = realRoot(root);
  const parts = partsOf(root, rel);
  const { dir, seen } = walkFolders(real, rel, parts.slice(0, -1), false);
  const abs = join(dir, parts[parts.length - 1]!);
  const st = lstatOrNull(abs);
  if (!st) throw new ContainedPathError(rel, 'absent');
  const k = kindOf(st);
  if (k !== 'file') throw new ContainedPathError(rel, refusalOf(k));
  if (st.nlink > 1) throw new ContainedPathError(rel, 'hard link');
  if (st.size > maxBytes) {
    throw new ContainedPathError(rel, 'too large', `${st.size} bytes; Loupe reads at most ${maxBytes}`);
  }
  // a database this process holds open through SQLite (the run store, its -wal/-shm): opening and closing it here
  // would drop the process's SQLite locks (issue 39)
  assertNotHeldDatabaseFile(abs);
  let fd: number;
  try {
    fd = openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') throw new ContainedPathError(rel, 'link');
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new ContainedPathError(rel, 'absent');
    throw e;
  }
  try {
    const f = fstatSync(fd);
    if (!f.isFile() || f.dev !== st.dev || f.ino !== st.ino) throw new ContainedPathError(rel, 'changed');
    if (f.nlink > 1) throw new ContainedPathError(rel, 'hard link');
    const where = fdPath(fd);
    if (where !== undefined ? where !== abs : !sameFolders(seen)) {
      throw new ContainedPathError(rel, 'changed', 'a folder on its path was swapped');
    }
    const chunks: Buffer[] = [];
    let total = 0;
    const buf = Buffer.allocUnsafe(Math.min(1 << 20, Math.max(1, maxBytes + 1)));
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) {
        throw new ContainedPathError(rel, 'too large', `more than ${maxBytes} bytes; Loupe reads at most ${maxBytes}`);
      }
      chunks.push(Buffer.from(buf.subarray(0, n)));
      if (Date.now() > deadline) {
        throw new ContainedPathError(rel, 'timed out', `more than ${opts.timeoutMs ?? CONTAINED_READ_TIMEOUT_MS} ms`);
      }
    }
    const out = Buffer.concat(chunks, total);
    return encoding ? out.toString(encoding) : out;
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes a folder the user named (an export folder, `loupe run --results DIR`) with the folders above it, following the
 * user's own links above it as any tool would; the files then written into it go through
 * {@link writeContainedFile} with it as the root, so nothing below it is followed. Not for agent-writable places:
 * a folder inside a workspace is made with {@link mkdirContained}.
 * @returns the folder's absolute path.
 * @throws ContainedPathError when the path is a link itself or not a folder; Error from the file system. Source: issue 36.
 */
export function ensureFolder(dir: string): string {
  const abs = resolve(dir);
  const st = lstatOrNull(abs);
  if (st && st.isSymbolicLink()) throw new ContainedPathError(dir, 'link');
  if (st && !st.isDirectory()) throw new ContainedPathError(dir, 'not a folder');
  if (!st) mkdirSync(abs, { recursive: true });
  return abs;
}

/**
 * Removes a whole folder Loupe made (a task workspace being replaced), entries and all; links inside are removed,
 * never followed (`rm -r` semantics). The folder itself must not be a link.
 * @returns true when it was there.
 * @throws ContainedPathError when `dir` is a link or not a folder; Error from the file system. Source: issue 36.
 */
export function removeFolderTree(dir: string): boolean {
  const st = lstatOrNull(resolve(dir));
  if (!st) return false;
  if (st.isSymbolicLink()) throw new ContainedPathError(dir, 'link');
  if (!st.isDirectory()) throw new ContainedPathError(dir, 'not a folder');
  rmSync(resolve(dir), { recursive: true, force: true });
  return true;
}

/**
 * Makes the folder `rel` inside `root` (and the folders on its way), never through a link.
 * @returns the absolute path of the folder.
 * @throws ContainedPathError naming `rel` when a component is a link, a file, a FIFO, socket or device, or the path
 *   leaves `root`. Source: issue 36.
 */
export function mkdirContained(root: string, rel: string): string {
  const real = realRoot(root);
  const parts = partsOf(root, rel);
  const { dir, seen } = walkFolders(real, rel, parts, true);
  if (!sameFolders(seen)) throw new ContainedPathError(rel, 'changed', 'a folder on its path was swapped');
  return dir;
}

/**
 * Writes a file into an agent-writable folder, contained: the folders on the way are made or checked (no link
 * followed), the bytes go to a new file created there (`O_CREAT | O_EXCL | O_NOFOLLOW`) and renamed into place, so a
 * link, FIFO or hard link planted at the target is never written through.
 * @param root Loupe's folder (run workspace, export folder); `rel` the file inside it.
 * @param data the contents (text is written as UTF-8); `opts.mode` the file's permission bits (default 0o644).
 * @returns the absolute path written (`root` as given joined with `rel`).
 * @throws ContainedPathError naming `rel` when the path leaves `root`, a folder on the way is a link or not a folder,
 *   or the target exists and is not a regular file with one link (a link, FIFO, socket, device, hard link, folder:
 *   refused, left as it is); Error from the file system (disk full). Source: issue 36.
 */
export function writeContainedFile(
  root: string,
  rel: string,
  data: string | Uint8Array,
  opts: { mode?: number } = {},
): string {
  const real = realRoot(root);
  const parts = partsOf(root, rel);
  const { dir, seen } = walkFolders(real, rel, parts.slice(0, -1), true);
  const name = parts[parts.length - 1]!;
  const target = join(dir, name);
  const st = lstatOrNull(target);
  if (st) {
    const k = kindOf(st);
    if (k !== 'file') throw new ContainedPathError(rel, refusalOf(k), 'not overwritten');
    if (st.nlink > 1) throw new ContainedPathError(rel, 'hard link', 'not overwritten');
  }
  const tmpName = `.${name.slice(0, 100)}.loupe-${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  const tmp = join(dir, tmpName);
  const fd = openSync(
    tmp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    0o600,
  );
  let ok = false;
  try {
    const where = fdPath(fd);
    if (where !== undefined ? where !== tmp : !sameFolders(seen)) {
      // a folder on the way was swapped for a link between the check and the open: undo and refuse
      try {
        if (where) unlinkSync(where);
      } catch {
        /* gone */
      }
      throw new ContainedPathError(rel, 'changed', 'a folder on its path was swapped');
    }
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    let off = 0;
    while (off < bytes.byteLength) off += writeSync(fd, bytes, off, bytes.byteLength - off);
    fchmodSync(fd, opts.mode ?? 0o644);
    ok = true;
  } finally {
    closeSync(fd);
    if (!ok) {
      try {
        unlinkSync(tmp);
      } catch {
        /* gone, or never ours */
      }
    }
  }
  try {
    renameSync(tmp, target); // rename replaces the directory entry: it never writes through what is there
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      /* gone */
    }
    if ((e as NodeJS.ErrnoException).code === 'EISDIR' || (e as NodeJS.ErrnoException).code === 'ENOTEMPTY') {
      throw new ContainedPathError(rel, 'not a file');
    }
    throw e;
  }
  return join(resolve(root), ...parts);
}

/**
 * The kind of the entry at `rel` inside `root`, links not followed (for code that lays out a workspace and must tell
 * its own mount points from what an agent planted).
 * @returns the entry's kind, or null when absent.
 * @throws ContainedPathError when a folder above it is a link or not a folder, or the path leaves `root`. Source: issue 36.
 */
export function entryKindContained(root: string, rel: string): { kind: EntryKind; size: number } | null {
  const st = lstatLast(root, rel);
  return st ? { kind: kindOf(st), size: st.size } : null;
}

/**
 * Removes the entry at `rel` inside `root` without following it: a link, a file, a FIFO or socket is unlinked (the
 * link itself, never its target); an empty folder is removed; a folder with entries is left.
 * @returns true when something was removed.
 * @throws ContainedPathError when a folder above it is a link or not a folder, or the path leaves `root`. Source: issue 36.
 */
export function removeContainedEntry(root: string, rel: string): boolean {
  const e = entryKindContained(root, rel);
  if (!e) return false;
  const p = join(realRoot(root), ...partsOf(root, rel));
  try {
    if (e.kind === 'dir') rmdirSync(p);
    else unlinkSync(p);
    return true;
  } catch {
    return false; // not empty, or gone meanwhile
  }
}

/**
 * Makes a symbolic link of Loupe's own at `rel` inside `root` (the sandbox-off layout, the links a finished run's
 * workspace shows to its data); the folders on the way are made or checked, never through a link. An existing entry
 * is left alone.
 * @param target what the link points to (a host path Loupe chose, e.g. the suite's data folder).
 * @returns true when the link was made.
 * @throws ContainedPathError when a folder on the way is a link or not a folder. Source: issue 36.
 */
export function symlinkContained(root: string, rel: string, target: string): boolean {
  const real = realRoot(root);
  const parts = partsOf(root, rel);
  const { dir } = walkFolders(real, rel, parts.slice(0, -1), true);
  const p = join(dir, parts[parts.length - 1]!);
  if (lstatOrNull(p)) return false;
  symlinkSync(target, p);
  return true;
}

/** One entry of {@link listContained}: path relative to the root (`/`-separated), kind, size in bytes. */
export interface ContainedEntry {
  path: string;
  kind: EntryKind;
  size: number;
}

/**
 * Every entry below `root`, not following links (links, FIFOs, sockets and devices are listed with their kind, never
 * entered or opened; folders are entered only when real).
 * @param maxEntries stop after this many entries (a planted tree of millions of files cannot stall the host).
 * @returns the entries (folders before their contents) and whether the listing stopped at `maxEntries`.
 * @throws ContainedPathError when `root` is not a folder. Source: issue 36.
 */
export function listContained(root: string, maxEntries = 1_000_000): { entries: ContainedEntry[]; truncated: boolean } {
  const real = realRoot(root);
  const out: ContainedEntry[] = [];
  const stack: string[] = [''];
  while (stack.length && out.length < maxEntries) {
    const rel = stack.pop()!;
    let names: string[];
    try {
      names = readdirSync(rel ? join(real, rel) : real);
    } catch {
      continue;
    }
    for (const n of names.sort()) {
      if (out.length >= maxEntries) break;
      const r = rel ? `${rel}/${n}` : n;
      const st = lstatOrNull(join(real, r));
      if (!st) continue;
      const kind = kindOf(st);
      out.push({ path: r, kind, size: st.size });
      if (kind === 'dir') stack.push(r);
    }
  }
  return { entries: out, truncated: out.length >= maxEntries };
}

/**
 * Every entry below `root`, not following links (links are listed, their targets not entered).
 * Node's `readdirSync(..., { recursive: true })` follows links to folders (a planted `x -> /` walks the
 * whole host), so the walk is done here, one folder at a time, entering real folders only.
 * @param maxEntries stop after this many entries (a planted tree of millions of files cannot stall the host).
 * @returns Dirents (with `parentPath`); an unreadable folder is skipped. Source: issue 11.
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
      if (e.isDirectory()) stack.push(join(e.parentPath, e.name));
    }
  }
  return out;
}

const walk = walkNoFollow;

/**
 * Removes every symbolic link below `root` (links Loupe made itself are not there when the sandbox
 * mounts the block's files; with the sandbox off the caller passes `keep`).
 * @param keep absolute paths of links to keep (Loupe's own, sandbox off).
 * @returns the removed links, relative to `root`. Source: issue 11.
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
 * @returns total bytes. Source: issue 11 (workspace quota).
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
