/**
 * The annotation store on a PostgreSQL team store: the same interface, tables (migrations 6 and 9 of
 * `src/core/store/migrations.ts`) and rules as {@link SqliteAnnotationStore}, so several experts annotate the same
 * queues from their own editors; reservations and append-only annotations make concurrent annotators safe. The item
 * sync takes the watermark row `FOR UPDATE` (one syncing writer at a time, as SQLite's IMMEDIATE transaction does).
 * Source: issue 26 (PostgreSQL team store); issue 14 (annotation model); `../shared/spec/annotation.md`.
 */
import type pg from 'pg';
import { randomUUID } from 'node:crypto';
import { canonicalJson, sha256 } from '../eval/judges/canonical.ts';
import { CHANGES, connectionClosed, pgTransaction } from '../store/pg-run-store.ts';
import { jsonColumn, jsonNulToText } from '../store/pg-text.ts';
import { LoupeInputError } from '../util/errors.ts';
import {
  ANNOTATABLE_TASKS, judgementItemId, resolveItem, schemaVersion, validateVerdict,
  type Annotation, type AnnotationItem, type AnnotationQueue, type EvidenceRef, type QueueSpec, type Resolution, type ResolutionMode,
} from './model.ts';
import {
  annotationFromRow, auditSample, resolveStoredItem, disagreementIds, exportAnnotationRecords, itemFromRow, planAnnotationImport, progressRoles, queueFromRow, queueKinds, queueName, suiteVersionOf,
  type AnnotationDraft, type AnnotationStore, type ExportRecord, type ImportResult, type ItemFilter, type NewAnnotation, type QueueEntry, type QueueProgress,
} from './store.ts';

type Row = Record<string, unknown>;
type Q = (sql: string, params?: unknown[]) => Promise<Row[]>;

const nowIso = () => new Date().toISOString();

/**
 * A judgement's input as `json`, for `->>`: rows written before the text escape may hold the JSON escape `\u0000`,
 * which `->>` refuses (`jsonColumn`); a string read with `->>` goes through `jsonNulToText`, so a NUL in it reads back
 * as NUL, not as the six characters of its JSON escape (issue 39).
 */
const inputJson = `${jsonColumn('j.input')}::json`;

/** SQLite-style `?` placeholders as PostgreSQL's `$1, $2, …` (the statements here hold no `?` in literals). */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** The annotation store on a PostgreSQL run store's database. Callers use `annotationStoreOf`. */
export class PgAnnotationStore implements AnnotationStore {
  readonly #pool: () => Promise<pg.Pool>;
  /** @param pool the connection pool of a PostgreSQL run store, once migrated (`pgReadyPoolOf`). */
  constructor(pool: () => Promise<pg.Pool>) {
    this.#pool = pool;
  }

  /** One statement; resent on a new connection when the pooled one was closed by a server restart (it did not run). */
  #q: Q = async (sql, params = []) => {
    const pool = await this.#pool();
    for (let attempt = 0; ; attempt++) {
      try {
        return (await pool.query(numbered(sql), params)).rows as Row[];
      } catch (e) {
        if (!connectionClosed(e) || attempt >= 5) throw e;
        await new Promise((r) => setTimeout(r, 50 * attempt));
      }
    }
  };

  async #tx<T>(fn: (q: Q) => Promise<T>): Promise<T> {
    const pool = await this.#pool();
    let client = await pool.connect();
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query('BEGIN');
        break;
      } catch (e) {
        client.release(e as Error); // closed by a server restart: nothing ran; take a new connection
        if (!connectionClosed(e) || attempt >= 5) throw e;
        client = await pool.connect();
      }
    }
    const q: Q = async (sql, params = []) => (await client.query(numbered(sql), params)).rows as Row[];
    return pgTransaction(client, () => fn(q), { begun: true });
  }

  /**
   * Creates items for judgements (any judge but `exact` / `none`) not yet itemised, from the watermark on (triggers of
   * migration 9 keep it), in (judged_at, rid) order, each with its run's suite version.
   * @returns the number of items created.
   */
  async syncFromJudgements(): Promise<number> {
    const first = (await this.#q('SELECT judgements_from AS f FROM annotation_sync WHERE id = 1'))[0]?.f as number | null | undefined;
    if (first == null) return 0;
    const tasks = ANNOTATABLE_TASKS.map((t) => `'${t}'`).join(',');
    const versionCase = `CASE j.task ${ANNOTATABLE_TASKS.map((t) => `WHEN '${t}' THEN '${schemaVersion(t)}'`).join(' ')} END`;
    return this.#tx(async (q) => {
      const from = (await q('SELECT judgements_from AS f FROM annotation_sync WHERE id = 1 FOR UPDATE'))[0]?.f as number | null | undefined;
      if (from == null) return 0;
      const created = await q(`INSERT INTO annotation_items (id, subject_kind, subject, task, schema_version, input, input_hash, criterion, suite, run_id, item_ref, suite_version, created_at)
        SELECT 'j:' || j.task || ':' || j.input_hash, 'judgement',
          '{"kind":"judgement","task":' || to_json(j.task)::text || ',"inputHash":' || to_json(j.input_hash)::text || '}', j.task, ${versionCase}, j.input, j.input_hash,
          ${jsonNulToText(`CASE j.task WHEN 'checklist-score' THEN ${inputJson} ->> 'criterion' WHEN 'checklist-support' THEN ${inputJson} ->> 'question'
            WHEN 'trend-answer' THEN ${inputJson} ->> 'question' WHEN 'semantic-match' THEN ${inputJson} ->> 'kind' END`)},
          r.suite, j.run_id, j.item_ref, 'unknown', j.judged_at
        FROM judgements j LEFT JOIN runs r ON r.id = j.run_id
        WHERE j.rid >= ? AND j.task IN (${tasks}) AND j.judge_id NOT IN ('exact', 'none')
        ORDER BY j.judged_at, j.rid
        ON CONFLICT (id) DO NOTHING RETURNING 1`, [from]);
      await q('UPDATE annotation_sync SET judgements_from = NULL WHERE id = 1');
      if (created.length) {
        const runs = await q(`SELECT r.id, r.data_checksums FROM runs r WHERE r.id IN (SELECT i.run_id FROM annotation_items i WHERE i.suite_version = 'unknown')`);
        for (const r of runs) {
          const v = suiteVersionOf(r.data_checksums as string | null);
          if (v !== 'unknown') await q(`UPDATE annotation_items SET suite_version = ? WHERE run_id = ? AND suite_version = 'unknown'`, [v, r.id]);
        }
      }
      return created.length;
    });
  }

  async getItem(id: string): Promise<AnnotationItem | undefined> {
    const [r] = await this.#q('SELECT * FROM annotation_items WHERE id = ?', [id]);
    return r ? itemFromRow(r) : undefined;
  }

  async putItem(item: Omit<AnnotationItem, 'schemaVersion' | 'createdAt'> & { createdAt?: string }): Promise<AnnotationItem> {
    const v = schemaVersion(item.task);
    await this.#q(`INSERT INTO annotation_items (id, subject_kind, subject, task, schema_version, input, input_hash, criterion, suite, run_id, item_ref, suite_version, created_at)
      VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (id) DO NOTHING`, [item.id, item.subject.kind, JSON.stringify(item.subject), item.task, v, JSON.stringify(item.input), item.inputHash, item.criterion,
      item.suite, item.runId, item.itemRef, item.suiteVersion, item.createdAt ?? nowIso()]);
    return (await this.getItem(item.id))!;
  }

  #where(f: ItemFilter, alias = 'i'): { sql: string; params: unknown[] } {
    const w: string[] = [];
    const p: unknown[] = [];
    if (f.suite) { w.push(`${alias}.suite = ?`); p.push(f.suite); }
    if (f.task) { w.push(`${alias}.task = ?`); p.push(f.task); }
    else if (f.judgeTasksOnly) { w.push(`${alias}.task = ANY(?::text[])`); p.push([...ANNOTATABLE_TASKS]); }
    if (f.criterion) { w.push(`strpos(lower(COALESCE(${alias}.criterion, '')), lower(?)) > 0`); p.push(f.criterion); }
    if (f.runIds?.length) { w.push(`${alias}.run_id = ANY(?::text[])`); p.push(f.runIds); }
    return { sql: w.length ? `WHERE ${w.join(' AND ')}` : '', params: p };
  }

  async listItems(filter: ItemFilter = {}): Promise<AnnotationItem[]> {
    const { sql, params } = this.#where(filter);
    const lim = filter.limit ? ` LIMIT ${Math.max(0, Math.floor(filter.limit))}` : '';
    return (await this.#q(`SELECT * FROM annotation_items i ${sql} ORDER BY i.created_at, i.rid${lim}`, params)).map(itemFromRow);
  }

  async #checkEvidence(ev: unknown, at: string, mustExist = true): Promise<EvidenceRef[]> {
    if (ev === undefined || ev === null) return [];
    if (!Array.isArray(ev)) throw new LoupeInputError(at, 'evidence must be a list');
    const out: EvidenceRef[] = [];
    for (const [i, e] of (ev as unknown[]).entries()) {
      const x = (e ?? {}) as Record<string, unknown>;
      const where = `${at} evidence ${i + 1}`;
      switch (x.kind) {
        case 'step':
          if (typeof x.runId !== 'string' || !Number.isInteger(x.step)) throw new LoupeInputError(where, 'a step needs runId and an integer step');
          if (mustExist && !(await this.#q('SELECT 1 FROM steps WHERE run_id = ? AND idx = ?', [x.runId, x.step])).length) throw new LoupeInputError(where, `step ${String(x.step)} of run ${x.runId} does not exist (the run was deleted or has fewer steps)`);
          out.push({ kind: 'step', runId: x.runId, step: x.step as number });
          break;
        case 'cell':
          if (typeof x.runId !== 'string' || !Number.isInteger(x.seq)) throw new LoupeInputError(where, 'a cell needs runId and an integer seq');
          if (mustExist && !(await this.#q('SELECT 1 FROM kernel_cells WHERE run_id = ? AND seq = ?', [x.runId, x.seq])).length) throw new LoupeInputError(where, `notebook cell ${String(x.seq)} of run ${x.runId} does not exist`);
          out.push({ kind: 'cell', runId: x.runId, seq: x.seq as number });
          break;
        case 'doc':
          if (typeof x.path !== 'string' || !x.path) throw new LoupeInputError(where, 'a documentation page needs a path');
          out.push({ kind: 'doc', path: x.path, ...(Number.isInteger(x.page) ? { page: x.page as number } : {}), ...(typeof x.query === 'string' ? { query: x.query } : {}) });
          break;
        case 'span':
          if (typeof x.runId !== 'string' || typeof x.artefact !== 'string' || !Number.isInteger(x.start) || !Number.isInteger(x.end) || (x.end as number) < (x.start as number)) throw new LoupeInputError(where, 'a span needs runId, artefact and start ≤ end');
          out.push({ kind: 'span', runId: x.runId, artefact: x.artefact, start: x.start as number, end: x.end as number, ...(typeof x.quote === 'string' ? { quote: x.quote } : {}) });
          break;
        default:
          throw new LoupeInputError(where, `unknown evidence kind '${String(x.kind)}' (step, cell, doc, span)`);
      }
    }
    return out;
  }

  async annotate(a: NewAnnotation): Promise<Annotation> {
    const at = `item ${a.itemId}`;
    if (typeof a.annotator !== 'string' || !a.annotator.trim()) throw new LoupeInputError(at, 'an annotation needs an annotator');
    const item = await this.getItem(a.itemId);
    if (!item) throw new LoupeInputError(at, 'no such item');
    validateVerdict(item.task, a.verdict, at);
    const evidence = await this.#checkEvidence(a.evidence, at);
    const role = a.role ?? 'annotator';
    if (role !== 'annotator' && role !== 'adjudicator') throw new LoupeInputError(at, `role must be annotator or adjudicator, got '${String(role)}'`);
    if (a.supersedes) {
      const [prev] = await this.#q('SELECT item_id, annotator FROM annotations WHERE id = ?', [a.supersedes]);
      if (!prev) throw new LoupeInputError(at, `annotation ${a.supersedes} to supersede does not exist`);
      if (prev.item_id !== a.itemId || prev.annotator !== a.annotator) throw new LoupeInputError(at, `annotation ${a.supersedes} belongs to another item or annotator`);
    }
    const ann: Annotation = {
      id: randomUUID(), itemId: a.itemId, annotator: a.annotator.trim(), role, verdict: a.verdict, evidence, note: a.note?.trim() ? a.note : null,
      supersedes: a.supersedes ?? null, final: role === 'adjudicator', origin: a.origin ?? 'cli', createdAt: nowIso(), dbRole: null,
    };
    await this.#tx(async (q) => {
      ann.dbRole = await this.#insertAnnotation(q, ann);
      await q(`SELECT pg_notify('${CHANGES}', ?)`, [JSON.stringify({ kind: 'annotation', itemId: ann.itemId, annotator: ann.annotator })]);
      if (a.queueId) {
        await q('DELETE FROM annotation_reservations WHERE queue_id = ? AND item_id = ? AND annotator = ?', [a.queueId, a.itemId, ann.annotator]);
        await q('DELETE FROM annotation_drafts WHERE queue_id = ? AND item_id = ? AND annotator = ?', [a.queueId, a.itemId, ann.annotator]);
      }
    });
    return ann;
  }

  /** Inserts an annotation; `db_role` is left to the server (column default / trigger: the connection's role). @returns the role recorded. */
  async #insertAnnotation(q: Q, a: Annotation): Promise<string | null> {
    const [r] = await q('INSERT INTO annotations (id, item_id, annotator, role, verdict, evidence, note, supersedes, final, origin, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?) RETURNING db_role', [
      a.id, a.itemId, a.annotator, a.role, JSON.stringify(a.verdict), JSON.stringify(a.evidence), a.note, a.supersedes, a.final ? 1 : 0, a.origin, a.createdAt]);
    return (r?.db_role as string | null | undefined) ?? null;
  }

  async annotations(itemId: string): Promise<Annotation[]> {
    return (await this.#q('SELECT * FROM annotations WHERE item_id = ? ORDER BY created_at, id', [itemId])).map(annotationFromRow);
  }

  async annotationsByItem(filter: ItemFilter = {}): Promise<Map<string, Annotation[]>> {
    const { sql, params } = this.#where(filter);
    const rows = await this.#q(`SELECT a.* FROM annotations a JOIN annotation_items i ON i.id = a.item_id ${sql} ORDER BY a.created_at, a.id`, params);
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
   * `annotation_queues`).
   */
  async #privileges(): Promise<{ readsVerdicts: boolean; managesQueues: boolean }> {
    const [r] = await this.#q(`SELECT has_column_privilege('judgements', 'verdict', 'SELECT') AS v, has_table_privilege('annotation_queues', 'UPDATE') AS m`);
    return { readsVerdicts: r?.v === true, managesQueues: r?.m === true };
  }

  async llmVerdicts(filter: ItemFilter = {}): Promise<Map<string, { judgeId: string; verdict: unknown }>> {
    const { sql, params } = this.#where(filter);
    // a blind annotator's role reads only the verdicts revealed to it (the view judge_verdicts_revealed, migration 18)
    const rows = (await this.#privileges()).readsVerdicts
      ? await this.#q(`SELECT i.id AS item_id, j.judge_id, j.verdict FROM annotation_items i JOIN judgements j ON j.input_hash = i.input_hash AND j.task = i.task
      ${sql ? `${sql} AND` : 'WHERE'} j.judge_id LIKE 'llm:%' AND j.status = 'done' ORDER BY j.judged_at, j.rid`, params)
      : await this.#q(`SELECT i.id AS item_id, j.judge_id, j.verdict FROM annotation_items i JOIN judge_verdicts_revealed j ON j.item_id = i.id ${sql} ORDER BY j.judged_at, j.rid`, params);
    const out = new Map<string, { judgeId: string; verdict: unknown }>();
    for (const r of rows) out.set(r.item_id as string, { judgeId: r.judge_id as string, verdict: JSON.parse(r.verdict as string) });
    return out;
  }

  async llmVerdict(itemId: string): Promise<{ judgeId: string; verdict: unknown } | undefined> {
    // only where the connection's role may see it (blind annotators: after answering; migration 18)
    const [r] = await this.#q(`SELECT judge_id, verdict FROM judge_verdicts_revealed WHERE item_id = ? ORDER BY judged_at DESC, rid DESC LIMIT 1`, [itemId]);
    return r ? { judgeId: r.judge_id as string, verdict: JSON.parse(r.verdict as string) } : undefined;
  }

  async resolve(itemId: string, mode: ResolutionMode = 'human'): Promise<Resolution> {
    return resolveStoredItem(this, itemId, mode);
  }

  async resolveJudgement(task: string, inputHash: string, mode: ResolutionMode = 'human'): Promise<Resolution | undefined> {
    const id = judgementItemId(task, inputHash);
    return (await this.getItem(id)) ? resolveStoredItem(this, id, mode) : undefined;
  }

  #filterOf(spec: QueueSpec): ItemFilter {
    const generic = spec.kind === 'items' || spec.kind === 'audit' || spec.kind === 'disagreement';
    return { ...(spec.suite ? { suite: spec.suite } : {}), ...(spec.task ? { task: spec.task } : {}), ...(spec.criterion ? { criterion: spec.criterion } : {}), ...(spec.runIds?.length ? { runIds: spec.runIds } : {}), ...(generic ? { judgeTasksOnly: true } : {}) };
  }

  /** An `items` spec: one INSERT … SELECT appending matching items not yet queued, in (created_at, rid) order. */
  async #itemsAppender(spec: QueueSpec): Promise<(q: Q, queueId: string, lastPos: number) => Promise<void>> {
    const filter = this.#filterOf(spec);
    const { sql, params } = this.#where(filter);
    const and = sql ? `${sql} AND` : 'WHERE';
    let resolved: string[] = [];
    if (!spec.includeResolved) {
      const anns = await this.annotationsByItem(filter);
      if (anns.size) {
        const tasks = new Map((await this.#q(`SELECT DISTINCT i.id, i.task FROM annotation_items i JOIN annotations a ON a.item_id = i.id ${sql}`, params)).map((r) => [r.id as string, r.task as string]));
        resolved = [...anns].filter(([id, a]) => resolveItem({ id, task: tasks.get(id)! }, a).decidedBy !== 'pending').map(([id]) => id);
      }
    }
    const text = `INSERT INTO annotation_queue_items (queue_id, pos, item_id)
      SELECT ?::text, ?::int + row_number() OVER (ORDER BY i.created_at, i.rid), i.id FROM annotation_items i
      ${and} EXISTS (SELECT 1 FROM judgements j WHERE j.input_hash = i.input_hash AND j.task = i.task AND j.judge_id = 'human')
        AND NOT EXISTS (SELECT 1 FROM annotation_queue_items qi WHERE qi.queue_id = ? AND qi.item_id = i.id)${resolved.length ? `
        AND NOT (i.id = ANY(?::text[]))` : ''}`;
    return async (q, queueId, lastPos) => {
      await q(text, [queueId, lastPos, ...params, queueId, ...(resolved.length ? [resolved] : [])]);
    };
  }

  async #select(spec: QueueSpec): Promise<string[]> {
    const registered = queueKinds.get(spec.kind);
    if (registered) return registered(this, spec);
    const filter = this.#filterOf(spec);
    const { sql, params } = this.#where(filter);
    if (spec.kind === 'sampled') {
      const ids = spec.itemIds ?? [];
      const have = new Set((await this.#q('SELECT id FROM annotation_items WHERE id = ANY(?::text[])', [ids])).map((r) => r.id as string));
      return ids.filter((id) => have.has(id));
    }
    if (spec.kind === 'pairs') {
      const runs = spec.runIds ?? [];
      const p: unknown[] = spec.suite ? [spec.suite] : [];
      if (runs.length) p.push(runs, runs);
      const rows = await this.#q(`SELECT i.id FROM annotation_items i WHERE i.task = 'pairwise-vote'${spec.suite ? ' AND i.suite = ?' : ''}${runs.length ? ` AND ${jsonNulToText(`${jsonColumn('i.subject')}::json ->> 'runA'`)} = ANY(?::text[]) AND ${jsonNulToText(`${jsonColumn('i.subject')}::json ->> 'runB'`)} = ANY(?::text[])` : ''} ORDER BY i.created_at, i.rid`, p);
      return rows.map((r) => r.id as string);
    }
    if (spec.kind === 'audit') {
      const llm = await this.llmVerdicts(filter);
      const rows = await this.#q(`SELECT i.id, i.task, i.criterion FROM annotation_items i ${sql} ORDER BY i.created_at, i.rid`, params);
      return auditSample(rows, llm, spec);
    }
    const anns = await this.annotationsByItem(filter);
    const llm = await this.llmVerdicts(filter);
    const rows = await this.#q(`SELECT i.id, i.task FROM annotation_items i ${sql} ORDER BY i.created_at, i.rid`, params);
    return disagreementIds(rows, anns, llm);
  }

  async openQueue(spec: QueueSpec, opts: { name?: string; reviewers?: number; reservationMs?: number; blind?: boolean } = {}): Promise<AnnotationQueue> {
    const kinds = ['items', 'audit', 'disagreement', 'pairs', 'sampled', ...queueKinds.keys()];
    if (!kinds.includes(spec.kind)) throw new LoupeInputError('queue kind', `must be ${kinds.join(', ')}, got '${String(spec.kind)}'`);
    const reviewers = opts.reviewers ?? 1;
    if (!Number.isInteger(reviewers) || reviewers < 1) throw new LoupeInputError('reviewers per item', `must be a whole number ≥ 1, got ${String(opts.reviewers)}`);
    const reservationMs = opts.reservationMs ?? 30 * 60_000;
    if (!(reservationMs > 0)) throw new LoupeInputError('reservation time', `must be > 0 ms, got ${String(opts.reservationMs)}`);
    const clean: QueueSpec = JSON.parse(canonicalJson(spec)) as QueueSpec;
    const id = `q-${sha256(canonicalJson(clean)).slice(0, 12)}`;
    if (!(await this.#privileges()).managesQueues) {
      // an annotator's role (loupe store grant): a queue's items and rules are chosen by whoever manages queues
      const existing = await this.getQueue(id);
      if (existing) return existing;
      throw new LoupeInputError(`queue '${opts.name ?? queueName(clean)}'`, `the database role of this connection may answer queues but not open new ones: ask a reviewer or the store's owner to open it`);
    }
    await this.syncFromJudgements();
    const append = clean.kind === 'items' ? await this.#itemsAppender(clean) : undefined;
    const ids = append ? [] : await this.#select(clean);
    await this.#tx(async (q) => {
      // one writer per queue at a time (positions stay dense when two editors open the same queue)
      await q('SELECT pg_advisory_xact_lock(hashtext(?))', [id]);
      const [existing] = await q('SELECT id FROM annotation_queues WHERE id = ?', [id]);
      if (existing) {
        await q('UPDATE annotation_queues SET reviewers = ?, reservation_ms = ?, blind = ? WHERE id = ?', [reviewers, reservationMs, opts.blind === false ? 0 : 1, id]);
      } else {
        await q('INSERT INTO annotation_queues (id, name, kind, spec, reviewers, reservation_ms, blind, created_at) VALUES (?,?,?,?,?,?,?,?)', [
          id, opts.name ?? queueName(clean), clean.kind, JSON.stringify(clean), reviewers, reservationMs, opts.blind === false ? 0 : 1, nowIso()]);
      }
      let pos = (await q('SELECT COALESCE(MAX(pos), -1) AS m FROM annotation_queue_items WHERE queue_id = ?', [id]))[0]!.m as number;
      if (append) return append(q, id, pos);
      for (const itemId of ids) {
        if ((await q('INSERT INTO annotation_queue_items (queue_id, pos, item_id) VALUES (?,?,?) ON CONFLICT DO NOTHING RETURNING 1', [id, pos + 1, itemId])).length) pos++;
      }
    });
    return (await this.getQueue(id))!;
  }

  async getQueue(id: string): Promise<AnnotationQueue | undefined> {
    const [r] = await this.#q('SELECT * FROM annotation_queues WHERE id = ?', [id]);
    return r ? queueFromRow(r) : undefined;
  }

  async listQueues(): Promise<AnnotationQueue[]> {
    return (await this.#q('SELECT * FROM annotation_queues ORDER BY created_at, rid')).map(queueFromRow);
  }

  async #entry(queueId: string, pos: number, itemId: string): Promise<QueueEntry> {
    const [r] = await this.#q('SELECT * FROM annotation_items WHERE id = ?', [itemId]);
    if (!r) throw new LoupeInputError(`queue ${queueId} position ${pos}`, `item ${itemId} is missing from the store`);
    return { queueId, pos, item: itemFromRow(r) };
  }

  async #reserve(queueId: string, itemId: string, annotator: string, until: Date): Promise<void> {
    await this.#q(`INSERT INTO annotation_reservations (queue_id, item_id, annotator, expires_at) VALUES (?,?,?,?)
      ON CONFLICT (queue_id, item_id, annotator) DO UPDATE SET expires_at = excluded.expires_at`, [queueId, itemId, annotator, until.toISOString()]);
  }

  async nextItem(queueId: string, annotator: string, opts: { afterPos?: number; now?: Date; pick?: (entries: QueueEntry[]) => QueueEntry | undefined | Promise<QueueEntry | undefined> } = {}): Promise<QueueEntry | undefined> {
    const q = await this.getQueue(queueId);
    if (!q) throw new LoupeInputError(`queue ${queueId}`, 'no such queue');
    const now = opts.now ?? new Date();
    // $1 queue, $2 after, $3 annotator, $4 now, $5 reviewers
    const text = q.spec.kind === 'disagreement'
      ? `SELECT qi.pos, qi.item_id FROM annotation_queue_items qi WHERE qi.queue_id = $1 AND qi.pos > $2::int
          AND NOT EXISTS (SELECT 1 FROM annotation_meta a WHERE a.item_id = qi.item_id AND a.final = 1)
          AND NOT EXISTS (SELECT 1 FROM annotation_reservations r WHERE r.queue_id = $1 AND r.item_id = qi.item_id AND r.annotator <> $3 AND r.expires_at > $4)
          ORDER BY qi.pos${opts.pick ? '' : ' LIMIT 1'}`
      : `SELECT qi.pos, qi.item_id FROM annotation_queue_items qi WHERE qi.queue_id = $1 AND qi.pos > $2::int
          AND NOT EXISTS (SELECT 1 FROM annotation_meta a WHERE a.annotator = $3 AND a.item_id = qi.item_id)
          AND NOT EXISTS (SELECT 1 FROM annotation_meta a WHERE a.item_id = qi.item_id AND a.final = 1)
          AND (SELECT COUNT(DISTINCT a.annotator) FROM annotation_meta a WHERE a.item_id = qi.item_id AND a.role = 'annotator')
            + (SELECT COUNT(*) FROM annotation_reservations r WHERE r.queue_id = $1 AND r.item_id = qi.item_id AND r.annotator <> $3 AND r.expires_at > $4) < $5::int
          ORDER BY qi.pos${opts.pick ? '' : ' LIMIT 1'}`;
    const pool = await this.#pool();
    const run = async (after: number) => (await pool.query(text, q.spec.kind === 'disagreement' ? [queueId, after, annotator, now.toISOString()] : [queueId, after, annotator, now.toISOString(), q.reviewers])).rows as Row[];
    const until = new Date(now.getTime() + q.reservationMs);
    if (opts.pick) {
      const entries: QueueEntry[] = [];
      for (const r of await run(-1)) entries.push(await this.#entry(queueId, r.pos as number, r.item_id as string));
      const chosen = entries.length ? await opts.pick(entries) : undefined;
      if (!chosen) return undefined;
      await this.#reserve(queueId, chosen.item.id, annotator, until);
      return chosen;
    }
    const after = opts.afterPos ?? -1;
    const r = (await run(after))[0] ?? (after >= 0 ? (await run(-1))[0] : undefined);
    if (!r) return undefined;
    await this.#reserve(queueId, r.item_id as string, annotator, until);
    return this.#entry(queueId, r.pos as number, r.item_id as string);
  }

  async itemAt(queueId: string, pos: number): Promise<QueueEntry | undefined> {
    const [r] = await this.#q('SELECT item_id FROM annotation_queue_items WHERE queue_id = ? AND pos = ?', [queueId, pos]);
    return r ? this.#entry(queueId, pos, r.item_id as string) : undefined;
  }

  /** Number of items in a queue (positions are 0 … size − 1). */
  async queueSize(queueId: string): Promise<number> {
    return (await this.#q('SELECT COUNT(*)::int AS n FROM annotation_queue_items WHERE queue_id = ?', [queueId]))[0]!.n as number;
  }

  async progress(queueId: string): Promise<QueueProgress> {
    const q = await this.getQueue(queueId);
    if (!q) throw new LoupeInputError(`queue ${queueId}`, 'no such queue');
    const total = await this.queueSize(queueId);
    const done = q.spec.kind === 'disagreement'
      ? (await this.#q(`SELECT COUNT(*)::int AS n FROM annotation_queue_items qi WHERE qi.queue_id = ? AND EXISTS (SELECT 1 FROM annotation_meta a WHERE a.item_id = qi.item_id AND a.final = 1)`, [queueId]))[0]!.n as number
      : (await this.#q(`SELECT COUNT(*)::int AS n FROM annotation_queue_items qi WHERE qi.queue_id = ? AND (EXISTS (SELECT 1 FROM annotation_meta a WHERE a.item_id = qi.item_id AND a.final = 1)
          OR (SELECT COUNT(DISTINCT a.annotator) FROM annotation_meta a WHERE a.item_id = qi.item_id AND a.role = 'annotator') >= ?::int)`, [queueId, q.reviewers]))[0]!.n as number;
    const rows = await this.#q(`SELECT a.annotator, COUNT(DISTINCT a.item_id)::int AS n FROM annotation_queue_items qi JOIN annotation_meta a ON a.item_id = qi.item_id
      WHERE qi.queue_id = ? GROUP BY a.annotator ORDER BY a.annotator`, [queueId]);
    const roles = await this.#q(`SELECT DISTINCT a.annotator, a.db_role FROM annotation_queue_items qi JOIN annotation_meta a ON a.item_id = qi.item_id
      WHERE qi.queue_id = ? AND a.db_role IS NOT NULL ORDER BY a.annotator, a.db_role`, [queueId]);
    return { total, done, byAnnotator: Object.fromEntries(rows.map((r) => [r.annotator as string, r.n as number])), roles: progressRoles(rows, roles) };
  }

  async release(queueId: string, itemId: string, annotator: string): Promise<void> {
    await this.#q('DELETE FROM annotation_reservations WHERE queue_id = ? AND item_id = ? AND annotator = ?', [queueId, itemId, annotator]);
  }

  async runExists(runId: string): Promise<boolean> {
    return (await this.#q('SELECT 1 FROM runs WHERE id = ?', [runId])).length > 0;
  }

  async saveDraft(queueId: string, itemId: string, annotator: string, draft: AnnotationDraft): Promise<void> {
    if (!(await this.getItem(itemId))) throw new LoupeInputError(`item ${itemId}`, 'no such item');
    const clean: AnnotationDraft = { choice: draft.choice ?? {}, note: typeof draft.note === 'string' ? draft.note : '', evidence: Array.isArray(draft.evidence) ? draft.evidence : [] };
    await this.#q(`INSERT INTO annotation_drafts (queue_id, item_id, annotator, draft, updated_at) VALUES (?,?,?,?,?)
      ON CONFLICT (queue_id, item_id, annotator) DO UPDATE SET draft = excluded.draft, updated_at = excluded.updated_at`, [queueId, itemId, annotator, JSON.stringify(clean), nowIso()]);
  }

  async getDraft(queueId: string, itemId: string, annotator: string): Promise<AnnotationDraft | undefined> {
    const [r] = await this.#q('SELECT draft FROM annotation_drafts WHERE queue_id = ? AND item_id = ? AND annotator = ?', [queueId, itemId, annotator]);
    return r ? (JSON.parse(r.draft as string) as AnnotationDraft) : undefined;
  }

  async exportRecords(filter: ItemFilter = {}): Promise<ExportRecord[]> {
    await this.syncFromJudgements();
    return exportAnnotationRecords(this, filter);
  }

  async importRecords(records: ReadonlyArray<{ line: number; record: ExportRecord }>, source: string): Promise<ImportResult> {
    await this.syncFromJudgements();
    const { newItems, newAnns, unchanged } = await planAnnotationImport(records, source, {
      getItem: (id) => this.getItem(id),
      checkEvidence: (ev, at) => this.#checkEvidence(ev, at, false),
      getAnnotation: async (id) => {
        const [prev] = await this.#q('SELECT * FROM annotations WHERE id = ?', [id]);
        return prev ? annotationFromRow(prev) : undefined;
      },
    });
    await this.#tx(async (q) => {
      for (const i of newItems) {
        await q(`INSERT INTO annotation_items (id, subject_kind, subject, task, schema_version, input, input_hash, criterion, suite, run_id, item_ref, suite_version, created_at)
          VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (id) DO NOTHING`, [i.id, i.subject.kind, JSON.stringify(i.subject), i.task, i.schemaVersion, JSON.stringify(i.input ?? null), i.inputHash ?? null, i.criterion ?? null, i.suite ?? null, i.runId ?? null, i.itemRef ?? null, i.suiteVersion ?? 'unknown', i.createdAt ?? nowIso()]);
      }
      for (const a of newAnns) await this.#insertAnnotation(q, a);
    });
    return { items: newItems.length, annotations: newAnns.length, unchanged };
  }
}
