/**
 * Imports Inspect AI logs into the run store (issue 45): each sample × epoch becomes one finished (or failed) run of
 * benchmark `inspect:<task>`, block = the sample id, repeat = the epoch; its assistant messages become steps (tool calls
 * with their results or errors, reasoning kept), its scores stored scores (judge `inspect:<scorer>`), its images run
 * artefacts, its input / target / metadata and the log's task, eval and run ids and location kept in
 * `params.inspect`. Idempotent: a run's id is derived from the eval spec, the sample id and the epoch, and a run already
 * in the store is skipped. Source: Inspect AI `log/_log.py` (`EvalSample`), `model/_chat_message.py`,
 * `scorer/_metric.py` (`value_to_float`).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { AssistantMessage, ChatMessage, StepRecord, ToolCallRecord, Usage } from '../../store/records.ts';
import type { RunStore } from '../../store/types.ts';
import { LOUPE_VERSION } from '../../version.ts';
import {
  readInspectLog,
  type InspectHeader,
  type InspectMessage,
  type InspectSample,
  type SampleOrigin,
} from './read-log.ts';

/** Prefix of the benchmark name of imported runs: `inspect:<task>`. */
export const INSPECT_BENCHMARK_PREFIX = 'inspect:';

/** Provenance and sample fields an imported run keeps (`RunParams.inspect`). */
export type InspectProvenance = {
  logFile: string;
  member: string;
  task: string;
  taskId: string | null;
  evalId: string | null;
  evalRunId: string | null;
  sampleId: string | number;
  sampleUuid: string | null;
  epoch: number;
  input: unknown;
  target: unknown;
  metadata: Record<string, unknown>;
  /** The messages before the first assistant message (system prompt, user input), as Loupe chat messages. */
  prompt: ChatMessage[];
  solver: string | null;
  logStatus: string | null;
};

/** What one import did. */
export interface InspectImportResult {
  file: string;
  task: string;
  samples: number;
  imported: string[];
  skipped: string[];
}

/** Options of {@link importInspectLog}. */
export interface InspectImportOptions {
  /** The runs folder: each run's (never created) workspace is `<runsRoot>/<id>/workspace`. */
  runsRoot: string;
}

/**
 * Imports one Inspect log (streaming, sample by sample).
 * @param file `.eval` or `.json` path. @returns ids imported and skipped (already in the store).
 * @throws LoupeInputError for a corrupt log (naming member and field); runs already written stay.
 */
export async function importInspectLog(
  store: RunStore,
  file: string,
  opts: InspectImportOptions,
): Promise<InspectImportResult> {
  let header: InspectHeader | undefined;
  const res: InspectImportResult = { file, task: '', samples: 0, imported: [], skipped: [] };
  await readInspectLog(
    file,
    async (h) => {
      header = h;
      res.task = String(h.eval.task);
    },
    async (s, origin) => {
      res.samples++;
      const id = await importSample(store, header!, s, origin, opts);
      (id.created ? res.imported : res.skipped).push(id.runId);
    },
  );
  return res;
}

/** The run id of a sample × epoch of a log: stable across imports of the same log (hash of eval spec, sample id, epoch). */
export function inspectRunId(header: InspectHeader, sample: Pick<InspectSample, 'id' | 'epoch' | 'uuid'>): string {
  const h = createHash('sha256')
    .update(JSON.stringify(header.eval))
    .update('\0')
    .update(JSON.stringify([sample.id, sample.epoch]))
    .digest('hex');
  return `inspect-${h.slice(0, 20)}`;
}

/** Inspect's `value_to_float`: C/I/P/N, yes/no, true/false, numbers; null when the value is not a scalar. */
export function inspectValueToFloat(v: unknown): number | null {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    if (t === 'c' || t === 'yes' || t === 'true') return 1;
    if (t === 'i' || t === 'no' || t === 'false' || t === 'n') return 0;
    if (t === 'p') return 0.5;
    const n = Number(t);
    return t !== '' && Number.isFinite(n) ? n : null;
  }
  return null;
}

interface Converted {
  prompt: ChatMessage[];
  steps: Array<Omit<StepRecord, 'runId' | 'startedAt' | 'endedAt'>>;
  images: Array<{ path: string; bytes: Uint8Array; mediaType: string }>;
}

/**
 * Converts Inspect messages to Loupe steps: one step per assistant message, holding its tool calls with the results of
 * the tool messages answering them (an error → `isError`, its type and message appended); user / system messages after
 * the first assistant message are the step's `extraMessages`; a tool message answering no earlier call is a step of
 * its own (no assistant text). Images become `images/<n>.<ext>` artefacts referenced in the text as `[image: path]`.
 */
export function convertMessages(messages: InspectMessage[]): Converted {
  const out: Converted = { prompt: [], steps: [], images: [] };
  const text = (m: InspectMessage): { text: string; reasoning: string[] } => {
    if (typeof m.content === 'string') return { text: m.content, reasoning: [] };
    const parts: string[] = [];
    const reasoning: string[] = [];
    for (const p of m.content) {
      if (p.type === 'text') parts.push(String(p.text ?? ''));
      else if (p.type === 'reasoning') {
        reasoning.push(String(p.redacted ? '[redacted reasoning]' : (p.reasoning ?? p.summary ?? '')));
      } else if (p.type === 'image') parts.push(`[image: ${imageRef(String(p.image ?? ''), out.images)}]`);
      else parts.push(`[${String(p.type)} content not imported]`);
    }
    return { text: parts.join('\n'), reasoning };
  };
  const open = new Map<string, ToolCallRecord>();
  for (const m of messages) {
    const t = text(m);
    if (m.role === 'assistant') {
      const assistant: AssistantMessage = { role: 'assistant', content: t.text };
      const calls = (m.tool_calls ?? []).map((c) => ({
        id: c.id,
        type: 'function' as const,
        function: {
          name: c.function,
          arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}),
        },
      }));
      if (calls.length) assistant.tool_calls = calls;
      if (t.reasoning.length) assistant.reasoning = t.reasoning.join('\n\n');
      const toolCalls: ToolCallRecord[] = calls.map((c) => ({
        id: c.id,
        name: c.function.name,
        argumentsText: c.function.arguments,
        observation: '',
        isError: false,
        truncated: false,
        durationMs: 0,
      }));
      for (const tc of toolCalls) open.set(tc.id, tc);
      out.steps.push({
        index: out.steps.length,
        latencyMs: 0,
        toolMs: 0,
        assistant,
        toolCalls,
        extraMessages: [],
        usage: null,
        costUsd: null,
        finishReason: null,
      });
    } else if (m.role === 'tool') {
      const obs = m.error
        ? `${t.text}${t.text ? '\n' : ''}[error ${m.error.type ?? 'unknown'}: ${m.error.message ?? ''}]`
        : t.text;
      const tc = m.tool_call_id ? open.get(m.tool_call_id) : undefined;
      if (tc) {
        tc.observation = obs;
        tc.isError = !!m.error;
        open.delete(tc.id);
      } else {
        const id = m.tool_call_id ?? `tool-${out.steps.length}`;
        const name = m.function ?? 'tool';
        out.steps.push({
          index: out.steps.length,
          latencyMs: 0,
          toolMs: 0,
          assistant: { role: 'assistant', content: null },
          toolCalls: [
            { id, name, argumentsText: '', observation: obs, isError: !!m.error, truncated: false, durationMs: 0 },
          ],
          extraMessages: [],
          usage: null,
          costUsd: null,
          finishReason: null,
        });
      }
    } else {
      const msg: ChatMessage =
        m.role === 'system' ? { role: 'system', content: t.text } : { role: 'user', content: t.text };
      if (out.steps.length) out.steps[out.steps.length - 1]!.extraMessages.push(msg);
      else out.prompt.push(msg);
    }
  }
  return out;
}

const IMAGE_TYPES: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/** A data-URL image becomes an artefact (its path returned); a URL or file path is kept as the reference. */
function imageRef(src: string, images: Converted['images']): string {
  const m = /^data:(image\/[a-z+.-]+);base64,(.*)$/is.exec(src);
  if (!m) return src;
  const mediaType = m[1]!.toLowerCase();
  const bytes = Buffer.from(m[2]!, 'base64');
  const path = `images/${images.length + 1}.${IMAGE_TYPES[mediaType] ?? 'bin'}`;
  images.push({ path, bytes, mediaType });
  return path;
}

/** Per-step token use from the sample's model events when there is one per assistant message, else null. */
function usageOf(sample: InspectSample, steps: number): Array<Usage | null> | null {
  const ev = (sample.events ?? []).filter((e) => e.event === 'model');
  if (!ev.length || ev.length !== steps) return null;
  return ev.map((e) => {
    const u = (e.output as { usage?: Record<string, number | null> } | undefined)?.usage;
    return u
      ? { input: u.input_tokens ?? 0, output: u.output_tokens ?? 0, cached: u.input_tokens_cache_read ?? 0 }
      : null;
  });
}

async function importSample(
  store: RunStore,
  header: InspectHeader,
  s: InspectSample,
  origin: SampleOrigin,
  opts: InspectImportOptions,
): Promise<{ runId: string; created: boolean }> {
  const runId = inspectRunId(header, s);
  const had = await store.getRun(runId);
  if (had && had.status !== 'running') return { runId, created: false };
  // A run left 'running' is an import that was interrupted: it is imported again from the start.
  if (had) await store.deleteRun(runId);
  const ev = header.eval;
  const task = String(ev.task);
  const benchmark = INSPECT_BENCHMARK_PREFIX + task;
  const solvers = (header.plan?.steps ?? []).map((p) => p.solver).filter((x): x is string => typeof x === 'string');
  const solver = solvers.length ? solvers.join('+') : null;
  const conv = convertMessages(s.messages);
  const prov: InspectProvenance = {
    logFile: origin.file,
    member: origin.member,
    task,
    taskId: ev.task_id ?? null,
    evalId: ev.eval_id ?? null,
    evalRunId: ev.run_id ?? null,
    sampleId: s.id,
    sampleUuid: s.uuid ?? null,
    epoch: s.epoch,
    input: s.input,
    target: s.target ?? null,
    metadata: s.metadata ?? {},
    prompt: conv.prompt,
    solver,
    logStatus: header.status ?? null,
  };
  const created = ev.created ?? new Date().toISOString();
  await store.createRun({
    id: runId,
    suite: benchmark,
    blockId: String(s.id),
    agent: `inspect:${solver ?? 'solver'}`,
    model: ev.model ?? null,
    params: { model: ev.model, repeat: s.epoch, suiteKind: benchmark, inspect: prov },
    promptHash: createHash('sha256').update(JSON.stringify(conv.prompt)).digest('hex'),
    toolSet: 'inspect',
    dataChecksums: {},
    loupeVersion: LOUPE_VERSION,
    sandbox: 'inspect',
    workspace: join(opts.runsRoot, runId, 'workspace'),
    status: 'running',
  });
  const usages = usageOf(s, conv.steps.length);
  const total = Object.values(s.model_usage ?? {}).reduce<Usage>(
    (a, u) => ({
      input: a.input + (u.input_tokens ?? 0),
      output: a.output + (u.output_tokens ?? 0),
      cached: a.cached + (u.input_tokens_cache_read ?? 0),
    }),
    { input: 0, output: 0, cached: 0 },
  );
  for (const [i, st] of conv.steps.entries()) {
    // Per-step use from the model events; without them the sample's model_usage is put on its last step.
    const usage = usages ? usages[i]! : i === conv.steps.length - 1 && (total.input || total.output) ? total : null;
    await store.commitStep({ ...st, usage, runId, startedAt: created, endedAt: created });
  }
  if (!usages && conv.steps.length && (total.input || total.output)) {
    await store.addEvent(
      runId,
      'inspect',
      "the log has no model event per assistant message: the sample's total token use is recorded on its last step",
    );
  }
  if (conv.images.length) await store.artefacts.put(runId, conv.images);
  for (const [scorer, sc] of Object.entries(s.scores ?? {})) {
    const value = inspectValueToFloat(sc.value);
    await store.scores.save({
      runId,
      benchmark,
      judgeId: `inspect:${scorer}`,
      options: { scorer },
      summary: { score: value, value: sc.value as unknown, ...(sc.answer !== undefined ? { answer: sc.answer } : {}) },
      detail: { scorer, ...sc },
      pending: 0,
      scoredAt: created,
    });
  }
  await store.addEvent(
    runId,
    'import',
    `imported from Inspect log ${origin.file} (${origin.member}), task ${task}, sample ${String(s.id)} epoch ${s.epoch}`,
  );
  const failed = !!s.error;
  await store.updateRun(runId, {
    status: failed ? 'failed' : 'finished',
    statusReason: failed ? String(s.error?.message ?? 'sample error') : null,
    startedAt: created,
    endedAt: created,
  });
  return { runId, created: true };
}
