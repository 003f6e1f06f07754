/**
 * The bubblewrap command lines of Loupe's sandboxes, split out of python-kernel.ts: finding `bwrap`, the base
 * arguments shared by the Python kernel and the SQL query sandbox, the kernel's mounts, the interpreter's folders
 * outside /usr, and the minimal environment sandboxed processes start with. Source: issues 5, 36, 37.
 */
import { execFile } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { LoupeInputError } from '../util/errors.ts';

/** Runs `cmd` with a minimal environment; never rejects (code 1 and the error message on failure). */
function runFile(
  cmd: string,
  args: string[],
  timeoutMs = 15_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    execFile(cmd, args, { timeout: timeoutMs, encoding: 'utf8', env: minimalEnv() }, (err, stdout, stderr) => {
      res({ code: err ? 1 : 0, stdout: String(stdout), stderr: String(stderr || (err ? err.message : '')) });
    });
  });
}

/**
 * Looks for `bwrap` on PATH.
 * @returns its absolute path, or undefined.
 */
export function findBubblewrap(env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, 'bwrap');
    if (existsSync(p)) return p;
  }
  for (const p of ['/usr/bin/bwrap', '/usr/local/bin/bwrap']) if (existsSync(p)) return p;
  return undefined;
}

/** The environment a sandboxed process starts with: PATH and a UTF-8 locale, nothing of the host's. */
export function minimalEnv(): Record<string, string> {
  return { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' };
}

const pythonDirsCache = new Map<string, Promise<string[]>>();

/**
 * Directories an interpreter needs that are not already under /usr (venvs, pyenv, conda), asked of the interpreter
 * once per path (cached). @throws LoupeInputError naming the interpreter when it cannot run.
 */
export function pythonDirs(python: string): Promise<string[]> {
  let p = pythonDirsCache.get(python);
  if (!p) {
    p = (async () => {
      const r = await runFile(python, [
        '-c',
        'import sys, os, json; print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable)), os.path.dirname(os.path.abspath(sys.executable))] + sys.path))',
      ]);
      if (r.code !== 0) throw new LoupeInputError(python, `cannot run this Python: ${r.stderr.trim()}`);
      const dirs = (JSON.parse(r.stdout.trim().split('\n').pop() ?? '[]') as string[]).filter(
        (d) => d && isAbsolute(d) && existsSync(d),
      );
      const system = ['/usr/', '/lib/', '/lib64/', '/bin/', '/etc/'];
      return [...new Set(dirs.map((d) => realpathSync(d)))].filter((d) => !system.some((s) => (d + '/').startsWith(s)));
    })();
    pythonDirsCache.set(python, p);
  }
  return p;
}

/** Files and folders of /etc that Python, numpy (BLAS alternatives), fontconfig and matplotlib read. */
const ETC_PATHS = [
  '/etc/alternatives',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/fonts',
  '/etc/localtime',
  '/etc/matplotlibrc',
  '/etc/mime.types',
  '/etc/python3',
  '/etc/ssl/openssl.cnf',
];

/**
 * The start of every Loupe bwrap command line: all namespaces unshared (no network), dies with its parent,
 * new session, every capability dropped (Loupe may run as root: otherwise agent code could remount the
 * read-only data read-write), `/usr` and the loader paths read-only, and the given `/etc` files.
 * Shared by the Python kernel and the SQL query sandbox.
 * @param hostname the sandbox's host name; `etc` the `/etc` paths to mount read-only when present.
 */
export function sandboxBaseArgs(hostname: string, etc: readonly string[]): string[] {
  const a: string[] = [
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    '--hostname',
    hostname,
  ];
  a.push('--ro-bind', '/usr', '/usr');
  for (const l of ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']) {
    if (!existsSync(l)) continue;
    try {
      const real = realpathSync(l);
      if (real.startsWith('/usr/')) a.push('--symlink', real.slice(1), l);
      else a.push('--ro-bind', l, l);
    } catch {
      /* dangling link: skip */
    }
  }
  for (const e of etc) if (existsSync(e)) a.push('--ro-bind', e, e);
  return a;
}

/**
 * The bubblewrap command line for a sandboxed kernel: system dirs read-only, `readOnlyPaths`
 * read-only, `writablePaths` read-write, a private tmpfs at /tmp, no network, new pid/ipc/uts/user
 * namespaces, new session, dies with its parent. Nothing else of the host is visible (no /work,
 * no $HOME, no host /tmp).
 * The sandbox root and /dev are remounted read-only at the end (writes there went to an unbounded
 * tmpfs in host memory); /tmp and /dev/shm are tmpfs of `tmpSizeMb` MiB each.
 * @param o.extraReadOnly interpreter directories outside /usr (see `pythonDirs`).
 * @param o.tmpSizeMb size of /tmp and /dev/shm in MiB (default 1024).
 * @returns argv for `bwrap` ending with the python command.
 */
export function bubblewrapArgs(o: {
  python: string;
  driver: string;
  cwd: string;
  readOnlyPaths: string[];
  writablePaths: string[];
  extraReadOnly: string[];
  tmpSizeMb?: number;
  mounts?: { source: string; target: string }[];
}): string[] {
  // --cap-drop ALL: when Loupe runs as root (containers, CI), bwrap otherwise keeps every capability
  // inside its user namespace, and agent code could remount the read-only data read-write or mount over
  // the run folder. Harmless (already dropped) for an unprivileged user.
  const a = sandboxBaseArgs('loupe-sandbox', ETC_PATHS);
  const tmpBytes = String(Math.max(1, o.tmpSizeMb ?? 1024) * 1024 * 1024);
  a.push('--proc', '/proc', '--dev', '/dev', '--size', tmpBytes, '--tmpfs', '/dev/shm', '--remount-ro', '/dev');
  a.push('--size', tmpBytes, '--tmpfs', '/tmp', '--dir', '/tmp/home');
  for (const d of o.extraReadOnly) a.push('--ro-bind', d, d);
  // Writable first, then read-only ones, so a read-only folder inside the run folder stays read-only.
  for (const w of o.writablePaths) a.push('--bind', w, w);
  for (const r of o.readOnlyPaths) a.push('--ro-bind', r, r);
  for (const m of o.mounts ?? []) a.push('--ro-bind', m.source, m.target);
  a.push('--ro-bind', o.driver, '/opt/loupe/driver.py');
  a.push('--remount-ro', '/');
  a.push('--chdir', o.cwd);
  a.push(o.python, '-u', '/opt/loupe/driver.py');
  return a;
}
