/**
 * A run as OpenTelemetry traces (issue 45): one `invoke_agent` span per run (the root), a `chat` span per model call
 * and an `execute_tool` span per tool call (its children), `gen_ai.*` attributes, and the run's stored scores as
 * `gen_ai.evaluation.result` events, sent over OTLP/HTTP (protobuf) with the OpenTelemetry SDK. Two ways in:
 * `exportRunToOtel` (a stored run, `loupe export otel`) and `startLiveOtel` (a run as it goes, `loupe run
 * --otel-endpoint`, setting `loupe.otel.endpoint`).
 *
 * Source: OpenTelemetry semantic conventions for generative AI, version {@link OTEL_GENAI_SEMCONV_VERSION}
 * (docs/gen-ai/gen-ai-spans.md, gen-ai-agent-spans.md, gen-ai-events.md "Event: gen_ai.evaluation.result"), through
 * the pinned `@opentelemetry/semantic-conventions` package (its incubating GenAI names).
 *
 * Agent text is data: every text attribute is cut to {@link OtelExportConfig.maxTextChars} with a marker; the run's
 * parameters are never sent whole (only the model, host and settings below: no key, no URL path or query).
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_ERROR_TYPE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
} from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_AGENT_ID,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_EVALUATION_EXPLANATION,
  ATTR_GEN_AI_EVALUATION_NAME,
  ATTR_GEN_AI_EVALUATION_SCORE_LABEL,
  ATTR_GEN_AI_EVALUATION_SCORE_VALUE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_TEMPERATURE,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_SYSTEM,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  EVENT_GEN_AI_EVALUATION_RESULT,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
} from '@opentelemetry/semantic-conventions/incubating';
import type { AgentEvent } from '../agent/types.ts';
import type { InterventionRecord, RunRecord, StepRecord, StoredScore } from '../store/records.ts';
import type { RunStore } from '../store/types.ts';
import { LoupeInputError } from '../util/errors.ts';
import { LOUPE_VERSION } from '../version.ts';

/**
 * The OpenTelemetry semantic-conventions version Loupe's spans follow (the GenAI conventions are "development"
 * status: names may change between versions, so the version is pinned and sent as the tracer's schema URL).
 * `@opentelemetry/semantic-conventions` 1.45.0 (pinned exactly in package.json) carries this version's names.
 */
export const OTEL_GENAI_SEMCONV_VERSION = '1.41.0';
/** The schema URL sent with every span (scope `schema_url`). */
export const OTEL_SCHEMA_URL = `https://opentelemetry.io/schemas/${OTEL_GENAI_SEMCONV_VERSION}`;

/** Where and how spans are sent. */
export interface OtelExportConfig {
  /** The OTLP/HTTP traces URL (`…/v1/traces`), from {@link parseOtelEndpoint}. */
  endpoint: string;
  /** HTTP headers sent with every request (e.g. `Authorization: Basic …` for Langfuse). */
  headers?: Record<string, string>;
  /** Longest text attribute (message, arguments, observation) in characters; longer ones are cut with a marker. Default 4096. */
  maxTextChars?: number;
  /** Time one export request may take (ms). Default 10,000. */
  timeoutMs?: number;
}

const DEFAULT_MAX_TEXT = 4096;
const DEFAULT_TIMEOUT_MS = 10_000;
/** Spans a live run keeps waiting for export at most; more are dropped (never blocking the run). */
export const LIVE_MAX_QUEUE = 2048;
/** How long the end of a live run waits for queued spans to be sent (ms). */
export const LIVE_END_MS = 3000;

/**
 * Checks an OTLP endpoint and returns the traces URL: an `http:` or `https:` URL without user or password; a URL
 * whose path does not end in `/v1/traces` is a base (as `OTEL_EXPORTER_OTLP_ENDPOINT`) and gets it appended
 * (Langfuse `…/api/public/otel` → `…/api/public/otel/v1/traces`).
 * @param text the endpoint as given; `subject` names it in errors (a flag, a setting).
 * @returns the traces URL.
 * @throws LoupeInputError naming `subject` for an empty, malformed or non-HTTP URL, or one holding credentials.
 * Source: OTLP specification "OTLP/HTTP" (default path `/v1/traces`), OTel SDK environment variables.
 */
export function parseOtelEndpoint(text: string, subject: string): string {
  let u: URL;
  try {
    u = new URL(text.trim());
  } catch {
    throw new LoupeInputError(
      subject,
      `'${text}' is not a URL (e.g. http://127.0.0.1:4318 or https://cloud.langfuse.com/api/public/otel)`,
    );
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new LoupeInputError(subject, `'${u.protocol}' is not supported: OTLP/HTTP needs an http: or https: URL`);
  }
  if (u.username || u.password) {
    throw new LoupeInputError(
      subject,
      'the URL holds a user name or password: send credentials in a header (e.g. Authorization), never in the URL',
    );
  }
  if (!/\/v1\/traces\/?$/.test(u.pathname)) u.pathname = `${u.pathname.replace(/\/+$/, '')}/v1/traces`;
  return u.toString();
}

/** An endpoint as messages show it: scheme, host and path (no query, which may hold a token). */
export function describeOtelEndpoint(endpoint: string): string {
  try {
    const u = new URL(endpoint);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(endpoint)';
  }
}

/**
 * Parses OTLP headers: `NAME=VALUE` pairs as given one by one, and the `OTEL_EXPORTER_OTLP_HEADERS` form
 * (`k1=v1,k2=v2`, values percent-encoded, per the OTel SDK environment specification). Given pairs win over the
 * environment's.
 * @param pairs `NAME=VALUE` strings; `envValue` the environment variable's value (or undefined); `subject` names the
 *   pairs in errors.
 * @returns header name → value.
 * @throws LoupeInputError naming `subject` (or the variable) for a pair without `=`, an empty or invalid header name,
 *   or a value with a line break.
 */
export function parseOtelHeaders(
  pairs: readonly string[],
  envValue: string | undefined,
  subject: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  const add = (raw: string, where: string, decode: boolean) => {
    const i = raw.indexOf('=');
    if (i <= 0) throw new LoupeInputError(where, `'${raw.slice(0, 40)}' is not NAME=VALUE`);
    const name = raw.slice(0, i).trim();
    let value = raw.slice(i + 1).trim();
    if (decode) {
      try {
        value = decodeURIComponent(value);
      } catch {
        throw new LoupeInputError(where, `the value of header ${name} is not percent-encoded correctly`);
      }
    }
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) {
      throw new LoupeInputError(where, `'${name.slice(0, 40)}' is not a valid header name`);
    }
    if (/[\r\n\0]/.test(value)) throw new LoupeInputError(where, `the value of header ${name} holds a line break`);
    out[name] = value;
  };
  for (const part of (envValue ?? '').split(',')) if (part.trim()) add(part.trim(), 'OTEL_EXPORTER_OTLP_HEADERS', true);
  for (const p of pairs) add(p, subject, false);
  return out;
}

/** Cuts a text to `max` characters, marking the cut and how much was left out. */
export function boundedText(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}…[truncated ${s.length - max} chars]`;
}

/** The provider name (`gen_ai.provider.name`) of an OpenAI-compatible base URL: a known host, else the host. */
export function providerOf(baseUrl: string | undefined): { name: string; host?: string; port?: number } {
  if (!baseUrl) return { name: 'openai' };
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    return { name: 'openai' };
  }
  const h = u.hostname.toLowerCase();
  const known: [RegExp, string][] = [
    [/(^|\.)api\.openai\.com$/, 'openai'],
    [/\.openai\.azure\.com$/, 'azure.ai.openai'],
    [/(^|\.)anthropic\.com$/, 'anthropic'],
    [/generativelanguage\.googleapis\.com$/, 'gcp.gemini'],
    [/aiplatform\.googleapis\.com$/, 'gcp.vertex_ai'],
    [/(^|\.)mistral\.ai$/, 'mistral_ai'],
    [/(^|\.)deepseek\.com$/, 'deepseek'],
    [/(^|\.)groq\.com$/, 'groq'],
    [/(^|\.)x\.ai$/, 'x_ai'],
    [/bedrock.*\.amazonaws\.com$/, 'aws.bedrock'],
    [/(^|\.)perplexity\.ai$/, 'perplexity'],
  ];
  const name = known.find(([re]) => re.test(h))?.[1] ?? h;
  const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  return { name, host: u.hostname, port };
}

function ms(iso: string | null | undefined): number | undefined {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(t) ? t : undefined;
}

/** Reports the first failed export (later ones are counted, not reported). */
class ReportingExporter implements SpanExporter {
  readonly inner: SpanExporter;
  failures = 0;
  firstError: string | undefined;
  readonly onFirstFailure: (message: string) => void;
  constructor(inner: SpanExporter, onFirstFailure: (message: string) => void) {
    this.inner = inner;
    this.onFirstFailure = onFirstFailure;
  }
  export(spans: ReadableSpan[], done: (r: ExportResult) => void): void {
    this.inner.export(spans, (r) => {
      if (r.code !== ExportResultCode.SUCCESS) {
        this.failures++;
        if (this.firstError === undefined) {
          this.firstError = r.error?.message ?? 'export failed';
          try {
            this.onFirstFailure(this.firstError);
          } catch {
            /* a reporter never breaks the export */
          }
        }
      }
      done(r);
    });
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

interface Pipeline {
  provider: TracerProvider;
  tracer: Tracer;
  exporter: ReportingExporter;
}

function pipeline(cfg: OtelExportConfig, maxQueueSize: number, onFirstFailure: (m: string) => void): Pipeline {
  const exporter = new ReportingExporter(
    new OTLPTraceExporter({
      url: cfg.endpoint,
      headers: { ...cfg.headers },
      timeoutMillis: cfg.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    }),
    onFirstFailure,
  );
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'loupe', [ATTR_SERVICE_VERSION]: LOUPE_VERSION }),
    // a backstop beside boundedText: no attribute longer than 4 times the text bound, bounded events per span
    spanLimits: {
      attributeValueLengthLimit: 4 * (cfg.maxTextChars ?? DEFAULT_MAX_TEXT) + 64,
      eventCountLimit: 1000,
      attributeCountLimit: 128,
    },
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        maxQueueSize,
        maxExportBatchSize: 512,
        scheduledDelayMillis: 1000,
        exportTimeoutMillis: cfg.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      }),
    ],
  });
  return { provider, exporter, tracer: provider.getTracer('loupe', LOUPE_VERSION, { schemaUrl: OTEL_SCHEMA_URL }) };
}

/** Writes the spans of one run (root, then steps as they come) on a tracer. */
class RunSpans {
  readonly root: Span;
  readonly tracer: Tracer;
  readonly max: number;
  readonly model: string | undefined;
  readonly provider: ReturnType<typeof providerOf>;
  spans = 1;

  constructor(tracer: Tracer, run: RunRecord, startMs: number, max: number) {
    this.tracer = tracer;
    this.max = max;
    this.model = run.model ?? run.params.model ?? undefined;
    this.provider = providerOf(run.params.baseUrl);
    const agentName = `loupe ${run.toolSet || run.suite}`;
    const attrs: Attributes = {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
      [ATTR_GEN_AI_AGENT_NAME]: agentName,
      [ATTR_GEN_AI_AGENT_ID]: run.id,
      [ATTR_GEN_AI_CONVERSATION_ID]: run.id,
      ...this.modelAttrs(run),
      'loupe.run.id': run.id,
      'loupe.suite': run.suite,
      'loupe.block.id': run.blockId,
      'loupe.agent': run.agent,
      'loupe.tool_set': run.toolSet,
      'loupe.version': run.loupeVersion,
      'loupe.sandbox': run.sandbox,
      ...(run.params.repeat != null ? { 'loupe.run.repeat': run.params.repeat } : {}),
      ...(run.params.forkOf
        ? { 'loupe.run.fork_of': run.params.forkOf.runId, 'loupe.run.fork_step': run.params.forkOf.step }
        : {}),
      ...(run.sweepId ? { 'loupe.sweep.id': run.sweepId } : {}),
    };
    this.root = tracer.startSpan(
      `${GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT} ${agentName}`,
      { kind: SpanKind.INTERNAL, startTime: startMs, attributes: attrs },
      ROOT_CONTEXT,
    );
  }

  private modelAttrs(run: RunRecord): Attributes {
    const p = run.params;
    return {
      ...(this.model ? { [ATTR_GEN_AI_REQUEST_MODEL]: this.model } : {}),
      [ATTR_GEN_AI_PROVIDER_NAME]: this.provider.name,
      [ATTR_GEN_AI_SYSTEM]: this.provider.name, // the pre-1.37 name, still read by Langfuse and Phoenix
      ...(this.provider.host
        ? { [ATTR_SERVER_ADDRESS]: this.provider.host, [ATTR_SERVER_PORT]: this.provider.port! }
        : {}),
      ...(typeof p.temperature === 'number' ? { [ATTR_GEN_AI_REQUEST_TEMPERATURE]: p.temperature } : {}),
      ...(typeof p.maxTokens === 'number' ? { [ATTR_GEN_AI_REQUEST_MAX_TOKENS]: p.maxTokens } : {}),
    };
  }

  private text(s: string): string {
    return boundedText(s, this.max);
  }

  /** One step: its `chat` span, then one `execute_tool` span per tool call, in the order they ran. */
  step(s: StepRecord): void {
    const parent = trace.setSpan(ROOT_CONTEXT, this.root);
    const start = ms(s.startedAt) ?? Date.now();
    const chatEnd = start + Math.max(0, s.latencyMs);
    // the step's usage includes the model calls its tools made (ToolCallRecord.modelUse): the chat call's own is the rest
    const toolIn = s.toolCalls.reduce((n, t) => n + (t.modelUse?.usage.input ?? 0), 0);
    const toolOut = s.toolCalls.reduce((n, t) => n + (t.modelUse?.usage.output ?? 0), 0);
    const a = s.assistant;
    const parts: unknown[] = [];
    if (a.reasoning) parts.push({ type: 'reasoning', content: this.text(a.reasoning) });
    if (a.content) parts.push({ type: 'text', content: this.text(a.content) });
    for (const c of a.tool_calls ?? []) {
      parts.push({ type: 'tool_call', id: c.id, name: c.function.name, arguments: this.text(c.function.arguments) });
    }
    const finish = s.finishReason ?? undefined;
    const chat = this.tracer.startSpan(
      `${GEN_AI_OPERATION_NAME_VALUE_CHAT}${this.model ? ` ${this.model}` : ''}`,
      {
        kind: SpanKind.CLIENT,
        startTime: start,
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT,
          ...(this.model ? { [ATTR_GEN_AI_REQUEST_MODEL]: this.model } : {}),
          [ATTR_GEN_AI_PROVIDER_NAME]: this.provider.name,
          [ATTR_GEN_AI_SYSTEM]: this.provider.name,
          ...(s.usage
            ? {
                [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: Math.max(0, s.usage.input - toolIn),
                [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: Math.max(0, s.usage.output - toolOut),
              }
            : {}),
          ...(s.usage?.cached ? { 'gen_ai.usage.cache_read.input_tokens': s.usage.cached } : {}),
          ...(finish ? { [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: [finish] } : {}),
          [ATTR_GEN_AI_OUTPUT_MESSAGES]: boundedText(
            JSON.stringify([{ role: 'assistant', parts, ...(finish ? { finish_reason: finish } : {}) }]),
            4 * this.max,
          ), // each part is bounded: JSON stays whole unless there are very many
          [ATTR_GEN_AI_CONVERSATION_ID]: s.runId,
          'loupe.step.index': s.index,
          ...(s.costUsd != null ? { 'loupe.cost_usd': s.costUsd } : {}),
          ...(finish === 'replayed' ? { 'loupe.step.replayed': true } : {}),
        },
      },
      parent,
    );
    chat.end(chatEnd);
    this.spans++;
    let t = chatEnd;
    for (const c of s.toolCalls) {
      const end = t + Math.max(0, c.durationMs);
      const span = this.tracer.startSpan(
        `${GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL} ${c.name}`,
        {
          kind: SpanKind.INTERNAL,
          startTime: t,
          attributes: {
            [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
            [ATTR_GEN_AI_TOOL_NAME]: c.name,
            [ATTR_GEN_AI_TOOL_CALL_ID]: c.id,
            [ATTR_GEN_AI_TOOL_TYPE]: 'function',
            [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: this.text(c.argumentsText),
            [ATTR_GEN_AI_TOOL_CALL_RESULT]: this.text(c.observation),
            [ATTR_GEN_AI_CONVERSATION_ID]: s.runId,
            'loupe.step.index': s.index,
            ...(c.truncated ? { 'loupe.tool.observation_truncated': true } : {}),
            ...(c.modelUse
              ? {
                  'loupe.tool.model_calls': c.modelUse.calls,
                  [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: c.modelUse.usage.input,
                  [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: c.modelUse.usage.output,
                }
              : {}),
            ...(c.isError ? { [ATTR_ERROR_TYPE]: 'tool_error' } : {}),
          },
        },
        parent,
      );
      if (c.isError) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: this.text(c.observation.split('\n')[0] ?? '') });
      }
      span.end(end);
      this.spans++;
      t = end;
    }
  }

  /** A human step (hint or correction) as an event of the root span. */
  intervention(i: InterventionRecord): void {
    this.root.addEvent(
      'loupe.intervention',
      {
        'loupe.intervention.kind': i.kind,
        'loupe.intervention.who': this.text(i.who),
        'loupe.intervention.text': this.text(i.text),
        'loupe.intervention.before_step': i.beforeStep,
      },
      ms(i.at),
    );
  }

  /**
   * A stored score as `gen_ai.evaluation.result` events: one per summary metric (a number as `score.value`, anything
   * else as `score.label`), named `<benchmark>.<metric>`.
   */
  score(s: StoredScore): void {
    for (const [metric, v] of Object.entries(s.summary)) {
      if (v == null || typeof v === 'object') continue;
      const attrs: Attributes = {
        [ATTR_GEN_AI_EVALUATION_NAME]: this.text(`${s.benchmark}.${metric}`),
        ...(typeof v === 'number'
          ? { [ATTR_GEN_AI_EVALUATION_SCORE_VALUE]: v }
          : { [ATTR_GEN_AI_EVALUATION_SCORE_LABEL]: this.text(String(v)) }),
        [ATTR_GEN_AI_EVALUATION_EXPLANATION]: this.text(
          `judge ${s.judgeId}; options ${JSON.stringify(s.options)}${s.pending ? `; ${s.pending} pending` : ''}`,
        ),
        'loupe.judge.id': s.judgeId,
      };
      this.root.addEvent(EVENT_GEN_AI_EVALUATION_RESULT, attrs, ms(s.scoredAt));
    }
  }

  /** Ends the root span with the run's outcome and totals. */
  end(
    run: RunRecord | undefined,
    endMs: number,
    scores: readonly StoredScore[],
    interventions: readonly InterventionRecord[],
  ): void {
    for (const i of interventions) this.intervention(i);
    for (const s of scores) this.score(s);
    if (run) {
      this.root.setAttributes({
        'loupe.run.status': run.status,
        'loupe.run.steps': run.steps,
        ...(run.tokens
          ? { [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: run.tokens.input, [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: run.tokens.output }
          : {}),
        ...(run.costUsd != null ? { 'loupe.cost_usd': run.costUsd } : {}),
        ...(run.statusReason ? { 'loupe.run.status_reason': this.text(run.statusReason) } : {}),
      });
      if (run.status === 'failed') {
        this.root.setStatus({ code: SpanStatusCode.ERROR, message: this.text(run.statusReason ?? 'failed') });
      }
      if (run.status === 'failed' || run.status === 'cancelled') this.root.setAttribute(ATTR_ERROR_TYPE, run.status);
    }
    this.root.end(endMs);
  }
}

/** What an export sent. */
export interface OtelExportReport {
  runId: string;
  /** Spans handed to the exporter (root + chat + tool spans). */
  spans: number;
  /** `gen_ai.evaluation.result` events. */
  evaluations: number;
  /** The first export error (undefined: every request was accepted). */
  error?: string;
  /** Failed export requests. */
  failedRequests: number;
}

/**
 * Sends one stored run to an OTLP/HTTP endpoint as GenAI spans (root `invoke_agent`, `chat` per step, `execute_tool`
 * per tool call, timestamps from the stored steps) with its stored scores as `gen_ai.evaluation.result` events, and
 * waits until every span was sent or refused.
 * @param store the run store; `runId` the run; `cfg` endpoint (from {@link parseOtelEndpoint}), headers, bounds.
 * @returns counts and the first export error (a refused or unreachable endpoint is reported there, not thrown).
 * @throws LoupeInputError when the run does not exist.
 * Source: semconv {@link OTEL_GENAI_SEMCONV_VERSION} gen-ai-agent-spans.md, gen-ai-spans.md, gen-ai-events.md.
 */
export async function exportRunToOtel(
  store: RunStore,
  runId: string,
  cfg: OtelExportConfig,
): Promise<OtelExportReport> {
  const run = await store.getRun(runId);
  if (!run) throw new LoupeInputError(`run ${runId}`, `no such run in ${store.location}`);
  const steps = await store.getSteps(runId);
  const [scores, interventions] = await Promise.all([store.scores.list(runId), store.getInterventions(runId)]);
  const p = pipeline(cfg, 4096, () => undefined);
  const first = steps[0] ? ms(steps[0].startedAt) : undefined;
  const last = steps.at(-1);
  const lastEnd = last
    ? (ms(last.startedAt) ?? 0) + last.latencyMs + last.toolCalls.reduce((n, c) => n + c.durationMs, 0)
    : undefined;
  const start = Math.min(...[ms(run.createdAt), first].filter((x): x is number => x !== undefined));
  const end = Math.max(start, ...[ms(run.endedAt), lastEnd].filter((x): x is number => x !== undefined));
  const spans = new RunSpans(p.tracer, run, start, cfg.maxTextChars ?? DEFAULT_MAX_TEXT);
  let flushError: string | undefined;
  // a failed export rejects the flush; the exporter has recorded it (the first error is the report's)
  const flush = () =>
    p.provider.forceFlush().catch((e: unknown) => {
      flushError ??= e instanceof Error ? e.message : String(e);
    });
  try {
    for (const s of steps) {
      spans.step(s);
      // a long run never fills the processor's queue: flush every batch
      if (spans.spans % 1024 < s.toolCalls.length + 1) await flush();
      if (p.exporter.firstError !== undefined || flushError !== undefined) break; // the endpoint refuses: stop sending
    }
    spans.end(run, end, scores, interventions);
    await flush();
  } finally {
    await p.provider.shutdown().catch(() => undefined);
  }
  const evaluations = scores.reduce(
    (n, s) => n + Object.values(s.summary).filter((v) => v != null && typeof v !== 'object').length,
    0,
  );
  const error = p.exporter.firstError ?? flushError;
  return {
    runId,
    spans: spans.spans,
    evaluations,
    failedRequests: p.exporter.failures,
    ...(error !== undefined ? { error } : {}),
  };
}

/** A run's live export: feed it the run's events; `end()` when the run is over. */
export interface LiveOtel {
  /** Takes an agent event (`step-end` becomes spans at once; the rest is ignored). Never throws. */
  onEvent(e: AgentEvent): void;
  /** Ends the root span with the run as stored, sends what is queued (at most `timeoutMs`), and stops. Never throws. */
  end(): Promise<void>;
}

/**
 * Starts exporting a run as it goes: the root span starts now, each committed step adds its `chat` and
 * `execute_tool` spans (batched, a bounded queue of {@link LIVE_MAX_QUEUE} spans: when the endpoint is slow spans
 * are dropped, the run never waits), and `end()` closes the root with the run's outcome and stored scores. The
 * first failed export is recorded once as a `warning` event of the run; nothing here fails or slows the run.
 * @param store the run store (read at the end, warning written); `runId` the run; `cfg` the endpoint and bounds.
 * @returns the live exporter, or a no-op one when the run cannot be read.
 * Source: semconv {@link OTEL_GENAI_SEMCONV_VERSION}; OTel SDK BatchSpanProcessor (bounded queue, drops when full).
 */
export async function startLiveOtel(store: RunStore, runId: string, cfg: OtelExportConfig): Promise<LiveOtel> {
  const where = describeOtelEndpoint(cfg.endpoint);
  let run: RunRecord | undefined;
  try {
    run = await store.getRun(runId);
  } catch {
    run = undefined;
  }
  if (!run) return { onEvent: () => undefined, end: () => Promise.resolve() };
  let warned: Promise<void> | undefined;
  const warn = (m: string) => {
    warned ??= store
      .addEvent(
        runId,
        'warning',
        `OpenTelemetry export to ${where} failed: ${boundedText(m, 300)} (the run goes on; later export failures are not reported)`,
      )
      .catch(() => undefined);
  };
  const p = pipeline(cfg, LIVE_MAX_QUEUE, warn);
  const spans = new RunSpans(p.tracer, run, Date.now(), cfg.maxTextChars ?? DEFAULT_MAX_TEXT);
  let ended = false;
  return {
    onEvent(e) {
      if (ended || e.type !== 'step-end') return;
      try {
        spans.step(e.record);
      } catch {
        /* telemetry never breaks a run */
      }
    },
    async end() {
      if (ended) return;
      ended = true;
      // the run is over and recorded; what is still queued gets at most LIVE_END_MS, then is dropped
      const bound = Math.min(cfg.timeoutMs ?? DEFAULT_TIMEOUT_MS, LIVE_END_MS);
      const bounded = (pr: Promise<unknown>) =>
        Promise.race([
          pr.then(
            () => true,
            () => true,
          ),
          new Promise<boolean>((r) => setTimeout(() => r(false), bound).unref()),
        ]);
      try {
        const [after, scores, interventions] = await Promise.all([
          store.getRun(runId),
          store.scores.list(runId),
          store.getInterventions(runId),
        ]);
        spans.end(after, Date.now(), scores, interventions);
        if (!(await bounded(p.provider.forceFlush()))) {
          warn(
            `the endpoint did not accept the run's spans within ${bound} ms of its end; spans still queued are dropped`,
          );
        }
      } catch {
        /* telemetry never breaks a run */
      } finally {
        await bounded(p.provider.shutdown());
        await warned;
      }
    },
  };
}
