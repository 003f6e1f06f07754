/**
 * Tool registry: turns a model's tool call (name + raw JSON arguments) into a {@link ToolResult},
 * never throwing. Malformed JSON, unknown tools, arguments that break the tool's JSON schema, and
 * exceptions thrown by the tool all become error observations telling the model what was wrong.
 * Source: issue 5 "Agent loop" (error observations); spec §3.3 (DDR "Tool call format error").
 */
import type { JsonSchema, ToolCall, ToolContext, ToolDefinition, ToolResult } from './types.ts';
import type { LlmToolSpec } from './llm.ts';

const typeOf = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v;

function matchesType(v: unknown, t: string): boolean {
  const actual = typeOf(v);
  if (t === 'number') return actual === 'number' || actual === 'integer';
  return actual === t;
}

/**
 * Validates a value against the supported JSON-schema subset.
 * @returns a list of problems like `answer: expected number or array, got string` (empty when valid).
 */
export function validateAgainstSchema(schema: JsonSchema, value: unknown, path = 'arguments'): string[] {
  const errs: string[] = [];
  if (schema.anyOf) {
    const all = schema.anyOf.map((s) => validateAgainstSchema(s, value, path));
    if (all.some((e) => e.length === 0)) return [];
    const types = schema.anyOf
      .map((s) => (Array.isArray(s.type) ? s.type.join(' or ') : (s.type ?? 'value')))
      .join(' or ');
    return [`${path}: expected ${types}, got ${typeOf(value)}`];
  }
  if (schema.type) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => matchesType(value, t))) {
      return [`${path}: expected ${types.join(' or ')}, got ${typeOf(value)}`];
    }
  }
  if (schema.enum && !schema.enum.some((e) => e === value)) {
    errs.push(
      `${path}: must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}, got ${JSON.stringify(value)}`,
    );
  }
  if (typeof value === 'number') {
    if (schema.minimum != null && value < schema.minimum) errs.push(`${path}: must be ≥ ${schema.minimum}`);
    if (schema.maximum != null && value > schema.maximum) errs.push(`${path}: must be ≤ ${schema.maximum}`);
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((v, i) => errs.push(...validateAgainstSchema(schema.items!, v, `${path}[${i}]`)));
  }
  if (typeOf(value) === 'object' && (schema.properties || schema.required)) {
    const obj = value as Record<string, unknown>;
    for (const r of schema.required ?? []) {
      if (obj[r] === undefined) errs.push(`${path}: missing required argument '${r}'`);
    }
    for (const [k, v] of Object.entries(obj)) {
      const ps = schema.properties?.[k];
      if (ps) {
        if (v !== undefined && !(v === null && !(schema.required ?? []).includes(k))) {
          errs.push(...validateAgainstSchema(ps, v, k));
        }
      } else if (schema.additionalProperties === false) {
        errs.push(`unknown argument '${k}' (expected: ${Object.keys(schema.properties ?? {}).join(', ') || 'none'})`);
      }
    }
  }
  return errs;
}

/** Parses a tool call's argument string. Empty → `{}`. */
export function parseToolArguments(
  text: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  if (text == null || text.trim() === '') return { ok: true, value: {} };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `invalid JSON (${(e as Error).message})` };
  }
  if (typeOf(v) !== 'object') return { ok: false, error: `arguments must be a JSON object, got ${typeOf(v)}` };
  return { ok: true, value: v as Record<string, unknown> };
}

/** The tools of one run, by name. */
export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();

  /** @throws Error on duplicate tool names (a programming error in a tool set). */
  constructor(tools: ToolDefinition[]) {
    for (const t of tools) {
      if (this.tools.has(t.name)) throw new Error(`duplicate tool name '${t.name}'`);
      this.tools.set(t.name, t);
    }
  }

  /** Tool names in registration order. */
  names(): string[] {
    return [...this.tools.keys()];
  }

  /** The tool named `name`, if any. */
  get(name: string): ToolDefinition | undefined {
    return this.tools.get(name);
  }

  /** Tool specs as sent to the model. */
  specs(): LlmToolSpec[] {
    return [...this.tools.values()].map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.parameters,
    }));
  }

  /**
   * Runs one tool call. Never throws (except when `ctx.signal` is aborted: then the tool's abort error propagates
   * as an error observation too).
   * @returns the tool's result, or an `isError` result explaining the problem.
   */
  async invoke(call: ToolCall, ctx: ToolContext): Promise<ToolResult> {
    const name = call.function?.name ?? '';
    const tool = this.tools.get(name);
    if (!tool) {
      return {
        isError: true,
        observation: `Error: unknown tool '${name}'. Available tools: ${this.names().join(', ')}.`,
      };
    }
    const parsed = parseToolArguments(call.function.arguments);
    if (!parsed.ok) {
      return {
        isError: true,
        observation: `Error: tool call format error for '${name}': ${parsed.error}. Send the arguments as one JSON object matching the tool's schema, e.g. ${exampleArgs(tool.parameters)}.`,
      };
    }
    const problems = validateAgainstSchema(tool.parameters, parsed.value);
    if (problems.length) {
      return { isError: true, observation: `Error: wrong arguments for '${name}': ${problems.join('; ')}.` };
    }
    try {
      return await tool.run(parsed.value, ctx);
    } catch (e) {
      return {
        isError: true,
        observation: `Error: tool '${name}' failed: ${e instanceof Error ? e.message : String(e)}`,
      };
    }
  }
}

function exampleArgs(schema: JsonSchema): string {
  const req = schema.required ?? [];
  const ex: Record<string, unknown> = {};
  for (const k of req) {
    const t = schema.properties?.[k]?.type;
    const tt = Array.isArray(t) ? t[0] : t;
    ex[k] =
      tt === 'number' || tt === 'integer'
        ? 1
        : tt === 'array'
          ? []
          : tt === 'boolean'
            ? true
            : tt === 'object'
              ? {}
              : '...';
  }
  return JSON.stringify(ex);
}
