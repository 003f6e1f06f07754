/**
 * A persistent, optionally sandboxed Python process that executes agent code cell by cell.
 *
 * Source: issue 5 "Python kernel"; spec §2.3 (LongTA's python tool and import allowlist), §1.3.3
 * (BLADE's Jupyter kernel: persistent state, `df` preloaded, 120 s cell timeout).
 *
 * The host speaks newline-delimited JSON with `driver.py` over the child's stdin/stdout (the driver
 * moves the user's fd 1 onto stderr so stray C-level output cannot corrupt the channel). Anything
 * the process writes to stderr outside Python's `sys.stderr` is attached to the running cell.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findPython } from '../env/doctor.ts';
import { diskUsage } from '../util/disk-usage.ts';
import { bubblewrapArgs, findBubblewrap, minimalEnv, pythonDirs } from './bubblewrap.ts';
export { bubblewrapArgs, findBubblewrap, sandboxBaseArgs } from './bubblewrap.ts';
import { KernelCgroup } from './cgroup.ts';
import { fileLimitMb, processTree, sandboxPidNamespace, unwatchProcs, watchProcs } from './process-limits.ts';
import type { KernelLimits } from './limits.ts';
export { describeKernelLimits, type KernelLimits } from './limits.ts';
import { LoupeInputError } from '../util/errors.ts';
import { nullLogger, type Logger } from '../util/log.ts';

export type SandboxMode = 'bubblewrap' | 'off';

export interface KernelOptions {
  /** Interpreter path; default {@link findPython}() (setting / `$LOUPE_PYTHON` / `/usr/bin/python3` / PATH). */
  python?: string;
  /** Working directory of the kernel (the block's task workspace). Must exist. */
  cwd: string;
  /** `bubblewrap`: isolated (see {@link bubblewrapArgs}); `off`: plain process (caller shows a warning). */
  sandbox: SandboxMode;
  /** Paths visible read-only inside the sandbox (the block's data and docs). Ignored when sandbox is off. */
  readOnlyPaths: string[];
  /** Paths visible read-write inside the sandbox (the run's workspace). Ignored when sandbox is off. */
  writablePaths: string[];
  /**
   * Read-only mounts placed inside a writable path (the block's `data/`, `docs/` and files appear as real
   * read-only directories and files of the workspace, not links). Sandbox only; targets must exist.
   */
  mounts?: { source: string; target: string }[];
  /** Extra environment variables for the kernel. The host environment is NOT inherited (no API keys leak). */
  env?: Record<string, string>;
  /** Default wall-clock limit per cell in ms (default 120,000, BLADE's value). */
  cellTimeoutMs?: number;
  /** CPU-time limit per cell in ms (RLIMIT_CPU soft limit moved per cell). Default: the cell's wall limit. */
  cellCpuLimitMs?: number;
  /**
   * Memory budget of the kernel in MiB; default 4096; 0 = none. Where Loupe can make a cgroup (root, or a delegated
   * cgroup v2 subtree) it is the limit of all the kernel's processes together (memory.limit_in_bytes / memory.max,
   * swap not on top), and each process also gets it as its address-space limit (RLIMIT_AS: a single huge allocation
   * fails with MemoryError instead of the OOM killer). Without a cgroup, RLIMIT_AS is scaled so that the per-process
   * limit times the allowed process count stays within the budget (see {@link KernelLimits}). Source: issue 37.
   */
  memoryLimitMb?: number;
  /**
   * CPU rate of all the kernel's processes together, in cores (cgroup cpu.cfs_quota_us / cpu.max); default 1; 0 = none.
   * Between cells the kernel gets no CPU at all (it is frozen). Source: issue 37.
   */
  cpuCores?: number;
  /**
   * `auto` (default): a cgroup for the kernel where one can be made; `off`: none (per-process limits and SIGSTOP
   * between cells, as on a machine without cgroups: for tests and for hosts whose cgroups Loupe must not touch).
   */
  cgroups?: 'auto' | 'off';
  /**
   * Largest file the kernel and its child processes may write (RLIMIT_FSIZE) in MiB; default 2048; 0 = none.
   * The run folder is on the host's disk: a runaway write fails with OSError "File too large" (EFBIG;
   * SIGXFSZ is ignored, so the kernel survives) instead of filling the disk.
   */
  maxFileSizeMb?: number;
  /**
   * Total size the first writable path (the run's workspace) may reach, in MiB; default 2048; 0 = none.
   * Enforced from the host: while a cell runs the workspace is measured every 100 ms (what the disk really spends:
   * blocks of files and directories, at least one block per inode, name bytes: see `diskUsage`), and once more when
   * the cell has ended and the kernel is frozen; a cell that grows it past the quota is stopped (the kernel restarts)
   * with a message saying so. Between cells nothing of the agent's runs (see {@link KernelLimits.betweenCells}), so
   * nothing can write. Files never grow past it on their own either (the per-file limit is lowered to the quota).
   */
  workspaceQuotaMb?: number;
  /**
   * Most processes the sandbox may hold at once (bounds fork bombs). Sandbox only; default 256; 0 = none.
   * Enforced from the host (the sandbox's pid namespace is counted every 100 ms; above the limit the
   * kernel is killed and restarted, and the cell is told) and, for an unprivileged user, by RLIMIT_NPROC.
   */
  maxProcesses?: number;
  /**
   * Size of the sandbox's private /tmp and /dev/shm (each a RAM-backed tmpfs) in MiB; default 1024.
   * The rest of the sandbox but the run folder is read-only, so agent code cannot fill host memory.
   */
  tmpSizeMb?: number;
  /** Import allowlist for agent code (`pkg` or `pkg.*`); undefined = anything installed. */
  importAllowlist?: readonly string[];
  /**
   * Modules the driver imports right after it is ready, before it reads the first cell (e.g. `pandas`, ~0.5 s): the
   * cost is paid while the model writes that cell instead of in it (issue 23). A module that fails to import is
   * skipped; the cells still `import` it themselves.
   */
  preloadModules?: readonly string[];
  /** Code run at start and after each restart (e.g. BLADE loads `df`). A failing preamble fails start(). */
  preamble?: string;
  /** Grace period after an interrupt before the process is killed and restarted (ms, default 2,000). */
  interruptGraceMs?: number;
  /** Max characters kept per stream per cell (head + tail), default 1,000,000. */
  maxOutputChars?: number;
  /** The `bwrap` executable; default: found on PATH (then /usr/bin, /usr/local/bin). */
  bubblewrapPath?: string;
  /** Where lifecycle events are logged. */
  log?: Logger;
}

/**
 * The values of a DataFrame result as the driver serialises them (issue 38): at most 60 rows and 30 columns (the
 * first and last halves when larger; `rowGap`/`colGap` is where the cut is, null when none), every cell, column and
 * index label as `str()` cut to 200 characters. The notebook renders its table from these values, never from HTML.
 */
export interface KernelTableData {
  columns: string[];
  index: string[];
  rows: string[][];
  /** The whole DataFrame's [rows, columns]. */
  shape: [number, number];
  rowGap: number | null;
  colGap: number | null;
}

/** A DataFrame result: `text` (to_string), `data` (values; absent in cells recorded before issue 38) and `html` (the agent's to_html, raw: evidence only, never rendered). */
export interface KernelTable {
  html: string;
  text: string;
  data?: KernelTableData;
}

export interface ExecuteResult {
  status: 'ok' | 'error' | 'timeout' | 'crashed';
  stdout: string;
  stderr: string;
  /** repr() of the cell's final expression, when it is not None. */
  result?: string;
  /** A DataFrame final expression: its text, values and raw html (see {@link KernelTable}). */
  tables?: KernelTable[];
  /** matplotlib figures open at the end of the cell (Agg, PNG, base64), then closed. */
  figures?: { png: string }[];
  error?: { ename: string; evalue: string; traceback: string[] };
  /** Wall time of the call in ms, measured by the host (includes a restart when there was one). */
  durationMs: number;
  /** The process died or was restarted: every variable, import and loaded data is gone. */
  restarted?: boolean;
}

export interface KernelInfo {
  python: string;
  sandbox: SandboxMode;
  /** Host pid of the spawned process (the `bwrap` process when sandboxed). */
  pid: number;
  /** The limits in force for the current process, and how each is enforced. */
  limits: KernelLimits;
}

interface DriverReply {
  type: 'ready' | 'result' | 'pong';
  id?: number;
  status?: 'ok' | 'error' | 'timeout';
  stdout?: string;
  stderr?: string;
  result?: string;
  tables?: KernelTable[];
  figures?: { png: string }[];
  error?: { ename: string; evalue: string; traceback: string[] };
  memoryError?: boolean;
  interrupted?: boolean;
  python?: string;
  pid?: number;
}

const QUOTA_WATCH_MS = 100;
/** Growth of a workspace already over its quota that is not held against a cell (ext4 allocates metadata blocks late). */
const QUOTA_SLACK = 1024 * 1024;
/**
 * Without a cgroup, RLIMIT_AS is the memory budget divided by the allowed process count; the count is lowered so that
 * each process keeps at least this much address space (Python with pandas and matplotlib maps ~430 MiB).
 */
const MIN_PROCESS_AS_MB = 1024;
const MIB = 1024 * 1024;
/** Longest close() waits for the killed process to exit before letting go of it (ms). */
const CLOSE_WAIT_MS = 2_000;

const STATE_LOST = 'All variables, imports and loaded data were lost: re-run any setup code you need.';
const START_TIMEOUT_MS = 60_000;
const MAX_STRAY_STDERR = 200_000;
/**
 * Longest protocol line accepted from the driver (characters). Real replies stay far below (each
 * stream is capped at `maxOutputChars`, figures are PNGs); agent code that writes to the protocol fd
 * without a line break would otherwise grow a host string until the CLI or extension host dies.
 */
const MAX_PROTOCOL_LINE = 128 * 1024 * 1024;

/**
 * Finds `driver.py` both when running TypeScript from source (`src/core/kernel/`) and from the
 * esbuild bundles (`dist/extension.js`, `dist/cli.js`, which get a copy at `dist/kernel/driver.py`).
 * `$LOUPE_KERNEL_DRIVER` overrides.
 * @returns absolute path of the driver script.
 * @throws Error listing the places looked at when none exists.
 */
export function driverPath(): string {
  const env = process.env.LOUPE_KERNEL_DRIVER;
  if (env && existsSync(env)) return resolve(env);
  const here = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
  const candidates = [
    join(here, 'driver.py'),
    join(here, 'kernel', 'driver.py'),
    join(here, '..', 'src', 'core', 'kernel', 'driver.py'),
    join(here, '..', 'dist', 'kernel', 'driver.py'),
  ];
  for (const c of candidates) if (existsSync(c)) return resolve(c);
  throw new Error(`Loupe kernel driver (driver.py) not found. Looked at:\n  ${candidates.join('\n  ')}`);
}

/**
 * One persistent Python process per agent run. Cells run one at a time (calls queue up).
 * @example
 * const k = await PythonKernel.start({ cwd: ws, sandbox: 'bubblewrap', readOnlyPaths: [data], writablePaths: [ws] });
 * const r = await k.execute('1+1'); // r.result === '2'
 * await k.close();
 */
export class PythonKernel {
  #opts: KernelOptions;
  /** The current process's cgroup (a new one per process), and the limits in force for it. */
  #cg: KernelCgroup | undefined;
  #limits: KernelLimits;
  /** A cgroup could not be joined once (the wrapper exited 125): no more tries for this kernel. */
  #noCgroup = false;
  /** Pids sent SIGSTOP at the end of the last cell (the fallback without a freezer). */
  #stopped: number[] | undefined;
  #quotaHit = 0;
  #python: string;
  #driver: string;
  #log: Logger;
  #child: ChildProcessWithoutNullStreams | undefined;
  /** Settles once the current child has exited (or failed to start). */
  #gone: Promise<void> = Promise.resolve();
  /** Settles once the current child has exited and its pipes are closed (its 'close' event), or failed to start. */
  #released: Promise<void> = Promise.resolve();
  #pid = 0;
  #alive = false;
  #closed = false;
  #diedWhileIdle: string | undefined;
  /** Protocol output received since the last line break. */
  #parts: string[] = [];
  #partsLen = 0;
  #stray = '';
  #nextId = 1;
  #pending: { id: number; resolve: (r: DriverReply) => void } | undefined;
  #onExit: ((how: string) => void) | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #busy = false;
  #extraRo: string[] = [];
  #killRequested = false;
  /** Pid namespace of the current sandbox (host-side process limit), and the count that broke it. */
  #pidNs: string | undefined;
  #procLimitHit = 0;
  /** The process wrote more than MAX_PROTOCOL_LINE characters without a line break and was killed. */
  #protocolFlood = false;

  private constructor(opts: KernelOptions, python: string, driver: string) {
    this.#opts = opts;
    this.#python = python;
    this.#driver = driver;
    this.#log = opts.log ?? nullLogger;
    this.#limits = this.#planLimits(undefined);
  }

  /** Interpreter, sandbox mode, host pid and limits of the current process (change after a restart). */
  get info(): KernelInfo {
    return { python: this.#python, sandbox: this.#opts.sandbox, pid: this.#pid, limits: this.#limits };
  }

  /** The limits a process gets with cgroup `cg` (or none): see {@link KernelLimits}. */
  #planLimits(cg: KernelCgroup | undefined): KernelLimits {
    const o = this.#opts;
    const sandboxed = o.sandbox === 'bubblewrap';
    const budget = Math.max(0, o.memoryLimitMb ?? 4096);
    const maxProcs = sandboxed ? Math.max(0, o.maxProcesses ?? 256) : 0;
    const cores = Math.max(0, o.cpuCores ?? 1);
    const i = cg?.info;
    const cgName = i ? `cgroup v${i.version}` : '';
    let procs = maxProcs;
    let perProcess = budget;
    const aggregate = !!(budget && i?.memory);
    if (budget && !aggregate && maxProcs) {
      // No aggregate limit: RLIMIT_AS × process count ≤ budget (issue 37), keeping ≥ MIN_PROCESS_AS_MB per process.
      procs = Math.max(1, Math.min(maxProcs, Math.floor(budget / MIN_PROCESS_AS_MB)));
      perProcess = Math.floor(budget / procs);
    }
    return {
      betweenCells: i?.freezer ? 'cgroup-freezer' : 'sigstop',
      cgroup: i ? { version: i.version, dirs: [...i.dirs] } : null,
      memory: {
        budgetMb: budget,
        aggregate,
        mechanism: aggregate
          ? `${cgName} ${i!.version === 1 ? 'memory.limit_in_bytes' : 'memory.max'}${i!.swap ? ' + swap limit' : ''}`
          : 'RLIMIT_AS per process',
        perProcessMb: perProcess,
      },
      processes: {
        max: procs,
        mechanism: procs
          ? i?.pids
            ? `${cgName} pids.max, host-side count of the sandbox's pid namespace`
            : `host-side count of the sandbox's pid namespace, RLIMIT_NPROC`
          : 'none',
      },
      cpu: {
        coresAggregate: cores && i?.cpu ? cores : null,
        mechanism:
          cores && i?.cpu
            ? `${cgName} ${i.version === 1 ? 'cpu.cfs_quota_us' : 'cpu.max'}`
            : 'no cgroup cpu controller',
      },
      workspaceQuota: {
        limitMb: Math.max(0, o.workspaceQuotaMb ?? 2048),
        mechanism:
          'host polls the workspace every 100 ms during a cell and once after it (blocks of files and directories, ≥ 1 block per inode, name bytes); no file-system quota',
      },
    };
  }

  /**
   * Starts a kernel and runs its preamble.
   * @throws LoupeInputError when `cwd` does not exist, when the sandbox is `bubblewrap` but `bwrap`
   *   is missing (telling the user to install it or set `loupe.sandbox` to "off"), or when a
   *   read-only / writable path does not exist; Error when the process does not come up or the
   *   preamble fails (with its traceback).
   */
  static async start(opts: KernelOptions): Promise<PythonKernel> {
    if (!existsSync(opts.cwd) || !statSync(opts.cwd).isDirectory()) {
      throw new LoupeInputError(opts.cwd, 'kernel working directory does not exist');
    }
    const python = opts.python || (await findPython()).path;
    const k = new PythonKernel({ ...opts, cwd: resolve(opts.cwd) }, python, driverPath());
    if (opts.sandbox === 'bubblewrap') {
      const bwrap = opts.bubblewrapPath ?? findBubblewrap();
      if (!bwrap || !existsSync(bwrap)) {
        throw new LoupeInputError(
          'loupe.sandbox',
          'bubblewrap (bwrap) is not installed, so agent code cannot be sandboxed. Install it (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install bubblewrap) or opt in to an unsandboxed kernel with the setting "loupe.sandbox": "off" (CLI: --sandbox off).',
        );
      }
      for (const p of [
        ...opts.readOnlyPaths,
        ...opts.writablePaths,
        ...(opts.mounts ?? []).flatMap((m) => [m.source, m.target]),
      ]) {
        if (!isAbsolute(p)) throw new LoupeInputError(p, 'sandbox paths must be absolute');
        if (!existsSync(p)) throw new LoupeInputError(p, 'sandbox path does not exist');
      }
      k.#extraRo = await pythonDirs(python);
    } else if (opts.sandbox !== 'off') {
      throw new LoupeInputError(
        'sandbox',
        `unknown sandbox mode ${JSON.stringify(opts.sandbox)} (use "bubblewrap" or "off")`,
      );
    }
    await k.#spawn();
    try {
      await k.#runPreamble();
    } catch (e) {
      await k.close();
      throw e;
    }
    return k;
  }

  #env(): Record<string, string> {
    const sandboxed = this.#opts.sandbox === 'bubblewrap';
    const env: Record<string, string> = {
      ...minimalEnv(),
      HOME: sandboxed ? '/tmp/home' : (process.env.HOME ?? '/tmp'),
      // getpass.getuser() reads these first (the sandbox has no /etc/passwd).
      USER: sandboxed ? 'loupe' : (process.env.USER ?? 'loupe'),
      LOGNAME: sandboxed ? 'loupe' : (process.env.LOGNAME ?? process.env.USER ?? 'loupe'),
      TMPDIR: '/tmp',
      MPLBACKEND: 'Agg',
      MPLCONFIGDIR: sandboxed ? '/tmp/home/.matplotlib' : join(process.env.TMPDIR ?? '/tmp', 'loupe-mpl'),
      PYTHONUNBUFFERED: '1',
      PYTHONDONTWRITEBYTECODE: '1',
      // Fixed str hashing: iteration order of sets of strings (e.g. `print(set(df.columns))`) is the
      // same in every process, so a replay of a recorded run (issue 6) reproduces such outputs.
      PYTHONHASHSEED: '0',
      PYTHONIOENCODING: 'utf-8',
      OPENBLAS_NUM_THREADS: '1',
      OMP_NUM_THREADS: '1',
      MKL_NUM_THREADS: '1',
      LOUPE_KERNEL_MEMORY_MB: String(this.#limits.memory.perProcessMb),
      LOUPE_KERNEL_FSIZE_MB: String(fileLimitMb(this.#opts.maxFileSizeMb ?? 2048, this.#opts.workspaceQuotaMb ?? 2048)),
      LOUPE_KERNEL_MAX_OUTPUT: String(this.#opts.maxOutputChars ?? 1_000_000),
    };
    // Only in the sandbox's own pid namespace: there the driver can count and kill every process.
    if (sandboxed) env.LOUPE_KERNEL_MAX_PROCS = String(this.#limits.processes.max);
    if (sandboxed) env.LOUPE_KERNEL_OWN_PIDNS = '1';
    if (this.#opts.importAllowlist) env.LOUPE_KERNEL_ALLOWLIST = JSON.stringify(this.#opts.importAllowlist);
    if (this.#opts.preloadModules?.length) env.LOUPE_KERNEL_PRELOAD = JSON.stringify(this.#opts.preloadModules);
    return { ...env, ...(this.#opts.env ?? {}) };
  }

  async #spawn(): Promise<void> {
    const o = this.#opts;
    let cmd: string;
    let args: string[];
    if (o.sandbox === 'bubblewrap') {
      cmd = o.bubblewrapPath ?? findBubblewrap() ?? 'bwrap';
      args = bubblewrapArgs({
        python: this.#python,
        driver: this.#driver,
        cwd: o.cwd,
        readOnlyPaths: o.readOnlyPaths,
        writablePaths: o.writablePaths,
        extraReadOnly: this.#extraRo,
        ...(o.tmpSizeMb ? { tmpSizeMb: o.tmpSizeMb } : {}),
        ...(o.mounts?.length ? { mounts: o.mounts } : {}),
      });
    } else {
      cmd = this.#python;
      args = ['-u', this.#driver];
    }
    // A cgroup per process (issue 37): aggregate memory, processes and CPU, and the freezer used between cells.
    this.#cg?.release();
    this.#cg = undefined;
    this.#stopped = undefined;
    if (o.cgroups !== 'off' && !this.#noCgroup) {
      const budget = Math.max(0, o.memoryLimitMb ?? 4096);
      this.#cg = KernelCgroup.create(o.sandbox === 'bubblewrap' ? 'bwrap' : 'plain', {
        memoryBytes: budget * MIB,
        pids: o.sandbox === 'bubblewrap' ? Math.max(0, o.maxProcesses ?? 256) : 0,
        cpuCores: Math.max(0, o.cpuCores ?? 1),
      });
      if (this.#cg) [cmd, args] = this.#cg.wrap(cmd, args);
    }
    this.#limits = this.#planLimits(this.#cg);
    const cgAtSpawn = this.#cg;
    this.#parts = [];
    this.#partsLen = 0;
    this.#protocolFlood = false;
    this.#stray = '';
    this.#diedWhileIdle = undefined;
    const child = spawn(cmd, args, { cwd: o.cwd, env: this.#env(), stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.#child = child;
    this.#pid = child.pid ?? 0;
    this.#alive = true;
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdin.on('error', () => {
      /* EPIPE after death: handled by exit */
    });
    let ready: ((r: DriverReply) => void) | undefined;
    const readyP = new Promise<DriverReply>((res) => (ready = res));
    const onLine = (line: string) => {
      if (!line.trim()) return;
      let msg: DriverReply;
      try {
        msg = JSON.parse(line) as DriverReply;
      } catch {
        this.#stray += line.length > MAX_STRAY_STDERR ? `${line.slice(0, MAX_STRAY_STDERR)}...\n` : line + '\n';
        if (this.#stray.length > MAX_STRAY_STDERR) this.#stray = this.#stray.slice(-MAX_STRAY_STDERR);
        return;
      }
      if (msg.type === 'ready') ready?.(msg);
      else if (msg.type === 'result' && this.#pending && msg.id === this.#pending.id) {
        const p = this.#pending;
        this.#pending = undefined;
        p.resolve(msg);
      }
    };
    child.stdout.on('data', (chunk: string) => {
      if (this.#child !== child || this.#protocolFlood) return;
      // Chunks without a line break are kept as parts (joined once a line ends): no rescans, no copies.
      let start = 0;
      let nl: number;
      while ((nl = chunk.indexOf('\n', start)) >= 0) {
        const piece = chunk.slice(start, nl);
        const line = this.#parts.length ? this.#parts.join('') + piece : piece;
        this.#parts = [];
        this.#partsLen = 0;
        start = nl + 1;
        onLine(line);
      }
      if (start < chunk.length) {
        this.#parts.push(start ? chunk.slice(start) : chunk);
        this.#partsLen += chunk.length - start;
        if (this.#partsLen > MAX_PROTOCOL_LINE) {
          this.#parts = [];
          this.#partsLen = 0;
          this.#protocolFlood = true;
          this.#log.warn(
            `kernel: more than ${MAX_PROTOCOL_LINE} characters on the protocol channel without a line break; killing it`,
          );
          this.#kill();
        }
      }
    });
    child.stderr.on('data', (chunk: string) => {
      this.#stray += chunk;
      if (this.#stray.length > MAX_STRAY_STDERR) this.#stray = this.#stray.slice(-MAX_STRAY_STDERR);
    });
    let exitInfo = '';
    const exited = new Promise<string>((res) => {
      child.on('exit', (code, signal) => {
        exitInfo = signal ? `killed by ${signal}` : `exited with code ${code}`;
        if (this.#child === child && this.#protocolFlood) {
          exitInfo = `was killed by Loupe: it wrote more than ${MAX_PROTOCOL_LINE / 1024 / 1024} MiB to the kernel's protocol channel without a line break`;
        } else if (this.#child === child && this.#quotaHit) {
          exitInfo = `was killed by Loupe: the workspace grew to ${(this.#quotaHit / 1048576).toFixed(0)} MiB, over the run's quota of ${this.#opts.workspaceQuotaMb ?? 2048} MiB (kernel option workspaceQuotaMb). Delete files in the workspace to continue`;
        } else if (this.#child === child && this.#procLimitHit) {
          exitInfo = `was killed by Loupe: ${this.#procLimitHit} processes were running in the sandbox, more than the limit of ${this.#limits.processes.max}`;
        }
        if (this.#child === child) {
          this.#alive = false;
          if (this.#onExit) this.#onExit(exitInfo);
          else if (!this.#closed) this.#diedWhileIdle = exitInfo;
        }
        res(exitInfo);
      });
      child.on('error', (err) => {
        exitInfo = `could not start: ${err.message}`;
        if (this.#child === child) this.#alive = false;
        res(exitInfo);
      });
    });
    this.#gone = exited.then(() => undefined);
    this.#released = new Promise<void>((res) => {
      child.once('close', () => res());
      child.once('error', () => res());
    });
    let timer: NodeJS.Timeout | undefined;
    type StartOutcome = { kind: 'ready'; msg: DriverReply } | { kind: 'exit'; how: string } | { kind: 'timeout' };
    const r = await Promise.race<StartOutcome>([
      readyP.then((msg) => ({ kind: 'ready', msg })),
      exited.then((how) => ({ kind: 'exit', how })),
      new Promise<StartOutcome>((res) => (timer = setTimeout(() => res({ kind: 'timeout' }), START_TIMEOUT_MS))),
    ]);
    clearTimeout(timer);
    if (r.kind === 'ready') {
      this.#log.debug(`kernel ready: python ${r.msg.python} pid ${this.#pid} sandbox ${o.sandbox}`);
      this.#procLimitHit = 0;
      this.#quotaHit = 0;
      this.#protocolFlood = false;
      this.#pidNs =
        o.sandbox === 'bubblewrap' && (o.maxProcesses ?? 256) > 0 ? sandboxPidNamespace(this.#pid) : undefined;
      if (this.#pidNs) watchProcs(this);
      else if (o.sandbox === 'bubblewrap' && (o.maxProcesses ?? 256) > 0) {
        this.#log.warn('kernel: cannot find the sandbox pid namespace; the process limit is RLIMIT_NPROC only');
      }
      this.#stray = '';
      return;
    }
    const stderr = this.#stray.trim();
    this.#kill();
    if (r.kind === 'exit' && cgAtSpawn && / code 125$/.test(r.how) && !this.#closed) {
      // the wrapper could not join the cgroup: start without one (per-process limits, SIGSTOP between cells)
      this.#log.warn('kernel: could not move the kernel into its cgroup; starting it without one');
      this.#noCgroup = true;
      return this.#spawn();
    }
    const why = r.kind === 'timeout' ? `did not start within ${START_TIMEOUT_MS / 1000} s` : r.how;
    const hint =
      o.sandbox === 'bubblewrap' && /^bwrap:/m.test(stderr)
        ? '\nbubblewrap could not create the sandbox (unprivileged user namespaces may be disabled on this machine: see sysctl kernel.unprivileged_userns_clone / user.max_user_namespaces). Fix that, or opt in to an unsandboxed kernel with "loupe.sandbox": "off".'
        : '';
    throw new Error(
      `Python kernel ${why} (${cmd} ${o.sandbox === 'bubblewrap' ? '[bubblewrap sandbox]' : this.#python}).${stderr ? `\n${stderr}` : ''}${hint}`,
    );
  }

  /** Called by the host-side process watch with per-namespace counts: kills a sandbox over its limit. */
  checkProcs(counts: Map<string, number>): void {
    if (!this.#alive || !this.#pidNs || this.#procLimitHit) return;
    const n = counts.get(this.#pidNs) ?? 0;
    // the sandbox's init (bwrap, pid 1) is not one of the agent's processes when the limit was scaled down (issue 37)
    const max =
      this.#limits.processes.max === (this.#opts.maxProcesses ?? 256)
        ? this.#limits.processes.max
        : this.#limits.processes.max + 1;
    if (n <= max) return;
    this.#procLimitHit = n;
    this.#log.warn(`kernel: ${n} processes in the sandbox (limit ${max}); killing it`);
    this.#kill();
  }

  #kill(): void {
    const child = this.#child;
    if (!child) return;
    // SIGKILL to everything in the cgroup and thaw it (a frozen v1 task dies only once thawed); the guard removes it.
    this.#cg?.release();
    this.#cg = undefined;
    this.#stopped = undefined;
    this.#alive = false;
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      try {
        child.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
    child.stdin.destroy();
  }

  async #runPreamble(): Promise<void> {
    if (!this.#opts.preamble) return;
    const r = await this.#run(this.#opts.preamble, { timeoutMs: this.#opts.cellTimeoutMs }, false);
    if (r.status !== 'ok') {
      const tb = r.error ? r.error.traceback.join('\n') || `${r.error.ename}: ${r.error.evalue}` : r.stderr;
      throw new Error(`Kernel preamble failed (${r.status}):\n${tb}`);
    }
  }

  async #restartProcess(): Promise<void> {
    this.#kill();
    // close() meanwhile: never start a process nobody will close (issue 23)
    if (this.#closed) throw new Error('Python kernel is closed');
    await this.#spawn();
    await this.#runPreamble();
  }

  /**
   * Executes one cell: all statements, then the final expression is evaluated (IPython-like).
   * Calls queue up; one cell runs at a time. Never throws for problems in the code: errors,
   * timeouts and crashes come back in the result. A timeout interrupts the cell (state kept when
   * the interrupt works, `restarted: true` when the process had to be killed). A crash or a
   * MemoryError restarts the process (`restarted: true`, message in `stderr`).
   * @param opts.timeoutMs wall limit for this cell (default `cellTimeoutMs`, else 120 s).
   * @throws Error only when the kernel was closed or cannot be restarted.
   */
  execute(code: string, opts: { timeoutMs?: number } = {}): Promise<ExecuteResult> {
    const p = this.#queue.then(() => this.#run(code, opts, true));
    this.#queue = p.catch(() => undefined);
    return p;
  }

  async #run(code: string, opts: { timeoutMs?: number }, mayRestart: boolean): Promise<ExecuteResult> {
    if (this.#closed) throw new Error('Python kernel is closed');
    const t0 = performance.now();
    let notes = '';
    let restarted = false;
    if (!this.#alive) {
      const how = this.#diedWhileIdle ?? 'was not running';
      notes += `[loupe] The Python kernel process ${how} since the last cell and was restarted. ${STATE_LOST}\n`;
      await this.#restartProcess();
      restarted = true;
    }
    const timeoutMs = opts.timeoutMs ?? this.#opts.cellTimeoutMs ?? 120_000;
    const cpuMs = this.#opts.cellCpuLimitMs ?? timeoutMs;
    const id = this.#nextId++;
    const child = this.#child!;
    this.#stray = '';
    this.#busy = true;
    this.#resume();
    const cg = this.#cg;
    const oomBefore = cg?.oomKills() ?? 0;
    type Outcome = { kind: 'reply'; msg: DriverReply } | { kind: 'exit'; how: string } | { kind: 'timeout' };
    let outcome: Outcome;
    let timedOut = false;
    let quotaTimer: NodeJS.Timeout | undefined;
    const quota = this.#quota();
    const atStart = quota ? diskUsage(quota.root).bytes : 0;
    try {
      const replyP = new Promise<Outcome>((res) => {
        this.#pending = { id, resolve: (msg) => res({ kind: 'reply', msg }) };
        this.#onExit = (how) => res({ kind: 'exit', how });
      });
      child.stdin.write(
        JSON.stringify({ op: 'execute', id, code, cpuSeconds: cpuMs > 0 ? cpuMs / 1000 : null }) + '\n',
      );
      if (quota) {
        // Every QUOTA_WATCH_MS; a workspace so large that measuring it is slow is measured less often (at most
        // a tenth of the host's time), so a cell that writes many files cannot stall the extension host.
        const check = () => {
          const t0 = performance.now();
          const over = this.#overQuota(child, atStart);
          const took = performance.now() - t0;
          if (over) return;
          quotaTimer = setTimeout(check, Math.max(QUOTA_WATCH_MS, 10 * took));
        };
        quotaTimer = setTimeout(check, QUOTA_WATCH_MS);
      }
      let timer: NodeJS.Timeout | undefined;
      outcome = await Promise.race([
        replyP,
        new Promise<Outcome>((res) => (timer = setTimeout(() => res({ kind: 'timeout' }), timeoutMs))),
      ]);
      clearTimeout(timer);
      if (outcome.kind === 'timeout') {
        timedOut = true;
        this.#sendInterrupt();
        const grace = this.#opts.interruptGraceMs ?? 2_000;
        outcome = await Promise.race([
          replyP,
          new Promise<Outcome>((res) => (timer = setTimeout(() => res({ kind: 'timeout' }), grace))),
        ]);
        clearTimeout(timer);
      }
    } finally {
      this.#busy = false;
      clearTimeout(quotaTimer);
    }
    this.#pending = undefined;
    this.#onExit = undefined;
    const stray = this.#stray;
    this.#stray = '';
    const oomKilled = cg ? cg.oomKills() - oomBefore : 0;
    const aggregateNote =
      oomKilled > 0
        ? `[loupe] ${oomKilled} process(es) of the kernel were killed by the memory limit: all its processes together may use at most ${this.#limits.memory.budgetMb} MiB (kernel option memoryLimitMb).\n`
        : '';
    if (outcome.kind === 'reply') {
      // Nothing of the agent's runs until the next cell (issue 37): threads and processes the cell left are frozen at
      // the end of this turn of the event loop, unless the next cell has already started (back-to-back calls: a replay,
      // a script) — then there is no "between" to stop, and the ~1 ms freeze and thaw are saved.
      setImmediate(() => {
        if (this.#child !== child || this.#busy) return;
        this.#pause();
        if (quota) this.#overQuota(child, atStart);
      });
      const m = outcome.msg;
      const res: ExecuteResult = {
        status: timedOut ? 'timeout' : (m.status ?? 'error'),
        stdout: m.stdout ?? '',
        stderr: notes + (m.stderr ?? '') + stray + aggregateNote,
        durationMs: 0,
      };
      if (m.result !== undefined) res.result = m.result;
      if (m.tables?.length) res.tables = m.tables;
      if (m.figures?.length) res.figures = m.figures;
      if (m.error) res.error = m.error;
      if (timedOut) {
        res.stderr += `[loupe] Cell interrupted after the ${timeoutMs / 1000} s time limit. The kernel state is kept.\n`;
      }
      if (m.status === 'timeout' && !timedOut) {
        res.stderr += `[loupe] Cell stopped: it used more than ${cpuMs / 1000} s of CPU time. The kernel state is kept.\n`;
      }
      if (m.memoryError && mayRestart && !this.#closed) {
        res.stderr += `[loupe] The cell ran out of memory (limit ${this.#opts.memoryLimitMb ?? 4096} MiB); the kernel was restarted. ${STATE_LOST}\n`;
        await this.#restartProcess();
        restarted = true;
      }
      if (restarted) res.restarted = true;
      res.durationMs = performance.now() - t0;
      return res;
    }
    // The process died, or ignored the interrupt: kill it and start afresh.
    const how = outcome.kind === 'exit' ? outcome.how : 'did not respond to the interrupt';
    const status: ExecuteResult['status'] = outcome.kind === 'exit' && !timedOut ? 'crashed' : 'timeout';
    let msg = this.#closed
      ? '[loupe] The Python kernel was closed while this cell was running.'
      : status === 'crashed'
        ? this.#procLimitHit || this.#protocolFlood || this.#quotaHit
          ? `[loupe] The Python kernel process ${how} while running this cell.`
          : this.#killRequested
            ? '[loupe] The kernel was restarted on request while this cell was running.'
            : oomKilled > 0
              ? `[loupe] The Python kernel process ${how} while running this cell: out of memory (all the kernel's processes together may use at most ${this.#limits.memory.budgetMb} MiB, kernel option memoryLimitMb).`
              : `[loupe] The Python kernel process ${how} while running this cell (possibly out of memory: limit ${this.#limits.memory.budgetMb} MiB).`
        : `[loupe] Cell exceeded the ${timeoutMs / 1000} s time limit and the kernel ${how}.`;
    this.#killRequested = false;
    if (mayRestart && !this.#closed) {
      await this.#restartProcess();
      msg += ` The kernel was restarted. ${STATE_LOST}`;
    } else {
      this.#kill();
    }
    return {
      status,
      stdout: '',
      stderr: notes + stray + msg + '\n',
      error: {
        ename: status === 'crashed' ? 'KernelDied' : 'TimeoutError',
        evalue: msg.replace('[loupe] ', ''),
        traceback: [],
      },
      durationMs: performance.now() - t0,
      restarted: mayRestart || restarted ? true : undefined,
    };
  }

  /** The workspace quota: its root and limit in bytes, or undefined when there is none. */
  #quota(): { root: string; limit: number; mb: number } | undefined {
    const mb = this.#opts.workspaceQuotaMb ?? 2048;
    const root = this.#opts.writablePaths[0] ?? (this.#opts.sandbox === 'off' ? this.#opts.cwd : undefined);
    return mb > 0 && root ? { root, limit: mb * MIB, mb } : undefined;
  }

  /**
   * Measures the workspace (what the disk spends: {@link diskUsage}); over the quota and grown by more than
   * QUOTA_SLACK since `atStart` (what the cell found: a workspace already over the quota lets a cell delete files, and
   * the file system's own late metadata blocks do not count as the cell's), kills process `child` if it is still the
   * current one. @returns true when it killed it.
   */
  #overQuota(child: ChildProcessWithoutNullStreams, atStart: number): boolean {
    const q = this.#quota();
    if (!q || this.#child !== child || !this.#alive) return false;
    const used = diskUsage(q.root).bytes;
    if (used <= q.limit || (atStart > q.limit && used <= atStart + QUOTA_SLACK)) return false;
    this.#quotaHit = used;
    this.#log.warn(
      `kernel: workspace ${q.root} takes ${used} bytes on disk, over the quota of ${q.mb} MiB; stopping the kernel`,
    );
    this.#kill();
    return true;
  }

  /**
   * Stops everything of the kernel until the next cell: freezes its cgroup, or (no freezer) sends SIGSTOP to every
   * process of its tree, in passes until no new process appears. Source: issue 37.
   */
  #pause(): void {
    const child = this.#child;
    if (!this.#alive || !child?.pid) return;
    if (this.#cg?.info.freezer && this.#cg.freeze()) return;
    const stopped = new Set<number>();
    for (let pass = 0; pass < 5; pass++) {
      let fresh = 0;
      for (const p of processTree(child.pid)) {
        if (stopped.has(p)) continue;
        try {
          process.kill(p, 'SIGSTOP');
          stopped.add(p);
          fresh++;
        } catch {
          /* gone */
        }
      }
      if (!fresh) break;
    }
    this.#stopped = [...stopped];
  }

  /** Lets the kernel run again: thaws its cgroup, or sends SIGCONT to what {@link #pause} stopped (and its tree). */
  #resume(): void {
    this.#cg?.thaw();
    const stopped = this.#stopped;
    if (!stopped) return;
    this.#stopped = undefined;
    const all = new Set(stopped);
    if (this.#child?.pid) for (const p of processTree(this.#child.pid)) all.add(p);
    for (const p of all) {
      try {
        process.kill(p, 'SIGCONT');
      } catch {
        /* gone */
      }
    }
  }

  #sendInterrupt(): void {
    if (!this.#alive || !this.#child) return;
    try {
      this.#child.stdin.write(JSON.stringify({ op: 'interrupt' }) + '\n');
    } catch {
      /* dead: exit handler reports */
    }
  }

  /** Interrupts the running cell (KeyboardInterrupt in the main thread); no-op when idle. */
  interrupt(): void {
    if (this.#busy) this.#sendInterrupt();
  }

  /**
   * Kills the process and starts a fresh one (preamble included), after the running cell if any.
   * @throws Error when the new process does not start or its preamble fails.
   */
  restart(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('Python kernel is closed'));
    if (this.#busy) {
      // The running cell returns 'crashed' (restarted) and restarts the process by itself.
      this.#killRequested = true;
      this.#kill();
      const p = this.#queue.then(() => undefined);
      this.#queue = p.catch(() => undefined);
      return p;
    }
    const p = this.#queue.then(() => this.#restartProcess());
    this.#queue = p.catch(() => undefined);
    return p;
  }

  /**
   * Stops the process: SIGKILL to its process group (background processes a cell started go with it; the kernel
   * holds no state worth a graceful shutdown), then waits until it has exited, at most {@link CLOSE_WAIT_MS}.
   * Nothing of the kernel keeps the host's event loop alive once the promise resolves: the wait's timer is
   * cleared, the child's pipes are destroyed (an escaped grandchild holding them cannot pin the host), and a
   * process that did not exit within the wait is unref'd and logged. Before issue 23 a 2 s timer that was never
   * cleared kept every CLI process alive 2 s after its work. A cell running meanwhile returns `crashed` without
   * a restart. Further calls to execute() throw. Idempotent; never throws.
   * @returns once the process has exited and its handles are released: a few ms after the call, at most
   *   {@link CLOSE_WAIT_MS} (2,000 ms) when the process does not die. Source: issue 23 "no process outlives its work".
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    unwatchProcs(this);
    const child = this.#child;
    if (!child) return;
    const gone = this.#gone;
    this.#kill();
    let timer: NodeJS.Timeout | undefined;
    const exited = await Promise.race([
      gone.then(() => true),
      new Promise<boolean>((res) => (timer = setTimeout(() => res(false), CLOSE_WAIT_MS))),
    ]);
    clearTimeout(timer);
    if (!exited) {
      this.#log.warn(
        `kernel: process ${child.pid ?? '?'} did not exit within ${CLOSE_WAIT_MS} ms of SIGKILL; letting it go`,
      );
      child.unref();
    }
    child.stdin.destroy();
    child.stdout.destroy();
    child.stderr.destroy();
    // the child's 'close' comes once it has exited and its pipes are closed (a turn of the loop after destroy())
    if (exited) {
      await this.#released;
      // The process and pipe handles are closed by now, but libuv runs their close callbacks in the close phase
      // that ends this turn of the loop: resolve in the next turn, when they no longer count as alive.
      await new Promise<void>((res) => setImmediate(() => setImmediate(res)));
    }
  }
}
