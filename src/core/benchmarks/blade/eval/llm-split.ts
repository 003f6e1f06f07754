/**
 * LLM fallback for transform code the statement executor cannot split (rows added by merges,
 * concatenations, explode, …): an OpenAI-compatible model rewrites the transform as a list of
 * units, which are then executed one after another so every unit still gets real value hashes.
 * This is BLADE's code→transforms conversion (spec §1.4.1 step 3, paper Fig. 12/13) with our own
 * prompt; JSON replies are validated and one corrective retry is made. Used only as a fallback.
 */
import OpenAI from 'openai';
import { createHash } from 'node:crypto';
import { errorMessage } from '../../../util/errors.ts';
import type { TransformSplitFallback } from './score.ts';

export const SPLIT_VERBS = ['derive', 'filter', 'groupby', 'deduplicate', 'impute', 'rollup', 'orderby'] as const;

export interface LlmSplitConfig {
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Default 0; `null` sends none. */
  temperature?: number | null;
  timeoutMs?: number;
  /** Attempts when the reply is not valid (default 2). */
  maxAttempts?: number;
}

const SYSTEM = `You split pandas data-transformation code into small, self-contained steps for an evaluation tool.
Reply with JSON only: {"units": [{"code": "...", "verb": "...", "mapping": [[["input col", ...], "output col"]], "groupby_cols": []}]}.
Rules:
- Every unit's code operates on a DataFrame named df and leaves the result in df; units run one after another.
- Keep the original statements; do not add new logic. Helper variables and functions a unit needs go inside that unit.
- verb is one of: ${SPLIT_VERBS.join(', ')}.
- mapping lists, for each column the unit creates or changes, the columns it is computed from. Whole-table steps
  (filter, orderby, deduplicate) map their key columns to "" (the empty string).
- A step that aggregates by groups is "groupby" with the grouping columns in groupby_cols.
- Selecting or dropping columns is not a unit. Modelling code is not a unit.`;

type RawUnit = { code: string; verb: string; mapping: [string[], string][]; groupbyCols: string[] };

/**
 * Validates a model reply.
 * @returns the units, or an error message describing what is wrong.
 */
export function parseSplitReply(text: string): RawUnit[] | string {
  const m = text.match(/\{[\s\S]*\}/);
  if (!m) return 'no JSON object in the reply';
  let v: unknown;
  try {
    v = JSON.parse(m[0]);
  } catch (e) {
    return `invalid JSON: ${errorMessage(e)}`;
  }
  const units = (v as { units?: unknown }).units;
  if (!Array.isArray(units) || !units.length) return '"units" must be a non-empty list';
  const out: RawUnit[] = [];
  for (const [i, u] of units.entries()) {
    const o = u as Record<string, unknown>;
    if (typeof o.code !== 'string' || !o.code.trim()) return `units[${i}].code must be a non-empty string`;
    if (typeof o.verb !== 'string' || !(SPLIT_VERBS as readonly string[]).includes(o.verb)) {
      return `units[${i}].verb must be one of ${SPLIT_VERBS.join(', ')}`;
    }
    const mapping = o.mapping ?? [];
    if (
      !Array.isArray(mapping) ||
      mapping.some(
        (p) =>
          !Array.isArray(p) ||
          p.length !== 2 ||
          !Array.isArray(p[0]) ||
          (p[0] as unknown[]).some((c) => typeof c !== 'string') ||
          typeof p[1] !== 'string',
      )
    ) {
      return `units[${i}].mapping must be [[[inputs], output], ...]`;
    }
    const g = o.groupby_cols ?? [];
    if (!Array.isArray(g) || g.some((c) => typeof c !== 'string')) {
      return `units[${i}].groupby_cols must be a list of strings`;
    }
    out.push({ code: o.code, verb: o.verb, mapping: mapping as [string[], string][], groupbyCols: g as string[] });
  }
  return out;
}

/**
 * A {@link TransformSplitFallback} backed by an OpenAI-compatible endpoint, cached by code hash.
 * @throws Error (inside the returned function) when no valid reply is obtained; the scorer then keeps
 *   the execution-derived units and records `execution-with-unsplit-statements`.
 */
export function llmSplitFallback(cfg: LlmSplitConfig): TransformSplitFallback {
  const client = new OpenAI({
    baseURL: cfg.baseUrl,
    apiKey: cfg.apiKey || 'none',
    timeout: cfg.timeoutMs ?? 120_000,
    maxRetries: 3,
  });
  const cache = new Map<string, RawUnit[]>();
  return async (code, reason) => {
    const key = createHash('sha256').update(`${cfg.model}\u0000${code}`).digest('hex');
    const hit = cache.get(key);
    if (hit) return hit;
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: 'system', content: SYSTEM },
      {
        role: 'user',
        content: `Executing this code statement by statement could not attribute every step (${reason}).\n\n\`\`\`python\n${code}\n\`\`\``,
      },
    ];
    let last = '';
    for (let attempt = 0; attempt < (cfg.maxAttempts ?? 2); attempt++) {
      const r = await client.chat.completions.create({
        model: cfg.model,
        messages,
        ...(cfg.temperature === null ? {} : { temperature: cfg.temperature ?? 0 }),
      });
      const text = r.choices[0]?.message?.content ?? '';
      const parsed = parseSplitReply(text);
      if (typeof parsed !== 'string') {
        cache.set(key, parsed);
        return parsed;
      }
      last = parsed;
      messages.push(
        { role: 'assistant', content: text },
        { role: 'user', content: `That reply is not usable: ${parsed}. Reply with the JSON object only.` },
      );
    }
    throw new Error(`LLM transform split failed: ${last}`);
  };
}
