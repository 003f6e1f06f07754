/**
 * Judge verdict schemas (the JSON-Schema subset they use: type, properties, required, items, enum, minimum,
 * maximum, minItems), validated with ajv, and a tolerant JSON extractor for model replies.
 * Source: issue 8 "JSON output validated against a schema".
 */
import { createRequire } from 'node:module';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';

/** The schema subset used by judge verdicts. */
export interface MiniSchema {
  type?: 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean';
  properties?: Record<string, MiniSchema>;
  required?: string[];
  items?: MiniSchema;
  enum?: readonly unknown[];
  minimum?: number;
  maximum?: number;
  minItems?: number;
  description?: string;
}

let ajv: Ajv | undefined;
const compiled = new WeakMap<MiniSchema, ValidateFunction>();

/**
 * The validator, loaded on the first validation rather than with this module: ajv (~250 KB) cost every process
 * that only needs the schemas — the annotation panel's host side, the CLI — ~30 ms at start (issue 23). A bundle
 * keeps ajv inside (esbuild bundles the literal `require('ajv')` and runs it on the first call); run from source
 * (ES modules) it is required from node_modules.
 */
function validator(): Ajv {
  if (!ajv) {
    // The literal require() is what makes it lazy in bundles.
    let mod: typeof import('ajv');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    if (typeof require === 'function') mod = require('ajv') as typeof import('ajv');
    else mod = createRequire(import.meta.url)('ajv') as typeof import('ajv');
    ajv = new mod.Ajv({ allErrors: true, strict: false });
  }
  return ajv;
}

/** `/a/0/b` (JSON pointer) → `$.a[0].b`. */
function pathOf(base: string, pointer: string): string {
  return (
    base +
    pointer
      .split('/')
      .slice(1)
      .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p.replace(/~1/g, '/').replace(/~0/g, '~')}`))
      .join('')
  );
}

/** One ajv error in the words judge errors have always used (`$.score: must be ≤ 5`). */
function describe(e: ErrorObject, base: string): string {
  const at = pathOf(base, e.instancePath);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `${at}.${String(p.missingProperty)}: is required`;
    case 'enum':
      return `${at}: must be one of ${(p.allowedValues as unknown[]).map((x) => JSON.stringify(x)).join(', ')}`;
    case 'type':
      return `${at}: must be ${p.type === 'object' ? 'an object' : p.type === 'array' ? 'an array' : p.type === 'integer' ? 'an integer' : `a ${String(p.type)}`}`;
    case 'minimum':
      return `${at}: must be ≥ ${String(p.limit)}`;
    case 'maximum':
      return `${at}: must be ≤ ${String(p.limit)}`;
    case 'minItems':
      return `${at}: needs at least ${String(p.limit)} items`;
    default:
      return `${at}: ${e.message ?? e.keyword}`;
  }
}

/**
 * Validates a value against a {@link MiniSchema} with ajv (JSON Schema draft-07 semantics).
 * @param v the value; `s` the schema; `path` prefix for messages.
 * @returns a list of problems (`$.score: must be ≤ 5`), required properties first; empty when valid.
 */
export function validateSchema(v: unknown, s: MiniSchema, path = '$'): string[] {
  let validate = compiled.get(s);
  if (!validate) {
    validate = validator().compile(s as object);
    compiled.set(s, validate);
  }
  if (typeof v === 'number' && !Number.isFinite(v) && (s.type === 'number' || s.type === 'integer')) {
    return [`${path}: must be a number`];
  }
  if (validate(v)) return [];
  const errs = validate.errors ?? [];
  const rank = (e: ErrorObject) => (e.keyword === 'required' ? 0 : 1);
  return [
    ...new Set(
      [...errs]
        .sort((a, b) => rank(a) - rank(b) || a.instancePath.localeCompare(b.instancePath))
        .map((e) => describe(e, path)),
    ),
  ];
}

/**
 * Repairs common, unambiguous deviations of model replies before validation: numeric strings where
 * numbers are expected (`"4"` → 4), `"true"`/`"false"` for booleans, enum values differing only in
 * case or surrounding spaces (`"correct_info"` → `"CORRECT_INFO"`). Anything else is left as is.
 * @param v the parsed reply; `s` the schema. @returns the repaired value (a copy where changed).
 */
export function relaxToSchema(v: unknown, s: MiniSchema): unknown {
  if (s.enum && typeof v === 'string') {
    const hit = s.enum.find((e) => typeof e === 'string' && e.toLowerCase() === v.trim().toLowerCase());
    if (hit !== undefined) return hit;
  }
  switch (s.type) {
    case 'object': {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
      const o = { ...(v as Record<string, unknown>) };
      for (const [k, ps] of Object.entries(s.properties ?? {})) if (k in o) o[k] = relaxToSchema(o[k], ps);
      return o;
    }
    case 'array':
      return Array.isArray(v) && s.items ? v.map((x) => relaxToSchema(x, s.items!)) : v;
    case 'number':
    case 'integer':
      return typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v) ? Number(v) : v;
    case 'boolean':
      return v === 'true' ? true : v === 'false' ? false : v;
    default:
      return v;
  }
}

/**
 * Extracts the JSON object from a model reply: the whole text, else a fenced ```json block, else the
 * first balanced `{...}` span.
 * @param text the reply.
 * @returns the parsed value, or undefined when no JSON object can be found.
 */
export function extractJson(text: string): unknown {
  const t = text.trim();
  const tryParse = (s: string): unknown => {
    try {
      return JSON.parse(s);
    } catch {
      return undefined;
    }
  };
  const whole = tryParse(t);
  if (whole !== undefined) return whole;
  const fence = /```(?:json)?\s*([\s\S]*?)```/i.exec(t);
  if (fence) {
    const f = tryParse(fence[1]!.trim());
    if (f !== undefined) return f;
  }
  const start = t.indexOf('{');
  if (start < 0) return undefined;
  let depth = 0;
  let inStr = false;
  for (let i = start; i < t.length; i++) {
    const c = t[i];
    if (inStr) {
      if (c === '\\') i++;
      else if (c === '"') inStr = false;
      continue;
    }
    if (c === '"') inStr = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return tryParse(t.slice(start, i + 1));
  }
  return undefined;
}
