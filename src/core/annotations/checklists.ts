/**
 * Expert-authored checklists, versioned. A block's checklist (DDR fact items; AnalystBench-style criteria with 1–5
 * rubric anchors) is written by experts in Loupe and kept in the run store as immutable versions: every save is a
 * full snapshot with its content hash, author, time, parent version and note; retired items stay in the snapshot,
 * marked. The suite's native files are never edited; `exportChecklist` writes the native format. Two experts who
 * change the same item from the same base version get a {@link ChecklistConflictError} showing the other's change;
 * changes to different items are merged. Source: issue 15; `../shared/spec/annotation.md` (versioned artefacts).
 */
import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';
import type pg from 'pg';
import { pgReadyPoolOf, pgTransaction } from '../store/pg-run-store.ts';
import { sqliteHandleOf } from '../store/run-store.ts';
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
  constructor(key: ChecklistKey, latest: ChecklistVersion, theirs: Array<{ id: string; item: AuthoredChecklistItem | undefined }>) {
    super(`checklist of ${key.blockId}`, `${latest.author} saved version ${latest.version} meanwhile and changed ${theirs.map((t) => t.id).join(', ')} too; review their change and save again on version ${latest.version}`);
    this.name = 'ChecklistConflictError';
    this.latest = latest;
    this.theirs = theirs;
  }
}

const CONTENT_FIELDS = ['id', 'kind', 'question', 'answer', 'sourceText', 'entity', 'evidence', 'rubric', 'retired'] as const;

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
  return createHash('sha256').update(JSON.stringify(items.map(contentOf))).digest('hex');
}

const sameContent = (a: AuthoredChecklistItem | undefined, b: AuthoredChecklistItem | undefined) => JSON.stringify(a ? contentOf(a) : null) === JSON.stringify(b ? contentOf(b) : null);

/**
 * What changed from one version's items to another's.
 * @param from the older items; `to` the newer. @returns ids added, changed (content), retired and restored.
 */
export function diffChecklists(from: readonly AuthoredChecklistItem[], to: readonly AuthoredChecklistItem[]): ChecklistDiff {
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
  return items.filter((i) => !i.retired).map((i) => ({
    id: i.id, question: i.question,
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
    if (it.kind !== 'fact' && it.kind !== 'criterion') throw new LoupeInputError(where, `kind must be fact or criterion, got ${String(it.kind)}`);
    if (typeof it.question !== 'string' || !it.question.trim()) throw new LoupeInputError(where, it.kind === 'fact' ? 'needs the fact asked about' : 'needs the criterion');
    if (it.kind === 'fact' && (typeof it.answer !== 'string' || !it.answer.trim())) throw new LoupeInputError(where, 'needs the expected answer');
    if (it.rubric !== undefined && (!Array.isArray(it.rubric) || it.rubric.length !== 5 || it.rubric.some((r) => typeof r !== 'string' || !r.trim()))) {
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
  save(key: ChecklistKey, o: { base: number | null; items: AuthoredChecklistItem[]; author: string; note?: string }): Promise<{ version: ChecklistVersion; created: boolean }>;
}

type Row = Record<string, unknown>;
/** A `checklist_versions` row (either engine) as a {@link ChecklistVersion}. */
export const versionFromRow = (r: Row): ChecklistVersion => ({
  suite: r.suite as string, suiteId: r.suite_id as string, blockId: r.block_id as string, version: r.version as number,
  parent: (r.parent as number | null) ?? null, hash: r.hash as string, items: JSON.parse(r.items as string) as AuthoredChecklistItem[],
  author: r.author as string, createdAt: r.created_at as string, note: (r.note as string) ?? '',
});

/** {@link ChecklistStore} in the SQLite run store (table `checklist_versions`, migration 7). */
export class SqliteChecklistStore implements ChecklistStore {
  readonly #db: Database.Database;
  /** @param db the SQLite handle of a run store (`sqliteHandleOf`); callers use {@link checklistStoreOf}. */
  constructor(db: Database.Database) {
    this.#db = db;
  }

  async latest(key: ChecklistKey): Promise<ChecklistVersion | undefined> {
    const r = this.#db.prepare('SELECT * FROM checklist_versions WHERE suite_id = ? AND block_id = ? ORDER BY version DESC LIMIT 1').get(key.suiteId, key.blockId) as Row | undefined;
    return r ? versionFromRow(r) : undefined;
  }

  async get(key: ChecklistKey, version: number): Promise<ChecklistVersion | undefined> {
    const r = this.#db.prepare('SELECT * FROM checklist_versions WHERE suite_id = ? AND block_id = ? AND version = ?').get(key.suiteId, key.blockId, version) as Row | undefined;
    return r ? versionFromRow(r) : undefined;
  }

  async versions(key: ChecklistKey): Promise<ChecklistVersion[]> {
    return (this.#db.prepare('SELECT * FROM checklist_versions WHERE suite_id = ? AND block_id = ? ORDER BY version').all(key.suiteId, key.blockId) as Row[]).map(versionFromRow);
  }

  async listLatest(suiteId?: string): Promise<ChecklistVersion[]> {
    const rows = this.#db.prepare(`SELECT v.* FROM checklist_versions v WHERE ${suiteId !== undefined ? 'v.suite_id = ? AND ' : ''}v.version = (SELECT MAX(version) FROM checklist_versions w WHERE w.suite_id = v.suite_id AND w.block_id = v.block_id) ORDER BY v.suite_id, v.block_id`)
      .all(...(suiteId !== undefined ? [suiteId] : [])) as Row[];
    return rows.map(versionFromRow);
  }

  async save(key: ChecklistKey, o: { base: number | null; items: AuthoredChecklistItem[]; author: string; note?: string }): Promise<{ version: ChecklistVersion; created: boolean }> {
    if (!o.author?.trim()) throw new LoupeInputError('checklist author', 'say who is saving (the annotator name)');
    validateChecklistItems(o.items);
    const tx = this.#db.transaction((): { version: ChecklistVersion; created: boolean } => {
      const latestRow = this.#db.prepare('SELECT * FROM checklist_versions WHERE suite_id = ? AND block_id = ? ORDER BY version DESC LIMIT 1').get(key.suiteId, key.blockId) as Row | undefined;
      const latest = latestRow ? versionFromRow(latestRow) : undefined;
      const baseRow = o.base ? (this.#db.prepare('SELECT * FROM checklist_versions WHERE suite_id = ? AND block_id = ? AND version = ?').get(key.suiteId, key.blockId, o.base) as Row | undefined) : undefined;
      const out = planChecklistSave(key, latest, baseRow ? versionFromRow(baseRow).items : [], o);
      if (out.created) {
        const v = out.version;
        this.#db.prepare('INSERT INTO checklist_versions (suite_id, block_id, suite, version, parent, hash, items, author, created_at, note) VALUES (?,?,?,?,?,?,?,?,?,?)')
          .run(key.suiteId, key.blockId, key.suite, v.version, v.parent, v.hash, JSON.stringify(v.items), v.author, v.createdAt, v.note);
      }
      return out;
    });
    return tx.immediate();
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
export function planChecklistSave(key: ChecklistKey, latest: ChecklistVersion | undefined, baseItems: AuthoredChecklistItem[], o: { base: number | null; items: AuthoredChecklistItem[]; author: string; note?: string }): { version: ChecklistVersion; created: boolean } {
  if (o.base !== null && o.base !== undefined && o.base > (latest?.version ?? 0)) throw new LoupeInputError(`checklist of ${key.blockId}`, `there is no version ${o.base} to edit from (latest: ${latest?.version ?? 'none'})`);
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
    if (clash.length) throw new ChecklistConflictError(key, latest, clash.map((id) => ({ id, item: theirs.get(id) })));
    const order = [...latest.items.map((i) => i.id), ...o.items.map((i) => i.id).filter((id) => !theirs.has(id))];
    items = order.flatMap((id) => {
      const it = iChanged(id) ? mine.get(id) : theirs.get(id);
      return it ? [it] : [];
    });
  }
  const now = new Date().toISOString();
  const prev = new Map((latest?.items ?? baseItems).map((i) => [i.id, i]));
  items = items.map((i) => (sameContent(prev.get(i.id), i) && prev.get(i.id) ? { ...i, author: prev.get(i.id)!.author, updatedAt: prev.get(i.id)!.updatedAt } : { ...i, author: o.author, updatedAt: now }));
  const hash = checklistHash(items);
  if (latest && latest.hash === hash) return { version: latest, created: false };
  const version = (latest?.version ?? 0) + 1;
  return { version: { ...key, version, parent: latest?.version ?? null, hash, items, author: o.author, createdAt: now, note: o.note ?? '' }, created: true };
}

/** {@link ChecklistStore} in the PostgreSQL team store (table `checklist_versions`); a save locks its block's key. */
export class PgChecklistStore implements ChecklistStore {
  readonly #pool: () => Promise<pg.Pool>;
  /** @param pool the run store's pool once migrated (`pgReadyPoolOf`); callers use {@link checklistStoreOf}. */
  constructor(pool: () => Promise<pg.Pool>) {
    this.#pool = pool;
  }

  async #rows(sql: string, params: unknown[]): Promise<Row[]> {
    return (await (await this.#pool()).query(sql, params)).rows as Row[];
  }

  async latest(key: ChecklistKey): Promise<ChecklistVersion | undefined> {
    const [r] = await this.#rows('SELECT * FROM checklist_versions WHERE suite_id = $1 AND block_id = $2 ORDER BY version DESC LIMIT 1', [key.suiteId, key.blockId]);
    return r ? versionFromRow(r) : undefined;
  }

  async get(key: ChecklistKey, version: number): Promise<ChecklistVersion | undefined> {
    const [r] = await this.#rows('SELECT * FROM checklist_versions WHERE suite_id = $1 AND block_id = $2 AND version = $3', [key.suiteId, key.blockId, version]);
    return r ? versionFromRow(r) : undefined;
  }

  async versions(key: ChecklistKey): Promise<ChecklistVersion[]> {
    return (await this.#rows('SELECT * FROM checklist_versions WHERE suite_id = $1 AND block_id = $2 ORDER BY version', [key.suiteId, key.blockId])).map(versionFromRow);
  }

  async listLatest(suiteId?: string): Promise<ChecklistVersion[]> {
    const rows = await this.#rows(`SELECT v.* FROM checklist_versions v WHERE ${suiteId !== undefined ? 'v.suite_id = $1 AND ' : ''}v.version = (SELECT MAX(version) FROM checklist_versions w WHERE w.suite_id = v.suite_id AND w.block_id = v.block_id) ORDER BY v.suite_id, v.block_id`,
      suiteId !== undefined ? [suiteId] : []);
    return rows.map(versionFromRow);
  }

  async save(key: ChecklistKey, o: { base: number | null; items: AuthoredChecklistItem[]; author: string; note?: string }): Promise<{ version: ChecklistVersion; created: boolean }> {
    if (!o.author?.trim()) throw new LoupeInputError('checklist author', 'say who is saving (the annotator name)');
    validateChecklistItems(o.items);
    const client = await (await this.#pool()).connect();
    return pgTransaction(client, async () => {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`checklist|${key.suiteId}|${key.blockId}`]);
      const [latestRow] = (await client.query('SELECT * FROM checklist_versions WHERE suite_id = $1 AND block_id = $2 ORDER BY version DESC LIMIT 1', [key.suiteId, key.blockId])).rows as Row[];
      const [baseRow] = o.base ? (await client.query('SELECT * FROM checklist_versions WHERE suite_id = $1 AND block_id = $2 AND version = $3', [key.suiteId, key.blockId, o.base])).rows as Row[] : [];
      const out = planChecklistSave(key, latestRow ? versionFromRow(latestRow) : undefined, baseRow ? versionFromRow(baseRow).items : [], o);
      if (out.created) {
        const v = out.version;
        await client.query('INSERT INTO checklist_versions (suite_id, block_id, suite, version, parent, hash, items, author, created_at, note) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)',
          [key.suiteId, key.blockId, key.suite, v.version, v.parent, v.hash, JSON.stringify(v.items), v.author, v.createdAt, v.note]);
      }
      return out;
    });
  }
}

const ENGINES: Record<string, (store: RunStore) => ChecklistStore> = {
  sqlite: (store) => new SqliteChecklistStore(sqliteHandleOf(store)),
  postgres: (store) => new PgChecklistStore(() => pgReadyPoolOf(store)),
};

/**
 * The checklist store kept with a run store (same database and engine).
 * @throws Error naming the engine when checklists are not available on it.
 */
export function checklistStoreOf(store: RunStore): ChecklistStore {
  const make = ENGINES[store.engine];
  if (!make) throw new Error(`checklists are not available on the ${store.engine} run store at ${store.location}`);
  return make(store);
}

/**
 * A suite's native checklist as authored items (the starting point of a first version).
 * @param items the block's native checklist (`Block.hidden.checklist`); `kind` what its items check; `entity` DDR's.
 * @returns items stamped with author `native` and time of the epoch.
 */
export function authoredFromNative(items: readonly ChecklistItem[], kind: ChecklistItemKind, entity?: string): AuthoredChecklistItem[] {
  return items.map((c) => ({
    id: c.id, kind, question: c.question, answer: c.answer, ...(c.sourceText ? { sourceText: c.sourceText } : {}),
    ...(entity ? { entity } : {}), author: 'native', updatedAt: new Date(0).toISOString(),
  }));
}
