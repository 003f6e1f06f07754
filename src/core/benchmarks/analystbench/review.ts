/**
 * AnalystBench in side-by-side review (issue 16): the run's `report.md` (the file the scorer reads), aligned by
 * heading; pairs are voted on the task's checklist criteria.
 */
import type { RunRecord } from '../../store/records.ts';
import type { Block } from '../../suites/types.ts';
import { readContainedFile } from '../../util/contained.ts';
import type { ReviewSource } from '../types.ts';

/** The report of a run, or null when it wrote none (the scorer's "agent generation failure"). */
export async function analystReviewSource(run: RunRecord): Promise<ReviewSource | null> {
  try {
    const md = readContainedFile(run.workspace, 'report.md', 'utf8') as string;
    return md.trim() ? { markdown: md } : null;
  } catch {
    return null;
  }
}

/** The task's checklist items as review criteria (their questions), or null when it has none. */
export function analystReviewCriteria(block: Block): string[] | null {
  const c = (block.hidden.checklist ?? []).map((i) => i.question.trim()).filter(Boolean);
  return c.length ? c : null;
}
