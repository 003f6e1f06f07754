/**
 * The bridge between an MCP client and Loupe's agent loop (issue 24). The loop asks its "model" for the next step;
 * here the answer is the next tool call the MCP client made, turned into an assistant message with that one call.
 * The loop then runs the tool exactly as for Loupe's own agent (same registry, schema validation, sandboxes, step
 * limit, run lease) and commits the step; the MCP call is answered with the recorded observation once the step is
 * committed (when the loop comes back for the next call) or the run has ended (a finishing call).
 * Token use of an MCP client is unknown: the bridge is `external`, so steps record null usage, not 0.
 * Source: issue 24 "Every call is a recorded step of a run".
 */
import type { CompleteOptions, LlmResponse, LlmToolSpec } from '../../agent/llm.ts';
import { BudgetExhaustedError, type ModelClient } from '../../agent/loop.ts';
import type { AssistantMessage, ChatMessage, StepRecord } from '../../agent/types.ts';

/** What an MCP tool call gets back: the recorded observation, and how the run stands after it. */
export interface McpCallOutcome {
  /** The observation recorded for the call (as Loupe's agent would have seen it). */
  observation: string;
  isError: boolean;
  /** 0-based index of the step the call was recorded as. */
  stepIndex: number;
  /** Set when the run ended with this call (finishing tool, termination rule, step limit). */
  ended?: { status: string; reason: string };
}

/** Thrown to a caller whose call can no longer be recorded (the run ended, failed to start, or its lease is held elsewhere). */
export class McpRunClosedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpRunClosedError';
  }
}

interface PendingCall {
  assistant: AssistantMessage;
  receivedAt: number;
  resolve(o: McpCallOutcome): void;
  reject(e: Error): void;
}

/**
 * A {@link ModelClient} whose replies are the tool calls of an external MCP client, one per step.
 * Calls made while another is being run wait in order (a client sending calls in parallel gets one step each).
 */
export class McpAgentBridge implements ModelClient {
  readonly model: string;
  readonly external = true;
  #queue: PendingCall[] = [];
  #waiter: { resolve(c: PendingCall): void; reject(e: Error): void } | undefined;
  #inFlight: PendingCall | undefined;
  #lastStep: StepRecord | undefined;
  #closed: string | undefined;
  #seq = 0;
  #deadline: { at: number; reason: string } | undefined;

  /** @param model the name recorded as the run's model (`mcp:<client>/<version>`). */
  constructor(model: string) {
    this.model = model;
  }

  /** Whether the run has ended or can no longer take calls. */
  get closed(): boolean {
    return this.#closed !== undefined;
  }

  /**
   * Queues one tool call of the client as the assistant message of the next step.
   * @param name the tool name; `argumentsText` its arguments as JSON text; `content` an assistant text (the `finish` variant's FINISH message) sent with no tool call when `name` is null.
   * @returns the recorded outcome once the step is committed. @throws McpRunClosedError when the run no longer takes calls.
   */
  submit(call: { name: string; argumentsText: string } | { content: string }): Promise<McpCallOutcome> {
    if (this.#closed !== undefined) return Promise.reject(new McpRunClosedError(this.#closed));
    const assistant: AssistantMessage =
      'content' in call
        ? { role: 'assistant', content: call.content }
        : {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: `mcp_${++this.#seq}`,
                type: 'function',
                function: { name: call.name, arguments: call.argumentsText },
              },
            ],
          };
    return new Promise<McpCallOutcome>((resolve, reject) => {
      const p: PendingCall = { assistant, receivedAt: performance.now(), resolve, reject };
      if (this.#waiter) {
        const w = this.#waiter;
        this.#waiter = undefined;
        w.resolve(p);
      } else this.#queue.push(p);
    });
  }

  /**
   * The run's wall clock ends at `at` (epoch ms): waiting for the client's next call past it ends the run
   * `budget_exhausted` with `reason` (the loop checks the budget only between steps).
   */
  setDeadline(at: number, reason: string): void {
    this.#deadline = { at, reason };
  }

  /** The loop committed a step (its `step-end` event). */
  stepCommitted(step: StepRecord): void {
    this.#lastStep = step;
  }

  /** Answers the call the last committed step was made from. */
  #settle(ended?: { status: string; reason: string }): void {
    const p = this.#inFlight;
    if (!p) return;
    this.#inFlight = undefined;
    const s = this.#lastStep;
    const tc = s?.toolCalls[0];
    if (!s) {
      p.reject(
        new McpRunClosedError(
          ended
            ? `the run ended before this call was recorded: ${ended.status} (${ended.reason})`
            : 'the call was not recorded',
        ),
      );
    } else {
      p.resolve({
        observation: tc?.observation ?? '',
        isError: tc?.isError ?? false,
        stepIndex: s.index,
        ...(ended ? { ended } : {}),
      });
    }
  }

  /** The loop's model call: the next tool call of the client (waiting for it). */
  async complete(_messages: ChatMessage[], tools: LlmToolSpec[], opts?: CompleteOptions): Promise<LlmResponse> {
    this.#settle();
    if (!tools.length) {
      throw new Error('an MCP client answers only through tool calls: it cannot be asked a completion without tools');
    }
    if (this.#closed !== undefined) throw new McpRunClosedError(this.#closed);
    const asked = performance.now();
    const next =
      this.#queue.shift() ??
      (await new Promise<PendingCall>((resolve, reject) => {
        const signal = opts?.signal;
        let timer: NodeJS.Timeout | undefined;
        const done = () => {
          signal?.removeEventListener('abort', onAbort);
          clearTimeout(timer);
        };
        const onAbort = () => {
          this.#waiter = undefined;
          done();
          reject(new McpRunClosedError(String(signal?.reason ?? 'cancelled')));
        };
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        const d = this.#deadline;
        if (d) {
          timer = setTimeout(
            () => {
              this.#waiter = undefined;
              done();
              reject(new BudgetExhaustedError(d.reason));
            },
            Math.max(0, d.at - Date.now()),
          );
        }
        this.#waiter = {
          resolve: (c) => {
            done();
            resolve(c);
          },
          reject: (e) => {
            done();
            reject(e);
          },
        };
      }));
    this.#inFlight = next;
    // "Model latency" of an MCP step: how long the loop waited for the client's call (0 when it was already queued).
    const latencyMs = Math.max(0, performance.now() - Math.max(asked, next.receivedAt));
    return {
      message: next.assistant,
      usage: { input: 0, output: 0, cached: 0 },
      costUsd: null,
      finishReason: 'mcp',
      latencyMs,
      attempts: 1,
    };
  }

  /**
   * The run ended (or could not start): the call of its last step is answered with how it ended, queued calls and
   * any later call are refused with `reason`.
   */
  close(reason: string, ended?: { status: string; reason: string }): void {
    if (this.#closed === undefined) this.#closed = reason;
    this.#settle(ended);
    const err = new McpRunClosedError(reason);
    for (const p of this.#queue.splice(0)) p.reject(err);
    if (this.#waiter) {
      const w = this.#waiter;
      this.#waiter = undefined;
      w.reject(err);
    }
  }
}
