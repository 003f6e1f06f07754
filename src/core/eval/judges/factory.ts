/**
 * Builds the judge a scoring asks for, the same way for the CLI (`loupe score --judge`) and the extension
 * (Score Run): `none` (identical-text shortcuts only), `llm` (an OpenAI-compatible endpoint, cached by prompt
 * hash), `human` (the experts' resolved verdicts; other items wait for the annotation panel), `llm+human` (human
 * verdicts where they exist, the LLM elsewhere). Source: issue 8 (judges), issue 12 (judge construction in core).
 */
import { LoupeInputError } from '../../util/errors.ts';
import { ExactOnlyJudge, HumanJudge, HybridJudge, LlmJudge, type HumanResolver } from './judge.ts';
import type { Judge, JudgementStore } from './types.ts';

/** The judge kinds {@link createJudge} builds. */
export const JUDGE_KINDS = ['none', 'llm', 'human', 'llm+human'] as const;
export type JudgeKind = (typeof JUDGE_KINDS)[number];

/** What a judge is built from. */
export interface JudgeSpec {
  kind: JudgeKind;
  /** `llm`: the judge model and endpoint; the key stays in memory. */
  model?: string;
  baseUrl?: string;
  apiKey?: string;
}

/**
 * Checks a judge kind.
 * @param subject what to name in the error (`--judge`, `the setting loupe.judge`).
 * @throws LoupeInputError for an unknown kind.
 */
export function parseJudgeKind(s: string, subject = 'judge'): JudgeKind {
  const k = s.trim().toLowerCase();
  if ((JUDGE_KINDS as readonly string[]).includes(k)) return k as JudgeKind;
  throw new LoupeInputError(subject, `must be one of ${JUDGE_KINDS.join(', ')}, got '${s}'`);
}

/**
 * Builds a judge whose verdicts are cached in (and human items queued in) `store`.
 * @param resolver the experts' resolved verdicts (the annotation store); needed by `human` (else only verdicts
 *   recorded in the judgements table decide) and `llm+human`.
 * @throws LoupeInputError('judge') when an LLM judge has no model or no endpoint.
 */
export function createJudge(spec: JudgeSpec, store: JudgementStore, resolver?: HumanResolver): Judge {
  switch (spec.kind) {
    case 'none':
      return new ExactOnlyJudge(store);
    case 'human':
      return new HumanJudge(store, resolver);
    case 'llm':
    case 'llm+human': {
      if (!spec.model || !spec.baseUrl) {
        throw new LoupeInputError('judge', 'an LLM judge needs a model and an endpoint URL');
      }
      const llm = new LlmJudge({ baseUrl: spec.baseUrl, model: spec.model, apiKey: spec.apiKey ?? '' }, store);
      if (spec.kind === 'llm') return llm;
      if (!resolver) throw new LoupeInputError('judge', 'llm+human needs the annotation store');
      return new HybridJudge(llm, store, resolver);
    }
  }
}
