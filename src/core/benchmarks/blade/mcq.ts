/**
 * BLADE Task 1 (`blade-mcq`): one model call per multiple-choice question, no tools, the answer
 * letter parsed strictly ({@link parseBladeMcqAnswer}); each question is one committed step, and the
 * answers are kept in the run state (`state.extra.bladeMcq`). Source: spec §1.3.4, §1.2.4.
 */
import type { Block } from '../../suites/types.ts';
import type { BladeMcqItem } from './items.ts';
import type { RunStore } from '../../store/run-store.ts';
import type { AgentRunResult, ModelClient } from '../../agent/loop.ts';
import type { StepRecord } from '../../agent/types.ts';
import { buildBladeMcqPrompt, parseBladeMcqAnswer } from './toolset.ts';

/** One answered MCQ. */
export interface BladeMcqAnswer {
  itemId: string;
  /** Parsed letter, or null when the reply did not parse strictly (counted wrong). */
  answer: string | null;
  raw: string;
  stepIndex: number;
}

/** Run state under `state.extra.bladeMcq`. */
export interface BladeMcqState {
  answers: BladeMcqAnswer[];
}

/**
 * Asks every MCQ of a `blade-mcq` block (continuing after already answered ones on resume).
 * @param o.store / runId: an existing run; `model` answers each question in one call.
 * @returns the final status: `finished` when every question was asked, `failed` on a model error,
 *   `cancelled` when the signal fires.
 */
export async function runBladeMcqBlock(o: {
  store: RunStore;
  runId: string;
  block: Block;
  model: ModelClient;
  signal?: AbortSignal;
}): Promise<AgentRunResult> {
  const { store, runId, block } = o;
  const t0 = performance.now();
  const items = block.items.filter((i): i is BladeMcqItem => i.type === 'blade-mcq');
  const state = ((await store.getExtraState(runId)).bladeMcq as BladeMcqState | undefined) ?? { answers: [] };
  const done = new Set(state.answers.map((a) => a.itemId));
  let stepIndex = (await store.getSteps(runId)).length;
  await store.updateRun(runId, {
    status: 'running',
    statusReason: null,
    startedAt: new Date().toISOString(),
    endedAt: null,
  });
  let status: AgentRunResult['status'] = 'finished';
  let reason = `answered ${items.length} questions`;
  for (const item of items) {
    if (done.has(item.id)) continue;
    if (o.signal?.aborted) {
      status = 'cancelled';
      reason = 'cancelled';
      break;
    }
    const p = buildBladeMcqPrompt(block, item);
    const startedAt = new Date().toISOString();
    let res;
    try {
      res = await o.model.complete(
        [
          { role: 'system', content: p.system },
          { role: 'user', content: p.user },
        ],
        [],
        { signal: o.signal },
      );
    } catch (e) {
      status = 'failed';
      reason = `model call failed on ${item.id}: ${e instanceof Error ? e.message : String(e)}`;
      break;
    }
    const raw = res.message.content ?? '';
    state.answers.push({
      itemId: item.id,
      answer: parseBladeMcqAnswer(
        raw,
        item.options.map((x) => x.label),
      ),
      raw,
      stepIndex,
    });
    const step: StepRecord = {
      runId,
      index: stepIndex,
      startedAt,
      endedAt: new Date().toISOString(),
      latencyMs: res.latencyMs,
      toolMs: 0,
      assistant: res.message,
      toolCalls: [],
      extraMessages: [],
      usage: res.usage,
      costUsd: res.costUsd,
      finishReason: res.finishReason,
    };
    await store.commitStep(step, { extra: { bladeMcq: state } });
    stepIndex++;
  }
  await store.updateRun(runId, {
    status,
    statusReason: reason,
    endedAt: new Date().toISOString(),
    addDurationMs: performance.now() - t0,
  });
  return { runId, status, reason, steps: stepIndex };
}

/**
 * MCQ accuracy of a run: correct answers / questions asked (unparsed answers count as wrong).
 * Source: spec §1.3.4 ("Unparseable answers count as wrong").
 * @param block the `blade-mcq` block (its hidden `mcqs` hold the correct labels).
 */
export function bladeMcqAccuracy(
  block: Block,
  answers: BladeMcqAnswer[],
): { correct: number; total: number; accuracy: number } {
  const key = new Map((block.hidden.mcqs?.mcqs ?? []).map((m) => [m.id, m.correctLabel]));
  const correct = answers.filter((a) => a.answer !== null && key.get(a.itemId) === a.answer).length;
  return { correct, total: answers.length, accuracy: answers.length ? correct / answers.length : 0 };
}
