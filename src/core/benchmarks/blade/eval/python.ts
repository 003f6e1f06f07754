/**
 * The tiny interface BLADE evaluation needs from Python: call an operation of the driver
 * (`blade_driver.py`, located by `driver-py.ts`) and get its JSON result. Today it is a child process of `/usr/bin/python3`
 * (found by `findPython`); switching to the project kernel (`src/core/kernel/`) only means
 * providing another {@link BladePython}.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { findPython } from '../../../env/doctor.ts';
import { PythonKernel, type SandboxMode } from '../../../kernel/index.ts';
import { bladeDriverPath, bladeDriverSource } from './driver-py.ts';

/** One column state as hashed by the driver (spec §1.4.3). */
export interface FrameState {
  kind: 'frame';
  columns: string[];
  /** column → SHA-256 of canonicalised values in row order. */
  hashes: Record<string, string>;
  /**
   * column → label-invariant hash; BLADE computes it but no published metric uses it, so only on request
   * (`withCategorical`). Computed from the raw columns: BLADE's `hash_categorical` runs after `hash()` has overwritten
   * its frame with the stringified columns (`nb/df_hash.py` `prep_df`), so it factorises those strings — which only
   * BLADE's `match_categorical` reads (issue 47 item 8; see test/fixtures/official-parity/README.md).
   */
  catHashes: Record<string, string> | null;
  rows: number;
}
/** State of a step: a DataFrame, a pandas GroupBy (columns only), something else, or an error. */
export type StepState =
  | FrameState
  | { kind: 'groupby'; columns: string[] }
  | { kind: 'other'; type: string }
  | { kind: 'error'; message: string };

/** A transform unit derived by executing submitted code statement by statement. */
export interface ExecutedUnit {
  verb: string;
  code: string;
  /** `[inputColumns, outputColumn]`; output `""` means whole table (filter / orderby / deduplicate). */
  mapping: [string[], string][];
  groupbyCols: string[];
  state: StepState;
  note?: string;
  /** Set when execution alone could not attribute the statement (rows grew, merge, …). */
  unsplittable?: string;
}

export interface SplitResult {
  status: 'ok' | 'syntax_error' | 'empty' | 'execution_failed';
  error?: string;
  units: ExecutedUnit[];
  finalColumns?: string[];
}

/** What BLADE evaluation calls Python for. */
export interface BladePython {
  /** Runs ground-truth spec codes cumulatively (BLADE semantics) and returns the state after each step (`null` for empty code). */
  runPath(dataPath: string, steps: { id: string; code: string }[]): Promise<(StepState | null)[]>;
  /** Splits submitted transform code into executed units. */
  split(dataPath: string, code: string): Promise<SplitResult>;
  /** Executes externally supplied unit codes one after another (LLM fallback). */
  runUnits(dataPath: string, units: { code: string }[]): Promise<StepState[]>;
  /** Column names and row count of a data.csv. */
  columns(dataPath: string): Promise<{ columns: string[]; rows: number }>;
  /** The same driver hashing column values by `mode` (option `value_hashing`; default `blade`). Closing either closes both. */
  withValueHashing(mode: ValueHashing): BladePython;
  close(): Promise<void>;
}

/**
 * How column values are canonicalised before hashing (issue 21 item 8). `blade`: as BLADE `nb/df_hash.py`
 * `DFValueHasher._prep_series` — floats rounded per value with Python's `round(x, 5)`, the prepared column passed
 * through `astype(str)` (a date column's missing values hash as `nan`). `vectorised`: Loupe ≤ 0.1 — `Series.round(5)`
 * (numpy's scale–rint–unscale, which differs on half-way values) and raw values when the prepared column is not all
 * strings (dates with missing values).
 */
export type ValueHashing = 'blade' | 'vectorised';

/** The operations of the driver over one `call(op, args)`, with the hashing mode added to every call's arguments. */
function driverApi(
  call: <T>(op: string, args: unknown) => Promise<T>,
  close: () => Promise<void>,
  hashing: ValueHashing = 'blade',
): BladePython {
  return {
    runPath: (dataPath, steps) => call('run_path', { dataPath, steps, hashing }),
    split: (dataPath, code) => call('split', { dataPath, code, hashing }),
    runUnits: (dataPath, units) => call('run_units', { dataPath, units, hashing }),
    columns: (dataPath) => call('columns', { dataPath, hashing }),
    withValueHashing: (mode) => driverApi(call, close, mode),
    close,
  };
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/** Where BLADE's Python runs: a plain child process (default) or the project kernel (sandboxable). */
export interface BladePythonOptions {
  python?: string;
  /** Per call (default 120 s, BLADE's cell timeout). */
  timeoutMs?: number;
  cwd?: string;
  /**
   * `process` (default): a plain `python3` child. `kernel`: a {@link PythonKernel}, with `sandbox`
   * `bubblewrap` so submitted transform code runs isolated; `readOnlyPaths` must include the
   * dataset folders.
   */
  backend?: 'process' | 'kernel';
  sandbox?: SandboxMode;
  readOnlyPaths?: string[];
}

/**
 * Starts BLADE's Python side: the driver `blade_driver.py` in a child process, or (`backend: 'kernel'`)
 * inside the project kernel.
 * @returns a {@link BladePython}; call `close()` when done.
 * @throws Error when no interpreter with pandas exists or the kernel cannot start.
 */
export async function startBladePython(opts: BladePythonOptions = {}): Promise<BladePython> {
  return opts.backend === 'kernel' ? startInKernel(opts) : startProcess(opts);
}

const RESULT_START = '<<<BLADE_RESULT>>>';
const RESULT_END = '<<<BLADE_END>>>';

/** The driver inside a project kernel: definitions in the preamble, one cell per call. */
async function startInKernel(opts: BladePythonOptions): Promise<BladePython> {
  const defs = bladeDriverSource().split('for line in sys.stdin:')[0]!;
  const preamble = `${defs}
def __blade_call(op, args_json):
    args = json.loads(args_json)
    WITH_CAT[0] = bool(args.get("withCategorical"))
    HASHING[0] = args.get("hashing") or "blade"
    res = OPS[op](args)
    sys.stdout.write("${RESULT_START}" + json.dumps(res) + "${RESULT_END}")
    sys.stdout.flush()
`;
  const cwd = opts.cwd ?? process.cwd();
  const kernel = await PythonKernel.start({
    python: opts.python,
    cwd,
    sandbox: opts.sandbox ?? 'bubblewrap',
    readOnlyPaths: opts.readOnlyPaths ?? [],
    writablePaths: [],
    preamble,
    cellTimeoutMs: opts.timeoutMs ?? 120_000,
    maxOutputChars: 200_000_000,
  });
  let chain: Promise<unknown> = Promise.resolve();
  const call = <T>(op: string, args: unknown): Promise<T> => {
    const run = async (): Promise<T> => {
      const r = await kernel.execute(`__blade_call(${JSON.stringify(op)}, ${JSON.stringify(JSON.stringify(args))})`);
      if (r.status !== 'ok') {
        throw new Error(
          `BLADE kernel ${op}: ${r.status} ${r.error ? `${r.error.ename}: ${r.error.evalue}` : r.stderr.slice(-1000)}`,
        );
      }
      const a = r.stdout.lastIndexOf(RESULT_START);
      const b = r.stdout.lastIndexOf(RESULT_END);
      if (a < 0 || b < a) throw new Error(`BLADE kernel ${op}: no result in output`);
      return JSON.parse(r.stdout.slice(a + RESULT_START.length, b)) as T;
    };
    const p = chain.then(run, run);
    chain = p.catch(() => undefined);
    return p;
  };
  return driverApi(call, () => kernel.close());
}

/**
 * Starts the BLADE Python driver as a child process.
 * @param opts.python interpreter path (default: {@link findPython}); `timeoutMs` per call (default 120 s, BLADE's cell timeout).
 * @returns a {@link BladePython}; call `close()` when done.
 * @throws Error when no interpreter with pandas exists.
 */
async function startProcess(opts: BladePythonOptions): Promise<BladePython> {
  const python = opts.python ?? (await findPython()).path;
  const timeoutMs = opts.timeoutMs ?? 120_000;
  let nextId = 1;
  let closed = false;

  /** One driver process; a new one is spawned after a crash or a timeout (code under evaluation may hang or exit). */
  interface Driver {
    child: ChildProcessWithoutNullStreams;
    pending: Map<number, Pending>;
    exited?: string;
    stderr: string;
  }
  let driver: Driver | undefined;
  const driverFile = bladeDriverPath();
  const spawnDriver = (): Driver => {
    const child: ChildProcessWithoutNullStreams = spawn(python, ['-u', driverFile], {
      cwd: opts.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONIOENCODING: 'utf-8', MPLBACKEND: 'Agg' },
    });
    const d: Driver = { child, pending: new Map(), stderr: '' };
    child.stderr.on('data', (b: Buffer) => {
      d.stderr = (d.stderr + b.toString()).slice(-4000);
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      let msg: { id: number; ok: boolean; result?: unknown; error?: string };
      try {
        msg = JSON.parse(line) as typeof msg;
      } catch {
        return;
      }
      const p = d.pending.get(msg.id);
      if (!p) return;
      d.pending.delete(msg.id);
      clearTimeout(p.timer);
      if (msg.ok) p.resolve(msg.result);
      else p.reject(new Error(`BLADE Python driver: ${msg.error}`));
    });
    child.on('exit', (code, signal) => {
      d.exited = `exited (${code ?? signal})`;
      for (const p of d.pending.values()) {
        clearTimeout(p.timer);
        p.reject(new Error(`BLADE Python driver ${d.exited}: ${d.stderr.trim().slice(-1000)}`));
      }
      d.pending.clear();
    });
    child.on('error', (e) => {
      d.exited = `failed: ${e.message}`;
    });
    return d;
  };
  const live = (): Driver => {
    if (!driver || driver.exited) driver = spawnDriver();
    return driver;
  };
  live();

  const call = <T>(op: string, args: unknown): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (closed) {
        reject(new Error('BLADE Python driver is closed'));
        return;
      }
      const d = live();
      const id = nextId++;
      const timer = setTimeout(() => {
        d.pending.delete(id);
        reject(new Error(`BLADE Python driver: operation ${op} timed out after ${timeoutMs} ms (driver restarted)`));
        d.exited = 'killed after a timeout'; // the next call starts a fresh driver
        for (const p of d.pending.values()) {
          clearTimeout(p.timer);
          p.reject(new Error(`BLADE Python driver restarted: operation ${op} timed out`));
        }
        d.pending.clear();
        d.child.kill('SIGKILL');
      }, timeoutMs);
      d.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      d.child.stdin.write(JSON.stringify({ id, op, args }) + '\n');
    });

  return driverApi(call, async () => {
    closed = true;
    const d = driver;
    if (!d || d.exited) return;
    // EOF ends the driver; SIGKILL after a 2 s grace only if it has not exited (timer cleared then: issue 23)
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      d.child.once('exit', () => resolve());
      d.child.stdin.end();
      timer = setTimeout(() => {
        if (!d.exited) d.child.kill('SIGKILL');
      }, 2000);
      timer.unref();
    });
    clearTimeout(timer);
  });
}
