/**
 * Per-file size limit of the kernel (option maxFileSizeMb → RLIMIT_FSIZE, SIGXFSZ ignored): agent code
 * writing past it into the run folder gets OSError "File too large" and the kernel survives with its
 * state; a child process writing past it cannot grow the file either. Limit 1 MiB to stay fast.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PythonKernel, findBubblewrap } from '../../../../src/core/kernel/index.ts';

const PY = '/usr/bin/python3';
const MIB = 1024 * 1024;

describe(
  'core/kernel per-file size limit (sandbox)',
  { skip: findBubblewrap() ? false : 'bwrap not installed' },
  () => {
    let root: string;
    let run: string;
    let k: PythonKernel;
    before(async () => {
      root = mkdtempSync(join(tmpdir(), 'loupe-fsize-'));
      run = join(root, 'run');
      mkdirSync(run);
      k = await PythonKernel.start({
        python: PY,
        cwd: run,
        sandbox: 'bubblewrap',
        readOnlyPaths: [],
        writablePaths: [run],
        maxFileSizeMb: 1,
      });
    });
    after(async () => {
      await k?.close();
      rmSync(root, { recursive: true, force: true });
    });

    it('a write past the limit fails with File too large; the kernel keeps running with its state', async () => {
      const pid = k.info.pid;
      const r0 = await k.execute('kept = 7\nopen("small.bin", "wb").write(b"x" * (512 * 1024))');
      assert.equal(r0.status, 'ok', JSON.stringify(r0.error));
      assert.equal(r0.result, String(512 * 1024));
      const r = await k.execute(
        'with open("big.bin", "wb") as f:\n    for _ in range(4):\n        f.write(b"y" * (1024 * 1024))\n        f.flush()',
      );
      assert.equal(r.status, 'error');
      assert.equal(r.restarted, undefined);
      assert.equal(r.error?.ename, 'OSError');
      assert.match(r.error?.evalue ?? '', /File too large/);
      assert.match(r.error?.evalue ?? '', /limited to 1 MiB/);
      assert.ok(statSync(join(run, 'big.bin')).size <= MIB, `big.bin is ${statSync(join(run, 'big.bin')).size} bytes`);
      const after = await k.execute('kept * 6');
      assert.equal(after.status, 'ok');
      assert.equal(after.result, '42');
      assert.equal(k.info.pid, pid);
    });

    it('a child process writing past the limit cannot grow the file; the kernel survives', async () => {
      const r = await k.execute(
        'import subprocess\nsubprocess.run(["/bin/sh", "-c", "head -c 3000000 /dev/zero > child.bin"]).returncode',
      );
      assert.equal(r.status, 'ok', JSON.stringify(r.error));
      assert.notEqual(r.result, '0');
      assert.ok(
        statSync(join(run, 'child.bin')).size <= MIB,
        `child.bin is ${statSync(join(run, 'child.bin')).size} bytes`,
      );
      const again = await k.execute('kept');
      assert.equal(again.result, '7');
    });
  },
);
