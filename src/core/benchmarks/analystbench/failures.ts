/**
 * AnalystBench failure analysis: checklist criteria a report scored below 3/5 (the paper paired expert comments
 * with these, Table 4), the task as the scenario, and the paper's nine report failure modes. Source: AnalystBench
 * paper Table 4; `../shared/spec/benchmarks.md` §7.2.
 */
import type { BenchmarkFailureAnalysis, FailedItem } from '../types.ts';
import type { RunScore } from '../../eval/run-score.ts';
import type { AnalystChecklistScore } from './eval.ts';
import { ANALYSTBENCH_TAXONOMY } from './taxonomy.ts';

/** Criteria scored below 3 (ref `criterion <n>`, 1-based). */
export function analystFailedItems(score: RunScore): FailedItem[] {
  const c = (score.detail as { checklist?: AnalystChecklistScore } | null)?.checklist;
  return (c?.scores ?? []).flatMap((x, i) => (x.score !== null && x.score < 3 ? [{ ref: `criterion ${i + 1}`, question: x.criterion, detail: `score ${x.score}/5` }] : []));
}

export const ANALYSTBENCH_FAILURE_ANALYSIS: BenchmarkFailureAnalysis = {
  taxonomy: ANALYSTBENCH_TAXONOMY,
  scenario: (s) => s.blockId.replace(/[-_ ]?(v|variant)?\d+$/i, '') || s.blockId,
  failedItems: analystFailedItems,
  insights: null,
};
