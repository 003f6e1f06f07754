/**
 * Judgements, scores and run artefacts of the run store, one source for both engines (issue 41): tables
 * `judgements` and `scores` (migration 2) and `artefact_blobs` / `run_artefacts` (migration 16), queried through
 * {@link StoreSql} (`sql.ts`).
 * Source: issue 8 "Every judgement is stored with judge id, prompt hash, raw output, parsed verdict, time; scores say
 * which judge and how many items are still pending"; issue 12 (one store interface); issue 26 (artefacts).
 */
import { createHash } from 'node:crypto';
import { sql, type Selectable } from 'kysely';
import type {
  InterventionRecord,
  JudgementRecord,
  JudgementUse,
  RunParams,
  RunRecord,
  RunStatus,
  StoredScore,
} from './records.ts';
import type { JudgementsTable, ScoresTable } from './schema.ts';
import type { StoreSql } from './sql.ts';
import type { ArtefactRows, JudgementRows, RunArtefact, RunFilter, RunLeaseHolder, ScoreRows } from './types.ts';

/** A `judgements` row as a {@link JudgementRecord}. */
function judgementFromRow(r: Selectable<JudgementsTable>): JudgementRecord {
  const j: JudgementRecord = {
    key: r.cache_key,
    task: r.task,
    judgeId: r.judge_id,
    inputHash: r.input_hash,
    promptHash: r.prompt_hash ?? null,
    input: JSON.parse(r.input),
    raw: r.raw_output ?? null,
    verdict: r.verdict ? JSON.parse(r.verdict) : null,
    status: r.status as JudgementRecord['status'],
    at: r.judged_at,
  };
  if (r.error) j.error = r.error;
  if (r.annotator) j.annotator = r.annotator;
  return j;
}

/** {@link JudgementRows} of a run store (either engine). */
export class StoreJudgementRows implements JudgementRows {
  readonly #s: StoreSql;
  constructor(s: StoreSql) {
    this.#s = s;
  }
  async get(key: string): Promise<JudgementRecord | undefined> {
    const r = await this.#s.first(this.#s.db.selectFrom('judgements').selectAll().where('cache_key', '=', key));
    return r ? judgementFromRow(r) : undefined;
  }
  async put(j: JudgementRecord, use: JudgementUse = {}): Promise<void> {
    const { db } = this.#s;
    await this.#s.run(
      db
        .insertInto('judgements')
        .values({
          cache_key: j.key,
          judge_id: j.judgeId,
          task: j.task,
          input_hash: j.inputHash,
          prompt_hash: j.promptHash,
          input: JSON.stringify(j.input),
          raw_output: j.raw,
          verdict: j.verdict === null || j.verdict === undefined ? null : JSON.stringify(j.verdict),
          status: j.status,
          error: j.error ?? null,
          run_id: use.runId ?? null,
          item_ref: use.itemRef ?? null,
          annotator: j.annotator ?? null,
          judged_at: j.at,
        })
        .onConflict((oc) =>
          oc.column('cache_key').doUpdateSet((eb) => ({
            raw_output: eb.ref('excluded.raw_output'),
            verdict: eb.ref('excluded.verdict'),
            status: eb.ref('excluded.status'),
            error: eb.ref('excluded.error'),
            annotator: eb.ref('excluded.annotator'),
            judged_at: eb.ref('excluded.judged_at'),
            // the first run and item that asked stay
            run_id: eb.fn.coalesce('judgements.run_id', 'excluded.run_id'),
            item_ref: eb.fn.coalesce('judgements.item_ref', 'excluded.item_ref'),
          })),
        ),
    );
  }
  async listPending(task?: string): Promise<JudgementRecord[]> {
    let q = this.#s.db.selectFrom('judgements').selectAll().where('status', '=', 'pending');
    if (task) q = q.where('task', '=', task);
    return (await this.#s.all(q.orderBy('judged_at').orderBy(sql.ref(this.#s.rowid)))).map(judgementFromRow);
  }
  async listForRun(runId: string): Promise<JudgementRecord[]> {
    return (
      await this.#s.all(
        this.#s.db
          .selectFrom('judgements')
          .selectAll()
          .where('run_id', '=', runId)
          .orderBy('judged_at')
          .orderBy(sql.ref(this.#s.rowid)),
      )
    ).map(judgementFromRow);
  }
}

function sortKeys(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, o[k]]),
  );
}

function scoreFromRow(r: Selectable<ScoresTable>): StoredScore {
  return {
    runId: r.run_id,
    benchmark: r.benchmark,
    judgeId: r.judge_id,
    options: JSON.parse(r.options),
    summary: JSON.parse(r.summary),
    detail: JSON.parse(r.detail),
    pending: r.pending,
    scoredAt: r.scored_at,
  };
}

/** {@link ScoreRows} of a run store (either engine). Options are keyed canonically (sorted keys). */
export class StoreScoreRows implements ScoreRows {
  readonly #s: StoreSql;
  constructor(s: StoreSql) {
    this.#s = s;
  }
  async save(s: StoredScore): Promise<void> {
    await this.#s.run(
      this.#s.db
        .insertInto('scores')
        .values({
          run_id: s.runId,
          benchmark: s.benchmark,
          judge_id: s.judgeId,
          options: JSON.stringify(sortKeys(s.options)),
          summary: JSON.stringify(s.summary),
          detail: JSON.stringify(s.detail),
          pending: s.pending,
          scored_at: s.scoredAt,
        })
        .onConflict((oc) =>
          oc.columns(['run_id', 'judge_id', 'options']).doUpdateSet((eb) => ({
            benchmark: eb.ref('excluded.benchmark'),
            summary: eb.ref('excluded.summary'),
            detail: eb.ref('excluded.detail'),
            pending: eb.ref('excluded.pending'),
            scored_at: eb.ref('excluded.scored_at'),
          })),
        ),
    );
  }
  async list(runId?: string): Promise<StoredScore[]> {
    let q = this.#s.db.selectFrom('scores').selectAll();
    if (runId) q = q.where('run_id', '=', runId);
    return (await this.#s.all(q.orderBy('scored_at', 'desc'))).map(scoreFromRow);
  }
}

/** A `run_artefacts` row joined with its blob's media type and size (either engine) as a {@link RunArtefact}. */
export function artefactFromRow(r: Record<string, unknown>): RunArtefact {
  return {
    runId: r.run_id as string,
    path: r.path as string,
    sha256: r.sha256 as string,
    mediaType: r.media_type as string,
    size: Number(r.size),
    capturedAt: r.captured_at as string,
  };
}

/** {@link ArtefactRows} of a run store (either engine; migration 16). */
export class StoreArtefactRows implements ArtefactRows {
  readonly #s: StoreSql;
  constructor(s: StoreSql) {
    this.#s = s;
  }
  async put(
    runId: string,
    files: ReadonlyArray<{ path: string; bytes: Uint8Array; mediaType: string }>,
  ): Promise<void> {
    const now = new Date().toISOString();
    const all = files.map((f) => {
      const bytes = Buffer.from(f.bytes.buffer, f.bytes.byteOffset, f.bytes.byteLength);
      return { ...f, bytes, sha: createHash('sha256').update(bytes).digest('hex') };
    });
    await this.#s.tx(null, async (t) => {
      if (!(await t.first(t.db.selectFrom('runs').select('id').where('id', '=', runId)))) {
        throw new Error(`no run '${runId}' in the store`);
      }
      // contents the store holds already are not sent again (a capture repeated after scoring)
      const have = new Set(
        all.length
          ? (
              await t.all(
                t.db
                  .selectFrom('artefact_blobs')
                  .select('sha256')
                  .where(
                    'sha256',
                    'in',
                    all.map((f) => f.sha),
                  ),
              )
            ).map((r) => r.sha256)
          : [],
      );
      for (const { bytes, sha, ...f } of all) {
        if (!have.has(sha)) {
          await t.run(
            t.db
              .insertInto('artefact_blobs')
              .values({ sha256: sha, media_type: f.mediaType, size: bytes.byteLength, bytes, created_at: now })
              .onConflict((oc) => oc.column('sha256').doNothing()),
          );
          have.add(sha);
        }
        await t.run(
          t.db
            .insertInto('run_artefacts')
            .values({ run_id: runId, path: f.path, sha256: sha, captured_at: now })
            .onConflict((oc) =>
              oc.columns(['run_id', 'path']).doUpdateSet((eb) => ({
                sha256: eb.ref('excluded.sha256'),
                captured_at: eb.ref('excluded.captured_at'),
              })),
            ),
        );
      }
    });
  }
  #joined() {
    return this.#s.db
      .selectFrom('run_artefacts as a')
      .innerJoin('artefact_blobs as b', 'b.sha256', 'a.sha256')
      .select(['a.run_id', 'a.path', 'a.sha256', 'a.captured_at', 'b.media_type', 'b.size']);
  }
  async list(runId: string): Promise<RunArtefact[]> {
    return (await this.#s.all(this.#joined().where('a.run_id', '=', runId).orderBy('a.path'))).map(artefactFromRow);
  }
  async get(runId: string, path: string): Promise<{ artefact: RunArtefact; bytes: Buffer } | undefined> {
    const r = await this.#s.first(
      this.#joined().select('b.bytes').where('a.run_id', '=', runId).where('a.path', '=', path),
    );
    return r ? { artefact: artefactFromRow(r), bytes: r.bytes } : undefined;
  }
}

/**
 * The run-level reads both engines answer alike (issue 41): `listRuns`, `getRun`, `getRunLease`, `getInterventions`,
 * `getInterventionsOf`, one query each through {@link StoreSql}. Both run stores extend it and set {@link runSql}.
 */
export abstract class StoreRunReads {
  /** The store's queries (set by the engine's constructor before any call). */
  protected runSql!: StoreSql;
  async listRuns(filter: RunFilter = {}): Promise<RunRecord[]> {
    return runReads.list(this.runSql, filter);
  }
  async getRun(id: string): Promise<RunRecord | undefined> {
    return runReads.get(this.runSql, id);
  }
  async getRunLease(runId: string): Promise<RunLeaseHolder | undefined> {
    return runReads.lease(this.runSql, runId);
  }
  async getInterventions(runId: string): Promise<InterventionRecord[]> {
    return (await this.getInterventionsOf([runId])).get(runId)!;
  }
  async getInterventionsOf(runIds: string[]): Promise<Map<string, InterventionRecord[]>> {
    return runReads.interventionsOf(this.runSql, runIds);
  }
}

/** The queries of {@link StoreRunReads}. */
const runReads = {
  /** Runs matching a filter, newest first (ties: the later insert first). */
  async list(s: StoreSql, filter: RunFilter = {}): Promise<RunRecord[]> {
    let q = s.db.selectFrom('runs').selectAll();
    if (filter.suite) q = q.where('suite', '=', filter.suite);
    if (filter.blockId) q = q.where('block_id', '=', filter.blockId);
    if (filter.status) q = q.where('status', '=', filter.status);
    if (filter.sweepId) q = q.where('sweep_id', '=', filter.sweepId);
    return (
      await s.all(
        q
          .orderBy('created_at', 'desc')
          .orderBy(sql.ref(s.rowid), 'desc')
          .limit(filter.limit ?? 1_000_000),
      )
    ).map((r) => runFromRow(r));
  },
  /** One run, if the store holds it. */
  async get(s: StoreSql, id: string): Promise<RunRecord | undefined> {
    const r = await s.first(s.db.selectFrom('runs').selectAll().where('id', '=', id));
    return r ? runFromRow(r) : undefined;
  },
  /** Who holds a run's lease, if anyone. */
  async lease(s: StoreSql, runId: string): Promise<RunLeaseHolder | undefined> {
    const row = await s.first(
      s.db
        .selectFrom('runs')
        .select(['lease_owner', 'lease_host', 'owner_pid', 'heartbeat_at', 'lease_expires_at'])
        .where('id', '=', runId),
    );
    return row?.lease_owner ? leaseFromRow(row) : undefined;
  },
  /** The interventions of several runs (each run's in order; a run with none maps to []), 500 runs a query. */
  async interventionsOf(s: StoreSql, runIds: string[]): Promise<Map<string, InterventionRecord[]>> {
    const out = new Map<string, InterventionRecord[]>(runIds.map((id) => [id, []]));
    for (let i = 0; i < runIds.length; i += 500) {
      const rows = await s.all(
        s.db
          .selectFrom('interventions')
          .selectAll()
          .where('run_id', 'in', runIds.slice(i, i + 500))
          .orderBy('run_id')
          .orderBy('seq'),
      );
      for (const r of rows) {
        out.get(r.run_id)!.push({
          runId: r.run_id,
          seq: r.seq,
          beforeStep: r.before_step,
          at: r.at,
          who: r.who,
          kind: r.kind as InterventionRecord['kind'],
          text: r.text,
        });
      }
    }
    return out;
  },
};

/** A `runs` row (either engine) as a {@link RunRecord}. */
export function runFromRow(r: Record<string, unknown>): RunRecord {
  return {
    id: r.id as string,
    suite: r.suite as string,
    blockId: r.block_id as string,
    agent: r.agent as string,
    model: (r.model as string | null) ?? null,
    params: JSON.parse(r.params as string) as RunParams,
    promptHash: r.prompt_hash as string,
    toolSet: r.tool_set as string,
    dataChecksums: JSON.parse(r.data_checksums as string) as Record<string, string>,
    loupeVersion: r.loupe_version as string,
    sandbox: r.sandbox as string,
    storedWorkspace: r.workspace as string,
    status: r.status as RunStatus,
    statusReason: (r.status_reason as string | null) ?? null,
    createdAt: r.created_at as string,
    startedAt: (r.started_at as string | null) ?? null,
    endedAt: (r.ended_at as string | null) ?? null,
    durationMs: r.duration_ms as number,
    steps: r.steps as number,
    tokens:
      r.tokens_known === 0
        ? null
        : { input: r.tokens_input as number, output: r.tokens_output as number, cached: r.tokens_cached as number },
    costUsd: (r.cost_usd as number | null) ?? null,
    ownerPid: (r.owner_pid as number | null | undefined) ?? null,
    heartbeatAt: (r.heartbeat_at as string | null | undefined) ?? null,
    sweepId: (r.sweep_id as string | null | undefined) ?? null,
  };
}

/** The lease columns of a `runs` row (either engine) as a {@link RunLeaseHolder}. */
export function leaseFromRow(row: Record<string, unknown>): RunLeaseHolder {
  return {
    owner: String(row.lease_owner),
    host: String(row.lease_host ?? ''),
    pid: (row.owner_pid as number | null) ?? null,
    heartbeatAt: (row.heartbeat_at as string | null) ?? null,
    expiresAt: String(row.lease_expires_at ?? new Date(0).toISOString()),
  };
}
