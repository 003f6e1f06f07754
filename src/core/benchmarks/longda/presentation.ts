/**
 * How LongDA's scores are shown: the Results-view table (coverage and match weighted by queries, then steps,
 * tokens and time), match against total tokens (LongDA paper Figure 4), tool-usage heatmaps (Figure 8).
 * Source: LongDA paper §5 (Figures 4 and 8); issue 12 (presentation behind the registry).
 */
import type { BenchmarkPresentation, ItemOutcome } from '../types.ts';
import type { RunScore } from '../../eval/run-score.ts';
import { countToolCallsInCode, LONGDA_TOOLS, toolUsageHeatmap } from './eval.ts';
import type { LongdaRunDetail } from './score.ts';

/**
 * Tool names a step called: function-call names, plus LongTA helper calls inside submitted code (code actions).
 * @param toolCalls the step's calls (name and arguments as sent). @returns tool names in call order.
 */
export function longdaStepTools(toolCalls: ReadonlyArray<{ name: string; argumentsText: string }>): string[] {
  const out: string[] = [];
  for (const c of toolCalls) {
    if ((LONGDA_TOOLS as readonly string[]).includes(c.name)) {
      out.push(c.name);
      continue;
    }
    let code = '';
    try {
      const a = JSON.parse(c.argumentsText) as { code?: unknown };
      if (typeof a.code === 'string') code = a.code;
    } catch {
      code = '';
    }
    if (code) out.push(...countToolCallsInCode(code));
  }
  return out;
}

const valueText = (v: unknown): string => (v === null || v === undefined ? '' : JSON.stringify(v));

/**
 * The queries of a LongDA score with their verdicts: `right` when match is 1 under the score's list scoring, `partial`
 * for a list matched in part, `wrong` for 0, `unanswered` without an answer; given and expected values as JSON text.
 * @param s a LongDA run score (detail {@link LongdaRunDetail}). @returns one entry per query (ref = LongTA q_id), in
 *   the block's order; empty for a score without detail. Source: LongTA `metric.py` (match), as scored in `eval.ts`.
 */
export function longdaItemOutcomes(s: RunScore): ItemOutcome[] {
  const rows = (s.detail as LongdaRunDetail | null)?.score?.rows ?? [];
  return rows.map((r) => ({
    ref: r.qId,
    question: `${r.survey} ${r.source} query ${r.internalId} (${r.answerStructure})`,
    verdict: r.rawAnswer === null ? 'unanswered' : r.match >= 1 ? 'right' : r.match > 0 ? 'partial' : 'wrong',
    credit: r.match,
    given: r.rawAnswer === null ? '' : valueText(r.given),
    expected: valueText(r.expected),
  }));
}

export const LONGDA_PRESENTATION: BenchmarkPresentation = {
  tableTitle: 'LongDA',
  mainMetric: { key: 'match', label: 'LongDA match', percent: true },
  resultsColumns: {
    rates: [
      {
        key: 'coverage',
        label: 'Coverage',
        description: 'Share of queries with a comparable answer (option coverage)',
      },
      {
        key: 'match',
        label: 'Match',
        description: 'Share of queries within tolerance max(eps·|a|, 1) (option list_scoring)',
      },
    ],
    weightKeys: ['queries', 'n'],
  },
  tokenEfficiency: {
    rate: 'match',
    title: 'LongDA match vs total tokens',
    point(s) {
      const d = s.detail as LongdaRunDetail;
      if (d.tokensUnknown) return null;
      return {
        inputTokens: d.efficiency.inputTokens,
        outputTokens: d.efficiency.outputTokens,
        matchSum: d.score.match * d.score.n,
        coverageSum: d.score.coverage * d.score.n,
        queries: d.score.n,
      };
    },
  },
  toolUsage: {
    stepTools: longdaStepTools,
    heatmap: (trajectories, opts) => toolUsageHeatmap(trajectories, opts),
    fromScore(s) {
      const d = s.detail as LongdaRunDetail;
      return { steps: d.toolSteps ?? [], tools: d.heatmap.tools };
    },
  },
  categoryCis: null,
  itemOutcomes: longdaItemOutcomes,
};
