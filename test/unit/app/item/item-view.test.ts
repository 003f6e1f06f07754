/** Issue 22: a benchmark item as the Benchmarks view shows it — the question always, the ground truth only when asked. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadSuite } from '../../../../src/core/benchmarks/index.ts';
import { itemGroundTruth, itemView } from '../../../../src/app/item/item-view.ts';
import { sharedData } from '../../../helpers/shared.ts';

describe('benchmark item view (issue 22)', () => {
  it('LongDA: the question and its answer structure; the answer only when revealed', async () => {
    const suite = await loadSuite('longda', sharedData('longda', 'benchmark'), {});
    const block = suite.blocks.find((b) => b.items.some((i) => i.type === 'longda-query'))!;
    const q = block.items[0]!;
    assert.equal(q.type, 'longda-query');
    const hidden = itemView(block, q.id, { reveal: false, suiteTitle: suite.title, hasGroundTruthView: false });
    assert.equal(hidden.text, q.type === 'longda-query' ? q.question : '');
    assert.equal(hidden.groundTruth, null);
    assert.equal(hidden.hasGroundTruth, true);
    assert.ok(
      !JSON.stringify(hidden).includes(q.type === 'longda-query' ? `"${q.answerText}"` : '#'),
      'no hidden value in the unrevealed state',
    );
    const shown = itemView(block, q.id, { reveal: true, suiteTitle: suite.title, hasGroundTruthView: false });
    assert.deepEqual(shown.groundTruth, [
      { name: 'Answer', value: q.type === 'longda-query' ? q.answerText : '', code: true },
    ]);
    assert.throws(
      () => itemView(block, 'no-such-item', { reveal: false, suiteTitle: '', hasGroundTruthView: false }),
      /no item no-such-item/,
    );
  });

  it("BLADE: the research question offers the dataset's ground-truth decisions; an MCQ reveals its correct option", async () => {
    const suite = await loadSuite('blade', sharedData('blade', 'datasets'), {});
    const block = suite.blocks.find((b) => b.hidden.annotations && b.items.some((i) => i.type === 'blade-question'))!;
    const rq = block.items.find((i) => i.type === 'blade-question')!;
    const v = itemView(block, rq.id, { reveal: false, suiteTitle: suite.title, hasGroundTruthView: true });
    assert.equal(v.groundTruthView, true);
    assert.equal(v.hasGroundTruth, false);
    const mcqSuite = await loadSuite('blade-mcq', sharedData('blade', 'datasets'), {});
    const mb = mcqSuite.blocks.find((b) => b.items.some((i) => i.type === 'blade-mcq') && b.hidden.mcqs)!;
    const m = mb.items.find((i) => i.type === 'blade-mcq')!;
    const gt = itemGroundTruth(mb, m);
    const set = mb.hidden.mcqs!.mcqs.find(
      (x) => m.type === 'blade-mcq' && x.options.map((o) => o.text).join() === m.options.map((o) => o.text).join(),
    )!;
    assert.match(gt[0]!.value, new RegExp(`^${set.correctLabel}\\. `));
    assert.equal(itemView(mb, m.id, { reveal: false, suiteTitle: '', hasGroundTruthView: false }).groundTruth, null);
  });
});
