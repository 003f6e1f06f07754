/**
 * LongDA's per-run state (issue 40: off the generic `RunState`): the answers its `answer` tool recorded, its notebook
 * (`notes`) and the last `save_code`, as LongTA keeps them per block. Declared here by declaration merging into
 * `agent/types.ts` `BenchmarkRunStates`; kept in the run store's answers, notes and saved-code rows (the rows stores
 * written before this change hold), restored on resume and written with each step by {@link LONGDA_RUN_STATE}.
 * Source: LongTA `main.py` (tools `answer`, `notes`, `save_code`).
 */
import type { AnswerValue, RunState, ToolSetRunState } from '../../agent/types.ts';
import type { AnswerRecord } from '../../store/records.ts';

/** LongDA's state of one run. */
export interface LongdaRunState {
  /** q_id → the recorded answer, its raw text and the step that recorded it. */
  answers: Map<string, { answer: AnswerValue; raw: string; stepIndex: number }>;
  /** The block's notebook. */
  notes: string[];
  /** Last `save_code` (LongTA: the last call wins), or null. */
  savedCode: string | null;
}

declare module '../../agent/types.ts' {
  interface BenchmarkRunStates {
    longda: LongdaRunState;
  }
}

/**
 * LongDA's state of a run, created empty when the run has none yet (a tool called outside the loop).
 * @param state the run's state. @returns the state, the same object on every call.
 */
export function longdaRunState(state: RunState): LongdaRunState {
  return (state.benchmark.longda ??= { answers: new Map(), notes: [], savedCode: null });
}

interface LongdaSnapshot {
  answers: Map<string, string>;
  notes: string;
  code: string | null;
}

/** How the agent loop keeps {@link LongdaRunState}: answers, notes and saved code are rows of the run store. */
export const LONGDA_RUN_STATE: ToolSetRunState = {
  init(state) {
    longdaRunState(state);
  },
  async restore(state, store, runId) {
    const s = longdaRunState(state);
    for (const a of await store.getAnswers(runId)) {
      s.answers.set(a.queryId, { answer: a.answer, raw: a.raw, stepIndex: a.stepIndex });
    }
    s.notes = await store.getNotes(runId);
    s.savedCode = await store.getSavedCode(runId);
    return `${s.answers.size} answers restored`;
  },
  snapshot(state): LongdaSnapshot {
    const s = longdaRunState(state);
    return {
      answers: new Map([...s.answers].map(([k, v]) => [k, JSON.stringify(v)])),
      notes: JSON.stringify(s.notes),
      code: s.savedCode,
    };
  },
  effects(before, state, runId, stepIndex) {
    const b = before as LongdaSnapshot;
    const s = longdaRunState(state);
    const answers: AnswerRecord[] = [];
    for (const [q, v] of s.answers) {
      if (b.answers.get(q) !== JSON.stringify(v)) {
        answers.push({ runId, queryId: q, answer: v.answer, raw: v.raw, stepIndex });
      }
    }
    return {
      answers,
      ...(JSON.stringify(s.notes) !== b.notes ? { notes: [...s.notes] } : {}),
      ...(s.savedCode !== b.code && s.savedCode != null ? { savedCode: s.savedCode } : {}),
    };
  },
};
