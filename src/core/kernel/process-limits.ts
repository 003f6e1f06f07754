/**
 * The kernel's host-side process limits (issue 37), split out of python-kernel.ts: the shared /proc watch that counts
 * each sandbox's processes (a fork bomb cannot stop it: it runs outside the sandbox), a kernel's process tree, and the
 * per-file size limit under the workspace quota. Linux /proc only.
 */
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * Host-side process limit for sandboxed kernels: one timer per host process counts the processes of
 * every pid namespace in /proc and hands the counts to each kernel. It runs outside the sandbox, so
 * neither a fork bomb's CPU load (it starves any watchdog inside) nor agent code can stop it.
 */
const PROC_WATCH_MS = 100; // one scan ≈ 0.4 ms with ~150 host processes
const procWatched = new Set<{ checkProcs(counts: Map<string, number>): void }>();
let procWatchTimer: NodeJS.Timeout | undefined;

/** Processes per pid namespace of the host (/proc), by the namespace's link text (`pid:[4026531836]`). */
function countByPidNamespace(): Map<string, number> {
  const counts = new Map<string, number>();
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return counts;
  }
  for (const n of names) {
    const c = n.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    try {
      const ns = readlinkSync(`/proc/${n}/ns/pid`);
      counts.set(ns, (counts.get(ns) ?? 0) + 1);
    } catch {
      /* gone, or not ours to read */
    }
  }
  return counts;
}

/**
 * Hands `k` the host's process counts per pid namespace every {@link PROC_WATCH_MS} ms (one shared timer, unref'd,
 * stopped when nothing is watched) until {@link unwatchProcs}.
 */
export function watchProcs(k: { checkProcs(counts: Map<string, number>): void }): void {
  procWatched.add(k);
  if (procWatchTimer) return;
  procWatchTimer = setInterval(() => {
    if (procWatched.size === 0) {
      clearInterval(procWatchTimer);
      procWatchTimer = undefined;
      return;
    }
    const counts = countByPidNamespace();
    for (const w of procWatched) w.checkProcs(counts);
  }, PROC_WATCH_MS);
  procWatchTimer.unref();
}

/** The pid namespace of the sandbox under bwrap process `pid` (its first child's), if not the host's. */
export function sandboxPidNamespace(pid: number): string | undefined {
  try {
    const inner = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/)[0];
    if (!inner) return undefined;
    const ns = readlinkSync(`/proc/${inner}/ns/pid`);
    return ns !== readlinkSync('/proc/self/ns/pid') ? ns : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `pid` and all its descendants (host /proc): through each thread's `children` list (a walk of the tree only, a few
 * reads for a kernel), else by scanning every process's parent. In a sandbox an orphan is adopted by the sandbox's
 * init, so no process of the sandbox leaves this tree.
 * @returns pids, `pid` first (host /proc; Linux only).
 */
export function processTree(pid: number): number[] {
  const out = [pid];
  try {
    for (let i = 0; i < out.length; i++) {
      for (const t of readdirSync(`/proc/${out[i]}/task`)) {
        let kids = '';
        try {
          kids = readFileSync(`/proc/${out[i]}/task/${t}/children`, 'utf8');
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT' && !existsSync(`/proc/${out[i]}/task/${t}`)) continue; // thread gone
          throw e;
        }
        for (const k of kids.split(' ')) if (k.trim() && !out.includes(Number(k))) out.push(Number(k));
      }
    }
    return out;
  } catch {
    /* no children lists (CONFIG_PROC_CHILDREN off), or the tree changed: full scan */
  }
  const parent = new Map<number, number>();
  for (const n of readdirSync('/proc')) {
    if (!/^\d+$/.test(n)) continue;
    try {
      const stat = readFileSync(`/proc/${n}/stat`, 'utf8');
      parent.set(Number(n), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone */
    }
  }
  const all = [pid];
  for (let i = 0; i < all.length; i++) for (const [p, pp] of parent) if (pp === all[i] && !all.includes(p)) all.push(p);
  return all;
}

/** The per-file limit (MiB, 0 = none): never above the workspace quota (MiB, 0 = none). */
export function fileLimitMb(file: number, quota: number): number {
  if (file <= 0) return quota > 0 ? quota : 0;
  return quota > 0 ? Math.min(file, quota) : file;
}

/** Stops handing `k` process counts (the timer stops at its next tick when nothing is watched). */
export function unwatchProcs(k: { checkProcs(counts: Map<string, number>): void }): void {
  procWatched.delete(k);
}
