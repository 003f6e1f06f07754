/**
 * Ground truth beside each side of a pairwise review (issue 43): refused before the vote in a blind queue, offered per
 * question once voted (or in a queue that is not blind), each side's answer on the side the reviewer sees it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pairGroundTruth, pairView } from '../../../../src/app/review/review.ts';
import {
  annotationStoreOf,
  type AnnotationItem,
  type AnnotationStore,
} from '../../../../src/core/annotations/index.ts';
import { ensurePairItem, leftSideFor, pairwiseVerdict } from '../../../../src/core/review/pairwise.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';
import type { RunStore } from '../../../../src/core/store/types.ts';

let dir = '';
let store: RunStore;
let ann: AnnotationStore;
let item: AnnotationItem;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-gt-review-'));
  store = openStore(join(dir, 'runs.sqlite'));
  ann = annotationStoreOf(store);
  for (const [i, model] of ['model-a', 'model-b'].entries()) {
    const id = `run-${model}`;
    await store.createRun({
      id,
      suite: 'longda',
      blockId: 'pub-1',
      agent: 'llm',
      model,
      params: {},
      promptHash: 'h',
      toolSet: 'longda',
      dataChecksums: {},
      loupeVersion: 't',
      sandbox: 'off',
      workspace: dir,
    });
    await store.updateRun(id, { status: 'finished' });
    const rows = [0, 1].map((q) => ({
      qId: `q${q}`,
      survey: 'NHANES',
      source: 'pub-1',
      internalId: q,
      answerStructure: 'single',
      rawAnswer: String(10 * i + q),
      match: i === 0 ? 1 : 0,
      given: 10 * i + q,
      expected: q,
    }));
    const detail = {
      runId: id,
      suite: 'longda',
      blockId: 'pub-1',
      model,
      agent: 'llm',
      status: 'finished',
      benchmark: 'longda',
      judgeId: 'none',
      options: {},
      summary: { match: 1 - i },
      pending: 0,
      unjudged: 0,
      detail: { score: { rows } },
    };
    await store.scores.save({
      runId: id,
      benchmark: 'longda',
      judgeId: 'none',
      options: {},
      summary: { match: 1 - i },
      detail,
      pending: 0,
      scoredAt: new Date(Date.UTC(2026, 0, 1) + i).toISOString(),
    });
  }
  item = await ensurePairItem(ann, store, 'run-model-a', 'run-model-b', ['Correctness']);
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ground truth beside each side of a pair', () => {
  it('is refused before the vote in a blind queue and offered after it, per question, on the sides as shown', async () => {
    assert.equal((await pairView(ann, store, item, 'ana', null, true)).view.groundTruth, 'after-vote');
    await assert.rejects(pairGroundTruth(ann, store, item, 'ana', true), /only after your vote/);
    await assert.rejects(pairGroundTruth(ann, store, item, 'ana', true, 'q0'), /only after your vote/);
    const shownLeft = leftSideFor(item.id, 'ana');
    await ann.annotate({
      itemId: item.id,
      annotator: 'ana',
      verdict: pairwiseVerdict(['Correctness'], { Correctness: 'A' }, 'A', '', shownLeft),
      origin: 'panel',
    });
    assert.equal((await pairView(ann, store, item, 'ana', null, true)).view.groundTruth, 'available');
    const list = await pairGroundTruth(ann, store, item, 'ana', true);
    assert.deepEqual(
      list.questions.map((q) => q.ref),
      ['q0', 'q1'],
    );
    assert.equal(list.truth, null, 'the list alone reveals no expected value');
    const t = (await pairGroundTruth(ann, store, item, 'ana', true, 'q1')).truth!;
    assert.equal(t.expected, '1');
    const a = { given: '1', verdict: 'right' };
    const b = { given: '11', verdict: 'wrong' };
    assert.deepEqual([t.left, t.right], shownLeft === 'A' ? [a, b] : [b, a]);
    await assert.rejects(pairGroundTruth(ann, store, item, 'ana', true, 'q9'), /no question 'q9'/);
    // another reviewer who has not voted still sees nothing
    await assert.rejects(pairGroundTruth(ann, store, item, 'ben', true, 'q1'), /only after your vote/);
  });

  it('is offered before a vote when the queue is not blind', async () => {
    assert.equal((await pairView(ann, store, item, 'cleo', null, false)).view.groundTruth, 'available');
    assert.equal((await pairGroundTruth(ann, store, item, 'cleo', false, 'q0')).truth!.expected, '0');
  });
});
