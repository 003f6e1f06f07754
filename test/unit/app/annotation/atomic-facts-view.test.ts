/** Issue 43: the annotation panel's atomic facts — claims of an item, facts as they stand (expert split, else the rule), steps per fact. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore } from '../../../../src/core/store/run-store.ts';
import type { RunStore } from '../../../../src/core/store/types.ts';
import { annotationStoreOf, type AnnotationItem } from '../../../../src/core/annotations/index.ts';
import { claimFactsViews, claimsOfItem, saveFactSplit } from '../../../../src/app/annotation/annotation.ts';
import { PARENT, seedForkPair } from '../../../helpers/fork-fixture.ts';

let dir = '';
let store: RunStore;
const CLAIM = 'Mean income: 1. 41.5 overall 2. median 38 <b>bold</b>';
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-facts-view-'));
  store = openStore(join(dir, 'runs.sqlite'));
  await seedForkPair(store, dir);
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});
const item = (): AnnotationItem => ({
  id: 'j:claim-support:x',
  subject: { kind: 'judgement', task: 'claim-support', inputHash: 'x' },
  task: 'claim-support',
  schemaVersion: 'v',
  input: { claim: CLAIM, sources: 's' },
  inputHash: 'x',
  criterion: null,
  suite: 'analystbench',
  runId: PARENT,
  itemRef: null,
  suiteVersion: 'unknown',
  createdAt: '',
});

describe('annotation panel: atomic facts (issue 43)', () => {
  it('claims of an item by task; none for other tasks', () => {
    assert.deepEqual(claimsOfItem('claim-support', { claim: 'a' }), [{ index: 0, source: 'claim', text: 'a' }]);
    assert.deepEqual(
      claimsOfItem('hallucination', { insight: 'b', evidence: '' }).map((c) => c.source),
      ['insight'],
    );
    assert.equal(claimsOfItem('checklist-support', { insights: ['x', 'y'] }).length, 2);
    assert.deepEqual(claimsOfItem('checklist-score', { response: 'r' }), []);
  });

  it('the rule proposes facts, each with the steps that mention its values; an expert split replaces it', async () => {
    const ann = annotationStoreOf(store);
    let v = await claimFactsViews(ann, store, item());
    assert.equal(v[0]!.from, 'rule');
    assert.deepEqual(v[0]!.facts, ['Mean income: 41.5 overall', 'Mean income: median 38 <b>bold</b>']);
    assert.deepEqual(v[0]!.steps[0], [1], 'the step whose text mentions "income" and 41.5... is linked');
    await saveFactSplit(ann, item(), 0, ['Mean income was 41.5', ' Median income was 38 '], 'ana');
    v = await claimFactsViews(ann, store, item());
    assert.equal(v[0]!.from, 'expert');
    assert.equal(v[0]!.by, 'ana');
    assert.deepEqual(v[0]!.facts, ['Mean income was 41.5', 'Median income was 38']);
    await assert.rejects(
      saveFactSplit(ann, item(), 3, ['x'], 'ana'),
      /claim 4 of item j:claim-support:x: is not a claim of this item/,
    );
  });
});
