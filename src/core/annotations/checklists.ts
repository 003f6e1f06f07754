/**
 * Expert-authored checklists, versioned. A block's checklist (DDR fact items; AnalystBench-style criteria with 1–5
 * rubric anchors) is written by experts in Loupe and kept in the run store as immutable versions: every save is a
 * full snapshot with its content hash, author, time, parent version and note; retired items stay in the snapshot,
 * marked. The suite's native files are never edited; `exportChecklist` writes the native format. Two experts who
 * change the same item from the same base version get a {@link ChecklistConflictError} showing the other's change;
 * changes to different items are merged. Source: issue 15; `../shared/spec/annotation.md` (versioned artefacts).
 */
import { createHash } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { ChecklistVersionsTable } from '../store/schema.ts';
import type { StoreSql } from '../store/sql.ts';
import { storeSqlOf } from '../store/store-sql.ts';
import type { RunStore } from '../store/types.ts';
import type { ChecklistItem } from '../suites/types.ts';
import { LoupeInputError } from '../util/errors.ts';

/** What an item checks: a fact (DDR: question + answer, about an entity) or a criterion (1–5 rubric). */
export type ChecklistItemKind = 'fact' | 'criterion';

/** The evidence an expert attached to a fact item: the query they ran in the block's database and its result. */
export interface ChecklistEvidence {
  /** The read-only SQL query (run in the block's sandboxed database). */
  sql?: string;
  /** The query's result as the expert saw it (capped like the agent's SQL tool). */
  result?: { columns: string[]; rows: unknown[][]; rowCount: number; truncated: boolean };
  /** Values typed by the expert instead of a query (e.g. from a chart). */
  values?: string;
}

/** One item of an authored checklist. */
export interface AuthoredChecklistItem {
  /** Stable within the block across versions (`c1`, `c2`, ... or the native item's id). */
  id: string;
  kind: ChecklistItemKind;
  /** The fact asked about, or the criterion. */
  question: string;
  /** The expected answer (fact); for a criterion, what a full-score report does. */
  answer: string;
  sourceText?: string;
  /** DDR: the entity the fact is about. */
  entity?: string;
  evidence?: ChecklistEvidence;
  /** Criterion: the anchors of scores 1..5 (five strings). */
  rubric?: string[];
  /** Retired items stay in the version, excluded from scoring. */
  retired?: boolean;
  /** Who last changed the item, and when (ISO). */
  author: string;
  updatedAt: string;
}

/** Which block a checklist belongs to. */
export interface ChecklistKey {
  /** Benchmark kind. */
  suite: string;
  /** `Suite.id` (kind plus scenario or root name): checklists of two roots of one kind stay apart. */
  suiteId: string;
  blockId: string;
}

/** One stored version. */
export interface ChecklistVersion extends ChecklistKey {
  version: number;
  parent: number | null;
  /** sha256 (hex) of the canonical content of the items (authors and times excluded). */
  hash: string;
  items: AuthoredChecklistItem[];
  author: string;
  createdAt: string;
  note: string;
}

/** What changed between two versions (item ids). */
export interface ChecklistDiff {
  added: string[];
  changed: string[];
  retired: string[];
  restored: string[];
}

/** The second of two experts saved an item the first had changed meanwhile. Nothing was saved. */
export class ChecklistConflictError extends LoupeInputError {
  /** The latest version the save collided with. */
  readonly latest: ChecklistVersion;
  /** The other expert's version of each conflicting item (undefined when they removed it). */
  readonly theirs: Array<{ id: string; item: AuthoredChecklistItem | undefined }>;
  constructor(
    key: ChecklistKey,
    latest: ChecklistVersion,
    theirs: Array<{ id: string; item: AuthoredChecklistItem | undefined }>,
  ) {
    super(
      `checklist of ${key.blockId}`,
      `${latest.author} saved version ${latest.version} meanwhile and changed ${theirs.map((t) => t.id).join(', ')} too; review their change and save again on version ${latest.version}`,
    );
    this.name = 'ChecklistConflictError';
    this.latest = latest;
    this.theirs = theirs;
  }
}

const CONTENT_FIELDS = [
  'id',
  'kind',
  'question',
  'answer',
  'sourceText',
  'entity',
  'evidence',
  'rubric',
  'retired',
] as const;

/** The scored content of an item (no author or time), canonical (fixed key order, no undefined). */
function contentOf(i: AuthoredChecklistItem): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const k of CONTENT_FIELDS) if (i[k] !== undefined && !(k === 'retired' && i[k] === false)) o[k] = i[k];
  return o;
}

/**
 * The content hash of a checklist: sha256 of the canonical JSON of its items in order (author and time excluded, so
 * re-saving the same content is not a new version).
 * @param items the items. @returns 64 hex characters.
 */
export function checklistHash(items: readonly AuthoredChecklistItem[]): string {
  return createHash('sha256')
    .update(JSON.stringify(items.map(contentOf)))
    .digest('hex');
}

const sameContent = (a: AuthoredChecklistItem | undefined, b: AuthoredChecklistItem | undefined) =>
  JSON.stringify(a ? contentOf(a) : null) === JSON.stringify(b ? contentOf(b) : null);

/**
 * What changed from one version's items to another's.
 * @param from the older items; `to` the newer. @returns ids added, changed (content), retired and restored.
 */
export function diffChecklists(
  from: readonly AuthoredChecklistItem[],
  to: readonly AuthoredChecklistItem[],
): ChecklistDiff {
  const old = new Map(from.map((i) => [i.id, i]));
  const d: ChecklistDiff = { added: [], changed: [], retired: [], restored: [] };
  for (const i of to) {
    const o = old.get(i.id);
    if (!o) d.added.push(i.id);
    else if (!o.retired && i.retired) d.retired.push(i.id);
    else if (o.retired && !i.retired) d.restored.push(i.id);
    else if (!sameContent(o, i)) d.changed.push(i.id);
  }
  for (const o of from) if (!to.some((i) => i.id === o.id) && !o.retired) d.retired.push(o.id);
  return d;
}

/** The items a score uses: not retired, as suite checklist items (a criterion's rubric joined into its answer). */
export function activeChecklistItems(items: readonly AuthoredChecklistItem[]): ChecklistItem[] {
  return items
    .filter((i) => !i.retired)
    .map((i) => ({
      id: i.id,
      question: i.question,
      answer: i.kind === 'criterion' && i.rubric?.length === 5 ? rubricText(i.answer, i.rubric) : i.answer,
      ...(i.sourceText ? { sourceText: i.sourceText } : {}),
    }));
}

/** A criterion's anchors in the text form the AnalystBench scorer reads (`- 1: …` … `- 5: …`, one per line). */
function rubricText(_answer: string, rubric: readonly string[]): string {
  return rubric.map((r, k) => `- ${k + 1}: ${r.replace(/\s+/g, ' ').trim()}`).join('\n');
}

/**
 * Checks items before a save.
 * @throws LoupeInputError naming the item (`item 3 (c3)`) for a missing question or answer, a duplicate id, an
 *   unknown kind, or a rubric that is not five anchors.
 */
export function validateChecklistItems(items: readonly AuthoredChecklistItem[]): void {
  const seen = new Set<string>();
  items.forEach((it, k) => {
    const where = `item ${k + 1}${it?.id ? ` (${it.id})` : ''}`;
    if (!it || typeof it.id !== 'string' || !it.id.trim()) throw new LoupeInputError(where, 'needs an id');
    if (seen.has(it.id)) throw new LoupeInputError(where, `the id ${it.id} is used twice`);
    seen.add(it.id);
    if (it.kind !== 'fact' && it.kind !== 'criterion') {
      throw new LoupeInputError(where, `kind must be fact or criterion, got ${String(it.kind)}`);
    }
    if (typeof it.question !== 'string' || !it.question.trim()) {
      throw new LoupeInputError(where, it.kind === 'fact' ? 'needs the fact asked about' : 'needs the criterion');
    }
    if (it.kind === 'fact' && (typeof it.answer !== 'string' || !it.answer.trim())) {
      throw new LoupeInputError(where, 'needs the expected answer');
    }
    if (
      it.rubric !== undefined &&
      (!Array.isArray(it.rubric) || it.rubric.length !== 5 || it.rubric.some((r) => typeof r !== 'string' || !r.trim()))
    ) {
      throw new LoupeInputError(where, 'a rubric has five anchors (scores 1 to 5), each a sentence');
    }
  });
}

/** Versioned checklists kept with the runs. */
export interface ChecklistStore {
  /** The newest version of a block's checklist, or undefined when none was authored. */
  latest(key: ChecklistKey): Promise<ChecklistVersion | undefined>;
  /** One version, or undefined. */
  get(key: ChecklistKey, version: number): Promise<ChecklistVersion | undefined>;
  /** Every version of a block, oldest first. */
  versions(key: ChecklistKey): Promise<ChecklistVersion[]>;
  /** Blocks with an authored checklist (their latest version), optionally of one suite id. */
  listLatest(suiteId?: string): Promise<ChecklistVersion[]>;
  /**
   * Saves a new version edited from `base` (null: the first version, or a fresh start from the native checklist).
   * Items are stamped with `author`/time where their content changed. Identical content is not a new version.
   * @returns the saved (or unchanged latest) version and whether it is new.
   * @throws ChecklistConflictError when someone saved since `base` and changed an item this save changes too;
   *   LoupeInputError for invalid items (nothing saved).
   */
  save(
    key: ChecklistKey,
    o: { base: number | null; items: AuthoredChecklistItem[]; author: string; note?: string },
  ): Promise<{ version: ChecklistVersion; created: boolean }>;
}

/** A `checklist_versions` row (either engine) as a {@link ChecklistVersion}. */
export const versionFromRow = (r: Selectable<ChecklistVersionsTable>): ChecklistVersion => ({
  suite: r.suite,
  suiteId: r.suite_id,
  blockId: r.block_id,
  version: r.version,
  parent: r.parent ?? null,
  hash: r.hash,
  items: JSON.parse(r.items) as AuthoredChecklistItem[],
  author: r.author,
  createdAt: r.created_at,
  note: r.note ?? '',
});

/**
 * {@link ChecklistStore} in a run store of either engine (table `checklist_versions`, migration 7; queries through
 * `StoreSql`). A save holds the block's lock (`StoreSql.tx`): two experts saving the same block take turns.
 */
export class StoreChecklistStore implements ChecklistStore {
  readonly #s: StoreSql;
  /** @param s the run store's queries (`storeSqlOf`); callers use {@link checklistStoreOf}. */
  constructor(s: StoreSql) {
    this.#s = s;
  }

  #block(s: StoreSql, key: ChecklistKey) {
    return s.db
      .selectFrom('checklist_versions')
      .selectAll()
      .where('suite_id', '=', key.suiteId)
      .where('block_id', '=', key.blockId);
  }

  async latest(key: ChecklistKey): Promise<ChecklistVersion | undefined> {
    const r = await this.#s.first(this.#block(this.#s, key).orderBy('version', 'desc').limit(1));
    return r ? versionFromRow(r) : undefined;
  }

  async get(key: ChecklistKey, version: number): Promise<ChecklistVersion | undefined> {
    const r = await this.#s.first(this.#block(this.#s, key).where('version', '=', version));
    return r ? versionFromRow(r) : undefined;
  }

  async versions(key: ChecklistKey): Promise<ChecklistVersion[]> {
    return (await this.#s.all(this.#block(this.#s, key).orderBy('version'))).map(versionFromRow);
  }

  async listLatest(suiteId?: string): Promise<ChecklistVersion[]> {
    let q = this.#s.db
      .selectFrom('checklist_versions as v')
      .selectAll('v')
      .where('v.version', '=', (eb) =>
        eb
          .selectFrom('checklist_versions as w')
          .select((w) => w.fn.max('w.version').as('m'))
          .whereRef('w.suite_id', '=', 'v.suite_id')
          .whereRef('w.block_id', '=', 'v.block_id'),
      );
    if (suiteId !== undefined) q = q.where('v.suite_id', '=', suiteId);
    return (await this.#s.all(q.orderBy('v.suite_id').orderBy('v.block_id'))).map(versionFromRow);
  }

  async save(
    key: ChecklistKey,
    o: { base: number | null; items: AuthoredChecklistItem[]; author: string; note?: string },
  ): Promise<{ version: ChecklistVersion; created: boolean }> {
    if (!o.author?.trim()) throw new LoupeInputError('checklist author', 'say who is saving (the annotator name)');
    validateChecklistItems(o.items);
    // a conflict is returned out of the transaction and thrown after it (see sqliteSql: nothing else is rolled back)
    const out = await this.#s.tx(`checklist|${key.suiteId}|${key.blockId}`, async (t) => {
      const latestRow = await t.first(this.#block(t, key).orderBy('version', 'desc').limit(1));
      const baseRow = o.base ? await t.first(this.#block(t, key).where('version', '=', o.base)) : undefined;
      let plan: { version: ChecklistVersion; created: boolean };
      try {
        plan = planChecklistSave(
          key,
          latestRow ? versionFromRow(latestRow) : undefined,
          baseRow ? versionFromRow(baseRow).items : [],
          o,
        );
      } catch (e) {
        return { error: e };
      }
      if (plan.created) {
        const v = plan.version;
        await t.run(
          t.db.insertInto('checklist_versions').values({
            suite_id: key.suiteId,
            block_id: key.blockId,
            suite: key.suite,
            version: v.version,
            parent: v.parent,
            hash: v.hash,
            items: JSON.stringify(v.items),
            author: v.author,
            created_at: v.createdAt,
            note: v.note,
          }),
        );
      }
      return { plan };
    });
    if ('error' in out) throw out.error;
    return out.plan;
  }
}

/**
 * What saving a checklist edit makes, engine-independent (the stores call it inside their transaction): the merge
 * with versions saved since `base`, author stamps, and the next version — or the latest when nothing changed.
 * @param latest the newest stored version (undefined: none); `baseItems` the items of version `o.base` ([] for none).
 * @returns the version to insert (`created`), or the unchanged latest.
 * @throws ChecklistConflictError when someone saved since `base` and changed an item this save changes too;
 *   LoupeInputError when `base` does not exist.
 */
export function planChecklistSave(
  key: ChecklistKey,
  latest: ChecklistVersion | undefined,
  baseItems: AuthoredChecklistItem[],
  o: { base: number | null; items: AuthoredChecklistItem[]; author: string; note?: string },
): { version: ChecklistVersion; created: boolean } {
  if (o.base !== null && o.base !== undefined && o.base > (latest?.version ?? 0)) {
    throw new LoupeInputError(
      `checklist of ${key.blockId}`,
      `there is no version ${o.base} to edit from (latest: ${latest?.version ?? 'none'})`,
    );
  }
  let items = o.items;
  if (latest && latest.version !== (o.base ?? 0)) {
    // Someone saved meanwhile: merge unless we both changed the same item.
    const byId = (l: readonly AuthoredChecklistItem[]) => new Map(l.map((i) => [i.id, i]));
    const b = byId(baseItems);
    const mine = byId(o.items);
    const theirs = byId(latest.items);
    const ids = [...new Set([...b.keys(), ...mine.keys(), ...theirs.keys()])];
    const iChanged = (id: string) => !sameContent(b.get(id), mine.get(id));
    const theyChanged = (id: string) => !sameContent(b.get(id), theirs.get(id));
    const clash = ids.filter((id) => iChanged(id) && theyChanged(id) && !sameContent(mine.get(id), theirs.get(id)));
    if (clash.length) {
      throw new ChecklistConflictError(
        key,
        latest,
        clash.map((id) => ({ id, item: theirs.get(id) })),
      );
    }
    const order = [...latest.items.map((i) => i.id), ...o.items.map((i) => i.id).filter((id) => !theirs.has(id))];
    items = order.flatMap((id) => {
      const it = iChanged(id) ? mine.get(id) : theirs.get(id);
      return it ? [it] : [];
    });
  }
  const now = new Date().toISOString();
  const prev = new Map((latest?.items ?? baseItems).map((i) => [i.id, i]));
  items = items.map((i) =>
    sameContent(prev.get(i.id), i) && prev.get(i.id)
      ? { ...i, author: prev.get(i.id)!.author, updatedAt: prev.get(i.id)!.updatedAt }
      : { ...i, author: o.author, updatedAt: now },
  );
  const hash = checklistHash(items);
  if (latest && latest.hash === hash) return { version: latest, created: false };
  const version = (latest?.version ?? 0) + 1;
  return {
    version: {
      ...key,
      version,
      parent: latest?.version ?? null,
      hash,
      items,
      author: o.author,
      createdAt: now,
      note: o.note ?? '',
    },
    created: true,
  };
}

/**
 * The checklist store kept with a run store (same database and engine).
 * @throws Error naming the engine when checklists are not available on it.
 */
export function checklistStoreOf(store: RunStore): ChecklistStore {
  return new StoreChecklistStore(storeSqlOf(store, 'checklists'));
}

/**
 * A suite's native checklist as authored items (the starting point of a first version).
 * @param items the block's native checklist (`Block.hidden.checklist`); `kind` what its items check; `entity` DDR's.
 * @returns items stamped with author `native` and time of the epoch.
 */
export function authoredFromNative(
  items: readonly ChecklistItem[],
  kind: ChecklistItemKind,
  entity?: string,
): AuthoredChecklistItem[] {
  return items.map((c) => ({
    id: c.id,
    kind,
    question: c.question,
    answer: c.answer,
    ...(c.sourceText ? { sourceText: c.sourceText } : {}),
    ...(entity ? { entity } : {}),
    author: 'native',
    updatedAt: new Date(0).toISOString(),
  }));
}
