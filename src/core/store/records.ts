/**
 * The records of a run as the run store keeps them: run, step (one model call and its tool calls), answer,
 * kernel cell, run event, and the chat messages a step holds. Below the agent, evaluation and UI layers:
 * the store and every reader of runs import them from here. Source: issue 5 (run store); issue 12 (layering).
 */
import type { ExecuteResult as KernelExecuteResult, KernelTable } from '../kernel/python-kernel.ts';

/** A recorded answer: one number or a list of numbers (LongDA answer structures). */
export type AnswerValue = number | number[];

// ---------------------------------------------------------------- chat messages (OpenAI shape)

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface SystemMessage {
  role: 'system';
  content: string;
}
export interface UserMessage {
  role: 'user';
  content: string;
}
export interface AssistantMessage {
  role: 'assistant';
  content: string | null;
  tool_calls?: ToolCall[];
  /** Reasoning text if the server returned one (not sent back). */
  reasoning?: string;
}
export interface ToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}
export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** Token usage of one model call. */
export interface Usage {
  input: number;
  output: number;
  cached: number;
}

// ---------------------------------------------------------------- records

export type RunStatus = 'pending' | 'running' | 'finished' | 'budget_exhausted' | 'failed' | 'cancelled';
/** Terminal statuses reported by `loupe run --json`. */
export type FinalRunStatus = 'finished' | 'budget_exhausted' | 'failed' | 'cancelled';

/** One tool call of a step, with its observation. */
export interface ToolCallRecord {
  id: string;
  name: string;
  /** Arguments as the model sent them (may be malformed JSON). */
  argumentsText: string;
  observation: string;
  isError: boolean;
  /** Observation was cut head+tail. */
  truncated: boolean;
  durationMs: number;
  data?: unknown;
  /**
   * Model calls the tool itself made (LongDA `find_variables` with `findVariablesDecompose=run-model` asks the run's
   * model to decompose the question): their tokens and cost, already included in the step's `usage` and `costUsd`.
   * Absent when the tool called no model.
   */
  modelUse?: ToolModelUse;
}

/** The model calls one tool call made: how many, their summed tokens, and their cost in USD at the run's prices (null: no price set). */
export interface ToolModelUse {
  calls: number;
  usage: Usage;
  costUsd: number | null;
}

/** One step = one model call plus the tool calls it made. Committed before the next model call. */
export interface StepRecord {
  runId: string;
  index: number;
  startedAt: string;
  endedAt: string;
  /** Model call latency (ms). */
  latencyMs: number;
  /** Time spent in tools (ms). */
  toolMs: number;
  assistant: AssistantMessage;
  toolCalls: ToolCallRecord[];
  /** Messages added after the tool results (e.g. a nudge when no tool was called). */
  extraMessages: ChatMessage[];
  /**
   * Token use of the step: its model call plus the model calls its tools made (each tool call's share in
   * {@link ToolCallRecord.modelUse}); null when unknown (an external MCP client, issue 24).
   */
  usage: Usage | null;
  /** Cost in USD of the same calls at the run's prices; null when no price was set. */
  costUsd: number | null;
  finishReason: string | null;
}

/**
 * What a run was made with, as recorded (no API key): the model configuration, the budget, and where its
 * suite and block come from. `reopenRun` (src/core/runs/reopen.ts) reads the suite fields back.
 */
export interface RunParams {
  // model configuration (LlmConfig without the key)
  model?: string;
  baseUrl?: string;
  temperature?: number;
  maxTokens?: number;
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  reasoningEffort?: string;
  stream?: boolean;
  idleTimeoutMs?: number;
  timeoutMs?: number;
  maxRetries?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  pricePerMillionInput?: number;
  pricePerMillionOutput?: number;
  pricePerMillionCachedInput?: number;
  // budget
  maxSteps?: number;
  maxWallMs?: number;
  maxTotalTokens?: number;
  maxCostUsd?: number;
  maxObservationChars?: number;
  /** 1-based repeat number. */
  repeat?: number;
  /** Absolute root the suite was loaded from (folder, or DDR database file). */
  suiteRoot?: string;
  /** The benchmark kind (same as the run's `suite`). */
  suiteKind?: string;
  /** Interpreter the kernel was configured with. */
  python?: string;
  /** Named tool-set options as given (`--tool-option k=v`); see each benchmark's `toolOptions`. */
  toolSetOptions?: Record<string, string>;
  /**
   * Hash of what the agent is told that does not depend on the block: the tool set's system prompt and tool
   * specifications (`promptHash(system, '', tools)`). The run profile (`playerOf`) uses it; the run's own `promptHash`
   * also covers the block's task prompt, so it differs per block and cannot name a profile across a benchmark.
   * Absent on runs recorded before issue 48's acceptance run found this.
   */
  agentPromptHash?: string;
  /** DDR: how the final report was taken (older runs recorded it here). */
  finishRule?: 'paper' | 'code';
  /** Loader options a suite needs to be reopened (DDR `entities`, `database`, `metadataDir`, `checklist`). */
  loadOptions?: { entities?: string; database?: string; metadataDir?: string; checklist?: string };
  /**
   * A fork (issue 20): the run it was forked from and the fork point, the number of the parent's steps it replayed
   * (1-based: `step` 3 replays steps 1–3 without model calls and continues from step 4).
   */
  forkOf?: { runId: string; step: number };
  /**
   * A run driven by an external MCP client (issue 24): who it is, how it was connected, whether it declared a sandbox
   * of its own (`contained`; false: the run is uncontained), and the name of the `finish` tool variant when the block's
   * tool set ends on a message (DDR).
   */
  /** A human baseline (issue 46): the expert, the idle threshold of its time on task, and on the team store the database role. */
  human?: { annotator: string; idleMinutes: number; dbRole?: string };
  mcp?: {
    client: string;
    clientVersion: string;
    transport: 'stdio' | 'http';
    contained: boolean;
    finishTool?: string;
    /** What the client sent when `client`/`clientVersion` were sanitised (issue 38). */ clientSent?: {
      name: string;
      version: string;
    };
  };
  /**
   * Where the text the doc tools showed came from (issue 23), for runs whose tool set reads documentation: the PDF
   * extractor (`pdfium`, or `pdfjs` before issue 23, when runs recorded nothing) and the index's extraction version.
   */
  docsText?: { pdfExtractor: string; extractorVersion: number };
  /** A run imported from an Inspect AI log (issue 45): the log, task, eval and sample it came from (`InspectProvenance`, `runs/inspect/import.ts`). */
  inspect?: Record<string, unknown>;
}

export interface RunRecord {
  id: string;
  suite: string;
  blockId: string;
  agent: string;
  model: string | null;
  params: RunParams;
  promptHash: string;
  toolSet: string;
  /** file path (relative to the suite root) → sha256 */
  dataChecksums: Record<string, string>;
  loupeVersion: string;
  sandbox: string;
  storedWorkspace: string;
  status: RunStatus;
  statusReason: string | null;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  /** Sum of active time over all sessions (resume adds to it). */
  durationMs: number;
  steps: number;
  /** Summed token use of the run's model calls; null when unknown (an external MCP client does not report it, issue 24). */
  tokens: Usage | null;
  costUsd: number | null;
  /** pid of the process driving the run while it is `running` (null otherwise). */
  ownerPid?: number | null;
  /** Last step commit (ISO time) of the current session. */
  heartbeatAt?: string | null;
  /** The sweep this run is a unit of (`loupe run --queue`, issue 27); null for a run started directly. */
  sweepId?: string | null;
}

export interface AnswerRecord {
  runId: string;
  queryId: string;
  answer: AnswerValue;
  raw: string;
  stepIndex: number;
}

export interface KernelCellRecord {
  runId: string;
  stepIndex: number;
  /** Order within the run. */
  seq: number;
  code: string;
  status: KernelExecuteResult['status'];
  stdout: string;
  stderr: string;
  result: string | null;
  error: KernelExecuteResult['error'] | null;
  /** DataFrame results (`html` is the agent's raw markup: evidence, never rendered; see `KernelTable`). */
  tables: KernelTable[];
  /** base64 PNGs (empty when read without figures) */
  figures: string[];
  /** How many figures the cell has (set by reads, also when read without figures). */
  figureCount?: number;
  durationMs: number;
  /** true if this execution was a replay on resume (state rebuild). */
  replay: boolean;
  /** The kernel restarted during this cell: the state built by earlier cells is gone. */
  restarted?: boolean;
}

/**
 * A human step (issue 20): a hint or a correction an analyst added to a run while it was paused, sent to the model as a
 * user message before the step `beforeStep` (0-based: the number of committed steps when it was added). Never edited.
 */
export interface InterventionRecord {
  runId: string;
  /** 1, 2, ... per run, in the order added. */
  seq: number;
  /** 0-based index of the step whose model request first includes it. */
  beforeStep: number;
  /** ISO time it was recorded. */
  at: string;
  /** Who added it (the analyst's name as the surface knows it, e.g. the OS user). */
  who: string;
  kind: 'hint' | 'correction';
  text: string;
}

/** A run log line (resume, kernel restart, warnings) shown with the run. */
export interface RunEventRecord {
  runId: string;
  at: string;
  kind: string;
  message: string;
}

/**
 * One stored judgement as the store keeps it: the task's input and verdict are JSON values here; the typed view
 * (`Judgement` of `src/core/eval/judges/types.ts`) narrows `task`, `input` and `verdict`. Source: issue 8.
 */
export interface JudgementRecord {
  /** Cache key: hash of judge id, task and prompt (LLM) or input (human). */
  key: string;
  task: string;
  judgeId: string;
  inputHash: string;
  promptHash: string | null;
  input: unknown;
  raw: string | null;
  verdict: unknown;
  status: 'done' | 'pending' | 'error';
  error?: string;
  /** ISO time. */
  at: string;
  annotator?: string;
}

/** Where a judgement is used (stored with it). */
export interface JudgementUse {
  runId?: string;
  /** Free-form pointer to the scored item (e.g. `entity 10502319 / item 3`). */
  itemRef?: string;
}

/** One stored score of a run (table `scores`). */
export interface StoredScore {
  runId: string;
  benchmark: string;
  judgeId: string;
  /** Scoring options as echoed (snake_case names); canonically ordered for the key. */
  options: Record<string, unknown>;
  /** Headline metrics (fractions in [0, 1] unless named otherwise). */
  summary: Record<string, unknown>;
  /** The full score object (`RunScore`). */
  detail: unknown;
  pending: number;
  /** ISO time. */
  scoredAt: string;
}
