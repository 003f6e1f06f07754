/**
 * Issue 23 "no process outlives its work": once `PythonKernel.close()` has resolved, nothing of the kernel keeps
 * the host's event loop alive (no timer, no pipe, no child process handle) and its process has exited, so a CLI
 * process that used a kernel ends right after its work. Before the fix a 2 s timer that was never cleared kept
 * every such process alive 2 s longer. Checked on the mechanism in a fresh Node process (close.child.ts), with a
 * real /usr/bin/python3 kernel, idle and while a cell runs, unsandboxed and in bubblewrap.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { findBubblewrap } from '../../../../src/core/kernel/index.ts';

const here = dirname(fileURLToPath(import.meta.url));

interface Report {
  result: string;
  pid: number;
  before: string[];
  resources: string[];
  pidAlive: boolean;
  busy?: { status: string; restarted?: boolean; stderr: string; pidAfter: number };
  busyPidAlive: boolean;
}

/**
 * Runs the child to its natural end. A child still running 30 s after it started (its work takes ~1 s) is killed
 * with its process group and the test fails: something kept it alive for good (e.g. a kernel restarted after
 * close()).
 */
function runChild(sandbox: string, mode: string): Promise<{ report: Report; code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const c = spawn(
      process.execPath,
      ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', join(here, 'close.child.ts'), sandbox, mode],
      { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    let out = '';
    let err = '';
    let hung = false;
    const deadline = setTimeout(() => {
      hung = true;
      try {
        process.kill(-c.pid!, 'SIGKILL');
      } catch {
        c.kill('SIGKILL');
      }
    }, 30_000);
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('error', reject);
    c.on('close', (code) => {
      clearTimeout(deadline);
      if (hung) {
        return reject(
          new Error(`the child process did not exit within 30 s (report: ${out.trim() || 'none'}):\n${err}`),
        );
      }
      try {
        resolve({ report: JSON.parse(out.trim().split('\n').pop() ?? '') as Report, code, stderr: err });
      } catch {
        reject(new Error(`child printed no report (exit ${code}):\n${out}\n${err}`));
      }
    });
  });
}

function assertNothingLeft(r: Report): void {
  // 'Timeout' was the 2 s timer of close(); PipeWrap / ProcessWrap would be the kernel's pipes and process handle.
  const left = [...r.resources];
  for (const x of r.before) if (left.includes(x)) left.splice(left.indexOf(x), 1);
  assert.deepEqual(
    left,
    [],
    `resources keeping the loop alive after close(), beyond those held before the kernel started (${r.before.join(', ') || 'none'}): ${r.resources.join(', ')}`,
  );
  assert.equal(r.pidAlive, false, `kernel process ${r.pid} still exists after close()`);
}

for (const sandbox of ['off', 'bubblewrap'] as const) {
  describe(
    `core/kernel close() leaves nothing behind (sandbox ${sandbox})`,
    { skip: sandbox === 'bubblewrap' && !findBubblewrap() ? 'bwrap not installed' : false },
    () => {
      it(
        'after a cell: no timer, pipe or process handle is left, the kernel process is gone, the host exits',
        { timeout: 60_000 },
        async () => {
          const { report, code, stderr } = await runChild(sandbox, 'idle');
          assert.equal(code, 0, stderr);
          assert.equal(report.result, '2');
          assertNothingLeft(report);
        },
      );

      it(
        'while a cell runs: the cell comes back crashed, no kernel is restarted, nothing is left',
        { timeout: 60_000 },
        async () => {
          const { report, code, stderr } = await runChild(sandbox, 'busy');
          assert.equal(code, 0, stderr);
          assertNothingLeft(report);
          assert.equal(report.busy?.status, 'crashed');
          assert.match(report.busy!.stderr, /closed while this cell was running/);
          assert.equal(report.busy!.pidAfter, report.pid, 'a new kernel process was started after close()');
          assert.equal(report.busyPidAlive, false);
        },
      );
    },
  );
}
