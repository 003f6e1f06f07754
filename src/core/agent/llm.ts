/**
 * OpenAI-compatible chat client (OpenAI, vLLM, Ollama, LM Studio, OpenRouter...) built on the `openai`
 * SDK with our own retry policy: exponential backoff with full jitter that honours `Retry-After`
 * (`retry-after-ms` too), a per-request timeout covering the whole (streamed) response, clear errors
 * for 400/401/403/404, usage (input/output/cached) and cost per call.
 * The API key is held only in memory: it is never part of a message, a record or a log line, and
 * any error text is scrubbed of it.
 * Source: issue 5 "LLM client"; spec §2.3 (LongTA: 2 attempts, 60 s wait) — we use a configurable policy.
 */
import OpenAI from 'openai';
import type { AssistantMessage, ChatMessage, JsonSchema, ToolCall, ToolModelUse, Usage } from './types.ts';

export interface LlmConfig {
  /** e.g. `https://api.openai.com/v1`, `http://127.0.0.1:8000/v1`. */
  baseUrl: string;
  model: string;
  /** Held in memory only. Empty → `"none"` (local servers). */
  apiKey?: string;
  temperature?: number;
  maxTokens?: number;
  /** Which request field carries maxTokens (OpenAI reasoning models need `max_completion_tokens`). */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  reasoningEffort?: string;
  stream?: boolean;
  /**
   * Idle timeout in ms (default 120,000): a request fails (and is retried) when no bytes arrived for this
   * long — the whole wait for a non-streamed reply, the gap between chunks of a streamed one — so long
   * reasoning calls that stream still finish while a hung endpoint holds a run for minutes, not ten.
   */
  idleTimeoutMs?: number;
  /** Optional whole-request cap in ms (default none: the idle timeout governs). */
  timeoutMs?: number;
  /** Retries after the first attempt for 408/409/429/5xx, timeouts, connection errors, truncated streams (default 5). */
  maxRetries?: number;
  /** Backoff base in ms (default 1000): delay = rand(0, min(max, base·2^attempt)), or Retry-After when given. */
  retryBaseMs?: number;
  /** Backoff cap in ms (default 60,000). Retry-After above the cap is still honoured up to 5 min. */
  retryMaxMs?: number;
  pricePerMillionInput?: number;
  pricePerMillionOutput?: number;
  /** Price for cached input tokens (default: the input price). */
  pricePerMillionCachedInput?: number;
}

/** No whole-request cap by default (a day: the SDK needs a number); the idle timeout governs. */
const NO_TOTAL_CAP_MS = 24 * 3600_000;

/** A tool as sent to the model. */
export interface LlmToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}

export interface LlmResponse {
  message: AssistantMessage;
  usage: Usage;
  /** null when no price was configured. */
  costUsd: number | null;
  finishReason: string | null;
  /** ms from the first attempt to the end of the response. */
  latencyMs: number;
  attempts: number;
}

export type LlmErrorKind =
  | 'auth'
  | 'forbidden'
  | 'not_found'
  | 'bad_request'
  | 'rate_limit'
  | 'server'
  | 'timeout'
  | 'connection'
  | 'aborted'
  | 'truncated'
  | 'protocol';

/** A model call failure. `message` is safe to show and store (never contains the key). */
export class LlmError extends Error {
  readonly kind: LlmErrorKind;
  readonly status: number | undefined;
  readonly retryable: boolean;
  /** Delay the server asked for (ms), if any. */
  readonly retryAfterMs: number | undefined;
  constructor(
    kind: LlmErrorKind,
    message: string,
    opts: { status?: number; retryable?: boolean; retryAfterMs?: number } = {},
  ) {
    super(message);
    this.name = 'LlmError';
    this.kind = kind;
    this.status = opts.status;
    this.retryable = opts.retryable ?? false;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

export interface CompleteOptions {
  signal?: AbortSignal;
  /** Streaming deltas (only with `stream: true`). */
  onDelta?: (d: { content?: string; reasoning?: string }) => void;
  /** Called before waiting to retry. */
  onRetry?: (info: { attempt: number; delayMs: number; error: LlmError }) => void;
  /** For tests: replaces setTimeout-based sleeping. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Computes a call's cost in USD, or null when no price is set. Source: issue 5 ("price per million tokens"). */
export function computeCost(
  usage: Usage,
  cfg: Pick<LlmConfig, 'pricePerMillionInput' | 'pricePerMillionOutput' | 'pricePerMillionCachedInput'>,
): number | null {
  if (cfg.pricePerMillionInput == null && cfg.pricePerMillionOutput == null) return null;
  const pin = cfg.pricePerMillionInput ?? 0;
  const pcached = cfg.pricePerMillionCachedInput ?? pin;
  const pout = cfg.pricePerMillionOutput ?? 0;
  const uncached = Math.max(0, usage.input - usage.cached);
  return (uncached * pin + usage.cached * pcached + usage.output * pout) / 1e6;
}

/**
 * Adds one model call to what a tool's model calls used so far (issue 25: the tool's share of a step's tokens and cost).
 * @param acc the calls so far, or undefined for none.
 * @param usage the call's tokens; `costUsd` its cost in USD (null when no price is set).
 * @returns a new total: calls + 1, tokens summed, cost summed (null only while every call's cost is null).
 */
export function addModelUse(acc: ToolModelUse | undefined, usage: Usage, costUsd: number | null): ToolModelUse {
  const cost = acc?.costUsd == null && costUsd == null ? null : (acc?.costUsd ?? 0) + (costUsd ?? 0);
  return {
    calls: (acc?.calls ?? 0) + 1,
    usage: {
      input: (acc?.usage.input ?? 0) + usage.input,
      output: (acc?.usage.output ?? 0) + usage.output,
      cached: (acc?.usage.cached ?? 0) + usage.cached,
    },
    costUsd: cost,
  };
}

/**
 * Parses a Retry-After header (seconds or HTTP date) or retry-after-ms into ms.
 * @returns ms ≥ 0, or undefined when absent/unparsable.
 */
export function parseRetryAfter(
  headers: { get(name: string): string | null } | undefined,
  now = Date.now(),
): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms != null && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const ra = headers.get('retry-after');
  if (ra == null || ra.trim() === '') return undefined;
  if (Number.isFinite(Number(ra))) return Math.max(0, Number(ra) * 1000);
  const t = Date.parse(ra);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

/** Replaces every occurrence of the secret in a string. */
export function scrubSecret(text: string, secret: string | undefined): string {
  if (!secret || secret.length < 4) return text;
  return text.split(secret).join('***');
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new LlmError('aborted', 'model call cancelled'));
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(new LlmError('aborted', 'model call cancelled'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The chat client. One per model configuration; safe to share between concurrent runs. */
export class LlmClient {
  private readonly cfg: LlmConfig;
  private readonly client: OpenAI;

  constructor(cfg: LlmConfig) {
    this.cfg = cfg;
    this.client = new OpenAI({
      baseURL: cfg.baseUrl,
      apiKey: cfg.apiKey || 'none',
      maxRetries: 0,
      timeout: cfg.timeoutMs ?? NO_TOTAL_CAP_MS,
    });
  }

  /** Model name (for records). */
  get model(): string {
    return this.cfg.model;
  }

  /**
   * Lists the server's models (`GET /models`), e.g. for a "test connection" button.
   * @returns model ids.
   * @throws LlmError (`auth`, `not_found`, `connection`, ...) with a message free of the key.
   */
  async listModels(signal?: AbortSignal): Promise<string[]> {
    try {
      const ids: string[] = [];
      for await (const m of this.client.models.list({ signal, timeout: this.cfg.timeoutMs ?? 30_000 })) ids.push(m.id);
      return ids;
    } catch (e) {
      throw this.toLlmError(e, signal);
    }
  }

  /** Non-secret parameters, safe to store with a run. */
  publicParams(): Record<string, unknown> {
    const { apiKey: _k, ...rest } = this.cfg;
    return rest;
  }

  /**
   * One chat completion with tools, retried per the policy.
   * @param messages the conversation so far.
   * @param tools tools the model may call (native function calling); empty → no tools field.
   * @returns the assistant message (content, tool calls with raw argument strings), usage, cost, latency.
   * @throws LlmError — `auth` (401), `forbidden` (403), `not_found` (404: model or URL), `bad_request` (400),
   *   `aborted` (signal), or the last retryable error after `maxRetries`.
   */
  async complete(messages: ChatMessage[], tools: LlmToolSpec[], opts: CompleteOptions = {}): Promise<LlmResponse> {
    const t0 = performance.now();
    const maxRetries = this.cfg.maxRetries ?? 5;
    const base = this.cfg.retryBaseMs ?? 1000;
    const cap = this.cfg.retryMaxMs ?? 60_000;
    const sleep = opts.sleep ?? defaultSleep;
    for (let attempt = 0; ; attempt++) {
      try {
        const r = await this.once(messages, tools, opts);
        return { ...r, latencyMs: performance.now() - t0, attempts: attempt + 1 };
      } catch (e) {
        const err = this.toLlmError(e, opts.signal);
        if (!err.retryable || attempt >= maxRetries) throw err;
        const backoff = Math.random() * Math.min(cap, base * 2 ** attempt);
        const delayMs = err.retryAfterMs != null ? Math.min(err.retryAfterMs, 300_000) : backoff;
        opts.onRetry?.({ attempt: attempt + 1, delayMs, error: err });
        await sleep(delayMs, opts.signal);
      }
    }
  }

  private body(messages: ChatMessage[], tools: LlmToolSpec[], stream: boolean): Record<string, unknown> {
    const c = this.cfg;
    const body: Record<string, unknown> = {
      model: c.model,
      messages: messages.map((m) =>
        m.role === 'assistant'
          ? { role: 'assistant', content: m.content, ...(m.tool_calls?.length ? { tool_calls: m.tool_calls } : {}) }
          : m,
      ),
    };
    if (tools.length) {
      body.tools = tools.map((t) => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: t.parameters },
      }));
    }
    if (c.temperature != null) body.temperature = c.temperature;
    if (c.maxTokens != null) body[c.maxTokensField ?? 'max_tokens'] = c.maxTokens;
    if (c.reasoningEffort) body.reasoning_effort = c.reasoningEffort;
    if (stream) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
    return body;
  }

  private async once(
    messages: ChatMessage[],
    tools: LlmToolSpec[],
    opts: CompleteOptions,
  ): Promise<Omit<LlmResponse, 'latencyMs' | 'attempts'>> {
    const stream = this.cfg.stream ?? false;
    const ctl = new AbortController();
    const timeoutMs = this.cfg.timeoutMs ?? NO_TOTAL_CAP_MS;
    const idleMs = this.cfg.idleTimeoutMs ?? 120_000;
    let timedOut = '' as '' | 'idle' | 'total';
    const timer = setTimeout(() => {
      timedOut = 'total';
      ctl.abort();
    }, timeoutMs);
    let idleTimer = setTimeout(() => {
      timedOut = 'idle';
      ctl.abort();
    }, idleMs);
    const touch = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        timedOut = 'idle';
        ctl.abort();
      }, idleMs);
    };
    const onAbort = () => ctl.abort();
    if (opts.signal?.aborted) ctl.abort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const body = this.body(messages, tools, stream);
      // The SDK's typed params don't cover every server's fields; the body is built to the wire format above.
      const create = this.client.chat.completions.create.bind(this.client.chat.completions) as unknown as (
        b: unknown,
        o: unknown,
      ) => Promise<unknown>;
      if (!stream) {
        const res = (await create(body, {
          signal: ctl.signal,
          timeout: timeoutMs,
        })) as OpenAI.Chat.Completions.ChatCompletion;
        const choice = res.choices?.[0];
        if (!choice) throw new LlmError('protocol', 'model response has no choices', { retryable: true });
        const msg = choice.message as OpenAI.Chat.Completions.ChatCompletionMessage & {
          reasoning_content?: string;
          reasoning?: string;
        };
        const message: AssistantMessage = { role: 'assistant', content: msg.content ?? null };
        const calls = (msg.tool_calls ?? []).filter(
          (t) => t.type === 'function',
        ) as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall[];
        if (calls.length) {
          message.tool_calls = calls.map((t, i) => ({
            id: t.id || `call_${i}`,
            type: 'function',
            function: { name: t.function.name, arguments: t.function.arguments ?? '' },
          }));
        }
        const reasoning = msg.reasoning_content ?? msg.reasoning;
        if (reasoning) message.reasoning = reasoning;
        const usage = this.usage(res.usage);
        return { message, usage, costUsd: computeCost(usage, this.cfg), finishReason: choice.finish_reason ?? null };
      }
      const s = (await create(body, {
        signal: ctl.signal,
        timeout: timeoutMs,
      })) as AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>;
      let content = '';
      let reasoning = '';
      let finishReason: string | null = null;
      let usage: Usage = { input: 0, output: 0, cached: 0 };
      const calls: ToolCall[] = [];
      for await (const chunk of s) {
        touch();
        if (chunk.usage) usage = this.usage(chunk.usage);
        const ch = chunk.choices?.[0];
        if (!ch) continue;
        const d = ch.delta as OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta & {
          reasoning_content?: string;
          reasoning?: string;
        };
        if (d?.content) {
          content += d.content;
          opts.onDelta?.({ content: d.content });
        }
        const r = d?.reasoning_content ?? d?.reasoning;
        if (r) {
          reasoning += r;
          opts.onDelta?.({ reasoning: r });
        }
        for (const tc of d?.tool_calls ?? []) {
          const slot = (calls[tc.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
          if (tc.id) slot.id = tc.id;
          if (tc.function?.name) slot.function.name += tc.function.name;
          if (tc.function?.arguments) slot.function.arguments += tc.function.arguments;
        }
        if (ch.finish_reason) finishReason = ch.finish_reason;
      }
      if (finishReason == null) {
        throw new LlmError('truncated', 'model stream ended before a finish reason (truncated stream)', {
          retryable: true,
        });
      }
      const message: AssistantMessage = { role: 'assistant', content: content || null };
      const tcs = calls.filter(Boolean).map((c, i) => ({ ...c, id: c.id || `call_${i}` }));
      if (tcs.length) message.tool_calls = tcs;
      if (reasoning) message.reasoning = reasoning;
      return { message, usage, costUsd: computeCost(usage, this.cfg), finishReason };
    } catch (e) {
      if (timedOut === 'idle' && !opts.signal?.aborted) {
        throw new LlmError('timeout', `model request timed out: no bytes received for ${idleMs} ms (idle timeout)`, {
          retryable: true,
        });
      }
      if (timedOut && !opts.signal?.aborted) {
        throw new LlmError('timeout', `model request timed out after ${timeoutMs} ms`, { retryable: true });
      }
      throw e;
    } finally {
      clearTimeout(timer);
      clearTimeout(idleTimer);
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  private usage(u: OpenAI.Completions.CompletionUsage | null | undefined): Usage {
    return {
      input: u?.prompt_tokens ?? 0,
      output: u?.completion_tokens ?? 0,
      cached: u?.prompt_tokens_details?.cached_tokens ?? 0,
    };
  }

  private toLlmError(e: unknown, signal: AbortSignal | undefined): LlmError {
    const key = this.cfg.apiKey;
    const safe = (s: string) => scrubSecret(s, key);
    if (e instanceof LlmError) return e;
    if (signal?.aborted) return new LlmError('aborted', 'model call cancelled');
    const where = `${this.cfg.baseUrl} (model '${this.cfg.model}')`;
    if (e instanceof OpenAI.APIUserAbortError) return new LlmError('aborted', 'model call cancelled');
    if (e instanceof OpenAI.APIConnectionTimeoutError) {
      return new LlmError('timeout', safe(`model request to ${where} timed out`), { retryable: true });
    }
    if (e instanceof OpenAI.APIConnectionError) {
      return new LlmError('connection', safe(`cannot reach ${where}: ${e.message}`), { retryable: true });
    }
    if (e instanceof OpenAI.APIError) {
      const status = e.status;
      const detail = safe(e.message);
      const retryAfterMs = parseRetryAfter(e.headers as Headers | undefined);
      if (status === 401) {
        return new LlmError(
          'auth',
          `401 unauthorized from ${where}: check the API key (its environment variable / Loupe: Set API Key). ${detail}`,
          { status },
        );
      }
      if (status === 403) {
        return new LlmError('forbidden', `403 forbidden from ${where}: the key lacks access to this model. ${detail}`, {
          status,
        });
      }
      if (status === 404) {
        return new LlmError(
          'not_found',
          `404 not found from ${where}: check the base URL and that the model exists (GET /models). ${detail}`,
          { status },
        );
      }
      if (status === 400 || status === 422) {
        return new LlmError(
          'bad_request',
          `${status} bad request from ${where}: the server rejected the request (model parameters or tool schema). ${detail}`,
          { status },
        );
      }
      if (status === 429) {
        return new LlmError('rate_limit', `429 rate limited by ${where}. ${detail}`, {
          status,
          retryable: true,
          retryAfterMs,
        });
      }
      if (status === 408 || status === 409 || (status != null && status >= 500)) {
        return new LlmError('server', `${status} server error from ${where}. ${detail}`, {
          status,
          retryable: true,
          retryAfterMs,
        });
      }
      return new LlmError('protocol', `unexpected response from ${where}: ${detail}`, { status });
    }
    const msg = safe(e instanceof Error ? e.message : String(e));
    // Stream parse errors and premature socket ends surface as plain errors: retry them.
    return new LlmError('connection', `model call to ${where} failed: ${msg}`, { retryable: true });
  }
}
