/** Judges for evaluation: see `types.ts` for the interface, `judge.ts` for implementations. */
export * from './types.ts';
export * from './judge.ts';
export { canonicalText, extractRating, taskDef, PROMPT_VERSION } from './tasks.ts';
export { extractJson, relaxToSchema, validateSchema, type MiniSchema } from './schema.ts';
export { createJudge, parseJudgeKind, JUDGE_KINDS, type JudgeKind, type JudgeSpec } from './factory.ts';
