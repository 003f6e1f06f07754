/**
 * LongDA in side-by-side review (issue 16): one section per query with the answer as recorded, so two runs align
 * query by query and each number links to the cell that computed it.
 */
import type { RunStore } from '../../store/types.ts';
import type { RunRecord } from '../../store/records.ts';
import type { ReviewSource } from '../types.ts';

/** Sections `query:<id>` (answers in first-recorded order; the last answer of a query wins), or null without answers. */
export async function longdaReviewSource(store: RunStore, run: RunRecord): Promise<ReviewSource | null> {
  const answers = await store.getAnswers(run.id);
  if (!answers.length) return null;
  const last = new Map<string, string>();
  for (const a of answers) last.set(a.queryId, a.raw || (typeof a.answer === 'string' ? a.answer : JSON.stringify(a.answer)));
  return { sections: [...last].map(([q, text]) => ({ key: `query:${q}`, title: `Query ${q}`, markdown: text })) };
}
