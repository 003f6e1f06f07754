/**
 * DDR-Bench in side-by-side review (issue 16 "See both outputs aligned"): the final report (I_t) and the
 * message-wise insights (I_m), as the scorer reads them — the recorded `ddr-result` run event, else the trajectory.
 */
import type { RunStore } from '../../store/types.ts';
import type { RunRecord, StepRecord } from '../../store/records.ts';
import type { ReviewSource } from '../types.ts';
import { ddrFinalReport, ddrInsightsFromReasoning, type DdrFinishRule, type DdrRunResult } from './toolset.ts';

/**
 * The review sections of a DDR run: `report` (the final report without its `FINISH:` marker) and `insights` (one
 * list item per message-wise insight, "NO INSIGHT" steps left out; DDR has no insight categories, so one section).
 * From `recorded` (the run's `ddr-result` event) when given, else from the steps under the finish rule.
 * @returns the sections, or null when the run has neither a report nor an insight.
 */
export function ddrReviewSections(
  recorded: Pick<DdrRunResult, 'finalReport' | 'insights'> | null,
  steps: readonly StepRecord[],
  rule: DdrFinishRule = 'paper',
): ReviewSource | null {
  const insights = (recorded ? recorded.insights : ddrInsightsFromReasoning([...steps]))
    .map((i) => i.insight?.trim())
    .filter((x): x is string => !!x);
  const report =
    (recorded ? recorded.finalReport : ddrFinalReport([...steps], rule))?.replace(/^\s*FINISH:\s*/, '').trim() ?? '';
  if (!insights.length && !report) return null;
  return {
    sections: [
      { key: 'report', title: 'Final report', markdown: report },
      {
        key: 'insights',
        title: `Insights (${insights.length})`,
        markdown: insights.map((t) => `- ${t.replace(/\s*\n\s*/g, ' ')}`).join('\n'),
      },
    ],
  };
}

/** {@link ddrReviewSections} of a stored run (`BenchmarkReview.sectionsOf`): its last `ddr-result` event, else its steps. */
export async function ddrReviewSource(store: RunStore, run: RunRecord): Promise<ReviewSource | null> {
  const ev = (await store.getEvents(run.id)).filter((e) => e.kind === 'ddr-result').pop();
  let recorded: DdrRunResult | null = null;
  if (ev) {
    try {
      recorded = JSON.parse(ev.message) as DdrRunResult;
    } catch {
      recorded = null; // a damaged event: the trajectory still holds the report
    }
  }
  return ddrReviewSections(recorded, recorded ? [] : await store.getSteps(run.id), run.params.finishRule ?? 'paper');
}
