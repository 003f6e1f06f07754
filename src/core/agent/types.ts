/**
 * Shared types of the agent runtime: tools, tool sets, chat messages, steps, runs and live events.
 * Other benchmarks' tool sets (BLADE, DDR, AnalystBench) implement {@link ToolSet} and plug into the
 * loop (`loop.ts`) without touching it. The store (`src/core/store`) persists {@link RunRecord},
 * {@link StepRecord}, {@link AnswerRecord} and {@link KernelCellRecord}.
 * Source: issue 5; spec §2.3 (LongTA loop/tools), §1.3.3 (BLADE ReAct), §3.3 (DDR loop), §5.1.
 */
import type { ExecuteResult } from '../kernel/python-kernel.ts';
import type { KernelLimits } from '../kernel/limits.ts';
import type { Logger } from '../util/log.ts';

/** The subset of JSON Schema the registry validates (type, properties, required, items, enum, anyOf). */
export interface JsonSchema {
  type?:
    | 'object'
    | 'string'
    | 'number'
    | 'integer'
    | 'boolean'
    | 'array'
    | 'null'
    | Array<'object' | 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'null'>;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean;
  items?: JsonSchema;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  default?: unknown;
}

/** What a tool returns. `observation` is what the model sees (cut head+tail by the loop if too long). */
export interface ToolResult {
  observation: string;
  /** Structured payload for UIs / exports (e.g. kernel outputs). Not sent to the model. */
  data?: unknown;
  /** The call failed (bad arguments, tool error). The observation says what was wrong. */
  isError?: boolean;
  /** This call ends the run with status `finished` (e.g. LongDA `final_answer`). */
  finish?: boolean;
  /**
   * The model calls this tool call made (also when it then failed): the loop records them with the call and adds them
   * to the step's tokens and cost, so the run's totals and its token/cost budget count them.
   */
  modelUse?: ToolModelUse;
}

/** A numeric answer: a number or a list of numbers (LongDA `answer` tool). */
export type { AnswerValue } from '../store/records.ts';
import type { ToolModelUse } from '../store/records.ts';
import type { RunStore, StepEffects } from '../store/types.ts';

/** Minimal kernel surface the tools use (matches `PythonKernel` in src/core/kernel). */
export interface KernelLike {
  execute(code: string, opts?: { timeoutMs?: number }): Promise<KernelExecuteResult>;
  interrupt(): void;
  restart(): Promise<void>;
  close(): Promise<void>;
  /** `limits`: what the kernel enforces and how (issue 37), recorded with the run when present. */
  readonly info: { python: string; sandbox: string; pid: number | undefined; limits?: KernelLimits };
}

/** Result of one kernel cell: the kernel's own `ExecuteResult` (src/core/kernel). */
export type KernelExecuteResult = ExecuteResult;

/**
 * The typed per-run states of benchmarks, by benchmark: each benchmark that keeps one declares it in its folder by
 * declaration merging (LongDA: `longda`, its answers, notes and saved code; `benchmarks/longda/run-state.ts`), so this
 * generic layer names none (issue 40). Its tool set's {@link ToolSet.runState} creates, restores and persists it.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface BenchmarkRunStates {}

/**
 * Mutable per-run state that tools read and write. The loop keeps it in memory and persists every
 * change in the same SQLite transaction as the step that made it, so a resumed run sees exactly the
 * state after its last committed step.
 */
export interface RunState {
  /** Free-form per-tool-set state (JSON-serialisable), persisted with each step. */
  extra: Record<string, unknown>;
  /** A benchmark's typed per-run state ({@link BenchmarkRunStates}), kept by its tool set's {@link ToolSet.runState}. */
  benchmark: Partial<BenchmarkRunStates>;
}

/**
 * How a tool set keeps a typed per-run state that lives in rows of the run store (LongDA's answers, notes, saved
 * code) rather than in `extra`: the loop creates it for a new run, rebuilds it on resume, and after each step writes
 * what changed in the step's transaction.
 */
export interface ToolSetRunState {
  /** Puts a fresh state into `state.benchmark` (a new run). */
  init(state: RunState): void;
  /** Rebuilds it from the store after the run's committed steps (resume). @returns what was restored, for the resume event (`12 answers restored`), or ''. */
  restore(state: RunState, store: RunStore, runId: string): Promise<string>;
  /** A copy of the state to compare with after the step (JSON-comparable). */
  snapshot(state: RunState): unknown;
  /** The store rows the step changed since `before` (a {@link ToolSetRunState.snapshot}). */
  effects(
    before: unknown,
    state: RunState,
    runId: string,
    stepIndex: number,
  ): Pick<StepEffects, 'answers' | 'notes' | 'savedCode'>;
}

/** Everything a tool may touch while it runs. */
export interface ToolContext {
  runId: string;
  /** 0-based index of the current step. */
  stepIndex: number;
  /** The block's workspace: the kernel's working directory; prompt paths are relative to it. */
  workspace: string;
  /** The block being run (shape owned by the tool set). */
  block: unknown;
  /** The task text given to the model (first user message). */
  taskPrompt: string;
  state: RunState;
  /** The run's kernel, started lazily on first use. Kernel cells executed through {@link ToolContext.execute} are recorded. */
  kernel(): Promise<KernelLike>;
  /** Runs code in the kernel and records the cell with this step (for replay on resume). */
  execute(code: string, opts?: { timeoutMs?: number }): Promise<KernelExecuteResult>;
  signal: AbortSignal;
  log: Logger;
  /** The run's sandbox mode: tools that run code or queries outside the kernel (DDR's SQL tool) contain themselves the same way. Default `bubblewrap`. */
  sandbox?: 'bubblewrap' | 'off';
}

/** One tool. `parameters` is a JSON schema for the arguments object; the registry validates against it. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: JsonSchema;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
}

/**
 * A path of the run workspace that a tool set's host-side code (Loupe's own code, outside the sandbox) touches: the
 * report a tool writes, the folder figures are saved in. Issue 36: every such access goes through the contained file
 * API (`util/contained.ts`), and the containment test (`test/unit/security/host-paths.test.ts`) plants a link, a
 * FIFO, a socket and a hard link at each declared path and drives the tools, scoring, review, export and artefact
 * capture of the run.
 */
export interface HostPath {
  /** The path relative to the workspace as the tool set names it (`report.md`, `figures/fig-<step>-<n>.png`). */
  path: string;
  /** A concrete instance of `path` for step 0 (`figures/fig-0-1.png`): where the test plants. */
  example: string;
  /** A file or a folder. */
  kind: 'file' | 'dir';
  /** The tools whose host-side code reads, writes or checks it (names of {@link ToolSet.tools}). */
  tools: string[];
  /** What the host does there. */
  access: Array<'read' | 'write' | 'exists'>;
}

/** A benchmark's tool set: the tools, prompts and termination rule the loop uses for it. */
export interface ToolSet<Block = unknown> {
  /** e.g. `longda`, `blade-react`, `ddr-sql`. Recorded with each run. */
  id: string;
  tools: ToolDefinition[];
  systemPrompt: string;
  /** The task text for one block (first user message). */
  buildBlockPrompt(block: Block): string;
  /** Ends the run when the assistant message alone says so (e.g. DDR `FINISH:`). */
  isTerminal?(assistant: AssistantMessage): boolean;
  /**
   * Check {@link ToolSet.isTerminal} before running the message's tool calls, which are then not run
   * (DDR: the termination check comes first, spec §3.3 step 2). Default: only tool-less messages end.
   */
  terminalBeforeTools?: boolean;
  /** Message sent when the model answers with neither a tool call nor a terminal message. */
  noToolCallMessage?: string;
  defaultMaxSteps: number;
  /**
   * Every workspace path the tools' host-side code touches (issue 36), or `[]` when they touch none (their notes,
   * answers, saved code and submissions are rows of the store; what runs in the kernel or the SQL sandbox is contained
   * there). Required: a tool set cannot be added without saying it, and the containment test is driven from it.
   */
  hostPaths: readonly HostPath[];
  /**
   * Starts work the tools will need while the model writes its first step (issue 23: LongDA's documentation index
   * build), like the run's kernel. The agent loop calls it once when the run starts, with the run's abort signal, and
   * calls the returned function when the loop ends, however it ends. It must not throw or leave a rejected promise:
   * a failure is reported by the tool call that needs the work.
   */
  prepare?(o: { signal: AbortSignal }): () => void;
  /** The tool set's typed per-run state kept in rows of the store (LongDA's answers, notes, saved code), or absent when it keeps none. */
  runState?: ToolSetRunState;
}

export * from '../store/records.ts';
import type { AssistantMessage, FinalRunStatus, InterventionRecord, StepRecord } from '../store/records.ts';

// ---------------------------------------------------------------- live events

export type AgentEvent =
  | { type: 'step-start'; runId: string; step: number }
  | { type: 'model-delta'; runId: string; step: number; content?: string; reasoning?: string }
  | { type: 'tool-call'; runId: string; step: number; call: { id: string; name: string; argumentsText: string } }
  | {
      type: 'observation';
      runId: string;
      step: number;
      callId: string;
      name: string;
      observation: string;
      isError: boolean;
    }
  | { type: 'step-end'; runId: string; step: number; record: StepRecord }
  | { type: 'retry'; runId: string; step: number; attempt: number; delayMs: number; reason: string }
  | { type: 'paused'; runId: string; step: number }
  | { type: 'resumed'; runId: string; step: number }
  | { type: 'intervention'; runId: string; step: number; record: InterventionRecord }
  | { type: 'log'; runId: string; kind: string; message: string }
  | { type: 'run-end'; runId: string; status: FinalRunStatus; reason: string; steps: number };
