/**
 * Issue 43: queue instructions (versions, newest shown) and assignment of items to annotators with progress per
 * annotator, on both engines (migration 20).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { annotationStoreOf } from '../../../../src/core/annotations/index.ts';
import { seedQueue } from '../../../helpers/queue-fixture.ts';
import { queueAssignmentStoreOf } from '../../../../src/core/annotations/queues.ts';
import { forEachEngine } from '../../../helpers/store-engines.ts';

forEachEngine((e) => {
  it('instructions: versions, newest shown, cleared by an empty text, bad input refused', async () => {
    const store = await e.open(await e.fresh());
    try {
      const q = await seedQueue(store);
      const qs = queueAssignmentStoreOf(store);
      assert.equal(await qs.instructions(q), undefined);
      await qs.setInstructions(q, '# Rubric\nSupported = the **evidence** states it.', 'lead');
      const v2 = await qs.setInstructions(q, 'v2 <script>alert(1)</script>', 'lead');
      assert.equal(v2.version, 2);
      assert.equal((await qs.instructions(q))!.text, 'v2 <script>alert(1)</script>'); // kept as written: data, rendered sanitised
      await qs.setInstructions(q, '', 'lead');
      assert.equal(await qs.instructions(q), undefined);
      await assert.rejects(qs.setInstructions('nope', 'x', 'lead'), /queue nope: does not exist/);
      await assert.rejects(qs.setInstructions(q, 'x'.repeat(20_001), 'lead'), /longer than 20000/);
    } finally {
      await store.close();
    }
  });

  it('assignment: per item, reassigned, progress per annotator, pending for me', async () => {
    const store = await e.open(await e.fresh());
    try {
      const q = await seedQueue(store);
      const qs = queueAssignmentStoreOf(store);
      assert.deepEqual(await qs.assign(q, { unassigned: 2 }, 'ana', 'lead'), ['it-a', 'it-b']);
      assert.deepEqual(await qs.assign(q, { unassigned: 5 }, 'bo', 'lead'), ['it-c', 'it-d']);
      await qs.assign(q, ['it-d'], 'ana', 'lead'); // reassigned
      await assert.rejects(qs.assign(q, ['it-x'], 'ana', 'lead'), /item it-x: is not in queue/);
      const ann = annotationStoreOf(store);
      await ann.annotate({ itemId: 'it-a', annotator: 'ana', verdict: { supported: true, reason: '' } });
      await ann.annotate({ itemId: 'it-c', annotator: 'bo', verdict: { supported: false, reason: '' } });
      await ann.annotate({ itemId: 'it-b', annotator: 'cy', verdict: { supported: false, reason: '' } });
      const p = await qs.progress(q);
      assert.equal(p.total, 4);
      assert.equal(p.unassigned, 0);
      assert.deepEqual(p.annotators, [
        { annotator: 'ana', assigned: 3, done: 1, extra: 0 },
        { annotator: 'bo', assigned: 1, done: 1, extra: 0 },
        { annotator: 'cy', assigned: 0, done: 0, extra: 1 },
      ]);
      assert.deepEqual(
        (await qs.pendingFor('ana')).map((x) => [x.itemId, x.runId]),
        [
          ['it-b', 'r1'],
          ['it-d', 'r2'],
        ],
      );
      assert.deepEqual(await qs.pendingFor('bo'), []);
      // scoped to the items of one experiment's runs (r2)
      const scoped = await qs.progress(q, new Set(['it-c', 'it-d']));
      assert.equal(scoped.total, 2);
      assert.deepEqual(
        scoped.annotators.map((a) => [a.annotator, a.assigned, a.done]),
        [
          ['ana', 1, 0],
          ['bo', 1, 1],
        ],
      );
      await qs.assign(q, 'all', null, 'lead');
      assert.equal((await qs.progress(q)).unassigned, 4);
    } finally {
      await store.close();
    }
  });
});
