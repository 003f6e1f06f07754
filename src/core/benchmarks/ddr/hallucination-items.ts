/**
 * DDR-Bench hallucination items (issue 42 defect 4): each message-wise insight split into atomic facts, each checkable
 * fact judged on its own with the steps relevant to it (the queries whose calls or results mention its values or
 * entities, up to the step the insight follows), filler kept apart with the reason it is not judged.
 * Source: DDR-Bench paper §7 (hallucination audit); `src/core/eval/atomic-facts.ts` for the rule.
 */
import type { StepRecord } from '../../store/records.ts';
import { checkability, relevantSteps, splitAtomicFacts } from '../../eval/atomic-facts.ts';

/** One fact to judge: the `hallucination` task's input plus where it came from. */
export interface DdrHallucinationItem {
  /** The fact as a statement (the insight's lead in front). */
  insight: string;
  /** What the agent saw that is relevant to the fact: the relevant steps, each call with its result. */
  evidence: string;
  /** Position of the insight among the run's insights (0-based), and of the fact within it. */
  insightIndex: number;
  factIndex: number;
  /** 0-based indices of the steps in `evidence`. */
  steps: number[];
  /** Terms of the fact that no step up to the insight mentions. */
  unseen: string[];
}

/** A fact not judged: the checkability rule's reason. */
export interface DdrUncheckedFact {
  insightIndex: number;
  text: string;
  reason: string;
}

/** The text of a step as the agent saw it: its message, each tool call and its result. */
export function stepSeenText(s: StepRecord): string {
  return [s.assistant.content ?? '', ...s.toolCalls.map((c) => `${c.name}(${c.argumentsText}) → ${c.observation}`)]
    .filter(Boolean)
    .join('\n');
}

/**
 * The hallucination items of a run's insights.
 * @param insights the insights with the step each follows (`DdrInsight`, null texts skipped).
 * @param steps the run's steps; `maxEvidence` bounds each item's evidence text (characters; the steps nearest the
 *   insight are kept whole first, then the earlier ones in order, each cut at 4,000 characters).
 * @returns the items to judge and the facts shown apart.
 */
export function ddrHallucinationItems(
  insights: ReadonlyArray<{ stepIndex: number; insight: string | null }>,
  steps: readonly StepRecord[],
  maxEvidence = 12_000,
): { items: DdrHallucinationItem[]; unchecked: DdrUncheckedFact[] } {
  const texts = steps.map((s) => ({ index: s.index, text: stepSeenText(s) }));
  const byIndex = new Map(texts.map((t) => [t.index, t.text]));
  const items: DdrHallucinationItem[] = [];
  const unchecked: DdrUncheckedFact[] = [];
  insights.forEach((ins, insightIndex) => {
    if (!ins.insight?.trim()) return;
    for (const f of splitAtomicFacts(ins.insight)) {
      const c = checkability(f.text);
      if (!c.checkable) {
        unchecked.push({ insightIndex, text: f.text, reason: c.reason });
        continue;
      }
      // the fact's own words decide relevance (a shared lead such as "The patient has" would make every step relevant)
      const rel = relevantSteps(f.text, texts, ins.stepIndex);
      // the insight's own step first (what it follows), then the earlier relevant ones newest first, within the bound
      const order = [...rel.steps].reverse();
      const parts: Array<{ index: number; text: string }> = [];
      let used = 0;
      for (const r of order) {
        const t = (byIndex.get(r.index) ?? '').slice(0, 4_000);
        if (used + t.length > maxEvidence && parts.length) break;
        parts.push({ index: r.index, text: t });
        used += t.length;
      }
      parts.sort((a, b) => a.index - b.index);
      items.push({
        insight: f.statement,
        insightIndex,
        factIndex: f.index,
        steps: parts.map((p) => p.index),
        unseen: rel.unseen,
        evidence: parts
          .map((p) => `[step ${p.index + 1}]\n${p.text}`)
          .join('\n\n')
          .slice(0, maxEvidence),
      });
    }
  });
  return { items, unchecked };
}
