/**
 * Canonical JSON and sha256: the hashing every judgement cache key, judge input hash and annotation item id is
 * built from. A leaf module (node:crypto only), so code that hashes judge inputs — the annotation store and panel —
 * does not load the LLM client with `judge.ts` (issue 23: the annotation panel's first item).
 * Source: issue 8 "Judges" (moved out of judge.ts, which re-exports both).
 */
import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted (stable across key order), for hashing.
 * @param v any JSON-compatible value. @returns the canonical text.
 */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`;
}

/**
 * sha256 hex of a string.
 * @param s text. @returns 64 hex characters.
 */
export function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}
