/**
 * Judgements and scores in the PostgreSQL run store (tables `judgements` and `scores`, migration 2 of
 * `migrations.ts`): the same rows and rules as `sqlite-rows.ts`.
 * Source: issue 26 (PostgreSQL team store); issue 8 (judgements and scores).
 */
import { createHash } from 'node:crypto';
import type { JudgementRecord, JudgementUse, StoredScore } from './records.ts';
import { artefactFromRow } from './sqlite-rows.ts';
import type { ArtefactRows, JudgementRows, RunArtefact, ScoreRows } from './types.ts';

type Row = Record<string, unknown>;
/** Runs one statement and returns its rows. */
export type PgQuery = (sql: string, params?: unknown[]) => Promise<Row[]>;

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

/** {@link JudgementRows} on a PostgreSQL run store. */
export class PgJudgementRows implements JudgementRows {
  readonly #q: PgQuery;
  constructor(q: PgQuery) {
    this.#q = q;
  }
  async get(key: string): Promise<JudgementRecord | undefined> {
    const [r] = await this.#q('SELECT * FROM judgements WHERE cache_key = $1', [key]);
    return r ? judgementFromRow(r) : undefined;
  }
  async put(j: JudgementRecord, use: JudgementUse = {}): Promise<void> {
    await this.#q(`INSERT INTO judgements (cache_key, judge_id, task, input_hash, prompt_hash, input, raw_output, verdict, status, error,
        run_id, item_ref, annotator, judged_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14)
      ON CONFLICT (cache_key) DO UPDATE SET raw_output = excluded.raw_output, verdict = excluded.verdict, status = excluded.status,
        error = excluded.error, annotator = excluded.annotator, judged_at = excluded.judged_at,
        run_id = COALESCE(judgements.run_id, excluded.run_id), item_ref = COALESCE(judgements.item_ref, excluded.item_ref)`, [
      j.key, j.judgeId, j.task, j.inputHash, j.promptHash, JSON.stringify(j.input), j.raw, j.verdict === null || j.verdict === undefined ? null : JSON.stringify(j.verdict),
      j.status, j.error ?? null, use.runId ?? null, use.itemRef ?? null, j.annotator ?? null, j.at]);
  }
  async listPending(task?: string): Promise<JudgementRecord[]> {
    const rows = task
      ? await this.#q("SELECT * FROM judgements WHERE status = 'pending' AND task = $1 ORDER BY judged_at, rid", [task])
      : await this.#q("SELECT * FROM judgements WHERE status = 'pending' ORDER BY judged_at, rid");
    return rows.map(judgementFromRow);
  }
  async listForRun(runId: string): Promise<JudgementRecord[]> {
    return (await this.#q('SELECT * FROM judgements WHERE run_id = $1 ORDER BY judged_at, rid', [runId])).map(judgementFromRow);
  }
}

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
}

/** {@link ScoreRows} on a PostgreSQL run store. Options are keyed canonically (sorted keys). */
export class PgScoreRows implements ScoreRows {
  readonly #q: PgQuery;
  constructor(q: PgQuery) {
    this.#q = q;
  }
  async save(s: StoredScore): Promise<void> {
    await this.#q(`INSERT INTO scores (run_id, benchmark, judge_id, options, summary, detail, pending, scored_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)
      ON CONFLICT (run_id, judge_id, options) DO UPDATE SET benchmark = excluded.benchmark, summary = excluded.summary,
        detail = excluded.detail, pending = excluded.pending, scored_at = excluded.scored_at`, [
      s.runId, s.benchmark, s.judgeId, JSON.stringify(sortKeys(s.options)), JSON.stringify(s.summary), JSON.stringify(s.detail), s.pending, s.scoredAt]);
  }
  async list(runId?: string): Promise<StoredScore[]> {
    const rows = runId
      ? await this.#q('SELECT * FROM scores WHERE run_id = $1 ORDER BY scored_at DESC', [runId])
      : await this.#q('SELECT * FROM scores ORDER BY scored_at DESC');
    return rows.map((r) => ({
      runId: r.run_id as string, benchmark: r.benchmark as string, judgeId: r.judge_id as string, options: JSON.parse(r.options as string),
      summary: JSON.parse(r.summary as string), detail: JSON.parse(r.detail as string), pending: r.pending as number, scoredAt: r.scored_at as string,
    }));
  }
}

/** {@link ArtefactRows} on a PostgreSQL run store (migration 16): the same rows and rules as `SqliteArtefactRows`. */
export class PgArtefactRows implements ArtefactRows {
  readonly #q: PgQuery;
  readonly #tx: <T>(fn: (q: PgQuery) => Promise<T>) => Promise<T>;
  /** @param tx runs `fn` in one transaction of the store. */
  constructor(q: PgQuery, tx: <T>(fn: (q: PgQuery) => Promise<T>) => Promise<T>) {
    this.#q = q;
    this.#tx = tx;
  }
  async put(runId: string, files: ReadonlyArray<{ path: string; bytes: Uint8Array; mediaType: string }>): Promise<void> {
    const now = new Date().toISOString();
    await this.#tx(async (q) => {
      if (!(await q('SELECT 1 FROM runs WHERE id = $1', [runId])).length) throw new Error(`no run '${runId}' in the store`);
      const all = files.map((f) => {
        const bytes = Buffer.from(f.bytes.buffer, f.bytes.byteOffset, f.bytes.byteLength);
        return { ...f, bytes, sha: createHash('sha256').update(bytes).digest('hex') };
      });
      // contents the store holds already are not sent again (a capture repeated after scoring)
      const have = new Set((await q('SELECT sha256 FROM artefact_blobs WHERE sha256 = ANY($1::text[])', [all.map((f) => f.sha)])).map((r) => r.sha256 as string));
      for (const { bytes, sha, ...f } of all) {
        if (!have.has(sha)) {
          await q('INSERT INTO artefact_blobs (sha256, media_type, size, bytes, created_at) VALUES ($1,$2,$3,$4,$5) ON CONFLICT (sha256) DO NOTHING', [sha, f.mediaType, bytes.byteLength, bytes, now]);
          have.add(sha);
        }
        await q('INSERT INTO run_artefacts (run_id, path, sha256, captured_at) VALUES ($1,$2,$3,$4) ON CONFLICT (run_id, path) DO UPDATE SET sha256 = excluded.sha256, captured_at = excluded.captured_at', [runId, f.path, sha, now]);
      }
    });
  }
  async list(runId: string): Promise<RunArtefact[]> {
    return (await this.#q('SELECT a.run_id, a.path, a.sha256, a.captured_at, b.media_type, b.size FROM run_artefacts a JOIN artefact_blobs b ON b.sha256 = a.sha256 WHERE a.run_id = $1 ORDER BY a.path', [runId])).map(artefactFromRow);
  }
  async get(runId: string, path: string): Promise<{ artefact: RunArtefact; bytes: Buffer } | undefined> {
    const [r] = await this.#q('SELECT a.run_id, a.path, a.sha256, a.captured_at, b.media_type, b.size, b.bytes FROM run_artefacts a JOIN artefact_blobs b ON b.sha256 = a.sha256 WHERE a.run_id = $1 AND a.path = $2', [runId, path]);
    return r ? { artefact: artefactFromRow(r), bytes: r.bytes as Buffer } : undefined;
  }
}
