/**
 * The `--store` option, the same for every command: a SQLite file (default `./.loupe/runs.sqlite`; only `run`/`demo`
 * create one) or a PostgreSQL team store URL (`postgres://user@host:port/db?passwordEnv=NAME`). The location is parsed
 * once (`parseStoreLocation`): a URL is never a path, and no password is ever printed.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describeStoreLocation, parseStoreLocation, type StoreLocation } from '../core/store/location.ts';
import { openStoreAt } from '../core/store/open.ts';
import type { RunStore } from '../core/store/run-store.ts';
import { LoupeInputError } from '../core/util/errors.ts';
import { UsageError, type CliIo } from './types.ts';
import { optionGroup } from './options.ts';

export const DEFAULT_STORE = join('.loupe', 'runs.sqlite');

/** The `--store` option group, shared by every command that opens the run store (issue 40). */
export const STORE_OPTIONS = optionGroup('store', {
  store: {
    type: 'string',
    value: 'FILE|postgres://USER@HOST:PORT/DB?passwordEnv=VAR',
    help: `the run store: a SQLite file (default ./${DEFAULT_STORE}) or the PostgreSQL team store`,
  },
});

/** The parsed `--store` location (paths absolute). @throws UsageError for a malformed location or URL. */
export function storeLocation(io: CliIo, value: string | undefined): StoreLocation {
  try {
    return parseStoreLocation(value ?? DEFAULT_STORE, io.cwd, io.env);
  } catch (e) {
    if (e instanceof LoupeInputError) throw new UsageError(`--store ${e.message}`);
    throw e;
  }
}

/**
 * The store file a command uses (absolute), for commands that keep files next to the store (`run`, `demo`, ...).
 * @throws UsageError for a postgres:// URL (record into a SQLite file, then `loupe store copy` it to the team store).
 */
export function storeFile(io: CliIo, value: string | undefined): string {
  const loc = storeLocation(io, value);
  if (loc.engine !== 'sqlite') {
    throw new UsageError(
      `--store ${loc.url}: this command works on a SQLite store file; record into a file and copy it to the team store with \`loupe store copy --from FILE --to URL\``,
    );
  }
  return loc.file;
}

/**
 * Opens a store that must exist (every command that reads runs). A mistyped path is an error, never a new
 * empty database; a PostgreSQL store is connected to (its tables created on first use).
 * @throws UsageError naming the path; LoupeInputError naming the URL (and host and port) when the server cannot
 *   be reached.
 */
export async function openExistingStore(io: CliIo, value: string | undefined): Promise<RunStore> {
  const loc = storeLocation(io, value);
  if (loc.engine === 'sqlite' && !existsSync(loc.file)) {
    throw new UsageError(
      `no run store at ${loc.file}${value ? '' : ' (the default)'}: check the path, or record runs first with \`loupe run\``,
    );
  }
  return openStoreAt(loc, { cwd: io.cwd, env: io.env });
}

/** How a store location is named in messages (path, or URL without password). */
export function storeName(io: CliIo, value: string | undefined): string {
  return describeStoreLocation(storeLocation(io, value));
}

/**
 * The folder for run folders (workspaces) of runs recorded into a store: `runs/` next to a SQLite file; for a team
 * store, `./.loupe/runs` on this machine (a run's workspace stays local, its record goes to the team store).
 */
export function runsDirOf(io: CliIo, loc: StoreLocation): string {
  return loc.engine === 'sqlite' ? join(dirname(loc.file), 'runs') : resolve(io.cwd, '.loupe', 'runs');
}

/**
 * The runs folder of the `--store` value (see {@link runsDirOf}): the only place a run's recorded workspace is read
 * from or written to (issue 36; elsewhere its files come from the store's copy).
 * @throws UsageError for a malformed location.
 */
export function runsRootOf(io: CliIo, value: string | undefined): string {
  return runsDirOf(io, storeLocation(io, value));
}
