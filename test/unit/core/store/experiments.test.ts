/**
 * Issue 43: run tags, names and saved filters on both engines (migration 19): replayed in insertion order, labels
 * checked, rows append-only (an UPDATE or DELETE is refused by the database).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { experimentStoreOf } from '../../../../src/core/store/experiments.ts';
import { storeSqlOf } from '../../../../src/core/store/store-sql.ts';
import { forEachEngine } from '../../../helpers/store-engines.ts';

forEachEngine((e) => {
  it('tags, untags and renames runs; experiments count the runs carrying a tag', async () => {
    const store = await e.open(await e.fresh());
    try {
      const x = experimentStoreOf(store);
      await x.tag('r1', 'ablation-A', 'ana');
      await x.tag('r2', 'ablation-A', 'ana');
      await x.tag('r2', 'ablation-A', 'ana'); // no second row
      await x.tag('r2', 'baseline', 'bo');
      await x.untag('r1', 'ablation-A', 'bo');
      await x.rename('r2', '  GPT run, temp 0.2 ', 'ana');
      const l = await x.labelsOf();
      assert.deepEqual(l.get('r1'), { tags: [], name: null });
      assert.deepEqual(l.get('r2'), { tags: ['ablation-A', 'baseline'], name: 'GPT run, temp 0.2' });
      assert.deepEqual(await x.experiments(), [
        { tag: 'ablation-A', runs: 1 },
        { tag: 'baseline', runs: 1 },
      ]);
      assert.deepEqual([...(await x.runsTagged('ablation-A'))], ['r2']);
      await x.tag('r1', 'ablation-A', 'ana'); // re-tagged after an untag
      assert.deepEqual([...(await x.runsTagged('ablation-A'))].sort(), ['r1', 'r2']);
      await x.rename('r2', '', 'ana');
      assert.equal((await x.labelsOf(['r2'])).get('r2')!.name, null);
      await assert.rejects(x.tag('r1', 'a\nb', 'ana'), /tag: holds a control/);
      await assert.rejects(x.tag('r1', ' ', 'ana'), /tag: is empty/);
      await assert.rejects(x.rename('r1', 'x'.repeat(81), 'ana'), /run name: is longer than 80/);
    } finally {
      await store.close();
    }
  });

  it('saved filters: newest spec per name, removal, bad specs refused', async () => {
    const store = await e.open(await e.fresh());
    try {
      const x = experimentStoreOf(store);
      await x.saveFilter('mine', { tag: 'ablation-A', status: 'failed' }, 'ana');
      await x.saveFilter('mine', { tag: 'ablation-B' }, 'ana');
      await x.saveFilter('gpt', { text: 'gpt' }, 'bo');
      assert.deepEqual(
        (await x.filters()).map((f) => [f.name, f.spec]),
        [
          ['gpt', { text: 'gpt' }],
          ['mine', { tag: 'ablation-B' }],
        ],
      );
      assert.equal(await x.removeFilter('mine', 'ana'), true);
      assert.equal(await x.removeFilter('nope', 'ana'), false);
      assert.deepEqual(
        (await x.filters()).map((f) => f.name),
        ['gpt'],
      );
      await assert.rejects(x.saveFilter('empty', {}, 'ana'), /filter empty: sets nothing/);
      await assert.rejects(x.saveFilter('bad', { tag: 3 as never }, 'ana'), /tag must be text/);
    } finally {
      await store.close();
    }
  });

  it('labels and filters are append-only in the database', async () => {
    const store = await e.open(await e.fresh());
    try {
      const x = experimentStoreOf(store);
      await x.tag('r1', 'A', 'ana');
      await x.saveFilter('f', { tag: 'A' }, 'ana');
      const s = storeSqlOf(store);
      // the test's PostgreSQL user owns the tables (the owner may edit: migration 18's rule); SQLite refuses anyone
      if (e.name === 'sqlite') {
        await assert.rejects(s.run(s.db.updateTable('run_labels').set({ value: 'B' })), /append-only/);
        await assert.rejects(s.run(s.db.deleteFrom('saved_filters')), /append-only/);
      } else {
        const trig = await s.all(
          s.db
            .selectFrom('information_schema.triggers' as never)
            .select('trigger_name' as never)
            .where('event_object_table' as never, 'in', ['run_labels', 'saved_filters'] as never),
        );
        assert.ok(
          (trig as Array<{ trigger_name: string }>).some((t) => t.trigger_name === 'run_labels_append_only'),
          JSON.stringify(trig),
        );
      }
    } finally {
      await store.close();
    }
  });
});
