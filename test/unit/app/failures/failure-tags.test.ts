import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AnnotationStore } from '../../../../src/core/annotations/index.ts';
import { longdaReviewSections } from '../../../../src/core/benchmarks/longda/review.ts';
import { sentenceOffsets, tagSpan, tagSteps } from '../../../../src/core/failures/index.ts';
import { builtinTaxonomies, findTaxonomy } from '../../../../src/app/failures/registry.ts';
import type { RunStore } from '../../../../src/core/store/run-store.ts';
import { artefactOfItem, failureTagViews } from '../../../../src/app/failures/failure-tags.ts';
import {
  FIXTURE_REPORT,
  openFailureFixture,
  closeFailureFixture,
  type FailureFixture,
} from '../../../helpers/failure-fixtures.ts';

let rs: RunStore;
let ann: AnnotationStore;
let ids: string[] = [];
const DDR = () => findTaxonomy(builtinTaxonomies(), 'ddr');

let fx: FailureFixture | undefined;
before(async () => {
  fx = await openFailureFixture('loupe-failure-tags-');
  ({ rs, ann, ids } = fx);
});
after(() => closeFailureFixture(fx));

describe('failureTagViews (the tags the timeline and the Failure Analysis panel list)', () => {
  it('lists step ranges and spans of one run, one row per annotator with their latest verdict, nothing of other runs', async () => {
    const [run, other] = [ids[0]!, ids[1]!];
    const c = DDR().classes.map((x) => x.id);
    assert.deepEqual(await failureTagViews(ann, run), []);
    await tagSteps(ann, rs, {
      taxonomy: DDR(),
      classes: [c[0]!],
      severity: 'minor',
      note: 'first try',
      annotator: 'ana',
      origin: 'timeline',
      runId: run,
      from: 1,
      to: 3,
    });
    // the same range again by the same annotator supersedes; another annotator adds a row
    await tagSteps(ann, rs, {
      taxonomy: DDR(),
      classes: [c[1]!, c[0]!],
      severity: 'critical',
      note: 'wrong table',
      annotator: 'ana',
      origin: 'timeline',
      runId: run,
      from: 1,
      to: 3,
    });
    await tagSteps(ann, rs, {
      taxonomy: DDR(),
      classes: [c[2]!],
      severity: 'major',
      annotator: 'bo',
      origin: 'panel',
      runId: run,
      from: 1,
      to: 3,
    });
    const [s, e] = sentenceOffsets(FIXTURE_REPORT)[1]!;
    await tagSpan(ann, rs, {
      taxonomy: DDR(),
      classes: [c[3]!],
      severity: 'major',
      annotator: 'ana',
      runId: run,
      artefact: 'report',
      text: FIXTURE_REPORT,
      start: s,
      end: e,
    });
    await tagSteps(ann, rs, {
      taxonomy: DDR(),
      classes: [c[0]!],
      severity: 'minor',
      annotator: 'ana',
      runId: other,
      from: 0,
      to: 0,
    });

    const tags = await failureTagViews(ann, run);
    const steps = tags.filter((t) => t.kind === 'step');
    assert.equal(steps.length, 2, JSON.stringify(tags));
    const ana = steps.find((t) => t.annotator === 'ana')!;
    assert.deepEqual([ana.from, ana.to, ana.severity, ana.note], [1, 3, 'critical', 'wrong table']);
    // classes in the taxonomy's order, as tagSteps stores them
    assert.deepEqual(ana.classes, [c[0], c[1]]);
    assert.equal(ana.taxonomy, 'ddr');
    assert.equal(ana.annotatorLabel, 'ana');
    assert.equal(steps.find((t) => t.annotator === 'bo')!.severity, 'major');
    const span = tags.find((t) => t.kind === 'span')!;
    assert.deepEqual([span.artefact, span.from, span.to, span.quote], ['report', s, e, FIXTURE_REPORT.slice(s, e)]);
    assert.equal((await failureTagViews(ann, other)).length, 1);
  });
});

describe('artefactOfItem (the text the report pane opens on for an attached item)', () => {
  const answers = ['q1', 'q2', 'q3'].map((q, i) => ({
    runId: 'r',
    queryId: `Brief 508_${q}`,
    answer: i,
    raw: String(i),
    stepIndex: i,
  }));
  const arts = () =>
    (longdaReviewSections(answers) as { sections: Array<{ key: string; title: string }> }).sections.map((x) => ({
      name: x.key,
      title: x.title,
    }));

  it('a LongDA query: the section of that query, not the first', () => {
    assert.equal(artefactOfItem(arts(), 'Brief 508_q3'), 2);
    assert.equal(artefactOfItem(arts(), 'Brief 508_q2'), 1);
  });

  it('by key, then by key after its prefix, then by title; -1 when no text belongs to the item', () => {
    assert.equal(
      artefactOfItem(
        [
          { name: 'report', title: 'Report' },
          { name: 'insights', title: 'Insights' },
        ],
        'insights',
      ),
      1,
    );
    assert.equal(
      artefactOfItem(
        [
          { name: 'a', title: 'Report' },
          { name: 'b', title: 'item 3' },
        ],
        'item 3',
      ),
      1,
    );
    assert.equal(artefactOfItem(arts(), 'Brief 508_q9'), -1);
    assert.equal(artefactOfItem(arts(), ''), -1);
    // a key without a prefix is not matched by its tail
    assert.equal(artefactOfItem([{ name: 'xq1', title: 'X' }], 'q1'), -1);
  });
});
