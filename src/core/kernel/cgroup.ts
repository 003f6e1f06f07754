/**
 * The kernel's own control group: aggregate limits for the kernel's whole process tree (memory, processes, CPU rate)
 * and a freezer that stops every thread and process of it between cells. cgroup v2 (`/sys/fs/cgroup` with
 * `cgroup.controllers`) and v1 (one hierarchy per controller under `/sys/fs/cgroup/<controller>`) are supported; where
 * no cgroup can be made (an unprivileged user without a delegated subtree) {@link KernelCgroup.create} returns
 * undefined and the kernel falls back to per-process limits (see `python-kernel.ts`).
 *
 * Every process is in the cgroup from its first instruction: the kernel's command is started through a small shell
 * that writes its own pid into each cgroup folder, then `exec`s bubblewrap ({@link KernelCgroup.wrap}).
 * A guard process outside the cgroup (one `sh` per cgroup, detached) waits on a pipe from the host: when the host lets
 * go of the cgroup — or dies in any way, SIGKILL included — it kills what is left in it, thaws it (a frozen v1 task
 * cannot die before it is thawed) and removes the folders, so no cgroup and no frozen process outlives its kernel.
 *
 * Source: issue 37 "Kernel limits that hold for the kernel's whole life" (cgroup v1: memory.limit_in_bytes,
 * memory.memsw.limit_in_bytes, pids.max, cpu.cfs_quota_us, freezer.state, cpuacct.usage; v2: memory.max,
 * memory.swap.max, pids.max, cpu.max, cgroup.freeze, cgroup.kill, cpu.stat); issue 11 (pids cgroup for root).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Limits of a kernel cgroup; 0 (or absent) = that limit is not set. */
export interface CgroupLimits {
  /** Memory of every process in the group together (RAM incl. page cache and tmpfs pages; swap not allowed on top), bytes. */
  memoryBytes?: number;
  /** Processes (v1/v2 pids controller: tasks) in the group at once. */
  pids?: number;
  /** CPU rate of the group together, in cores (1 = one core's worth of time per period). */
  cpuCores?: number;
}

/** What a {@link KernelCgroup} holds: the version, its folders, and which controllers took their limit. */
export interface CgroupInfo {
  version: 1 | 2;
  /** The cgroup folders (one per v1 hierarchy, one for v2). */
  dirs: string[];
  memory: boolean;
  /** v1 `memory.memsw.limit_in_bytes` / v2 `memory.swap.max` set too (swap cannot extend the memory limit). */
  swap: boolean;
  pids: boolean;
  cpu: boolean;
  freezer: boolean;
  /** CPU usage of the group can be read ({@link KernelCgroup.cpuUsageUs}). */
  cpuUsage: boolean;
}

const V1_ROOT = '/sys/fs/cgroup';
const PERIOD_US = 100_000;
let seq = 0;

/** The cgroup path of this process per v1 hierarchy (`memory` → `/process_api/x`), and `''` for v2. */
function ownCgroups(): Map<string, string> {
  const out = new Map<string, string>();
  try {
    for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
      const m = /^\d+:([^:]*):(.*)$/.exec(line);
      if (!m) continue;
      for (const c of m[1]!.split(',')) out.set(c, m[2]!);
    }
  } catch {
    /* not Linux */
  }
  return out;
}

/** mkdir `name` under the first writable parent; returns the folder or undefined. */
function makeUnder(parents: string[], name: string): string | undefined {
  for (const p of parents) {
    if (!existsSync(join(p, 'cgroup.procs'))) continue;
    const dir = join(p, name);
    try {
      mkdirSync(dir);
      return dir;
    } catch {
      /* not writable here */
    }
  }
  return undefined;
}

function tryWrite(file: string, value: string): boolean {
  try {
    writeFileSync(file, value);
    return true;
  } catch {
    return false;
  }
}

function readNum(file: string, key?: string): number | undefined {
  try {
    const text = readFileSync(file, 'utf8');
    if (!key) return Number(text.trim());
    const m = new RegExp(`^${key} (\\d+)$`, 'm').exec(text);
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The shell a guard runs: waits for EOF on stdin (the host let go or died), kills everything left in the folders,
 * thaws them (v1 frozen tasks die only once thawed), kills again, and removes the folders (for up to 10 s while the
 * last processes are reaped). Arguments: the folders.
 */
const GUARD = [
  'read _ 2>/dev/null',
  'kill_all() { for d in "$@"; do [ -f "$d/cgroup.kill" ] && echo 1 > "$d/cgroup.kill"; for p in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done; done; }',
  'kill_all "$@"',
  'for d in "$@"; do [ -f "$d/freezer.state" ] && echo THAWED > "$d/freezer.state"; [ -f "$d/cgroup.freeze" ] && echo 0 > "$d/cgroup.freeze"; done 2>/dev/null',
  'i=0; while [ $i -lt 100 ]; do kill_all "$@"; ok=1; for d in "$@"; do [ -d "$d" ] && { rmdir "$d" 2>/dev/null || ok=0; }; done; [ $ok = 1 ] && exit 0; sleep 0.1; i=$((i+1)); done',
].join('\n');

/** A kernel's cgroup: made by {@link KernelCgroup.create}, released by {@link KernelCgroup.release}. */
export class KernelCgroup {
  readonly info: CgroupInfo;
  #guard: ChildProcess | undefined;
  #released = false;
  #frozen = false;

  private constructor(info: CgroupInfo) {
    this.info = info;
  }

  /**
   * Makes a cgroup with the given limits: v2 when `/sys/fs/cgroup` is a v2 hierarchy with the controllers, else one
   * folder per v1 hierarchy (memory, pids, cpu, cpuacct, freezer: each best effort, under this process's own cgroup of
   * that hierarchy when writable, else at its root). A controller whose limit cannot be written is left out (its flag
   * in {@link CgroupInfo} is false).
   * @param tag a short label in the folder's name (`loupe-kernel-<host pid>-<n>-<tag>`, unique per call).
   * @param v2Root tests only: a cgroup v2 mount to use instead of `/sys/fs/cgroup` (e.g. the hybrid layout's
   *   `/sys/fs/cgroup/unified`, which has no controllers but a freezer).
   * @returns the cgroup, or undefined when no folder could be made anywhere (not root and no delegation, no cgroupfs).
   *   Never throws.
   */
  static create(tag: string, limits: CgroupLimits, v2Root?: string): KernelCgroup | undefined {
    const name = `loupe-kernel-${process.pid}-${++seq}-${tag.replace(/[^A-Za-z0-9_-]/g, '').slice(0, 20)}`;
    try {
      if (v2Root) return createV2(name, limits, v2Root);
      return existsSync(join(V1_ROOT, 'cgroup.controllers')) ? createV2(name, limits, V1_ROOT) : createV1(name, limits);
    } catch {
      return undefined;
    }
  }

  /** @internal used by the factories. */
  static of(info: CgroupInfo): KernelCgroup {
    const cg = new KernelCgroup(info);
    cg.#startGuard();
    return cg;
  }

  #startGuard(): void {
    try {
      const g = spawn('/bin/sh', ['-c', GUARD, 'loupe-cgroup-guard', ...this.info.dirs], {
        stdio: ['pipe', 'ignore', 'ignore'],
        detached: true,
        env: { PATH: '/usr/bin:/bin' },
      });
      g.on('error', () => undefined);
      g.stdin?.on('error', () => undefined);
      g.unref();
      (g.stdin as unknown as { unref?: () => void } | null)?.unref?.();
      this.#guard = g;
    } catch {
      /* release() removes the folders itself */
    }
  }

  /**
   * The command line that starts `cmd args` inside this cgroup: `/bin/sh -c` writes its own pid into every folder's
   * `cgroup.procs` (exit 125 when one write fails), then `exec`s the command (same pid, same process group).
   * @returns [command, argv] for `spawn`.
   */
  wrap(cmd: string, args: string[]): [string, string[]] {
    const script =
      'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1/cgroup.procs" || exit 125; shift; n=$((n-1)); done; exec "$@"';
    return ['/bin/sh', ['-c', script, 'loupe-kernel', String(this.info.dirs.length), ...this.info.dirs, cmd, ...args]];
  }

  #dir(controller: string): string | undefined {
    if (this.info.version === 2) return this.info.dirs[0];
    return this.info.dirs.find((d) => d.startsWith(join(V1_ROOT, controller) + '/'));
  }

  /** Pids of every process in the cgroup (host pid namespace). */
  procs(): number[] {
    const d = this.#dir('pids') ?? this.#dir('freezer') ?? this.#dir('memory') ?? this.info.dirs[0];
    if (!d) return [];
    try {
      return readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  }

  /**
   * Freezes every task of the group (v1 `freezer.state` FROZEN, v2 `cgroup.freeze` 1). The write returns at once; the
   * tasks stop within milliseconds (they cannot run, fork or write from then on).
   * @returns false when the group has no freezer or the write failed.
   */
  freeze(): boolean {
    if (!this.info.freezer || this.#released) return false;
    const d = this.#dir('freezer')!;
    const ok =
      this.info.version === 2 ? tryWrite(join(d, 'cgroup.freeze'), '1') : tryWrite(join(d, 'freezer.state'), 'FROZEN');
    this.#frozen = ok;
    return ok;
  }

  /** Thaws the group (no-op when it was not frozen by {@link freeze}). @returns false when the write failed. */
  thaw(): boolean {
    if (!this.#frozen) return true;
    const d = this.#dir('freezer')!;
    const ok =
      this.info.version === 2 ? tryWrite(join(d, 'cgroup.freeze'), '0') : tryWrite(join(d, 'freezer.state'), 'THAWED');
    if (ok) this.#frozen = false;
    return ok;
  }

  /** True once every task is frozen (v1 `freezer.state` reads FROZEN; v2 `cgroup.events` has `frozen 1`). */
  isFrozen(): boolean {
    const d = this.#dir('freezer');
    if (!d || !this.info.freezer) return false;
    try {
      return this.info.version === 2
        ? /^frozen 1$/m.test(readFileSync(join(d, 'cgroup.events'), 'utf8'))
        : readFileSync(join(d, 'freezer.state'), 'utf8').trim() === 'FROZEN';
    } catch {
      return false;
    }
  }

  /** CPU time used by the group's processes so far, in µs (v1 `cpuacct.usage` ns / 1000, v2 `cpu.stat` usage_usec); undefined when unreadable. */
  cpuUsageUs(): number | undefined {
    if (this.info.version === 2) return readNum(join(this.info.dirs[0]!, 'cpu.stat'), 'usage_usec');
    const d = this.#dir('cpuacct') ?? this.#dir('cpu');
    const ns = d ? readNum(join(d, 'cpuacct.usage')) : undefined;
    return ns === undefined ? undefined : ns / 1000;
  }

  /** Processes the kernel's OOM killer ended in this group because of its memory limit (v1 `memory.oom_control` oom_kill, v2 `memory.events` oom_kill); 0 when unknown. */
  oomKills(): number {
    const d = this.#dir('memory');
    if (!d || !this.info.memory) return 0;
    return (
      (this.info.version === 2
        ? readNum(join(d, 'memory.events'), 'oom_kill')
        : readNum(join(d, 'memory.oom_control'), 'oom_kill')) ?? 0
    );
  }

  /** Highest memory use of the group so far in bytes (v1 `memory.max_usage_in_bytes`, v2 `memory.peak`), if known. */
  memoryPeakBytes(): number | undefined {
    const d = this.#dir('memory');
    if (!d) return undefined;
    return this.info.version === 2 ? readNum(join(d, 'memory.peak')) : readNum(join(d, 'memory.max_usage_in_bytes'));
  }

  /**
   * SIGKILL to every process of the group (v2 `cgroup.kill` too), then thaws it (frozen v1 tasks die only once thawed),
   * in a few passes (a task may fork while we kill). Synchronous; never throws.
   */
  killAll(): void {
    for (let pass = 0; pass < 3; pass++) {
      if (this.info.version === 2) tryWrite(join(this.info.dirs[0]!, 'cgroup.kill'), '1');
      const pids = this.procs();
      for (const p of pids) {
        try {
          process.kill(p, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      if (this.#frozen || this.info.freezer) {
        this.#frozen = true;
        this.thaw();
      }
      if (!pids.length) break;
    }
  }

  /**
   * Lets go of the group: kills what is left ({@link killAll}) and hands the folders to the guard, which removes them
   * once the last process is reaped (within ms; it keeps trying for 10 s). Idempotent; never throws.
   */
  release(): void {
    if (this.#released) return;
    this.killAll();
    this.#released = true;
    const g = this.#guard;
    if (g?.stdin && !g.stdin.destroyed) {
      g.stdin.end();
      g.stdin.destroy();
    } else {
      // no guard: try ourselves, a few times
      const dirs = [...this.info.dirs];
      let tries = 0;
      const t = setInterval(() => {
        tries++;
        for (let i = dirs.length - 1; i >= 0; i--) {
          try {
            rmdirSync(dirs[i]!);
            dirs.splice(i, 1);
          } catch {
            /* busy */
          }
        }
        if (!dirs.length || tries > 50) clearInterval(t);
      }, 100);
      t.unref();
    }
  }
}

function createV2(name: string, limits: CgroupLimits, root: string): KernelCgroup | undefined {
  const own = ownCgroups().get('') ?? '/';
  // A delegated subtree (our own cgroup's parent when we are in a leaf, e.g. a systemd user scope), else the root.
  const parents = [...(own !== '/' ? [join(root, own, '..')] : []), root];
  const dir = makeUnder(parents, name);
  if (!dir) return undefined;
  const controllers = () => {
    try {
      return readFileSync(join(dir, 'cgroup.controllers'), 'utf8').split(/\s+/);
    } catch {
      return [];
    }
  };
  // The parent may not pass a controller down yet: enable it in its subtree_control where allowed (each on its own).
  for (const c of ['memory', 'pids', 'cpu']) {
    if (!controllers().includes(c)) tryWrite(join(dir, '..', 'cgroup.subtree_control'), `+${c}`);
  }
  const ctl = controllers();
  const info: CgroupInfo = {
    version: 2,
    dirs: [dir],
    memory: false,
    swap: false,
    pids: false,
    cpu: false,
    freezer: existsSync(join(dir, 'cgroup.freeze')),
    cpuUsage: existsSync(join(dir, 'cpu.stat')),
  };
  if (limits.memoryBytes && ctl.includes('memory')) {
    info.memory = tryWrite(join(dir, 'memory.max'), String(limits.memoryBytes));
    info.swap = info.memory && tryWrite(join(dir, 'memory.swap.max'), '0');
  }
  if (limits.pids && ctl.includes('pids')) info.pids = tryWrite(join(dir, 'pids.max'), String(limits.pids));
  if (limits.cpuCores && ctl.includes('cpu')) {
    info.cpu = tryWrite(
      join(dir, 'cpu.max'),
      `${Math.max(1000, Math.round(limits.cpuCores * PERIOD_US))} ${PERIOD_US}`,
    );
  }
  return KernelCgroup.of(info);
}

function createV1(name: string, limits: CgroupLimits): KernelCgroup | undefined {
  const own = ownCgroups();
  const info: CgroupInfo = {
    version: 1,
    dirs: [],
    memory: false,
    swap: false,
    pids: false,
    cpu: false,
    freezer: false,
    cpuUsage: false,
  };
  const make = (controller: string): string | undefined => {
    const mount = join(V1_ROOT, controller);
    const mine = own.get(controller);
    const dir = makeUnder([...(mine && mine !== '/' ? [join(mount, mine)] : []), mount], name);
    if (dir) info.dirs.push(dir);
    return dir;
  };
  if (limits.memoryBytes) {
    const d = make('memory');
    if (d) {
      info.memory = tryWrite(join(d, 'memory.limit_in_bytes'), String(limits.memoryBytes));
      info.swap =
        info.memory &&
        existsSync(join(d, 'memory.memsw.limit_in_bytes')) &&
        tryWrite(join(d, 'memory.memsw.limit_in_bytes'), String(limits.memoryBytes));
    }
  }
  if (limits.pids) {
    const d = make('pids');
    if (d) info.pids = tryWrite(join(d, 'pids.max'), String(limits.pids));
  }
  if (limits.cpuCores) {
    const d = make('cpu');
    if (d) {
      info.cpu =
        tryWrite(join(d, 'cpu.cfs_period_us'), String(PERIOD_US)) &&
        tryWrite(join(d, 'cpu.cfs_quota_us'), String(Math.max(1000, Math.round(limits.cpuCores * PERIOD_US))));
    }
  }
  // cpuacct: its own hierarchy, or mounted together with cpu (`cpu,cpuacct`, reached through both names)
  const combined = (() => {
    try {
      return realpathSync(join(V1_ROOT, 'cpuacct')) === realpathSync(join(V1_ROOT, 'cpu'));
    } catch {
      return false;
    }
  })();
  if (combined) info.cpuUsage = info.dirs.some((d) => d.startsWith(join(V1_ROOT, 'cpu') + '/')) || !!make('cpu');
  else if (existsSync(join(V1_ROOT, 'cpuacct', 'cpuacct.usage'))) info.cpuUsage = !!make('cpuacct');
  info.freezer = !!make('freezer');
  if (!info.dirs.length) return undefined;
  return KernelCgroup.of(info);
}
