/**
 * The annotation model (items, annotations, queues, resolution, agreement) and the store interface.
 * Source: issue 14; `../shared/spec/annotation.md`.
 */
import type { HumanResolver } from '../eval/judges/judge.ts';
import { sqliteHandleOf } from '../store/run-store.ts';
import { storeSqlOf } from '../store/store-sql.ts';
import type { RunStore } from '../store/types.ts';
import { SqlAnnotationStore, SqliteAnnotationStore, type AnnotationStore } from './store.ts';

export * from './model.ts';
export * from './store.ts';
export {
  agreementReport,
  type AgreementGroup,
  type AgreementReport,
  type Estimate,
  type JudgeHumanAgreement,
} from './agreement.ts';

/**
 * Annotation store factories per run-store engine (a second engine adds one line here): one implementation over the
 * run store's `StoreSql`; SQLite's also takes the handle (its bulk sync checkpoints the WAL on a worker thread).
 */
const ENGINES: Record<string, (store: RunStore) => AnnotationStore> = {
  sqlite: (store) => new SqliteAnnotationStore(sqliteHandleOf(store)),
  postgres: (store) => new SqlAnnotationStore(storeSqlOf(store, 'annotations')),
};

/**
 * The annotation store kept with a run store (same database, same engine).
 * @param store an open run store at schema version ≥ 6.
 * @throws Error naming the engine when no annotation store exists for it.
 */
export function annotationStoreOf(store: RunStore): AnnotationStore {
  const make = ENGINES[store.engine];
  if (!make) throw new Error(`annotations are not available on the ${store.engine} run store at ${store.location}`);
  return make(store);
}

/**
 * The resolver a human (or `llm+human`) judge asks for the experts' verdict: items are brought up to date with the
 * judgements table once, then each judge input resolves as adjudicated > majority > single annotator > pending.
 * @param store the annotation store of the run store being scored.
 */
export function humanResolver(store: AnnotationStore): HumanResolver {
  let synced: Promise<number> | undefined;
  return async (task, inputHash) => {
    synced ??= store.syncFromJudgements();
    await synced;
    const r = await store.resolveJudgement(task, inputHash, 'human');
    return r ? { decidedBy: r.decidedBy, verdict: r.verdict, annotators: r.annotators } : undefined;
  };
}
export * from './checklists.ts';
export * from './fact-split.ts';
