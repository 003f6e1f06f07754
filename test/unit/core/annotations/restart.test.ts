/**
 * Issue 41: the annotation store on PostgreSQL runs its transactions through the run store's `StoreSql`; a server
 * restart while the store is open closes its pooled connections, and the next annotation (a transaction whose BEGIN
 * meets a closed connection) starts again on a new one, as the old PostgreSQL annotation store did.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { annotationStoreOf } from '../../../../src/core/annotations/index.ts';
import { openStoreAt } from '../../../../src/core/store/open.ts';
import { startPg, type PgServer } from '../../../helpers/pg.ts';

let srv: PgServer;
before(async () => {
  srv = await startPg({ fsync: 'off' });
});
after(() => srv?.stop());

it(
  'PostgreSQL restarted while the annotation store is open: the next annotations and queue opens reconnect, nothing is lost',
  { timeout: 60_000 },
  async () => {
    const rs = await openStoreAt(await srv.createDatabase('restart'));
    await rs.createRun({
      id: 'run-1',
      suite: 'analystbench',
      blockId: 'b1',
      agent: 'llm',
      model: 'm',
      params: {},
      promptHash: 'h',
      toolSet: 't',
      dataChecksums: {},
      loupeVersion: 't',
      sandbox: 'off',
      workspace: '/nonexistent/w',
    });
    for (let i = 0; i < 3; i++) {
      await rs.judgements.put(
        {
          key: `k${i}`,
          task: 'claim-support',
          judgeId: 'human',
          inputHash: `h${i}`,
          promptHash: null,
          input: { claim: `claim ${i}`, sources: 'S' },
          raw: null,
          verdict: null,
          status: 'pending',
          at: `2026-01-01T00:00:0${i}Z`,
        },
        { runId: 'run-1' },
      );
    }
    const store = annotationStoreOf(rs);
    const q = await store.openQueue({ kind: 'items' });
    const first = (await store.nextItem(q.id, 'ann'))!;
    // several pooled connections, all closed by the restart
    await Promise.all([store.getQueue(q.id), store.progress(q.id), store.listItems(), rs.getRun('run-1')]);
    srv.restart();
    await store.annotate({
      itemId: first.item.id,
      annotator: 'ann',
      verdict: { supported: true, reason: 'r' },
      queueId: q.id,
    });
    await Promise.all([store.getQueue(q.id), store.progress(q.id), store.listItems(), rs.getRun('run-1')]);
    srv.restart();
    await store.openQueue({ kind: 'items', task: 'claim-support' });
    await store.importRecords(
      [
        {
          line: 1,
          record: { type: 'header', format: 'loupe-annotations', version: 1, exportedAt: 'x', schemaVersions: {} },
        },
      ],
      'empty.jsonl',
    );
    assert.equal((await store.annotations(first.item.id)).length, 1);
    assert.equal((await store.progress(q.id)).done, 1);
    assert.equal((await store.listQueues()).length, 2);
    await rs.close();
  },
);
