/**
 * The review source of benchmarks whose output is a set of answers (issue 16): one section per query.
 * Kept apart from `sources.ts` so benchmark definitions can use it without importing the registry.
 */
import type { ReviewSource } from './types.ts';
import type { AnswerRecord } from '../store/records.ts';

/**
 * The review source of answers alone: one section per query, its answer as written (benchmarks whose output is a
 * set of answers: BLADE MCQ, test benchmarks). @returns null when there is no answer.
 */
export function answerSections(answers: readonly AnswerRecord[]): ReviewSource | null {
  if (!answers.length) return null;
  return {
    sections: answers.map((a) => ({
      key: `query:${a.queryId}`,
      title: a.queryId,
      markdown: a.raw || (typeof a.answer === 'string' ? a.answer : JSON.stringify(a.answer)),
    })),
  };
}
