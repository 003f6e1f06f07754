/**
 * AnalystBench failure analysis: checklist criteria a report scored below 3/5 (the paper paired expert comments
 * with these, Table 4), the task as the scenario, and the paper's nine report failure modes. Source: AnalystBench
 * paper Table 4; `../shared/spec/benchmarks.md` §7.2.
 */
import type { BenchmarkFailureAnalysis, FailedItem, ItemOutcome } from '../types.ts';
import type { RunScore } from '../../eval/run-score.ts';
import type { AnalystChecklistScore } from './eval.ts';
import { ANALYSTBENCH_TAXONOMY } from './taxonomy.ts';

/** Criteria scored below 3 (ref `criterion <n>`, 1-based). */
export function analystFailedItems(score: RunScore): FailedItem[] {
  const c = (score.detail as { checklist?: AnalystChecklistScore } | null)?.checklist;
  return (c?.scores ?? []).flatMap((x, i) =>
    x.score !== null && x.score < 3
      ? [{ ref: `criterion ${i + 1}`, question: x.criterion, detail: `score ${x.score}/5` }]
      : [],
  );
}

/**
 * The checklist criteria of an AnalystBench score with their verdicts: 5/5 `right`, 1–4 `partial` (credit score/5),
 * 0 `wrong`, unscored `pending`; `given` is the score and the judge's reason. Source: spec §4.3(b).
 * @returns one entry per criterion (ref `criterion <n>`, 1-based).
 */
export function analystItemOutcomes(score: RunScore): ItemOutcome[] {
  const c = (score.detail as { checklist?: AnalystChecklistScore } | null)?.checklist;
  return (c?.scores ?? []).map((x, i) => ({
    ref: `criterion ${i + 1}`,
    question: x.criterion,
    verdict: x.score === null ? 'pending' : x.score >= 5 ? 'right' : x.score > 0 ? 'partial' : 'wrong',
    credit: x.score === null ? null : x.score / 5,
    given: x.score === null ? '' : `score ${x.score}/5${x.reason ? ` — ${x.reason}` : ''}`,
    expected: '',
  }));
}

export const ANALYSTBENCH_FAILURE_ANALYSIS: BenchmarkFailureAnalysis = {
  taxonomy: ANALYSTBENCH_TAXONOMY,
  scenario: (s) => s.blockId.replace(/[-_ ]?(v|variant)?\d+$/i, '') || s.blockId,
  failedItems: analystFailedItems,
  insights: null,
};
