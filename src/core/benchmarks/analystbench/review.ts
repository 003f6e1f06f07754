/**
 * AnalystBench in side-by-side review (issue 16 "See both outputs aligned"): the run's `report.md` (the file the
 * scorer reads), aligned by heading; pairs are voted on the task's checklist criteria.
 */
import { readRunFile } from '../../store/artefacts.ts';
import type { RunRecord } from '../../store/records.ts';
import type { RunStore } from '../../store/types.ts';
import type { Block } from '../../suites/types.ts';
import type { ReviewSource } from '../types.ts';

/**
 * The report of a run: `report.md` in its workspace (written by `write_report`; a link planted there is never
 * followed), else the copy kept in the store (a colleague's run on the team store, issue 26), whole, to be split at
 * its headings.
 * @param store the run store holding the run.
 * @returns `{ markdown }`, or null when there is no report or it is blank (the scorer's "agent generation failure").
 */
export async function analystReviewSource(store: RunStore, run: Pick<RunRecord, 'id' | 'workspace'>): Promise<ReviewSource | null> {
  try {
    const md = await readRunFile(store, run, 'report.md', 'utf8');
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
