/**
 * Issue 39 item 4: the extension host's SQLite locks on the run store survive a CLI process that writes and closes
 * the same store many times. This process plays the extension host: it opens the store in the runs directory (the
 * store folder is also a run's workspace, as integration tests and MCP runs make it), follows it the way the Timeline
 * and the Runs view do (`subscribeSteps`, `listRuns`, step summaries on the read worker) and meanwhile runs the code
 * paths of the host that open files found in folders: artefact capture of a run whose workspace holds the store
 * (`captureRunEvidence`, as scoring a run does), `readRunFile`, the DDR SQLite sniff, CSV/XPT header readers, data
 * checksums. A child process (the CLI's open → write → close) runs 50 cycles.
 * Fails when the `-shm` file is deleted or replaced under the open connection (the child found itself alone: this
 * process had lost its POSIX locks), when a read or write afterwards errors ("disk I/O error"), or when any code of
 * this process opened a store file (runs.sqlite, -wal, -shm) outside SQLite (fs calls are recorded).
 * Before the fix, `captureRunArtefacts` read every file of the workspace, the store's among them, and closed them:
 * POSIX dropped this process's locks on runs.sqlite and runs.sqlite-shm, and the child deleted -wal and -shm.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs, { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isSqliteFile } from '../../../../src/core/benchmarks/ddr/load.ts';
import { readCsvColumns, readXptColumns } from '../../../../src/core/docs/catalog.ts';
import { captureRunEvidence } from '../../../../src/core/runs/evidence.ts';
import { fileSha256 } from '../../../../src/core/runs/runner.ts';
import { readRunFile } from '../../../../src/core/store/artefacts.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';
import { heldDatabaseFiles, isHeldDatabaseFile } from '../../../../src/core/util/held-files.ts';
import type { RunFolder } from '../../../../src/core/store/run-folder.ts';

const CYCLES = 50;
let dir = '';
let file = '';
const opened: string[] = [];
const restore: Array<() => void> = [];

/** Records every fs call of this process that opens a store file (by path, before the call). */
function recordStoreOpens(): void {
  const f = fs as unknown as Record<string, (...a: unknown[]) => unknown>;
  const p = fs.promises as unknown as Record<string, (...a: unknown[]) => unknown>;
  const isStore = (x: unknown) => {
    if (typeof x !== 'string' && !(x instanceof URL) && !Buffer.isBuffer(x)) return false;
    const path = resolve(x instanceof URL ? fileURLToPath(x) : String(x));
    return (
      [file, `${file}-wal`, `${file}-shm`, `${file}-journal`].includes(path) ||
      (fs.existsSync(path) && statSync(path).ino === statSync(file).ino)
    );
  };
  const wrap = (obj: Record<string, (...a: unknown[]) => unknown>, name: string, argIdx: number[] = [0]) => {
    const orig = obj[name]!;
    obj[name] = function (this: unknown, ...args: unknown[]) {
      for (const i of argIdx) {
        if (isStore(args[i])) {
          opened.push(`${name}(${String(args[i])})\n${new Error().stack?.split('\n').slice(2, 6).join('\n')}`);
        }
      }
      return orig.apply(this, args);
    };
    restore.push(() => {
      obj[name] = orig;
    });
  };
  for (const n of [
    'openSync',
    'open',
    'readFileSync',
    'readFile',
    'createReadStream',
    'createWriteStream',
    'writeFileSync',
    'appendFileSync',
    'truncateSync',
  ]) {
    wrap(f, n);
  }
  for (const n of ['copyFileSync', 'copyFile', 'cpSync', 'cp']) wrap(f, n, [0, 1]);
  for (const n of ['open', 'readFile', 'writeFile', 'truncate']) wrap(p, n);
  for (const n of ['copyFile', 'cp']) wrap(p, n, [0, 1]);
  syncBuiltinESMExports();
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-locks-'));
  file = join(dir, 'runs.sqlite');
});
after(() => {
  for (const r of restore) r();
  syncBuiltinESMExports();
  rmSync(dir, { recursive: true, force: true });
});

it(
  `the host's locks survive a CLI process that opens, writes and closes the store ${CYCLES} times while the host follows it and walks the store's folder`,
  { timeout: 180_000 },
  async () => {
    const store = openStore(file);
    assert.deepEqual(heldDatabaseFiles(), [resolve(file)]);
    assert.ok(isHeldDatabaseFile(file) && isHeldDatabaseFile(`${file}-shm`) && isHeldDatabaseFile(`${file}-wal`));
    // a run whose workspace is the folder holding the store (integration tests' runs; an MCP run's own folder)
    await store.createRun({
      id: 'host-run',
      suite: 'analystbench',
      blockId: 'b',
      agent: 'llm',
      model: 'm',
      params: {} as never,
      promptHash: 'h',
      toolSet: 't',
      dataChecksums: {},
      loupeVersion: 't',
      sandbox: 'off',
      workspace: dir,
    });
    await store.updateRun('host-run', { status: 'finished' });
    writeFileSync(join(dir, 'report.md'), '# Report\n');
    mkdirSync(join(dir, 'host-run'), { recursive: true });
    recordStoreOpens();
    const shm = () => {
      try {
        return statSync(`${file}-shm`).ino;
      } catch {
        return -1;
      }
    };
    const shmAtStart = shm();
    assert.notEqual(shmAtStart, -1, 'the host connection made the -shm file');
    const seen: string[] = [];
    const stopAll = store.subscribeSteps((s) => seen.push(s.runId), { intervalMs: 25 });
    const stopOne = store.subscribeSteps(() => undefined, { intervalMs: 25, runId: 'host-run' });
    const inodes = new Set<number>();
    const errors: string[] = [];
    const refused: string[] = [];
    const host = async () => {
      inodes.add(shm());
      try {
        await store.listRuns();
        await store.getStepSummaries('host-run');
        await store.searchSteps('host-run', 'step');
        // what the host does with files of a folder that holds the store
        const run = (await store.getRun('host-run'))!;
        // a trusted folder that holds the store (the check of issue 36 is not what this test is about)
        const folder: RunFolder = { runId: 'host-run', workspace: dir, runDir: dir, refused: null, absent: null };
        const cap = await captureRunEvidence(store, run, folder);
        assert.ok(
          !cap?.stored.some((p) => p.startsWith('runs.sqlite')),
          `the store was captured as an artefact: ${cap?.stored.join(', ')}`,
        );
        assert.equal(isSqliteFile(file), true);
        assert.equal(isSqliteFile(`${file}-shm`), false);
      } catch (e) {
        errors.push(String(e));
      }
      for (const f of [
        () =>
          readRunFile(
            store,
            { runId: 'host-run', workspace: dir, runDir: dir, refused: null, absent: null },
            'runs.sqlite-shm',
            null,
          ),
        async () => readCsvColumns(file),
        async () => readXptColumns(`${file}-wal`),
        () => fileSha256(file),
      ]) {
        try {
          await f();
          errors.push('a store file was read as a file');
        } catch (e) {
          refused.push((e as Error).message);
        }
      }
    };
    const child = spawn(
      process.execPath,
      [
        '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
        join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'helpers', 'store-writer.child.ts'),
        file,
        String(CYCLES),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    let done = false;
    void exited.then(() => {
      done = true;
    });
    const deadline = Date.now() + 150_000;
    while (!done && Date.now() < deadline) {
      await host();
      await new Promise((r) => setTimeout(r, 5));
    }
    const code = await exited;
    assert.deepEqual(opened, [], 'code of this process opened a store file outside SQLite');
    assert.deepEqual(
      [...inodes, shm()].filter((i) => i !== shmAtStart),
      [],
      'the -shm file was deleted or replaced under the open connection',
    );
    assert.equal(code, 0, `the child failed: ${err}`);
    assert.equal(out.trim().split('\n').length, CYCLES);
    await host();
    inodes.add(shm());
    // after the child: this connection still reads and writes (no "disk I/O error")
    const runs = await store.listRuns();
    assert.equal(runs.filter((r) => r.id.startsWith('child-')).length, CYCLES);
    await store.commitStep({
      runId: 'host-run',
      index: 0,
      startedAt: 'a',
      endedAt: 'b',
      latencyMs: 1,
      toolMs: 0,
      assistant: { role: 'assistant', content: 'host step' },
      toolCalls: [],
      extraMessages: [],
      usage: null,
      costUsd: null,
      finishReason: 'stop',
    });
    assert.equal((await store.getSteps('host-run')).length, 1);
    await new Promise((r) => setTimeout(r, 100));
    stopAll();
    stopOne();
    assert.equal(
      seen.filter((r) => r.startsWith('child-')).length,
      CYCLES,
      'the subscription saw every step the child wrote',
    );
    assert.deepEqual(errors, []);
    assert.deepEqual([...inodes], [shmAtStart], 'the -shm file was deleted or replaced under the open connection');
    assert.ok(
      refused.length >= 4 && refused.every((m) => /database this process has open/.test(m)),
      refused.join('\n'),
    );
    await store.close();
    assert.deepEqual(heldDatabaseFiles(), []);
  },
);
