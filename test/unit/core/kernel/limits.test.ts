/**
 * Kernel limits for the kernel's whole life (issue 37), at the kernel level: the mechanism in force is reported
 * (cgroup freezer or SIGSTOP, aggregate or per-process memory), a thread a cell left gets no CPU between cells with
 * either mechanism, interrupt/restart/close work while the kernel is frozen, and no cgroup or process outlives the
 * kernel — not even when the host process is SIGKILLed while the kernel is frozen. The run-level attacks are in
 * test/unit/security/kernel-lifetime-limits.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { PythonKernel, describeKernelLimits, findBubblewrap } from '../../../../src/core/kernel/index.ts';
import { KernelCgroup } from '../../../../src/core/kernel/cgroup.ts';

const PY = '/usr/bin/python3';
const skip = !findBubblewrap() ? 'bubblewrap is not installed' : false;
const here = dirname(fileURLToPath(import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const alive = (p: number) => {
  try {
    process.kill(p, 0);
    return true;
  } catch {
    return false;
  }
};
/** Polls `cond` every 100 ms, at most `ms`. */
async function eventually(cond: () => boolean, ms = 10_000): Promise<boolean> {
  for (let t = 0; t < ms; t += 100) {
    if (cond()) return true;
    await sleep(100);
  }
  return cond();
}
const SPIN =
  'import threading, time\nthreading.Thread(target=lambda: [0 for _ in iter(int, 1)], daemon=True).start()\nt0 = time.process_time()\n1';

describe("core/kernel limits for the kernel's whole life (issue 37)", { skip }, () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'loupe-klim-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('without a cgroup: SIGSTOP between cells, RLIMIT_AS scaled so that processes × per-process ≤ the budget', async () => {
    const k = await PythonKernel.start({
      python: PY,
      cwd: dir,
      sandbox: 'bubblewrap',
      readOnlyPaths: [],
      writablePaths: [dir],
      memoryLimitMb: 2048,
      cgroups: 'off',
    });
    try {
      const l = k.info.limits;
      assert.equal(l.betweenCells, 'sigstop');
      assert.equal(l.cgroup, null);
      assert.equal(l.memory.aggregate, false);
      assert.ok(l.processes.max * l.memory.perProcessMb <= 2048, JSON.stringify(l));
      assert.equal(l.processes.max, 2);
      assert.match(describeKernelLimits(l), /per process/);
      assert.equal((await k.execute(SPIN)).result, '1');
      await sleep(1500);
      const idle = Number((await k.execute('time.process_time() - t0')).result);
      assert.ok(idle < 0.3, `a spinning thread used ${idle} s of CPU between cells`);
      // the limit is real: a second child process is refused or the sandbox is killed
      const r = await k.execute(
        'import os, time\npids = []\nfor i in range(4):\n    try:\n        pids.append(os.spawnv(os.P_NOWAIT, "/usr/bin/sleep", ["sleep", "2"]))\n    except OSError as e:\n        print("refused", e.errno)\ntime.sleep(1)\nlen(pids)',
      );
      assert.ok(r.status === 'crashed' || /refused/.test(r.stdout) || Number(r.result) < 4, JSON.stringify(r));
    } finally {
      await k.close();
    }
  });

  it('with a cgroup: frozen between cells; interrupt, restart and close work while frozen; nothing is left after close', async (t) => {
    const k = await PythonKernel.start({
      python: PY,
      cwd: dir,
      sandbox: 'bubblewrap',
      readOnlyPaths: [],
      writablePaths: [dir],
      memoryLimitMb: 1024,
    });
    const cg = k.info.limits.cgroup;
    if (!cg) {
      await k.close();
      t.skip('no cgroup can be made here (not root, no delegated cgroup v2 subtree)');
      return;
    }
    const l = k.info.limits;
    assert.equal(l.betweenCells, 'cgroup-freezer');
    assert.equal(l.memory.aggregate, true);
    assert.match(describeKernelLimits(l), /all processes together/);
    const freezer = cg.version === 1 ? cg.dirs.find((d) => d.includes('/freezer/')) : cg.dirs[0];
    assert.ok(freezer);
    const frozen = () =>
      cg.version === 1
        ? readFileSync(join(freezer, 'freezer.state'), 'utf8').trim() === 'FROZEN'
        : /^frozen 1$/m.test(readFileSync(join(freezer, 'cgroup.events'), 'utf8'));
    assert.equal((await k.execute(SPIN)).result, '1');
    assert.ok(await eventually(frozen, 2000), 'not frozen after the cell');
    k.interrupt(); // idle: no-op, must not hang anything
    await sleep(1000);
    const idle = Number((await k.execute('time.process_time() - t0')).result);
    assert.ok(idle < 0.3, `a spinning thread used ${idle} s of CPU between cells`);
    // restart while frozen: the old processes die (a frozen v1 task dies only once thawed), a new cgroup is made
    const oldPid = k.info.pid;
    await k.restart();
    assert.ok(await eventually(() => !alive(oldPid), 5000), 'the frozen kernel survived a restart');
    assert.ok(
      await eventually(() => cg.dirs.every((d) => !existsSync(d)), 10_000),
      `cgroup left after restart: ${cg.dirs.join(', ')}`,
    );
    const cg2 = k.info.limits.cgroup!;
    assert.notDeepEqual(cg2.dirs, cg.dirs);
    assert.equal((await k.execute('2+2')).result, '4');
    // a timeout's interrupt still works: the cell is thawed while it runs
    const r = await k.execute('import time\ntime.sleep(30)', { timeoutMs: 500 });
    assert.equal(r.status, 'timeout');
    assert.equal((await k.execute('3+3')).result, '6');
    const pid = k.info.pid;
    await k.close();
    assert.ok(await eventually(() => !alive(pid), 5000), 'the frozen kernel survived close()');
    assert.ok(
      await eventually(() => cg2.dirs.every((d) => !existsSync(d)), 10_000),
      `cgroup left after close: ${cg2.dirs.join(', ')}`,
    );
  });

  it('cgroup v2: a spinning process gets no CPU while frozen; release kills it and removes the folder', async (t) => {
    // /sys/fs/cgroup itself when it is v2; on a hybrid v1 machine its `unified` mount (no controllers, but a freezer)
    const root = existsSync('/sys/fs/cgroup/cgroup.controllers') ? '/sys/fs/cgroup' : '/sys/fs/cgroup/unified';
    const cg = existsSync(join(root, 'cgroup.procs'))
      ? KernelCgroup.create('v2test', { memoryBytes: 200 * 1048576, pids: 10 }, root)
      : undefined;
    if (!cg) {
      t.skip('no writable cgroup v2 mount here');
      return;
    }
    assert.equal(cg.info.version, 2);
    assert.equal(cg.info.freezer, true);
    const [cmd, args] = cg.wrap(PY, ['-c', 'import time\nt = time.monotonic()\nwhile time.monotonic() - t < 30: pass']);
    const p = spawn(cmd, args, { stdio: 'ignore' });
    try {
      assert.ok(await eventually(() => cg.procs().includes(p.pid!), 5000), 'the process is not in the cgroup');
      const ticks = () => Number(readFileSync(`/proc/${p.pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[11]);
      assert.ok(cg.freeze());
      assert.ok(await eventually(() => cg.isFrozen(), 2000), 'not frozen');
      const u0 = ticks();
      await sleep(1000);
      assert.equal(ticks() - u0, 0, 'CPU used while frozen');
      cg.release();
      assert.ok(
        await eventually(() => p.exitCode !== null || p.signalCode !== null, 5000),
        'the frozen process survived release()',
      );
      assert.ok(await eventually(() => !existsSync(cg.info.dirs[0]!), 10_000), 'cgroup folder left');
    } finally {
      p.kill('SIGKILL');
    }
  });

  it('the host process SIGKILLed while its kernel is frozen: the kernel dies and its cgroup is removed', async (t) => {
    const child = spawn(
      process.execPath,
      ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', join(here, 'limits.child.ts')],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.setEncoding('utf8');
    const line = await new Promise<string>((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`child printed nothing in 60 s: ${out}`)), 60_000);
      child.stdout.on('data', (c: string) => {
        out += c;
        if (out.includes('\n')) {
          clearTimeout(timer);
          res(out.split('\n')[0]!);
        }
      });
      child.on('exit', (code) => rej(new Error(`child exited ${code}: ${out}`)));
    });
    const info = JSON.parse(line) as { pid: number; cgroup: { version: number; dirs: string[] } | null };
    if (!info.cgroup) {
      child.kill('SIGKILL');
      t.skip('no cgroup can be made here');
      return;
    }
    const procsFile = join(info.cgroup.dirs[0]!, 'cgroup.procs');
    const procs = readFileSync(procsFile, 'utf8').split('\n').filter(Boolean).map(Number);
    assert.ok(procs.length >= 2, `kernel processes in the cgroup: ${procs}`);
    child.kill('SIGKILL');
    assert.ok(
      await eventually(() => procs.every((p) => !alive(p)), 10_000),
      `kernel processes left: ${procs.filter(alive)}`,
    );
    assert.ok(
      await eventually(() => info.cgroup!.dirs.every((d) => !existsSync(d)), 10_000),
      `cgroup left: ${info.cgroup.dirs.filter((d) => existsSync(d))}`,
    );
  });
});
