/**
 * Failure tags (issue 19) as the panels show them: the tags on a run, read from the one annotation store, for the
 * Failure Analysis panel and the Trajectory Timeline alike (one list, one format), and which text of a run the
 * report pane opens on when a failed item is attached.
 */
import { annotatorLabel, currentAnnotations, type AnnotationStore } from '../../core/annotations/index.ts';
import { FAILURE_TAG_TASK, type FailureTagVerdict } from '../../core/failures/tags.ts';
import type { FailureTagView } from '../../protocol/failures.ts';

/**
 * Every current failure tag on a run (`failure-tag` items of the annotation store, one row per item and annotator:
 * the annotator's latest annotation), steps as 0-based inclusive ranges, spans as [start, end) characters of their
 * artefact. Items whose subject is neither a step range nor a span are left out.
 * @param runId the run's id; a run without tags gives [].
 * @returns rows in the store's item order.
 */
export async function failureTagViews(ann: AnnotationStore, runId: string): Promise<FailureTagView[]> {
  const items = await ann.listItems({ runIds: [runId], task: FAILURE_TAG_TASK });
  const anns = await ann.annotationsByItem({ runIds: [runId], task: FAILURE_TAG_TASK });
  const tags: FailureTagView[] = [];
  for (const i of items) {
    for (const [who, a] of currentAnnotations(anns.get(i.id) ?? []).byAnnotator) {
      const v = a.verdict as FailureTagVerdict;
      const common = {
        itemId: i.id,
        taxonomy: v.taxonomy,
        classes: v.classes,
        severity: v.severity,
        note: a.note,
        annotator: who,
        annotatorLabel: annotatorLabel(who, a.dbRole ? [a.dbRole] : []),
      };
      const s = i.subject;
      if (s.kind === 'step') tags.push({ ...common, kind: 'step', from: s.from, to: s.to });
      else if (s.kind === 'span') {
        tags.push({ ...common, kind: 'span', from: s.start, to: s.end, artefact: s.artefact, quote: s.quote });
      }
    }
  }
  return tags;
}

/**
 * The text of a run (report section, insight list, a query's answer) that belongs to a failed item, so the report
 * pane opens on it: the artefact named `ref`, else the one whose key ends in `:ref` (LongDA's `query:<q_id>`), else
 * the one titled `ref` or `Query <ref>`.
 * @param artefacts the run's texts in pane order (`name` = the review section key, `title` as shown).
 * @param ref the attached item's ref (a query id, `item 3`).
 * @returns its 0-based position, or -1 when no text belongs to the item (then the pane opens on the first).
 */
export function artefactOfItem(artefacts: ReadonlyArray<{ name: string; title: string }>, ref: string): number {
  const r = ref.trim();
  if (!r) return -1;
  const tests: Array<(a: { name: string; title: string }) => boolean> = [
    (a) => a.name === r,
    (a) => a.name.slice(a.name.indexOf(':') + 1) === r && a.name.includes(':'),
    (a) => a.title === r || a.title === `Query ${r}`,
  ];
  for (const t of tests) {
    const i = artefacts.findIndex(t);
    if (i >= 0) return i;
  }
  return -1;
}
