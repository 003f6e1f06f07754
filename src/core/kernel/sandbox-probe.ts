/**
 * Can this machine create Loupe's sandbox? A sweep worker (issue 27) asks before it takes any unit: bubblewrap must be
 * installed and able to create its namespaces (unprivileged user namespaces: a container needs them allowed, see the
 * Kubernetes Job manifest of `loupe k8s-job`). A worker that cannot never falls back to running agent code unsandboxed.
 * Source: issue 27 "Kubernetes" (bubblewrap needs unprivileged user namespaces).
 */
import { execFile } from 'node:child_process';
import { findBubblewrap, sandboxBaseArgs } from './bubblewrap.ts';

/** The test hook: set to `1`, the probe runs inside a namespace that forbids new user namespaces (bwrap `--disable-userns`), as on a machine without them. */
export const SIMULATE_NO_USERNS_ENV = 'LOUPE_SIMULATE_NO_USERNS';

/** Exit code of a worker that cannot create its sandbox (EX_CONFIG of sysexits.h); a Kubernetes Job fails on it. */
export const SANDBOX_REFUSED_EXIT = 78;

/** Outcome of {@link probeSandbox}. */
export type SandboxProbe = { ok: true; bwrap: string } | { ok: false; reason: string };

/**
 * Starts one empty bubblewrap sandbox with the namespaces and mounts the Python kernel uses (all namespaces unshared,
 * capabilities dropped, `/usr` read-only, a new `/proc` and `/dev`) and runs `true` in it.
 * @param env `PATH` to find `bwrap`; {@link SIMULATE_NO_USERNS_ENV} `=1` makes user namespaces unavailable to the probe
 *   (tests). @param timeoutMs bound on the probe (default 15,000 ms).
 * @returns `{ok: true, bwrap}` (its path), or `{ok: false, reason}`: a sentence saying what is missing and what to
 *   change, with bubblewrap's own message. Never throws.
 */
export function probeSandbox(env: NodeJS.ProcessEnv = process.env, timeoutMs = 15_000): Promise<SandboxProbe> {
  const bwrap = findBubblewrap(env);
  if (!bwrap) {
    return Promise.resolve({
      ok: false,
      reason:
        'bubblewrap (bwrap) is not installed, so agent code cannot be sandboxed: install it (apt-get install bubblewrap; the worker image of the Containerfile has it)',
    });
  }
  const inner = [...sandboxBaseArgs('loupe-probe', []), '--proc', '/proc', '--dev', '/dev', 'true'];
  const simulate = env[SIMULATE_NO_USERNS_ENV] === '1';
  const [cmd, args] = simulate
    ? [
        bwrap,
        [
          '--unshare-user',
          '--disable-userns',
          '--ro-bind',
          '/',
          '/',
          '--dev',
          '/dev',
          '--proc',
          '/proc',
          bwrap,
          ...inner,
        ],
      ]
    : [bwrap, inner];
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      { timeout: timeoutMs, encoding: 'utf8', env: { PATH: '/usr/local/bin:/usr/bin:/bin', LANG: 'C.UTF-8' } },
      (err, _out, stderr) => {
        if (!err) return resolve({ ok: true, bwrap });
        const why = String(stderr || err.message)
          .trim()
          .split('\n')
          .slice(-3)
          .join(' ');
        resolve({
          ok: false,
          reason: `bubblewrap cannot create its sandbox here (${why}${simulate ? '; simulated: no user namespaces' : ''}). It needs unprivileged user namespaces: on a host, sysctl user.max_user_namespaces > 0 (and kernel.unprivileged_userns_clone = 1 where it exists); in a Kubernetes pod, the Job manifest of loupe k8s-job (hostUsers: false, procMount: Unmasked, seccomp and AppArmor Unconfined for the worker container)`,
        });
      },
    );
  });
}
