/**
 * Writes stored runs as an Inspect AI `EvalLog` (log format version 2, issue 45) so they open in Inspect's log viewer
 * and re-import into Loupe: one sample per run (id = block, epoch = the run's repeat), its steps as messages (assistant
 * text and reasoning, tool calls with their arguments, tool results with errors, extra user messages marked
 * `metadata.loupe_kind`), its token use, status and error, and its stored scores (imported runs: the original Inspect
 * scores; Loupe's own: each judge's summary) with their metadata. Every field the published schema requires is written
 * (its defaults where Loupe has nothing). Source: Inspect AI `log/_log.py` (`EvalLog`, `EvalSpec`, `EvalSample`),
 * `model/_chat_message.py`, `scorer/_metric.py` (`Score`, `ScoreEdit`, `ProvenanceData`).
 */
import { createHash } from 'node:crypto';
import type { ChatMessage, RunRecord, StepRecord, StoredScore } from '../../store/records.ts';
import type { RunStore } from '../../store/types.ts';
import { annotationStoreOf } from '../../annotations/index.ts';
import { LoupeInputError } from '../../util/errors.ts';
import { LOUPE_VERSION } from '../../version.ts';
import { INSPECT_BENCHMARK_PREFIX } from './import.ts';

type Json = Record<string, unknown>;

const GENERATE_CONFIG_FIELDS = [
  'max_retries',
  'timeout',
  'attempt_timeout',
  'max_connections',
  'system_message',
  'max_tokens',
  'top_p',
  'temperature',
  'stop_seqs',
  'best_of',
  'frequency_penalty',
  'presence_penalty',
  'logit_bias',
  'seed',
  'top_k',
  'num_choices',
  'logprobs',
  'top_logprobs',
  'parallel_tool_calls',
  'internal_tools',
  'max_tool_output',
  'cache_prompt',
  'verbosity',
  'effort',
  'reasoning_effort',
  'reasoning_tokens',
  'reasoning_summary',
  'reasoning_history',
  'response_schema',
  'extra_headers',
  'extra_body',
  'modalities',
  'cache',
  'batch',
];
const EVAL_CONFIG_FIELDS = [
  'limit',
  'sample_id',
  'sample_shuffle',
  'epochs',
  'epochs_reducer',
  'approval',
  'fail_on_error',
  'continue_on_fail',
  'retry_on_error',
  'message_limit',
  'token_limit',
  'time_limit',
  'working_limit',
  'cost_limit',
  'max_samples',
  'max_dataset_memory',
  'max_tasks',
  'max_subprocesses',
  'max_sandboxes',
  'sandbox_cleanup',
  'log_samples',
  'log_realtime',
  'log_images',
  'log_model_api',
  'log_buffer',
  'log_shared',
  'score_display',
];
const nulls = (names: string[], given: Json = {}): Json => Object.fromEntries(names.map((n) => [n, given[n] ?? null]));

/** A stored run with what the export reads. */
export interface RunForExport {
  run: RunRecord;
  steps: StepRecord[];
  scores: StoredScore[];
  /** Expert verdicts to write as `ScoreEdit` history of the score they concern (who, when, why). */
  edits?: Array<{ scorer: string; value: unknown; author: string; at: string; reason: string | null }>;
}

/** Reads a run's steps and scores from the store. @throws LoupeInputError when the run is unknown. */
export async function loadRunForExport(store: RunStore, runId: string): Promise<RunForExport> {
  const run = await store.getRun(runId);
  if (!run) throw new LoupeInputError(`run ${runId}`, `is not in ${store.location}`);
  const scores = await store.scores.list(runId);
  const names = scores.map((s) => (s.judgeId.startsWith('inspect:') ? s.judgeId.slice('inspect:'.length) : s.judgeId));
  return { run, steps: await store.getSteps(runId), scores, edits: await expertEditsOf(store, runId, names) };
}

const ERROR_SUFFIX = /\n?\[error ([A-Za-z_]+): ([^\n]*)\]$/;

/** Splits an imported tool observation back into Inspect's content and `ToolCallError`. */
function toolError(observation: string, isError: boolean): { content: string; error: Json | null } {
  if (!isError) return { content: observation, error: null };
  const m = ERROR_SUFFIX.exec(observation);
  if (m) return { content: observation.slice(0, m.index), error: { type: m[1]!, message: m[2]! } };
  return { content: observation, error: { type: 'unknown', message: observation.slice(0, 2000) } };
}

function message(m: ChatMessage, extra: Json = {}): Json {
  if (m.role === 'system') {
    return { id: null, content: m.content, source: null, metadata: null, role: 'system', ...extra };
  }
  if (m.role === 'user') {
    return {
      id: null,
      content: m.content,
      source: 'input',
      metadata: null,
      role: 'user',
      tool_call_id: null,
      ...extra,
    };
  }
  if (m.role === 'tool') {
    return {
      id: null,
      content: m.content,
      source: null,
      metadata: null,
      role: 'tool',
      tool_call_id: m.tool_call_id,
      function: null,
      error: null,
    };
  }
  return {
    id: null,
    content: m.content ?? '',
    source: 'generate',
    metadata: null,
    role: 'assistant',
    tool_calls: null,
    model: null,
  };
}

/** Steps → Inspect messages (prompt first): assistant, its tool results in call order, then the step's extra messages. */
export function stepsToMessages(prompt: ChatMessage[], steps: StepRecord[], model: string | null): Json[] {
  const out: Json[] = prompt.map((m) => message(m));
  for (const s of steps) {
    if (s.assistant.content !== null || !s.toolCalls.length || s.assistant.tool_calls?.length) {
      const content: unknown = s.assistant.reasoning
        ? [
            {
              internal: null,
              type: 'reasoning',
              reasoning: s.assistant.reasoning,
              summary: null,
              signature: null,
              redacted: false,
            },
            { internal: null, type: 'text', text: s.assistant.content ?? '', refusal: null, citations: null },
          ]
        : (s.assistant.content ?? '');
      const calls = s.toolCalls.map((c) => {
        let args: unknown;
        let parseError: string | null = null;
        try {
          args = c.argumentsText ? JSON.parse(c.argumentsText) : {};
        } catch (e) {
          parseError = (e as Error).message;
        }
        if (!args || typeof args !== 'object' || Array.isArray(args)) {
          args = {};
          parseError ??= c.argumentsText;
        }
        return { id: c.id, function: c.name, arguments: args, parse_error: parseError, view: null, type: 'function' };
      });
      out.push({
        id: null,
        content,
        source: 'generate',
        metadata: null,
        role: 'assistant',
        tool_calls: calls.length ? calls : null,
        model,
      });
    }
    for (const c of s.toolCalls) {
      const { content, error } = toolError(c.observation, c.isError);
      out.push({
        id: null,
        content,
        source: null,
        metadata: null,
        role: 'tool',
        tool_call_id: c.id,
        function: c.name,
        error,
      });
    }
    // Inspect's message `source` allows only input / generate: Loupe's own messages are marked in metadata.
    for (const m of s.extraMessages) out.push(message(m, { metadata: { loupe_kind: 'extra', loupe_step: s.index } }));
  }
  return out;
}

/** A content part of an original Inspect message with the fields the schema requires (text, image, reasoning; others as text). */
function contentPart(p: Json): Json {
  if (p.type === 'image') {
    return { internal: null, type: 'image', image: String(p.image ?? ''), detail: p.detail ?? 'auto' };
  }
  if (p.type === 'reasoning') {
    return {
      internal: null,
      type: 'reasoning',
      reasoning: String(p.reasoning ?? ''),
      summary: p.summary ?? null,
      signature: p.signature ?? null,
      redacted: !!p.redacted,
    };
  }
  if (p.type === 'text') {
    return { internal: null, type: 'text', text: String(p.text ?? ''), refusal: p.refusal ?? null, citations: null };
  }
  return { internal: null, type: 'text', text: `[${String(p.type)} content]`, refusal: null, citations: null };
}

/** An original Inspect message (a sample's `input` list) with every field the schema requires. */
function inputMessage(m: Json): Json {
  const content = Array.isArray(m.content) ? (m.content as Json[]).map(contentPart) : String(m.content ?? '');
  const base = {
    id: m.id ?? null,
    content,
    source: m.source === 'input' || m.source === 'generate' ? m.source : null,
    metadata: m.metadata ?? null,
  };
  if (m.role === 'system') return { ...base, role: 'system' };
  if (m.role === 'assistant') return { ...base, role: 'assistant', tool_calls: null, model: m.model ?? null };
  if (m.role === 'tool') {
    return { ...base, role: 'tool', tool_call_id: m.tool_call_id ?? null, function: m.function ?? null, error: null };
  }
  return { ...base, role: 'user', tool_call_id: null };
}

const scalar = (v: unknown): boolean => v === null || ['string', 'number', 'boolean'].includes(typeof v);

/** A stored score → Inspect `Score` (scorer name, score) with expert edits as `history`. */
function scoreOf(s: StoredScore, edits: RunForExport['edits']): [string, Json] {
  const imported = s.judgeId.startsWith('inspect:') && s.detail && typeof s.detail === 'object';
  const scorer = imported ? s.judgeId.slice('inspect:'.length) : s.judgeId;
  const d = (imported ? s.detail : {}) as Json;
  const value = imported ? d.value : Object.fromEntries(Object.entries(s.summary).filter(([, v]) => scalar(v)));
  const history = [
    ...(Array.isArray(d.history) ? d.history : []),
    ...(edits ?? [])
      .filter((e) => e.scorer === scorer)
      .map((e) => ({
        value: e.value,
        answer: 'UNCHANGED',
        explanation: e.reason ?? 'UNCHANGED',
        metadata: 'UNCHANGED',
        provenance: { timestamp: e.at, author: e.author, reason: e.reason, metadata: { source: 'loupe' } },
      })),
  ];
  return [
    scorer,
    {
      value,
      answer: d.answer ?? null,
      explanation: d.explanation ?? null,
      metadata: imported
        ? (d.metadata ?? null)
        : { loupe_benchmark: s.benchmark, options: s.options, pending: s.pending, scored_at: s.scoredAt },
      history,
    },
  ];
}

/** The `loupe_expert` score: the latest expert verdict, every verdict in its history. */
function expertScore(edits: RunForExport['edits']): Record<string, Json> {
  const mine = (edits ?? []).filter((e) => e.scorer === 'loupe_expert');
  if (!mine.length) return {};
  const history = mine.map((e) => ({
    value: e.value,
    answer: 'UNCHANGED',
    explanation: e.reason ?? 'UNCHANGED',
    metadata: 'UNCHANGED',
    provenance: { timestamp: e.at, author: e.author, reason: e.reason, metadata: { source: 'loupe' } },
  }));
  return {
    loupe_expert: {
      value: mine.at(-1)!.value,
      answer: null,
      explanation: mine.at(-1)!.reason,
      metadata: { source: 'loupe expert verdicts' },
      history,
    },
  };
}

function usage(u: { input: number; output: number; cached: number } | null): Json {
  const i = u?.input ?? 0;
  const o = u?.output ?? 0;
  return {
    input_tokens: i,
    output_tokens: o,
    total_tokens: i + o,
    input_tokens_cache_write: null,
    input_tokens_cache_read: u?.cached ?? null,
    reasoning_tokens: null,
    total_cost: null,
  };
}

/** One run → one `EvalSample`. */
export function sampleOf(r: RunForExport): Json {
  const { run, steps } = r;
  const prov = (run.params.inspect ?? null) as Json | null;
  const prompt = (prov?.prompt as ChatMessage[] | undefined) ?? [];
  const model = run.model ?? 'none/none';
  const messages = stepsToMessages(prompt, steps, run.model);
  const last = [...messages].reverse().find((m) => m.role === 'assistant');
  const target = prov ? prov.target : '';
  return {
    id: prov ? (prov.sampleId as string | number) : run.blockId,
    epoch: run.params.repeat ?? 1,
    input: prov
      ? Array.isArray(prov.input)
        ? (prov.input as Json[]).map(inputMessage)
        : prov.input
      : (prompt.find((m) => m.role === 'user')?.content ?? run.blockId),
    choices: null,
    target: typeof target === 'string' || Array.isArray(target) ? target : JSON.stringify(target ?? ''),
    sandbox: null,
    files: null,
    setup: null,
    messages,
    output: {
      model,
      choices: last ? [{ message: last, stop_reason: 'stop', logprobs: null }] : [],
      completion: typeof last?.content === 'string' ? last.content : '',
      usage: run.tokens ? usage(run.tokens) : null,
      time: run.durationMs / 1000,
      metadata: null,
      error: null,
    },
    scores: { ...Object.fromEntries(r.scores.map((s) => scoreOf(s, r.edits))), ...expertScore(r.edits) },
    metadata: {
      ...((prov?.metadata as Json | undefined) ?? {}),
      loupe_run_id: run.id,
      loupe_benchmark: run.suite,
      loupe_block: run.blockId,
      loupe_agent: run.agent,
      loupe_status: run.status,
    },
    store: {},
    events: [],
    timelines: null,
    model_usage: run.tokens ? { [model]: usage(run.tokens) } : {},
    role_usage: {},
    started_at: run.startedAt,
    completed_at: run.endedAt,
    total_time: run.durationMs / 1000,
    working_time: run.durationMs / 1000,
    uuid: run.id,
    invalidation: null,
    error:
      run.status === 'failed' || run.status === 'cancelled'
        ? { message: run.statusReason ?? run.status, traceback: '', traceback_ansi: '' }
        : null,
    error_retries: null,
    attachments: {},
    events_data: null,
    limit: run.status === 'budget_exhausted' ? { type: 'token', limit: run.params.maxTotalTokens ?? 0 } : null,
  };
}

/**
 * Runs → a whole `EvalLog` (JSON value). Task = the imported task, else the benchmark and block; model = the runs'
 * model when they share one. @throws LoupeInputError for an empty run list.
 */
export function evalLogOf(runs: RunForExport[], opts: { location: string }): Json {
  if (!runs.length) throw new LoupeInputError('export', 'no run to export');
  const first = runs[0]!.run;
  const prov = (first.params.inspect ?? null) as Json | null;
  const suites = [...new Set(runs.map((r) => r.run.suite))];
  const task =
    prov && suites.length === 1
      ? String(prov.task)
      : suites.length === 1
        ? suites[0]!.replace(INSPECT_BENCHMARK_PREFIX, '')
        : suites.join('+');
  const models = [...new Set(runs.map((r) => r.run.model ?? 'none/none'))];
  const ids = createHash('sha256')
    .update(runs.map((r) => r.run.id).join(','))
    .digest('hex');
  const samples = runs.map(sampleOf);
  // Two runs of one block and repeat would be one sample × epoch to Inspect: the later ones take the next free epoch.
  const seen = new Set<string>();
  for (const s of samples) {
    while (seen.has(JSON.stringify([s.id, s.epoch]))) s.epoch = (s.epoch as number) + 1;
    seen.add(JSON.stringify([s.id, s.epoch]));
  }
  const scorers = [...new Set(samples.flatMap((s) => Object.keys(s.scores as Json)))];
  const total = runs.reduce(
    (a, r) => ({
      input: a.input + (r.run.tokens?.input ?? 0),
      output: a.output + (r.run.tokens?.output ?? 0),
      cached: a.cached + (r.run.tokens?.cached ?? 0),
    }),
    { input: 0, output: 0, cached: 0 },
  );
  const anyFailed = runs.some((r) => r.run.status === 'failed');
  const times = runs
    .flatMap((r) => [r.run.startedAt, r.run.endedAt])
    .filter((x): x is string => !!x)
    .sort();
  return {
    version: 2,
    status: anyFailed ? 'error' : 'success',
    eval: {
      eval_set_id: null,
      eval_id: (prov?.evalId as string | null) ?? `loupe-${ids.slice(0, 22)}`,
      run_id: (prov?.evalRunId as string | null) ?? `loupe-${ids.slice(22, 44)}`,
      created: first.createdAt,
      task,
      task_id: (prov?.taskId as string | null) ?? `loupe-${ids.slice(0, 22)}`,
      task_version: 0,
      task_file: null,
      task_display_name: null,
      task_registry_name: null,
      task_attribs: {},
      task_args: {},
      task_args_passed: {},
      solver: first.agent,
      solver_args: null,
      solver_args_passed: null,
      tags: null,
      dataset: {
        name: task,
        location: null,
        samples: samples.length,
        sample_ids: samples.map((s) => s.id),
        shuffled: false,
      },
      sandbox: null,
      model: models.length === 1 ? models[0]! : models.join('+'),
      model_generate_config: nulls(GENERATE_CONFIG_FIELDS, {
        temperature: first.params.temperature,
        max_tokens: first.params.maxTokens,
      }),
      model_base_url: first.params.baseUrl ?? null,
      model_args: {},
      model_roles: null,
      config: nulls(EVAL_CONFIG_FIELDS),
      revision: null,
      packages: { loupe: LOUPE_VERSION },
      metadata: {
        loupe_runs: runs.map((r) => r.run.id),
        loupe_tool_set: first.toolSet,
        loupe_prompt_hash: first.promptHash,
      },
      scorers: null,
      metrics: null,
    },
    plan: {
      name: 'plan',
      steps: [{ solver: first.agent, params: {}, params_passed: {} }],
      finish: null,
      config: nulls(GENERATE_CONFIG_FIELDS),
    },
    results: {
      total_samples: samples.length,
      completed_samples: runs.filter((r) => r.run.status === 'finished').length,
      early_stopping: null,
      scores: scorers.map((name) => ({
        name,
        scorer: name,
        reducer: null,
        scored_samples: samples.filter((s) => name in (s.scores as Json)).length,
        unscored_samples: samples.filter((s) => !(name in (s.scores as Json))).length,
        params: {},
        metrics: {},
        metadata: null,
      })),
      metadata: null,
    },
    stats: {
      started_at: times[0] ?? '',
      completed_at: times.at(-1) ?? '',
      model_usage: { [models[0]!]: usage(total) },
      role_usage: {},
    },
    error: null,
    invalidated: false,
    log_updates: null,
    tags: [],
    metadata: {},
    samples,
    reductions: null,
    location: opts.location,
    etag: null,
    eval_set_info: null,
  };
}

/**
 * The experts' verdicts on a run (every annotation of the run's items, superseded ones included: the history) as
 * `ScoreEdit`-style edits: author, time, note as the reason. An item whose criterion names one of the run's scorers
 * edits that score; the others edit the score `loupe_expert`.
 * @returns edits oldest first (empty when the run has no annotation). Source: Inspect `scorer/_metric.py` (`ScoreEdit`).
 */
export async function expertEditsOf(
  store: RunStore,
  runId: string,
  scorers: readonly string[],
): Promise<NonNullable<RunForExport['edits']>> {
  const ann = annotationStoreOf(store);
  const items = new Map((await ann.listItems({ runIds: [runId] })).map((i) => [i.id, i]));
  const byItem = await ann.annotationsByItem({ runIds: [runId] });
  const out: NonNullable<RunForExport['edits']> = [];
  for (const [itemId, list] of byItem) {
    const item = items.get(itemId);
    const scorer = item?.criterion && scorers.includes(item.criterion) ? item.criterion : 'loupe_expert';
    for (const a of list) {
      out.push({
        scorer,
        value: scalar(a.verdict) ? a.verdict : JSON.stringify(a.verdict),
        author: a.annotator,
        at: a.createdAt,
        reason:
          [
            item ? `${item.task}${item.criterion ? ` / ${item.criterion}` : ''}` : null,
            a.role === 'adjudicator' ? 'adjudicated' : null,
            a.note,
          ]
            .filter(Boolean)
            .join(': ') || null,
      });
    }
  }
  return out.sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0));
}
