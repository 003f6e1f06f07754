/**
 * The ReAct loop with native function calling. Each step is one model call; every tool call in it
 * is executed and its observation returned. The loop ends on a finishing tool (`ToolResult.finish`),
 * on the tool set's termination rule (`ToolSet.isTerminal`), on a budget (steps, wall clock, tokens,
 * cost), on cancel, or on a model failure — with the status saying which. Each step (with the
 * answers, notes, code and kernel cells it produced) is committed in one transaction before the next
 * model call; `resume: true` continues after the last committed step (kernel state is rebuilt by
 * re-executing the recorded cells, and the run records that it did).
 * Source: issue 5 "Agent loop"; spec §2.3 (LongTA: 100 steps, final_answer, 20,000-char truncation), §3.3.
 */
import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { nullLogger, type Logger } from '../util/log.ts';
import type { RunLeaseHolder, RunStore, StepEffects } from '../store/run-store.ts';
import type { InterventionRecord } from '../store/records.ts';
import { LoupeInputError } from '../util/errors.ts';
import { describeKernelLimits } from '../kernel/limits.ts';
import { LlmError, type CompleteOptions, type LlmResponse, type LlmToolSpec } from './llm.ts';
import { ToolRegistry } from './registry.ts';
import type {
  AgentEvent,
  AssistantMessage,
  ChatMessage,
  FinalRunStatus,
  KernelCellRecord,
  KernelExecuteResult,
  KernelLike,
  RunRecord,
  RunState,
  StepRecord,
  ToolCallRecord,
  ToolContext,
  ToolSet,
  Usage,
} from './types.ts';

/** Anything that answers a conversation: {@link LlmClient}, the reference agent, a test double. */
export interface ModelClient {
  readonly model: string;
  /**
   * The "model" is an external client driving the run through tool calls (an MCP client, issue 24): its token use is
   * unknown (steps record null, not 0) and it cannot be asked for extra completions (DDR's separate insight calls).
   */
  readonly external?: boolean;
  complete(messages: ChatMessage[], tools: LlmToolSpec[], opts?: CompleteOptions): Promise<LlmResponse>;
}

export interface Budget {
  /** Default: the tool set's `defaultMaxSteps`. */
  maxSteps?: number;
  /** Wall clock across sessions (ms). */
  maxWallMs?: number;
  /** input + output tokens. */
  maxTotalTokens?: number;
  maxCostUsd?: number;
}

/** What an analyst gives to intervene in a paused run (issue 20). */
export interface InterventionInput {
  /** Who adds it (recorded). */
  who: string;
  /** Default `hint`. */
  kind?: 'hint' | 'correction';
  text: string;
}

/** Longest intervention text accepted (characters). */
export const MAX_INTERVENTION_CHARS = 20_000;

/**
 * Checks an intervention before anything is recorded.
 * @returns the input with `kind` filled in and the text trimmed.
 * @throws LoupeInputError (subject `intervention`) for an empty or over-long text, a missing author or an unknown kind.
 */
export function validateIntervention(i: InterventionInput): Required<InterventionInput> {
  const text = (i.text ?? '').trim();
  if (!text) throw new LoupeInputError('intervention', 'the message is empty');
  if (text.length > MAX_INTERVENTION_CHARS) {
    throw new LoupeInputError(
      'intervention',
      `the message has ${text.length} characters; at most ${MAX_INTERVENTION_CHARS} are accepted`,
    );
  }
  if (!i.who?.trim()) throw new LoupeInputError('intervention', 'who adds it is not known');
  const kind = i.kind ?? 'hint';
  if (kind !== 'hint' && kind !== 'correction') {
    throw new LoupeInputError('intervention', `kind must be hint or correction, got '${String(kind)}'`);
  }
  return { who: i.who.trim(), kind, text };
}

/**
 * The user message a human step becomes in the model's conversation (issue 20): the analyst's text, introduced so the
 * model knows it comes from the person supervising the run.
 */
export function interventionMessage(i: Pick<InterventionRecord, 'kind' | 'text'>): ChatMessage {
  return {
    role: 'user',
    content: `${i.kind === 'correction' ? 'Correction' : 'Hint'} from the analyst supervising this run: ${i.text}`,
  };
}

/** Pause / resume / stop for live UIs (p / r / s keys). Pausing takes effect between steps. */
export class RunControl {
  readonly abort = new AbortController();
  private paused = false;
  private waiters: (() => void)[] = [];
  private parked = false;
  private parkWaiters: (() => void)[] = [];
  private intervener: ((i: Required<InterventionInput>) => Promise<InterventionRecord>) | undefined;

  /** True while the loop waits at a step boundary because the run is paused (an intervention can be added now). */
  get isParked(): boolean {
    return this.parked;
  }
  /** Called by the loop when it starts / stops waiting at a pause. */
  setParked(v: boolean): void {
    this.parked = v;
    if (v) for (const w of this.parkWaiters.splice(0)) w();
  }
  /** Called by the loop that drives the run (and holds its lease); undefined when the run ends. */
  setIntervener(fn: ((i: Required<InterventionInput>) => Promise<InterventionRecord>) | undefined): void {
    this.intervener = fn;
    if (!fn) for (const w of this.parkWaiters.splice(0)) w();
  }
  /**
   * Adds a human step to the paused run this control drives (issue 20): waits until the loop has stopped at the step
   * boundary (a pause takes effect after the current step), then the loop records it under its run lease and sends it
   * with the next model request.
   * @returns the stored record.
   * @throws LoupeInputError when the run is not paused, not being driven (ended), stopped, or the input is invalid;
   *   RunLeaseError when the loop lost the run's lease.
   */
  async intervene(i: InterventionInput): Promise<InterventionRecord> {
    const v = validateIntervention(i);
    if (!this.paused) {
      throw new LoupeInputError('intervention', 'pause the run first (interventions are added between steps)');
    }
    if (!this.parked && this.intervener && !this.abort.signal.aborted) {
      await new Promise<void>((r) => this.parkWaiters.push(r));
    }
    if (this.abort.signal.aborted) throw new LoupeInputError('intervention', 'the run was stopped');
    if (!this.intervener || !this.paused) {
      throw new LoupeInputError('intervention', 'the run is no longer paused in this process');
    }
    return this.intervener(v);
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }
  get isPaused(): boolean {
    return this.paused;
  }
  pause(): void {
    this.paused = true;
  }
  resume(): void {
    this.paused = false;
    for (const w of this.waiters.splice(0)) w();
  }
  /** Stops the run: status `cancelled`. */
  stop(reason = 'stopped by user'): void {
    this.abort.abort(reason);
    this.resume();
    for (const w of this.parkWaiters.splice(0)) w();
  }
  /** Resolves when not paused (or when stopped). */
  waitIfPaused(): Promise<void> {
    if (!this.paused || this.abort.signal.aborted) return Promise.resolve();
    return new Promise((r) => this.waiters.push(r));
  }
}

export interface AgentRunOptions {
  store: RunStore;
  /** The run (already created with `store.createRun`). */
  runId: string;
  model: ModelClient;
  toolSet: ToolSet;
  block: unknown;
  /** Kernel working directory / workspace root. */
  workspace: string;
  /** Starts the run's kernel (called lazily, at most once unless it fails). */
  startKernel?: () => Promise<KernelLike>;
  budget?: Budget;
  /** Observations longer than this are cut head+tail (default 20,000 chars, LongTA `truncate_content`). */
  maxObservationChars?: number;
  /** Continue after the last committed step. */
  resume?: boolean;
  control?: RunControl;
  onEvent?: (e: AgentEvent) => void;
  log?: Logger;
  /** Consecutive replies without a tool call before the run fails (default 5). */
  maxNoToolCallReplies?: number;
  /** Sandbox mode for tools that contain themselves (DDR's SQL tool); default `bubblewrap`. */
  sandbox?: 'bubblewrap' | 'off';
  /**
   * A fork (issue 20): the parent's recorded steps to replay first, in a fresh run and kernel, without model calls —
   * their assistant messages are taken as recorded and their tool calls executed again (cells re-run, answers and
   * notes re-recorded). A replayed step that ends the run does not end the fork. If a cell that ran without error in
   * the parent now errors, the fork stops (`failed`) naming the step and the cell.
   */
  replay?: { parentRunId: string; steps: StepRecord[]; cells: KernelCellRecord[] };
}

export interface AgentRunResult {
  runId: string;
  status: FinalRunStatus;
  reason: string;
  steps: number;
}

/** sha256 hex of the system prompt + task prompt + tool specs (recorded with each run). */
export function promptHash(systemPrompt: string, taskPrompt: string, tools: LlmToolSpec[]): string {
  return createHash('sha256')
    .update(JSON.stringify([systemPrompt, taskPrompt, tools]))
    .digest('hex');
}

/**
 * Cuts a long text to head + marker + tail.
 * @param max total budget in chars; the marker says how many characters were removed.
 */
export function truncateObservation(text: string, max = 20_000): { text: string; truncated: boolean } {
  if (text.length <= max) return { text, truncated: false };
  const head = Math.floor(max / 2);
  const tail = max - head;
  const removed = text.length - head - tail;
  return {
    text: `${text.slice(0, head)}\n…[observation truncated: ${removed} characters removed]…\n${text.slice(text.length - tail)}`,
    truncated: true,
  };
}

const DEFAULT_NUDGE =
  'Your reply contained no tool call. Continue by calling one of the tools; call final_answer when you are done.';

/**
 * Rebuilds the conversation from committed steps and the run's human steps (issue 20): an intervention is a user
 * message placed before the step `beforeStep`; those at or after the end come last, in the order added.
 * @param interventions the run's interventions (any order; sorted by seq here).
 */
export function messagesFromSteps(
  systemPrompt: string,
  taskPrompt: string,
  steps: StepRecord[],
  interventions: readonly InterventionRecord[] = [],
): ChatMessage[] {
  const msgs: ChatMessage[] = [
    { role: 'system', content: systemPrompt },
    { role: 'user', content: taskPrompt },
  ];
  const human = [...interventions].sort((a, b) => a.seq - b.seq);
  for (const s of steps) {
    for (const i of human) if (i.beforeStep === s.index) msgs.push(interventionMessage(i));
    const { reasoning: _r, ...assistant } = s.assistant;
    msgs.push(assistant);
    for (const tc of s.toolCalls) msgs.push({ role: 'tool', tool_call_id: tc.id, content: tc.observation });
    msgs.push(...s.extraMessages);
  }
  const end = steps.length ? steps[steps.length - 1]!.index + 1 : 0;
  for (const i of human) if (i.beforeStep >= end) msgs.push(interventionMessage(i));
  return msgs;
}

/**
 * Runs (or resumes) an agent on one block until it finishes, exhausts a budget, fails or is cancelled.
 * @returns the final status and reason; the run record in the store holds the same.
 * Never throws for model or tool failures (they end the run as `failed` with the reason); throws only
 * when the run does not exist in the store.
 */
/** How long a run's lease lasts without a heartbeat (ms); heartbeats come every third of it. */
export const RUN_LEASE_TTL_MS = 30_000;

/**
 * Thrown by a model client whose wait for the next step ran out of the run's budget (an MCP client idle past the wall
 * clock limit, issue 24): the run ends `budget_exhausted` with this message as its reason.
 */
export class BudgetExhaustedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BudgetExhaustedError';
  }
}

/** Thrown when another live process drives the run (nothing was recorded). */
export class RunLeaseError extends Error {
  readonly holder: RunLeaseHolder;
  constructor(runId: string, holder: RunLeaseHolder) {
    super(
      `run ${runId} is being driven by another process: ${holder.owner} (host ${holder.host}${holder.pid != null ? `, pid ${holder.pid}` : ''}, last heartbeat ${holder.heartbeatAt ?? 'never'}, lease until ${holder.expiresAt}). Stop that process first, or wait until its lease lapses.`,
    );
    this.name = 'RunLeaseError';
    this.holder = holder;
  }
}

export async function runAgent(o: AgentRunOptions): Promise<AgentRunResult> {
  const { store, runId } = o;
  const log = o.log ?? nullLogger;
  const emit = (e: AgentEvent) => {
    try {
      o.onEvent?.(e);
    } catch (err) {
      log.warn(`event handler failed: ${(err as Error).message}`);
    }
  };
  const run = await store.getRun(runId);
  if (!run) throw new Error(`run ${runId} not found in ${store.location}`);
  const control = o.control ?? new RunControl();
  const signal = control.signal;
  // ---- the run lease: one driver per run, taken before anything is recorded (issue 11)
  const leaseOwner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const lease = await store.acquireRunLease(
    runId,
    { owner: leaseOwner, host: hostname(), pid: process.pid },
    RUN_LEASE_TTL_MS,
  );
  if (!lease.ok) throw new RunLeaseError(runId, lease.holder);
  if (lease.tookOverFrom) {
    await store.addEvent(
      runId,
      'lease',
      `took the run over from ${lease.tookOverFrom.owner} (its lease had lapsed or its process is gone)`,
    );
  }
  const heartbeat = setInterval(() => {
    void store.renewRunLease(runId, leaseOwner, RUN_LEASE_TTL_MS).then(
      (held) => {
        if (!held && !signal.aborted) control.stop('the run lease was lost (another process took the run over)');
      },
      () => undefined,
    );
  }, RUN_LEASE_TTL_MS / 3);
  heartbeat.unref();
  try {
    return await driveRun(o, run, control, signal, log, emit, leaseOwner);
  } finally {
    clearInterval(heartbeat);
    // The store may be away for a moment (a database restart): try again for a few seconds, else the lease lapses by itself.
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        await store.releaseRunLease(runId, leaseOwner);
        break;
      } catch {
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }
}

async function driveRun(
  o: AgentRunOptions,
  run: RunRecord,
  control: RunControl,
  signal: AbortSignal,
  log: Logger,
  emit: (e: AgentEvent) => void,
  leaseOwner: string,
): Promise<AgentRunResult> {
  const { store, runId, toolSet } = o;
  const registry = new ToolRegistry(toolSet.tools);
  const specs = registry.specs();
  const taskPrompt = toolSet.buildBlockPrompt(o.block);
  const maxSteps = o.budget?.maxSteps ?? toolSet.defaultMaxSteps;
  const maxObs = o.maxObservationChars ?? 20_000;
  const maxNoTool = o.maxNoToolCallReplies ?? 5;
  const sessionStart = performance.now();
  const priorDurationMs = run.durationMs;

  // ---- state (fresh or rebuilt from the store)
  const prior = o.resume ? await store.getSteps(runId) : [];
  if (!o.resume && prior.length === 0 && (await store.getSteps(runId)).length > 0) {
    throw new Error(`run ${runId} already has steps: pass resume`);
  }
  // Human steps (issue 20): those within or right after the committed steps are part of the conversation now; a fork's
  // copies of its parent's, placed before steps still to be replayed, are sent when their step comes.
  const human = await store.getInterventions(runId);
  const messages = messagesFromSteps(
    toolSet.systemPrompt,
    taskPrompt,
    prior,
    human.filter((i) => i.beforeStep <= prior.length),
  );
  const pendingHuman = human.filter((i) => i.beforeStep > prior.length).sort((a, b) => a.seq - b.seq);
  const replaySteps = o.replay && !o.resume ? o.replay.steps : [];
  const state: RunState = { extra: {}, benchmark: {} };
  toolSet.runState?.init(state);
  let tokens = { input: run.tokens?.input ?? 0, output: run.tokens?.output ?? 0 };
  let cost = run.costUsd ?? 0;
  if (o.resume) {
    const restored = toolSet.runState ? await toolSet.runState.restore(state, store, runId) : '';
    state.extra = await store.getExtraState(runId);
    const hash = promptHash(toolSet.systemPrompt, taskPrompt, specs);
    if (hash !== run.promptHash) {
      await store.addEvent(
        runId,
        'warning',
        'prompt hash differs from the original run (block or tool set changed since)',
      );
    }
    const msg = `resumed after step ${prior.length} (${prior.length} committed steps${restored ? `, ${restored}` : ''})`;
    await store.addEvent(runId, 'resume', msg);
    emit({ type: 'log', runId, kind: 'resume', message: msg });
  }
  let stepIndex = prior.length;
  await store.updateRun(runId, {
    status: 'running',
    statusReason: null,
    startedAt: new Date().toISOString(),
    endedAt: null,
    ownerPid: process.pid,
  });

  // ---- kernel (lazy); on resume its state is rebuilt by replaying recorded cells
  let kernel: KernelLike | undefined;
  let kernelStarting: Promise<KernelLike> | undefined;
  let cellSeq = await store.nextCellSeq(runId);
  let pendingCells: KernelCellRecord[] = [];
  const cellRecord = (code: string, r: KernelExecuteResult, replay: boolean): KernelCellRecord => ({
    runId,
    stepIndex,
    seq: cellSeq++,
    code,
    status: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    result: r.result ?? null,
    error: r.error ?? null,
    tables: r.tables ?? [],
    figures: (r.figures ?? []).map((f) => f.png),
    durationMs: r.durationMs,
    replay,
    restarted: !!r.restarted,
  });
  const getKernel = async (): Promise<KernelLike> => {
    if (kernel) return kernel;
    if (!o.startKernel) throw new Error('this run has no Python kernel');
    kernelStarting ??= (async () => {
      const k = await o.startKernel!();
      // Which limits hold for this run's kernel and how: per process or for all its processes together (issue 37).
      const limits = k.info.limits;
      if (limits) {
        await store.addEvent(runId, 'kernel-limits', `${describeKernelLimits(limits)} ${JSON.stringify(limits)}`);
      }
      // Replay the successful cells since the kernel last lost its state (a crash/restart wiped what came before).
      const all = o.resume ? await store.getCells(runId, { includeReplays: false, withFigures: false }) : [];
      const lastLoss = all.reduce((m, c, i) => (c.restarted ? i : m), -1);
      const recorded = all.slice(lastLoss + 1).filter((c) => c.status === 'ok');
      if (recorded.length) {
        const t0 = performance.now();
        let failed = 0;
        const replays: KernelCellRecord[] = [];
        for (const c of recorded) {
          const r = await k.execute(c.code);
          if (r.status !== 'ok') failed++;
          replays.push({ ...cellRecord(c.code, r, true), stepIndex: c.stepIndex });
        }
        await store.applyEffects(runId, stepIndex, { cells: replays });
        const msg = `kernel state rebuilt by re-executing ${recorded.length} recorded cells in ${Math.round(performance.now() - t0)} ms${failed ? ` (${failed} failed on replay)` : ''}`;
        await store.addEvent(runId, 'kernel-replay', msg);
        emit({ type: 'log', runId, kind: 'kernel-replay', message: msg });
      }
      kernel = k;
      return k;
    })();
    try {
      return await kernelStarting;
    } catch (e) {
      kernelStarting = undefined;
      throw e;
    }
  };
  // Start the kernel now, while the model thinks about its first step (issue 23: start-up paid once per run and
  // overlapped with model latency, not on the first python call). A failure here is retried by that call.
  if (o.startKernel && o.toolSet.tools.some((t) => t.name === 'python')) void getKernel().catch(() => undefined);
  // Likewise the tool set's own preparations (issue 23: the documentation index build), released when the loop ends.
  const releasePrepared = toolSet.prepare?.({ signal });
  const onAbortInterrupt = () => kernel?.interrupt();
  signal.addEventListener('abort', onAbortInterrupt);

  const ctx: ToolContext = {
    runId,
    stepIndex,
    workspace: o.workspace,
    block: o.block,
    taskPrompt,
    state,
    kernel: getKernel,
    execute: async (code, opts) => {
      const k = await getKernel();
      const r = await k.execute(code, opts);
      pendingCells.push(cellRecord(code, r, false));
      if (r.restarted) {
        await store.addEvent(
          runId,
          'kernel-restart',
          `kernel restarted during step ${stepIndex} (${r.status}): state lost`,
        );
      }
      return r;
    },
    signal,
    log,
    sandbox: o.sandbox ?? 'bubblewrap',
  };

  control.setIntervener(async (i) => {
    const rec = await store.addIntervention(
      { runId, who: i.who, kind: i.kind, text: i.text, beforeStep: stepIndex },
      leaseOwner,
    );
    if (!rec) {
      const holder = await store.getRunLease(runId);
      if (holder) throw new RunLeaseError(runId, holder);
      throw new LoupeInputError('intervention', `run ${runId} is no longer driven by this process`);
    }
    messages.push(interventionMessage(rec));
    emit({ type: 'intervention', runId, step: stepIndex, record: rec });
    return rec;
  });

  let status: FinalRunStatus | undefined;
  let reason = '';
  let noToolStreak = 0;
  try {
    while (!status) {
      if (control.isPaused && !signal.aborted) {
        emit({ type: 'paused', runId, step: stepIndex });
        control.setParked(true);
        try {
          await control.waitIfPaused();
        } finally {
          control.setParked(false);
        }
        emit({ type: 'resumed', runId, step: stepIndex });
      }
      while (pendingHuman.length && pendingHuman[0]!.beforeStep <= stepIndex) {
        messages.push(interventionMessage(pendingHuman.shift()!));
      }
      if (signal.aborted) {
        status = 'cancelled';
        reason = String(signal.reason ?? 'cancelled');
        break;
      }
      const wall = priorDurationMs + (performance.now() - sessionStart);
      if (stepIndex >= maxSteps) {
        status = 'budget_exhausted';
        reason = `max steps (${maxSteps}) reached`;
        break;
      }
      if (o.budget?.maxWallMs != null && wall >= o.budget.maxWallMs) {
        status = 'budget_exhausted';
        reason = `wall clock budget (${o.budget.maxWallMs} ms) reached`;
        break;
      }
      if (o.budget?.maxTotalTokens != null && tokens.input + tokens.output >= o.budget.maxTotalTokens) {
        status = 'budget_exhausted';
        reason = `token budget (${o.budget.maxTotalTokens}) reached`;
        break;
      }
      if (o.budget?.maxCostUsd != null && cost >= o.budget.maxCostUsd) {
        status = 'budget_exhausted';
        reason = `cost budget ($${o.budget.maxCostUsd}) reached`;
        break;
      }

      ctx.stepIndex = stepIndex;
      pendingCells = [];
      const startedAt = new Date().toISOString();
      emit({ type: 'step-start', runId, step: stepIndex });
      let res: LlmResponse;
      const replayed = stepIndex < replaySteps.length ? replaySteps[stepIndex]! : undefined;
      if (replayed) {
        // A fork's prefix: the parent's recorded message, no model call.
        const { reasoning: _r, ...recorded } = replayed.assistant;
        res = {
          message: recorded,
          usage: { input: 0, output: 0, cached: 0 },
          costUsd: null,
          finishReason: 'replayed',
          latencyMs: 0,
          attempts: 0,
        };
      } else {
        try {
          res = await o.model.complete(messages, specs, {
            signal,
            onDelta: (d) => emit({ type: 'model-delta', runId, step: stepIndex, ...d }),
            onRetry: (r) => {
              emit({
                type: 'retry',
                runId,
                step: stepIndex,
                attempt: r.attempt,
                delayMs: r.delayMs,
                reason: r.error.message,
              });
              void store
                .addEvent(
                  runId,
                  'retry',
                  `step ${stepIndex}: attempt ${r.attempt} in ${Math.round(r.delayMs)} ms after: ${r.error.message}`,
                )
                .catch(() => undefined);
            },
          });
        } catch (e) {
          if (signal.aborted || (e instanceof LlmError && e.kind === 'aborted')) {
            status = 'cancelled';
            reason = String(signal.reason ?? 'cancelled');
            break;
          }
          if (e instanceof BudgetExhaustedError) {
            status = 'budget_exhausted';
            reason = e.message;
            break;
          }
          status = 'failed';
          reason = `model call failed: ${e instanceof Error ? e.message : String(e)}`;
          break;
        }
      }
      const snapshot = snapshotState(state, toolSet);
      const assistant: AssistantMessage = res.message;
      const t0 = performance.now();
      const records: ToolCallRecord[] = [];
      let finish = false;
      const terminalFirst = !!toolSet.terminalBeforeTools && !!toolSet.isTerminal?.(assistant);
      for (const call of terminalFirst ? [] : (assistant.tool_calls ?? [])) {
        emit({
          type: 'tool-call',
          runId,
          step: stepIndex,
          call: { id: call.id, name: call.function.name, argumentsText: call.function.arguments },
        });
        const c0 = performance.now();
        const r = await registry.invoke(call, ctx);
        const cut = truncateObservation(r.observation ?? '', maxObs);
        const rec: ToolCallRecord = {
          id: call.id,
          name: call.function.name,
          argumentsText: call.function.arguments,
          observation: cut.text,
          isError: !!r.isError,
          truncated: cut.truncated,
          durationMs: performance.now() - c0,
        };
        if (r.data !== undefined) rec.data = r.data;
        if (r.modelUse && r.modelUse.calls > 0) rec.modelUse = r.modelUse;
        records.push(rec);
        emit({
          type: 'observation',
          runId,
          step: stepIndex,
          callId: call.id,
          name: rec.name,
          observation: rec.observation,
          isError: rec.isError,
        });
        if (r.finish && !r.isError) finish = true;
      }
      const extraMessages: ChatMessage[] = [];
      let terminal = false;
      if (!records.length) {
        if (terminalFirst || toolSet.isTerminal?.(assistant)) terminal = true;
        else {
          noToolStreak++;
          extraMessages.push({ role: 'user', content: toolSet.noToolCallMessage ?? DEFAULT_NUDGE });
        }
      } else noToolStreak = 0;
      let diverged: string | undefined;
      if (replayed) {
        finish = false;
        terminal = false;
        diverged = replayDivergence(
          o.replay!.parentRunId,
          stepIndex,
          o.replay!.cells.filter((c) => c.stepIndex === replayed.index && !c.replay),
          pendingCells,
        );
      }
      // The step's tokens and cost: its model call plus the model calls its tools made (issue 25: find_variables
      // decomposing with the run's model), so the run's totals and its budget count both.
      const withTools = records.reduce(
        (u, r) =>
          r.modelUse
            ? {
                usage: addUsage(u.usage, r.modelUse.usage),
                costUsd:
                  u.costUsd == null && r.modelUse.costUsd == null ? null : (u.costUsd ?? 0) + (r.modelUse.costUsd ?? 0),
              }
            : u,
        { usage: res.usage, costUsd: res.costUsd },
      );
      const step: StepRecord = {
        runId,
        index: stepIndex,
        startedAt,
        endedAt: new Date().toISOString(),
        latencyMs: res.latencyMs,
        toolMs: performance.now() - t0,
        assistant,
        toolCalls: records,
        extraMessages,
        usage: o.model.external ? null : withTools.usage,
        costUsd: withTools.costUsd,
        finishReason: res.finishReason,
      };
      await store.commitStep(step, effectsSince(snapshot, state, toolSet, runId, stepIndex, pendingCells));
      tokens = { input: tokens.input + withTools.usage.input, output: tokens.output + withTools.usage.output };
      cost += withTools.costUsd ?? 0;
      const { reasoning: _r, ...sent } = assistant;
      messages.push(sent);
      for (const r of records) messages.push({ role: 'tool', tool_call_id: r.id, content: r.observation });
      messages.push(...extraMessages);
      stepIndex++;
      emit({ type: 'step-end', runId, step: step.index, record: step });
      if (replayed && !diverged && stepIndex === replaySteps.length) {
        const msg = `replayed ${replaySteps.length} recorded step${replaySteps.length === 1 ? '' : 's'} of run ${o.replay!.parentRunId} without model calls; continuing with ${o.model.model}`;
        await store.addEvent(runId, 'fork', msg);
        emit({ type: 'log', runId, kind: 'fork', message: msg });
      }
      if (diverged) {
        status = 'failed';
        reason = diverged;
        await store.addEvent(runId, 'fork-diverged', diverged);
      } else if (finish) {
        status = 'finished';
        reason = 'the agent called its finishing tool';
      } else if (terminal) {
        status = 'finished';
        reason = 'the agent ended the run (termination rule)';
      } else if (signal.aborted) {
        status = 'cancelled';
        reason = String(signal.reason ?? 'cancelled');
      } else if (noToolStreak >= maxNoTool) {
        status = 'failed';
        reason = `the model replied ${noToolStreak} times in a row without a tool call`;
      }
    }
  } catch (e) {
    status = 'failed';
    reason = `internal error: ${e instanceof Error ? e.message : String(e)}`;
    log.error(e instanceof Error ? e : String(e));
  } finally {
    control.setIntervener(undefined);
    signal.removeEventListener('abort', onAbortInterrupt);
    releasePrepared?.();
    if (kernel) await kernel.close().catch(() => undefined);
    else if (kernelStarting) await kernelStarting.then((k) => k.close()).catch(() => undefined);
  }
  const final = status ?? 'failed';
  await store.updateRun(runId, {
    status: final,
    statusReason: reason,
    endedAt: new Date().toISOString(),
    addDurationMs: performance.now() - sessionStart,
    ownerPid: null,
  });
  emit({ type: 'run-end', runId, status: final, reason, steps: stepIndex });
  return { runId, status: final, reason, steps: stepIndex };
}

function addUsage(a: Usage, b: Usage): Usage {
  return { input: a.input + b.input, output: a.output + b.output, cached: a.cached + b.cached };
}

/**
 * Compares a fork's re-executed cells of one replayed step with the parent's recorded ones (issue 20).
 * @returns a message naming the step and the first cell that ran without error in the parent but errors now (or did
 *   not run at all), or undefined when none does.
 */
export function replayDivergence(
  parentRunId: string,
  stepIndex: number,
  recorded: readonly KernelCellRecord[],
  now: readonly KernelCellRecord[],
): string | undefined {
  for (let k = 0; k < recorded.length; k++) {
    const r = recorded[k]!;
    if (r.status !== 'ok') continue;
    const n = now[k];
    if (n && n.status === 'ok') continue;
    const first = r.code.split('\n').find((l) => l.trim()) ?? '';
    const what = n
      ? `now ${n.status === 'error' && n.error ? `errors: ${n.error.ename}: ${n.error.evalue}` : `ends ${n.status}`}`
      : 'did not run again';
    return `fork replay diverged at step ${stepIndex + 1}: cell ${k + 1} of that step (kernel cell #${r.seq} of run ${parentRunId}, "${first.slice(0, 80)}") ran without error in the parent but ${what}`;
  }
  return undefined;
}

interface Snapshot {
  /** The tool set's typed state ({@link ToolSetRunState.snapshot}). */
  benchmark: unknown;
  extra: string;
}

function snapshotState(s: RunState, toolSet: ToolSet): Snapshot {
  return { benchmark: toolSet.runState?.snapshot(s), extra: JSON.stringify(s.extra) };
}

function effectsSince(
  before: Snapshot,
  s: RunState,
  toolSet: ToolSet,
  runId: string,
  stepIndex: number,
  cells: KernelCellRecord[],
): StepEffects {
  const eff: StepEffects = {
    ...(toolSet.runState ? toolSet.runState.effects(before.benchmark, s, runId, stepIndex) : {}),
    cells,
  };
  if (JSON.stringify(s.extra) !== before.extra) eff.extra = s.extra;
  return eff;
}
