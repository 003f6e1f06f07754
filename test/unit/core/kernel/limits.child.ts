/**
 * Child process of limits.test.ts: starts a sandboxed kernel, runs one cell that leaves a spinning thread and a
 * sleeping child process behind (the kernel is then frozen), prints one JSON line { pid, cgroup, procs } and waits to be
 * killed (at most 60 s). The test SIGKILLs this process: nothing may be left of the kernel, frozen or not.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PythonKernel } from '../../../../src/core/kernel/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'loupe-kernel-crash-'));
const k = await PythonKernel.start({
  python: '/usr/bin/python3',
  cwd: dir,
  sandbox: 'bubblewrap',
  readOnlyPaths: [],
  writablePaths: [dir],
});
await k.execute(
  'import threading, subprocess\nthreading.Thread(target=lambda: [0 for _ in iter(int, 1)], daemon=True).start()\n1',
);
process.stdout.write(JSON.stringify({ pid: k.info.pid, cgroup: k.info.limits.cgroup }) + '\n');
setTimeout(() => process.exit(0), 60_000);
