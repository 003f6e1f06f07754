/**
 * The benchmark manifest (`loupe-benchmark.yaml` or `loupe-benchmark.json`): its typed shape, the JSON Schema shipped
 * with Loupe (`loupe-benchmark.schema.json`), and the reader that validates a manifest with ajv and names the file,
 * line and field of every problem (lines from the `yaml` package's node ranges). Source: issue 44.
 */
import { createRequire } from 'node:module';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { LineCounter, isMap, isSeq, parseDocument, type Node as YamlNode } from 'yaml';
import schema from './loupe-benchmark.schema.json' with { type: 'json' };
import { LoupeInputError } from '../../util/errors.ts';

/** The manifest file names looked for in a folder, in this order. */
export const MANIFEST_FILES = ['loupe-benchmark.yaml', 'loupe-benchmark.yml', 'loupe-benchmark.json'] as const;

/** The JSON Schema of a manifest (the object shipped in the package). */
export const MANIFEST_SCHEMA: object = schema;

/** One aggregation of item results into a metric (see the README's "Benchmark manifest" section). */
export interface ManifestAggregation {
  metric: string;
  label?: string;
  kind: 'per-item' | 'per-sub-answer' | 'proportional' | 'by-field' | 'by-field-count';
  field?: string;
  atLeast?: number;
}

/** A manifest as validated against {@link MANIFEST_SCHEMA}. */
export interface Manifest {
  kind: string;
  title: string;
  description?: string;
  version?: string;
  upstream?: string;
  clusterUnit?: string;
  items: {
    file: string;
    id: string;
    instruction: string;
    constraints?: string;
    answerFormat?: string;
    metadata?: string[];
  };
  blocks?: { by?: string; title?: string };
  data?: { dir?: string; field?: string; files?: string[] };
  docs?: { files?: string[] };
  gold: { file: string; id: string; answer: string; shape?: 'value' | 'pairs' | 'object' };
  tools?: Array<'python' | 'answer'>;
  prompt?: { system?: string; preamble?: string };
  scoring: {
    scorer: 'exact' | 'numeric-tolerance' | 'list' | 'regex-extract' | 'llm-judge' | 'checklist' | 'rubric' | 'python';
    rubric?: string;
    rubricLevels?: string[];
    passScore?: number;
    pattern?: string;
    compare?: 'exact' | 'numeric-tolerance';
    absolute?: number;
    relative?: number;
    inclusive?: boolean;
    caseSensitive?: boolean;
    strip?: boolean;
    separator?: string;
    ordered?: boolean;
    module?: string;
    timeoutSeconds?: number;
    round?: number;
    denominator?: { official?: 'answered' | 'all'; paper?: 'answered' | 'all' };
    aggregations?: ManifestAggregation[];
  };
  nativeOutputs?: { format?: 'jsonl'; id: string; response: string; help?: string };
  reference?: string;
}

/** A manifest read from disk: the manifest, its file and its folder (absolute). */
export interface LoadedManifest {
  manifest: Manifest;
  file: string;
  dir: string;
}

let ajv: Ajv | undefined;
let validate: ValidateFunction | undefined;

/** The compiled schema validator, built on first use (ajv loaded lazily as in `eval/judges/schema.ts`). */
function validator(): ValidateFunction {
  if (!validate) {
    // The literal require() is what makes it lazy in bundles.
    let mod: typeof import('ajv');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    if (typeof require === 'function') mod = require('ajv') as typeof import('ajv');
    else mod = createRequire(import.meta.url)('ajv') as typeof import('ajv');
    ajv = new mod.Ajv({ allErrors: true, strict: false });
    validate = ajv.compile(schema);
  }
  return validate;
}

/** `/scoring/aggregations/0/kind` → `scoring.aggregations[0].kind`. */
function fieldName(pointer: string, extra?: string): string {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  let out = '';
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out ? `.${p}` : p;
  return out || '(top level)';
}

/** One ajv error in words. */
function describe(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `missing required field '${String(p.missingProperty)}'`;
    case 'additionalProperties':
      return `unknown field '${String(p.additionalProperty)}'`;
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'type':
      return `must be ${String(p.type)}`;
    case 'pattern':
      return `must match ${String(p.pattern)}`;
    default:
      return e.message ?? e.keyword;
  }
}

/** The YAML node at a JSON pointer, or the deepest node above it that exists. */
function nodeAt(root: YamlNode | null, pointer: string): YamlNode | null {
  let node: YamlNode | null = root;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    let next: unknown;
    if (isMap(node)) next = node.get(key, true);
    else if (isSeq(node)) next = node.get(Number(key), true);
    if (!next || typeof next !== 'object') return node;
    node = next as YamlNode;
  }
  return node;
}

/**
 * Parses and validates manifest text.
 * @param text the file's text (YAML or JSON; JSON is read by the same YAML parser, so lines are known for both).
 * @param file the file named in errors.
 * @returns the manifest.
 * @throws LoupeInputError whose subject is `file:line` and whose message names the field (`scoring.scorer: must be one
 *   of ...`), every schema problem on its own line; or the YAML syntax error with its line.
 * Source: issue 44 ("errors name the file, line and field").
 */
export function parseManifest(text: string, file: string): Manifest {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    const line = lc.linePos(e.pos[0]).line;
    throw new LoupeInputError(
      `${file}:${line}`,
      `not valid ${file.endsWith('.json') ? 'JSON/' : ''}YAML: ${e.message.split('\n')[0]}`,
    );
  }
  const value = doc.toJS() as unknown;
  const v = validator();
  if (!v(value)) {
    const errs = (v.errors ?? []).filter(
      (e, i, all) =>
        all.findIndex(
          (o) =>
            o.instancePath === e.instancePath &&
            o.keyword === e.keyword &&
            JSON.stringify(o.params) === JSON.stringify(e.params),
        ) === i,
    );
    const lines = errs.map((e) => {
      const extra =
        e.keyword === 'additionalProperties'
          ? String((e.params as { additionalProperty: string }).additionalProperty)
          : undefined;
      const node = nodeAt(
        doc.contents as YamlNode | null,
        extra !== undefined ? `${e.instancePath}/${extra.replace(/~/g, '~0').replace(/\//g, '~1')}` : e.instancePath,
      );
      const line = node?.range ? lc.linePos(node.range[0]).line : 1;
      return { line, text: `${file}:${line}: ${fieldName(e.instancePath, extra)}: ${describe(e)}` };
    });
    lines.sort((a, b) => a.line - b.line);
    const first = lines[0]!;
    throw new LoupeInputError(
      `${file}:${first.line}`,
      `invalid benchmark manifest:\n${lines.map((l) => `  ${l.text}`).join('\n')}`,
    );
  }
  const m = value as Manifest;
  checkSemantics(m, file, doc.contents as YamlNode | null, lc);
  return m;
}

/** Rules the schema cannot say (a scorer's required fields, a regex that compiles). */
function checkSemantics(m: Manifest, file: string, root: YamlNode | null, lc: LineCounter): void {
  const fail = (pointer: string, message: string): never => {
    const node = nodeAt(root, pointer);
    const line = node?.range ? lc.linePos(node.range[0]).line : 1;
    throw new LoupeInputError(`${file}:${line}`, `invalid benchmark manifest: ${fieldName(pointer)}: ${message}`);
  };
  const s = m.scoring;
  if (s.scorer === 'regex-extract') {
    if (!s.pattern) fail('/scoring', 'the regex-extract scorer needs a pattern with two groups (name, value)');
    let re: RegExp | undefined;
    try {
      re = new RegExp(pythonPatternToJs(s.pattern!), 'gu');
    } catch (e) {
      fail('/scoring/pattern', `not a valid regular expression (${(e as Error).message})`);
    }
    if (new RegExp(`${re!.source}|`, 'u').exec('')!.length - 1 !== 2) {
      fail('/scoring/pattern', 'must have exactly two capturing groups: the sub-answer name and its value');
    }
  }
  if (s.scorer === 'python' && !s.module) {
    fail('/scoring', 'the python scorer needs module (a .py file in the manifest folder)');
  }
  if (
    (s.scorer === 'numeric-tolerance' || s.compare === 'numeric-tolerance') &&
    s.absolute === undefined &&
    s.relative === undefined
  ) {
    fail('/scoring', 'numeric-tolerance needs absolute or relative');
  }
  for (const [i, a] of (s.aggregations ?? []).entries()) {
    if ((a.kind === 'by-field' || a.kind === 'by-field-count') && !a.field) {
      fail(`/scoring/aggregations/${i}`, `${a.kind} needs field`);
    }
    if (a.field && !(m.items.metadata ?? []).includes(a.field)) {
      fail(
        `/scoring/aggregations/${i}/field`,
        `'${a.field}' is not one of items.metadata (${(m.items.metadata ?? []).join(', ') || 'none'})`,
      );
    }
  }
  const names = (s.aggregations ?? []).map((a) => a.metric);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) fail('/scoring/aggregations', `metric '${dup}' is named twice`);
}

/**
 * A Python `re` pattern in JavaScript syntax (the subset manifests use): `\w`, `\d`, `\s` and `.` with Python 3's
 * Unicode meaning for `str` patterns (`.` matches everything but `\n`). Source: Python `re` documentation.
 * @throws nothing; an invalid result surfaces when compiled.
 */
export function pythonPatternToJs(p: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '\\' && i + 1 < p.length) {
      const n = p[++i]!;
      if (n === 'w') out += inClass ? '\\p{L}\\p{N}_' : '[\\p{L}\\p{N}_]';
      else if (n === 'W') out += inClass ? '\\P{L}' : '[^\\p{L}\\p{N}_]';
      else if (n === 'd') out += inClass ? '\\p{Nd}' : '\\p{Nd}';
      else out += `\\${n}`;
      continue;
    }
    if (c === '[' && !inClass) inClass = true;
    else if (c === ']' && inClass) inClass = false;
    if (c === '.' && !inClass) {
      out += '[^\\n]';
      continue;
    }
    out += c;
  }
  return out;
}

/**
 * The manifest file of a folder, or undefined when it has none.
 * @param dir a folder (a file path is treated as having no manifest).
 */
export function manifestFileIn(dir: string): string | undefined {
  for (const f of MANIFEST_FILES) {
    const p = join(dir, f);
    try {
      if (statSync(p).isFile()) return p;
    } catch {
      /* not there */
    }
  }
  return undefined;
}

/**
 * Reads the manifest of a folder (or a manifest file given directly).
 * @returns the manifest with its file and folder.
 * @throws LoupeInputError naming the folder when it holds no manifest, or the file and line of a problem.
 */
export function readManifest(dirOrFile: string): LoadedManifest {
  const abs = resolve(dirOrFile);
  const file = existsSync(abs) && statSync(abs).isFile() ? abs : manifestFileIn(abs);
  if (!file) throw new LoupeInputError(abs, `no benchmark manifest (${MANIFEST_FILES.join(' or ')}) in this folder`);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new LoupeInputError(file, `cannot read the benchmark manifest (${(e as Error).message})`, { cause: e });
  }
  return { manifest: parseManifest(text, file), file, dir: resolve(file, '..') };
}
