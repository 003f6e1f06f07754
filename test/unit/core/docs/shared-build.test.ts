import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { openDocIndex } from '../../../../src/core/docs/index.ts';
import { acquireDocIndex, type OpenIndex } from '../../../../src/core/docs/shared-build.ts';
import type { BuildSchedule, DocIndex } from '../../../../src/core/docs/types.ts';
import { makePdf } from './make-pdf.ts';

const dirs: string[] = [];
function tmp(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), `loupe-shared-build-${prefix}-`));
  dirs.push(d);
  return d;
}
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('DocIndex.build schedule (issue 23)', () => {
  it('takes the file the schedule names first, reports each file current once, and "extracted" before the rankers', async () => {
    const root = tmp('root');
    const names = Array.from({ length: 12 }, (_, i) => `f${String(i).padStart(2, '0')}.txt`);
    for (const n of names) writeFileSync(join(root, n), `file ${n} WTMEC2YR\n`);
    const idx = await openDocIndex({ root, cacheDir: tmp('cache') });
    const order: string[] = [];
    const events: string[] = [];
    let asked = 0;
    const schedule: BuildSchedule = {
      next: (pending) => (asked++ === 0 && pending.has('f09.txt') ? 'f09.txt' : undefined),
      fileReady: (rel) => order.push(rel),
      extracted: () => events.push(`extracted after ${order.length}`),
    };
    await idx.build({ schedule, onProgress: (p) => p.phase === 'index' && p.done === 0 && events.push('index') });
    assert.equal(order[0], 'f09.txt', 'the scheduled file is taken first');
    assert.deepEqual([...order].sort(), names, 'every file reported current once');
    assert.deepEqual(events, ['extracted after 12', 'index']);
    // a second build reuses every file and still reports each one
    order.length = 0;
    await idx.build({ schedule });
    assert.equal(order.length, 12);
    idx.close();
  });
});

describe('cancelled build (issue 23: no process outlives its work)', () => {
  it('ends its extraction workers at once: the file they were extracting is not written after the abort', async () => {
    const root = tmp('abort');
    const page = (i: number) => [{ text: `Variable Name: V${i}`, x: 72, y: 720 }];
    writeFileSync(join(root, 'a.pdf'), makePdf(Array.from({ length: 30 }, (_, i) => page(i))));
    writeFileSync(join(root, 'b.pdf'), makePdf([page(0)]));
    const cache = tmp('abort-cache');
    const ac = new AbortController();
    let idx = await openDocIndex({ root, cacheDir: cache, extractWorkers: 2 });
    // a.pdf is handed to a worker, then the build is cancelled as it takes b.pdf
    await assert.rejects(
      idx.build({ signal: ac.signal, onProgress: (p) => p.phase === 'extract' && p.file === 'b.pdf' && ac.abort() }),
      (e: unknown) => (e as Error).name === 'AbortError',
    );
    idx.close();
    idx = await openDocIndex({ root, cacheDir: cache });
    const rep = await idx.build();
    assert.equal(rep.reused, 0, 'nothing was written after the abort: the worker did not finish a.pdf');
    assert.equal(rep.extracted, 2);
    idx.close();
  });
});

/** A fake index whose build takes its files one by one, each when the test lets it (`step()`), honouring the schedule. */
function fakeIndex(files: string[]) {
  const taken: string[] = [];
  let signal: AbortSignal | undefined;
  let gate: (() => void) | undefined;
  let waiting: Promise<void> | undefined;
  let builds = 0;
  const arm = () => (waiting = new Promise<void>((r) => (gate = r)));
  const idx = {
    root: '/docs',
    closed: false,
    async build(o: { signal?: AbortSignal; schedule?: BuildSchedule } = {}) {
      builds++;
      signal = o.signal;
      const pending = new Set(files);
      while (pending.size) {
        await (waiting ?? arm());
        waiting = undefined;
        o.signal?.throwIfAborted();
        const pick = o.schedule?.next?.(pending);
        const rel = pick ?? pending.values().next().value!;
        pending.delete(rel);
        taken.push(rel);
        o.schedule?.fileReady?.(rel);
      }
      o.schedule?.extracted?.();
      await (waiting ?? arm());
      waiting = undefined;
      o.signal?.throwIfAborted();
      return {};
    },
    close() {
      idx.closed = true;
    },
  };
  return {
    idx: idx as unknown as DocIndex & { closed: boolean },
    taken,
    signal: () => signal,
    builds: () => builds,
    /** lets the build take one more step (a file, or the final ranker stage) */
    async step(n = 1) {
      for (let i = 0; i < n; i++) {
        while (!gate) await new Promise((r) => setImmediate(r));
        const g = gate;
        gate = undefined;
        g();
        await new Promise((r) => setImmediate(r));
      }
    },
  };
}

const settled = async (p: Promise<unknown>) => {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
};

describe('acquireDocIndex (issue 23: the first search of a fresh run)', () => {
  const files = ['a.pdf', 'b.pdf', 'c.pdf', 'd.pdf'];

  it('a file a tool waits for is extracted next and answered before the rest of the build', async () => {
    const f = fakeIndex(files);
    let opened = 0;
    const open: OpenIndex = async () => (opened++, f.idx);
    const lease = acquireDocIndex('/docs', files, 'cache-1', open);
    await f.step(); // a.pdf
    const c = lease.file('./c.pdf');
    await f.step(); // the wanted file goes next
    assert.deepEqual(f.taken, ['a.pdf', 'c.pdf']);
    assert.equal(await settled(c), true, 'read on c.pdf answered');
    assert.equal(await settled(lease.extracted()), false, 'the rest of the block is still being extracted');
    assert.deepEqual(lease.progress(), { ready: 2, total: 4 });
    await f.step(2);
    assert.equal(await settled(lease.extracted()), true);
    assert.equal(await settled(lease.built()), false, 'all-file keyword search does not wait for the rankers');
    await f.step();
    assert.equal(await lease.built(), f.idx);
    // a second lease on the same set shares the finished build
    const again = acquireDocIndex('/docs', [...files].reverse(), 'cache-1', open);
    assert.equal(await again.file('d.pdf'), f.idx);
    assert.equal(opened, 1);
    lease.release();
    again.release();
  });

  it('files nobody waits for are taken smallest first', async () => {
    const root = tmp('sizes');
    const sized = { 'big.pdf': 3000, 'small.pdf': 10, 'mid.pdf': 500 };
    for (const [n, z] of Object.entries(sized)) writeFileSync(join(root, n), 'x'.repeat(z));
    const f = fakeIndex(Object.keys(sized));
    const lease = acquireDocIndex(root, Object.keys(sized), 'cache-5', async () => f.idx);
    await f.step(4);
    await lease.built();
    assert.deepEqual(f.taken, ['small.pdf', 'mid.pdf', 'big.pdf']);
    lease.release();
  });

  it('a path outside the set waits for every file (the tool then says it does not know it)', async () => {
    const f = fakeIndex(files);
    const lease = acquireDocIndex('/docs', files, 'cache-2', async () => f.idx);
    const other = lease.file('../elsewhere.pdf');
    await f.step(3);
    assert.equal(await settled(other), false);
    await f.step();
    assert.equal(await settled(other), true);
    await f.step();
    lease.release();
  });

  it('the last release of an unfinished build aborts it (stages reject, nothing unhandled) and the next lease builds again', async () => {
    const f = fakeIndex(files);
    let opened = 0;
    const open: OpenIndex = async () => (opened++, f.idx);
    const one = acquireDocIndex('/docs', files, 'cache-3', open);
    const two = acquireDocIndex('/docs', files, 'cache-3', open);
    await f.step();
    const built = one.built();
    one.release();
    one.release(); // idempotent
    assert.equal(f.signal()?.aborted, false, 'another run still holds the build');
    two.release();
    assert.equal(f.signal()?.aborted, true);
    await f.step();
    await assert.rejects(built, /cancelled/);
    assert.equal(f.idx.closed, true, 'the aborted build closed its index');
    const g = fakeIndex(files);
    const three = acquireDocIndex('/docs', files, 'cache-3', async () => (opened++, g.idx));
    await g.step(5);
    await three.built();
    assert.equal(opened, 2, 'a new build after the abort');
    three.release();
  });

  it('a failed build rejects every stage with its error and is tried again by the next lease', async () => {
    let n = 0;
    const lease = acquireDocIndex('/docs', files, 'cache-4', async () => {
      n++;
      throw new Error('docs root does not exist');
    });
    await assert.rejects(lease.file('a.pdf'), /docs root does not exist/);
    await assert.rejects(lease.built(), /docs root does not exist/);
    lease.release();
    const f = fakeIndex(files);
    const next = acquireDocIndex('/docs', files, 'cache-4', async () => (n++, f.idx));
    await f.step(5);
    assert.equal(await next.built(), f.idx);
    assert.equal(n, 2);
    next.release();
  });
});
