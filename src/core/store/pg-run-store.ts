/**
 * The team run store on PostgreSQL (`pg`): the same records, rules and logical schema as the embedded SQLite store
 * (`run-store.ts`), so several experts' editors and the CLI share runs, steps, cells, judgements and scores. Long
 * texts stay in the rows (no run-folder blobs: a colleague on another machine has no run folder). The global step
 * order (`steps.seq`, what subscribers poll) is taken under a transaction-scoped advisory lock, so it follows commit
 * order. Open with {@link openPgStore} (or `openStoreAt`, `open.ts`). The password is never stored in the object,
 * logged or put in a message. Source: issue 26 "Team store: PostgreSQL beside the embedded SQLite".
 */
import pg from 'pg';
import { LoupeInputError } from '../util/errors.ts';
import { redactStoreUrls, storePassword, type PostgresLocation } from './location.ts';
import { pgMigrations, type Migration } from './migrations.ts';
import { LosslessClient, decodePgText, encodePgText, jsonColumn, jsonNulToText, losslessTypes } from './pg-text.ts';
import { leaseFromRow, StoreArtefactRows, StoreRunReads, StoreJudgementRows, StoreScoreRows } from './rows.ts';
import { pgSql, type StoreSql } from './sql.ts';
import { answerFromRow, pidAlive, stepFromRow } from './run-store.ts';
import type {
  AnswerRecord,
  InterventionRecord,
  KernelCellRecord,
  RunEventRecord,
  RunRecord,
  StepRecord,
} from './records.ts';
import type {
  ArtefactRows,
  CellQuery,
  JudgementRows,
  NewIntervention,
  NewRun,
  RunLeaseResult,
  RunPatch,
  RunStore,
  ScoreRows,
  StepEffects,
  StepSummaryRecord,
  StepSubscription,
  SubscribeStepsOptions,
} from './types.ts';

type Row = Record<string, unknown>;
/** Runs one statement and returns its rows. */
type PgQuery = (sql: string, params?: unknown[]) => Promise<Row[]>;

const nowIso = () => new Date().toISOString();
/** The NOTIFY channel of a team store's changes (see {@link PgRunStore.watchChanges}). */
export const CHANGES = 'loupe_changes';

/** A change announced on {@link CHANGES}: a run created / updated / deleted, a step committed, an annotation added. */
export type StoreChange =
  | { kind: 'run'; runId: string }
  | { kind: 'step'; runId: string; index: number }
  | { kind: 'annotation'; itemId: string; annotator: string }
  | { kind: 'reconnected' };

/** Advisory lock keys (any constant bigint; one per purpose). */
const LOCK_MIGRATE = 0x10_0e_26_01;
const LOCK_STEP_SEQ = 0x10_0e_26_02;

/** BIGINT (int8) columns as JS numbers (counters and ids stay far below 2^53); text unescaped (`pg-text.ts`). */
const types = losslessTypes;

/**
 * A value as an SQL literal for a simple (unparameterised) query: text escaped for NULs (`encodePgText`, issue 39) and
 * quoted by `pg.escapeLiteral`, text arrays as `ARRAY[...]::text[]`.
 */
function sqlLiteral(v: string | number | boolean | null | undefined | string[]): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`cannot store the number ${v}`);
    return String(v);
  }
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (Array.isArray(v)) return `ARRAY[${v.map((x) => pg.escapeLiteral(encodePgText(x))).join(', ')}]::text[]`;
  return pg.escapeLiteral(encodePgText(v));
}

/** True for the error of a connection the server closed (shutdown, restart) or that broke: the statement did not run. */
export function connectionClosed(e: unknown): boolean {
  const code = (e as { code?: string }).code ?? '';
  return (
    ['57P01', '57P02', '57P03', '08006', '08003'].includes(code) ||
    /Connection terminated|connection not open/i.test((e as Error).message ?? '')
  );
}

/** Moved to `sql.ts` (the transaction of the PostgreSQL stores); kept here for its callers. */
export { pgTransaction } from './sql.ts';

/** The run store on a PostgreSQL database. Create with {@link openPgStore}. */
export class PgRunStore extends StoreRunReads implements RunStore {
  readonly engine = 'postgres';
  readonly location: string;
  readonly judgements: JudgementRows;
  readonly scores: ScoreRows;
  readonly artefacts: ArtefactRows;
  readonly #pool: pg.Pool;
  readonly #loc: PostgresLocation;
  #closed = false;
  /** Pending migrations of a store opened lazily ({@link openPgStoreLazily}); every call waits for them. */
  #ready: (() => Promise<void>) | undefined;
  readonly #clientConfig: pg.ClientConfig;
  readonly #watchers = new Set<(c: StoreChange) => void>();
  #listener: { client: pg.Client | undefined; timer: NodeJS.Timeout | undefined; failures: number } | undefined;
  #readyRun: Promise<void> | undefined;

  /**
   * Use {@link openPgStore} or {@link openPgStoreLazily}: the constructor neither connects nor migrates.
   * @param password the password, or a function asked on every new connection (VS Code SecretStorage).
   */
  constructor(loc: PostgresLocation, password: string | undefined | (() => Promise<string | undefined>)) {
    super();
    this.#loc = loc;
    this.location = loc.url;
    this.#clientConfig = {
      host: loc.host,
      port: loc.port,
      database: loc.database,
      user: loc.user,
      password: typeof password === 'function' ? async () => (await password()) ?? '' : (password ?? ''),
      ssl: loc.ssl ? { rejectUnauthorized: true } : false,
      connectionTimeoutMillis: 10_000,
      application_name: 'loupe-listen',
    };
    this.#pool = new pg.Pool({
      host: loc.host,
      port: loc.port,
      database: loc.database,
      user: loc.user,
      password: typeof password === 'function' ? async () => (await password()) ?? '' : (password ?? ''),
      ssl: loc.ssl ? { rejectUnauthorized: true } : false,
      max: 4,
      connectionTimeoutMillis: 10_000,
      idleTimeoutMillis: 30_000,
      application_name: 'loupe',
      types,
      // every parameter escaped and every text read unescaped, for this store and all that share its pool (issue 39)
      Client: LosslessClient,
      // The durability of the SQLite store (WAL, synchronous = NORMAL): a crash of the machine may lose the last
      // commits, never corrupts; a commit does not wait for its WAL flush (PostgreSQL flushes within 3 × wal_writer_delay).
      options: '-c synchronous_commit=off',
    });
    // An idle connection dropped by a server restart must not crash the process: the pool opens a new one on next use.
    this.#pool.on('error', () => undefined);
    this.#sql = pgSql(
      (sql, params) => this.#q(sql, [...params]),
      () => PgRunStore.readyPoolOf(this),
      connectionClosed,
    );
    this.runSql = this.#sql;
    this.judgements = new StoreJudgementRows(this.#sql);
    this.scores = new StoreScoreRows(this.#sql);
    this.artefacts = new StoreArtefactRows(this.#sql);
  }

  /** The queries of the stores kept with the runs (`sql.ts`), through this store's retrying path. */
  readonly #sql: StoreSql;
  /** The store's {@link StoreSql}, for `storeSqlOf` only. */
  static sqlOf(s: PgRunStore): StoreSql {
    return s.#sql;
  }

  /** The connection pool, for {@link pgPoolOf} only (engine-level copy and PostgreSQL stores of higher layers). */
  static poolOf(s: PgRunStore): pg.Pool {
    return s.#pool;
  }

  /** The pool once pending migrations are applied (for {@link pgPoolOf} callers of a lazily opened store). */
  static async readyPoolOf(s: PgRunStore): Promise<pg.Pool> {
    await s.#waitReady();
    return s.#pool;
  }

  /** Where the server is, for messages (host:port or socket directory; never the password). */
  get server(): string {
    return this.#loc.host.startsWith('/')
      ? `socket ${this.#loc.host} port ${this.#loc.port}`
      : `${this.#loc.host}:${this.#loc.port}`;
  }

  /** A driver error as one message naming the store and server; never a password. */
  #fail(e: unknown): Error {
    const err = e as Error & { code?: string };
    const unreachable =
      ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ETIMEDOUT', 'ENOENT', 'EAI_AGAIN'].includes(err.code ?? '') ||
      /timeout expired|Connection terminated/i.test(err.message ?? '');
    if (unreachable) {
      return new LoupeInputError(
        this.location,
        `cannot reach PostgreSQL at ${this.server} (${err.code ?? redactStoreUrls(err.message)})`,
        { cause: e },
      );
    }
    if (err.code === '28P01' || err.code === '28000') {
      return new LoupeInputError(
        this.location,
        `PostgreSQL refused role '${this.#loc.user}': ${redactStoreUrls(err.message)}`,
        { cause: e },
      );
    }
    if (err.code === '3D000') {
      return new LoupeInputError(
        this.location,
        `no database '${this.#loc.database}' on ${this.server}: create it first (createdb)`,
        { cause: e },
      );
    }
    const out = new Error(redactStoreUrls(err.message ?? String(e)), { cause: e });
    (out as Error & { code?: string }).code = err.code;
    return out;
  }

  /**
   * One statement (or one simple query) in its own transaction. A pooled connection that the server closed (a
   * restart: the statement was never run) is dropped and the statement sent again on a new one, up to 5 times.
   */
  /** Waits for a lazily opened store's migrations (retried on the next call when they failed, e.g. server down). */
  async #waitReady(): Promise<void> {
    if (!this.#ready) return;
    this.#readyRun ??= this.#ready().then(
      () => {
        this.#ready = undefined;
      },
      (e: unknown) => {
        this.#readyRun = undefined;
        throw e;
      },
    );
    await this.#readyRun;
  }

  /** Makes every call wait for `migrate` first (see {@link openPgStoreLazily}). */
  static deferMigrations(s: PgRunStore, migrate: () => Promise<void>): void {
    s.#ready = migrate;
  }

  async #q(sql: string, params: unknown[] = []): Promise<Row[]> {
    await this.#waitReady();
    for (let attempt = 0; ; attempt++) {
      try {
        return (await this.#pool.query(sql, params)).rows as Row[];
      } catch (e) {
        if (!connectionClosed(e) || attempt >= 5 || this.#closed) throw this.#fail(e);
        await new Promise((r) => setTimeout(r, 50 * attempt));
      }
    }
  }

  /**
   * Runs `fn` in one transaction on one connection (rolled back when it throws). `begin` is sent as one simple
   * query (it may take transaction locks in the same round trip).
   */
  async #tx<T>(fn: (q: PgQuery) => Promise<T>, begin = 'BEGIN', migrating = false): Promise<T> {
    if (!migrating) await this.#waitReady();
    for (let attempt = 0; ; attempt++) {
      let client: pg.PoolClient;
      try {
        client = await this.#pool.connect();
      } catch (e) {
        throw this.#fail(e);
      }
      try {
        await client.query(begin);
      } catch (e) {
        // A pooled connection the server closed (restart): nothing ran; drop it and start again on a new one.
        client.release(e as Error);
        if (!connectionClosed(e) || attempt >= 5 || this.#closed) throw this.#fail(e);
        await new Promise((r) => setTimeout(r, 50 * attempt));
        continue;
      }
      const q: PgQuery = async (sql, params = []) => {
        try {
          return (await client.query(sql, params)).rows as Row[];
        } catch (e) {
          throw this.#fail(e);
        }
      };
      let broken: unknown;
      try {
        const out = await fn(q);
        await q('COMMIT');
        return out;
      } catch (e) {
        try {
          await client.query('ROLLBACK');
        } catch (r) {
          broken = r;
        }
        throw e;
      } finally {
        client.release(broken instanceof Error ? broken : undefined);
      }
    }
  }

  /**
   * Applies pending migrations, each in its own transaction under an advisory lock (two Loupe processes opening a
   * new database at once apply each migration once).
   * @throws Error when two migrations share an id; LoupeInputError when the database's schema is newer than this
   *   Loupe's (both versions named).
   */
  async migrate(all: Migration[]): Promise<void> {
    const sorted = [...all].sort((a, b) => a.id - b.id);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]!.id === sorted[i - 1]!.id) {
        throw new Error(
          `run store: two migrations share id ${sorted[i]!.id} ('${sorted[i - 1]!.name}', '${sorted[i]!.name}')`,
        );
      }
    }
    const known = sorted.length ? sorted[sorted.length - 1]!.id : 0;
    await this.#tx(
      async (q) => {
        await q('SELECT pg_advisory_xact_lock($1)', [LOCK_MIGRATE]);
        // Only when missing: an annotator's own login role (no CREATE on the schema) opens an up-to-date store.
        if (!(await q("SELECT to_regclass('migrations') IS NOT NULL AS t"))[0]!.t) {
          await q('CREATE TABLE migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
        }
        const applied = (await q('SELECT COALESCE(MAX(id), 0) AS m FROM migrations'))[0]!.m as number;
        if (applied > known) {
          throw new LoupeInputError(
            this.location,
            `the database's run store schema is version ${applied}, newer than this Loupe's ${known}: update Loupe`,
          );
        }
        for (const m of sorted) {
          if (m.id <= applied) continue;
          await q(m.sql);
          await q('INSERT INTO migrations (id, name, applied_at) VALUES ($1, $2, $3)', [m.id, m.name, nowIso()]);
        }
      },
      'BEGIN',
      true,
    );
  }

  async schemaVersion(): Promise<number> {
    return (await this.#q('SELECT COALESCE(MAX(id), 0) AS m FROM migrations'))[0]!.m as number;
  }

  async createRun(r: NewRun): Promise<RunRecord> {
    await this.#q(
      `INSERT INTO runs (id, suite, block_id, agent, model, params, prompt_hash, tool_set, data_checksums,
      loupe_version, sandbox, workspace, status, created_at, tokens_known, sweep_id) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16)`,
      [
        r.id,
        r.suite,
        r.blockId,
        r.agent,
        r.model,
        JSON.stringify(r.params),
        r.promptHash,
        r.toolSet,
        JSON.stringify(r.dataChecksums),
        r.loupeVersion,
        r.sandbox,
        r.workspace,
        r.status ?? 'pending',
        nowIso(),
        r.tokensKnown === false ? 0 : 1,
        r.sweepId ?? null,
      ],
    );
    await this.#notify({ kind: 'run', runId: r.id });
    return (await this.getRun(r.id))!;
  }

  async updateRun(id: string, patch: RunPatch): Promise<void> {
    const sets: string[] = [];
    const vals: unknown[] = [];
    const p = (v: unknown) => (vals.push(v), `$${vals.length}`);
    if (patch.status !== undefined) sets.push(`status = ${p(patch.status)}`);
    if (patch.statusReason !== undefined) sets.push(`status_reason = ${p(patch.statusReason)}`);
    if (patch.startedAt !== undefined) sets.push(`started_at = COALESCE(started_at, ${p(patch.startedAt)})`);
    if (patch.endedAt !== undefined) sets.push(`ended_at = ${p(patch.endedAt)}`);
    if (patch.addDurationMs !== undefined) {
      sets.push(`duration_ms = duration_ms + ${p(Math.round(patch.addDurationMs))}`);
    }
    if (patch.sandbox !== undefined) sets.push(`sandbox = ${p(patch.sandbox)}`);
    if (patch.ownerPid !== undefined) sets.push(`owner_pid = ${p(patch.ownerPid)}`);
    if (patch.workspace !== undefined) sets.push(`workspace = ${p(patch.workspace)}`);
    if (!sets.length) return;
    await this.#q(
      `WITH u AS (UPDATE runs SET ${sets.join(', ')} WHERE id = ${p(id)} RETURNING id) SELECT pg_notify('${CHANGES}', ${p(JSON.stringify({ kind: 'run', runId: id }))}) FROM u`,
      vals,
    );
  }

  async setDataChecksums(id: string, checksums: Record<string, string>): Promise<void> {
    await this.#q('UPDATE runs SET data_checksums = $1 WHERE id = $2', [JSON.stringify(checksums), id]);
  }

  /**
   * Takes the run's lease (see `RunStore.acquireRunLease`): one conditional UPDATE naming the holder it replaces
   * (compare-and-set), so two processes (on any machines) racing for a run cannot both win.
   * @throws Error when the run does not exist.
   */
  async acquireRunLease(
    runId: string,
    owner: { owner: string; host: string; pid: number },
    ttlMs: number,
  ): Promise<RunLeaseResult> {
    const read = async () =>
      (
        await this.#q(
          'SELECT lease_owner, lease_host, owner_pid, heartbeat_at, lease_expires_at FROM runs WHERE id = $1',
          [runId],
        )
      )[0];
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = new Date();
      const row = await read();
      if (!row) throw new Error(`no run '${runId}' in ${this.location}`);
      const holder = row.lease_owner ? leaseFromRow(row) : undefined;
      const free =
        !holder ||
        holder.owner === owner.owner ||
        Date.parse(holder.expiresAt) < now.getTime() ||
        (holder.host === owner.host && holder.pid != null && !pidAlive(holder.pid));
      if (!free) return { ok: false, holder: holder! };
      const expires = new Date(now.getTime() + ttlMs).toISOString();
      const done = await this.#q(
        `UPDATE runs SET lease_owner = $1, lease_host = $2, owner_pid = $3, heartbeat_at = $4, lease_expires_at = $5
        WHERE id = $6 AND lease_owner IS NOT DISTINCT FROM $7 RETURNING id`,
        [owner.owner, owner.host, owner.pid, now.toISOString(), expires, runId, holder?.owner ?? null],
      );
      if (done.length === 1) {
        return holder && holder.owner !== owner.owner ? { ok: true, tookOverFrom: holder } : { ok: true };
      }
    }
    return { ok: false, holder: leaseFromRow((await read())!) };
  }

  async renewRunLease(runId: string, owner: string, ttlMs: number): Promise<boolean> {
    const now = new Date();
    const r = await this.#q(
      'UPDATE runs SET heartbeat_at = $1, lease_expires_at = $2 WHERE id = $3 AND lease_owner = $4 RETURNING id',
      [now.toISOString(), new Date(now.getTime() + ttlMs).toISOString(), runId, owner],
    );
    return r.length === 1;
  }

  async releaseRunLease(runId: string, owner: string): Promise<void> {
    await this.#q(
      'UPDATE runs SET lease_owner = NULL, lease_host = NULL, lease_expires_at = NULL, owner_pid = NULL WHERE id = $1 AND lease_owner = $2',
      [runId, owner],
    );
  }

  /**
   * Commits a step and its effects in one round trip: one simple query (an implicit transaction: all or nothing)
   * that takes the step-order lock, then writes the step, the run's counters and state, answers, notes and saved
   * code (data-modifying CTEs), and the kernel cells with their figures. Values are inlined as escaped literals
   * (`pg.escapeLiteral`), as the simple protocol has no parameters; the lock's statement comes first so the step's
   * `seq` is read after it (commit order).
   * @throws Error (unique violation) if the step index exists; nothing is written then.
   */
  async commitStep(step: StepRecord, effects: StepEffects = {}): Promise<void> {
    const answers = new Map<string, { answer: string; raw: string }>();
    for (const a of effects.answers ?? []) answers.set(a.queryId, { answer: JSON.stringify(a.answer), raw: a.raw });
    const notes = effects.notes;
    const L = sqlLiteral;
    const run = L(step.runId);
    const usage = step.usage ?? { input: 0, output: 0, cached: 0 }; // unknown (an MCP client): stored as 0 with tokens_known = 0
    const sql = [
      `SELECT pg_advisory_xact_lock(${LOCK_STEP_SEQ})`,
      `WITH s AS (
          INSERT INTO steps (run_id, idx, started_at, ended_at, latency_ms, tool_ms, assistant, tool_calls,
            extra_messages, tokens_input, tokens_output, tokens_cached, cost_usd, finish_reason, tokens_known, seq)
          VALUES (${[
            step.runId,
            step.index,
            step.startedAt,
            step.endedAt,
            step.latencyMs,
            step.toolMs,
            JSON.stringify(step.assistant),
            JSON.stringify(step.toolCalls),
            JSON.stringify(step.extraMessages),
            usage.input,
            usage.output,
            usage.cached,
            step.costUsd,
            step.finishReason,
            step.usage ? 1 : 0,
          ]
            .map(L)
            .join(', ')},
            (SELECT COALESCE(MAX(seq), 0) + 1 FROM steps)) RETURNING 1
        ), r AS (
          UPDATE runs SET heartbeat_at = ${L(step.endedAt)}, steps = steps + 1, tokens_input = tokens_input + ${L(usage.input)},
            tokens_output = tokens_output + ${L(usage.output)}, tokens_cached = tokens_cached + ${L(usage.cached)},
            cost_usd = ${step.costUsd === null ? 'cost_usd' : `COALESCE(cost_usd, 0) + ${L(step.costUsd)}`}
            ${effects.extra ? `, state = ${L(JSON.stringify(effects.extra))}` : ''}
          WHERE id = ${run} RETURNING 1
        )${
          answers.size
            ? `, a AS (
          INSERT INTO answers (run_id, query_id, answer, raw, step_idx)
          SELECT ${run}, t.q, t.a, t.r, ${L(step.index)} FROM unnest(${L([...answers.keys()])}, ${L([...answers.values()].map((v) => v.answer))}, ${L([...answers.values()].map((v) => v.raw))}) WITH ORDINALITY AS t(q, a, r, o) ORDER BY t.o
          ON CONFLICT (run_id, query_id) DO UPDATE SET answer = excluded.answer, raw = excluded.raw, step_idx = excluded.step_idx RETURNING 1
        )`
            : ''
        }${
          notes
            ? `, nd AS (
          DELETE FROM notes WHERE run_id = ${run} AND idx >= ${notes.length} RETURNING 1
        ), ni AS (
          INSERT INTO notes (run_id, idx, content) SELECT ${run}, t.i - 1, t.c FROM unnest(${L(notes)}) WITH ORDINALITY AS t(c, i)
          ON CONFLICT (run_id, idx) DO UPDATE SET content = excluded.content RETURNING 1
        )`
            : ''
        }${
          effects.savedCode !== undefined
            ? `, sc AS (
          INSERT INTO saved_code (run_id, step_idx, code) VALUES (${run}, ${L(step.index)}, ${L(effects.savedCode)})
          ON CONFLICT (run_id, step_idx) DO UPDATE SET code = excluded.code RETURNING 1
        )`
            : ''
        }
        SELECT count(*) FROM s`,
    ];
    for (const c of effects.cells ?? []) {
      sql.push(`INSERT INTO kernel_cells (run_id, seq, step_idx, code, status, stdout, stderr, result, error, tables, duration_ms, replay, restarted)
        VALUES (${[c.runId, c.seq, c.stepIndex, c.code, c.status, c.stdout, c.stderr, c.result, c.error ? JSON.stringify(c.error) : null, JSON.stringify(c.tables), c.durationMs, c.replay ? 1 : 0, c.restarted ? 1 : 0].map(L).join(', ')})`);
      for (const [i, png] of c.figures.entries()) {
        sql.push(
          `INSERT INTO cell_figures (run_id, cell_seq, idx, png) VALUES (${L(c.runId)}, ${L(c.seq)}, ${i}, decode(${L(png)}, 'base64'))`,
        );
      }
    }
    sql.push(
      `SELECT pg_notify('${CHANGES}', ${L(JSON.stringify({ kind: 'step', runId: step.runId, index: step.index }))})`,
    );
    await this.#q(sql.join(';\n'));
  }

  async applyEffects(runId: string, stepIndex: number, effects: StepEffects): Promise<void> {
    await this.#tx((q) => this.#applyEffects(q, runId, stepIndex, effects));
  }

  async #applyEffects(q: PgQuery, runId: string, stepIndex: number, effects: StepEffects): Promise<void> {
    for (const a of effects.answers ?? []) {
      await q(
        `INSERT INTO answers (run_id, query_id, answer, raw, step_idx) VALUES ($1,$2,$3,$4,$5)
        ON CONFLICT (run_id, query_id) DO UPDATE SET answer = excluded.answer, raw = excluded.raw, step_idx = excluded.step_idx`,
        [runId, a.queryId, JSON.stringify(a.answer), a.raw, stepIndex],
      );
    }
    if (effects.notes) {
      await q('DELETE FROM notes WHERE run_id = $1', [runId]);
      if (effects.notes.length) {
        await q(
          'INSERT INTO notes (run_id, idx, content) SELECT $1, i - 1, c FROM unnest($2::text[]) WITH ORDINALITY AS t(c, i)',
          [runId, effects.notes],
        );
      }
    }
    if (effects.savedCode !== undefined) {
      await q(
        'INSERT INTO saved_code (run_id, step_idx, code) VALUES ($1,$2,$3) ON CONFLICT (run_id, step_idx) DO UPDATE SET code = excluded.code',
        [runId, stepIndex, effects.savedCode],
      );
    }
    for (const c of effects.cells ?? []) await this.#insertCell(q, c);
    if (effects.extra) await q('UPDATE runs SET state = $1 WHERE id = $2', [JSON.stringify(effects.extra), runId]);
  }

  async insertCell(c: KernelCellRecord): Promise<void> {
    await this.#tx((q) => this.#insertCell(q, c));
  }

  async #insertCell(q: PgQuery, c: KernelCellRecord): Promise<void> {
    await q(
      `INSERT INTO kernel_cells (run_id, seq, step_idx, code, status, stdout, stderr, result, error, tables, duration_ms, replay, restarted)
      VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13)`,
      [
        c.runId,
        c.seq,
        c.stepIndex,
        c.code,
        c.status,
        c.stdout,
        c.stderr,
        c.result,
        c.error ? JSON.stringify(c.error) : null,
        JSON.stringify(c.tables),
        c.durationMs,
        c.replay ? 1 : 0,
        c.restarted ? 1 : 0,
      ],
    );
    for (const [i, png] of c.figures.entries()) {
      await q('INSERT INTO cell_figures (run_id, cell_seq, idx, png) VALUES ($1,$2,$3,$4)', [
        c.runId,
        c.seq,
        i,
        Buffer.from(png, 'base64'),
      ]);
    }
  }

  async addEvent(runId: string, kind: string, message: string): Promise<void> {
    await this.#q('INSERT INTO run_events (run_id, at, kind, message) VALUES ($1,$2,$3,$4)', [
      runId,
      nowIso(),
      kind,
      message,
    ]);
  }

  /**
   * Records a human step only while `leaseOwner` holds the run's lease (one INSERT ... SELECT whose WHERE is the
   * lease check; the run row is locked so two interventions get consecutive numbers).
   * @returns the record, or undefined when the lease is not held by `leaseOwner`. @throws Error for an unknown run.
   */
  async addIntervention(i: NewIntervention, leaseOwner: string): Promise<InterventionRecord | undefined> {
    return this.#tx(async (q) => {
      const [run] = await q('SELECT steps FROM runs WHERE id = $1 FOR UPDATE', [i.runId]);
      if (!run) throw new Error(`run ${i.runId} not found in ${this.location}`);
      const at = i.at ?? nowIso();
      const before = i.beforeStep ?? (run.steps as number);
      const [row] = await q(
        `INSERT INTO interventions (run_id, seq, before_step, at, who, kind, text)
        SELECT id, (SELECT COALESCE(MAX(seq), 0) + 1 FROM interventions WHERE run_id = $1), $2, $3, $4, $5, $6 FROM runs WHERE id = $1 AND lease_owner = $7
        RETURNING seq`,
        [i.runId, before, at, i.who, i.kind, i.text, leaseOwner],
      );
      return row
        ? { runId: i.runId, seq: row.seq as number, beforeStep: before, at, who: i.who, kind: i.kind, text: i.text }
        : undefined;
    });
  }

  /**
   * The steps of a run without their texts, JSON read by the server (see `RunStore.getStepSummaries`). A JSON
   * `\u0000` escape (which PostgreSQL's json operators cannot turn into text) is dropped before parsing.
   */
  async getStepSummaries(runId: string): Promise<StepSummaryRecord[]> {
    const rows = await this.#q(
      `SELECT idx, seq, started_at, latency_ms, tool_ms, tokens_input, tokens_output, tokens_known,
        substr(${jsonNulToText("a ->> 'content'")}, 1, 400) AS content,
        (SELECT COALESCE(json_agg(e ->> 'name'), '[]'::json)::text FROM json_array_elements(t) e) AS names,
        (SELECT count(*)::int FROM json_array_elements(t) e WHERE (e ->> 'isError') = 'true') AS errors,
        ${jsonNulToText("t -> 0 ->> 'argumentsText'")} AS first_args
      FROM (SELECT idx, seq, started_at, latency_ms, tool_ms, tokens_input, tokens_output, tokens_known,
              ${jsonColumn('assistant')}::json AS a, ${jsonColumn('tool_calls')}::json AS t
            FROM steps WHERE run_id = $1) s ORDER BY idx`,
      [runId],
    );
    return rows.map((r) => ({
      runId,
      index: r.idx as number,
      startedAt: r.started_at as string,
      latencyMs: r.latency_ms as number,
      toolMs: r.tool_ms as number,
      usage: r.tokens_known === 0 ? null : { input: r.tokens_input as number, output: r.tokens_output as number },
      content: (r.content as string | null) ?? '',
      toolNames: JSON.parse((r.names as string | null) ?? '[]') as string[],
      anyError: (r.errors as number) > 0,
      firstArguments: typeof r.first_args === 'string' ? r.first_args : null,
      seq: Number(r.seq),
    }));
  }

  async searchSteps(runId: string, query: string): Promise<number[]> {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    const cond = words.map((_, i) => `strpos(lower(assistant || chr(10) || tool_calls), $${i + 2}) > 0`).join(' AND ');
    const rows = await this.#q(`SELECT idx FROM steps WHERE run_id = $1${cond ? ` AND ${cond}` : ''} ORDER BY idx`, [
      runId,
      ...words.map((w) => JSON.stringify(w).slice(1, -1)),
    ]);
    return rows.map((r) => r.idx as number);
  }

  async getSteps(runId: string, fromIndex = 0): Promise<StepRecord[]> {
    return (await this.#q('SELECT * FROM steps WHERE run_id = $1 AND idx >= $2 ORDER BY idx', [runId, fromIndex])).map(
      stepFromRow,
    );
  }

  async getStep(runId: string, index: number): Promise<StepRecord | undefined> {
    const [r] = await this.#q('SELECT * FROM steps WHERE run_id = $1 AND idx = $2', [runId, index]);
    return r ? stepFromRow(r) : undefined;
  }

  async getAnswers(runId: string): Promise<AnswerRecord[]> {
    return (await this.getAnswersOf([runId])).get(runId)!;
  }

  async getAnswersOf(runIds: string[]): Promise<Map<string, AnswerRecord[]>> {
    const out = new Map<string, AnswerRecord[]>(runIds.map((id) => [id, []]));
    if (!runIds.length) return out;
    for (const r of await this.#q('SELECT * FROM answers WHERE run_id = ANY($1::text[]) ORDER BY rid', [runIds])) {
      out.get(r.run_id as string)!.push(answerFromRow(r));
    }
    return out;
  }

  async getToolErrorCountsOf(runIds: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (!runIds.length) return out;
    const rows = await this.#q(
      `SELECT run_id, count(*)::int AS n FROM (SELECT run_id, ${jsonColumn('tool_calls')}::json AS t FROM steps WHERE run_id = ANY($1::text[])) s,
        json_array_elements(s.t) e WHERE (e ->> 'isError') = 'true' GROUP BY run_id`,
      [runIds],
    );
    for (const r of rows) out.set(r.run_id as string, r.n as number);
    return out;
  }

  async getNotes(runId: string): Promise<string[]> {
    return (await this.#q('SELECT content FROM notes WHERE run_id = $1 ORDER BY idx', [runId])).map(
      (r) => r.content as string,
    );
  }

  async getSavedCode(runId: string): Promise<string | null> {
    const [r] = await this.#q('SELECT code FROM saved_code WHERE run_id = $1 ORDER BY step_idx DESC LIMIT 1', [runId]);
    return (r?.code as string | undefined) ?? null;
  }

  async getExtraState(runId: string): Promise<Record<string, unknown>> {
    const [r] = await this.#q('SELECT state FROM runs WHERE id = $1', [runId]);
    return r?.state ? (JSON.parse(r.state as string) as Record<string, unknown>) : {};
  }

  async getCells(runId: string, opts: CellQuery = {}): Promise<KernelCellRecord[]> {
    const rows = await this.#q(
      `SELECT * FROM kernel_cells WHERE run_id = $1 AND seq > $2 ${opts.includeReplays === false ? 'AND replay = 0' : ''} ORDER BY seq`,
      [runId, opts.sinceSeq ?? -1],
    );
    const figs = new Map<number, string[]>();
    const counts = new Map<number, number>();
    if (rows.length) {
      const withFigures = opts.withFigures !== false;
      const figRows = await this.#q(
        `SELECT cell_seq, ${withFigures ? 'png' : 'NULL::bytea AS png'} FROM cell_figures WHERE run_id = $1 AND cell_seq > $2 ORDER BY cell_seq, idx`,
        [runId, opts.sinceSeq ?? -1],
      );
      for (const f of figRows) {
        const s = f.cell_seq as number;
        counts.set(s, (counts.get(s) ?? 0) + 1);
        if (withFigures) figs.set(s, [...(figs.get(s) ?? []), (f.png as Buffer).toString('base64')]);
      }
    }
    return rows.map((r) => ({
      runId,
      seq: r.seq as number,
      stepIndex: r.step_idx as number,
      code: r.code as string,
      status: r.status as KernelCellRecord['status'],
      stdout: r.stdout as string,
      stderr: r.stderr as string,
      result: (r.result as string | null) ?? null,
      error: r.error ? JSON.parse(r.error as string) : null,
      tables: JSON.parse(r.tables as string),
      figures: figs.get(r.seq as number) ?? [],
      figureCount: counts.get(r.seq as number) ?? 0,
      durationMs: r.duration_ms as number,
      replay: r.replay === 1,
      restarted: r.restarted === 1,
    }));
  }

  async nextCellSeq(runId: string): Promise<number> {
    return (await this.#q('SELECT COALESCE(MAX(seq), -1) + 1 AS s FROM kernel_cells WHERE run_id = $1', [runId]))[0]!
      .s as number;
  }

  async getEventsOf(runIds: string[], kind?: string): Promise<Map<string, RunEventRecord[]>> {
    const out = new Map<string, RunEventRecord[]>(runIds.map((id) => [id, []]));
    if (!runIds.length) return out;
    const rows = await this.#q(
      `SELECT * FROM run_events WHERE run_id = ANY($1::text[])${kind !== undefined ? ' AND kind = $2' : ''} ORDER BY rid`,
      kind !== undefined ? [runIds, kind] : [runIds],
    );
    for (const r of rows) {
      out
        .get(r.run_id as string)!
        .push({ runId: r.run_id as string, at: r.at as string, kind: r.kind as string, message: r.message as string });
    }
    return out;
  }

  async getEvents(runId: string): Promise<RunEventRecord[]> {
    return (await this.getEventsOf([runId])).get(runId)!;
  }

  /**
   * Calls `onStep` for every step committed after now (by any process or machine writing the database), polling
   * every `intervalMs` (default 250); a failed poll (server restarting) is retried on the next tick. `poll()` on the
   * returned subscription reads at once; asked while a read is under way (which may have started before the commit it
   * is told of), it reads once more right after that one — reads never overlap, so the watermark orders them.
   */
  subscribeSteps(onStep: (s: StepRecord) => void, opts: SubscribeStepsOptions = {}): StepSubscription {
    let last: number | undefined = opts.afterSeq ?? (opts.fromStart ? 0 : undefined);
    let busy = false;
    let again = false;
    let stopped = false;
    const tick = async (): Promise<void> => {
      if (this.#closed) return stop();
      if (stopped) return;
      if (busy) {
        again = true;
        return;
      }
      busy = true;
      again = false;
      try {
        last ??= (await this.#q('SELECT COALESCE(MAX(seq), 0) AS s FROM steps'))[0]!.s as number;
        const rows = opts.runId
          ? await this.#q('SELECT * FROM steps WHERE seq > $1 AND run_id = $2 ORDER BY seq', [last, opts.runId])
          : await this.#q('SELECT * FROM steps WHERE seq > $1 ORDER BY seq', [last]);
        for (const r of rows) {
          if (stopped) break;
          last = Math.max(last, r.seq as number);
          onStep(stepFromRow(r));
        }
      } catch {
        // the next tick retries (the pool reconnects)
      } finally {
        busy = false;
      }
      if (again) return tick();
    };
    if (last === undefined) void tick();
    const timer = setInterval(() => void tick(), opts.intervalMs ?? 250);
    timer.unref?.();
    const stop = () => {
      stopped = true;
      clearInterval(timer);
    };
    return Object.assign(stop, { poll: () => void tick() });
  }

  async deleteRun(id: string): Promise<boolean> {
    const gone = await this.#tx(async (q) => {
      const deleted = (await q('DELETE FROM runs WHERE id = $1 RETURNING id', [id])).length > 0;
      // contents no run refers to any more (content-addressed artefacts of the deleted run)
      if (deleted) {
        await q(
          'DELETE FROM artefact_blobs b WHERE NOT EXISTS (SELECT 1 FROM run_artefacts a WHERE a.sha256 = b.sha256)',
        );
      }
      return deleted;
    });
    if (gone) await this.#notify({ kind: 'run', runId: id });
    return gone;
  }

  async #notify(c: StoreChange): Promise<void> {
    await this.#q(`SELECT pg_notify('${CHANGES}', $1)`, [JSON.stringify(c)]);
  }

  /**
   * Calls `onChange` for every run, step or annotation written to this database by any process or machine
   * (PostgreSQL LISTEN/NOTIFY on channel `loupe_changes`, sent in the writing transaction). One listening connection
   * per store; when it breaks (server restart) it reconnects after a second (backing off to 30 s while it fails) and
   * reports `{ kind: 'reconnected' }`,
   * so views re-read what they may have missed.
   * @returns an unsubscribe function.
   */
  watchChanges(onChange: (c: StoreChange) => void): () => void {
    this.#watchers.add(onChange);
    if (!this.#listener) {
      this.#listener = { client: undefined, timer: undefined, failures: 0 };
      void this.#listen(false);
    }
    return () => {
      this.#watchers.delete(onChange);
      if (!this.#watchers.size) this.#stopListening();
    };
  }

  /** A promise that resolves once the listening connection is up (tests, and callers that must not miss a change). */
  async listening(): Promise<void> {
    for (let i = 0; i < 200 && this.#listener && !this.#listener.client; i++) {
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async #listen(again: boolean): Promise<void> {
    const l = this.#listener;
    if (!l || this.#closed) return;
    const client = new pg.Client(this.#clientConfig);
    const retry = () => {
      if (l.client === client) l.client = undefined;
      client.removeAllListeners();
      client.on('error', () => undefined);
      void client.end().catch(() => undefined);
      // 1 s, then doubling up to 30 s while the server stays unreachable or refuses the password
      if (this.#listener === l && !this.#closed) {
        l.timer = setTimeout(() => void this.#listen(true), Math.min(30_000, 1000 * 2 ** Math.min(l.failures++, 5)));
      }
      l.timer?.unref?.();
    };
    try {
      await client.connect();
      client.on('notification', (n) => {
        let c: StoreChange;
        try {
          c = JSON.parse(decodePgText(n.payload ?? '{}')) as StoreChange;
        } catch {
          return;
        }
        for (const w of [...this.#watchers]) w(c);
      });
      client.on('error', retry);
      client.on('end', retry);
      await client.query(`LISTEN ${CHANGES}`);
      if (this.#listener !== l || this.#closed) {
        client.removeAllListeners();
        await client.end().catch(() => undefined);
        return;
      }
      l.client = client;
      l.failures = 0;
      if (again) for (const w of [...this.#watchers]) w({ kind: 'reconnected' });
    } catch {
      retry();
    }
  }

  #stopListening(): void {
    const l = this.#listener;
    this.#listener = undefined;
    if (!l) return;
    if (l.timer) clearTimeout(l.timer);
    if (l.client) {
      l.client.removeAllListeners();
      l.client.on('error', () => undefined);
      void l.client.end().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#watchers.clear();
    this.#stopListening();
    await this.#pool.end();
  }
}

/**
 * Connects to a PostgreSQL run store and applies pending migrations.
 * @param loc the parsed location (`parseStoreLocation`).
 * @param opts `password` from the caller (SecretStorage; else `passwordEnv` / `PGPASSWORD`), `extraMigrations`
 *   (portable SQL, ids above the built-in ones), `env` for the password variable (default `process.env`).
 * @returns the open store.
 * @throws LoupeInputError naming the URL (never the password) and the host and port when the server cannot be
 *   reached, refuses the role, has no such database, or holds a newer schema; Error on duplicate migration ids.
 */
export async function openPgStore(
  loc: PostgresLocation,
  opts: { password?: string; env?: NodeJS.ProcessEnv; extraMigrations?: Migration[] } = {},
): Promise<PgRunStore> {
  const all = pgMigrations(opts.extraMigrations);
  const store = new PgRunStore(loc, storePassword(loc, opts.password, opts.env));
  try {
    await store.migrate(all);
  } catch (e) {
    await store.close();
    throw e;
  }
  return store;
}

/**
 * The connection pool of a PostgreSQL run store, for code of `src/core/store/` (copy) and the PostgreSQL
 * implementations of stores of higher layers that keep their tables in the same database. Nothing else may use it.
 * @throws Error naming the engine when the store is not PostgreSQL.
 */
export function pgPoolOf(store: RunStore): pg.Pool {
  if (store instanceof PgRunStore) return PgRunStore.poolOf(store);
  throw new Error(`the ${store.engine} run store at ${store.location} is not a PostgreSQL store`);
}

/**
 * Opens a PostgreSQL run store without waiting: the object is returned at once and its first call connects and
 * applies pending migrations (a failure is that call's error, and the next call tries again). For synchronous
 * callers (the VS Code extension's store accessor).
 * @param loc the parsed location; `opts.password` a value or a function asked on each new connection
 *   (SecretStorage); `extraMigrations` as in {@link openPgStore}.
 * @returns the store (engine `postgres`).
 * @throws (from the first call) Error on duplicate migration ids, LoupeInputError as {@link openPgStore}.
 */
export function openPgStoreLazily(
  loc: PostgresLocation,
  opts: { password?: () => Promise<string | undefined>; extraMigrations?: Migration[] } = {},
): PgRunStore {
  const all = pgMigrations(opts.extraMigrations);
  const store = new PgRunStore(loc, opts.password ?? (async () => storePassword(loc)));
  PgRunStore.deferMigrations(store, () => store.migrate(all));
  return store;
}

/**
 * The connection pool of a PostgreSQL run store once its pending migrations are applied (a lazily opened store
 * migrates on first use): for the PostgreSQL stores of higher layers (`annotationStoreOf`).
 * @throws Error naming the engine when the store is not PostgreSQL; the migration's error when it fails.
 */
export async function pgReadyPoolOf(store: RunStore): Promise<pg.Pool> {
  if (store instanceof PgRunStore) return PgRunStore.readyPoolOf(store);
  throw new Error(`the ${store.engine} run store at ${store.location} is not a PostgreSQL store`);
}

/**
 * Watches a run store for changes written by other processes or machines: a PostgreSQL store announces them with
 * LISTEN/NOTIFY; other engines have no change feed here (undefined: callers keep their own refresh).
 * @returns an unsubscribe function, or undefined when the engine has no change feed.
 */
export function watchStoreChanges(store: RunStore, onChange: (c: StoreChange) => void): (() => void) | undefined {
  return store instanceof PgRunStore ? store.watchChanges(onChange) : undefined;
}
