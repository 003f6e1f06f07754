/**
 * AnalystBench in side-by-side review (issue 16 "See both outputs aligned"): the run's `report.md` (the file the
 * scorer reads), aligned by heading; pairs are voted on the task's checklist criteria.
 */
import { readRunFile } from '../../store/artefacts.ts';
import type { RunRecord } from '../../store/records.ts';
import type { RunFolder } from '../../store/run-folder.ts';
import type { RunStore } from '../../store/types.ts';
import type { Block } from '../../suites/types.ts';
import type { ReviewSource } from '../types.ts';
import { analystState } from './toolset.ts';

/**
 * The report of a run: `report.md` in its workspace (written by `write_report`; a link planted there is never
 * followed), else the copy kept in the store (a colleague's run on the team store, issue 26), whole, to be split at
 * its headings.
 * @param store the run store holding the run; `folder` the run's folder checked against the runs folder (issue 36).
 * @returns `{ markdown }`, or null when there is no report or it is blank (the scorer's "agent generation failure").
 */
export async function analystReviewSource(store: RunStore, folder: RunFolder): Promise<ReviewSource | null> {
  try {
    const md = await readRunFile(store, folder, 'report.md', 'utf8');
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

/**
 * The files of an AnalystBench run that scoring, review, failure tagging and the results export read (issue 26
 * "files an agent wrote that a score or review reads"): `report.md` (the path `write_report` recorded, else the
 * default), the figures the report embeds, then every other figure the run saved and the code cells that made them.
 * @param store the run store; `run` the run (its tool-set state `extra.analyst` is read).
 * @returns workspace-relative paths, most important first, without duplicates (files that do not exist are the
 *   capture's concern: it skips what is not there).
 */
export async function analystEvidenceFiles(store: RunStore, run: Pick<RunRecord, 'id'>): Promise<string[]> {
  const st = analystState(await store.getExtraState(run.id));
  const out = [
    st.report?.path ?? 'report.md',
    'report.md',
    ...(st.report?.figures ?? []),
    ...st.figures.flatMap((f) => [f.path, f.codePath]),
  ];
  return [...new Set(out.filter((p) => typeof p === 'string' && p.length > 0).map((p) => p.replace(/^\.\//, '')))];
}
