/**
 * DDR-Bench failure analysis: checklist items a run's score judged not supported (DDR §6 samples from these),
 * the scenario of a run (MIMIC / GLOBEM / 10-K, the columns of Fig. 8 and Table 6) and the run's insights for the
 * hallucination audit (§7). Source: DDR-Bench paper §6, §7; `../shared/spec/benchmarks.md` §7.1.
 */
import type { RunScore } from '../../eval/run-score.ts';
import type { RunRecord } from '../../store/records.ts';
import type { RunStore } from '../../store/types.ts';
import type { BenchmarkFailureAnalysis, FailedItem, ItemOutcome, RunInsight } from '../types.ts';
import type { DdrChecklistScore } from './eval.ts';
import { ddrFinalReport, ddrInsightsFromReasoning, readDdrResult } from './toolset.ts';
import { DDR_TAXONOMY } from './taxonomy.ts';

/**
 * Checklist items of a DDR score judged incorrect: judged in at least one context (I_m, I_t) and CORRECT_INFO in
 * none — the paper's "checklist items judged incorrectly supported by the model's insights" (§6).
 * @returns one entry per such item, ref `item <n>` (1-based checklist position); empty for a score without detail.
 */
export function ddrFailedItems(score: RunScore): FailedItem[] {
  const d = score.detail as { checklist?: DdrChecklistScore } | null;
  const e = d?.checklist?.perEntity?.[0];
  if (!e) return [];
  const out: FailedItem[] = [];
  const m = new Map(e.messageWise.items.map((i) => [i.index, i]));
  const t = new Map(e.trajectoryWise.items.map((i) => [i.index, i]));
  for (const idx of [...new Set([...m.keys(), ...t.keys()])].sort((a, b) => a - b)) {
    const a = m.get(idx);
    const b = t.get(idx);
    const labels = [a?.label, b?.label];
    if (labels.every((l) => l == null) || labels.includes('CORRECT_INFO')) continue;
    out.push({
      ref: `item ${idx + 1}`,
      question: (a ?? b)!.question,
      detail: `I_m ${a?.label ?? 'unjudged'}, I_t ${b?.label ?? 'unjudged'}`,
    });
  }
  return out;
}

/**
 * The checklist items of a DDR score with their verdicts under the message-wise context (the paper's headline
 * accuracy, I_m): `right` for CORRECT_INFO, `wrong` for another label, `pending` while unjudged; `given` names both
 * contexts' labels. Source: DDR-Bench §3.4 (`evaluate_qa_with_message_list`).
 * @returns one entry per item (ref `item <n>`, 1-based); empty for a score without detail.
 */
export function ddrItemOutcomes(score: RunScore): ItemOutcome[] {
  const e = (score.detail as { checklist?: DdrChecklistScore } | null)?.checklist?.perEntity?.[0];
  if (!e) return [];
  const t = new Map(e.trajectoryWise.items.map((i) => [i.index, i]));
  return e.messageWise.items.map((i) => ({
    ref: `item ${i.index + 1}`,
    question: i.question,
    verdict: i.label === null ? 'pending' : i.label === 'CORRECT_INFO' ? 'right' : 'wrong',
    credit: i.label === null ? null : i.label === 'CORRECT_INFO' ? 1 : 0,
    given: `I_m ${i.label ?? 'unjudged'}, I_t ${t.get(i.index)?.label ?? 'unjudged'}`,
    expected: '',
  }));
}

/** The run's message-wise insights (valid ones) then its final report, for the hallucination audit. */
async function ddrRunInsights(store: RunStore, run: RunRecord): Promise<RunInsight[]> {
  const rec = await readDdrResult(store, run.id);
  const steps = rec ? [] : await store.getSteps(run.id);
  const ins = rec ? rec.insights : ddrInsightsFromReasoning(steps);
  const out: RunInsight[] = [];
  for (const i of ins) {
    if (i.insight && i.insight.trim()) out.push({ index: out.length, text: i.insight.trim(), stepIndex: i.stepIndex });
  }
  const report = rec ? rec.finalReport : ddrFinalReport(steps, run.params.finishRule === 'code' ? 'code' : 'paper');
  if (report?.trim()) out.push({ index: out.length, text: report.trim(), stepIndex: null });
  return out;
}

export const DDR_FAILURE_ANALYSIS: BenchmarkFailureAnalysis = {
  taxonomy: DDR_TAXONOMY,
  scenario: (s) => String(s.options.scenario ?? 'unknown'),
  failedItems: ddrFailedItems,
  insights: ddrRunInsights,
};
