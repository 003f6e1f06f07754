/**
 * Issue 41: the annotation store is one implementation on both engines; the places where an engine spells a query its
 * own way (a list of ids bound as one parameter, the substring function, JSON fields) give the same answers on both:
 * a sampled queue keeps the stored ids in the sample's order (ids missing from the store left out), an items queue
 * reopened after verdicts leaves the resolved items out, a criterion filter matches case-insensitively.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { annotationStoreOf } from '../../../../src/core/annotations/index.ts';
import { forEachEngine } from '../../../helpers/store-engines.ts';

forEachEngine((e) => {
  it('sampled queue, items queue reopened after verdicts, criterion filter', { timeout: 60_000 }, async () => {
    const rs = await e.open(await e.fresh());
    await rs.createRun({
      id: 'run-1',
      suite: 'analystbench',
      blockId: 'b1',
      agent: 'llm',
      model: 'm',
      params: {},
      promptHash: 'h',
      toolSet: 't',
      dataChecksums: { 'a.csv': 'x' },
      loupeVersion: 't',
      sandbox: 'off',
      workspace: '/nonexistent/w',
    });
    for (let i = 0; i < 5; i++) {
      await rs.judgements.put(
        {
          key: `k${i}`,
          task: 'checklist-score',
          judgeId: 'human',
          inputHash: `h${i}`,
          promptHash: null,
          input: { instruction: 'W', response: `r${i}`, criterion: i % 2 ? 'Clarity of Figures' : 'Depth' },
          raw: null,
          verdict: null,
          status: 'pending',
          at: `2026-01-01T00:00:0${i}Z`,
        },
        { runId: 'run-1' },
      );
    }
    const store = annotationStoreOf(rs);
    await store.syncFromJudgements();
    const items = await store.listItems();
    assert.equal(items.length, 5);
    assert.ok(
      items.every((i) => i.suiteVersion.startsWith('data:')),
      'the suite version comes from the run',
    );
    assert.deepEqual(
      (await store.listItems({ criterion: 'CLARITY' })).map((i) => i.input),
      [items[1]!.input, items[3]!.input],
    );
    const ids = items.map((i) => i.id);
    const sampled = await store.openQueue({ kind: 'sampled', itemIds: [ids[3]!, 'j:none:missing', ids[0]!] });
    assert.deepEqual(
      [
        (await store.itemAt(sampled.id, 0))?.item.id,
        (await store.itemAt(sampled.id, 1))?.item.id,
        await store.itemAt(sampled.id, 2),
      ],
      [ids[3], ids[0], undefined],
    );
    const all = await store.openQueue({ kind: 'items' });
    assert.equal((await store.progress(all.id)).total, 5);
    for (const id of [ids[1]!, ids[2]!]) {
      await store.annotate({ itemId: id, annotator: 'ann', verdict: { score: 3, reason: 'ok' }, queueId: all.id });
    }
    // a new judgement; the pending-items queue of the same filter opened again appends it, not the resolved ones
    await rs.judgements.put(
      {
        key: 'k9',
        task: 'checklist-score',
        judgeId: 'human',
        inputHash: 'h9',
        promptHash: null,
        input: { instruction: 'W', response: 'r9', criterion: 'Depth' },
        raw: null,
        verdict: null,
        status: 'pending',
        at: '2026-01-01T00:00:09Z',
      },
      { runId: 'run-1' },
    );
    const pending = await store.openQueue({ kind: 'items', task: 'checklist-score' });
    const queued: string[] = [];
    for (let p = 0; ; p++) {
      const x = await store.itemAt(pending.id, p);
      if (!x) break;
      queued.push(x.item.id);
    }
    assert.deepEqual(queued, [ids[0], ids[3], ids[4], 'j:checklist-score:h9']);
    await rs.close();
  });
});
