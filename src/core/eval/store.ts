/**
 * Persistence of judgements and scores in the run store (tables `judgements` and `scores`, created by
 * migration 2 in `src/core/store/migrations.ts`).
 * Source: issue 8 "Every judgement is stored with judge id, prompt hash, raw output, parsed verdict,
 * time; scores say which judge and how many items are still pending".
 */
import type Database from 'better-sqlite3';
import type { JudgeContext, JudgeTaskName, Judgement, JudgementStore } from './judges/types.ts';

type Row = Record<string, unknown>;

function fromRow(r: Row): Judgement {
  const j: Judgement = {
    key: r.cache_key as string,
    task: r.task as JudgeTaskName,
    judgeId: r.judge_id as string,
    inputHash: r.input_hash as string,
    promptHash: (r.prompt_hash as string | null) ?? null,
    input: JSON.parse(r.input as string),
    raw: (r.raw_output as string | null) ?? null,
    verdict: r.verdict ? JSON.parse(r.verdict as string) : null,
    status: r.status as Judgement['status'],
    at: r.judged_at as string,
  };
  if (r.error) j.error = r.error as string;
  if (r.annotator) j.annotator = r.annotator as string;
  return j;
}

/** Judgements kept in the run store's `judgements` table (shared by CLI, UI and the annotation panel). */
export class SqliteJudgementStore implements JudgementStore {
  private readonly db: Database.Database;
  /** @param db an open run store database (`RunStore.db`) at schema version ≥ 2. */
  constructor(db: Database.Database) {
    this.db = db;
  }
  get(key: string): Judgement | undefined {
    const r = this.db.prepare('SELECT * FROM judgements WHERE cache_key = ?').get(key) as Row | undefined;
    return r ? fromRow(r) : undefined;
  }
  put(j: Judgement, ctx: JudgeContext = {}): void {
    this.db.prepare(`INSERT INTO judgements (cache_key, judge_id, task, input_hash, prompt_hash, input, raw_output, verdict, status, error,
        run_id, item_ref, annotator, judged_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)
      ON CONFLICT (cache_key) DO UPDATE SET raw_output = excluded.raw_output, verdict = excluded.verdict, status = excluded.status,
        error = excluded.error, annotator = excluded.annotator, judged_at = excluded.judged_at,
        run_id = COALESCE(judgements.run_id, excluded.run_id), item_ref = COALESCE(judgements.item_ref, excluded.item_ref)`).run(
      j.key, j.judgeId, j.task, j.inputHash, j.promptHash, JSON.stringify(j.input), j.raw, j.verdict === null ? null : JSON.stringify(j.verdict),
      j.status, j.error ?? null, ctx.runId ?? null, ctx.itemRef ?? null, j.annotator ?? null, j.at);
  }
  listPending(task?: JudgeTaskName): Judgement[] {
    const rows = (task
      ? this.db.prepare("SELECT * FROM judgements WHERE status = 'pending' AND task = ? ORDER BY judged_at").all(task)
      : this.db.prepare("SELECT * FROM judgements WHERE status = 'pending' ORDER BY judged_at").all()) as Row[];
    return rows.map(fromRow);
  }
  /** Judgements recorded for a run (via {@link JudgeContext.runId}). */
  listForRun(runId: string): Judgement[] {
    return (this.db.prepare('SELECT * FROM judgements WHERE run_id = ? ORDER BY judged_at').all(runId) as Row[]).map(fromRow);
  }
}

/** One stored score of a run. */
export interface StoredScore {
  runId: string;
  benchmark: string;
  judgeId: string;
  options: Record<string, unknown>;
  /** Headline metrics (fractions in [0, 1] unless named otherwise). */
  summary: Record<string, unknown>;
  /** The full score object. */
  detail: unknown;
  pending: number;
  scoredAt: string;
}

/**
 * Saves (replacing the same run × judge × options) a score.
 * @param db the run store database; `s` the score. Options are hashed canonically for the key.
 */
export function saveScore(db: Database.Database, s: StoredScore): void {
  const optionsJson = JSON.stringify(sortKeys(s.options));
  db.prepare(`INSERT INTO scores (run_id, benchmark, judge_id, options, summary, detail, pending, scored_at) VALUES (?,?,?,?,?,?,?,?)
    ON CONFLICT (run_id, judge_id, options) DO UPDATE SET benchmark = excluded.benchmark, summary = excluded.summary,
      detail = excluded.detail, pending = excluded.pending, scored_at = excluded.scored_at`).run(
    s.runId, s.benchmark, s.judgeId, optionsJson, JSON.stringify(s.summary), JSON.stringify(s.detail), s.pending, s.scoredAt);
}

/**
 * Stored scores, newest first.
 * @param db the run store database; `runId` restricts to one run.
 * @returns scores with parsed JSON fields.
 */
export function listScores(db: Database.Database, runId?: string): StoredScore[] {
  const rows = (runId
    ? db.prepare('SELECT * FROM scores WHERE run_id = ? ORDER BY scored_at DESC').all(runId)
    : db.prepare('SELECT * FROM scores ORDER BY scored_at DESC').all()) as Row[];
  return rows.map((r) => ({
    runId: r.run_id as string,
    benchmark: r.benchmark as string,
    judgeId: r.judge_id as string,
    options: JSON.parse(r.options as string),
    summary: JSON.parse(r.summary as string),
    detail: JSON.parse(r.detail as string),
    pending: r.pending as number,
    scoredAt: r.scored_at as string,
  }));
}

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]]));
}
