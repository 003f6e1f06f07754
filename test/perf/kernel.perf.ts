/**
 * Kernel round trip for `1+1` (goal: median ≤ 5 ms), against a baseline measured in the same run:
 * a raw newline echo through stdin/stdout of the same interpreter (the floor for any stdio protocol).
 * Also reports start-up time, with and without the bubblewrap sandbox.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { PythonKernel, findBubblewrap } from '../../src/core/kernel/index.ts';
import { findPython } from '../../src/core/env/doctor.ts';
import { verdict } from './verdict.ts';

const N = 300;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)]!;

async function echoBaseline(python: string): Promise<number[]> {
  const child = spawn(
    python,
    ['-u', '-c', 'import sys\nfor line in sys.stdin:\n    sys.stdout.write(line)\n    sys.stdout.flush()'],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const rl = createInterface({ input: child.stdout });
  const it = rl[Symbol.asyncIterator]();
  const times: number[] = [];
  for (let i = 0; i < N + 20; i++) {
    const t0 = performance.now();
    child.stdin.write(JSON.stringify({ op: 'echo', id: i, code: '1+1' }) + '\n');
    await it.next();
    if (i >= 20) times.push(performance.now() - t0);
  }
  child.kill();
  return times;
}

async function kernelRoundTrips(
  python: string,
  sandbox: 'off' | 'bubblewrap',
  cwd: string,
): Promise<{ start: number; times: number[] }> {
  const t0 = performance.now();
  const k = await PythonKernel.start({ python, cwd, sandbox, readOnlyPaths: [], writablePaths: [cwd] });
  const start = performance.now() - t0;
  const times: number[] = [];
  try {
    for (let i = 0; i < N + 20; i++) {
      const t1 = performance.now();
      const r = await k.execute('1+1');
      const dt = performance.now() - t1;
      if (r.result !== '2') throw new Error(`unexpected result ${JSON.stringify(r)}`);
      if (i >= 20) times.push(dt);
    }
  } finally {
    await k.close();
  }
  return { start, times };
}

const python = (await findPython()).path;
const cwd = mkdtempSync(join(tmpdir(), 'loupe-kperf-'));
try {
  const base = await echoBaseline(python);
  const off = await kernelRoundTrips(python, 'off', cwd);
  const fmt = (x: number) => x.toFixed(3);
  console.log(`kernel.perf: ${N} round trips each, python ${python}`);
  console.log(`  baseline raw stdio echo        median ${fmt(median(base))} ms  p95 ${fmt(p95(base))} ms`);
  verdict(
    `  kernel 1+1 round trip (sandbox off; p95 ${fmt(p95(off.times))} ms, start ${off.start.toFixed(0)} ms)`,
    '≤ 5 ms median',
    `${fmt(median(off.times))} ms`,
    `raw stdio echo ${fmt(median(base))} ms`,
    median(off.times) / median(base),
    median(off.times) <= 5,
  );
  if (findBubblewrap()) {
    const bw = await kernelRoundTrips(python, 'bubblewrap', cwd);
    verdict(
      `  kernel 1+1 round trip (bubblewrap; p95 ${fmt(p95(bw.times))} ms, start ${bw.start.toFixed(0)} ms)`,
      '≤ 5 ms median',
      `${fmt(median(bw.times))} ms`,
      `raw stdio echo ${fmt(median(base))} ms`,
      median(bw.times) / median(base),
      median(bw.times) <= 5,
    );
  } else {
    console.log('  bubblewrap not installed: sandboxed round trip not measured');
  }
} finally {
  rmSync(cwd, { recursive: true, force: true });
}
