/**
 * Judgements and scores in the SQLite run store (tables `judgements` and `scores`, migration 2 of `migrations.ts`).
 * Source: issue 8 "Every judgement is stored with judge id, prompt hash, raw output, parsed verdict, time; scores say
 * which judge and how many items are still pending"; issue 12 (one store interface).
 */
import type Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import type { JudgementRecord, JudgementUse, StoredScore } from './records.ts';
import type { ArtefactRows, JudgementRows, RunArtefact, ScoreRows } from './types.ts';

type Row = Record<string, unknown>;

function judgementFromRow(r: Row): JudgementRecord {
  const j: JudgementRecord = {
    key: r.cache_key as string,
    task: r.task as string,
    judgeId: r.judge_id as string,
    inputHash: r.input_hash as string,
    promptHash: (r.prompt_hash as string | null) ?? null,
    input: JSON.parse(r.input as string),
    raw: (r.raw_output as string | null) ?? null,
    verdict: r.verdict ? JSON.parse(r.verdict as string) : null,
    status: r.status as JudgementRecord['status'],
    at: r.judged_at as string,
  };
  if (r.error) j.error = r.error as string;
  if (r.annotator) j.annotator = r.annotator as string;
  return j;
}

/** {@link JudgementRows} on a SQLite run store database. */
export class SqliteJudgementRows implements JudgementRows {
  readonly #db: Database.Database;
  constructor(db: Database.Database) {
    this.#db = db;
  }
  async get(key: string): Promise<JudgementRecord | undefined> {
    const r = this.#db.prepare('SELECT * FROM judgements WHERE cache_key = ?').get(key) as Row | undefined;
    return r ? judgementFromRow(r) : undefined;
  }
  async put(j: JudgementRecord, use: JudgementUse = {}): Promise<void> {
    this.#db.prepare(`INSERT INTO judgements (cache_key, judge_id, task, input_hash, prompt_hash, input, raw_output, verdict, status, error,
        run_id, item_ref, annotator, judged_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)
      ON CONFLICT (cache_key) DO UPDATE SET raw_output = excluded.raw_output, verdict = excluded.verdict, status = excluded.status,
        error = excluded.error, annotator = excluded.annotator, judged_at = excluded.judged_at,
        run_id = COALESCE(judgements.run_id, excluded.run_id), item_ref = COALESCE(judgements.item_ref, excluded.item_ref)`).run(
      j.key, j.judgeId, j.task, j.inputHash, j.promptHash, JSON.stringify(j.input), j.raw, j.verdict === null || j.verdict === undefined ? null : JSON.stringify(j.verdict),
      j.status, j.error ?? null, use.runId ?? null, use.itemRef ?? null, j.annotator ?? null, j.at);
  }
  async listPending(task?: string): Promise<JudgementRecord[]> {
    const rows = (task
      ? this.#db.prepare("SELECT * FROM judgements WHERE status = 'pending' AND task = ? ORDER BY judged_at").all(task)
      : this.#db.prepare("SELECT * FROM judgements WHERE status = 'pending' ORDER BY judged_at").all()) as Row[];
    return rows.map(judgementFromRow);
  }
  async listForRun(runId: string): Promise<JudgementRecord[]> {
    return (this.#db.prepare('SELECT * FROM judgements WHERE run_id = ? ORDER BY judged_at').all(runId) as Row[]).map(judgementFromRow);
  }
}

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
}

/** {@link ScoreRows} on a SQLite run store database. Options are keyed canonically (sorted keys). */
export class SqliteScoreRows implements ScoreRows {
  readonly #db: Database.Database;
  constructor(db: Database.Database) {
    this.#db = db;
  }
  async save(s: StoredScore): Promise<void> {
    this.#db.prepare(`INSERT INTO scores (run_id, benchmark, judge_id, options, summary, detail, pending, scored_at) VALUES (?,?,?,?,?,?,?,?)
      ON CONFLICT (run_id, judge_id, options) DO UPDATE SET benchmark = excluded.benchmark, summary = excluded.summary,
        detail = excluded.detail, pending = excluded.pending, scored_at = excluded.scored_at`).run(
      s.runId, s.benchmark, s.judgeId, JSON.stringify(sortKeys(s.options)), JSON.stringify(s.summary), JSON.stringify(s.detail), s.pending, s.scoredAt);
  }
  async list(runId?: string): Promise<StoredScore[]> {
    const rows = (runId
      ? this.#db.prepare('SELECT * FROM scores WHERE run_id = ? ORDER BY scored_at DESC').all(runId)
      : this.#db.prepare('SELECT * FROM scores ORDER BY scored_at DESC').all()) as Row[];
    return rows.map((r) => ({
      runId: r.run_id as string, benchmark: r.benchmark as string, judgeId: r.judge_id as string, options: JSON.parse(r.options as string),
      summary: JSON.parse(r.summary as string), detail: JSON.parse(r.detail as string), pending: r.pending as number, scoredAt: r.scored_at as string,
    }));
  }
}

/** A `run_artefacts` row joined with its blob's media type and size (either engine) as a {@link RunArtefact}. */
export function artefactFromRow(r: Row): RunArtefact {
  return { runId: r.run_id as string, path: r.path as string, sha256: r.sha256 as string, mediaType: r.media_type as string, size: Number(r.size), capturedAt: r.captured_at as string };
}

/** {@link ArtefactRows} on a SQLite run store database (migration 16). */
export class SqliteArtefactRows implements ArtefactRows {
  readonly #db: Database.Database;
  constructor(db: Database.Database) {
    this.#db = db;
  }
  async put(runId: string, files: ReadonlyArray<{ path: string; bytes: Uint8Array; mediaType: string }>): Promise<void> {
    const now = new Date().toISOString();
    const blob = this.#db.prepare('INSERT INTO artefact_blobs (sha256, media_type, size, bytes, created_at) VALUES (?,?,?,?,?) ON CONFLICT (sha256) DO NOTHING');
    const map = this.#db.prepare('INSERT INTO run_artefacts (run_id, path, sha256, captured_at) VALUES (?,?,?,?) ON CONFLICT (run_id, path) DO UPDATE SET sha256 = excluded.sha256, captured_at = excluded.captured_at');
    this.#db.transaction(() => {
      if (!this.#db.prepare('SELECT 1 FROM runs WHERE id = ?').get(runId)) throw new Error(`no run '${runId}' in the store`);
      for (const f of files) {
        const sha = createHash('sha256').update(f.bytes).digest('hex');
        blob.run(sha, f.mediaType, f.bytes.byteLength, Buffer.from(f.bytes.buffer, f.bytes.byteOffset, f.bytes.byteLength), now);
        map.run(runId, f.path, sha, now);
      }
    })();
  }
  async list(runId: string): Promise<RunArtefact[]> {
    return (this.#db.prepare('SELECT a.run_id, a.path, a.sha256, a.captured_at, b.media_type, b.size FROM run_artefacts a JOIN artefact_blobs b ON b.sha256 = a.sha256 WHERE a.run_id = ? ORDER BY a.path').all(runId) as Row[]).map(artefactFromRow);
  }
  async get(runId: string, path: string): Promise<{ artefact: RunArtefact; bytes: Buffer } | undefined> {
    const r = this.#db.prepare('SELECT a.run_id, a.path, a.sha256, a.captured_at, b.media_type, b.size, b.bytes FROM run_artefacts a JOIN artefact_blobs b ON b.sha256 = a.sha256 WHERE a.run_id = ? AND a.path = ?').get(runId, path) as Row | undefined;
    return r ? { artefact: artefactFromRow(r), bytes: r.bytes as Buffer } : undefined;
  }
}
