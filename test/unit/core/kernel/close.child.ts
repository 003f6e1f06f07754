/**
 * Child process of close.test.ts (issue 23 "no process outlives its work"): starts a real Python kernel, runs one
 * cell, closes the kernel, and reports what is left keeping this process alive. Prints one JSON line on stdout
 * after close() resolved: { result, pid, before, resources, pidAlive, ... } (`before`: the resources held before the
 * kernel started); then does nothing, so the process ends as
 * soon as nothing is left.
 *   node close.child.ts <off|bubblewrap> <idle|busy>
 * idle: close() after the cell returned; busy: close() while a cell sleeps (the cell must come back crashed,
 * without a restart: no process started after close()).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PythonKernel, type SandboxMode } from '../../../../src/core/kernel/index.ts';

const sandbox = (process.argv[2] ?? 'off') as SandboxMode;
const mode = process.argv[3] ?? 'idle';
const dir = mkdtempSync(join(tmpdir(), 'loupe-kernel-close-'));
// What this process holds without a kernel: the baseline. Its own stdout and stderr are created first (a pipe each
// when the test runs it; Node's net.Socket#destroy touches process.stderr, so they would appear in the middle).
void process.stdout;
void process.stderr;
const before = process.getActiveResourcesInfo();
const k = await PythonKernel.start({
  python: '/usr/bin/python3',
  cwd: dir,
  sandbox,
  readOnlyPaths: [],
  writablePaths: sandbox === 'bubblewrap' ? [dir] : [],
});
const first = await k.execute('1 + 1');
const pid = k.info.pid;
let busy: { status: string; restarted?: boolean; stderr: string; pidAfter: number } | undefined;
if (mode === 'busy') {
  const running = k.execute('import time\ntime.sleep(30)');
  await new Promise((r) => setTimeout(r, 300));
  await k.close();
  const r = await running;
  busy = { status: r.status, stderr: r.stderr, pidAfter: k.info.pid, ...(r.restarted ? { restarted: true } : {}) };
} else {
  await k.close();
}
const resources = process.getActiveResourcesInfo();
const alive = (p: number) => {
  try {
    process.kill(p, 0);
    return true;
  } catch {
    return false;
  }
};
rmSync(dir, { recursive: true, force: true });
process.stdout.write(
  JSON.stringify({
    result: first.result,
    pid,
    before,
    resources,
    pidAlive: alive(pid),
    busy,
    busyPidAlive: busy ? alive(busy.pidAfter) : false,
  }) + '\n',
);
