/**
 * The annotation store: the asynchronous interface every surface uses (panel, CLI, scoring) and its one
 * implementation for both run-store engines, {@link SqlAnnotationStore} (SQLite file or PostgreSQL team store; tables
 * of migrations 6, 9 and 18 in `src/core/store/migrations.ts`). Items of judge tasks are created from the
 * `judgements` table; annotations are append-only; queues are saved selections served with reservations.
 * Source: issue 14; `../shared/spec/annotation.md`.
 */
import type Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { canonicalJson, sha256 } from '../eval/judges/canonical.ts';
import { sql, type Compilable, type RawBuilder } from 'kysely';
import { CHANGES } from '../store/pg-run-store.ts';
import { jsonColumn, jsonNulToText } from '../store/pg-text.ts';
import { sqliteSql, type StoreSql } from '../store/sql.ts';
import { bulkWriteWithBackgroundCheckpointAsync } from '../store/wal.ts';
import { LoupeInputError } from '../util/errors.ts';
import { seededRandom } from '../util/random.ts';
import {
  ANNOTATABLE_TASKS,
  judgementItemId,
  labelOf,
  resolveItem,
  schemaVersion,
  validateVerdict,
  type Annotation,
  type AnnotationItem,
  type AnnotationQueue,
  type AnnotationRole,
  type EvidenceRef,
  type QueueSpec,
  type Resolution,
  type ResolutionMode,
  type Subject,
} from './model.ts';

/** A new annotation to record. */
export interface NewAnnotation {
  itemId: string;
  annotator: string;
  verdict: unknown;
  evidence?: EvidenceRef[];
  note?: string | null;
  /** The annotation (same item, same annotator) this one edits. */
  supersedes?: string | null;
  /** `adjudicator` makes the verdict final. Default `annotator`. */
  role?: AnnotationRole;
  /** panel | cli | import. Default `cli`. */
  origin?: string;
  /** The queue it was served from (its reservation is released). */
  queueId?: string;
}

/** Filter over items. */
export interface ItemFilter {
  suite?: string;
  runIds?: string[];
  task?: string;
  /** Case-insensitive substring of the criterion. */
  criterion?: string;
  /** Only items of judge tasks ({@link ANNOTATABLE_TASKS}), which the annotation panel answers; items of registered
   *  kinds (pairwise votes, BLADE decision reviews, failure tags) are served by their own panels. */
  judgeTasksOnly?: boolean;
  limit?: number;
}

/** An item at a position of a queue. */
export interface QueueEntry {
  queueId: string;
  /** 0-based position in the queue. */
  pos: number;
  item: AnnotationItem;
}

/** Progress of a queue: items done (enough reviewers, or adjudicated) and annotations per annotator. */
export interface QueueProgress {
  total: number;
  done: number;
  byAnnotator: Record<string, number>;
  /** Per annotator of `byAnnotator`: the database roles that wrote their annotations of this queue (sorted; [] on SQLite). */
  roles: Record<string, string[]>;
}

/** One line of an annotations JSONL export. */
export type ExportRecord =
  | {
      type: 'header';
      format: 'loupe-annotations';
      version: 1;
      exportedAt: string;
      schemaVersions: Record<string, string>;
    }
  | ({ type: 'item' } & AnnotationItem)
  | ({ type: 'annotation' } & Annotation);

/** An unsubmitted verdict in the making (not an annotation: no history, replaced on every change). */
export interface AnnotationDraft {
  choice: Record<string, string | number | boolean>;
  note: string;
  evidence: EvidenceRef[];
}

/** What an import added. */
export interface ImportResult {
  items: number;
  annotations: number;
  /** Annotations already present (same id, same content). */
  unchanged: number;
}

/** The annotation store interface (asynchronous: SQLite here, PostgreSQL for a team). */
export interface AnnotationStore {
  /** Creates items for judgements (any judge but `exact`) not yet itemised. @returns items created. */
  syncFromJudgements(): Promise<number>;
  getItem(id: string): Promise<AnnotationItem | undefined>;
  /** Adds an item of any subject kind (idempotent by id). @throws LoupeInputError for an unknown task. */
  putItem(item: Omit<AnnotationItem, 'schemaVersion' | 'createdAt'> & { createdAt?: string }): Promise<AnnotationItem>;
  listItems(filter?: ItemFilter): Promise<AnnotationItem[]>;
  /** Records a verdict. @throws LoupeInputError for an unknown item, a verdict outside the schema, cited evidence that does not exist, a bad `supersedes`. */
  annotate(a: NewAnnotation): Promise<Annotation>;
  annotations(itemId: string): Promise<Annotation[]>;
  /** The newest LLM verdict given for the item's judge input, if any. */
  llmVerdict(itemId: string): Promise<{ judgeId: string; verdict: unknown } | undefined>;
  /** Every annotation of the items matching a filter, grouped by item id (agreement, exports). */
  annotationsByItem(filter?: ItemFilter): Promise<Map<string, Annotation[]>>;
  /** Newest done LLM verdict per item id for the items matching a filter. */
  llmVerdicts(filter?: ItemFilter): Promise<Map<string, { judgeId: string; verdict: unknown }>>;
  resolve(itemId: string, mode?: ResolutionMode): Promise<Resolution>;
  /** Resolution of a judge item by task and input hash; undefined when no such item exists. */
  resolveJudgement(task: string, inputHash: string, mode?: ResolutionMode): Promise<Resolution | undefined>;
  /** Opens (creating, or appending newly matching items to) the queue of a spec. */
  openQueue(
    spec: QueueSpec,
    opts?: { name?: string; reviewers?: number; reservationMs?: number; blind?: boolean },
  ): Promise<AnnotationQueue>;
  getQueue(id: string): Promise<AnnotationQueue | undefined>;
  listQueues(): Promise<AnnotationQueue[]>;
  /**
   * The next item for an annotator after `afterPos` (wrapping), reserved for them; undefined when the queue has none
   * left for them. With `pick`, every item still open to the annotator is offered (queue order) and `pick` chooses
   * (most-uncertain-first for pairs); the reservation rules are the same.
   */
  nextItem(
    queueId: string,
    annotator: string,
    opts?: {
      afterPos?: number;
      now?: Date;
      pick?: (entries: QueueEntry[]) => QueueEntry | undefined | Promise<QueueEntry | undefined>;
    },
  ): Promise<QueueEntry | undefined>;
  /** The item at a position (any state), for browsing. */
  itemAt(queueId: string, pos: number): Promise<QueueEntry | undefined>;
  progress(queueId: string): Promise<QueueProgress>;
  /** Drops an annotator's reservation of an item. */
  release(queueId: string, itemId: string, annotator: string): Promise<void>;
  /** True when the run still exists (items of deleted runs are orphaned). */
  runExists(runId: string): Promise<boolean>;
  /** Keeps an annotator's unsubmitted choice on a queue item (replacing the previous one); submitting clears it. */
  saveDraft(queueId: string, itemId: string, annotator: string, draft: AnnotationDraft): Promise<void>;
  getDraft(queueId: string, itemId: string, annotator: string): Promise<AnnotationDraft | undefined>;
  exportRecords(filter?: ItemFilter): Promise<ExportRecord[]>;
  /** Imports records atomically. @throws LoupeInputError naming the record at fault; nothing is written then. */
  importRecords(records: ReadonlyArray<{ line: number; record: ExportRecord }>, source: string): Promise<ImportResult>;
}

type Row = Record<string, unknown>;

const nowIso = () => new Date().toISOString();

/** An `annotation_items` row (either engine) as an {@link AnnotationItem}. */
export function itemFromRow(r: Row): AnnotationItem {
  return {
    id: r.id as string,
    subject: JSON.parse(r.subject as string) as Subject,
    task: r.task as string,
    schemaVersion: r.schema_version as string,
    input: JSON.parse(r.input as string),
    inputHash: (r.input_hash as string | null) ?? null,
    criterion: (r.criterion as string | null) ?? null,
    suite: (r.suite as string | null) ?? null,
    runId: (r.run_id as string | null) ?? null,
    itemRef: (r.item_ref as string | null) ?? null,
    suiteVersion: r.suite_version as string,
    createdAt: r.created_at as string,
  };
}

/** An `annotations` row (either engine) as an {@link Annotation}. */
export function annotationFromRow(r: Row): Annotation {
  return {
    id: r.id as string,
    itemId: r.item_id as string,
    annotator: r.annotator as string,
    role: r.role as AnnotationRole,
    verdict: JSON.parse(r.verdict as string),
    evidence: JSON.parse(r.evidence as string) as EvidenceRef[],
    note: (r.note as string | null) ?? null,
    supersedes: (r.supersedes as string | null) ?? null,
    final: !!r.final,
    origin: r.origin as string,
    createdAt: r.created_at as string,
    dbRole: (r.db_role as string | null | undefined) ?? null,
  };
}

/**
 * The `roles` of a {@link QueueProgress} (either engine): every annotator of `counts` (rows `{annotator}`) → the
 * distinct database roles of `roles` (rows `{annotator, db_role}`), [] when none is recorded.
 */
export function progressRoles(counts: readonly Row[], roles: readonly Row[]): Record<string, string[]> {
  const out: Record<string, string[]> = Object.fromEntries(counts.map((r) => [r.annotator as string, [] as string[]]));
  for (const r of roles) (out[r.annotator as string] ??= []).push(r.db_role as string);
  for (const k of Object.keys(out)) out[k] = [...new Set(out[k])].sort();
  return out;
}

/** An `annotation_queues` row (either engine) as an {@link AnnotationQueue}. */
export function queueFromRow(r: Row): AnnotationQueue {
  return {
    id: r.id as string,
    name: r.name as string,
    spec: JSON.parse(r.spec as string) as QueueSpec,
    reviewers: r.reviewers as number,
    reservationMs: r.reservation_ms as number,
    blind: !!r.blind,
    createdAt: r.created_at as string,
  };
}

/** `data:<12 hex>` digest of a run's data checksums, or `unknown`. */
export function suiteVersionOf(dataChecksums: string | null | undefined): string {
  if (!dataChecksums || dataChecksums === '{}') return 'unknown';
  try {
    return `data:${sha256(canonicalJson(JSON.parse(dataChecksums))).slice(0, 12)}`;
  } catch {
    return 'unknown';
  }
}

/** Default queue name of a spec. */
export function queueName(spec: QueueSpec): string {
  if (spec.kind === 'sampled') {
    return spec.sampling
      ? `${spec.sampling.title} (${spec.sampling.perStratum} per stratum, seed ${spec.sampling.seed})`
      : `Sample of ${spec.itemIds?.length ?? 0} items`;
  }
  const parts = [
    spec.kind === 'items'
      ? spec.includeResolved
        ? 'All items'
        : 'Pending items'
      : spec.kind === 'audit'
        ? `Audit of LLM verdicts (${spec.perCriterion ?? 10} per criterion, seed ${spec.seed ?? 0})`
        : spec.kind === 'pairs'
          ? 'Pairwise review'
          : 'Disagreements',
  ];
  if (spec.suite) parts.push(`suite ${spec.suite}`);
  if (spec.task) parts.push(spec.task);
  if (spec.criterion) parts.push(`“${spec.criterion}”`);
  if (spec.runIds?.length) {
    parts.push(spec.runIds.length === 1 ? `run ${spec.runIds[0]}` : `${spec.runIds.length} runs`);
  }
  return parts.join(' · ');
}

/** Item selections of queue kinds registered by other modules (BLADE decision samples), by kind. */
export const queueKinds = new Map<string, (store: AnnotationStore, spec: QueueSpec) => Promise<string[]>>();

/**
 * Registers a queue kind whose items another module selects (the way {@link registerItemSchema} adds item kinds):
 * `select` returns the item ids of a spec in queue order; serving, reservations and progress are the store's.
 * Source: issue 18 (BLADE decision review queues).
 */
export function registerQueueKind(
  kind: QueueSpec['kind'],
  select: (store: AnnotationStore, spec: QueueSpec) => Promise<string[]>,
): void {
  queueKinds.set(kind, select);
}

/** Judgements to itemise from which a sync leaves its WAL checkpoint to a worker thread (see `store/wal.ts`). */
const BULK_SYNC_JUDGEMENTS = 1000;

/** Suite versions by data checksums text (a pure function of it), for {@link registerSuiteVersionFunction}. */
const suiteVersionCache = new Map<string | null, string>();
const withSuiteVersionFunction = new WeakSet<Database.Database>();

/**
 * Registers `loupe_suite_version(data_checksums)` ({@link suiteVersionOf}) on a connection, once: SQLite refuses to
 * redefine a function while a statement of the connection is running, so it is never redefined.
 */
function registerSuiteVersionFunction(db: Database.Database): void {
  if (withSuiteVersionFunction.has(db)) return;
  db.function('loupe_suite_version', { deterministic: true }, (checksums: unknown) => {
    const k = typeof checksums === 'string' ? checksums : null;
    let v = suiteVersionCache.get(k);
    if (v === undefined) {
      if (suiteVersionCache.size > 10_000) suiteVersionCache.clear();
      suiteVersionCache.set(k, (v = suiteVersionOf(k)));
    }
    return v;
  });
  withSuiteVersionFunction.add(db);
}

/**
 * An audit queue's items, engine-independent (both store engines call it on the rows they read): the items with an
 * LLM verdict, stratified by task and criterion, shuffled per stratum with the spec's seed, `perCriterion` (10) each.
 * @param rows the candidate items (`id`, `task`, `criterion`) in store order; `llm` the LLM verdicts by item id.
 * @returns the chosen item ids, strata in sorted order.
 */
export function auditSample(
  rows: Row[],
  llm: ReadonlyMap<string, unknown>,
  spec: { perCriterion?: number; seed?: number },
): string[] {
  const strata = new Map<string, string[]>();
  for (const r of rows) {
    if (!llm.has(r.id as string)) continue;
    const k = `${r.task as string}\u0000${(r.criterion as string | null) ?? ''}`;
    const l = strata.get(k);
    if (l) l.push(r.id as string);
    else strata.set(k, [r.id as string]);
  }
  const per = spec.perCriterion ?? 10;
  const rnd = seededRandom(spec.seed ?? 0);
  const out: string[] = [];
  for (const k of [...strata.keys()].sort()) {
    const ids = [...strata.get(k)!];
    for (let i = ids.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [ids[i], ids[j]] = [ids[j]!, ids[i]!];
    }
    out.push(...ids.slice(0, per));
  }
  return out;
}

/**
 * A disagreement queue's items, engine-independent: humans disagree, or the LLM's label differs from the human
 * resolution; adjudicated items and items without annotations are left out.
 * @param rows the candidate items (`id`, `task`) in store order; `anns` their annotations; `llm` the LLM verdicts.
 * @returns the item ids, in `rows` order.
 */
export function disagreementIds(
  rows: Row[],
  anns: ReadonlyMap<string, Annotation[]>,
  llm: ReadonlyMap<string, { verdict: unknown }>,
): string[] {
  return rows
    .filter((r) => {
      const id = r.id as string;
      const as = anns.get(id);
      if (!as?.length) return false;
      const res = resolveItem({ id, task: r.task as string }, as);
      if (res.decidedBy === 'adjudicated') return false;
      const labels = new Set(Object.values(res.humanLabels));
      if (labels.size > 1) return true;
      const l = llm.get(id);
      if (!l || res.decidedBy === 'pending') return false;
      return labelOf(r.task as string, l.verdict) !== labelOf(r.task as string, res.verdict);
    })
    .map((r) => r.id as string);
}

/**
 * An item's resolution read through either engine's store (`AnnotationStore.resolve`, written once): its annotations
 * and, for `llm+human`, the newest LLM verdict the store lets the caller see.
 * @throws LoupeInputError naming the item when the store has no such item.
 */
export async function resolveStoredItem(
  s: Pick<AnnotationStore, 'getItem' | 'annotations' | 'llmVerdict'>,
  itemId: string,
  mode: ResolutionMode,
): Promise<Resolution> {
  const item = await s.getItem(itemId);
  if (!item) throw new LoupeInputError(`item ${itemId}`, 'no such item');
  const llm = mode === 'llm+human' ? (await s.llmVerdict(itemId))?.verdict : undefined;
  return resolveItem(item, await s.annotations(itemId), mode, llm);
}

/**
 * The annotation store on a run store's database, one source for both engines (issue 41): every query is built once
 * with Kysely (the typed tables of `store/schema.ts`, or a `sql` template compiled by the engine's dialect: `?` or
 * `$n` parameters) and runs through the run store's {@link StoreSql}. Transactions are `StoreSql.tx`: SQLite's
 * `BEGIN IMMEDIATE` (the write lock first) or PostgreSQL's `BEGIN` with an advisory lock on the queue id.
 * Where the engines genuinely differ, the code says why, each in one place:
 * - PostgreSQL only: `pg_notify` after an annotation (LISTEN/NOTIFY: other editors' panels refresh); the database
 *   role's privileges (`#privileges`) and blind reading under row-level security (`annotation_meta`,
 *   `judge_verdicts_revealed`, migration 18); the sync watermark taken `FOR UPDATE`.
 * - SQLite only: the first bulk sync's WAL checkpoint on a worker thread (`store/wal.ts`), the suite version computed
 *   in the INSERT by a JS function registered on the connection (`loupe_suite_version`).
 * - Spelling: JSON functions (`json_extract` / `json_object` vs `->>` / `to_json`), a list bound as one parameter
 *   (`json_each` vs `ANY(text[])`), the substring function (`instr` vs `strpos`) — the helpers `#jsonText`, `#inIds`, `#where`.
 * Source: issue 14 (annotation model), issue 26 (PostgreSQL team store), issue 41 (one query source).
 */
export class SqlAnnotationStore implements AnnotationStore {
  readonly #s: StoreSql;
  readonly #pg: boolean;
  /** SQLite: the run store's handle (bulk-write checkpoint, SQL function); null on PostgreSQL. */
  readonly #handle: Database.Database | null;
  /**
   * Who annotated which item, for queue counts: on PostgreSQL the view `annotation_meta` (no verdicts: row-level
   * security hides other roles' verdicts from a blind annotator but counts must see every annotation); SQLite has
   * no roles, so the table itself.
   */
  readonly #meta: 'annotations' | 'annotation_meta';

  /**
   * @param s the run store's query runner (`storeSqlOf`), at schema version ≥ 18.
   * @param handle on SQLite, the same run store's handle (`sqliteHandleOf`); callers use `annotationStoreOf`.
   */
  constructor(s: StoreSql, handle: Database.Database | null = null) {
    this.#s = s;
    this.#pg = s.dialect === 'postgres';
    this.#handle = handle;
    this.#meta = this.#pg ? 'annotation_meta' : 'annotations';
  }

  /** A `sql` template compiled with this engine's dialect. */
  #raw<R>(q: RawBuilder<R>): Compilable<R> {
    const db = this.#s.db;
    return { compile: () => q.compile(db) };
  }

  /** The insertion-order column of an alias (SQLite's `rowid`, PostgreSQL's `rid`). */
  #rowid(alias: string): RawBuilder<unknown> {
    return sql.ref(`${alias}.${this.#s.rowid}`);
  }

  /**
   * A string field of a JSON text column, as text (null when absent). SQLite: `json_extract`. PostgreSQL: `->>` on
   * the column cast to `json`, through `jsonColumn` / `jsonNulToText` (rows may hold the JSON escape of NUL, which
   * `->>` refuses; a NUL reads back as NUL, issue 39). `column` and `key` are names from this file, never input.
   */
  #jsonText(column: string, key: string): RawBuilder<string | null> {
    return this.#pg
      ? sql.raw(jsonNulToText(`${jsonColumn(column)}::json ->> '${key}'`))
      : sql.raw(`json_extract(${column}, '$.${key}')`);
  }

  /**
   * `column` is one of `ids`, bound as one parameter whatever their number (thousands of ids exceed a statement's
   * parameter limit): a JSON array read by `json_each` on SQLite, a `text[]` on PostgreSQL.
   */
  #inIds(column: string, ids: readonly string[]): RawBuilder<unknown> {
    return this.#pg
      ? sql`${sql.ref(column)} = ANY(${[...ids]}::text[])`
      : sql`${sql.ref(column)} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`;
  }

  /**
   * Creates items for judgements (any judge but `exact` / `none`) not yet itemised: only the judgements from the
   * watermark of migration 9 on (triggers keep it), so a sync with nothing new reads one row and returns 0.
   * Items are created in (judged_at, rowid) order (the first judgement of a task + input hash names its item), each
   * with its run's suite version; items of earlier syncs still without one get it once their run has checksums.
   * The watermark read, the items written and the watermark cleared are one transaction for every writer.
   * @returns the number of items created. Source: issue 14; incremental since issue 23 (first item of a queue).
   */
  async syncFromJudgements(): Promise<number> {
    const mark = this.#s.db.selectFrom('annotation_sync').select('judgements_from as f').where('id', '=', 1);
    const first = (await this.#s.first(mark))?.f;
    if (first == null) return 0;
    // One INSERT … SELECT: criterion as criterionOf() reads it, the schema version per task from JS.
    const versionCase = sql.raw(
      `CASE j.task ${ANNOTATABLE_TASKS.map((t) => `WHEN '${t}' THEN '${schemaVersion(t)}'`).join(' ')} END`,
    );
    const subject = this.#pg
      ? sql`'{"kind":"judgement","task":' || to_json(j.task)::text || ',"inputHash":' || to_json(j.input_hash)::text || '}'`
      : sql`json_object('kind', 'judgement', 'task', j.task, 'inputHash', j.input_hash)`;
    // The suite version per run from its data checksums: on SQLite a JS function in the statement (computed once per
    // distinct checksums); PostgreSQL cannot call JS, so 'unknown' here and the runs' versions set just after.
    if (this.#handle) registerSuiteVersionFunction(this.#handle);
    const suiteVersion = this.#pg ? sql`'unknown'` : sql`loupe_suite_version(r.data_checksums)`;
    const sync = () =>
      this.#s.tx(null, async (t) => {
        // PostgreSQL: FOR UPDATE makes syncing writers wait here; SQLite's BEGIN IMMEDIATE already holds the write lock
        const from = (await t.first(this.#pg ? mark.forUpdate() : mark))?.f;
        if (from == null) return 0;
        // ON CONFLICT skips items that exist (the primary key lookup is the only check needed).
        // rows created: PostgreSQL counts RETURNING rows; SQLite asks changes() after (no 10,000 rows back into JS)
        const inserted = await t.all(
          this
            .#raw(sql<Row>`INSERT INTO annotation_items (id, subject_kind, subject, task, schema_version, input, input_hash, criterion, suite, run_id, item_ref, suite_version, created_at)
        SELECT 'j:' || j.task || ':' || j.input_hash, 'judgement', ${subject}, j.task, ${versionCase}, j.input, j.input_hash,
          CASE j.task WHEN 'checklist-score' THEN ${this.#jsonText('j.input', 'criterion')} WHEN 'checklist-support' THEN ${this.#jsonText('j.input', 'question')}
            WHEN 'trend-answer' THEN ${this.#jsonText('j.input', 'question')} WHEN 'semantic-match' THEN ${this.#jsonText('j.input', 'kind')} END,
          r.suite, j.run_id, j.item_ref, ${suiteVersion}, j.judged_at
        FROM judgements j LEFT JOIN runs r ON r.id = j.run_id
        WHERE ${this.#rowid('j')} >= ${from} AND j.task IN (${sql.join([...ANNOTATABLE_TASKS])}) AND j.judge_id NOT IN ('exact', 'none')
        ORDER BY j.judged_at, ${this.#rowid('j')}
        ON CONFLICT (id) DO NOTHING${this.#pg ? sql` RETURNING 1` : sql``}`),
        );
        const created = this.#pg
          ? inserted.length
          : Number((await t.first(this.#raw(sql<Row>`SELECT changes() AS n`)))!.n);
        await t.run(t.db.updateTable('annotation_sync').set({ judgements_from: null }).where('id', '=', 1));
        if (created) {
          // Earlier items whose run was missing or had no checksums then (few: a partial index holds them).
          const runs = await t.all(
            t.db
              .selectFrom('runs as r')
              .select(['r.id', 'r.data_checksums'])
              .where(
                'r.id',
                'in',
                t.db.selectFrom('annotation_items as i').select('i.run_id').where('i.suite_version', '=', 'unknown'),
              ),
          );
          for (const r of runs) {
            const v = suiteVersionOf(r.data_checksums);
            if (v !== 'unknown') {
              await t.run(
                t.db
                  .updateTable('annotation_items')
                  .set({ suite_version: v })
                  .where('run_id', '=', r.id)
                  .where('suite_version', '=', 'unknown'),
              );
            }
          }
        }
        return created;
      });
    if (!this.#handle) return sync();
    // SQLite, thousands of items (a first sync after scoring): the WAL checkpoint of ~1 KB per item runs on a worker
    // thread, not here, while the queue and its first item are prepared.
    const last =
      (await this.#s.first(this.#s.db.selectFrom('judgements').select(sql<number | null>`MAX(rowid)`.as('m'))))?.m ??
      first;
    return last - first + 1 >= BULK_SYNC_JUDGEMENTS
      ? (await bulkWriteWithBackgroundCheckpointAsync(this.#handle, sync)).result
      : sync();
  }

  async getItem(id: string): Promise<AnnotationItem | undefined> {
    const r = await this.#s.first(this.#s.db.selectFrom('annotation_items').selectAll().where('id', '=', id));
    return r ? itemFromRow(r) : undefined;
  }

  async putItem(
    item: Omit<AnnotationItem, 'schemaVersion' | 'createdAt'> & { createdAt?: string },
  ): Promise<AnnotationItem> {
    const v = schemaVersion(item.task);
    await this.#s.run(
      this.#s.db
        .insertInto('annotation_items')
        .values({
          id: item.id,
          subject_kind: item.subject.kind,
          subject: JSON.stringify(item.subject),
          task: item.task,
          schema_version: v,
          input: JSON.stringify(item.input),
          input_hash: item.inputHash,
          criterion: item.criterion,
          suite: item.suite,
          run_id: item.runId,
          item_ref: item.itemRef,
          suite_version: item.suiteVersion,
          created_at: item.createdAt ?? nowIso(),
        })
        .onConflict((oc) => oc.column('id').doNothing()),
    );
    return (await this.getItem(item.id))!;
  }

  /** `WHERE …` over items (alias `i`) matching a filter; empty when it matches all. */
  #where(f: ItemFilter): RawBuilder<unknown> {
    const w: RawBuilder<unknown>[] = [];
    if (f.suite) w.push(sql`i.suite = ${f.suite}`);
    if (f.task) w.push(sql`i.task = ${f.task}`);
    else if (f.judgeTasksOnly) w.push(sql`i.task IN (${sql.join([...ANNOTATABLE_TASKS])})`);
    // the substring-position function: instr on SQLite, strpos on PostgreSQL
    if (f.criterion) {
      w.push(sql`${this.#pg ? sql`strpos` : sql`instr`}(lower(COALESCE(i.criterion, '')), lower(${f.criterion})) > 0`);
    }
    if (f.runIds?.length) w.push(sql`i.run_id IN (${sql.join(f.runIds)})`);
    return w.length ? sql`WHERE ${sql.join(w, sql` AND `)}` : sql``;
  }

  /** `WHERE … AND` (or `WHERE`) before further conditions. */
  #whereAnd(f: ItemFilter): RawBuilder<unknown> {
    return f.suite || f.task || f.judgeTasksOnly || f.criterion || f.runIds?.length
      ? sql`${this.#where(f)} AND`
      : sql`WHERE`;
  }

  async listItems(filter: ItemFilter = {}): Promise<AnnotationItem[]> {
    const lim = filter.limit ? sql.raw(` LIMIT ${Math.max(0, Math.floor(filter.limit))}`) : sql``;
    return (
      await this.#s.all(
        this.#raw(
          sql<Row>`SELECT * FROM annotation_items i ${this.#where(filter)} ORDER BY i.created_at, ${this.#rowid('i')}${lim}`,
        ),
      )
    ).map(itemFromRow);
  }

  /**
   * Checks cited evidence: its shape always; with `mustExist` (a verdict given here) that the step or notebook cell
   * is in this store — an import may cite runs that live on another machine.
   */
  private async checkEvidence(ev: unknown, at: string, mustExist = true): Promise<EvidenceRef[]> {
    if (ev === undefined || ev === null) return [];
    if (!Array.isArray(ev)) throw new LoupeInputError(at, 'evidence must be a list');
    const { db } = this.#s;
    const out: EvidenceRef[] = [];
    for (const [i, e] of (ev as unknown[]).entries()) {
      const x = (e ?? {}) as Record<string, unknown>;
      const where = `${at} evidence ${i + 1}`;
      switch (x.kind) {
        case 'step':
          if (typeof x.runId !== 'string' || !Number.isInteger(x.step)) {
            throw new LoupeInputError(where, 'a step needs runId and an integer step');
          }
          if (
            mustExist &&
            !(await this.#s.first(
              db
                .selectFrom('steps')
                .select('idx')
                .where('run_id', '=', x.runId)
                .where('idx', '=', x.step as number),
            ))
          ) {
            throw new LoupeInputError(
              where,
              `step ${String(x.step)} of run ${x.runId} does not exist (the run was deleted or has fewer steps)`,
            );
          }
          out.push({ kind: 'step', runId: x.runId, step: x.step as number });
          break;
        case 'cell':
          if (typeof x.runId !== 'string' || !Number.isInteger(x.seq)) {
            throw new LoupeInputError(where, 'a cell needs runId and an integer seq');
          }
          if (
            mustExist &&
            !(await this.#s.first(
              db
                .selectFrom('kernel_cells')
                .select('seq')
                .where('run_id', '=', x.runId)
                .where('seq', '=', x.seq as number),
            ))
          ) {
            throw new LoupeInputError(where, `notebook cell ${String(x.seq)} of run ${x.runId} does not exist`);
          }
          out.push({ kind: 'cell', runId: x.runId, seq: x.seq as number });
          break;
        case 'doc':
          if (typeof x.path !== 'string' || !x.path) {
            throw new LoupeInputError(where, 'a documentation page needs a path');
          }
          out.push({
            kind: 'doc',
            path: x.path,
            ...(Number.isInteger(x.page) ? { page: x.page as number } : {}),
            ...(typeof x.query === 'string' ? { query: x.query } : {}),
          });
          break;
        case 'span':
          if (
            typeof x.runId !== 'string' ||
            typeof x.artefact !== 'string' ||
            !Number.isInteger(x.start) ||
            !Number.isInteger(x.end) ||
            (x.end as number) < (x.start as number)
          ) {
            throw new LoupeInputError(where, 'a span needs runId, artefact and start ≤ end');
          }
          out.push({
            kind: 'span',
            runId: x.runId,
            artefact: x.artefact,
            start: x.start as number,
            end: x.end as number,
            ...(typeof x.quote === 'string' ? { quote: x.quote } : {}),
          });
          break;
        default:
          throw new LoupeInputError(where, `unknown evidence kind '${String(x.kind)}' (step, cell, doc, span)`);
      }
    }
    return out;
  }

  async annotate(a: NewAnnotation): Promise<Annotation> {
    const at = `item ${a.itemId}`;
    if (typeof a.annotator !== 'string' || !a.annotator.trim()) {
      throw new LoupeInputError(at, 'an annotation needs an annotator');
    }
    const item = await this.getItem(a.itemId);
    if (!item) throw new LoupeInputError(at, 'no such item');
    validateVerdict(item.task, a.verdict, at);
    const evidence = await this.checkEvidence(a.evidence, at);
    const role = a.role ?? 'annotator';
    if (role !== 'annotator' && role !== 'adjudicator') {
      throw new LoupeInputError(at, `role must be annotator or adjudicator, got '${String(role)}'`);
    }
    if (a.supersedes) {
      const prev = await this.#s.first(
        this.#s.db.selectFrom('annotations').select(['item_id', 'annotator']).where('id', '=', a.supersedes),
      );
      if (!prev) throw new LoupeInputError(at, `annotation ${a.supersedes} to supersede does not exist`);
      if (prev.item_id !== a.itemId || prev.annotator !== a.annotator) {
        throw new LoupeInputError(at, `annotation ${a.supersedes} belongs to another item or annotator`);
      }
    }
    const ann: Annotation = {
      id: randomUUID(),
      itemId: a.itemId,
      annotator: a.annotator.trim(),
      role,
      verdict: a.verdict,
      evidence,
      note: a.note?.trim() ? a.note : null,
      supersedes: a.supersedes ?? null,
      final: role === 'adjudicator',
      origin: a.origin ?? 'cli',
      createdAt: nowIso(),
      dbRole: null,
    };
    await this.#s.tx(null, async (t) => {
      ann.dbRole = await this.insertAnnotation(t, ann);
      // PostgreSQL only: LISTEN/NOTIFY tells other editors' panels (watchStoreChanges); SQLite has no such channel
      if (this.#pg) {
        await t.run(
          this.#raw(
            sql`SELECT pg_notify(${CHANGES}, ${JSON.stringify({ kind: 'annotation', itemId: ann.itemId, annotator: ann.annotator })})`,
          ),
        );
      }
      if (a.queueId) {
        for (const table of ['annotation_reservations', 'annotation_drafts'] as const) {
          await t.run(
            t.db
              .deleteFrom(table)
              .where('queue_id', '=', a.queueId)
              .where('item_id', '=', a.itemId)
              .where('annotator', '=', ann.annotator),
          );
        }
      }
    });
    return ann;
  }

  /** Inserts an annotation; `db_role` is left to the server (PostgreSQL: the connection's role; SQLite: null). @returns the role recorded. */
  private async insertAnnotation(t: StoreSql, a: Annotation): Promise<string | null> {
    const r = await t.first(
      t.db
        .insertInto('annotations')
        .values({
          id: a.id,
          item_id: a.itemId,
          annotator: a.annotator,
          role: a.role,
          verdict: JSON.stringify(a.verdict),
          evidence: JSON.stringify(a.evidence),
          note: a.note,
          supersedes: a.supersedes,
          final: a.final ? 1 : 0,
          origin: a.origin,
          created_at: a.createdAt,
        })
        .returning('db_role'),
    );
    return r?.db_role ?? null;
  }

  async annotations(itemId: string): Promise<Annotation[]> {
    return (
      await this.#s.all(
        this.#s.db
          .selectFrom('annotations')
          .selectAll()
          .where('item_id', '=', itemId)
          .orderBy('created_at')
          .orderBy('id'),
      )
    ).map(annotationFromRow);
  }

  /** Every annotation of the items matching a filter, grouped by item (agreement, exports). */
  async annotationsByItem(filter: ItemFilter = {}): Promise<Map<string, Annotation[]>> {
    const rows = await this.#s.all(
      this.#raw(
        sql<Row>`SELECT a.* FROM annotations a JOIN annotation_items i ON i.id = a.item_id ${this.#where(filter)} ORDER BY a.created_at, a.id`,
      ),
    );
    const out = new Map<string, Annotation[]>();
    for (const r of rows) {
      const a = annotationFromRow(r);
      const l = out.get(a.itemId);
      if (l) l.push(a);
      else out.set(a.itemId, [a]);
    }
    return out;
  }

  /**
   * What the connection's role may do beyond annotating (issue 39, `loupe store grant`): read the expected answers and
   * judge verdicts (`judgements.verdict`; a role that may not is blind where a queue is) and manage queues (UPDATE on
   * `annotation_queues`). PostgreSQL only: SQLite has no roles, its user may do everything.
   */
  async #privileges(): Promise<{ readsVerdicts: boolean; managesQueues: boolean }> {
    if (!this.#pg) return { readsVerdicts: true, managesQueues: true };
    const r = await this.#s.first(
      this.#raw(
        sql<Row>`SELECT has_column_privilege('judgements', 'verdict', 'SELECT') AS v, has_table_privilege('annotation_queues', 'UPDATE') AS m`,
      ),
    );
    return { readsVerdicts: r?.v === true, managesQueues: r?.m === true };
  }

  /**
   * The LLM's done verdicts per item as the caller may see them, alias `j` (`item_id`, `judge_id`, `verdict`,
   * `judged_at`, `rid`): on PostgreSQL the view `judge_verdicts_revealed` (row-level security: a blind annotator sees
   * them only after answering, migration 18); on SQLite, without roles, the same join written out.
   */
  #revealed(): RawBuilder<unknown> {
    return this.#pg
      ? sql`judge_verdicts_revealed j`
      : sql`(SELECT i.id AS item_id, j.judge_id, j.verdict, j.judged_at, j.rowid AS rid FROM annotation_items i JOIN judgements j ON j.input_hash = i.input_hash AND j.task = i.task
          WHERE j.judge_id LIKE 'llm:%' AND j.status = 'done') j`;
  }

  /** Newest done LLM verdict per item for the items matching a filter. */
  async llmVerdicts(filter: ItemFilter = {}): Promise<Map<string, { judgeId: string; verdict: unknown }>> {
    const rows = await this.#s.all(
      this.#raw(
        sql<Row>`${
          (await this.#privileges()).readsVerdicts
            ? sql`SELECT i.id AS item_id, j.judge_id, j.verdict FROM annotation_items i JOIN judgements j ON j.input_hash = i.input_hash AND j.task = i.task
        ${this.#whereAnd(filter)} j.judge_id LIKE 'llm:%' AND j.status = 'done' ORDER BY j.judged_at, ${this.#rowid('j')}`
            : sql`SELECT i.id AS item_id, j.judge_id, j.verdict FROM annotation_items i JOIN ${this.#revealed()} ON j.item_id = i.id ${this.#where(filter)} ORDER BY j.judged_at, j.rid`
        }`,
      ),
    );
    const out = new Map<string, { judgeId: string; verdict: unknown }>();
    for (const r of rows) {
      out.set(r.item_id as string, { judgeId: r.judge_id as string, verdict: JSON.parse(r.verdict as string) });
    }
    return out;
  }

  async llmVerdict(itemId: string): Promise<{ judgeId: string; verdict: unknown } | undefined> {
    const r = await this.#s.first(
      this.#raw(
        sql<Row>`SELECT j.judge_id, j.verdict FROM ${this.#revealed()} WHERE j.item_id = ${itemId} ORDER BY j.judged_at DESC, j.rid DESC LIMIT 1`,
      ),
    );
    return r ? { judgeId: r.judge_id as string, verdict: JSON.parse(r.verdict as string) } : undefined;
  }

  async resolve(itemId: string, mode: ResolutionMode = 'human'): Promise<Resolution> {
    return resolveStoredItem(this, itemId, mode);
  }

  async resolveJudgement(
    task: string,
    inputHash: string,
    mode: ResolutionMode = 'human',
  ): Promise<Resolution | undefined> {
    const id = judgementItemId(task, inputHash);
    return (await this.getItem(id)) ? resolveStoredItem(this, id, mode) : undefined;
  }

  /** The item filter of a queue spec: the generic kinds (items, audit, disagreement) hold only judge-task items. */
  private filterOf(spec: QueueSpec): ItemFilter {
    const generic = spec.kind === 'items' || spec.kind === 'audit' || spec.kind === 'disagreement';
    return {
      ...(spec.suite ? { suite: spec.suite } : {}),
      ...(spec.task ? { task: spec.task } : {}),
      ...(spec.criterion ? { criterion: spec.criterion } : {}),
      ...(spec.runIds?.length ? { runIds: spec.runIds } : {}),
      ...(generic ? { judgeTasksOnly: true } : {}),
    };
  }

  /**
   * An `items` spec (items with a human judgement; resolved ones only with `includeResolved`): the statement that
   * appends the matching items not yet in a queue at dense positions after its last, in queue order (created_at,
   * rowid) — one INSERT … SELECT, so 10,000 item ids never travel through JS. Resolutions are decided in JS only
   * for items that have annotations.
   * @returns a function running the statement in a transaction for a queue id and its last position (−1 when empty).
   */
  private async itemsAppender(
    spec: QueueSpec,
  ): Promise<(t: StoreSql, queueId: string, lastPos: number) => Promise<void>> {
    const filter = this.filterOf(spec);
    let resolved: string[] = [];
    if (!spec.includeResolved) {
      const anns = await this.annotationsByItem(filter);
      if (anns.size) {
        const tasks = new Map(
          (
            await this.#s.all(
              this.#raw(
                sql<Row>`SELECT DISTINCT i.id, i.task FROM annotation_items i JOIN annotations a ON a.item_id = i.id ${this.#where(filter)}`,
              ),
            )
          ).map((r) => [r.id as string, r.task as string]),
        );
        resolved = [...anns]
          .filter(([id, a]) => resolveItem({ id, task: tasks.get(id)! }, a).decidedBy !== 'pending')
          .map(([id]) => id);
      }
    }
    return async (t, queueId, lastPos) => {
      await t.run(
        this.#raw(sql`INSERT INTO annotation_queue_items (queue_id, pos, item_id)
        SELECT CAST(${queueId} AS TEXT), CAST(${lastPos} AS INTEGER) + row_number() OVER (ORDER BY i.created_at, ${this.#rowid('i')}), i.id FROM annotation_items i
        ${this.#whereAnd(filter)} EXISTS (SELECT 1 FROM judgements j WHERE j.input_hash = i.input_hash AND j.task = i.task AND j.judge_id = 'human')
          AND NOT EXISTS (SELECT 1 FROM annotation_queue_items qi WHERE qi.queue_id = ${queueId} AND qi.item_id = i.id)${
            resolved.length
              ? sql`
          AND NOT (${this.#inIds('i.id', resolved)})`
              : sql``
          }`),
      );
    };
  }

  /** Item ids matching a queue spec of kind pairs, audit or disagreement (or a registered kind), in queue order. */
  private async select(spec: QueueSpec): Promise<string[]> {
    const registered = queueKinds.get(spec.kind);
    if (registered) return registered(this, spec);
    const filter = this.filterOf(spec);
    if (spec.kind === 'sampled') {
      const ids = spec.itemIds ?? [];
      const have = new Set(
        (await this.#s.all(this.#raw(sql<Row>`SELECT id FROM annotation_items WHERE ${this.#inIds('id', ids)}`))).map(
          (r) => r.id as string,
        ),
      );
      return ids.filter((id) => have.has(id));
    }
    if (spec.kind === 'pairs') {
      const runs = spec.runIds ?? [];
      const inRuns = runs.length
        ? sql` AND ${this.#jsonText('i.subject', 'runA')} IN (${sql.join(runs)}) AND ${this.#jsonText('i.subject', 'runB')} IN (${sql.join(runs)})`
        : sql``;
      const rows = await this.#s.all(
        this.#raw(
          sql<Row>`SELECT i.id FROM annotation_items i WHERE i.task = 'pairwise-vote'${spec.suite ? sql` AND i.suite = ${spec.suite}` : sql``}${inRuns} ORDER BY i.created_at, ${this.#rowid('i')}`,
        ),
      );
      return rows.map((r) => r.id as string);
    }
    if (spec.kind === 'audit') {
      const llm = await this.llmVerdicts(filter);
      const rows = await this.#s.all(
        this.#raw(
          sql<Row>`SELECT i.id, i.task, i.criterion FROM annotation_items i ${this.#where(filter)} ORDER BY i.created_at, ${this.#rowid('i')}`,
        ),
      );
      return auditSample(rows, llm, spec);
    }
    // disagreement: humans disagree, or the LLM differs from the human resolution; not yet adjudicated
    const anns = await this.annotationsByItem(filter);
    const llm = await this.llmVerdicts(filter);
    const rows = await this.#s.all(
      this.#raw(
        sql<Row>`SELECT i.id, i.task FROM annotation_items i ${this.#where(filter)} ORDER BY i.created_at, ${this.#rowid('i')}`,
      ),
    );
    return disagreementIds(rows, anns, llm);
  }

  async openQueue(
    spec: QueueSpec,
    opts: { name?: string; reviewers?: number; reservationMs?: number; blind?: boolean } = {},
  ): Promise<AnnotationQueue> {
    const kinds = ['items', 'audit', 'disagreement', 'pairs', 'sampled', ...queueKinds.keys()];
    if (!kinds.includes(spec.kind)) {
      throw new LoupeInputError('queue kind', `must be ${kinds.join(', ')}, got '${String(spec.kind)}'`);
    }
    const reviewers = opts.reviewers ?? 1;
    if (!Number.isInteger(reviewers) || reviewers < 1) {
      throw new LoupeInputError('reviewers per item', `must be a whole number ≥ 1, got ${String(opts.reviewers)}`);
    }
    const reservationMs = opts.reservationMs ?? 30 * 60_000;
    if (!(reservationMs > 0)) {
      throw new LoupeInputError('reservation time', `must be > 0 ms, got ${String(opts.reservationMs)}`);
    }
    const clean: QueueSpec = JSON.parse(canonicalJson(spec)) as QueueSpec;
    const id = `q-${sha256(canonicalJson(clean)).slice(0, 12)}`;
    if (!(await this.#privileges()).managesQueues) {
      // an annotator's role (loupe store grant): a queue's items and rules are chosen by whoever manages queues
      const existing = await this.getQueue(id);
      if (existing) return existing;
      throw new LoupeInputError(
        `queue '${opts.name ?? queueName(clean)}'`,
        `the database role of this connection may answer queues but not open new ones: ask a reviewer or the store's owner to open it`,
      );
    }
    await this.syncFromJudgements();
    const append = clean.kind === 'items' ? await this.itemsAppender(clean) : undefined;
    const ids = append ? [] : await this.select(clean);
    const blind = opts.blind === false ? 0 : 1;
    // one writer per queue at a time (positions stay dense when two editors open the same queue)
    await this.#s.tx(id, async (t) => {
      const existing = await t.first(t.db.selectFrom('annotation_queues').select('id').where('id', '=', id));
      if (existing) {
        await t.run(
          t.db
            .updateTable('annotation_queues')
            .set({ reviewers, reservation_ms: reservationMs, blind })
            .where('id', '=', id),
        );
      } else {
        await t.run(
          t.db.insertInto('annotation_queues').values({
            id,
            name: opts.name ?? queueName(clean),
            kind: clean.kind,
            spec: JSON.stringify(clean),
            reviewers,
            reservation_ms: reservationMs,
            blind,
            created_at: nowIso(),
          }),
        );
      }
      let pos = Number(
        (await t.first(
          this.#raw(sql<Row>`SELECT COALESCE(MAX(pos), -1) AS m FROM annotation_queue_items WHERE queue_id = ${id}`),
        ))!.m,
      );
      if (append) return append(t, id, pos);
      // the unique (queue, item) index skips items already queued; positions stay dense
      for (const itemId of ids) {
        if (
          await t.first(
            t.db
              .insertInto('annotation_queue_items')
              .values({ queue_id: id, pos: pos + 1, item_id: itemId })
              .onConflict((oc) => oc.doNothing())
              .returning('item_id'),
          )
        ) {
          pos++;
        }
      }
    });
    return (await this.getQueue(id))!;
  }

  async getQueue(id: string): Promise<AnnotationQueue | undefined> {
    const r = await this.#s.first(this.#s.db.selectFrom('annotation_queues').selectAll().where('id', '=', id));
    return r ? queueFromRow(r) : undefined;
  }

  async listQueues(): Promise<AnnotationQueue[]> {
    return (
      await this.#s.all(
        this.#s.db.selectFrom('annotation_queues').selectAll().orderBy('created_at').orderBy(sql.ref(this.#s.rowid)),
      )
    ).map(queueFromRow);
  }

  private async entry(queueId: string, pos: number, itemId: string): Promise<QueueEntry> {
    const item = await this.getItem(itemId);
    if (!item) {
      throw new LoupeInputError(`queue ${queueId} position ${pos}`, `item ${itemId} is missing from the store`);
    }
    return { queueId, pos, item };
  }

  /** Reserves an item of a queue for an annotator until a time (replacing their earlier reservation of it). */
  async #reserve(queueId: string, itemId: string, annotator: string, until: Date): Promise<void> {
    await this.#s.run(
      this.#s.db
        .insertInto('annotation_reservations')
        .values({ queue_id: queueId, item_id: itemId, annotator, expires_at: until.toISOString() })
        .onConflict((oc) =>
          oc
            .columns(['queue_id', 'item_id', 'annotator'])
            .doUpdateSet((eb) => ({ expires_at: eb.ref('excluded.expires_at') })),
        ),
    );
  }

  async nextItem(
    queueId: string,
    annotator: string,
    opts: {
      afterPos?: number;
      now?: Date;
      pick?: (entries: QueueEntry[]) => QueueEntry | undefined | Promise<QueueEntry | undefined>;
    } = {},
  ): Promise<QueueEntry | undefined> {
    const q = await this.getQueue(queueId);
    if (!q) throw new LoupeInputError(`queue ${queueId}`, 'no such queue');
    const now = opts.now ?? new Date();
    const nowS = now.toISOString();
    const meta = sql.table(this.#meta);
    const limit = opts.pick ? sql`` : sql` LIMIT 1`;
    const stmt = (after: number) =>
      this.#raw(
        sql<Row>`${
          q.spec.kind === 'disagreement'
            ? sql`SELECT qi.pos, qi.item_id FROM annotation_queue_items qi WHERE qi.queue_id = ${queueId} AND qi.pos > CAST(${after} AS INTEGER)
          AND NOT EXISTS (SELECT 1 FROM ${meta} a WHERE a.item_id = qi.item_id AND a.final = 1)
          AND NOT EXISTS (SELECT 1 FROM annotation_reservations r WHERE r.queue_id = ${queueId} AND r.item_id = qi.item_id AND r.annotator <> ${annotator} AND r.expires_at > ${nowS})
          ORDER BY qi.pos${limit}`
            : sql`SELECT qi.pos, qi.item_id FROM annotation_queue_items qi WHERE qi.queue_id = ${queueId} AND qi.pos > CAST(${after} AS INTEGER)
          AND NOT EXISTS (SELECT 1 FROM ${meta} a WHERE a.annotator = ${annotator} AND a.item_id = qi.item_id)
          AND NOT EXISTS (SELECT 1 FROM ${meta} a WHERE a.item_id = qi.item_id AND a.final = 1)
          AND (SELECT COUNT(DISTINCT a.annotator) FROM ${meta} a WHERE a.item_id = qi.item_id AND a.role = 'annotator')
            + (SELECT COUNT(*) FROM annotation_reservations r WHERE r.queue_id = ${queueId} AND r.item_id = qi.item_id AND r.annotator <> ${annotator} AND r.expires_at > ${nowS}) < CAST(${q.reviewers} AS INTEGER)
          ORDER BY qi.pos${limit}`
        }`,
      );
    const until = new Date(now.getTime() + q.reservationMs);
    if (opts.pick) {
      const entries: QueueEntry[] = [];
      for (const r of await this.#s.all(stmt(-1))) {
        entries.push(await this.entry(queueId, r.pos as number, r.item_id as string));
      }
      const chosen = entries.length ? await opts.pick(entries) : undefined;
      if (!chosen) return undefined;
      await this.#reserve(queueId, chosen.item.id, annotator, until);
      return chosen;
    }
    const after = opts.afterPos ?? -1;
    const r = (await this.#s.first(stmt(after))) ?? (after >= 0 ? await this.#s.first(stmt(-1)) : undefined);
    if (!r) return undefined;
    await this.#reserve(queueId, r.item_id as string, annotator, until);
    return this.entry(queueId, r.pos as number, r.item_id as string);
  }

  async itemAt(queueId: string, pos: number): Promise<QueueEntry | undefined> {
    const r = await this.#s.first(
      this.#s.db
        .selectFrom('annotation_queue_items')
        .select('item_id')
        .where('queue_id', '=', queueId)
        .where('pos', '=', pos),
    );
    return r ? this.entry(queueId, pos, r.item_id) : undefined;
  }

  /** Number of items in a queue (positions are 0 … size − 1). */
  async queueSize(queueId: string): Promise<number> {
    return Number(
      (await this.#s.first(
        this.#raw(sql<Row>`SELECT COUNT(*) AS n FROM annotation_queue_items WHERE queue_id = ${queueId}`),
      ))!.n,
    );
  }

  async progress(queueId: string): Promise<QueueProgress> {
    const q = await this.getQueue(queueId);
    if (!q) throw new LoupeInputError(`queue ${queueId}`, 'no such queue');
    const total = await this.queueSize(queueId);
    const meta = sql.table(this.#meta);
    const final = sql`EXISTS (SELECT 1 FROM ${meta} a WHERE a.item_id = qi.item_id AND a.final = 1)`;
    const done = Number(
      (await this.#s.first(
        this.#raw(
          sql<Row>`SELECT COUNT(*) AS n FROM annotation_queue_items qi WHERE qi.queue_id = ${queueId} AND ${
            q.spec.kind === 'disagreement'
              ? final
              : sql`(${final} OR (SELECT COUNT(DISTINCT a.annotator) FROM ${meta} a WHERE a.item_id = qi.item_id AND a.role = 'annotator') >= CAST(${q.reviewers} AS INTEGER))`
          }`,
        ),
      ))!.n,
    );
    const rows = await this.#s.all(
      this
        .#raw(sql<Row>`SELECT a.annotator, COUNT(DISTINCT a.item_id) AS n FROM annotation_queue_items qi JOIN ${meta} a ON a.item_id = qi.item_id
      WHERE qi.queue_id = ${queueId} GROUP BY a.annotator ORDER BY a.annotator`),
    );
    const roles = await this.#s.all(
      this
        .#raw(sql<Row>`SELECT DISTINCT a.annotator, a.db_role FROM annotation_queue_items qi JOIN ${meta} a ON a.item_id = qi.item_id
      WHERE qi.queue_id = ${queueId} AND a.db_role IS NOT NULL ORDER BY a.annotator, a.db_role`),
    );
    return {
      total,
      done,
      byAnnotator: Object.fromEntries(rows.map((r) => [r.annotator as string, Number(r.n)])),
      roles: progressRoles(rows, roles),
    };
  }

  async release(queueId: string, itemId: string, annotator: string): Promise<void> {
    await this.#s.run(
      this.#s.db
        .deleteFrom('annotation_reservations')
        .where('queue_id', '=', queueId)
        .where('item_id', '=', itemId)
        .where('annotator', '=', annotator),
    );
  }

  async runExists(runId: string): Promise<boolean> {
    return !!(await this.#s.first(this.#s.db.selectFrom('runs').select('id').where('id', '=', runId)));
  }

  async saveDraft(queueId: string, itemId: string, annotator: string, draft: AnnotationDraft): Promise<void> {
    if (!(await this.getItem(itemId))) throw new LoupeInputError(`item ${itemId}`, 'no such item');
    const clean: AnnotationDraft = {
      choice: draft.choice ?? {},
      note: typeof draft.note === 'string' ? draft.note : '',
      evidence: Array.isArray(draft.evidence) ? draft.evidence : [],
    };
    await this.#s.run(
      this.#s.db
        .insertInto('annotation_drafts')
        .values({ queue_id: queueId, item_id: itemId, annotator, draft: JSON.stringify(clean), updated_at: nowIso() })
        .onConflict((oc) =>
          oc
            .columns(['queue_id', 'item_id', 'annotator'])
            .doUpdateSet((eb) => ({ draft: eb.ref('excluded.draft'), updated_at: eb.ref('excluded.updated_at') })),
        ),
    );
  }

  async getDraft(queueId: string, itemId: string, annotator: string): Promise<AnnotationDraft | undefined> {
    const r = await this.#s.first(
      this.#s.db
        .selectFrom('annotation_drafts')
        .select('draft')
        .where('queue_id', '=', queueId)
        .where('item_id', '=', itemId)
        .where('annotator', '=', annotator),
    );
    return r ? (JSON.parse(r.draft) as AnnotationDraft) : undefined;
  }

  async exportRecords(filter: ItemFilter = {}): Promise<ExportRecord[]> {
    await this.syncFromJudgements();
    return exportAnnotationRecords(this, filter);
  }

  async importRecords(
    records: ReadonlyArray<{ line: number; record: ExportRecord }>,
    source: string,
  ): Promise<ImportResult> {
    await this.syncFromJudgements();
    const { newItems, newAnns, unchanged } = await planAnnotationImport(records, source, {
      getItem: (id) => this.getItem(id),
      checkEvidence: (ev, at) => this.checkEvidence(ev, at, false),
      getAnnotation: async (id) => {
        const prev = await this.#s.first(this.#s.db.selectFrom('annotations').selectAll().where('id', '=', id));
        return prev ? annotationFromRow(prev) : undefined;
      },
    });
    await this.#s.tx(null, async (t) => {
      for (const i of newItems) {
        await t.run(
          t.db
            .insertInto('annotation_items')
            .values({
              id: i.id,
              subject_kind: i.subject.kind,
              subject: JSON.stringify(i.subject),
              task: i.task,
              schema_version: i.schemaVersion,
              input: JSON.stringify(i.input ?? null),
              input_hash: i.inputHash ?? null,
              criterion: i.criterion ?? null,
              suite: i.suite ?? null,
              run_id: i.runId ?? null,
              item_ref: i.itemRef ?? null,
              suite_version: i.suiteVersion ?? 'unknown',
              created_at: i.createdAt ?? nowIso(),
            })
            .onConflict((oc) => oc.column('id').doNothing()),
        );
      }
      for (const a of newAnns) await this.insertAnnotation(t, a);
    });
    return { items: newItems.length, annotations: newAnns.length, unchanged };
  }
}

/** The annotation store on a SQLite run store's handle (the same as {@link SqlAnnotationStore} on its `StoreSql`). */
export class SqliteAnnotationStore extends SqlAnnotationStore {
  /** @param db the SQLite handle of a run store at schema version ≥ 6 (`sqliteHandleOf`); callers use `annotationStoreOf`. */
  constructor(db: Database.Database) {
    super(sqliteSql(db), db);
  }
}

/**
 * The export records of an annotation store (either engine): a header naming the verdict schema versions, then each
 * item with annotations followed by its annotations. The caller syncs judgements first.
 * @returns the records, in the order `toJsonl` writes them.
 */
export async function exportAnnotationRecords(
  store: Pick<AnnotationStore, 'listItems' | 'annotationsByItem'>,
  filter: ItemFilter = {},
): Promise<ExportRecord[]> {
  const items = await store.listItems(filter);
  const anns = await store.annotationsByItem(filter);
  const withAnn = items.filter((i) => anns.has(i.id));
  const versions: Record<string, string> = {};
  for (const i of withAnn) versions[i.task] = i.schemaVersion;
  const out: ExportRecord[] = [
    { type: 'header', format: 'loupe-annotations', version: 1, exportedAt: nowIso(), schemaVersions: versions },
  ];
  for (const i of withAnn) {
    out.push({ type: 'item', ...i });
    for (const a of anns.get(i.id)!) out.push({ type: 'annotation', ...a });
  }
  return out;
}

/**
 * Checks an annotations export against a store (either engine) and says what importing it adds: the items the store
 * lacks and the annotations it lacks; an annotation stored already with the same content counts as unchanged.
 * @param deps the store's reads: an item, an annotation by id, evidence checked (without requiring the files).
 * @throws LoupeInputError naming the file and line: no header, an item or annotation missing fields, an unknown task,
 *   another verdict schema or suite version, an invalid verdict or role, an annotation stored with other content.
 */
export async function planAnnotationImport(
  records: ReadonlyArray<{ line: number; record: ExportRecord }>,
  source: string,
  deps: {
    getItem(id: string): Promise<AnnotationItem | undefined>;
    getAnnotation(id: string): Promise<Annotation | undefined>;
    checkEvidence(ev: unknown, at: string): Promise<EvidenceRef[]>;
  },
): Promise<{ newItems: AnnotationItem[]; newAnns: Annotation[]; unchanged: number }> {
  const at = (line: number) => `${source} line ${line}`;
  const head = records[0];
  if (!head || head.record.type !== 'header' || (head.record as { format?: string }).format !== 'loupe-annotations') {
    throw new LoupeInputError(
      at(head?.line ?? 1),
      'is not a Loupe annotations export (the first line must be its header)',
    );
  }
  const fileItems = new Map<string, AnnotationItem>();
  const newItems: AnnotationItem[] = [];
  const newAnns: Annotation[] = [];
  let unchanged = 0;
  for (const { line, record } of records.slice(1)) {
    if (record.type === 'item') {
      const { type: _t, ...item } = record;
      if (typeof item.id !== 'string' || typeof item.task !== 'string' || !item.subject) {
        throw new LoupeInputError(at(line), 'an item needs id, task and subject');
      }
      let here: string;
      try {
        here = schemaVersion(item.task);
      } catch {
        throw new LoupeInputError(at(line), `item ${item.id}: task '${item.task}' is not known here`);
      }
      if (item.schemaVersion !== here) {
        throw new LoupeInputError(
          at(line),
          `item ${item.id}: its verdict schema of ${item.task} is version ${item.schemaVersion} in the file but ${here} here; export again from a Loupe with the same judge schemas`,
        );
      }
      const local = await deps.getItem(item.id);
      if (
        local &&
        local.suiteVersion !== 'unknown' &&
        item.suiteVersion !== 'unknown' &&
        local.suiteVersion !== item.suiteVersion
      ) {
        throw new LoupeInputError(
          at(line),
          `item ${item.id} comes from suite version ${item.suiteVersion} but this store has it from ${local.suiteVersion}`,
        );
      }
      fileItems.set(item.id, item as AnnotationItem);
      if (!local) newItems.push(item as AnnotationItem);
    } else if (record.type === 'annotation') {
      const { type: _t, ...a } = record;
      if (typeof a.id !== 'string' || typeof a.itemId !== 'string' || typeof a.annotator !== 'string' || !a.annotator) {
        throw new LoupeInputError(at(line), 'an annotation needs id, itemId and annotator');
      }
      const item = fileItems.get(a.itemId) ?? (await deps.getItem(a.itemId));
      if (!item) {
        throw new LoupeInputError(
          at(line),
          `annotation ${a.id}: item ${a.itemId} is neither in the file (before it) nor in this store`,
        );
      }
      validateVerdict(item.task, a.verdict, at(line));
      if (a.role !== 'annotator' && a.role !== 'adjudicator') {
        throw new LoupeInputError(at(line), `annotation ${a.id}: role must be annotator or adjudicator`);
      }
      const ann: Annotation = {
        id: a.id,
        itemId: a.itemId,
        annotator: a.annotator,
        role: a.role,
        verdict: a.verdict,
        evidence: await deps.checkEvidence(a.evidence, at(line)),
        note: a.note ?? null,
        supersedes: a.supersedes ?? null,
        final: !!a.final,
        origin: a.origin ?? 'import',
        createdAt: typeof a.createdAt === 'string' ? a.createdAt : nowIso(),
        dbRole: null,
      };
      const p = await deps.getAnnotation(a.id);
      if (p) {
        if (canonicalJson({ ...p, origin: '', dbRole: null }) !== canonicalJson({ ...ann, origin: '', dbRole: null })) {
          throw new LoupeInputError(at(line), `annotation ${a.id} is already stored with different content`);
        }
        unchanged++;
        continue;
      }
      newAnns.push(ann);
    } else if ((record as { type?: string }).type !== 'header') {
      throw new LoupeInputError(
        at(line),
        `unknown record type '${String((record as { type?: string }).type)}' (item, annotation)`,
      );
    }
  }
  return { newItems, newAnns, unchanged };
}

/**
 * Serialises export records as JSONL (one JSON object per line, newline-terminated).
 * @returns the file text.
 */
export function toJsonl(records: readonly ExportRecord[]): string {
  return records.map((r) => JSON.stringify(r)).join('\n') + '\n';
}

/**
 * Parses an annotations JSONL file.
 * @param text the file's text; `source` names it in errors.
 * @returns records with their 1-based line numbers (blank lines skipped).
 * @throws LoupeInputError naming the line: not JSON, not an object, or a last line cut off (truncated file).
 */
export function parseJsonl(text: string, source: string): Array<{ line: number; record: ExportRecord }> {
  const lines = text.split('\n');
  const out: Array<{ line: number; record: ExportRecord }> = [];
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!.trim();
    if (!l) continue;
    let v: unknown;
    try {
      v = JSON.parse(l);
    } catch {
      const last = i === lines.length - 1 && !text.endsWith('\n');
      throw new LoupeInputError(
        `${source} line ${i + 1}`,
        last
          ? 'is cut off (the file looks truncated); nothing was imported'
          : 'is not JSON (expected one JSON object per line); nothing was imported',
      );
    }
    if (!v || typeof v !== 'object' || Array.isArray(v) || typeof (v as { type?: unknown }).type !== 'string') {
      throw new LoupeInputError(`${source} line ${i + 1}`, 'must be a JSON object with a "type"; nothing was imported');
    }
    out.push({ line: i + 1, record: v as ExportRecord });
  }
  if (!out.length) throw new LoupeInputError(source, 'is empty; nothing was imported');
  return out;
}
