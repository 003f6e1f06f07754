/**
 * Python runs that scale to the cores (issue 23): eight LongDA blocks, each run = 10 steps (the scenario of
 * agent.perf.ts part 2): one Python cell (the run's kernel, sandboxed as `loupe run` does by default), notes and
 * answer views, final_answer, with a scripted OpenAI-compatible model answering
 * after 300 ms, run by the shipped CLI (dist/cli.js, built first) — what a user waits for, process start to exit.
 *  - subject: `loupe run --blocks <8> --concurrency 8`: its wall time;
 *  - baseline: the same command with `--concurrency 1` in the same perf run: each run alone. From it, the single-run
 *    work: total CPU time of the process and its children (kernels included; bash `time`), and the longest single
 *    run (the gap between consecutive `--json` lines; the first from process start). CPU is counted with a subreaper
 *    (kernels killed with their process group are orphans that `time` would miss).
 *  - ideal = max(total single-run work / min(cores, concurrency), longest single run) (the definition);
 *    goal: subject wall ≤ 1.5 × ideal.
 * Baseline and subject alternate, ROUNDS pairs; medians. Exit 1 on a FAIL.
 * Usage: node test/perf/concurrency.perf.ts   (LOUPE_PERF_NO_BUILD=1 uses dist/ as it is)
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBubblewrap } from '../../src/core/kernel/index.ts';
import { findPython } from '../../src/core/env/doctor.ts';
import { loadSuite, type LongdaQuery } from '../../src/core/benchmarks/index.ts';
import { call, startScriptedLlm, type Turn } from '../helpers/scripted-llm.ts';
import { repoRoot, sharedDir } from '../helpers/shared.ts';
import { warmLongdaDocs } from './warm-docs.ts';

const GOAL = 1.5;
const ROUNDS = Number(process.env.CONC_ROUNDS ?? 3);
const CONCURRENCY = 8;
const LATENCY_MS = 300;
const ROOT = join(sharedDir(), 'data', 'longda', 'benchmark');
const CLI = join(repoRoot, 'dist', 'cli.js');

if (!existsSync(join(ROOT, 'benchmark.csv'))) {
  console.log(`concurrency.perf: SKIP — LongDA data not found at ${ROOT} (set LOUPE_SHARED)`);
  process.exit(0);
}
if (process.env.LOUPE_PERF_NO_BUILD !== '1') {
  const b = spawnSync(process.execPath, ['esbuild.js'], { cwd: repoRoot, encoding: 'utf8' });
  if (b.status !== 0) throw new Error(`build failed:\n${b.stdout}\n${b.stderr}`);
}

const suite = await loadSuite('longda', ROOT);
const runnable = suite.blocks.filter((b) => b.runnable);
const eight = [
  ...runnable.filter((b) => b.longda?.survey === 'NHANES'),
  ...runnable.filter((b) => b.longda?.survey !== 'NHANES'),
].slice(0, CONCURRENCY);
const firstQid = (b: (typeof eight)[number]) =>
  b.items.filter((x): x is LongdaQuery => x.type === 'longda-query')[0]!.longdaId;
// The scenario (agent.perf.ts part 2: 10 steps per run at 300 ms), with one Python cell each: the first step.
const STEPS = 10;
const script = (b: (typeof eight)[number]): Turn[] => [
  {
    content: 'Loading the data.',
    toolCalls: [call('python', { code: 'import pandas as pd\nprint(pd.DataFrame({"w": [1.0, 2.0, 3.0]}).w.mean())' })],
  },
  ...Array.from({ length: STEPS - 2 }, (_, i): Turn =>
    i % 2 === 0
      ? {
          content: `Step ${i + 1}: noting.`,
          toolCalls: [call('notes', { action: 'add', content: `finding ${i}: the mean is 2 (${b.id})` })],
        }
      : { content: `Step ${i + 1}: checking.`, toolCalls: [call('answer', { action: 'view', q_id: firstQid(b) })] },
  ),
  { content: 'Done.', toolCalls: [call('final_answer', { summary: 'perf' })] },
];
const llm = await startScriptedLlm({
  latencyMs: LATENCY_MS,
  scriptFor: (first) => script(eight.find((b) => first.includes(firstQid(b)))!),
});
const sandbox = findBubblewrap() ? 'bubblewrap' : 'off';
warmLongdaDocs(CLI, ROOT); // a complete docs cache: this part measures runs, not first-ever indexing (see warm-docs.ts)

// CPU time of the CLI and every process it started, kernels included: a kernel is killed with its process group, so
// its sandbox's processes end as orphans that the CLI's ancestors never wait for (bash `time` missed them). This
// wrapper makes itself their subreaper (PR_SET_CHILD_SUBREAPER), runs the CLI, reaps every orphan and prints the
// children's rusage ("user sys") on fd 2; the CLI's own stderr goes to fd 3.
const SUBREAPER = `
import ctypes, os, resource, sys
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)
pid = os.fork()
if pid == 0:
    os.dup2(3, 2)
    os.execv(sys.argv[1], sys.argv[1:])
status = 0
while True:
    try:
        p, st = os.wait()
    except ChildProcessError:
        break
    if p == pid:
        status = st
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(ru.ru_utime, ru.ru_stime, file=sys.stderr)
sys.exit(os.waitstatus_to_exitcode(status))
`;
const python = (await findPython()).path;

/**
 * A fresh cpuacct cgroup (v1) for one sample, when this user may create one (root): every process the CLI starts
 * stays in it, orphans included, so its usage is the whole work. Undefined otherwise (the subreaper counts instead).
 */
function cgroupFor(tag: string): string | undefined {
  const dir = `/sys/fs/cgroup/cpuacct/loupe-perf-${process.pid}-${tag}`;
  try {
    mkdirSync(dir);
    if (!existsSync(join(dir, 'cpuacct.usage'))) throw new Error('no cpuacct');
    return dir;
  } catch {
    try {
      rmdirSync(dir);
    } catch {
      /* none */
    }
    return undefined;
  }
}
let cpuBy = 'subreaper rusage';
/** CPU seconds used in the cgroup once its last process is gone; removes it. */
function cgroupCpuS(dir: string): number {
  cpuBy = 'cpuacct cgroup';
  const until = Date.now() + 5000;
  while (readFileSync(join(dir, 'cgroup.procs'), 'utf8').trim() && Date.now() < until) spawnSync('sleep', ['0.05']);
  const ns = Number(readFileSync(join(dir, 'cpuacct.usage'), 'utf8'));
  try {
    rmdirSync(dir);
  } catch {
    /* a process still in it: left for the OS */
  }
  return ns / 1e9;
}

interface Sample {
  wallMs: number;
  cpuS: number;
  runMs: number[];
}

/** One `loupe run` of the eight blocks at `concurrency`: wall time, CPU time with children, per-run gaps. */
function sample(concurrency: number, k: number): Promise<Sample> {
  const dir = mkdtempSync(join(tmpdir(), `loupe-conc-perf-${concurrency}-${k}-`));
  const args = [
    CLI,
    'run',
    '--suite',
    'longda',
    '--root',
    ROOT,
    '--blocks',
    eight.map((b) => b.id).join(','),
    '--concurrency',
    String(concurrency),
    '--agent',
    'llm',
    '--model',
    'scripted',
    '--base-url',
    llm.baseUrl,
    '--api-key-env',
    'LOUPE_PERF_KEY',
    '--store',
    join(dir, 'runs.sqlite'),
    '--sandbox',
    sandbox,
    '--max-steps',
    String(STEPS + 2),
    '--json',
  ];
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const cg = cgroupFor(`${concurrency}-${k}`);
    const cmd = cg
      ? ['sh', '-c', `echo $$ > ${cg}/cgroup.procs && exec "$@" 2>&3`, '_', process.execPath, ...args]
      : [python, '-c', SUBREAPER, process.execPath, ...args];
    const c = spawn(cmd[0]!, cmd.slice(1), {
      cwd: dir,
      env: { ...process.env, LOUPE_PERF_KEY: 'perf', LOUPE_NO_KEYS: '1' },
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let tm = '';
    const lineAt: number[] = [];
    c.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const n = out.split('\n').filter((l) => l.startsWith('{"runId"')).length;
      while (lineAt.length < n) lineAt.push(performance.now());
    });
    c.stdio[3]!.on('data', (d: Buffer) => (err += d.toString()));
    c.stderr!.on('data', (d: Buffer) => (tm += d.toString()));
    c.on('error', reject);
    c.on('exit', (code) => {
      const wallMs = performance.now() - t0;
      try {
        const lines = out
          .split('\n')
          .filter((l) => l.startsWith('{"runId"'))
          .map((l) => JSON.parse(l) as { status: string });
        if (code !== 0 || lines.length !== eight.length || lines.some((l) => l.status !== 'finished')) {
          throw new Error(`run at concurrency ${concurrency} failed (exit ${code}): ${out}\n${err.slice(-3000)}`);
        }
        const [u, s] = (tm.trim().split('\n').at(-1) ?? '').split(' ').map(Number);
        resolve({
          wallMs,
          cpuS: cg ? cgroupCpuS(cg) : (u ?? NaN) + (s ?? NaN),
          runMs: lineAt.map((t, i) => t - (i === 0 ? t0 : lineAt[i - 1]!)),
        });
      } catch (e) {
        reject(e as Error);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

const base: Sample[] = [];
const subj: Sample[] = [];
try {
  for (let k = 0; k < ROUNDS; k++) {
    base.push(await sample(1, k));
    subj.push(await sample(CONCURRENCY, k));
  }
} finally {
  await llm.close();
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cores = availableParallelism();
const ideals = base.map((b) => Math.max((b.cpuS * 1000) / Math.min(cores, CONCURRENCY), Math.max(...b.runMs)));
const ideal = med(ideals);
const wall = med(subj.map((s) => s.wallMs));
const ratio = wall / ideal;
const ok = ratio <= GOAL;
console.log(
  `8 blocks × ${STEPS} steps at concurrency 8, one Python cell each (sandbox ${sandbox}), ${LATENCY_MS} ms model latency, shipped CLI, process start → exit (median of ${ROUNDS} alternating pairs)`,
);
console.log(
  `  goal ≤ ${GOAL}× ideal · measured ${(wall / 1000).toFixed(2)} s · ideal ${(ideal / 1000).toFixed(2)} s = max(single-run work ${med(base.map((b) => b.cpuS)).toFixed(2)} CPU s / min(${cores} cores, ${CONCURRENCY}) (CPU by ${cpuBy}), longest single run ${(med(base.map((b) => Math.max(...b.runMs))) / 1000).toFixed(2)} s) · ratio ${ratio.toFixed(2)} · ${ok ? 'PASS' : 'FAIL'}`,
);
console.log(
  `  baseline (--concurrency 1) wall ${(med(base.map((b) => b.wallMs)) / 1000).toFixed(2)} s; subject CPU ${med(subj.map((s) => s.cpuS)).toFixed(2)} s; load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')}`,
);
console.log(
  JSON.stringify({
    baseline: base.map((b) => ({ wallMs: Math.round(b.wallMs), cpuS: b.cpuS, runMs: b.runMs.map(Math.round) })),
    subject: subj.map((s) => ({ wallMs: Math.round(s.wallMs), cpuS: s.cpuS })),
  }),
);
process.exitCode = ok ? 0 : 1;
