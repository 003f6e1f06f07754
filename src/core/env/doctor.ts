/**
 * Checks of the machine Loupe runs on: Node version, a Python that can import pandas, bubblewrap.
 * Used by `loupe doctor`, the Welcome panel and the kernel to pick an interpreter.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

function run(cmd: string, args: string[], timeoutMs = 15_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as NodeJS.ErrnoException).code === 'number' ? Number((err as NodeJS.ErrnoException).code) : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr || (err ? err.message : '')) });
    });
  });
}

/**
 * Finds a Python interpreter that can import pandas.
 * Order: `configured` (setting `loupe.python.path`), `$LOUPE_PYTHON`, `/usr/bin/python3`, then every
 * `python3` on PATH. The pyenv shim first on PATH on these machines has no pandas, hence the order.
 * @param configured an explicit interpreter path; when given and it cannot import pandas, that is an error.
 * @returns `{ path, version }` of the interpreter.
 * @throws Error naming each candidate tried and why it failed.
 * @example const { path } = await findPython('');
 */
export async function findPython(configured?: string, env: NodeJS.ProcessEnv = process.env): Promise<{ path: string; version: string }> {
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
    const r = await run(c, ['-c', 'import sys, pandas; print(sys.version.split()[0], pandas.__version__)']);
    if (r.code === 0) return { path: c, version: r.stdout.trim() };
    tried.push(`${c}: ${r.stderr.trim().split('\n').pop() ?? 'failed'}`);
  }
  throw new Error(`No Python interpreter that can import pandas. Tried:\n  ${tried.join('\n  ')}\nInstall python3-pandas (Debian) or set loupe.python.path / LOUPE_PYTHON.`);
}

/**
 * Runs every environment check.
 * @param opts.python configured interpreter (may be empty).
 * @returns one {@link Check} per item; never throws.
 */
export async function runChecks(opts: { python?: string } = {}): Promise<Check[]> {
  const checks: Check[] = [];
  const major = Number(process.versions.node.split('.')[0]);
  checks.push({ name: 'Node ≥ 22', ok: major >= 22, detail: major >= 22 ? `node ${process.version}` : `node ${process.version}: Loupe needs Node ≥ 22. Run \`bash .ci/setup\` and put \`.cache/node/bin\` first on PATH, or install Node 22+` });
  try {
    const py = await findPython(opts.python);
    checks.push({ name: 'Python with pandas', ok: true, detail: `${py.path} (python, pandas: ${py.version})` });
  } catch (e) {
    checks.push({ name: 'Python with pandas', ok: false, detail: e instanceof Error ? e.message : String(e) });
  }
  const bwrap = await run('bwrap', ['--version']);
  checks.push({ name: 'bubblewrap sandbox', ok: bwrap.code === 0, detail: bwrap.code === 0 ? bwrap.stdout.trim() : 'bwrap not found: install Debian package bubblewrap, or set loupe.sandbox to "off"' });
  if (major < 22) {
    checks.push({ name: 'SQLite with FTS5', ok: false, detail: 'not checked: better-sqlite3 13 crashes Node < 22 (fix the Node check first)' });
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
