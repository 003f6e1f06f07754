import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PythonKernel, bubblewrapArgs, findBubblewrap } from '../../../../src/core/kernel/index.ts';
import { sharedData } from '../../../helpers/shared.ts';

const PY = '/usr/bin/python3';

describe('core/kernel sandbox (bubblewrap)', { skip: findBubblewrap() ? false : 'bwrap not installed' }, () => {
  let root: string;
  let visible: string;
  let run: string;
  let nhanesData: string;
  let k: PythonKernel;
  let server: Server;
  let port = 0;
  let hits = 0;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'loupe-sbx-'));
    visible = join(root, 'block', 'data');
    run = join(root, 'run');
    mkdirSync(visible, { recursive: true });
    mkdirSync(run);
    writeFileSync(join(visible, 'visible.csv'), 'x\n1\n2\n');
    writeFileSync(join(root, 'block', 'answers.csv'), 'secret ground truth\n'); // hidden, next to the visible data
    writeFileSync(join(root, 'outside.txt'), 'host file\n');
    nhanesData = sharedData('longda', 'benchmark', 'NHANES', 'data');
    server = createServer((s) => {
      hits++;
      s.end('hello');
    });
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', () => res()));
    port = (server.address() as { port: number }).port;
    k = await PythonKernel.start({
      python: PY,
      cwd: run,
      sandbox: 'bubblewrap',
      readOnlyPaths: [visible, nhanesData],
      writablePaths: [run],
    });
  });
  after(async () => {
    await k?.close();
    server?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('runs pandas on the visible files read-only, in the run folder', async () => {
    assert.equal(k.info.sandbox, 'bubblewrap');
    const r = await k.execute(
      `import pandas as pd, os\nos.getcwd(), int(pd.read_csv(${JSON.stringify(join(visible, 'visible.csv'))}).x.sum())`,
    );
    assert.equal(r.status, 'ok', r.error?.traceback.join('\n'));
    assert.equal(r.result, `(${JSON.stringify(run).replace(/"/g, "'")}, 3)`);
    const x = await k.execute(
      `pd.read_sas(${JSON.stringify(join(nhanesData, 'Demographics', 'DEMO_L.xpt'))}).shape[0]`,
    );
    assert.equal(x.status, 'ok', x.error?.traceback.join('\n'));
    assert.ok(Number(x.result) > 10_000);
  });

  it('cannot read a hidden file next to the visible ones, nor the LongDA answers and publications', async () => {
    const longda = dirname(dirname(nhanesData)); // .../longda/benchmark
    for (const p of [
      join(root, 'block', 'answers.csv'),
      join(root, 'outside.txt'),
      join(longda, 'benchmark.csv'),
      join(dirname(longda), 'publications'),
    ]) {
      assert.ok(existsSync(p), `host has ${p}`);
      const r = await k.execute(`import os\nos.path.exists(${JSON.stringify(p)})`);
      assert.equal(r.result, 'False', p);
      const o = await k.execute(`open(${JSON.stringify(p)}).read()`);
      assert.equal(o.error?.ename, 'FileNotFoundError', p);
    }
  });

  it('sees only the mounted paths: no other /work content, no $HOME, a private /tmp', async () => {
    const marker = join(tmpdir(), `loupe-host-tmp-${process.pid}`);
    writeFileSync(marker, 'x');
    try {
      const r = await k.execute(
        `import os\nsorted(os.listdir("/")), os.path.exists(${JSON.stringify(marker)}), os.path.exists(${JSON.stringify(process.env.HOME ?? '/root')} + "/.bashrc"), sorted(os.listdir("/tmp"))`,
      );
      assert.equal(r.status, 'ok');
      assert.doesNotMatch(r.result!.split('], ')[0]!, /'root'|'farm'|'srv'|'var'|'home'/);
      assert.doesNotMatch(r.result!, /loupe-host-tmp/);
      assert.match(r.result!, /, False, False, \[/);
      // Walking up from the visible NHANES data shows nothing but the path to it.
      const up = await k.execute(
        `p = ${JSON.stringify(nhanesData)}\nout = []\nwhile p != "/":\n    p = os.path.dirname(p)\n    out.append(sorted(os.listdir(p)))\nout[:5]`,
      );
      assert.equal(up.result, "[['data'], ['NHANES'], ['benchmark'], ['longda'], ['data']]");
    } finally {
      rmSync(marker, { force: true });
    }
  });

  it('can write in the run folder only', async () => {
    const ok = await k.execute('open("out.txt", "w").write("from kernel")');
    assert.equal(ok.status, 'ok');
    assert.equal(readFileSync(join(run, 'out.txt'), 'utf8'), 'from kernel');
    // Read-only mounts refuse writes.
    for (const p of [join(visible, 'w.txt'), '/usr/w.txt', join(nhanesData, 'w.txt')]) {
      const r = await k.execute(`open(${JSON.stringify(p)}, "w").write("x")`);
      assert.equal(r.status, 'error', p);
      assert.match(r.error!.ename, /OSError/, p);
      assert.ok(!existsSync(p), p);
    }
    // Anything else is the sandbox's private tmpfs: the host never sees it.
    for (const p of [join(root, 'w.txt'), '/tmp/w.txt']) {
      await k.execute(`try:\n    open(${JSON.stringify(p)}, "w").write("x")\nexcept OSError:\n    pass`);
      assert.ok(!existsSync(p), p);
    }
  });

  it('cannot reach a server on the host 127.0.0.1 nor resolve host names', async () => {
    const r = await k.execute(
      `import socket\ntry:\n    socket.create_connection(("127.0.0.1", ${port}), timeout=2).recv(5)\n    res = "connected"\nexcept OSError as e:\n    res = type(e).__name__\nres`,
    );
    assert.notEqual(r.result, "'connected'");
    assert.equal(hits, 0, 'the host server saw no connection');
    const d = await k.execute(
      'try:\n    socket.getaddrinfo("example.com", 80)\n    res = "resolved"\nexcept OSError as e:\n    res = "gaierror"\nres',
    );
    assert.equal(d.result, "'gaierror'");
  });

  it('common library needs work inside: getpass, multiprocessing (/dev/shm), matplotlib to /tmp, numpy linear algebra', async () => {
    const r = await k.execute(
      'import getpass, multiprocessing as mp, numpy as np\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.savefig("/tmp/f.png")\nplt.close("all")\nwith mp.Pool(2) as p:\n    xs = p.map(abs, [-1, -2])\ngetpass.getuser(), xs, float(np.linalg.inv(np.eye(2)).sum()), os.path.getsize("/tmp/f.png") > 0',
    );
    assert.equal(r.status, 'ok', r.error?.traceback.join('\n'));
    assert.equal(r.result, "('loupe', [1, 2], 2.0, True)");
  });

  it('does not see host processes (own pid namespace)', async () => {
    const r = await k.execute('import os\nlen([p for p in os.listdir("/proc") if p.isdigit()]) < 10');
    assert.equal(r.result, 'True');
  });

  it('restarts inside the sandbox after a crash', async () => {
    const r = await k.execute('import os\nos._exit(3)');
    assert.equal(r.status, 'crashed');
    assert.equal(r.restarted, true);
    const again = await k.execute('import os\nos.path.exists(' + JSON.stringify(join(root, 'outside.txt')) + ')');
    assert.equal(again.result, 'False');
  });

  it('drops every capability: agent code cannot remount the read-only data read-write (Loupe running as root)', async () => {
    const target = join(visible, 'visible.csv');
    const r = await k.execute(
      `import os\ncap = [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0]\nout = os.popen("mount -o remount,bind,rw ${visible} 2>&1; echo hacked >> ${target} 2>&1").read()\ncap, out`,
    );
    assert.equal(r.status, 'ok', r.error?.traceback.join('\n'));
    assert.match(r.result!, /^\('0000000000000000', /);
    assert.equal(readFileSync(target, 'utf8'), 'x\n1\n2\n');
  });

  it('bounds fork bombs for any uid: a pids cgroup refuses forks past the limit (where writable), else the host watch kills the sandbox', async () => {
    await k.execute('kept = 42');
    const r = await k.execute(
      'import os, time\nn = 0\nfor i in range(300):\n    try:\n        if os.fork() == 0:\n            time.sleep(30)\n            os._exit(0)\n        n += 1\n    except OSError:\n        pass\nn',
    );
    if (r.status === 'crashed') {
      // no writable pids cgroup (unprivileged user): RLIMIT_NPROC + the host-side watch
      assert.equal(r.restarted, true);
      assert.match(r.stderr, /processes were running in the sandbox, more than the limit of 256/);
      const after = await k.execute(
        'import os\n"kept" in globals(), sum(1 for p in os.listdir("/proc") if p.isdigit()) <= 3',
      );
      assert.equal(after.result, '(False, True)');
    } else {
      // the pids cgroup: forks past the limit fail inside, the kernel keeps its state, the forks are ended with the cell
      assert.equal(r.status, 'ok', r.stderr);
      assert.ok(Number(r.result) < 256, `forked ${r.result}`);
      assert.match(r.stderr, /ended \d+ background process/);
      const after = await k.execute(
        'import os\n"kept" in globals(), sum(1 for p in os.listdir("/proc") if p.isdigit()) <= 3',
      );
      assert.equal(after.result, '(True, True)');
    }
  });

  it('cannot fill host memory: the sandbox root and /dev are read-only, /tmp and /dev/shm are bounded', async () => {
    const small = await PythonKernel.start({
      python: PY,
      cwd: run,
      sandbox: 'bubblewrap',
      readOnlyPaths: [],
      writablePaths: [run],
      tmpSizeMb: 8,
    });
    try {
      const code =
        'import os, errno\nout = {}\nfor p in ["/x", "/etc/x", "/opt/x", "/dev/x", "/tmp/x", "/dev/shm/x"]:\n    try:\n        with open(p, "wb") as f:\n            f.write(b"0" * (9 << 20))\n        out[p] = "wrote"\n    except OSError as e:\n        out[p] = errno.errorcode[e.errno]\nopen("in-run-folder.txt", "w").write("ok")\nout';
      const r = await small.execute(code);
      assert.equal(r.status, 'ok', r.error?.traceback.join('\n'));
      assert.equal(
        r.result,
        "{'/x': 'EROFS', '/etc/x': 'EROFS', '/opt/x': 'EROFS', '/dev/x': 'EROFS', '/tmp/x': 'ENOSPC', '/dev/shm/x': 'ENOSPC'}",
      );
      assert.equal(readFileSync(join(run, 'in-run-folder.txt'), 'utf8'), 'ok');
    } finally {
      await small.close();
    }
  });

  it('agent code flooding the protocol channel without a line break gets the kernel killed, not the host', async () => {
    const fd =
      'import gc, os\nfd = [o for o in gc.get_objects() if isinstance(o, dict) and "_proto_out" in o][0]["_proto_out"].fileno()\n';
    const r = await k.execute(
      `${fd}chunk = b"x" * (1 << 20)\nfor i in range(136):\n    os.write(fd, chunk)\nimport time\ntime.sleep(30)`,
      { timeoutMs: 60_000 },
    );
    assert.equal(r.status, 'crashed', r.stderr.slice(0, 500));
    assert.equal(r.restarted, true);
    assert.match(r.stderr, /more than 128 MiB to the kernel's protocol channel without a line break/);
    assert.ok(r.stderr.length < 10_000);
    const after = await k.execute('6 * 7');
    assert.equal(after.result, '42');
  });

  it('closes file descriptors inherited from the host (an fd open on a hidden file reads nothing inside)', async () => {
    const wrapper = join(root, 'bwrap-with-fd.py');
    writeFileSync(
      wrapper,
      `#!${PY}\nimport os, sys\nos.dup2(os.open(${JSON.stringify(join(root, 'block', 'answers.csv'))}, os.O_RDONLY), 200)\nos.execv(${JSON.stringify(findBubblewrap())}, [${JSON.stringify(findBubblewrap())}] + sys.argv[1:])\n`,
      { mode: 0o755 },
    );
    const leaky = await PythonKernel.start({
      python: PY,
      cwd: run,
      sandbox: 'bubblewrap',
      readOnlyPaths: [],
      writablePaths: [run],
      bubblewrapPath: wrapper,
    });
    try {
      const r = await leaky.execute(
        'import os\ntry:\n    res = os.read(200, 100)\nexcept OSError as e:\n    res = type(e).__name__\nres, sorted(int(f) for f in os.listdir("/proc/self/fd")) [:8]',
      );
      assert.equal(r.status, 'ok', r.error?.traceback.join('\n'));
      assert.doesNotMatch(r.result!, /secret ground truth/);
      assert.match(r.result!, /^\('OSError', \[0, 1, 2, /);
      // Nor through the sandbox's init (bwrap), which got the same fd.
      const viaInit = await leaky.execute(
        'try:\n    res = open("/proc/1/fd/200").read()\nexcept OSError as e:\n    res = type(e).__name__\nres',
      );
      assert.doesNotMatch(viaInit.result ?? '', /secret ground truth/);
    } finally {
      await leaky.close();
    }
  });

  it('builds a bwrap command line with no network, die-with-parent and read-only system dirs', () => {
    const a = bubblewrapArgs({
      python: PY,
      driver: '/d/driver.py',
      cwd: run,
      readOnlyPaths: [visible],
      writablePaths: [run],
      extraReadOnly: [],
    });
    for (const f of ['--unshare-all', '--die-with-parent', '--new-session']) assert.ok(a.includes(f), f);
    assert.equal(a[a.indexOf('--cap-drop') + 1], 'ALL');
    assert.deepEqual(a.slice(a.indexOf('/usr') - 1, a.indexOf('/usr') + 2), ['--ro-bind', '/usr', '/usr']);
    assert.ok(a.join(' ').includes(`--ro-bind ${visible} ${visible}`));
    assert.ok(a.join(' ').includes(`--bind ${run} ${run}`));
    assert.ok(!a.some((x) => x.startsWith('/work') && x !== run && x !== visible));
  });
});
