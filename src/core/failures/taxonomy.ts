/**
 * Failure taxonomies as data: a taxonomy is a named list of failure classes, each with a definition and the source
 * of that definition (a paper section, or "Loupe's own"). Benchmarks declare theirs in their folder
 * (`BenchmarkDefinition.failureAnalysis.taxonomy`); users add more as JSON files in `.loupe/taxonomies/` of the
 * workspace, validated against {@link TAXONOMY_SCHEMA} (ajv). Source: issue 19; `../shared/spec/benchmarks.md` §7.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateSchema, type MiniSchema } from '../eval/judges/schema.ts';
import { LoupeInputError } from '../util/errors.ts';

/** One failure class of a taxonomy. */
export interface FailureClass {
  /** Stable id (lower-case words joined by `-`), what tags store. */
  id: string;
  /** Display name. */
  label: string;
  /** Group the class belongs to (DDR: "Failure in exploration"), if the taxonomy groups its classes. */
  group?: string;
  /** What the class means, as its source defines it (paraphrased from the paper, or Loupe's wording when Loupe's own). */
  definition: string;
  /** Where the definition comes from (`DDR-Bench paper §6, Fig. 8`), when it differs from the taxonomy's source. */
  source?: string;
}

/** Where a taxonomy comes from: a paper, Loupe's own design, or the user's workspace. */
export type TaxonomyOrigin = 'paper' | 'loupe' | 'workspace';

/** A failure taxonomy. */
export interface Taxonomy {
  /** Unique id (`ddr`, `analystbench-report`, or a workspace file's own id). */
  id: string;
  title: string;
  origin: TaxonomyOrigin;
  /** The paper section (or "Loupe, issue 19") the classes come from; the file path for workspace taxonomies. */
  source: string;
  /** What is tagged: trajectory steps, report text, or both. */
  unit: 'step' | 'sentence' | 'both';
  classes: FailureClass[];
}

/** JSON Schema of a taxonomy file (`.loupe/taxonomies/*.json`). */
export const TAXONOMY_SCHEMA: MiniSchema = {
  type: 'object',
  required: ['id', 'title', 'classes'],
  properties: {
    id: { type: 'string', description: 'unique id of the taxonomy' },
    title: { type: 'string' },
    source: { type: 'string', description: 'where the classes come from' },
    unit: { type: 'string', enum: ['step', 'sentence', 'both'] },
    classes: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['id', 'label', 'definition'],
        properties: {
          id: { type: 'string' },
          label: { type: 'string' },
          group: { type: 'string' },
          definition: { type: 'string' },
          source: { type: 'string' },
        },
      },
    },
  },
};

/** Where workspace taxonomies live, relative to the workspace folder. */
export const WORKSPACE_TAXONOMY_DIR = join('.loupe', 'taxonomies');

const ID = /^[a-z0-9][a-z0-9._-]*$/;

/**
 * Checks a taxonomy value: the schema ({@link TAXONOMY_SCHEMA}, ajv), ids of the form `lower-case-words`, unique
 * class ids, non-empty labels and definitions.
 * @param v the parsed value; `where` names it in errors (a file path, or `taxonomy ddr`); `origin` is recorded.
 * @returns the taxonomy (source defaults to `where`, unit to `both`).
 * @throws LoupeInputError naming `where` (and `lineOf(path)` when given, for files) and every problem.
 */
export function validateTaxonomy(
  v: unknown,
  where: string,
  origin: TaxonomyOrigin,
  lineOf?: (jsonPath: string) => number | undefined,
): Taxonomy {
  const problems = validateSchema(v, TAXONOMY_SCHEMA);
  const at = (path: string) => {
    // a missing property has no line of its own: the line of the nearest enclosing value that exists
    for (let p = path; lineOf && p; p = p.replace(/(\.[^.[\]]+|\[\d+\])$/, '')) {
      const line = lineOf(p);
      if (line) return `${where}:${line}`;
      if (!/(\.[^.[\]]+|\[\d+\])$/.test(p)) break;
    }
    return where;
  };
  if (problems.length) {
    const first = problems[0]!.split(':')[0]!;
    throw new LoupeInputError(at(first), `is not a failure taxonomy: ${problems.join('; ')}`);
  }
  const t = v as Omit<Taxonomy, 'origin'> & { origin?: unknown };
  if (!ID.test(t.id)) {
    throw new LoupeInputError(at('$.id'), `taxonomy id '${t.id}' must be lower-case letters, digits, '-', '_' or '.'`);
  }
  const seen = new Set<string>();
  t.classes.forEach((c, i) => {
    const p = `$.classes[${i}]`;
    if (!ID.test(c.id)) {
      throw new LoupeInputError(
        at(`${p}.id`),
        `class ${i + 1}: id '${c.id}' must be lower-case letters, digits, '-', '_' or '.'`,
      );
    }
    if (seen.has(c.id)) throw new LoupeInputError(at(`${p}.id`), `class ${i + 1}: id '${c.id}' is used twice`);
    seen.add(c.id);
    if (!c.label.trim()) throw new LoupeInputError(at(`${p}.label`), `class ${c.id}: label is empty`);
    if (!c.definition.trim()) {
      throw new LoupeInputError(
        at(`${p}.definition`),
        `class ${c.id}: definition is empty (say what the class means and where that comes from)`,
      );
    }
  });
  return {
    id: t.id,
    title: t.title,
    origin,
    source: t.source?.trim() || where,
    unit: t.unit ?? 'both',
    classes: t.classes.map((c) => ({
      id: c.id,
      label: c.label,
      ...(c.group ? { group: c.group } : {}),
      definition: c.definition,
      ...(c.source ? { source: c.source } : {}),
    })),
  };
}

/** 1-based line of a character offset. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * The line where a JSON path (`$.classes[2].id`) starts in a JSON text, found by walking the text with the path's
 * keys and indices (strings and nesting aware). @returns undefined when the path is not found.
 */
export function jsonPathLine(text: string, path: string): number | undefined {
  const parts = [...path.replace(/^\$/, '').matchAll(/\.([^.[\]]+)|\[(\d+)\]/g)].map((m) =>
    m[1] !== undefined ? m[1] : Number(m[2]),
  );
  let i = 0;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const skipString = () => {
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') i++;
      i++;
    }
    i++;
  };
  const skipValue = (): void => {
    ws();
    const c = text[i];
    if (c === '"') return skipString();
    if (c === '{' || c === '[') {
      let depth = 0;
      while (i < text.length) {
        const d = text[i]!;
        if (d === '"') {
          skipString();
          continue;
        }
        if (d === '{' || d === '[') depth++;
        if (d === '}' || d === ']') {
          depth--;
          if (depth === 0) {
            i++;
            return;
          }
        }
        i++;
      }
      return;
    }
    while (i < text.length && !/[,}\]\s]/.test(text[i]!)) i++;
  };
  for (let k = 0; k < parts.length; k++) {
    const p = parts[k]!;
    ws();
    if (typeof p === 'number') {
      if (text[i] !== '[') return undefined;
      i++;
      for (let n = 0; n < p; n++) {
        skipValue();
        ws();
        if (text[i] !== ',') return undefined;
        i++;
      }
      ws();
      continue;
    }
    if (text[i] !== '{') return undefined;
    i++;
    for (;;) {
      ws();
      if (text[i] !== '"') return undefined;
      const start = i;
      skipString();
      const key = JSON.parse(text.slice(start, i)) as string;
      ws();
      if (text[i] !== ':') return undefined;
      i++;
      ws();
      if (key === p) {
        if (k === parts.length - 1) return lineAt(text, start);
        break;
      }
      skipValue();
      ws();
      if (text[i] !== ',') return undefined;
      i++;
    }
  }
  return lineAt(text, i);
}

/**
 * Parses a taxonomy file's text.
 * @param text the JSON text; `file` names it in errors.
 * @throws LoupeInputError naming `file:line`: JSON that does not parse (the line of the syntax error), or a value
 *   that is not a taxonomy (the line of the first problem).
 */
export function parseTaxonomyText(text: string, file: string): Taxonomy {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const pos = /position (\d+)/.exec(msg);
    const line =
      /line (\d+)/.exec(msg)?.[1] ??
      (pos ? String(lineAt(text, Number(pos[1]))) : text.trim() ? String(lineAt(text, text.length)) : '1');
    throw new LoupeInputError(
      `${file}:${line}`,
      `is not valid JSON (${msg.replace(/\s*\(line \d+ column \d+\)/, '')}); the taxonomy was not loaded`,
    );
  }
  return validateTaxonomy(v, file, 'workspace', (p) => jsonPathLine(text, p));
}

/** Workspace taxonomies found, and the files that could not be loaded (each with its error). */
export interface WorkspaceTaxonomies {
  taxonomies: Taxonomy[];
  errors: Array<{ file: string; message: string }>;
}

/**
 * Loads every `*.json` of `<workspace>/.loupe/taxonomies/` (sorted by name). A file that does not load is reported
 * in `errors` and skipped: the other taxonomies still load. Two files with one id: the second is an error.
 * @param workspace the workspace folder. @returns taxonomies and errors (both empty when the folder does not exist).
 */
export function loadWorkspaceTaxonomies(workspace: string): WorkspaceTaxonomies {
  const dir = join(workspace, WORKSPACE_TAXONOMY_DIR);
  const out: WorkspaceTaxonomies = { taxonomies: [], errors: [] };
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)
    .filter((n) => n.toLowerCase().endsWith('.json'))
    .sort()) {
    const file = join(dir, name);
    try {
      const t = parseTaxonomyText(readFileSync(file, 'utf8'), file);
      if (out.taxonomies.some((x) => x.id === t.id)) {
        throw new LoupeInputError(file, `taxonomy id '${t.id}' is already used by another file in ${dir}`);
      }
      out.taxonomies.push(t);
    } catch (e) {
      out.errors.push({ file, message: e instanceof Error ? e.message : String(e) });
    }
  }
  return out;
}

/**
 * Checks classes against a taxonomy.
 * @param classes class ids as given; `where` names the tag in errors.
 * @returns the classes, deduplicated, in the taxonomy's order.
 * @throws LoupeInputError when the list is empty or a class is not in the taxonomy (naming it and the known ones).
 */
export function checkClasses(taxonomy: Taxonomy, classes: readonly string[], where: string): string[] {
  if (!classes.length) throw new LoupeInputError(where, `choose at least one class of ${taxonomy.title}`);
  const known = new Set(taxonomy.classes.map((c) => c.id));
  const bad = classes.filter((c) => !known.has(c));
  if (bad.length) {
    throw new LoupeInputError(
      where,
      `${bad.map((b) => `'${b}'`).join(', ')} ${bad.length === 1 ? 'is' : 'are'} not a class of taxonomy ${taxonomy.id} (${taxonomy.classes.map((c) => c.id).join(', ')})`,
    );
  }
  const set = new Set(classes);
  return taxonomy.classes.map((c) => c.id).filter((c) => set.has(c));
}
