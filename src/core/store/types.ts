/**
 * The run store's interface: every reader and writer of runs, steps, cells, judgements and scores goes through it,
 * asynchronously, so that a second engine (the PostgreSQL team store) can be added without touching callers.
 * The embedded default is {@link SqliteRunStore} (`run-store.ts`, better-sqlite3). Engine-specific stores of higher
 * layers (annotations) are built from a run store by their own factory (`annotationStoreOf`), never from raw SQL
 * in callers. Source: issue 12 "Store interface".
 */
import type {
  AnswerRecord,
  InterventionRecord,
  JudgementRecord,
  JudgementUse,
  KernelCellRecord,
  RunEventRecord,
  RunRecord,
  RunStatus,
  StepRecord,
  StoredScore,
} from './records.ts';

/** What a step changed besides itself; written in the same transaction as the step. */
export interface StepEffects {
  /** Answers added or updated by this step. */
  answers?: AnswerRecord[];
  /** The full notes list after the step, if it changed. */
  notes?: string[];
  /** Code saved by this step (`save_code`). */
  savedCode?: string;
  /** Kernel cells executed by this step, in order. */
  cells?: KernelCellRecord[];
  /** Tool-set state after the step (RunState.extra). */
  extra?: Record<string, unknown>;
}

/** What a caller gives to record an intervention (the store numbers it and takes `beforeStep` from the run). */
export interface NewIntervention {
  runId: string;
  who: string;
  kind: 'hint' | 'correction';
  text: string;
  /** ISO time (default now). */
  at?: string;
  /** Position in the conversation (default: the run's committed step count, i.e. before the next step). Forks copy their parent's. */
  beforeStep?: number;
}

/** Which runs {@link RunStore.listRuns} returns. */
export interface RunFilter {
  suite?: string;
  blockId?: string;
  status?: RunStatus;
  /** Only the units of this sweep (issue 27). */
  sweepId?: string;
  limit?: number;
}

/** Options of {@link RunStore.subscribeSteps}. */
export interface SubscribeStepsOptions {
  runId?: string;
  intervalMs?: number;
  fromStart?: boolean;
  afterSeq?: number;
}

/**
 * A live {@link RunStore.subscribeSteps}: call it to stop. `poll()` reads the steps committed since the last read now
 * instead of at the next tick — the same read and watermark as the timer's, so a step is never delivered twice nor
 * skipped, in commit order; a `poll()` while a read is under way reads once more after it. Safe after stop or close.
 */
export interface StepSubscription {
  (): void;
  poll(): void;
}

/** A step without its texts (see {@link RunStore.getStepSummaries}). */
export interface StepSummaryRecord {
  runId: string;
  index: number;
  startedAt: string;
  latencyMs: number;
  toolMs: number;
  /** Null when the step's token use is unknown (an external MCP client, issue 24). */
  usage: { input: number; output: number } | null;
  /** The assistant message, cut to 400 characters. */
  content: string;
  toolNames: string[];
  anyError: boolean;
  /** The first tool call's arguments (null when none, or kept as a blob). */
  firstArguments: string | null;
  /** The step's place in the store's global commit order (pass the largest to `subscribeSteps` as `afterSeq`). */
  seq: number;
}

/** Who holds a run's lease. */
export interface RunLeaseHolder {
  /** Unique per driving session (e.g. `<host>:<pid>:<uuid>`). */
  owner: string;
  host: string;
  pid: number | null;
  /** Last heartbeat (ISO time). */
  heartbeatAt: string | null;
  /** When the lease lapses without a heartbeat (ISO time). */
  expiresAt: string;
}

/** Outcome of {@link RunStore.acquireRunLease}. */
export type RunLeaseResult = { ok: true; tookOverFrom?: RunLeaseHolder } | { ok: false; holder: RunLeaseHolder };

/** The fields a caller gives to create a run. */
export type NewRun = Omit<
  RunRecord,
  | 'createdAt'
  | 'steps'
  | 'tokens'
  | 'costUsd'
  | 'durationMs'
  | 'startedAt'
  | 'endedAt'
  | 'statusReason'
  | 'status'
  | 'storedWorkspace'
> & {
  /** The run's workspace folder on this machine (recorded; read back as {@link RunRecord.storedWorkspace}). */
  workspace: string;
  status?: RunStatus;
  /** False when the run's token use cannot be known (an external MCP client): its tokens read as null (issue 24). Default true. */
  tokensKnown?: boolean;
};

/** Status / timing changes of a run. */
export interface RunPatch {
  status?: RunStatus;
  statusReason?: string | null;
  startedAt?: string;
  endedAt?: string | null;
  addDurationMs?: number;
  sandbox?: string;
  ownerPid?: number | null;
  /** Where the run's workspace is on the machine now driving it (a queued unit taken by a worker, issue 27). */
  workspace?: string;
}

/** Options of {@link RunStore.getCells}. */
export interface CellQuery {
  /** false drops state-rebuild replays (default true). */
  includeReplays?: boolean;
  /** false leaves `figures` empty (their count stays in `figureCount`); default true. */
  withFigures?: boolean;
  /** Only cells after this sequence number (live views append). */
  sinceSeq?: number;
}

/** Judgements kept with the runs (table `judgements`). */
export interface JudgementRows {
  /** The judgement under a cache key, if any. */
  get(key: string): Promise<JudgementRecord | undefined>;
  /** Inserts or replaces (same key) a judgement; the first run / item it was used for is kept. */
  put(j: JudgementRecord, use?: JudgementUse): Promise<void>;
  /** Pending (human) judgements, oldest first, optionally of one task. */
  listPending(task?: string): Promise<JudgementRecord[]>;
  /** Judgements recorded for a run, oldest first. */
  listForRun(runId: string): Promise<JudgementRecord[]>;
}

/** Scores kept with the runs (table `scores`). */
export interface ScoreRows {
  /** Saves a score, replacing the one of the same run × judge × options. */
  save(s: StoredScore): Promise<void>;
  /** Stored scores, newest first; `runId` restricts to one run. */
  list(runId?: string): Promise<StoredScore[]>;
}

/** One file of a run kept in the store (issue 26 "Artefacts in the store"): its path and the content it held. */
export interface RunArtefact {
  runId: string;
  /** Relative to the run workspace, '/' separated (e.g. `report.md`, `figures/fig-3-1.png`). */
  path: string;
  /** Hex sha256 of the bytes: the key of the content, shared by every run and path holding the same bytes. */
  sha256: string;
  /** e.g. `text/markdown`, `image/png` (from the name the content was first stored under). */
  mediaType: string;
  /** Bytes. */
  size: number;
  /** ISO time the file was (last) stored for this run. */
  capturedAt: string;
}

/** Run artefacts kept with the runs, content-addressed (tables `artefact_blobs` and `run_artefacts`, migration 16). */
export interface ArtefactRows {
  /**
   * Stores files of a run in one transaction: each content once (by sha256), and run + path → sha256 (replacing the
   * path's previous content). Bounds are the caller's (`captureRunArtefacts`, `artefacts.ts`).
   * @throws Error when the run does not exist.
   */
  put(runId: string, files: ReadonlyArray<{ path: string; bytes: Uint8Array; mediaType: string }>): Promise<void>;
  /** The stored files of a run, by path. */
  list(runId: string): Promise<RunArtefact[]>;
  /** One stored file of a run with its bytes, or undefined. */
  get(runId: string, path: string): Promise<{ artefact: RunArtefact; bytes: Buffer } | undefined>;
}

/**
 * A run store. Writers: the agent loop (one process may drive several runs). Readers: CLI, VS Code UI, evaluation,
 * possibly in another process. Every method is asynchronous; `subscribeSteps` polls and calls back.
 */
export interface RunStore {
  /** Engine name (`sqlite`). */
  readonly engine: string;
  /** Where the store lives, for messages: a file path (SQLite) or a URL without password. */
  readonly location: string;
  /** Highest applied migration id. */
  schemaVersion(): Promise<number>;

  /** Inserts a new run (status `pending` unless given) and returns it as stored. */
  createRun(r: NewRun): Promise<RunRecord>;
  /** Updates status / timings of a run. */
  updateRun(id: string, patch: RunPatch): Promise<void>;
  /** Records the data checksums of a run (file path relative to the workspace → sha256). */
  setDataChecksums(id: string, checksums: Record<string, string>): Promise<void>;
  /**
   * Takes the run's lease (the one right to append steps): granted when free, already held by the caller, expired,
   * or held by a dead process of this host; compare-and-set, so two racing processes cannot both win.
   * @throws Error when the run does not exist.
   */
  acquireRunLease(
    runId: string,
    owner: { owner: string; host: string; pid: number },
    ttlMs: number,
  ): Promise<RunLeaseResult>;
  /** Heartbeat; false when the caller no longer holds the lease (it must stop). */
  renewRunLease(runId: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up (only when the caller holds it). */
  releaseRunLease(runId: string, owner: string): Promise<void>;
  /** The current lease holder, if any (expired leases included). */
  getRunLease(runId: string): Promise<RunLeaseHolder | undefined>;
  /**
   * Commits one step and its effects atomically and bumps the run's counters.
   * @throws if a step with the same index already exists (never duplicates).
   */
  commitStep(step: StepRecord, effects?: StepEffects): Promise<void>;
  /** Writes effects outside a step (the reference agent, imports, kernel replays), atomically. */
  applyEffects(runId: string, stepIndex: number, effects: StepEffects): Promise<void>;
  /** Records one kernel cell (with figures). */
  insertCell(c: KernelCellRecord): Promise<void>;
  /** Appends a run event (resume, kernel rebuilt, warnings). */
  addEvent(runId: string, kind: string, message: string): Promise<void>;
  /**
   * Records a human step (issue 20) atomically, only if `leaseOwner` holds the run's lease (compare-and-set with the
   * lease column), numbered after the run's last intervention.
   * @returns the stored record, or undefined when `leaseOwner` does not hold the lease (nothing recorded).
   * @throws Error when the run does not exist.
   */
  addIntervention(i: NewIntervention, leaseOwner: string): Promise<InterventionRecord | undefined>;
  /** A run's interventions in the order added. */
  getInterventions(runId: string): Promise<InterventionRecord[]>;
  /** Interventions of several runs in one read (run id → records; [] when none). */
  getInterventionsOf(runIds: string[]): Promise<Map<string, InterventionRecord[]>>;

  /** Runs, newest first. */
  listRuns(filter?: RunFilter): Promise<RunRecord[]>;
  /** One run, or undefined when the id is unknown. */
  getRun(id: string): Promise<RunRecord | undefined>;
  /** The steps of a run without their texts, in order (what a list of steps shows). */
  getStepSummaries(runId: string): Promise<StepSummaryRecord[]>;
  /** Step indices whose texts contain every word of `query` (case-insensitive ASCII), in order. */
  searchSteps(runId: string, query: string): Promise<number[]>;
  /** Steps of a run in order, from step index `fromIndex` (default 0). */
  getSteps(runId: string, fromIndex?: number): Promise<StepRecord[]>;
  /** One step of a run, or undefined. */
  getStep(runId: string, index: number): Promise<StepRecord | undefined>;
  /** Recorded answers, in first-recorded order. */
  getAnswers(runId: string): Promise<AnswerRecord[]>;
  /** Recorded answers of several runs in one read (run id → answers; runs without answers map to []). */
  getAnswersOf(runIds: string[]): Promise<Map<string, AnswerRecord[]>>;
  /** Tool calls that returned an error, per run, counted in the store in one read (run id → count; runs with none are absent). */
  getToolErrorCountsOf(runIds: string[]): Promise<Map<string, number>>;
  /** The notes list after the last committed step. */
  getNotes(runId: string): Promise<string[]>;
  /** The last saved code, or null. */
  getSavedCode(runId: string): Promise<string | null>;
  /** Tool-set state (RunState.extra) after the last committed step. */
  getExtraState(runId: string): Promise<Record<string, unknown>>;
  /** Kernel cells in execution order. */
  getCells(runId: string, opts?: CellQuery): Promise<KernelCellRecord[]>;
  /** Next kernel cell sequence number of a run. */
  nextCellSeq(runId: string): Promise<number>;
  /** Run events, oldest first. */
  getEvents(runId: string): Promise<RunEventRecord[]>;
  /** Run events of several runs in one read, optionally of one kind (run id → events, oldest first; [] when none). */
  getEventsOf(runIds: string[], kind?: string): Promise<Map<string, RunEventRecord[]>>;
  /**
   * Calls `onStep` for every step committed after now (by any process writing the store), polling every
   * `intervalMs` (default 250). `fromStart` delivers every stored step first; `afterSeq` every step committed after
   * the one of that `seq` (a {@link StepSummaryRecord}'s), so a reader that listed the summaries misses none and
   * reads none twice. Returns the subscription: call it to stop; its `poll()` reads at once (a writer in this
   * process has just committed, see {@link StepSubscription}).
   */
  subscribeSteps(onStep: (s: StepRecord) => void, opts?: SubscribeStepsOptions): StepSubscription;
  /** Deletes a run and everything recorded with it; the run folder on disk is the caller's. Returns whether one was deleted. */
  deleteRun(id: string): Promise<boolean>;

  /** Judgements (cache of every judge's decisions, pending human items). */
  readonly judgements: JudgementRows;
  /** Saved scores. */
  readonly scores: ScoreRows;
  /** Files of runs kept in the store (reports, figures, agent outputs) for readers without the run folder. */
  readonly artefacts: ArtefactRows;

  /** Closes the store (idempotent). */
  close(): Promise<void>;
}
