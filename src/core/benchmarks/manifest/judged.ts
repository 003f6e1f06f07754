/**
 * The judged scorers of manifest benchmarks, on Loupe's judge tasks (`src/core/eval/judges`: LLM, human or both,
 * cached by prompt hash, pending until a human answers):
 * - `llm-judge`: each gold sub-answer (a hypothesis, or one facet of it) against the response with the task
 *   `semantic-match` (kind `text`; the manifest's `rubric` and the question as context), DiscoveryBench-style;
 * - `checklist`: each gold sub-answer is a fact; the response must support it (`checklist-support`, DDR-style:
 *   `CORRECT_INFO` counts);
 * - `rubric`: each gold sub-answer is a criterion scored 1–5 (`checklist-score`, AnalystBench-style, with the
 *   manifest's `rubricLevels`); it counts as met at `passScore` or more (default 4).
 * Source: issue 44; judge tasks of issue 8.
 */
import type { Judge } from '../../eval/judges/types.ts';
import type { Manifest } from './manifest.ts';
import type { ItemResult } from './eval.ts';
import type { PythonScorerInput } from './python-scorer.ts';

/** Item results with the judgements still pending (human) or failed. */
export interface JudgedResults {
  results: ItemResult[];
  pending: number;
  unjudged: number;
}

/**
 * Scores items with the manifest's judged scorer.
 * @param judge the scoring session's judge; `instructionOf` the item's question (context of the judgement).
 * @returns item results (a pending or failed judgement counts as not met) and the counts of pending and failed ones.
 */
export async function scoreJudged(
  m: Manifest,
  inputs: readonly PythonScorerInput[],
  judge: Judge,
  instructionOf: (id: string) => string,
  runId?: string,
): Promise<JudgedResults> {
  const s = m.scoring;
  let pending = 0;
  let unjudged = 0;
  const results: ItemResult[] = [];
  for (const it of inputs) {
    const answered = it.response !== '';
    const subs = [];
    for (const [name, expected] of it.gold.answers) {
      let correct = false;
      if (answered) {
        const ctx = { ...(runId ? { runId } : {}), itemRef: `${it.id}/${name}`, nativeId: { item: it.id, sub: name } };
        const question = instructionOf(it.id);
        if (s.scorer === 'llm-judge') {
          const j = await judge.judge(
            'semantic-match',
            {
              kind: 'text',
              a: it.response,
              b: expected,
              context: [question, s.rubric ?? '', name !== 'answer' ? `Facet: ${name}` : ''].filter(Boolean).join('\n'),
            },
            ctx,
          );
          if (j.status === 'pending') pending++;
          else if (j.status === 'error') unjudged++;
          correct = j.status === 'done' && !!j.verdict?.match;
        } else if (s.scorer === 'checklist') {
          const j = await judge.judge(
            'checklist-support',
            { question: name !== 'answer' ? name : question, answer: expected, report: it.response },
            ctx,
          );
          if (j.status === 'pending') pending++;
          else if (j.status === 'error') unjudged++;
          correct = j.status === 'done' && j.verdict?.label === 'CORRECT_INFO';
        } else {
          const j = await judge.judge(
            'checklist-score',
            {
              instruction: question,
              response: it.response,
              criterion: expected,
              ...(s.rubricLevels ? { rubric: s.rubricLevels } : {}),
            },
            ctx,
          );
          if (j.status === 'pending') pending++;
          else if (j.status === 'error') unjudged++;
          correct = j.status === 'done' && (j.verdict?.score ?? 0) >= (s.passScore ?? 4);
        }
      }
      subs.push({ name, expected, given: answered ? it.response : null, correct });
    }
    results.push({
      id: it.id,
      answered,
      response: it.response,
      subs,
      correct: answered && subs.every((x) => x.correct),
      metadata: it.metadata,
    });
  }
  return { results, pending, unjudged };
}
