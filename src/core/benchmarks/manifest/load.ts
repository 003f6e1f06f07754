/**
 * Reads a manifest benchmark's files into the common {@link Suite} model: the item file (JSONL, JSON list or CSV; one
 * row per item), the gold file, blocks grouped by a field, the data files each item names. Every problem names the
 * file and line or row. Source: issue 44.
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { LoupeInputError } from '../../util/errors.ts';
import { pyJsonLoads, PyJsonError } from '../../eval/numpy-python.ts';
import { globMatcher } from '../../suites/glob.ts';
import { listAllFiles } from '../../suites/files.ts';
import { safeId } from '../../suites/util.ts';
import type { Suite, VisibleFile } from '../../suites/types.ts';
import type { Manifest } from './manifest.ts';
import type { ManifestBlock, ManifestGold, ManifestItem } from './items.ts';

/** One row of an item or gold file with where it was read (`file:line`). */
export interface SourceRow {
  row: Record<string, unknown>;
  origin: string;
}

/**
 * The rows of a table file: `.jsonl` (one JSON object a line, read as Python's `json.loads`), `.json` (a list of
 * objects) or `.csv` (header row; values as text).
 * @throws LoupeInputError naming `file:line` of a row that is not a JSON object, or the file when it cannot be read.
 */
export function readRows(file: string): SourceRow[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new LoupeInputError(file, `cannot read (${(e as Error).message})`, { cause: e });
  }
  const name = basename(file);
  if (file.endsWith('.csv')) {
    let rows: Record<string, string>[];
    try {
      rows = parseCsv(text, { columns: true, skip_empty_lines: true, bom: true }) as Record<string, string>[];
    } catch (e) {
      throw new LoupeInputError(file, `not a CSV file with a header row (${(e as Error).message})`, { cause: e });
    }
    return rows.map((row, i) => ({ row, origin: `${name}:row ${i + 2}` }));
  }
  if (file.endsWith('.json')) {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (e) {
      throw new LoupeInputError(file, `not valid JSON (${(e as Error).message})`, { cause: e });
    }
    if (!Array.isArray(v)) throw new LoupeInputError(file, 'must be a JSON list of objects, one per item');
    return v.map((row, i) => {
      if (!row || typeof row !== 'object' || Array.isArray(row)) {
        throw new LoupeInputError(`${file}[${i}]`, 'not a JSON object');
      }
      return { row: row as Record<string, unknown>, origin: `${name}[${i}]` };
    });
  }
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((line, i) => {
    let v: unknown;
    try {
      v = pyJsonLoads(line);
    } catch (e) {
      throw new LoupeInputError(
        `${file}:${i + 1}`,
        `not a JSON object (${e instanceof PyJsonError ? e.message : String(e)})`,
        { cause: e },
      );
    }
    if (!v || typeof v !== 'object' || Array.isArray(v)) {
      throw new LoupeInputError(`${file}:${i + 1}`, 'not a JSON object');
    }
    return { row: v as Record<string, unknown>, origin: `${name}:${i + 1}` };
  });
}

/** A field's value as text ('' when absent or null; lists joined by newlines; other values as JSON). */
function text(v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return v.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join('\n');
  return typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v);
}

/** An id value as the key Loupe uses (numbers as Python prints ints; strings as they are). */
export function idKey(v: unknown): string {
  return typeof v === 'boolean' ? (v ? '1' : '0') : typeof v === 'number' ? String(v) : String(v);
}

/** Inside `root` (no `..`, not absolute)? */
function inside(root: string, p: string): boolean {
  const r = relative(root, p);
  return r !== '' && !r.startsWith('..') && !r.startsWith(sep) && !resolve(r).startsWith('..');
}

/**
 * The gold of every item, by item id, from the gold file (rows in file order).
 * @throws LoupeInputError naming `file:line` of a row without the id or answer field or with an answer of the wrong shape.
 */
export function readGold(
  m: Manifest,
  root: string,
): { file: string; gold: Map<string, ManifestGold & { idRaw: unknown }> } {
  const file = resolve(root, m.gold.file);
  if (!inside(root, file)) throw new LoupeInputError(`gold.file`, `'${m.gold.file}' is outside the suite root ${root}`);
  const gold = new Map<string, ManifestGold & { idRaw: unknown }>();
  for (const { row, origin } of readRows(file)) {
    if (!(m.gold.id in row)) throw new LoupeInputError(join(root, origin), `no field '${m.gold.id}' (gold.id)`);
    if (!(m.gold.answer in row)) {
      throw new LoupeInputError(join(root, origin), `no field '${m.gold.answer}' (gold.answer)`);
    }
    const a = row[m.gold.answer];
    let answers: Array<[string, string]>;
    const shape = m.gold.shape ?? 'value';
    if (shape === 'pairs') {
      if (!Array.isArray(a) || !a.every((p) => Array.isArray(p) && p.length === 2 && typeof p[0] === 'string')) {
        throw new LoupeInputError(
          join(root, origin),
          `'${m.gold.answer}' must be a list of [name, value] pairs (gold.shape: pairs)`,
        );
      }
      answers = (a as unknown[][]).map((p) => [p[0] as string, text(p[1])]);
    } else if (shape === 'object') {
      if (!a || typeof a !== 'object' || Array.isArray(a)) {
        throw new LoupeInputError(
          join(root, origin),
          `'${m.gold.answer}' must be an object {name: value} (gold.shape: object)`,
        );
      }
      answers = Object.entries(a as Record<string, unknown>).map(([k, v]) => [k, text(v)]);
    } else {
      answers = [['answer', text(a)]];
    }
    const id = idKey(row[m.gold.id]);
    if (!gold.has(id)) gold.set(id, { answers, idRaw: row[m.gold.id] });
  }
  return { file, gold };
}

/**
 * Loads a manifest benchmark from its data root.
 * @param m the manifest; `root` the suite root (`--root`), the folder the manifest's paths are relative to.
 * @returns the suite: one block per value of `blocks.by` (else per item), in first-seen order.
 * @throws LoupeInputError for a missing root, item or gold file, a row without its id or instruction, or a duplicate id.
 */
export function loadManifestSuite(m: Manifest, rootIn: string): Suite {
  const root = resolve(rootIn);
  try {
    if (!statSync(root).isDirectory()) throw new Error('not a folder');
  } catch {
    throw new LoupeInputError(root, `not a folder (the ${m.title} suite root: the folder holding ${m.items.file})`);
  }
  const itemsFile = resolve(root, m.items.file);
  if (!inside(root, itemsFile)) {
    throw new LoupeInputError('items.file', `'${m.items.file}' is outside the suite root ${root}`);
  }
  const rows = readRows(itemsFile);
  const { file: goldFile, gold } = readGold(m, root);
  const dataDir = m.data?.dir ? resolve(root, m.data.dir) : root;
  const problems: string[] = [];
  const groups = new Map<
    string,
    { key: string; items: ManifestItem[]; files: Map<string, VisibleFile>; missing: string[] }
  >();
  const seen = new Set<string>();
  for (const { row, origin } of rows) {
    const where = join(root, origin);
    if (!(m.items.id in row)) throw new LoupeInputError(where, `no field '${m.items.id}' (items.id)`);
    const id = idKey(row[m.items.id]);
    if (seen.has(id)) throw new LoupeInputError(where, `item id '${id}' appears twice`);
    seen.add(id);
    const instruction = text(row[m.items.instruction]);
    if (!instruction) throw new LoupeInputError(where, `no instruction (field '${m.items.instruction}')`);
    const key = m.blocks?.by ? text(row[m.blocks.by]) || '(none)' : id;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { key, items: [], files: new Map(), missing: [] }));
    const files: string[] = [];
    if (m.data?.field) {
      const v = row[m.data.field];
      for (const name of (Array.isArray(v) ? v : v === undefined || v === null || v === '' ? [] : [v]).map(String)) {
        const path = resolve(dataDir, name);
        const rel = `data/${relative(dataDir, path).split(sep).join('/')}`;
        if (!inside(dataDir, path)) {
          problems.push(`${where}: data file '${name}' is outside ${dataDir}; not made visible`);
          continue;
        }
        files.push(rel);
        try {
          g.files.set(rel, { path, rel, size: statSync(path).size });
        } catch {
          if (!g.missing.includes(path)) g.missing.push(path);
        }
      }
    }
    const metadata: Record<string, unknown> = {};
    for (const f of m.items.metadata ?? []) if (f in row) metadata[f] = row[f];
    g.items.push({
      type: 'manifest-item',
      id,
      instruction,
      constraints: m.items.constraints ? text(row[m.items.constraints]) : '',
      answerFormat: m.items.answerFormat ? text(row[m.items.answerFormat]) : '',
      metadata,
      files,
      origin,
    });
  }
  const shared: VisibleFile[] = [];
  if (m.data?.files?.length) {
    const all = (listAllFiles(dataDir) ?? []).map((p) => relative(dataDir, p).split(sep).join('/'));
    const matchers = m.data.files.map((g) => globMatcher(g, 'data.files'));
    for (const rel of all) {
      if (!matchers.some((f) => f(rel))) continue;
      const path = join(dataDir, rel);
      shared.push({ path, rel: `data/${rel}`, size: statSync(path).size });
    }
  }
  const docs: VisibleFile[] = [];
  if (m.docs?.files?.length) {
    const all = (listAllFiles(root) ?? []).map((p) => relative(root, p).split(sep).join('/'));
    const matchers = m.docs.files.map((g) => globMatcher(g, 'docs.files'));
    for (const rel of all) {
      if (matchers.some((f) => f(rel))) {
        docs.push({ path: join(root, rel), rel: `docs/${rel}`, size: statSync(join(root, rel)).size });
      }
    }
  }
  const suiteId = `${m.kind}:${basename(root)}`;
  const used = new Set<string>();
  const blocks: ManifestBlock[] = [...groups.values()].map((g) => {
    let bid = safeId(g.key);
    for (let n = 2; used.has(bid); n++) bid = `${safeId(g.key)}-${n}`;
    used.add(bid);
    const blockGold: Record<string, ManifestGold> = {};
    const bp: string[] = [];
    for (const it of g.items) {
      const gd = gold.get(it.id);
      if (gd) blockGold[it.id] = { answers: gd.answers };
      else bp.push(`item ${it.id} (${it.origin}) has no gold answer in ${m.gold.file}`);
    }
    for (const p of g.missing) bp.push(`data file ${p} does not exist`);
    const data = [...g.files.values(), ...shared];
    const runnable = data.length + docs.length > 0 || !m.data;
    if (!runnable) bp.push('no data file exists for this block; not runnable');
    return {
      id: bid,
      suite: m.kind,
      suiteId,
      title: (m.blocks?.title ?? '{value}').replace(/\{value\}/g, g.key),
      items: g.items,
      visible: { data, docs, missing: g.missing },
      hidden: { files: [goldFile], gold: blockGold },
      runnable,
      problems: bp,
    };
  });
  return {
    id: suiteId,
    kind: m.kind,
    title: m.title,
    version: m.version ?? 'unknown',
    root,
    source: {
      kind: 'local',
      root,
      ...(m.upstream ? { upstream: m.upstream } : {}),
      ...(m.version ? { revision: m.version } : {}),
    },
    blocks,
    problems,
  };
}
