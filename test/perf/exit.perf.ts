/**
 * "No process outlives its work" (issue 23): the shipped CLI (dist/cli.js, built first with `node esbuild.js`) runs
 * a real LongDA block (NHANES Data Brief 508, $LOUPE_SHARED) with a scripted OpenAI-compatible model, offline:
 *  - subject: the model runs one Python cell (the run's kernel starts: bubblewrap when installed, else unsandboxed),
 *    then calls final_answer;
 *  - baseline: the same command and the same number of steps, but the cell is a `notes` call and no kernel exists:
 *    runs with a python tool start their kernel at run start, so the baseline's `--python` names no interpreter.
 * The work ends when the CLI prints its `--json` line (the kernel is closed and the run recorded by then); measured
 * is the time from that line reaching this process to the CLI process's exit. Goal: the subject outlives its work
 * by ≤ 100 ms (before the fix a kernel's 2 s timer kept it alive 2 s). Baseline and subject processes alternate,
 * 5 of each, the first run counted; medians are reported, with the subject's excess over the baseline.
 * Usage: node test/perf/exit.perf.ts   (exit 1 on a FAIL; LOUPE_PERF_NO_BUILD=1 uses dist/ as it is)
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBubblewrap } from '../../src/core/kernel/index.ts';
import { openStore, sqliteHandleOf } from '../../src/core/store/run-store.ts';
import { repoRoot, sharedDir } from '../helpers/shared.ts';
import { call, startScriptedLlm, type Turn } from '../helpers/scripted-llm.ts';
import { warmLongdaDocs } from './warm-docs.ts';

const GOAL_MS = 100;
const ROUNDS = 5;
const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const ROOT = join(sharedDir(), 'data', 'longda', 'benchmark');
const CLI = join(repoRoot, 'dist', 'cli.js');

if (!existsSync(join(ROOT, 'benchmark.csv'))) {
  console.log(`exit.perf: SKIP — LongDA data not found at ${ROOT} (set LOUPE_SHARED)`);
  process.exit(0);
}
if (process.env.LOUPE_PERF_NO_BUILD !== '1') {
  const b = spawnSync(process.execPath, ['esbuild.js'], { cwd: repoRoot, encoding: 'utf8' });
  if (b.status !== 0) throw new Error(`build failed:\n${b.stdout}\n${b.stderr}`);
}
if (!existsSync(CLI)) throw new Error(`${CLI} not found: build first (node esbuild.js)`);

const sandbox = findBubblewrap() ? 'bubblewrap' : 'off';
warmLongdaDocs(CLI, ROOT); // a complete docs cache: this part measures runs, not first-ever indexing (see warm-docs.ts)
const finish: Turn = { content: 'Done.', toolCalls: [call('final_answer', { summary: 'perf' })] };
const subjectLlm = await startScriptedLlm({
  script: [{ toolCalls: [call('python', { code: 'print(1 + 1)' })] }, finish],
});
const baselineLlm = await startScriptedLlm({
  script: [{ toolCalls: [call('notes', { action: 'add', content: 'perf' })] }, finish],
});

interface Sample {
  tailMs: number;
  totalMs: number;
  cells: number;
}

/** One CLI process, start to exit: when its --json line arrived and when it exited. */
function sample(mode: 'subject' | 'baseline', k: number): Promise<Sample> {
  const dir = mkdtempSync(join(tmpdir(), `loupe-exit-perf-${mode}-${k}-`));
  const store = join(dir, 'runs.sqlite');
  const llm = mode === 'subject' ? subjectLlm : baselineLlm;
  const args = [
    CLI,
    'run',
    '--suite',
    'longda',
    '--root',
    ROOT,
    '--block',
    BLOCK,
    '--agent',
    'llm',
    '--model',
    'scripted',
    '--base-url',
    llm.baseUrl,
    '--api-key-env',
    'LOUPE_PERF_KEY',
    '--store',
    store,
    '--sandbox',
    sandbox,
    '--max-steps',
    '5',
    '--json',
    // runs with a python tool start their kernel at run start; the baseline's cannot start (no such interpreter)
    ...(mode === 'baseline' ? ['--python', join(dir, 'no-python')] : []),
  ];
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const c = spawn(process.execPath, args, {
      cwd: dir,
      env: { ...process.env, LOUPE_PERF_KEY: 'perf', LOUPE_NO_KEYS: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let lineAt: number | undefined;
    c.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (lineAt === undefined && /^\{"runId".*\n/m.test(out)) lineAt = performance.now();
    });
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('error', reject);
    c.on('exit', (code) => {
      const exitAt = performance.now();
      try {
        if (code !== 0 || lineAt === undefined) throw new Error(`${mode} run failed (exit ${code}):\n${out}\n${err}`);
        const line = JSON.parse(out.trim().split('\n').pop()!) as { runId: string; status: string };
        if (line.status !== 'finished') throw new Error(`${mode} run ended ${line.status}:\n${err}`);
        const rs = openStore(store);
        const cells = (
          sqliteHandleOf(rs).prepare('SELECT COUNT(*) AS n FROM kernel_cells WHERE run_id = ?').get(line.runId) as {
            n: number;
          }
        ).n;
        rs.close();
        if ((mode === 'subject') !== cells > 0) throw new Error(`${mode} run recorded ${cells} kernel cells`);
        resolve({ tailMs: exitAt - lineAt, totalMs: exitAt - t0, cells });
      } catch (e) {
        reject(e as Error);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

const subject: Sample[] = [];
const baseline: Sample[] = [];
try {
  for (let k = 0; k < ROUNDS; k++) {
    baseline.push(await sample('baseline', k));
    subject.push(await sample('subject', k));
  }
} finally {
  await subjectLlm.close();
  await baselineLlm.close();
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = median(subject.map((s) => s.tailMs));
const baseMs = median(baseline.map((s) => s.tailMs));
const ok = ms <= GOAL_MS;
console.log(
  `CLI process outlives its work (loupe run, one Python cell, sandbox ${sandbox}: --json line → exit)\n  goal ≤ ${GOAL_MS} ms · measured ${ms.toFixed(1)} ms · baseline (same run, no kernel) ${baseMs.toFixed(1)} ms · excess over baseline ${(ms - baseMs).toFixed(1)} ms · ratio to goal ${(ms / GOAL_MS).toFixed(2)} · ${ok ? 'PASS' : 'FAIL'}`,
);
console.log(
  JSON.stringify({
    samples: {
      subject: subject.map((s) => ({ tailMs: +s.tailMs.toFixed(1), totalMs: +s.totalMs.toFixed(0) })),
      baseline: baseline.map((s) => ({ tailMs: +s.tailMs.toFixed(1), totalMs: +s.totalMs.toFixed(0) })),
    },
  }),
);
process.exitCode = ok ? 0 : 1;
