/**
 * Issue 39 item 2 on the sweep queue: pg-boss keeps a unit as `jsonb`, which refuses the JSON escape `\u0000`, so a
 * unit whose text held a NUL could not be enqueued. A unit holding NUL, the text `\u0000` and the escape character
 * of `pg-text.ts` in its block id, model name, option names and values is enqueued and handed to a worker exactly as
 * sent, on a real PostgreSQL (test/helpers/pg.ts).
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { openUnitQueue } from '../../../../src/core/runs/queue.ts';
import type { SweepUnit } from '../../../../src/core/runs/sweep.ts';
import { parseStoreLocation, type PostgresLocation } from '../../../../src/core/store/location.ts';
import { startPg, type PgServer } from '../../../helpers/pg.ts';

const T = 'a\u0000b \\u0000 \\\\u0000 \uE000\uE001\uE002\uE003 end\u0000';
let srv: PgServer;
before(async () => {
  srv = await startPg({ fsync: 'off' });
});
after(() => srv?.stop());

it('a sweep unit holding NUL is enqueued and handed to a worker exactly as sent', { timeout: 60_000 }, async () => {
  const url = await srv.createDatabase('loupe_queue_nul');
  const loc = parseStoreLocation(url, process.cwd()) as PostgresLocation;
  const unit = {
    sweepId: `sw${T}`,
    runId: `run${T}`,
    suiteKind: 'count-rows',
    suiteRoot: `/suites/${T}`,
    blockId: `block${T}`,
    repeat: 1,
    agent: 'llm',
    profile: { name: `p${T}`, model: `model${T}` },
    toolSetOptions: { [`opt${T}`]: `value${T}` },
    kernel: {},
  } as unknown as SweepUnit;
  const plain = {
    ...unit,
    blockId: 'b1',
    runId: 'r-plain',
    profile: { name: 'p', model: 'm' },
    toolSetOptions: {},
    suiteRoot: '/s',
    sweepId: 'sw',
  } as unknown as SweepUnit;
  const q = await openUnitQueue(loc, { supervise: false });
  try {
    const ids = await q.send([unit, plain], { retryLimit: 0 });
    assert.equal(ids.length, 2);
    const got: SweepUnit[] = [];
    let done!: () => void;
    const all = new Promise<void>((r) => {
      done = r;
    });
    await q.work(1, async (u) => {
      got.push(u);
      if (got.length === 2) done();
    });
    const timer = setTimeout(() => done(), 30_000);
    await all;
    clearTimeout(timer);
    assert.deepEqual(
      got.sort((a, b) => a.runId.localeCompare(b.runId)),
      [plain, unit].sort((a, b) => a.runId.localeCompare(b.runId)),
    );
  } finally {
    await q.stop({ graceful: false });
  }
});
