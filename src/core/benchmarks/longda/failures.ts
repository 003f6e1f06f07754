/**
 * LongDA failure analysis: queries a run answered wrong (match below 1 under the selected list scoring, or no
 * answer), the survey as the scenario, and Loupe's own LongDA taxonomy. Source: issue 19; LongTA `metric.py`
 * (match) as scored in `eval.ts`.
 */
import type { BenchmarkFailureAnalysis, FailedItem } from '../types.ts';
import type { RunScore } from '../../eval/run-score.ts';
import type { LongdaRunDetail } from './score.ts';
import { LONGDA_TAXONOMY } from './taxonomy.ts';

const show = (v: unknown) => (v === null || v === undefined ? 'no answer' : JSON.stringify(v));

/** Queries of a LongDA score with match < 1 (ref = the query id), each with expected and given values. */
export function longdaFailedItems(score: RunScore): FailedItem[] {
  const rows = (score.detail as LongdaRunDetail | null)?.score?.rows ?? [];
  return rows
    .filter((r) => r.match < 1)
    .map((r) => ({
      ref: r.qId,
      question: `${r.survey} ${r.source} query ${r.internalId} (${r.answerStructure})`,
      detail: `expected ${show(r.expected)}, got ${r.rawAnswer === null ? 'no answer' : show(r.given)}`,
    }));
}

export const LONGDA_FAILURE_ANALYSIS: BenchmarkFailureAnalysis = {
  taxonomy: LONGDA_TAXONOMY,
  scenario: (s) => (s.detail as LongdaRunDetail | null)?.score?.rows?.[0]?.survey ?? s.blockId,
  failedItems: longdaFailedItems,
  insights: null,
};
