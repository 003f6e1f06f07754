/**
 * Labelling instructions and assignment of annotation queues (issue 43; migration 20), as LangSmith's and Phoenix's
 * annotation queues have them: a queue's rubric (Markdown a colleague wrote: data, rendered sanitised by whoever shows
 * it), items assigned to named annotators, and progress per annotator. Written once for both engines through
 * `StoreSql`; every change is a new row (a new instructions version, a new assignment), so who was asked to label
 * what under which rubric stays on record.
 * Source: issue 43 "Queue instructions and assignment".
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { LoupeInputError } from '../util/errors.ts';
import type { StoreSql } from '../store/sql.ts';
import { storeSqlOf } from '../store/store-sql.ts';
import type { RunStore } from '../store/types.ts';

/** The most characters a queue's instructions may have (a rubric, not a manual). */
export const INSTRUCTIONS_MAX_CHARS = 20_000;

/** A version of a queue's instructions. */
export interface QueueInstructions {
  queueId: string;
  version: number;
  /** Markdown text (show it through a sanitiser, never as markup of the page). */
  text: string;
  author: string;
  createdAt: string;
}

/** One annotator's progress on a queue. */
export interface AnnotatorProgress {
  annotator: string;
  /** Items assigned to them now. */
  assigned: number;
  /** Of those, items they have annotated. */
  done: number;
  /** Items they annotated that are not assigned to them (helping out, or before assignment). */
  extra: number;
}

/** Assignment and progress of a queue. */
export interface AssignmentProgress {
  queueId: string;
  /** Items in the queue. */
  total: number;
  /** Items assigned to nobody. */
  unassigned: number;
  /** Per annotator with an assignment or an annotation in the queue, by name. */
  annotators: AnnotatorProgress[];
}

/** An item assigned to an annotator that they have not annotated yet. */
export interface PendingAssignment {
  queueId: string;
  itemId: string;
  pos: number;
  /** The run the item is about, if any. */
  runId: string | null;
}

const checkName = (v: string, what: string): string => {
  const s = (v ?? '').trim();
  if (!s) throw new LoupeInputError(what, 'is empty');
  if (s.length > 80) throw new LoupeInputError(what, 'is longer than 80 characters');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u.test(s)) {
    throw new LoupeInputError(what, 'holds a control or direction character');
  }
  return s;
};

/** Instructions and assignment of the annotation queues of one run store. */
export class QueueAssignmentStore {
  readonly #s: StoreSql;
  /** @param s the run store's queries (`storeSqlOf`); callers use {@link queueAssignmentStoreOf}. */
  constructor(s: StoreSql) {
    this.#s = s;
  }

  async #requireQueue(queueId: string): Promise<void> {
    if (!(await this.#s.first(this.#s.db.selectFrom('annotation_queues').select('id').where('id', '=', queueId)))) {
      throw new LoupeInputError(`queue ${queueId}`, 'does not exist');
    }
  }

  /**
   * Saves a new version of a queue's instructions (an empty text clears them).
   * @returns the version written.
   * @throws LoupeInputError when the queue does not exist, the text is longer than {@link INSTRUCTIONS_MAX_CHARS} or
   *   holds a NUL, or the author is empty.
   */
  async setInstructions(queueId: string, text: string, author: string): Promise<QueueInstructions> {
    await this.#requireQueue(queueId);
    const who = checkName(author, 'author');
    if (text.length > INSTRUCTIONS_MAX_CHARS) {
      throw new LoupeInputError(
        `instructions of queue ${queueId}`,
        `are longer than ${INSTRUCTIONS_MAX_CHARS} characters`,
      );
    }
    if (text.includes('\u0000')) throw new LoupeInputError(`instructions of queue ${queueId}`, 'hold a NUL character');
    return this.#s.tx(`queue-instructions|${queueId}`, async (t) => {
      const last = await t.first(
        t.db
          .selectFrom('queue_instructions')
          .select((e) => e.fn.max('version').as('v'))
          .where('queue_id', '=', queueId),
      );
      const row = {
        queue_id: queueId,
        version: Number(last?.v ?? 0) + 1,
        text,
        author: who,
        created_at: new Date().toISOString(),
      };
      await t.run(t.db.insertInto('queue_instructions').values(row));
      return { queueId, version: row.version, text, author: who, createdAt: row.created_at };
    });
  }

  /** The newest instructions of a queue, or undefined when it has none (or they were cleared). */
  async instructions(queueId: string): Promise<QueueInstructions | undefined> {
    const r = await this.#s.first(
      this.#s.db
        .selectFrom('queue_instructions')
        .selectAll()
        .where('queue_id', '=', queueId)
        .orderBy('version', 'desc')
        .limit(1),
    );
    if (!r || !r.text.trim()) return undefined;
    return { queueId, version: Number(r.version), text: r.text, author: r.author, createdAt: r.created_at };
  }

  /**
   * Assigns items of a queue to an annotator ('' or null: to nobody). Items not in the queue are refused.
   * @param itemIds the items, or 'all' for every item of the queue, or `{ unassigned: n }` for the first n items
   *   (queue order) assigned to nobody.
   * @returns the item ids assigned.
   * @throws LoupeInputError when the queue does not exist or an item is not in it.
   */
  async assign(
    queueId: string,
    itemIds: readonly string[] | 'all' | { unassigned: number },
    annotator: string | null,
    by: string,
  ): Promise<string[]> {
    await this.#requireQueue(queueId);
    const who = annotator === null || annotator.trim() === '' ? '' : checkName(annotator, 'annotator');
    const assigner = checkName(by, 'assigned by');
    const items = await this.#items(queueId);
    let ids: string[];
    if (itemIds === 'all') ids = items.map((i) => i.item_id);
    else if (!Array.isArray(itemIds)) {
      const current = await this.assignments(queueId);
      const n = (itemIds as { unassigned: number }).unassigned;
      if (!Number.isInteger(n) || n < 1) {
        throw new LoupeInputError('number of items', `must be a positive integer, got ${n}`);
      }
      ids = items
        .filter((i) => !current.get(i.item_id))
        .slice(0, n)
        .map((i) => i.item_id);
    } else {
      const inQueue = new Set(items.map((i) => i.item_id));
      for (const id of itemIds as readonly string[]) {
        if (!inQueue.has(id)) throw new LoupeInputError(`item ${id}`, `is not in queue ${queueId}`);
      }
      ids = [...new Set(itemIds as readonly string[])];
    }
    if (!ids.length) return [];
    const at = new Date().toISOString();
    await this.#s.tx(null, async (t) => {
      for (let i = 0; i < ids.length; i += 500) {
        await t.run(
          t.db.insertInto('queue_assignments').values(
            ids.slice(i, i + 500).map((item_id) => ({
              id: randomUUID(),
              queue_id: queueId,
              item_id,
              annotator: who,
              assigned_by: assigner,
              created_at: at,
            })),
          ),
        );
      }
    });
    return ids;
  }

  async #items(queueId: string) {
    return this.#s.all(
      this.#s.db
        .selectFrom('annotation_queue_items')
        .select(['item_id', 'pos'])
        .where('queue_id', '=', queueId)
        .orderBy('pos'),
    );
  }

  /** Who each item of a queue is assigned to now (item id → annotator; unassigned items absent). */
  async assignments(queueId: string): Promise<Map<string, string>> {
    const rows = await this.#s.all(
      this.#s.db
        .selectFrom('queue_assignments')
        .select(['item_id', 'annotator'])
        .where('queue_id', '=', queueId)
        .orderBy(sql.ref(this.#s.rowid)),
    );
    const out = new Map<string, string>();
    for (const r of rows) {
      if (r.annotator) out.set(r.item_id, r.annotator);
      else out.delete(r.item_id);
    }
    return out;
  }

  /**
   * Who annotated which item of a queue (annotator role; adjudications are not labelling). On PostgreSQL through the
   * `annotation_meta` view, which shows who annotated an item without the verdict, so a blind annotator sees
   * everyone's progress without seeing their verdicts.
   */
  async #annotatedBy(queueId: string): Promise<Map<string, Set<string>>> {
    const table = (this.#s.dialect === 'postgres' ? 'annotation_meta' : 'annotations') as 'annotations';
    const rows = await this.#s.all(
      this.#s.db
        .selectFrom(table)
        .select(['item_id', 'annotator'])
        .distinct()
        .where('role', '=', 'annotator')
        .where('item_id', 'in', (e) =>
          e.selectFrom('annotation_queue_items').select('item_id').where('queue_id', '=', queueId),
        ),
    );
    const out = new Map<string, Set<string>>();
    for (const r of rows) {
      let s = out.get(r.annotator);
      if (!s) out.set(r.annotator, (s = new Set()));
      s.add(r.item_id);
    }
    return out;
  }

  /**
   * Assignment and progress per annotator of a queue.
   * @param within when given, only items in it count (an experiment's items: see the app's run scope).
   */
  async progress(queueId: string, within?: ReadonlySet<string>): Promise<AssignmentProgress> {
    const items = (await this.#items(queueId)).map((i) => i.item_id).filter((id) => !within || within.has(id));
    const inQueue = new Set(items);
    const assigned = await this.assignments(queueId);
    const annotated = await this.#annotatedBy(queueId);
    const people = new Set<string>([
      ...[...assigned].filter(([i]) => inQueue.has(i)).map(([, a]) => a),
      ...annotated.keys(),
    ]);
    const annotators: AnnotatorProgress[] = [...people]
      .sort()
      .map((annotator) => {
        const mine = items.filter((i) => assigned.get(i) === annotator);
        const did = annotated.get(annotator) ?? new Set<string>();
        return {
          annotator,
          assigned: mine.length,
          done: mine.filter((i) => did.has(i)).length,
          extra: [...did].filter((i) => inQueue.has(i) && assigned.get(i) !== annotator).length,
        };
      })
      .filter((p) => p.assigned || p.extra);
    return { queueId, total: items.length, unassigned: items.filter((i) => !assigned.has(i)).length, annotators };
  }

  /**
   * Items assigned to an annotator that they have not annotated, across every queue (or one), in queue order.
   * @returns one entry per queue and item.
   */
  async pendingFor(annotator: string, queueId?: string): Promise<PendingAssignment[]> {
    let q = this.#s.db.selectFrom('queue_assignments').select(['queue_id', 'item_id', 'annotator']);
    if (queueId) q = q.where('queue_id', '=', queueId);
    const rows = await this.#s.all(
      q
        .where('item_id', 'in', (e) =>
          e.selectFrom('queue_assignments').select('item_id').where('annotator', '=', annotator),
        )
        .orderBy(sql.ref(this.#s.rowid)),
    );
    const current = new Map<string, { queueId: string; itemId: string; annotator: string }>();
    for (const r of rows) {
      current.set(`${r.queue_id}\u0000${r.item_id}`, {
        queueId: r.queue_id,
        itemId: r.item_id,
        annotator: r.annotator,
      });
    }
    const mine = [...current.values()].filter((c) => c.annotator === annotator);
    if (!mine.length) return [];
    const table = (this.#s.dialect === 'postgres' ? 'annotation_meta' : 'annotations') as 'annotations';
    const done = new Set(
      (
        await this.#s.all(
          this.#s.db
            .selectFrom(table)
            .select('item_id')
            .distinct()
            .where('annotator', '=', annotator)
            .where('role', '=', 'annotator')
            .where('item_id', 'in', [...new Set(mine.map((m) => m.itemId))]),
        )
      ).map((r) => r.item_id),
    );
    const open = mine.filter((m) => !done.has(m.itemId));
    if (!open.length) return [];
    const ids = [...new Set(open.map((m) => m.itemId))];
    const pos = new Map(
      (
        await this.#s.all(
          this.#s.db
            .selectFrom('annotation_queue_items')
            .select(['queue_id', 'item_id', 'pos'])
            .where('item_id', 'in', ids),
        )
      ).map((r) => [`${r.queue_id}\u0000${r.item_id}`, Number(r.pos)]),
    );
    const runs = new Map(
      (
        await this.#s.all(this.#s.db.selectFrom('annotation_items').select(['id', 'run_id']).where('id', 'in', ids))
      ).map((r) => [r.id, r.run_id]),
    );
    return open
      .filter((m) => pos.has(`${m.queueId}\u0000${m.itemId}`))
      .map((m) => ({
        queueId: m.queueId,
        itemId: m.itemId,
        pos: pos.get(`${m.queueId}\u0000${m.itemId}`)!,
        runId: runs.get(m.itemId) ?? null,
      }))
      .sort((a, b) => a.queueId.localeCompare(b.queueId) || a.pos - b.pos);
  }
}

/**
 * The queue instructions and assignment store of a run store (same database, either engine).
 * @throws Error when the run store is neither engine (see `storeSqlOf`).
 */
export function queueAssignmentStoreOf(store: RunStore): QueueAssignmentStore {
  return new QueueAssignmentStore(storeSqlOf(store, 'annotation queue assignment'));
}
