/**
 * Issue 43: the annotation panel's queue extras (instructions, assignment progress, experiment) and which item is
 * served: assigned to me first, then unassigned, never someone else's, only the experiment's.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  assignedPick,
  itemsInScope,
  queueExtras,
  withQueueExtras,
} from '../../../../src/app/annotation/queue-assignment.ts';
import { ALL_RUNS, runScope } from '../../../../src/app/experiments/scope.ts';
import { annotationStoreOf, type QueueEntry } from '../../../../src/core/annotations/index.ts';
import { queueAssignmentStoreOf } from '../../../../src/core/annotations/queues.ts';
import { experimentStoreOf } from '../../../../src/core/store/experiments.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';
import { seedQueue } from '../../../helpers/queue-fixture.ts';

const entry = (id: string, pos: number) => ({ pos, item: { id } }) as unknown as QueueEntry;

describe('annotation panel: instructions and assignment', () => {
  it("serves my items first, then unassigned ones, never others', in queue order after the current one", () => {
    const es = [entry('a', 0), entry('b', 1), entry('c', 2), entry('d', 3)];
    const assigned = new Map([
      ['b', 'bo'],
      ['c', 'ana'],
    ]);
    assert.equal(assignedPick(assigned, 'ana')(es)?.item.id, 'c');
    assert.equal(assignedPick(assigned, 'bo')(es)?.item.id, 'b');
    assert.equal(assignedPick(assigned, 'cy')(es)?.item.id, 'a');
    assert.equal(assignedPick(assigned, 'cy', undefined, 0)(es)?.item.id, 'd', 'skip moves on past the current item');
    assert.equal(assignedPick(assigned, 'cy', new Set(['b']))(es), undefined, 'b is in scope but assigned to bo');
    assert.equal(assignedPick(new Map(), 'cy', new Set(['c']))(es)?.item.id, 'c');
  });

  it('queue extras: instructions, progress per annotator, scoped to an experiment', async () => {
    const store = openStore(':memory:');
    const q = await seedQueue(store);
    assert.deepEqual(await queueExtras(store, q, ALL_RUNS), { instructions: null, assignment: null, experiment: null });
    const qs = queueAssignmentStoreOf(store);
    await qs.setInstructions(q, '**Supported** only when the evidence says so.', 'lead');
    await qs.assign(q, ['it-a', 'it-c'], 'ana', 'lead');
    await annotationStoreOf(store).annotate({
      itemId: 'it-c',
      annotator: 'ana',
      verdict: { supported: true, reason: '' },
    });
    const all = await queueExtras(store, q, ALL_RUNS);
    assert.equal(all.instructions?.text, '**Supported** only when the evidence says so.');
    assert.deepEqual(all.assignment, {
      total: 4,
      unassigned: 2,
      annotators: [{ annotator: 'ana', assigned: 2, done: 1, extra: 0 }],
    });
    await experimentStoreOf(store).tag('r2', 'exp', 'lead');
    const scope = await runScope(store, 'exp');
    const within = await itemsInScope(store, scope);
    assert.deepEqual([...within!].sort(), ['it-c', 'it-d']);
    const scoped = await queueExtras(store, q, scope, within);
    assert.equal(scoped.experiment, 'exp');
    assert.deepEqual(scoped.assignment, {
      total: 2,
      unassigned: 1,
      annotators: [{ annotator: 'ana', assigned: 1, done: 1, extra: 0 }],
    });
    const st = await withQueueExtras(
      store,
      { queue: { queueId: q } as never, item: { itemId: 'it-a' } as never },
      ALL_RUNS,
    );
    assert.equal(st.item?.assignedTo, 'ana');
    store.close();
  });
});
