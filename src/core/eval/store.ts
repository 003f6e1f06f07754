/**
 * Judgements of the run store seen through the judges' typed interface. The rows live in the run store
 * (`RunStore.judgements`, tables created by migration 2 in `src/core/store/migrations.ts`); scores are saved with
 * `RunStore.scores`. Source: issue 8 (judgement storage); issue 12 (one store interface).
 */
import type { RunStore } from '../store/types.ts';
import type { JudgeContext, JudgeTaskName, Judgement, JudgementStore } from './judges/types.ts';

export type { StoredScore } from '../store/records.ts';

/**
 * The judgements of a run store as a {@link JudgementStore} (shared by CLI, UI and the annotation panel).
 * @param store any run store engine.
 */
export function judgementStoreOf(
  store: RunStore,
): JudgementStore & { listForRun(runId: string): Promise<Judgement[]> } {
  const rows = store.judgements;
  return {
    get: async (key: string) => (await rows.get(key)) as Judgement | undefined,
    put: (j: Judgement, ctx: JudgeContext = {}) =>
      rows.put(j, { ...(ctx.runId ? { runId: ctx.runId } : {}), ...(ctx.itemRef ? { itemRef: ctx.itemRef } : {}) }),
    listPending: async (task?: JudgeTaskName) => (await rows.listPending(task)) as Judgement[],
    listForRun: async (runId: string) => (await rows.listForRun(runId)) as Judgement[],
  };
}
