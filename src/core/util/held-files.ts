/**
 * SQLite database files this process holds open, and the guard that keeps every other file access off them.
 *
 * Why: SQLite guards a database in WAL mode with POSIX advisory (fcntl) locks — a SHARED lock on the database file
 * and one on the DMS byte of its `-shm` file for as long as a connection is open. POSIX drops ALL of a process's
 * locks on a file when the process closes ANY descriptor of that file, so code that merely opens and closes the
 * database file and its `-shm` outside SQLite (a walk reading every file of a folder, a header sniff, a checksum)
 * silently takes the process's locks away. The next other process that closes its connection (the CLI after
 * `loupe score`) then sees itself alone, checkpoints, and deletes `-wal` and `-shm` under the open connection; that
 * connection's next statement fails with "disk I/O error" (issue 39 item 4: the run store in the extension host).
 *
 * So: whoever opens a database file registers it ({@link holdDatabaseFile}); code that opens files it found
 * (walks, sniffers, hashes, copies) asks {@link isHeldDatabaseFile} first, or calls {@link assertNotHeldDatabaseFile}.
 * Files are compared by device and inode (links and other spellings of the path are caught), the database itself
 * and its `-wal`, `-shm` and `-journal` companions. `stat` opens nothing, so the check itself is safe.
 * Source: issue 39 "no lost locks"; SQLite "How To Corrupt An SQLite Database File" §2.2 (POSIX advisory locks
 * canceled by a separate thread doing close()).
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { LoupeInputError } from './errors.ts';

/** Held database files: absolute path → how many open connections registered it. */
const held = new Map<string, number>();

const COMPANIONS = ['', '-wal', '-shm', '-journal'];

function idOf(path: string): string | undefined {
  try {
    const st = statSync(path, { bigint: true });
    return `${st.dev}:${st.ino}`;
  } catch {
    return undefined;
  }
}

/**
 * Registers a database file this process keeps open through SQLite (the run store, the documentation index).
 * @param file path of the database file (`:memory:` and '' are ignored).
 * @returns the release function (call it when the connection closes; idempotent).
 */
export function holdDatabaseFile(file: string): () => void {
  if (!file || file === ':memory:') return () => undefined;
  const abs = resolve(file);
  held.set(abs, (held.get(abs) ?? 0) + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const n = (held.get(abs) ?? 1) - 1;
    if (n > 0) held.set(abs, n);
    else held.delete(abs);
  };
}

/**
 * True when `path` is (by device and inode, following links) a database file this process holds open through SQLite,
 * or its `-wal`, `-shm` or `-journal` file. A path that does not exist is not held.
 * @param path any path (absolute, or relative to the working directory).
 */
export function isHeldDatabaseFile(path: string): boolean {
  if (!held.size) return false;
  const id = idOf(path);
  if (!id) return false;
  for (const file of held.keys()) {
    for (const c of COMPANIONS) if (idOf(file + c) === id) return true;
  }
  return false;
}

/**
 * Throws unless `path` may be opened outside SQLite (see the module comment).
 * @param path the file about to be opened.
 * @throws LoupeInputError naming the file when it is a held database file or one of its companions.
 */
export function assertNotHeldDatabaseFile(path: string): void {
  if (isHeldDatabaseFile(path)) {
    throw new LoupeInputError(
      path,
      'is a database this process has open (the run store or an index): it is read only through SQLite, never as a file',
    );
  }
}

/** The database files held now (absolute paths), for tests and diagnostics. */
export function heldDatabaseFiles(): string[] {
  return [...held.keys()];
}
