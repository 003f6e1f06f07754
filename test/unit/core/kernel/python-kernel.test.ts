import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PythonKernel, driverPath, LONGTA_IMPORT_ALLOWLIST } from '../../../../src/core/kernel/index.ts';
import { LoupeInputError } from '../../../../src/core/util/errors.ts';

const PY = '/usr/bin/python3';

describe('core/kernel/python-kernel (sandbox off)', () => {
  let dir: string;
  let k: PythonKernel;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'loupe-kernel-'));
    writeFileSync(join(dir, 'tiny.csv'), 'a,b\n1,2\n3,4\n');
    k = await PythonKernel.start({
      python: PY,
      cwd: dir,
      sandbox: 'off',
      readOnlyPaths: [],
      writablePaths: [],
      preamble: 'PRE = 41 + 1',
    });
  });
  after(async () => {
    await k.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finds its driver script from source', () => {
    assert.match(driverPath(), /driver\.py$/);
    assert.ok(existsSync(driverPath()));
  });

  it('evaluates the final expression and keeps state between cells (preamble ran)', async () => {
    assert.equal(k.info.sandbox, 'off');
    assert.ok(k.info.pid > 0);
    const r1 = await k.execute('x = PRE\nx * 2');
    assert.equal(r1.status, 'ok');
    assert.equal(r1.result, '84');
    const r2 = await k.execute('x + 1');
    assert.equal(r2.result, '43');
    const r3 = await k.execute('y = 5'); // assignment: no value
    assert.equal(r3.result, undefined);
    const r4 = await k.execute('None');
    assert.equal(r4.result, undefined);
  });

  it('captures stdout and stderr separately, and works in the workspace cwd', async () => {
    const r = await k.execute(
      'import sys\nprint("out", 1)\nsys.stdout.buffer.write("é\\n".encode())\nprint("err", file=sys.stderr)\nopen("tiny.csv").read().count("\\n")',
    );
    assert.equal(r.status, 'ok');
    assert.equal(r.stdout, 'out 1\né\n');
    assert.equal(r.stderr, 'err\n');
    assert.equal(r.result, '3');
  });

  it('returns DataFrame final expressions as html and text tables', async () => {
    const r = await k.execute('import pandas as pd\ndf = pd.read_csv("tiny.csv")\ndf');
    assert.equal(r.status, 'ok');
    assert.equal(r.tables?.length, 1);
    assert.match(r.tables![0]!.html, /<table[\s\S]*<td>3<\/td>/);
    assert.match(r.tables![0]!.text, /a\s+b\n0\s+1\s+2\n1\s+3\s+4/);
  });

  it('reports exceptions with ename, evalue and a traceback naming the cell line', async () => {
    const r = await k.execute('a = 1\nb = [][3]');
    assert.equal(r.status, 'error');
    assert.equal(r.error?.ename, 'IndexError');
    assert.equal(r.error?.evalue, 'list index out of range');
    assert.ok(
      r.error!.traceback.some((l) => l.includes('line 2')),
      r.error!.traceback.join('\n'),
    );
    assert.ok(!r.error!.traceback.some((l) => l.includes('driver.py')), 'driver frames hidden');
    const syn = await k.execute('def (:');
    assert.equal(syn.error?.ename, 'SyntaxError');
    const exit = await k.execute('raise SystemExit(3)');
    assert.equal(exit.status, 'error');
    assert.equal((await k.execute('1+1')).result, '2', 'SystemExit does not end the kernel');
  });

  it('renders open matplotlib figures as PNG and closes them', async () => {
    const r = await k.execute(
      'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.figure()\nplt.bar([1], [2])\nplt.show()',
    );
    assert.equal(r.status, 'ok', r.stderr);
    assert.equal(r.figures?.length, 2);
    const png = Buffer.from(r.figures![0]!.png, 'base64');
    assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47]); // "PNG"
    assert.equal((await k.execute('len(plt.get_fignums())')).result, '0');
  });

  it('stdin is empty and C-level writes to fd 1 do not corrupt the protocol', async () => {
    const r = await k.execute(
      'import os, subprocess\nos.write(1, b"raw fd1\\n")\nsubprocess.run(["echo", "child"])\ntry:\n    input()\nexcept EOFError:\n    print("eof")\n7',
    );
    assert.equal(r.status, 'ok');
    assert.equal(r.result, '7');
    assert.equal(r.stdout, 'eof\nraw fd1\nchild\n');
    assert.equal((await k.execute('print("next")')).stdout, 'next\n', 'fd-level buffer is reset per cell');
  });

  it('caps huge output keeping head and tail', async () => {
    const r = await k.execute('for i in range(300000):\n    print("line", i)');
    assert.equal(r.status, 'ok');
    assert.ok(r.stdout.length < 1_100_000);
    assert.match(r.stdout, /^line 0\n/);
    assert.match(r.stdout, /characters dropped by the kernel/);
    assert.match(r.stdout, /line 299999\n$/);
  });

  it('interrupts a cell at the wall timeout and keeps state', async () => {
    await k.execute('keep = "still here"');
    const r = await k.execute('import time\ntime.sleep(30)', { timeoutMs: 300 });
    assert.equal(r.status, 'timeout');
    assert.equal(r.error?.ename, 'KeyboardInterrupt');
    assert.match(r.stderr, /time limit/);
    assert.notEqual(r.restarted, true);
    assert.equal((await k.execute('keep')).result, "'still here'");
  });

  it('interrupt() stops a running busy loop', async () => {
    const p = k.execute('n = 0\nwhile True:\n    n += 1');
    setTimeout(() => k.interrupt(), 200);
    const r = await p;
    assert.equal(r.status, 'error');
    assert.equal(r.error?.ename, 'KeyboardInterrupt');
    assert.equal((await k.execute('n > 0')).result, 'True');
  });

  it('queues concurrent execute calls in order', async () => {
    const rs = await Promise.all([k.execute('q = 1'), k.execute('q += 1\nq'), k.execute('q * 10')]);
    assert.deepEqual(
      rs.map((r) => r.result),
      [undefined, '2', '20'],
    );
  });

  it('restarts after a crash, says the state was lost, and re-runs the preamble', async () => {
    await k.execute('lost = 1');
    const r = await k.execute('import os, signal\nos.kill(os.getpid(), signal.SIGKILL)');
    assert.equal(r.status, 'crashed');
    assert.equal(r.restarted, true);
    assert.match(r.stderr, /state|lost/i);
    assert.equal((await k.execute('"lost" in globals(), PRE')).result, '(False, 42)');
  });

  it('restart() gives a fresh process with the preamble applied', async () => {
    await k.execute('z = 1');
    const pid = k.info.pid;
    await k.restart();
    assert.notEqual(k.info.pid, pid);
    assert.equal((await k.execute('"z" in globals(), PRE')).result, '(False, 42)');
  });

  it('restart() during a running cell ends that cell as restarted, once', async () => {
    await k.execute('mark = 1');
    const running = k.execute('import time\ntime.sleep(30)');
    await new Promise((r) => setTimeout(r, 150));
    const pid = k.info.pid;
    await k.restart();
    const r = await running;
    assert.equal(r.status, 'crashed');
    assert.equal(r.restarted, true);
    assert.match(r.stderr, /restarted on request[\s\S]*lost/);
    assert.notEqual(k.info.pid, pid);
    assert.equal((await k.execute('"mark" in globals(), PRE')).result, '(False, 42)');
  });

  it('does not leak the host environment (API keys) into the kernel', async () => {
    const r = await k.execute('import os\nsorted(k for k in os.environ if "KEY" in k or "TOKEN" in k)');
    assert.equal(r.result, '[]');
  });
});

describe('core/kernel/python-kernel limits', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'loupe-kernel-lim-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('enforces the import allowlist on agent code only (LongTA list)', async () => {
    const k = await PythonKernel.start({
      python: PY,
      cwd: dir,
      sandbox: 'off',
      readOnlyPaths: [],
      writablePaths: [],
      importAllowlist: LONGTA_IMPORT_ALLOWLIST,
    });
    try {
      const ok = await k.execute(
        'import pandas as pd, numpy as np, json, os.path\nfrom scipy import stats\nimport statsmodels.api as sm\npd.__name__',
      );
      assert.equal(ok.status, 'ok', ok.error?.traceback.join('\n'));
      for (const bad of [
        'import subprocess',
        'import socket',
        'from urllib import request',
        'import importlib\nimportlib.import_module("ctypes")',
        '__import__("shutil")',
        'exec("import subprocess")',
        'eval("__import__(\\"ctypes\\")")',
        'def f():\n    import pickle\nf()',
      ]) {
        const r = await k.execute(bad);
        assert.equal(r.status, 'error', bad);
        assert.equal(r.error?.ename, 'ImportError', bad);
        assert.match(r.error!.evalue, /not allowed/, bad);
        assert.ok(
          !r.error!.traceback.some((l) => l.includes('driver.py')),
          `driver frames hidden: ${r.error!.traceback.join('\n')}`,
        );
      }
    } finally {
      await k.close();
    }
  });

  it('a MemoryError under the address-space limit restarts the kernel', async () => {
    const k = await PythonKernel.start({
      python: PY,
      cwd: dir,
      sandbox: 'off',
      readOnlyPaths: [],
      writablePaths: [],
      memoryLimitMb: 300,
    });
    try {
      await k.execute('before = 1');
      const r = await k.execute('x = bytearray(600 * 1024 * 1024)');
      assert.equal(r.status, 'error');
      assert.equal(r.error?.ename, 'MemoryError');
      assert.equal(r.restarted, true);
      assert.match(r.stderr, /out of memory[\s\S]*lost/);
      assert.equal((await k.execute('"before" in globals()')).result, 'False');
    } finally {
      await k.close();
    }
  });

  it('stops a cell at its CPU-time limit', async () => {
    const k = await PythonKernel.start({
      python: PY,
      cwd: dir,
      sandbox: 'off',
      readOnlyPaths: [],
      writablePaths: [],
      cellCpuLimitMs: 1000,
    });
    try {
      const r = await k.execute('while True:\n    pass', { timeoutMs: 20_000 });
      assert.equal(r.status, 'timeout');
      assert.equal(r.error?.ename, 'CpuTimeExceeded');
      assert.ok(r.durationMs < 15_000);
      assert.equal((await k.execute('2+2')).result, '4', 'state kept; next cell gets a fresh CPU budget');
    } finally {
      await k.close();
    }
  });

  it('kills and restarts a cell that ignores the interrupt', async () => {
    const k = await PythonKernel.start({
      python: PY,
      cwd: dir,
      sandbox: 'off',
      readOnlyPaths: [],
      writablePaths: [],
      interruptGraceMs: 300,
    });
    try {
      const r = await k.execute('import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(30)', {
        timeoutMs: 300,
      });
      assert.equal(r.status, 'timeout');
      assert.equal(r.restarted, true);
      assert.match(r.stderr, /restarted[\s\S]*lost/);
      assert.equal((await k.execute('1+1')).result, '2');
    } finally {
      await k.close();
    }
  });

  it('a failing preamble fails start() with its traceback; bad cwd and closed kernels are clear errors', async () => {
    await assert.rejects(
      PythonKernel.start({
        python: PY,
        cwd: dir,
        sandbox: 'off',
        readOnlyPaths: [],
        writablePaths: [],
        preamble: 'import pandas as pd\npd.read_csv("missing.csv")',
      }),
      /preamble failed[\s\S]*missing\.csv/,
    );
    await assert.rejects(
      PythonKernel.start({ python: PY, cwd: join(dir, 'nope'), sandbox: 'off', readOnlyPaths: [], writablePaths: [] }),
      LoupeInputError,
    );
    const k = await PythonKernel.start({ python: PY, cwd: dir, sandbox: 'off', readOnlyPaths: [], writablePaths: [] });
    await k.close();
    await assert.rejects(k.execute('1'), /closed/);
  });

  it('when bwrap cannot create the sandbox, start() shows its error and the opt-out', async () => {
    const fake = join(dir, 'fake-bwrap');
    writeFileSync(fake, '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n', {
      mode: 0o755,
    });
    await assert.rejects(
      PythonKernel.start({
        python: PY,
        cwd: dir,
        sandbox: 'bubblewrap',
        readOnlyPaths: [],
        writablePaths: [],
        bubblewrapPath: fake,
      }),
      (e: Error) =>
        /exited with code 1/.test(e.message) &&
        /No permissions to create new namespace/.test(e.message) &&
        /"loupe\.sandbox": "off"/.test(e.message),
    );
  });

  it('without bubblewrap, start() tells the user to install it or opt out', async () => {
    await assert.rejects(
      PythonKernel.start({
        python: PY,
        cwd: dir,
        sandbox: 'bubblewrap',
        readOnlyPaths: [],
        writablePaths: [],
        bubblewrapPath: '/nonexistent/bwrap',
      }),
      (e: Error) =>
        e instanceof LoupeInputError && /install/i.test(e.message) && /"loupe\.sandbox": "off"/.test(e.message),
    );
  });
});
