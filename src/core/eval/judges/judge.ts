/**
 * Judge implementations: an LLM judge on any OpenAI-compatible endpoint, a human judge (items wait
 * as pending for the annotation panel), and an exact-only judge (`--judge none`: only identical-text
 * shortcuts are decided). All share caching by hash and the identical-text shortcut.
 * Source: issue 8 "Judges".
 */
import OpenAI from 'openai';
import { LoupeInputError, errorMessage } from '../../util/errors.ts';
import { nullLogger, type Logger } from '../../util/log.ts';
import { canonicalJson, sha256 } from './canonical.ts';
import { extractJson, relaxToSchema, validateSchema } from './schema.ts';
import { PROMPT_VERSION, taskDef } from './tasks.ts';
import type {
  Judge,
  JudgeContext,
  JudgeInput,
  JudgeTaskName,
  JudgeVerdict,
  Judgement,
  JudgementStore,
  JudgementTally,
} from './types.ts';

export { canonicalJson, sha256 } from './canonical.ts';

/** A judgement store in memory (tests, one-off scoring). */
export class MemoryJudgementStore implements JudgementStore {
  readonly items = new Map<string, Judgement>();
  async get(key: string): Promise<Judgement | undefined> {
    return this.items.get(key);
  }
  async put(j: Judgement): Promise<void> {
    this.items.set(j.key, j);
  }
  async listPending(task?: JudgeTaskName): Promise<Judgement[]> {
    return [...this.items.values()].filter((j) => j.status === 'pending' && (!task || j.task === task));
  }
}

abstract class BaseJudge implements Judge {
  abstract readonly id: string;
  readonly store: JudgementStore;
  constructor(store: JudgementStore) {
    this.store = store;
  }

  async judge<K extends JudgeTaskName>(task: K, input: JudgeInput<K>, ctx: JudgeContext = {}): Promise<Judgement<K>> {
    const def = taskDef(task);
    def.validate(input);
    const inputHash = sha256(`${task}\u0000${canonicalJson(input)}`);
    const exact = def.exact(input);
    if (exact !== undefined) {
      const key = sha256(`exact\u0000${inputHash}`);
      const prev = (await this.store.get(key)) as Judgement<K> | undefined;
      if (prev?.status === 'done') return { ...prev, cached: true };
      const j: Judgement<K> = {
        key,
        task,
        judgeId: 'exact',
        inputHash,
        promptHash: null,
        input,
        raw: null,
        verdict: exact,
        status: 'done',
        at: new Date().toISOString(),
      };
      await this.store.put(j as Judgement, ctx);
      return j;
    }
    return this.decide(task, input, inputHash, ctx);
  }

  protected abstract decide<K extends JudgeTaskName>(
    task: K,
    input: JudgeInput<K>,
    inputHash: string,
    ctx: JudgeContext,
  ): Promise<Judgement<K>>;
}

/** Configuration of {@link LlmJudge}. */
export interface LlmJudgeConfig {
  baseUrl: string;
  model: string;
  /** Held in memory only; never stored with judgements. */
  apiKey?: string;
  /** Default 0. `null` sends no temperature (models that only accept their default). */
  temperature?: number | null;
  /** Attempts per item when the reply is not valid JSON for the schema (default 2). */
  maxAttempts?: number;
  /** HTTP retries inside the SDK for 429/5xx/connection errors (default 3). */
  maxRetries?: number;
  /** Per-request timeout, ms (default 120,000). */
  timeoutMs?: number;
  /** `json_object` asks the server for a JSON reply; `none` relies on the prompt (default `none`, works everywhere). */
  responseFormat?: 'json_object' | 'none';
  maxTokens?: number;
  log?: Logger;
}

/**
 * An LLM judge: temperature 0, our prompts, JSON replies validated against the task's schema
 * (one corrective retry), cached by prompt hash so re-scoring costs nothing.
 */
export class LlmJudge extends BaseJudge {
  readonly id: string;
  readonly config: LlmJudgeConfig;
  private readonly client: OpenAI;
  private readonly log: Logger;
  /** Model calls made by this instance (cache hits excluded). */
  calls = 0;

  /**
   * @param config endpoint and model; `store` where judgements are cached and recorded.
   * @throws LoupeInputError naming `baseUrl` / `model` when missing.
   */
  constructor(config: LlmJudgeConfig, store: JudgementStore) {
    super(store);
    if (!config.baseUrl) throw new LoupeInputError('judge baseUrl', 'is required for the LLM judge');
    if (!config.model) throw new LoupeInputError('judge model', 'is required for the LLM judge');
    this.config = config;
    this.id = `llm:${config.model}`;
    this.log = config.log ?? nullLogger;
    this.client = new OpenAI({
      baseURL: config.baseUrl,
      apiKey: config.apiKey || 'none',
      maxRetries: config.maxRetries ?? 3,
      timeout: config.timeoutMs ?? 120_000,
    });
  }

  protected async decide<K extends JudgeTaskName>(
    task: K,
    input: JudgeInput<K>,
    inputHash: string,
    ctx: JudgeContext,
  ): Promise<Judgement<K>> {
    const def = taskDef(task);
    const prompt = def.prompt(input);
    const promptHash = sha256(
      `${PROMPT_VERSION}\u0000${this.config.temperature ?? 0}\u0000${prompt.system}\u0000${prompt.user}`,
    );
    const key = sha256(`${this.id}\u0000${task}\u0000${promptHash}`);
    const prev = (await this.store.get(key)) as Judgement<K> | undefined;
    if (prev?.status === 'done') return { ...prev, cached: true };

    const messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string }> = [
      { role: 'system', content: prompt.system },
      { role: 'user', content: prompt.user },
    ];
    const base = { key, task, judgeId: this.id, inputHash, promptHash, input };
    const attempts = Math.max(1, this.config.maxAttempts ?? 2);
    let raw: string | null = null;
    let problem = '';
    for (let a = 0; a < attempts; a++) {
      try {
        this.calls++;
        const body: Record<string, unknown> = { model: this.config.model, messages };
        if (this.config.temperature !== null) body.temperature = this.config.temperature ?? 0;
        if (this.config.maxTokens) body.max_tokens = this.config.maxTokens;
        if (this.config.responseFormat === 'json_object') body.response_format = { type: 'json_object' };
        const res = await this.client.chat.completions.create(
          body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming,
          { signal: ctx.signal },
        );
        raw = res.choices[0]?.message?.content ?? '';
      } catch (e) {
        const j: Judgement<K> = {
          ...base,
          raw,
          verdict: null,
          status: 'error',
          error: `model call failed: ${errorMessage(e)}`,
          at: new Date().toISOString(),
        };
        this.log.warn(`judge ${this.id} ${task}: ${j.error}`);
        await this.store.put(j as Judgement, ctx);
        return j;
      }
      const extracted = extractJson(raw);
      const parsed = extracted === undefined ? undefined : relaxToSchema(extracted, def.schema);
      const problems = parsed === undefined ? ['no JSON object in the reply'] : validateSchema(parsed, def.schema);
      const verdict = problems.length === 0 ? def.coerce(parsed) : def.fallback?.(raw);
      if (verdict !== undefined) {
        const j: Judgement<K> = {
          ...base,
          raw,
          verdict: verdict as JudgeVerdict<K>,
          status: 'done',
          at: new Date().toISOString(),
        };
        await this.store.put(j as Judgement, ctx);
        return j;
      }
      problem = problems.join('; ');
      messages.push(
        { role: 'assistant', content: raw },
        { role: 'user', content: `That reply is not valid (${problem}). Reply again with the JSON object only.` },
      );
    }
    const j: Judgement<K> = {
      ...base,
      raw,
      verdict: null,
      status: 'error',
      error: `invalid reply: ${problem}`,
      at: new Date().toISOString(),
    };
    await this.store.put(j as Judgement, ctx);
    return j;
  }
}

/**
 * How a human judge learns the experts' verdict on an item: the annotation store's resolution (adjudicated >
 * majority > single annotator; ties stay pending). Returns undefined when no item exists yet. Injected so that
 * eval does not depend on the annotation layer.
 */
export type HumanResolver = (
  task: JudgeTaskName,
  inputHash: string,
) => Promise<{ decidedBy: string; verdict: unknown; annotators: string[] } | undefined>;

/**
 * The human judge: an item is decided by the experts' resolved verdict (the annotation store, through a
 * {@link HumanResolver}); without one it is queued as `pending` for the expert annotation panel and counts as
 * unjudged. Without a resolver, a verdict recorded by {@link answerHumanJudgement} decides (older stores).
 */
export class HumanJudge extends BaseJudge {
  readonly id = 'human';
  private readonly resolver: HumanResolver | undefined;
  constructor(store: JudgementStore, resolver?: HumanResolver) {
    super(store);
    this.resolver = resolver;
  }
  protected async decide<K extends JudgeTaskName>(
    task: K,
    input: JudgeInput<K>,
    inputHash: string,
    ctx: JudgeContext,
  ): Promise<Judgement<K>> {
    const key = humanJudgementKey(inputHash);
    const prev = (await this.store.get(key)) as Judgement<K> | undefined;
    const res = this.resolver ? await this.resolver(task, inputHash) : undefined;
    if (res && res.decidedBy !== 'pending' && res.decidedBy !== 'llm') {
      return {
        key,
        task,
        judgeId: this.id,
        inputHash,
        promptHash: null,
        input,
        raw: null,
        verdict: res.verdict as JudgeVerdict<K>,
        status: 'done',
        at: prev?.at ?? new Date().toISOString(),
        annotator: res.annotators.join(', '),
        decidedBy: res.decidedBy,
        cached: true,
      };
    }
    if (prev) {
      return this.resolver && prev.status === 'done'
        ? { ...prev, status: 'pending', verdict: null, cached: true }
        : { ...prev, cached: true };
    }
    const j: Judgement<K> = {
      key,
      task,
      judgeId: this.id,
      inputHash,
      promptHash: null,
      input,
      raw: null,
      verdict: null,
      status: 'pending',
      at: new Date().toISOString(),
    };
    await this.store.put(j as Judgement, ctx);
    return j;
  }
}

/**
 * `--judge llm+human`: the experts' resolved verdict where one exists, the LLM judge elsewhere (its verdicts
 * are cached and recorded as usual, so they can be audited). The item is also queued for humans (pending row)
 * so the annotation panel can serve it.
 */
export class HybridJudge implements Judge {
  readonly id: string;
  private readonly human: HumanJudge;
  private readonly llm: Judge;
  constructor(llm: Judge, store: JudgementStore, resolver: HumanResolver) {
    this.llm = llm;
    this.human = new HumanJudge(store, resolver);
    this.id = `${llm.id}+human`;
  }
  async judge<K extends JudgeTaskName>(task: K, input: JudgeInput<K>, ctx: JudgeContext = {}): Promise<Judgement<K>> {
    const h = await this.human.judge(task, input, ctx);
    if (h.status === 'done') return h;
    const l = await this.llm.judge(task, input, ctx);
    return l.status === 'done' && l.judgeId !== 'exact' ? { ...l, decidedBy: 'llm' } : l;
  }
}

/** Counts of who decided the judgements of one scoring (reported with every score). */
export interface DecisionCounts {
  /** Decided by experts (adjudicated, majority or single annotator). */
  human: number;
  /** Decided by an LLM judge (cached or now). */
  llm: number;
  /** Identical-text shortcuts and other non-judge decisions. */
  exact: number;
  /** Waiting for an expert. */
  pending: number;
  /** Failed or unjudged (no judge configured, invalid replies). */
  unjudged: number;
}

/**
 * Wraps a judge to count who decided each judgement it returns.
 * @returns the wrapping judge (same id) and a function reading the counts.
 */
export function countingJudge(judge: Judge): { judge: Judge; counts: () => DecisionCounts } {
  const c: DecisionCounts = { human: 0, llm: 0, exact: 0, pending: 0, unjudged: 0 };
  const wrapped: Judge = {
    id: judge.id,
    async judge<K extends JudgeTaskName>(task: K, input: JudgeInput<K>, ctx?: JudgeContext): Promise<Judgement<K>> {
      const j = await judge.judge(task, input, ctx);
      if (j.status === 'pending') c.pending++;
      else if (j.status !== 'done') c.unjudged++;
      else if (j.judgeId === 'human') c.human++;
      else if (j.judgeId.startsWith('llm:')) c.llm++;
      else c.exact++;
      return j;
    },
  };
  return { judge: wrapped, counts: () => ({ ...c }) };
}

/**
 * Cache key of a human judgement for an input hash.
 * @param inputHash {@link Judgement.inputHash}. @returns the key.
 */
export function humanJudgementKey(inputHash: string): string {
  return sha256(`human\u0000${inputHash}`);
}

/**
 * Records an annotator's verdict for a pending human judgement.
 * @param store the judgement store; `key` the pending judgement's key; `verdict` must satisfy the task schema.
 * @returns the stored judgement.
 * @throws LoupeInputError when the key is unknown or the verdict does not fit the schema.
 */
export async function answerHumanJudgement<K extends JudgeTaskName>(
  store: JudgementStore,
  key: string,
  verdict: JudgeVerdict<K>,
  annotator: string,
  note?: string,
): Promise<Judgement<K>> {
  const prev = (await store.get(key)) as Judgement<K> | undefined;
  if (!prev || prev.judgeId !== 'human') {
    throw new LoupeInputError(`judgement ${key}`, 'no human judgement with this key');
  }
  const problems = validateSchema(verdict, taskDef(prev.task).schema);
  if (problems.length) {
    throw new LoupeInputError(`judgement ${key}`, `verdict does not fit ${prev.task}: ${problems.join('; ')}`);
  }
  const j: Judgement<K> = {
    ...prev,
    verdict,
    status: 'done',
    raw: note ?? null,
    annotator,
    at: new Date().toISOString(),
  };
  delete j.cached;
  await store.put(j as Judgement);
  return j;
}

/**
 * The judge of `--judge none`: decides identical-text shortcuts only; every other item is an
 * `error` ("no judge configured") and counts as unjudged.
 */
export class ExactOnlyJudge extends BaseJudge {
  readonly id = 'none';
  protected async decide<K extends JudgeTaskName>(
    task: K,
    input: JudgeInput<K>,
    inputHash: string,
  ): Promise<Judgement<K>> {
    return {
      key: sha256(`none\u0000${inputHash}`),
      task,
      judgeId: this.id,
      inputHash,
      promptHash: null,
      input,
      raw: null,
      verdict: null,
      status: 'error',
      error: 'no judge configured (--judge none)',
      at: new Date().toISOString(),
    };
  }
}

/**
 * Counts a batch of judgements for reporting.
 * @param js judgements. @returns done / pending / error / cached / exact counts and judge ids involved.
 */
export function tallyJudgements(js: Iterable<Judgement>): JudgementTally {
  const t: JudgementTally = { judgeIds: [], done: 0, pending: 0, errors: 0, cached: 0, exact: 0 };
  const ids = new Set<string>();
  for (const j of js) {
    ids.add(j.judgeId);
    if (j.status === 'done') t.done++;
    else if (j.status === 'pending') t.pending++;
    else t.errors++;
    if (j.cached) t.cached++;
    if (j.judgeId === 'exact') t.exact++;
  }
  t.judgeIds = [...ids].sort();
  return t;
}

/**
 * Runs `fn` over `items` with at most `limit` in flight, keeping order.
 * @param items inputs; `limit` ≥ 1; `fn` async mapper. @returns results in input order.
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (t: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}

/**
 * A judge deciding through a function (tests, replaying a table of known verdicts, composing judges).
 * The function returns a verdict, or undefined to leave the item unjudged (status `error`).
 */
export class CallbackJudge extends BaseJudge {
  readonly id: string;
  private readonly fn: <K extends JudgeTaskName>(
    task: K,
    input: JudgeInput<K>,
  ) => JudgeVerdict<K> | undefined | Promise<JudgeVerdict<K> | undefined>;
  /** Calls made to the callback (cache hits and exact shortcuts excluded). */
  calls = 0;
  constructor(
    id: string,
    fn: <K extends JudgeTaskName>(
      task: K,
      input: JudgeInput<K>,
    ) => JudgeVerdict<K> | undefined | Promise<JudgeVerdict<K> | undefined>,
    store: JudgementStore = new MemoryJudgementStore(),
  ) {
    super(store);
    this.id = id;
    this.fn = fn;
  }
  protected async decide<K extends JudgeTaskName>(
    task: K,
    input: JudgeInput<K>,
    inputHash: string,
    ctx: JudgeContext,
  ): Promise<Judgement<K>> {
    const key = sha256(`${this.id}\u0000${inputHash}`);
    const prev = (await this.store.get(key)) as Judgement<K> | undefined;
    if (prev?.status === 'done') return { ...prev, cached: true };
    this.calls++;
    const v = await this.fn(task, input);
    const j: Judgement<K> =
      v === undefined
        ? {
            key,
            task,
            judgeId: this.id,
            inputHash,
            promptHash: null,
            input,
            raw: null,
            verdict: null,
            status: 'error',
            error: 'callback gave no verdict',
            at: new Date().toISOString(),
          }
        : {
            key,
            task,
            judgeId: this.id,
            inputHash,
            promptHash: null,
            input,
            raw: JSON.stringify(v),
            verdict: v,
            status: 'done',
            at: new Date().toISOString(),
          };
    await this.store.put(j as Judgement, ctx);
    return j;
  }
}
