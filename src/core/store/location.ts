/**
 * Where a run store lives, parsed once from what a user typed (`--store`, the `loupe.store` setting): a SQLite file
 * path, or a PostgreSQL URL (`postgres://` / `postgresql://`). A URL is never a path. The password is never part of
 * the location: it comes from an environment variable named in the URL (`?passwordEnv=NAME`), from `PGPASSWORD`, or
 * from the caller (VS Code SecretStorage); a URL with a literal password is refused so it cannot land in settings,
 * shell history or logs. Every message shows the location through {@link redactStoreUrls}.
 * Source: issue 26 "Team store: PostgreSQL beside the embedded SQLite".
 */
import { resolve } from 'node:path';
import { LoupeInputError } from '../util/errors.ts';

/** A SQLite store file (absolute path, or `:memory:`). */
export interface SqliteLocation {
  engine: 'sqlite';
  file: string;
}

/** A PostgreSQL store: connection parameters without the password. */
export interface PostgresLocation {
  engine: 'postgres';
  /** The URL as shown in messages: no password, `passwordEnv` kept (a name, not a secret). */
  url: string;
  /** Host name, IP address, or a unix-socket directory (from `?host=/dir`). */
  host: string;
  port: number;
  database: string;
  /** Role name (URL user, else `PGUSER`, else the OS user). */
  user: string;
  /** Name of the environment variable holding the password, if the URL names one. */
  passwordEnv?: string;
  /** `?sslmode=require|verify-full` turns TLS on (default off: loopback or a trusted network). */
  ssl: boolean;
}

export type StoreLocation = SqliteLocation | PostgresLocation;

const PG_SCHEME = /^postgres(?:ql)?:\/\//i;
const ANY_URL = /^[a-z][a-z0-9+.-]*:\/\//i;
const QUERY_KEYS = new Set(['passwordEnv', 'host', 'port', 'sslmode', 'application_name']);

/**
 * Parses a store location.
 * @param value what the user gave: a file path (relative to `cwd`), `:memory:`, or
 *   `postgres://[user@]host[:port]/database[?passwordEnv=NAME&host=/socket/dir&sslmode=require]`.
 * @param cwd directory relative paths are resolved against.
 * @param env environment for `PGUSER` (default `process.env`).
 * @returns a {@link StoreLocation}.
 * @throws LoupeInputError naming the (redacted) location: another URL scheme, a password written in the URL,
 *   no database name, an unknown query parameter, a bad port or environment variable name.
 */
export function parseStoreLocation(value: string, cwd: string, env: NodeJS.ProcessEnv = process.env): StoreLocation {
  if (value === ':memory:') return { engine: 'sqlite', file: value };
  if (!ANY_URL.test(value)) return { engine: 'sqlite', file: resolve(cwd, value) };
  const shown = redactStoreUrls(value);
  if (!PG_SCHEME.test(value)) {
    throw new LoupeInputError(shown, 'not a run store: give a SQLite file path or a postgres:// URL');
  }
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new LoupeInputError(shown, 'not a valid postgres:// URL (postgres://user@host:port/database)');
  }
  if (u.password) {
    throw new LoupeInputError(
      shown,
      'the password must not be written in the URL: put it in an environment variable and name it with ?passwordEnv=NAME (or set PGPASSWORD)',
    );
  }
  for (const k of u.searchParams.keys()) {
    if (!QUERY_KEYS.has(k)) {
      throw new LoupeInputError(shown, `unknown parameter '${k}' (known: ${[...QUERY_KEYS].join(', ')})`);
    }
  }
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (!database || database.includes('/')) {
    throw new LoupeInputError(shown, 'name the database after the host: postgres://host:5432/loupe');
  }
  const host = u.searchParams.get('host') ?? (decodeURIComponent(u.hostname).replace(/^\[|\]$/g, '') || 'localhost');
  const portText = u.searchParams.get('port') ?? (u.port || '5432');
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new LoupeInputError(shown, `port '${portText}' is not a TCP port`);
  }
  const passwordEnv = u.searchParams.get('passwordEnv') ?? undefined;
  if (passwordEnv !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(passwordEnv)) {
    throw new LoupeInputError(shown, `passwordEnv '${passwordEnv}' is not an environment variable name`);
  }
  const sslmode = u.searchParams.get('sslmode') ?? 'disable';
  if (!['disable', 'require', 'verify-full'].includes(sslmode)) {
    throw new LoupeInputError(shown, `sslmode '${sslmode}' is not one of disable, require, verify-full`);
  }
  const user = decodeURIComponent(u.username) || env.PGUSER || env.USER || 'postgres';
  return {
    engine: 'postgres',
    url: shown,
    host,
    port,
    database,
    user,
    ...(passwordEnv ? { passwordEnv } : {}),
    ssl: sslmode !== 'disable',
  };
}

/**
 * The password of a PostgreSQL location: the caller's (SecretStorage), else the variable named by `passwordEnv`,
 * else `PGPASSWORD`, else none (trust / peer authentication).
 * @throws LoupeInputError naming the variable when `passwordEnv` names one that is not set.
 */
export function storePassword(
  loc: PostgresLocation,
  given?: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (given !== undefined) return given;
  if (loc.passwordEnv) {
    const v = env[loc.passwordEnv];
    if (v === undefined) {
      throw new LoupeInputError(
        loc.url,
        `the environment variable ${loc.passwordEnv} (named by passwordEnv) is not set`,
      );
    }
    return v;
  }
  return env.PGPASSWORD;
}

/**
 * Removes any password from URLs in a text (a message, a driver error): `scheme://user:secret@host` becomes
 * `scheme://user:***@host`.
 * @param text any text.
 * @returns the text with every URL userinfo password replaced by `***`.
 */
export function redactStoreUrls(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/[^\s/@:]*):[^\s/@]*@/gi, '$1:***@');
}

/** A location as shown in messages (never a password). */
export function describeStoreLocation(loc: StoreLocation): string {
  return loc.engine === 'sqlite' ? loc.file : loc.url;
}
