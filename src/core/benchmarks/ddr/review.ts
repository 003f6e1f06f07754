/**
 * DDR-Bench in side-by-side review (issue 16): the final report (I_t) and the message-wise insights (I_m), as the
 * scorer reads them (the recorded `ddr-result` event, else the trajectory).
 */
import type { RunStore } from '../../store/types.ts';
import type { RunRecord } from '../../store/records.ts';
import type { ReviewSource } from '../types.ts';
import { ddrFinalReport, ddrInsightsFromReasoning, readDdrResult } from './toolset.ts';

/** Sections `report` and `insights`, or null when the run has neither. */
export async function ddrReviewSource(store: RunStore, run: RunRecord): Promise<ReviewSource | null> {
  const recorded = await readDdrResult(store, run.id);
  const steps = recorded ? [] : await store.getSteps(run.id);
  const insights = (recorded ? recorded.insights : ddrInsightsFromReasoning(steps)).map((i) => i.insight).filter((x): x is string => !!x);
  const report = recorded ? recorded.finalReport : ddrFinalReport(steps, run.params.finishRule ?? 'paper');
  if (!insights.length && !report) return null;
  return {
    sections: [
      { key: 'report', title: 'Final report', markdown: report ?? '' },
      { key: 'insights', title: `Insights (${insights.length})`, markdown: insights.map((t) => `- ${t.replace(/\n+/g, ' ')}`).join('\n') },
    ],
  };
}
