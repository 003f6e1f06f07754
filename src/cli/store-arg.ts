/** The `--store` option, the same for every command: default `./.loupe/runs.sqlite`; only `run`/`demo` create one. */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openStore, type RunStore } from '../core/store/run-store.ts';
import { UsageError, type CliIo } from './types.ts';

export const DEFAULT_STORE = join('.loupe', 'runs.sqlite');
export const STORE_HELP = `--store FILE (default ./${DEFAULT_STORE})`;

/** The store file a command uses (absolute). A URL is never a path. */
export function storeFile(io: CliIo, value: string | undefined): string {
  if (value && /^[a-z][a-z0-9+.-]*:\/\//i.test(value)) throw new UsageError(`--store ${value}: a URL is not a store file (this version of Loupe stores runs in a SQLite file)`);
  return resolve(io.cwd, value ?? DEFAULT_STORE);
}

/**
 * Opens a store that must exist (every command that reads runs). A mistyped path is an error, never a new
 * empty database.
 * @throws UsageError naming the path.
 */
export function openExistingStore(io: CliIo, value: string | undefined): RunStore {
  const file = storeFile(io, value);
  if (!existsSync(file)) throw new UsageError(`no run store at ${file}${value ? '' : ' (the default)'}: check the path, or record runs first with \`loupe run\``);
  return openStore(file);
}
