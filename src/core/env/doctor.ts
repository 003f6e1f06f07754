/**
 * Checks of the machine Loupe runs on: Node version, a Python that can import pandas, bubblewrap.
 * Used by `loupe doctor`, the Welcome panel and the kernel to pick an interpreter.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

function run(
  cmd: string,
  args: string[],
  timeoutMs = 15_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err
        ? typeof (err as NodeJS.ErrnoException).code === 'number'
          ? Number((err as NodeJS.ErrnoException).code)
          : 1
        : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr || (err ? err.message : '')) });
    });
  });
}

/**
 * Finds a Python interpreter that can import pandas.
 * Order: `configured` (setting `loupe.python.path`), `$LOUPE_PYTHON`, `/usr/bin/python3`, then every
 * `python3` on PATH. The pyenv shim first on PATH on these machines has no pandas, hence the order.
 * @param configured an explicit interpreter path; when given and it cannot import pandas, that is an error.
 * @param opts.cache use the cross-process probe cache (default true; `loupe doctor` passes false).
 * @returns `{ path, version }` of the interpreter.
 * @throws Error naming each candidate tried and why it failed.
 * @example const { path } = await findPython('');
 */
export async function findPython(
  configured?: string,
  env: NodeJS.ProcessEnv = process.env,
  opts: { cache?: boolean } = {},
): Promise<{ path: string; version: string }> {
  const useCache = opts.cache ?? true;
  const candidates: string[] = [];
  if (configured) candidates.push(configured);
  else {
    if (env.LOUPE_PYTHON) candidates.push(env.LOUPE_PYTHON);
    candidates.push('/usr/bin/python3');
    for (const dir of (env.PATH ?? '').split(delimiter)) if (dir) candidates.push(join(dir, 'python3'));
  }
  const tried: string[] = [];
  for (const c of [...new Set(candidates)]) {
    if (c.includes('/') && !existsSync(c)) {
      tried.push(`${c}: not found`);
      continue;
    }
    const key = useCache ? probeKey(c) : undefined;
    const hit = key ? readProbeCache(env)[key] : undefined;
    if (hit && Date.now() - hit.at < PROBE_TTL_MS) return { path: c, version: hit.version };
    const r = await run(c, ['-c', 'import sys, pandas; print(sys.version.split()[0], pandas.__version__)']);
    if (r.code === 0) {
      if (key) writeProbeCache(env, key, r.stdout.trim());
      return { path: c, version: r.stdout.trim() };
    }
    tried.push(`${c}: ${r.stderr.trim().split('\n').pop() ?? 'failed'}`);
  }
  throw new Error(
    `No Python interpreter that can import pandas. Tried:\n  ${tried.join('\n  ')}\nInstall python3-pandas (Debian) or set loupe.python.path / LOUPE_PYTHON.`,
  );
}

/**
 * The interpreter probe (importing pandas, ~300 ms) is cached across processes, keyed by the interpreter's real
 * path, size and modification time, for a day: a CLI process or extension host that starts a kernel does not pay
 * it again (issue 23). `loupe doctor` always probes afresh.
 */
const PROBE_TTL_MS = 24 * 3600_000;

function probeCacheFile(env: NodeJS.ProcessEnv): string {
  return join(env.LOUPE_CACHE ?? join(env.HOME ?? '/tmp', '.cache', 'loupe'), 'python-probe.json');
}

function probeKey(candidate: string): string | undefined {
  try {
    const real = realpathSync(candidate);
    const st = statSync(real);
    return `${candidate}\u0000${real}\u0000${st.size}\u0000${st.mtimeMs}`;
  } catch {
    return undefined;
  }
}

function readProbeCache(env: NodeJS.ProcessEnv): Record<string, { version: string; at: number }> {
  try {
    return JSON.parse(readFileSync(probeCacheFile(env), 'utf8')) as Record<string, { version: string; at: number }>;
  } catch {
    return {};
  }
}

function writeProbeCache(env: NodeJS.ProcessEnv, key: string, version: string): void {
  try {
    const file = probeCacheFile(env);
    mkdirSync(dirname(file), { recursive: true });
    const all = { ...readProbeCache(env), [key]: { version, at: Date.now() } };
    writeFileSync(`${file}.${process.pid}`, JSON.stringify(all));
    renameSync(`${file}.${process.pid}`, file);
  } catch {
    /* a read-only home: probe each time */
  }
}

/**
 * Runs every environment check.
 * @param opts.python configured interpreter (may be empty).
 * @returns one {@link Check} per item; never throws.
 */
export async function runChecks(opts: { python?: string } = {}): Promise<Check[]> {
  const checks: Check[] = [];
  const major = Number(process.versions.node.split('.')[0]);
  checks.push({
    name: 'Node ≥ 22',
    ok: major >= 22,
    detail:
      major >= 22
        ? `node ${process.version}`
        : `node ${process.version}: Loupe needs Node ≥ 22. Run \`bash .ci/setup\` and put \`.cache/node/bin\` first on PATH, or install Node 22+`,
  });
  try {
    const py = await findPython(opts.python, process.env, { cache: false });
    checks.push({ name: 'Python with pandas', ok: true, detail: `${py.path} (python, pandas: ${py.version})` });
  } catch (e) {
    checks.push({ name: 'Python with pandas', ok: false, detail: e instanceof Error ? e.message : String(e) });
  }
  const bwrap = await run('bwrap', ['--version']);
  checks.push({
    name: 'bubblewrap sandbox',
    ok: bwrap.code === 0,
    detail:
      bwrap.code === 0
        ? bwrap.stdout.trim()
        : 'bwrap not found: install Debian package bubblewrap, or set loupe.sandbox to "off"',
  });
  if (major < 22) {
    checks.push({
      name: 'SQLite with FTS5',
      ok: false,
      detail: 'not checked: better-sqlite3 13 crashes Node < 22 (fix the Node check first)',
    });
  } else {
    try {
      const { default: Database } = await import('better-sqlite3');
      const db = new Database(':memory:');
      const v = db.prepare('select sqlite_version() as v').get() as { v: string };
      db.exec('create virtual table t using fts5(x)');
      db.close();
      checks.push({ name: 'SQLite with FTS5', ok: true, detail: `sqlite ${v.v}` });
    } catch (e) {
      checks.push({ name: 'SQLite with FTS5', ok: false, detail: e instanceof Error ? e.message : String(e) });
    }
  }
  return checks;
}
