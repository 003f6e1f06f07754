/**
 * The run store: one SQLite file (better-sqlite3, WAL) holding runs, steps, answers, notes, saved
 * code, kernel cells (with figures) and run events. Writers: the agent loop (one process may run
 * several runs). Readers: the CLI, the VS Code UI, evaluation — possibly from another process
 * (WAL lets them read while a run writes). The API key is never passed to the store.
 * Source: issue 5 "Run store".
 */
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { holdDatabaseFile } from '../util/held-files.ts';
import { dirname, join } from 'node:path';
import { LoupeInputError } from '../util/errors.ts';
import { redactStoreUrls } from './location.ts';
import { trustedRunFolder } from './run-folder.ts';
import { migrations as defaultMigrations, type Migration } from './migrations.ts';
import { StoreArtefactRows, StoreJudgementRows, StoreRunReads, StoreScoreRows } from './rows.ts';
import { sqliteSql, sqliteWrite, type StoreSql } from './sql.ts';
import { OffThreadReader } from './read-worker.ts';
import type {
  AnswerRecord,
  AnswerValue,
  AssistantMessage,
  ChatMessage,
  InterventionRecord,
  KernelCellRecord,
  RunEventRecord,
  RunRecord,
  StepRecord,
  ToolCallRecord,
} from './records.ts';
import type {
  ArtefactRows,
  CellQuery,
  JudgementRows,
  NewIntervention,
  NewRun,
  RunLeaseHolder,
  RunLeaseResult,
  RunPatch,
  RunStore,
  ScoreRows,
  StepEffects,
  StepSummaryRecord,
  StepSubscription,
  SubscribeStepsOptions,
} from './types.ts';

export type {
  ArtefactRows,
  CellQuery,
  JudgementRows,
  NewIntervention,
  NewRun,
  RunFilter,
  RunLeaseHolder,
  RunLeaseResult,
  RunPatch,
  RunStore,
  RunArtefact,
  ScoreRows,
  StepEffects,
  StepSummaryRecord,
  StepSubscription,
} from './types.ts';

type Row = Record<string, unknown>;

const nowIso = () => new Date().toISOString();

/** Lives in `rows.ts` (the run reads of both engines); exported here for its callers. */
export { runFromRow } from './rows.ts';

/**
 * True when a `running` run is really being driven: its owner process is alive on this machine.
 * A run left `running` by a killed process is stale and can be resumed (`loupe run --resume`).
 */
export function isRunActive(run: RunRecord): boolean {
  if (run.status !== 'running' || !run.ownerPid) return false;
  try {
    process.kill(run.ownerPid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Tool arguments, observations and assistant tool-call arguments longer than this (characters) are kept
 * whole in a content-addressed file of the run folder (`blobs/<sha256>`), not in the SQLite row; reads
 * put them back, so replay, forking and exports see the full text (issue 11: 10 MB arguments grew the
 * store by 84 MB).
 */
export const BLOB_MIN_CHARS = 1 << 20;
const BLOB_MARK = '\u0000loupe-blob:';

/**
 * A SQLite `steps` row with the texts it keeps as run-folder blobs (over {@link BLOB_MIN_CHARS}) put back into its
 * JSON columns, for a store without run folders (`loupe store copy` to PostgreSQL). A blob file that is missing
 * becomes a note saying so (as readers of the file show it).
 * @param row a `steps` row (columns `assistant`, `tool_calls` as stored); `runDir` the run's folder checked by
 *   `trustedRunFolder` (issue 36: never a path read from the store unchecked; its blobs are in
 *   `<run folder>/blobs/<sha256>`), undefined when unknown or not trusted.
 * @returns the same row when it holds no blob marker, else a copy with full texts.
 */
export function stepRowWithBlobTexts(
  row: Record<string, unknown>,
  runDir: string | undefined,
): Record<string, unknown> {
  const marked = (c: unknown) => typeof c === 'string' && c.includes('\\u0000loupe-blob:');
  if (!marked(row.tool_calls) && !marked(row.assistant)) return row;
  const dir = runDir ? join(runDir, 'blobs') : undefined;
  const put = (t: string): string => {
    if (typeof t !== 'string' || !t.startsWith(BLOB_MARK)) return t;
    const [sha, len] = t.slice(BLOB_MARK.length).split(':');
    try {
      if (!dir || !/^[0-9a-f]{64}$/.test(sha ?? '')) throw new Error('no blob');
      return readFileSync(join(dir, sha!), 'utf8');
    } catch {
      return `[${len} characters stored in the run folder as blobs/${sha}; that file is missing]`;
    }
  };
  const assistant = JSON.parse(row.assistant as string) as AssistantMessage;
  const calls = JSON.parse(row.tool_calls as string) as ToolCallRecord[];
  return {
    ...row,
    assistant: JSON.stringify(
      assistant.tool_calls
        ? {
            ...assistant,
            tool_calls: assistant.tool_calls.map((c) => ({
              ...c,
              function: { ...c.function, arguments: put(c.function.arguments) },
            })),
          }
        : assistant,
    ),
    tool_calls: JSON.stringify(
      calls.map((c) => ({ ...c, argumentsText: put(c.argumentsText), observation: put(c.observation) })),
    ),
  };
}

/** An `answers` row (either engine) as an {@link AnswerRecord}. */
export function answerFromRow(r: Row): AnswerRecord {
  return {
    runId: r.run_id as string,
    queryId: r.query_id as string,
    answer: JSON.parse(r.answer as string) as AnswerValue,
    raw: r.raw as string,
    stepIndex: r.step_idx as number,
  };
}

/** The first 400 characters (code points) of a message read as UTF-8 bytes (a BLOB), or of a text; '' for null. */
function summaryText(v: unknown): string {
  if (v == null) return '';
  const text = Buffer.isBuffer(v) || v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : String(v);
  return text.length <= 400 ? text : [...text].slice(0, 400).join('');
}

/** A `steps` row (either engine) as a {@link StepRecord} (texts as stored). */
export function stepFromRow(r: Row): StepRecord {
  return {
    runId: r.run_id as string,
    index: r.idx as number,
    startedAt: r.started_at as string,
    endedAt: r.ended_at as string,
    latencyMs: r.latency_ms as number,
    toolMs: r.tool_ms as number,
    assistant: JSON.parse(r.assistant as string) as AssistantMessage,
    toolCalls: JSON.parse(r.tool_calls as string) as ToolCallRecord[],
    extraMessages: JSON.parse(r.extra_messages as string) as ChatMessage[],
    usage:
      r.tokens_known === 0
        ? null
        : { input: r.tokens_input as number, output: r.tokens_output as number, cached: r.tokens_cached as number },
    costUsd: (r.cost_usd as number | null) ?? null,
    finishReason: (r.finish_reason as string | null) ?? null,
  };
}

/** True when `pid` is a live process on this machine. */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The embedded run store: one SQLite file (better-sqlite3, WAL). Calls are synchronous underneath and resolve at
 * once; the interface is asynchronous for other engines. Create with {@link openStore}.
 */
export class SqliteRunStore extends StoreRunReads implements RunStore {
  readonly engine = 'sqlite';
  /** The database handle; only SQLite stores of other layers reach it, through {@link sqliteHandleOf}. */
  readonly #db: Database.Database;
  readonly file: string;
  readonly judgements: JudgementRows;
  readonly scores: ScoreRows;
  readonly artefacts: ArtefactRows;

  get location(): string {
    return this.file;
  }
  private get db(): Database.Database {
    return this.#db;
  }
  /** The queries of the stores kept with the runs (`sql.ts`) on this handle. */
  #sql!: StoreSql;
  /** The store's {@link StoreSql}, for `storeSqlOf` only. */
  static sqlOf(s: SqliteRunStore): StoreSql {
    return s.#sql;
  }
  /**
   * Runs one synchronous write on the handle once no `StoreSql` transaction is open on it (`sqliteWrite`: a write here
   * would otherwise join a checklist's or ground truth's transaction and be lost if that one rolls back; issue 41).
   */
  #write<T>(w: () => T): T | Promise<T> {
    return sqliteWrite(this.#db, w);
  }
  /** The handle, for {@link sqliteHandleOf} only. */
  static handleOf(s: SqliteRunStore): Database.Database {
    return s.#db;
  }

  /** Unregisters the file from the held database files (`util/held-files.ts`) when the store closes. */
  #release: () => void = () => undefined;

  constructor(file: string, extraMigrations: Migration[] = []) {
    super();
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(file)) {
      throw new LoupeInputError(
        redactStoreUrls(file),
        'a URL is not a SQLite store file (open a postgres:// store with openStoreAt)',
      );
    }
    this.file = file;
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    try {
      this.#db = new Database(file);
    } catch (e) {
      throw new LoupeInputError(file, `cannot open run store: ${(e as Error).message}`, { cause: e });
    }
    // registered as held: no code of this process opens the file or its -wal/-shm outside SQLite (issue 39)
    this.#release = holdDatabaseFile(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
    try {
      this.migrate([...defaultMigrations, ...extraMigrations]);
    } catch (e) {
      this.#db.close();
      this.#release();
      throw e;
    }
    this.#sql = sqliteSql(this.#db);
    this.runSql = this.#sql;
    this.judgements = new StoreJudgementRows(this.#sql);
    this.scores = new StoreScoreRows(this.#sql);
    this.artefacts = new StoreArtefactRows(this.#sql);
  }

  private migrate(all: Migration[]): void {
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
    );
    const applied = (this.db.prepare('SELECT COALESCE(MAX(id), 0) AS m FROM migrations').get() as { m: number }).m;
    const sorted = [...all].sort((a, b) => a.id - b.id);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]!.id === sorted[i - 1]!.id) {
        throw new Error(
          `run store: two migrations share id ${sorted[i]!.id} ('${sorted[i - 1]!.name}', '${sorted[i]!.name}')`,
        );
      }
    }
    const known = sorted.length ? sorted[sorted.length - 1]!.id : 0;
    if (applied > known) {
      throw new LoupeInputError(
        this.file,
        `the run store's schema is version ${applied}, newer than this Loupe's ${known}: update Loupe`,
      );
    }
    for (const m of sorted) {
      if (m.id <= applied) continue;
      this.db.transaction(() => {
        this.db.exec(m.sql);
        this.db.prepare('INSERT INTO migrations (id, name, applied_at) VALUES (?, ?, ?)').run(m.id, m.name, nowIso());
      })();
    }
  }

  async schemaVersion(): Promise<number> {
    return (this.db.prepare('SELECT COALESCE(MAX(id), 0) AS m FROM migrations').get() as { m: number }).m;
  }

  async createRun(r: NewRun): Promise<RunRecord> {
    await this.#write(() =>
      this.db
        .prepare(
          `INSERT INTO runs (id, suite, block_id, agent, model, params, prompt_hash, tool_set, data_checksums,
      loupe_version, sandbox, workspace, status, created_at, tokens_known, sweep_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
        )
        .run(
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
        ),
    );
    return (await this.getRun(r.id))!;
  }

  async updateRun(id: string, patch: RunPatch): Promise<void> {
    const sets: string[] = [];
    const vals: unknown[] = [];
    if (patch.status !== undefined) {
      sets.push('status = ?');
      vals.push(patch.status);
    }
    if (patch.statusReason !== undefined) {
      sets.push('status_reason = ?');
      vals.push(patch.statusReason);
    }
    if (patch.startedAt !== undefined) {
      sets.push('started_at = COALESCE(started_at, ?)');
      vals.push(patch.startedAt);
    }
    if (patch.endedAt !== undefined) {
      sets.push('ended_at = ?');
      vals.push(patch.endedAt);
    }
    if (patch.addDurationMs !== undefined) {
      sets.push('duration_ms = duration_ms + ?');
      vals.push(Math.round(patch.addDurationMs));
    }
    if (patch.sandbox !== undefined) {
      sets.push('sandbox = ?');
      vals.push(patch.sandbox);
    }
    if (patch.ownerPid !== undefined) {
      sets.push('owner_pid = ?');
      vals.push(patch.ownerPid);
    }
    if (patch.workspace !== undefined) {
      sets.push('workspace = ?');
      vals.push(patch.workspace);
    }
    if (!sets.length) return;
    await this.#write(() => this.db.prepare(`UPDATE runs SET ${sets.join(', ')} WHERE id = ?`).run(...vals, id));
  }

  /**
   * Takes the run's lease: the one right to drive (append steps to) a run. Granted when nobody holds it,
   * when the caller already does, when the holder's lease expired (no heartbeat for its TTL), or when the
   * holder is a process of this host that no longer exists (killed). The grant is one conditional UPDATE
   * that names the holder it replaces (compare-and-set), so two processes racing for a run cannot both win.
   * Source: issue 11 (run lease; reused by remote workers, MCP sessions and interventions).
   * @param runId the run; `owner` a unique id of the driving session; `host` this machine's name;
   *   `pid` this process; `ttlMs` how long the lease lasts without a heartbeat.
   * @returns `{ok: true}` (with the holder taken over from, if any) or `{ok: false, holder}`.
   * @throws Error when the run does not exist.
   */
  async acquireRunLease(
    runId: string,
    owner: { owner: string; host: string; pid: number },
    ttlMs: number,
  ): Promise<RunLeaseResult> {
    return this.#write(() => this.#acquireRunLease(runId, owner, ttlMs));
  }

  #acquireRunLease(runId: string, owner: { owner: string; host: string; pid: number }, ttlMs: number): RunLeaseResult {
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = new Date();
      const row = this.db
        .prepare('SELECT lease_owner, lease_host, owner_pid, heartbeat_at, lease_expires_at FROM runs WHERE id = ?')
        .get(runId) as Row | undefined;
      if (!row) throw new Error(`no run '${runId}' in ${this.file}`);
      const holder: RunLeaseHolder | undefined = row.lease_owner
        ? {
            owner: row.lease_owner as string,
            host: (row.lease_host as string | null) ?? '',
            pid: (row.owner_pid as number | null) ?? null,
            heartbeatAt: (row.heartbeat_at as string | null) ?? null,
            expiresAt: (row.lease_expires_at as string | null) ?? new Date(0).toISOString(),
          }
        : undefined;
      const free =
        !holder ||
        holder.owner === owner.owner ||
        Date.parse(holder.expiresAt) < now.getTime() ||
        (holder.host === owner.host && holder.pid != null && !pidAlive(holder.pid));
      if (!free) return { ok: false, holder: holder! };
      const expires = new Date(now.getTime() + ttlMs).toISOString();
      const r = this.db
        .prepare(
          `UPDATE runs SET lease_owner = ?, lease_host = ?, owner_pid = ?, heartbeat_at = ?, lease_expires_at = ?
        WHERE id = ? AND lease_owner IS ?`,
        )
        .run(owner.owner, owner.host, owner.pid, now.toISOString(), expires, runId, holder?.owner ?? null);
      if (r.changes === 1) {
        return holder && holder.owner !== owner.owner ? { ok: true, tookOverFrom: holder } : { ok: true };
      }
      // Someone else changed the lease between the read and the update: look again.
    }
    const row = this.db
      .prepare('SELECT lease_owner, lease_host, owner_pid, heartbeat_at, lease_expires_at FROM runs WHERE id = ?')
      .get(runId) as Row;
    return {
      ok: false,
      holder: {
        owner: String(row.lease_owner),
        host: String(row.lease_host ?? ''),
        pid: (row.owner_pid as number | null) ?? null,
        heartbeatAt: (row.heartbeat_at as string | null) ?? null,
        expiresAt: String(row.lease_expires_at ?? ''),
      },
    };
  }

  /**
   * Extends the caller's lease (heartbeat).
   * @returns false when the caller no longer holds it (taken over after it expired): the caller must stop.
   */
  async renewRunLease(runId: string, owner: string, ttlMs: number): Promise<boolean> {
    const r = await this.#write(() => {
      const now = new Date();
      return this.db
        .prepare('UPDATE runs SET heartbeat_at = ?, lease_expires_at = ? WHERE id = ? AND lease_owner = ?')
        .run(now.toISOString(), new Date(now.getTime() + ttlMs).toISOString(), runId, owner);
    });
    return r.changes === 1;
  }

  /** Gives the lease up (only when the caller holds it). */
  async releaseRunLease(runId: string, owner: string): Promise<void> {
    await this.#write(() =>
      this.db
        .prepare(
          'UPDATE runs SET lease_owner = NULL, lease_host = NULL, lease_expires_at = NULL, owner_pid = NULL WHERE id = ? AND lease_owner = ?',
        )
        .run(runId, owner),
    );
  }

  /** The current lease holder of a run, if any (expired leases included: see `expiresAt`). */
  async setDataChecksums(id: string, checksums: Record<string, string>): Promise<void> {
    await this.#write(() =>
      this.db.prepare('UPDATE runs SET data_checksums = ? WHERE id = ?').run(JSON.stringify(checksums), id),
    );
  }

  /**
   * The run folder's blob directory, when the run has a run folder on disk that lies inside the folder of this store
   * file (by real path, no links, owned by this user: issue 36, a workspace path set in the store is never trusted);
   * otherwise long texts stay in the row.
   */
  #blobDir(runId: string): string | undefined {
    if (this.file === ':memory:') return undefined;
    const ws = (
      this.db.prepare('SELECT workspace FROM runs WHERE id = ?').get(runId) as { workspace?: string } | undefined
    )?.workspace;
    if (!ws) return undefined;
    const f = trustedRunFolder({ id: runId, storedWorkspace: ws }, dirname(this.file));
    return f.runDir ? join(f.runDir, 'blobs') : undefined;
  }

  /** Moves one long text into the run's blob folder; returns the marker stored instead. */
  #externalize(dir: string | undefined, text: string): string {
    if (!dir || text.length <= BLOB_MIN_CHARS) return text;
    const sha = createHash('sha256').update(text).digest('hex');
    const file = join(dir, sha);
    if (!existsSync(file)) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(file + '.partial', text);
      renameSync(file + '.partial', file);
    }
    return `${BLOB_MARK}${sha}:${text.length}`;
  }

  #internalize(dir: string | undefined, text: string): string {
    if (!text.startsWith(BLOB_MARK)) return text;
    const [sha, len] = text.slice(BLOB_MARK.length).split(':');
    try {
      if (!dir) throw new Error('no run folder');
      return readFileSync(join(dir, sha!), 'utf8');
    } catch {
      return `[${len} characters stored in the run folder as blobs/${sha}; that file is missing]`;
    }
  }

  /** A step with its long texts moved out (for the row) or put back (for readers). */
  #mapTexts(step: StepRecord, f: (t: string) => string): StepRecord {
    const big = (t: string | null | undefined) =>
      typeof t === 'string' && (t.length > BLOB_MIN_CHARS || t.startsWith(BLOB_MARK));
    if (
      !step.toolCalls.some((c) => big(c.argumentsText) || big(c.observation)) &&
      !(step.assistant.tool_calls ?? []).some((c) => big(c.function.arguments))
    ) {
      return step;
    }
    return {
      ...step,
      assistant: step.assistant.tool_calls
        ? {
            ...step.assistant,
            tool_calls: step.assistant.tool_calls.map((c) => ({
              ...c,
              function: { ...c.function, arguments: f(c.function.arguments) },
            })),
          }
        : step.assistant,
      toolCalls: step.toolCalls.map((c) => ({
        ...c,
        argumentsText: f(c.argumentsText),
        observation: f(c.observation),
      })),
    };
  }

  #readStep(r: Row): StepRecord {
    const s = stepFromRow(r);
    const dirs = new Map<string, string | undefined>();
    const dirOf = (id: string) => (dirs.has(id) ? dirs.get(id) : (dirs.set(id, this.#blobDir(id)), dirs.get(id)));
    return this.#mapTexts(s, (t) => this.#internalize(t.startsWith(BLOB_MARK) ? dirOf(s.runId) : undefined, t));
  }

  async commitStep(step: StepRecord, effects: StepEffects = {}): Promise<void> {
    const dir = this.#blobDir(step.runId);
    step = this.#mapTexts(step, (t) => this.#externalize(dir, t));
    await this.#write(
      this.db.transaction(() => {
        this.db
          .prepare(
            `INSERT INTO steps (run_id, idx, started_at, ended_at, latency_ms, tool_ms, assistant, tool_calls,
        extra_messages, tokens_input, tokens_output, tokens_cached, cost_usd, finish_reason, tokens_known, seq)
        VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,(SELECT COALESCE(MAX(seq), 0) + 1 FROM steps))`,
          )
          .run(
            step.runId,
            step.index,
            step.startedAt,
            step.endedAt,
            step.latencyMs,
            step.toolMs,
            JSON.stringify(step.assistant),
            JSON.stringify(step.toolCalls),
            JSON.stringify(step.extraMessages),
            step.usage?.input ?? 0,
            step.usage?.output ?? 0,
            step.usage?.cached ?? 0,
            step.costUsd,
            step.finishReason,
            step.usage ? 1 : 0,
          );
        this.db.prepare('UPDATE runs SET heartbeat_at = ? WHERE id = ?').run(step.endedAt, step.runId);
        this.db
          .prepare(
            `UPDATE runs SET steps = steps + 1, tokens_input = tokens_input + ?, tokens_output = tokens_output + ?,
        tokens_cached = tokens_cached + ?, cost_usd = CASE WHEN ? IS NULL THEN cost_usd ELSE COALESCE(cost_usd, 0) + ? END
        WHERE id = ?`,
          )
          .run(
            step.usage?.input ?? 0,
            step.usage?.output ?? 0,
            step.usage?.cached ?? 0,
            step.costUsd,
            step.costUsd,
            step.runId,
          );
        this.#applyEffects(step.runId, step.index, effects);
      }),
    );
  }

  async applyEffects(runId: string, stepIndex: number, effects: StepEffects): Promise<void> {
    await this.#write(() => this.#applyEffects(runId, stepIndex, effects));
  }

  #applyEffects(runId: string, stepIndex: number, effects: StepEffects): void {
    const tx = this.db.transaction(() => {
      for (const a of effects.answers ?? []) {
        this.db
          .prepare(
            `INSERT INTO answers (run_id, query_id, answer, raw, step_idx) VALUES (?,?,?,?,?)
          ON CONFLICT (run_id, query_id) DO UPDATE SET answer = excluded.answer, raw = excluded.raw, step_idx = excluded.step_idx`,
          )
          .run(runId, a.queryId, JSON.stringify(a.answer), a.raw, stepIndex);
      }
      if (effects.notes) {
        this.db.prepare('DELETE FROM notes WHERE run_id = ?').run(runId);
        const ins = this.db.prepare('INSERT INTO notes (run_id, idx, content) VALUES (?,?,?)');
        effects.notes.forEach((n, i) => ins.run(runId, i, n));
      }
      if (effects.savedCode !== undefined) {
        this.db
          .prepare('INSERT OR REPLACE INTO saved_code (run_id, step_idx, code) VALUES (?,?,?)')
          .run(runId, stepIndex, effects.savedCode);
      }
      for (const c of effects.cells ?? []) this.#insertCell(c);
      if (effects.extra) {
        this.db.prepare('UPDATE runs SET state = ? WHERE id = ?').run(JSON.stringify(effects.extra), runId);
      }
    });
    tx();
  }

  async insertCell(c: KernelCellRecord): Promise<void> {
    await this.#write(() => this.#insertCell(c));
  }

  #insertCell(c: KernelCellRecord): void {
    this.db
      .prepare(
        `INSERT INTO kernel_cells (run_id, seq, step_idx, code, status, stdout, stderr, result, error, tables, duration_ms, replay, restarted)
      VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`,
      )
      .run(
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
      );
    const fig = this.db.prepare('INSERT INTO cell_figures (run_id, cell_seq, idx, png) VALUES (?,?,?,?)');
    c.figures.forEach((png, i) => fig.run(c.runId, c.seq, i, Buffer.from(png, 'base64')));
  }

  async addEvent(runId: string, kind: string, message: string): Promise<void> {
    await this.#write(() =>
      this.db
        .prepare('INSERT INTO run_events (run_id, at, kind, message) VALUES (?,?,?,?)')
        .run(runId, nowIso(), kind, message),
    );
  }

  /**
   * Records a human step only while `leaseOwner` holds the run's lease: one INSERT ... SELECT whose WHERE is the lease
   * check, so a process that lost the lease cannot write (issue 20).
   * @returns the record, or undefined when the lease is not held by `leaseOwner`. @throws Error for an unknown run.
   */
  async addIntervention(i: NewIntervention, leaseOwner: string): Promise<InterventionRecord | undefined> {
    return this.#write(() => this.#addIntervention(i, leaseOwner));
  }

  #addIntervention(i: NewIntervention, leaseOwner: string): InterventionRecord | undefined {
    const run = this.db.prepare('SELECT steps FROM runs WHERE id = ?').get(i.runId) as { steps: number } | undefined;
    if (!run) throw new Error(`run ${i.runId} not found in ${this.file}`);
    const at = i.at ?? nowIso();
    const before = i.beforeStep ?? run.steps;
    const row = this.db
      .prepare(
        `INSERT INTO interventions (run_id, seq, before_step, at, who, kind, text)
      SELECT id, (SELECT COALESCE(MAX(seq), 0) + 1 FROM interventions WHERE run_id = ?), ?, ?, ?, ?, ? FROM runs WHERE id = ? AND lease_owner = ?
      RETURNING seq`,
      )
      .get(i.runId, before, at, i.who, i.kind, i.text, i.runId, leaseOwner) as { seq: number } | undefined;
    return row
      ? { runId: i.runId, seq: row.seq, beforeStep: before, at, who: i.who, kind: i.kind, text: i.text }
      : undefined;
  }

  // ------------------------------------------------------------------ read API (UI, evaluation)

  /**
   * The steps of a run without their texts (observations, reasoning, full arguments): what a list of steps shows.
   * JSON is read by SQLite, so opening a long trajectory does not parse every observation in the host, on a worker
   * thread for a store file (see {@link OffThreadReader}; issue 23).
   * @returns one {@link StepSummaryRecord} per step, in order.
   */
  /**
   * (The message is cut as bytes: SQLite's `substr` of a text stops at a NUL character, issue 39; 1,600 bytes hold the
   * first 400 characters, cut in JavaScript.)
   */
  async getStepSummaries(runId: string): Promise<StepSummaryRecord[]> {
    const rows = await this.#readOffThread(
      `SELECT idx, seq, started_at, latency_ms, tool_ms, tokens_input, tokens_output, tokens_known,
        substr(CAST(json_extract(assistant, '$.content') AS BLOB), 1, 1600) AS content,
        (SELECT json_group_array(json_extract(value, '$.name')) FROM json_each(steps.tool_calls)) AS names,
        (SELECT count(*) FROM json_each(steps.tool_calls) WHERE json_extract(value, '$.isError')) AS errors,
        json_extract(tool_calls, '$[0].argumentsText') AS first_args
      FROM steps WHERE run_id = ? ORDER BY idx`,
      [runId],
    );
    return rows.map((r) => ({
      runId,
      index: r.idx as number,
      startedAt: r.started_at as string,
      latencyMs: r.latency_ms as number,
      toolMs: r.tool_ms as number,
      usage: r.tokens_known === 0 ? null : { input: r.tokens_input as number, output: r.tokens_output as number },
      content: summaryText(r.content),
      toolNames: JSON.parse((r.names as string | null) ?? '[]') as string[],
      anyError: (r.errors as number) > 0,
      firstArguments: typeof r.first_args === 'string' && !r.first_args.startsWith(BLOB_MARK) ? r.first_args : null,
      seq: r.seq as number,
    }));
  }

  /**
   * Steps of a run whose message, reasoning, tool names, arguments or observations contain every word of `query`
   * (case-insensitive for ASCII), searched in the store rather than in loaded steps, on a worker thread for a store
   * file (see {@link OffThreadReader}). Texts kept as blobs (over 1 MiB) are not searched.
   * @returns matching step indices in order (all steps for an empty query).
   */
  async searchSteps(runId: string, query: string): Promise<number[]> {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    const cond = words.map(() => 'instr(lower(assistant || char(10) || tool_calls), ?) > 0').join(' AND ');
    const rows = await this.#readOffThread(
      `SELECT idx FROM steps WHERE run_id = ?${cond ? ` AND ${cond}` : ''} ORDER BY idx`,
      [runId, ...words.map((w) => JSON.stringify(w).slice(1, -1))],
    );
    return rows.map((r) => r.idx as number);
  }

  /** Reads that scan step texts, for a store file: off this thread (in-thread when the worker cannot answer). */
  #reader: OffThreadReader | undefined;

  async #readOffThread(sql: string, params: unknown[]): Promise<Row[]> {
    if (this.file !== ':memory:' && this.db.open) {
      this.#reader ??= new OffThreadReader(this.file);
      const rows = await this.#reader.all(sql, params);
      if (rows) return rows;
    }
    return this.db.prepare(sql).all(...params) as Row[];
  }

  async getSteps(runId: string, fromIndex = 0): Promise<StepRecord[]> {
    return (
      this.db.prepare('SELECT * FROM steps WHERE run_id = ? AND idx >= ? ORDER BY idx').all(runId, fromIndex) as Row[]
    ).map((r) => this.#readStep(r));
  }

  async getStep(runId: string, index: number): Promise<StepRecord | undefined> {
    const r = this.db.prepare('SELECT * FROM steps WHERE run_id = ? AND idx = ?').get(runId, index) as Row | undefined;
    return r ? this.#readStep(r) : undefined;
  }

  async getAnswers(runId: string): Promise<AnswerRecord[]> {
    return (this.db.prepare('SELECT * FROM answers WHERE run_id = ? ORDER BY rowid').all(runId) as Row[]).map(
      answerFromRow,
    );
  }

  async getAnswersOf(runIds: string[]): Promise<Map<string, AnswerRecord[]>> {
    const out = new Map<string, AnswerRecord[]>(runIds.map((id) => [id, []]));
    for (let i = 0; i < runIds.length; i += 500) {
      const ids = runIds.slice(i, i + 500);
      const rows = this.db
        .prepare(`SELECT * FROM answers WHERE run_id IN (${ids.map(() => '?').join(',')}) ORDER BY rowid`)
        .all(...ids) as Row[];
      for (const r of rows) out.get(r.run_id as string)!.push(answerFromRow(r));
    }
    return out;
  }

  async getToolErrorCountsOf(runIds: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (let i = 0; i < runIds.length; i += 500) {
      const ids = runIds.slice(i, i + 500);
      const rows = this.db
        .prepare(
          `SELECT run_id, count(*) AS n FROM steps, json_each(steps.tool_calls) AS c
        WHERE run_id IN (${ids.map(() => '?').join(',')}) AND json_extract(c.value, '$.isError') GROUP BY run_id`,
        )
        .all(...ids) as Row[];
      for (const r of rows) out.set(r.run_id as string, r.n as number);
    }
    return out;
  }

  async getNotes(runId: string): Promise<string[]> {
    return (
      this.db.prepare('SELECT content FROM notes WHERE run_id = ? ORDER BY idx').all(runId) as { content: string }[]
    ).map((r) => r.content);
  }

  async getSavedCode(runId: string): Promise<string | null> {
    const r = this.db
      .prepare('SELECT code FROM saved_code WHERE run_id = ? ORDER BY step_idx DESC LIMIT 1')
      .get(runId) as { code: string } | undefined;
    return r?.code ?? null;
  }

  async getExtraState(runId: string): Promise<Record<string, unknown>> {
    const r = this.db.prepare('SELECT state FROM runs WHERE id = ?').get(runId) as { state: string | null } | undefined;
    return r?.state ? (JSON.parse(r.state) as Record<string, unknown>) : {};
  }

  async getCells(runId: string, opts: CellQuery = {}): Promise<KernelCellRecord[]> {
    // sinceSeq: only cells after it (live views append without re-reading every figure of the run).
    const rows = this.db
      .prepare(
        `SELECT * FROM kernel_cells WHERE run_id = ? AND seq > ? ${opts.includeReplays === false ? 'AND replay = 0' : ''} ORDER BY seq`,
      )
      .all(runId, opts.sinceSeq ?? -1) as Row[];
    const figs = this.db.prepare('SELECT png FROM cell_figures WHERE run_id = ? AND cell_seq = ? ORDER BY idx');
    const counts = new Map(
      (
        this.db
          .prepare('SELECT cell_seq, COUNT(*) AS n FROM cell_figures WHERE run_id = ? GROUP BY cell_seq')
          .all(runId) as { cell_seq: number; n: number }[]
      ).map((r) => [r.cell_seq, r.n]),
    );
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
      figures:
        opts.withFigures === false || !counts.get(r.seq as number)
          ? []
          : (figs.all(runId, r.seq) as { png: Buffer }[]).map((f) => f.png.toString('base64')),
      figureCount: counts.get(r.seq as number) ?? 0,
      durationMs: r.duration_ms as number,
      replay: r.replay === 1,
      restarted: r.restarted === 1,
    }));
  }

  async nextCellSeq(runId: string): Promise<number> {
    return (
      this.db.prepare('SELECT COALESCE(MAX(seq), -1) + 1 AS s FROM kernel_cells WHERE run_id = ?').get(runId) as {
        s: number;
      }
    ).s;
  }

  async getEventsOf(runIds: string[], kind?: string): Promise<Map<string, RunEventRecord[]>> {
    const out = new Map<string, RunEventRecord[]>(runIds.map((id) => [id, []]));
    for (let i = 0; i < runIds.length; i += 500) {
      const ids = runIds.slice(i, i + 500);
      const rows = this.db
        .prepare(
          `SELECT * FROM run_events WHERE run_id IN (${ids.map(() => '?').join(',')})${kind !== undefined ? ' AND kind = ?' : ''} ORDER BY rowid`,
        )
        .all(...ids, ...(kind !== undefined ? [kind] : [])) as Row[];
      for (const r of rows) {
        out.get(r.run_id as string)!.push({
          runId: r.run_id as string,
          at: r.at as string,
          kind: r.kind as string,
          message: r.message as string,
        });
      }
    }
    return out;
  }

  async getEvents(runId: string): Promise<RunEventRecord[]> {
    return (this.db.prepare('SELECT * FROM run_events WHERE run_id = ? ORDER BY rowid').all(runId) as Row[]).map(
      (r) => ({
        runId,
        at: r.at as string,
        kind: r.kind as string,
        message: r.message as string,
      }),
    );
  }

  /**
   * Calls `onStep` for every step committed after now (by any process writing this file), polling
   * every `intervalMs` (default 250). Returns the subscription: call it to stop; `poll()` reads at once (the read is
   * synchronous, so a poll and the timer never overlap).
   */
  subscribeSteps(onStep: (s: StepRecord) => void, opts: SubscribeStepsOptions = {}): StepSubscription {
    let last =
      opts.afterSeq ??
      (opts.fromStart ? 0 : (this.db.prepare('SELECT COALESCE(MAX(seq), 0) AS s FROM steps').get() as { s: number }).s);
    const q = opts.runId
      ? // `+run_id`: walk the seq index from the watermark (new steps only). On run_id SQLite would read every step of
        // the run — past its texts, for seq is stored after them — at each poll: ~130 ms per 100 ms poll on a
        // 10,000-step run of 20 KB observations (issue 23).
        this.db.prepare('SELECT * FROM steps WHERE seq > ? AND +run_id = ? ORDER BY seq')
      : this.db.prepare('SELECT * FROM steps WHERE seq > ? ORDER BY seq');
    const tick = () => {
      // A store closed under a subscriber (the window switched stores) ends the subscription instead of throwing.
      if (!this.db.open) return stop();
      const rows = (opts.runId ? q.all(last, opts.runId) : q.all(last)) as Row[];
      for (const r of rows) {
        last = Math.max(last, r.seq as number);
        onStep(this.#readStep(r));
      }
    };
    let stopped = false;
    const timer = setInterval(tick, opts.intervalMs ?? 250);
    timer.unref?.();
    const stop = () => {
      stopped = true;
      clearInterval(timer);
      this.#subscriptions.delete(stop);
    };
    this.#subscriptions.add(stop);
    return Object.assign(stop, {
      poll: () => {
        if (!stopped) tick();
      },
    });
  }

  /** Unsubscribe functions of live {@link subscribeSteps} subscriptions; {@link closeSync} ends them all. */
  readonly #subscriptions = new Set<() => void>();

  /**
   * Deletes a run and everything recorded with it (steps, answers, notes, code, cells, figures, events, scores:
   * the schema cascades). The run folder on disk is the caller's to remove.
   * @returns whether a run was deleted.
   */
  async deleteRun(id: string): Promise<boolean> {
    return this.#write(
      this.db.transaction(() => {
        const deleted = this.db.prepare('DELETE FROM runs WHERE id = ?').run(id).changes > 0;
        // contents no run refers to any more (content-addressed artefacts of the deleted run)
        if (deleted) {
          this.db
            .prepare(
              'DELETE FROM artefact_blobs WHERE NOT EXISTS (SELECT 1 FROM run_artefacts a WHERE a.sha256 = artefact_blobs.sha256)',
            )
            .run();
        }
        return deleted;
      }),
    );
  }

  async close(): Promise<void> {
    this.closeSync();
  }

  /** Closes the database at once (idempotent); for exit handlers that cannot wait. */
  closeSync(): void {
    for (const stop of [...this.#subscriptions]) stop();
    this.#reader?.close();
    if (this.db.open) this.db.close();
    this.#release();
  }
}

/**
 * Opens (creating if needed) a run store file and applies pending migrations.
 * @param file path of the SQLite file, or `:memory:`.
 * @param extraMigrations migrations from other areas appended after the built-in ones (ids must be unique).
 * @throws LoupeInputError naming the file when it cannot be opened.
 */
export function openStore(file: string, extraMigrations: Migration[] = []): RunStore {
  return new SqliteRunStore(file, extraMigrations);
}

/**
 * The better-sqlite3 handle of a SQLite run store, for the SQLite implementations of stores of higher layers
 * (`src/core/annotations/store.ts`) that keep their tables in the same file. Nothing else may use it (ESLint).
 * @throws Error naming the engine when the store is not SQLite.
 */
export function sqliteHandleOf(store: RunStore): Database.Database {
  if (store instanceof SqliteRunStore) return SqliteRunStore.handleOf(store);
  throw new Error(`the ${store.engine} run store at ${store.location} has no SQLite handle`);
}
