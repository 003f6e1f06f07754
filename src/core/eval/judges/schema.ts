/**
 * A small JSON-Schema validator (the subset the judge schemas use: type, properties, required,
 * items, enum, minimum, maximum, minItems) and a tolerant JSON extractor for model replies.
 * Source: issue 8 "JSON output validated against a schema".
 */

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

/**
 * Validates a value against a {@link MiniSchema}.
 * @param v the value; `s` the schema; `path` prefix for messages.
 * @returns a list of problems (`$.score: must be ≤ 5`); empty when valid.
 */
export function validateSchema(v: unknown, s: MiniSchema, path = '$'): string[] {
  const out: string[] = [];
  if (s.enum && !s.enum.some((e) => e === v)) out.push(`${path}: must be one of ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  switch (s.type) {
    case 'object': {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return [...out, `${path}: must be an object`];
      const o = v as Record<string, unknown>;
      for (const r of s.required ?? []) if (!(r in o)) out.push(`${path}.${r}: is required`);
      for (const [k, ps] of Object.entries(s.properties ?? {})) if (k in o) out.push(...validateSchema(o[k], ps, `${path}.${k}`));
      break;
    }
    case 'array':
      if (!Array.isArray(v)) return [...out, `${path}: must be an array`];
      if (s.minItems !== undefined && v.length < s.minItems) out.push(`${path}: needs at least ${s.minItems} items`);
      if (s.items) v.forEach((x, i) => out.push(...validateSchema(x, s.items!, `${path}[${i}]`)));
      break;
    case 'string':
      if (typeof v !== 'string') out.push(`${path}: must be a string`);
      break;
    case 'boolean':
      if (typeof v !== 'boolean') out.push(`${path}: must be a boolean`);
      break;
    case 'number':
    case 'integer':
      if (typeof v !== 'number' || !Number.isFinite(v)) out.push(`${path}: must be a number`);
      else {
        if (s.type === 'integer' && !Number.isInteger(v)) out.push(`${path}: must be an integer`);
        if (s.minimum !== undefined && v < s.minimum) out.push(`${path}: must be ≥ ${s.minimum}`);
        if (s.maximum !== undefined && v > s.maximum) out.push(`${path}: must be ≤ ${s.maximum}`);
      }
      break;
    default:
  }
  return out;
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
