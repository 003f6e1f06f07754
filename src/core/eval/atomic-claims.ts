/**
 * Atomic claims (issue 43): compound insights (DDR-Bench) and report claims (AnalystBench) split into atomic facts
 * before judging — by the LLM judge (task `fact-decomposition`), by the list-marker rule of `atomic-facts.ts`, or by an
 * expert (an append-only `fact-split` annotation, applied by the caller) — each fact linked to the steps (SQL queries,
 * notebook cells) whose calls or results mention its values or entities. The scoring option `claims` says whether a
 * benchmark's score counts whole claims (the official reading) or atomic facts.
 * Source: FActScore (Min et al., 2023) for the atomic-fact unit; DDR-Bench paper §4 and §7; AnalystBench paper §4.3(c);
 * `atomic-facts.ts` for the rule split and step relevance.
 */
import { LoupeInputError } from '../util/errors.ts';
import { mapLimit } from './judges/judge.ts';
import type { Judge, JudgeContext } from './judges/types.ts';
import { relevantSteps, splitAtomicFacts, type StepText } from './atomic-facts.ts';
import type { StepRecord } from '../store/records.ts';

/** How a benchmark's score counts claims: `whole` (the benchmark's own unit) or `atomic` (one per atomic fact). */
export type ClaimsMode = 'whole' | 'atomic';
/** Who splits a claim when no expert did: the LLM judge, or the list-marker rule (no model call). */
export type FactSplitMode = 'judge' | 'rule';
/** Where a claim's facts came from: the judge, the rule (also the fallback when the judge failed), or an expert. */
export type FactSource = 'judge' | 'rule' | 'expert';

/** The values of the `claims` scoring option. */
export const CLAIMS_MODES: readonly ClaimsMode[] = ['whole', 'atomic'];
/** The values of the `fact_split` scoring option. */
export const FACT_SPLIT_MODES: readonly FactSplitMode[] = ['judge', 'rule'];

/** One claim split into facts. */
export interface DecomposedClaim {
  /** 0-based position of the claim among those given. */
  index: number;
  /** The claim as written. */
  text: string;
  /** Its atomic facts (the claim itself when it is atomic; none for a blank claim). */
  facts: string[];
  source: FactSource;
  /** Why the rule was used when the judge was asked (its error), else absent. */
  fallback?: string;
}

/**
 * Splits claims into atomic facts.
 * @param texts the claims (insights, report claims) in order.
 * @param o `mode` judge or rule; `judge` required for `judge` mode (a judge `none` falls back to the rule);
 *   `expert` claim text → facts an expert recorded (used as is, before any judge call); `ctx` the judge context
 *   (run id; each call's `itemRef` is `decomposition <n>`); `concurrency` parallel judge calls (default 4).
 * @returns one {@link DecomposedClaim} per text, in order. A judge reply with no fact for a non-blank claim, or a
 *   failed / pending judgement, falls back to the rule (recorded in `fallback`).
 * @throws LoupeInputError for an unknown mode.
 */
export async function decomposeClaims(
  texts: readonly string[],
  o: {
    mode: FactSplitMode;
    judge?: Judge;
    expert?: ReadonlyMap<string, readonly string[]>;
    ctx?: JudgeContext;
    concurrency?: number;
  },
): Promise<DecomposedClaim[]> {
  if (!FACT_SPLIT_MODES.includes(o.mode)) {
    throw new LoupeInputError(
      'option fact_split',
      `must be one of ${FACT_SPLIT_MODES.join(', ')}, got '${String(o.mode)}'`,
    );
  }
  const rule = (t: string) => splitAtomicFacts(t).map((f) => f.statement);
  const useJudge = o.mode === 'judge' && o.judge && o.judge.id !== 'none';
  return mapLimit(texts, o.concurrency ?? 4, async (text, index): Promise<DecomposedClaim> => {
    const mine = o.expert?.get(text);
    if (mine) return { index, text, facts: [...mine], source: 'expert' };
    if (!text.trim()) return { index, text, facts: [], source: 'rule' };
    if (!useJudge) return { index, text, facts: rule(text), source: 'rule' };
    const j = await o.judge!.judge(
      'fact-decomposition',
      { text },
      { ...(o.ctx ?? {}), itemRef: `decomposition ${index + 1}` },
    );
    if (j.status === 'done' && j.verdict!.facts.length) {
      return { index, text, facts: j.verdict!.facts, source: 'judge' };
    }
    const why =
      j.status === 'done'
        ? 'the judge returned no fact'
        : j.status === 'pending'
          ? 'the judgement is pending'
          : `the judge failed (${j.error ?? 'no reply'})`;
    return { index, text, facts: rule(text), source: 'rule', fallback: why };
  });
}

/** One atomic fact with the claim it came from and the steps that support it. */
export interface LinkedFact {
  /** 0-based position among all facts of the run (the index a judge sees when facts are judged as a list). */
  index: number;
  /** The claim it belongs to and its position within it. */
  claim: number;
  part: number;
  text: string;
  source: FactSource;
  /** 0-based step indices whose calls or results mention the fact's terms (the SQL queries / cells that support it). */
  steps: number[];
  /** Terms of the fact that no step mentions. */
  unseen: string[];
}

/**
 * Flattens decomposed claims into facts, each linked to the steps relevant to it.
 * @param claims from {@link decomposeClaims}; `steps` the run's step texts; `upTo` per claim, the last step whose
 *   text counts (DDR: the step the insight follows; a report: the last step), or one number for every claim.
 * @returns the facts in claim order.
 */
export function linkFacts(
  claims: readonly DecomposedClaim[],
  steps: readonly StepText[],
  upTo: number | ((claim: number) => number),
): LinkedFact[] {
  const out: LinkedFact[] = [];
  for (const c of claims) {
    const bound = typeof upTo === 'number' ? upTo : upTo(c.index);
    c.facts.forEach((text, part) => {
      const rel = relevantSteps(text, steps, bound);
      // the bound step is always listed by relevantSteps; keep it only when it mentions something
      const hit = rel.steps.filter((s) => s.terms.length).map((s) => s.index);
      out.push({ index: out.length, claim: c.index, part, text, source: c.source, steps: hit, unseen: rel.unseen });
    });
  }
  return out;
}

/**
 * The units a score counts under a claims mode: the claims as written (`whole`) or their facts (`atomic`).
 * @returns texts in order (blank claims and claims without facts are left out).
 */
export function unitsOf(claims: readonly DecomposedClaim[], mode: ClaimsMode): string[] {
  return mode === 'whole' ? claims.map((c) => c.text).filter((t) => t.trim()) : claims.flatMap((c) => c.facts);
}

/**
 * The text of a step as a fact is linked to it: the model's message, then each tool call with its arguments and result
 * (SQL query and rows, notebook cell code and output).
 * @returns `{ index, text }` for {@link linkFacts}.
 */
export function stepTextOf(s: Pick<StepRecord, 'index' | 'assistant' | 'toolCalls'>): StepText {
  return {
    index: s.index,
    text: [s.assistant.content ?? '', ...s.toolCalls.map((c) => `${c.name}(${c.argumentsText}) → ${c.observation}`)]
      .filter(Boolean)
      .join('\n'),
  };
}
