/**
 * Issue 39 item 2, on the annotation store: an item whose criterion comes from a judgement's input (read inside the
 * JSON by the store's SQL) and annotations whose verdict, note and annotator hold NUL (U+0000), the JSON escape
 * `\u0000` as text and the escape character of `pg-text.ts` read back exactly through every read the store offers —
 * items (list, get, criterion filter), queues (next item, item at, progress counts), annotations (by item, LLM
 * verdicts, resolution), export, the agreement report — and a `pairs` queue finds pairs of runs whose ids hold NUL.
 * On PostgreSQL the criterion read back as the JSON escape (six characters) and the pair was not found.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { agreementReport, annotationStoreOf } from '../../../../src/core/annotations/index.ts';
import { canonicalJson, sha256 } from '../../../../src/core/eval/judges/index.ts';
import '../../../../src/core/review/pairwise.ts'; // registers the pairwise-vote item kind
import { forEachEngine } from '../../../helpers/store-engines.ts';

/** NUL, the JSON escape as text, backslashes, the escape character and its codes. */
const T = 'C\u0000rit \\u0000 \\\\u0000 \uE000\uE001\uE002 end\u0000';

forEachEngine((e) => {
  it(
    'criterion, verdict, note and annotator holding NUL round-trip through every read of the annotation store',
    { timeout: 60_000 },
    async () => {
      const s = await e.open(await e.fresh());
      try {
        await s.createRun({
          id: 'r1',
          suite: 's',
          blockId: 'b',
          agent: 'llm',
          model: 'm',
          params: {} as never,
          promptHash: 'h',
          toolSet: 't',
          dataChecksums: {},
          loupeVersion: 't',
          sandbox: 'off',
          workspace: '',
        });
        // two criteria (the report has a group per criterion only when there are several), two items each
        const crits = [T, T, 'Depth', 'Depth'];
        const inputs = crits.map((criterion, k) => ({
          instruction: `Do ${T}`,
          response: `Response ${k} ${T}`,
          criterion,
        }));
        for (const [k, input] of inputs.entries()) {
          const inputHash = sha256(`checklist-score\u0000${canonicalJson(input)}`);
          await s.judgements.put(
            {
              key: `llm-${k}`,
              task: 'checklist-score',
              judgeId: 'llm:m',
              inputHash,
              promptHash: 'p',
              input,
              raw: '{}',
              verdict: { score: 4, reason: T },
              status: 'done',
              at: `2026-01-01T00:00:0${k}Z`,
            },
            { runId: 'r1', itemRef: T },
          );
          await s.judgements.put(
            {
              key: `human-${k}`,
              task: 'checklist-score',
              judgeId: 'human',
              inputHash,
              promptHash: null,
              input,
              raw: null,
              verdict: null,
              status: 'pending',
              at: `2026-01-01T00:00:0${k}Z`,
            },
            { runId: 'r1', itemRef: T },
          );
        }
        const ann = annotationStoreOf(s);
        assert.equal(await ann.syncFromJudgements(), 4);

        const items = await ann.listItems();
        assert.deepEqual(
          items.map((i) => i.criterion),
          crits,
          'the criterion read inside the judgement input',
        );
        assert.deepEqual(
          items.map((i) => i.input),
          inputs,
        );
        assert.deepEqual(
          items.map((i) => i.itemRef),
          crits.map(() => T),
        );
        assert.equal((await ann.getItem(items[0]!.id))!.criterion, T);
        assert.equal((await ann.listItems({ criterion: T })).length, 2, 'filter by a criterion holding NUL');
        assert.equal((await ann.listItems({ criterion: 'C\u0000rit' })).length, 2, 'filter by a part of it');

        const annotators = [`ana${T}`, `bo${T}`];
        const q = await ann.openQueue(
          { kind: 'items', task: 'checklist-score' },
          { name: `queue ${T}`, reviewers: 2, blind: false },
        );
        assert.equal((await ann.getQueue(q.id))!.name, `queue ${T}`);
        // the first annotator through the queue; the second annotates the same items directly (the queue serves items a
        // single human verdict has not decided yet)
        const served: string[] = [];
        for (let n = 0; n < 4; n++) {
          const entry = (await ann.nextItem(q.id, annotators[0]!))!;
          assert.ok(entry, `next item ${n}`);
          assert.equal(entry.item.criterion, crits[n]);
          assert.ok(inputs.some((i) => canonicalJson(i) === canonicalJson(entry.item.input)));
          served.push(entry.item.id);
          await ann.annotate({
            itemId: entry.item.id,
            annotator: annotators[0]!,
            verdict: { score: 4, reason: `because ${T}` },
            note: `note ${T}`,
          });
        }
        assert.deepEqual(served.sort(), items.map((i) => i.id).sort());
        for (const id of served) {
          await ann.annotate({
            itemId: id,
            annotator: annotators[1]!,
            verdict: { score: 4, reason: `because ${T}` },
            note: `note ${T}`,
          });
        }
        const at = (await ann.itemAt(q.id, 0))!;
        assert.equal(at.item.criterion, T);
        const progress = await ann.progress(q.id);
        assert.deepEqual(
          [progress.total, progress.done, progress.byAnnotator],
          [4, 4, { [annotators[0]!]: 4, [annotators[1]!]: 4 }],
          'counts per annotator',
        );

        for (const item of items) {
          const got = await ann.annotations(item.id);
          assert.deepEqual(
            got.map((a) => [a.annotator, a.verdict, a.note]).sort(),
            annotators.map((w) => [w, { score: 4, reason: `because ${T}` }, `note ${T}`]).sort(),
          );
          assert.deepEqual((await ann.llmVerdict(item.id))!.verdict, { score: 4, reason: T });
          assert.deepEqual((await ann.resolve(item.id)).verdict, { score: 4, reason: `because ${T}` });
        }
        const byItem = await ann.annotationsByItem({ criterion: T });
        assert.deepEqual(
          [...byItem.values()].map((l) => l.length),
          [2, 2],
        );
        assert.deepEqual(
          [...(await ann.llmVerdicts({ criterion: T })).values()].map((v) => v.verdict),
          [
            { score: 4, reason: T },
            { score: 4, reason: T },
          ],
        );
        const exported = await ann.exportRecords();
        assert.ok(exported.length > 0);
        assert.ok(JSON.stringify(exported).includes(JSON.stringify(T).slice(1, -1)), 'the export holds the exact text');

        const report = await agreementReport(ann, {}, { resamples: 10 });
        assert.deepEqual(
          report.groups.map((g) => g.criterion).sort(),
          [null, T, 'Depth'].sort(),
          'a group per criterion, named exactly',
        );
        const g = report.groups.find((x) => x.criterion === T)!;
        assert.deepEqual([g.items, g.pairableItems, g.annotators.sort()], [2, 2, [...annotators].sort()]);
        assert.equal(report.totals.items, 4);
      } finally {
        await s.close();
      }
    },
  );

  it('a pairs queue finds the pair of runs whose ids hold NUL', { timeout: 60_000 }, async () => {
    const s = await e.open(await e.fresh());
    try {
      const ann = annotationStoreOf(s);
      const [runA, runB] = [`rA${T}`, `rB${T}`];
      await ann.putItem({
        id: `pair ${T}`,
        subject: { kind: 'run-pair', blockId: `b${T}`, runA, runB },
        task: 'pairwise-vote',
        input: { runA, runB },
        inputHash: null,
        criterion: null,
        suite: 's',
        runId: null,
        itemRef: null,
        suiteVersion: 'v',
      });
      const q = await ann.openQueue({ kind: 'pairs', runIds: [runA, runB] }, { name: 'pairs' });
      assert.equal((await ann.progress(q.id)).total, 1);
      const entry = (await ann.nextItem(q.id, 'ana'))!;
      assert.deepEqual(
        [entry.item.id, entry.item.subject],
        [`pair ${T}`, { kind: 'run-pair', blockId: `b${T}`, runA, runB }],
      );
    } finally {
      await s.close();
    }
  });
});
