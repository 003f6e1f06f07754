/**
 * LongDA in side-by-side review (issue 16 "See both outputs aligned"): one section per query with the answer as
 * recorded, so two runs align query by query and each number links to the cell that computed it.
 */
import type { RunStore } from '../../store/types.ts';
import type { AnswerRecord, RunRecord } from '../../store/records.ts';
import type { ReviewSource } from '../types.ts';

/**
 * The review sections of a LongDA run's answers (`answer` tool, queryId = the LongDA question id `q_id`): one
 * section `query:<q_id>` titled `Query <q_id>` per question, in the order first answered, holding the last answer
 * recorded for it — as the agent wrote it (`raw`), else the value (a list as `[a, b]`).
 * @returns the sections, or null when the run answered nothing.
 */
export function longdaReviewSections(answers: readonly AnswerRecord[]): ReviewSource | null {
  if (!answers.length) return null;
  const last = new Map<string, string>();
  for (const a of answers) {
    last.set(a.queryId, a.raw?.trim() || (Array.isArray(a.answer) ? `[${a.answer.join(', ')}]` : String(a.answer)));
  }
  return { sections: [...last].map(([q, text]) => ({ key: `query:${q}`, title: `Query ${q}`, markdown: text })) };
}

/** {@link longdaReviewSections} of a stored run (`BenchmarkReview.sectionsOf`). */
export async function longdaReviewSource(store: RunStore, run: RunRecord): Promise<ReviewSource | null> {
  return longdaReviewSections(await store.getAnswers(run.id));
}
