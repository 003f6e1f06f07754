/**
 * Opens a run store from a location of either engine: a SQLite file (embedded default) or a PostgreSQL URL (team
 * store). Callers that may be given a URL use this instead of `openStore` (SQLite only, synchronous).
 * Source: issue 26 "Team store: PostgreSQL beside the embedded SQLite".
 */
import { parseStoreLocation, type StoreLocation } from './location.ts';
import type { Migration } from './migrations.ts';
import { openPgStore, openPgStoreLazily } from './pg-run-store.ts';
import { openStore } from './run-store.ts';
import type { RunStore } from './types.ts';

/**
 * Opens (creating tables if needed) the run store at a location and applies pending migrations.
 * @param location a parsed {@link StoreLocation}, or text for `parseStoreLocation` (paths relative to `cwd`).
 * @param opts `cwd` (default `process.cwd()`), `env` for `passwordEnv` / `PGPASSWORD` / `PGUSER` (default `process.env`), `password` for PostgreSQL (from SecretStorage; never stored),
 *   `extraMigrations` (ids above the built-in ones).
 * @returns the open store (`engine` `sqlite` or `postgres`).
 * @throws LoupeInputError naming the location (a URL without its password) when it is malformed or cannot be opened
 *   or reached.
 */
export async function openStoreAt(
  location: string | StoreLocation,
  opts: { cwd?: string; password?: string; env?: NodeJS.ProcessEnv; extraMigrations?: Migration[] } = {},
): Promise<RunStore> {
  const loc =
    typeof location === 'string' ? parseStoreLocation(location, opts.cwd ?? process.cwd(), opts.env) : location;
  if (loc.engine === 'sqlite') return openStore(loc.file, opts.extraMigrations);
  return openPgStore(loc, { password: opts.password, env: opts.env, extraMigrations: opts.extraMigrations });
}

/**
 * Opens the run store at a location without waiting (for synchronous callers such as the VS Code extension's store
 * accessor): SQLite opens at once; PostgreSQL connects and migrates on the first call, whose error (server
 * unreachable, newer schema) is that call's, and the next call tries again.
 * @param location a parsed {@link StoreLocation}.
 * @param opts `password`: asked on each new PostgreSQL connection (SecretStorage), else `passwordEnv` / `PGPASSWORD`.
 * @returns the store.
 * @throws LoupeInputError when a SQLite file cannot be opened.
 */
export function openStoreLazily(
  location: StoreLocation,
  opts: { password?: () => Promise<string | undefined> } = {},
): RunStore {
  if (location.engine === 'sqlite') return openStore(location.file);
  return openPgStoreLazily(location, opts.password ? { password: opts.password } : {});
}
