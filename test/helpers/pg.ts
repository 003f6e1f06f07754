/**
 * A real PostgreSQL server for tests: Debian's `postgresql` package (installed by `.ci/setup`), a fresh cluster in a
 * temporary directory, listening on 127.0.0.1 at a free port (and a unix socket in the same directory), password
 * authentication (scram-sha-256) for the role `loupe`, stopped and removed by `stop()`. initdb refuses to run as
 * root, so as root the cluster belongs to the `postgres` system user (`runuser -u postgres`).
 * When the server cannot start this throws with the reason and the server log: store tests never skip silently.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** A running test server. */
export interface PgServer {
  host: string;
  port: number;
  user: string;
  /** Environment variable holding the password (set in this process). */
  passwordEnv: string;
  /** A store URL for a database (no password in it). */
  url(database: string): string;
  /** Creates an empty database and returns its store URL. */
  createDatabase(name: string): Promise<string>;
  /**
   * Creates a login role (not a superuser, not the tables' owner: an annotator's own login) with the password of
   * `passwordEnv`, allowed to read and write every table of `database` (whose store must be migrated already).
   * @returns the store URL of `database` as that role.
   */
  createRole(name: string, database: string): Promise<string>;
  /**
   * Creates a login role with the password of `passwordEnv` and no privilege at all on `database` (grant it with
   * `loupe store grant`). @returns the store URL of `database` as that role.
   */
  createLogin(name: string, database: string): Promise<string>;
  /** Stops the server (pg_ctl stop -m fast) and removes its directory. */
  stop(): void;
  /** Restarts the server on the same port (the "database restarted while Loupe is open" fault). */
  restart(): void;
  /** Stops the server for about `ms` milliseconds, then starts it again on the same port (an outage). */
  outage(ms: number): Promise<void>;
}

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions.length) {
    throw new Error(
      "PostgreSQL server binaries not found in /usr/lib/postgresql/*/bin: install Debian's postgresql package (bash .ci/setup does)",
    );
  }
  return join(root, versions[0]!, 'bin');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts a PostgreSQL server in a temporary directory.
 * @param settings extra server settings (`-c name=value`), e.g. `{ fsync: 'off' }`.
 * @throws Error with the server log when initdb or the server fails.
 */
export async function startPg(settings: Record<string, string> = {}): Promise<PgServer> {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'loupe-pg-'));
  const data = join(dir, 'data');
  const password = randomBytes(12).toString('hex');
  const passwordEnv = 'LOUPE_TEST_PGPASSWORD';
  process.env[passwordEnv] = password;
  writeFileSync(join(dir, 'pw'), password + '\n');
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) => {
    const [file, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]]
      : [join(bin, cmd), args];
    return execFileSync(file, argv, { stdio: 'pipe', cwd: dir, timeout: 60_000 });
  };
  if (asRoot) {
    chmodSync(dir, 0o755);
    execFileSync('chown', ['-R', 'postgres:postgres', dir]);
  }
  const port = await freePort();
  const opts = [
    '-c',
    'listen_addresses=127.0.0.1',
    '-p',
    String(port),
    '-k',
    dir,
    ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
  ].join(' ');
  const log = join(dir, 'server.log');
  const logTail = () =>
    existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-15).join('\n') : '(no server log)';
  try {
    run('initdb', [
      '-D',
      data,
      '-U',
      'loupe',
      '--auth=scram-sha-256',
      `--pwfile=${join(dir, 'pw')}`,
      '-E',
      'UTF8',
      '--no-locale',
      '--no-sync',
    ]);
    run('pg_ctl', ['start', '-D', data, '-w', '-t', '30', '-l', log, '-o', opts]);
  } catch (e) {
    const err = e as Error & { stderr?: Buffer };
    const msg = `PostgreSQL test server did not start (${bin}, ${asRoot ? 'as user postgres via runuser' : 'as this user'}): ${err.stderr?.toString().trim() || err.message}\n${logTail()}`;
    rmSync(dir, { recursive: true, force: true });
    throw new Error(msg, { cause: e });
  }
  const host = '127.0.0.1';
  const url = (database: string) => `postgres://loupe@${host}:${port}/${database}?passwordEnv=${passwordEnv}`;
  let stopped = false;
  return {
    host,
    port,
    user: 'loupe',
    passwordEnv,
    url,
    async createDatabase(name) {
      const c = new pg.Client({ host, port, user: 'loupe', password, database: 'postgres' });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
      } finally {
        await c.end();
      }
      return url(name);
    },
    async createRole(name, database) {
      const id = `"${name.replace(/"/g, '')}"`;
      const admin = new pg.Client({ host, port, user: 'loupe', password, database: 'postgres' });
      await admin.connect();
      try {
        await admin.query(`CREATE ROLE ${id} LOGIN PASSWORD ${pg.escapeLiteral(password)}`);
      } finally {
        await admin.end();
      }
      const c = new pg.Client({ host, port, user: 'loupe', password, database });
      await c.connect();
      try {
        await c.query(
          `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${id}; GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ${id}`,
        );
      } finally {
        await c.end();
      }
      return `postgres://${encodeURIComponent(name)}@${host}:${port}/${database}?passwordEnv=${passwordEnv}`;
    },
    async createLogin(name, database) {
      const admin = new pg.Client({ host, port, user: 'loupe', password, database: 'postgres' });
      await admin.connect();
      try {
        await admin.query(`CREATE ROLE "${name.replace(/"/g, '')}" LOGIN PASSWORD ${pg.escapeLiteral(password)}`);
      } finally {
        await admin.end();
      }
      return `postgres://${encodeURIComponent(name)}@${host}:${port}/${database}?passwordEnv=${passwordEnv}`;
    },
    restart() {
      run('pg_ctl', ['restart', '-D', data, '-w', '-t', '30', '-m', 'fast', '-l', log, '-o', opts]);
    },
    async outage(ms) {
      run('pg_ctl', ['stop', '-D', data, '-m', 'fast', '-w', '-t', '30']);
      await new Promise((r) => setTimeout(r, ms));
      run('pg_ctl', ['start', '-D', data, '-w', '-t', '30', '-l', log, '-o', opts]);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['stop', '-D', data, '-m', 'fast', '-w']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
