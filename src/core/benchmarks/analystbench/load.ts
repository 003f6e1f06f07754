/**
 * AnalystBench-style report tasks. AnalystBench published no code (spec §4.0), so the manifest
 * format is Loupe's own; it is documented in `benchmarks/analystbench/README.md`. A task gives an
 * instruction, source globs (the documents and tables the agent may read), an optional table of
 * contents, a reference report (hidden) and an optional checklist (hidden). Source: spec §4.1.
 */
import { readdirSync } from 'node:fs';
import { basename, dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { LoupeInputError, errorMessage } from '../../util/errors.ts';
import { nullLogger } from '../../util/log.ts';
import type { Block, ChecklistItem, LoadSuiteOptions, Suite, VisibleFile } from '../../suites/types.ts';
import { fileSize, isDir, isFile, posixRelative, readJson, readUtf8, safeId } from '../../suites/util.ts';
import { readFetchStamp } from '../../suites/stamp.ts';
import { globFiles } from '../../suites/glob.ts';

/** Manifest format id; the only one this loader reads. */
export const MANIFEST_FORMAT = 'loupe-analystbench/1';

/** Extensions counted as data when `sources` is a flat list. */
const DATA_EXT = new Set([
  '.csv',
  '.tsv',
  '.xlsx',
  '.xls',
  '.xpt',
  '.sas7bdat',
  '.dat',
  '.sav',
  '.dta',
  '.parquet',
  '.json',
  '.jsonl',
  '.sqlite',
  '.db',
  '.gz',
  '.zip',
]);

/** The manifest as written on disk (see README). */
export interface AnalystManifest {
  format: string;
  id?: string;
  task: string;
  variant?: string;
  title?: string;
  instruction: string;
  base?: string;
  sources: string[] | { data?: string[]; docs?: string[] };
  tableOfContents?: string | { text: string };
  reference: string;
  checklist?: string;
  excluded?: string[];
}

/** Lists manifest files: `*.task.json` at the top and `<dir>/task.json` one level down. */
export function findManifests(root: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(root, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.name.startsWith('.')) continue;
    const p = join(root, e.name);
    if (e.isFile() && e.name.endsWith('.task.json')) out.push(p);
    else if ((e.isDirectory() || e.isSymbolicLink()) && isFile(join(p, 'task.json'))) out.push(join(p, 'task.json'));
  }
  return out;
}

/** Expands `${VAR}` from `env`; returns the names of unset variables instead of guessing. */
function expand(s: string, env: Record<string, string | undefined>, unset: string[]): string {
  return s.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, v: string) => {
    const val = env[v];
    if (val === undefined || val === '') {
      unset.push(v);
      return `\${${v}}`;
    }
    return val;
  });
}

/**
 * Loads a folder of AnalystBench-style task manifests.
 * @param root folder holding `*.task.json` files and/or `<task>/task.json`.
 * @param opts `env` for `${VAR}` expansion in `base` and paths (default `process.env`).
 * @returns one block per manifest. A manifest that is not valid JSON becomes a not-runnable block
 *   with the error; a wrong `format`, missing sources / reference / unset variables make a block not runnable.
 *   Source globs never include the reference report or the checklist (they are dropped with a problem).
 * @throws LoupeInputError for a missing or empty root, or a root holding no manifests.
 */
export function loadAnalystBench(root: string, opts: LoadSuiteOptions = {}): Suite {
  const log = opts.log ?? nullLogger;
  const env = opts.env ?? process.env;
  const dir = resolve(root);
  if (!isDir(dir)) throw new LoupeInputError(dir, 'AnalystBench root must be a folder of task manifests');
  if (readdirSync(dir).filter((n) => !n.startsWith('.')).length === 0) {
    throw new LoupeInputError(dir, 'empty folder: no task manifests');
  }
  const manifests = findManifests(dir);
  if (manifests.length === 0) {
    throw new LoupeInputError(dir, 'not an AnalystBench root: no *.task.json or <task>/task.json manifests');
  }
  const suiteId = `analystbench:${safeId(basename(dir))}`;
  const suiteProblems: string[] = [];
  const used = new Set<string>();
  const blocks: Block[] = manifests.map((file) => {
    const b = loadOne(file, env, suiteId);
    let id = b.id;
    for (let k = 2; used.has(id); k++) id = `${b.id}-${k}`;
    used.add(id);
    b.id = id;
    suiteProblems.push(...b.problems.filter((p) => p.startsWith(file) && /invalid JSON|not valid UTF-8/.test(p)));
    return b;
  });
  log.info(`AnalystBench: ${blocks.length} tasks from ${dir}`);
  const stamp = readFetchStamp(dir);
  return {
    id: suiteId,
    kind: 'analystbench',
    title: 'AnalystBench-style tasks',
    version: stamp?.revision ?? MANIFEST_FORMAT,
    root: dir,
    source: { kind: stamp ? 'fetched' : 'local', root: dir },
    blocks,
    problems: suiteProblems,
  };
}

function loadOne(file: string, env: Record<string, string | undefined>, suiteId: string): Block {
  const mdir = dirname(file);
  const fallbackId = safeId(basename(file) === 'task.json' ? basename(mdir) : basename(file, '.task.json'));
  const problems: string[] = [];
  const empty = (title: string): Block => ({
    id: fallbackId,
    suite: 'analystbench',
    suiteId,
    title,
    items: [],
    visible: { data: [], docs: [], missing: [] },
    // The manifest stays hidden even when it cannot be read (another task's wide glob must not show it).
    hidden: { files: [file], checklist: [] },
    runnable: false,
    problems,
    analyst: { manifest: file, task: fallbackId },
  });
  let m: AnalystManifest;
  try {
    const text = readUtf8(file);
    try {
      m = JSON.parse(text) as AnalystManifest;
    } catch (e) {
      problems.push(`${file}: invalid JSON (${errorMessage(e)})`);
      return empty(fallbackId);
    }
  } catch (e) {
    problems.push(errorMessage(e));
    return empty(fallbackId);
  }
  if (typeof m !== 'object' || m === null || Array.isArray(m)) {
    problems.push(`${file}: manifest must be a JSON object`);
    return empty(fallbackId);
  }
  const formatOk = m.format === MANIFEST_FORMAT;
  if (!formatOk) {
    problems.push(`${file} format: expected '${MANIFEST_FORMAT}', got '${String(m.format)}'; not runnable`);
  }
  for (const k of ['task', 'instruction', 'reference'] as const) {
    if (typeof m[k] !== 'string' || m[k].trim() === '') problems.push(`${file} ${k}: required string missing`);
  }
  const unset: string[] = [];
  const base = resolve(mdir, expand(m.base ?? '.', env, unset));
  const at = (p: string) => {
    const e = expand(p, env, unset);
    return isAbsolute(e) ? resolve(e) : resolve(base, e);
  };
  /** Task-authored files (table of contents, checklist) are relative to the manifest's folder. */
  const own = (p: string) => {
    const e = expand(p, env, unset);
    return isAbsolute(e) ? resolve(e) : resolve(mdir, e);
  };
  const id = safeId(
    typeof m.id === 'string' && m.id ? m.id : m.variant ? `${m.task}_${m.variant}` : (m.task ?? fallbackId),
  );
  if (!isDir(base)) problems.push(`${file} base: folder ${base} does not exist`);

  // Hidden first, so source globs can be checked against them.
  const hiddenFiles = [file];
  let referenceReport: string | undefined;
  if (typeof m.reference === 'string' && m.reference) {
    referenceReport = at(m.reference);
    hiddenFiles.push(referenceReport);
    if (!isFile(referenceReport)) problems.push(`${file} reference: ${referenceReport} does not exist`);
  }
  let checklist: ChecklistItem[] = [];
  if (typeof m.checklist === 'string' && m.checklist) {
    const cf = own(m.checklist);
    hiddenFiles.push(cf);
    if (!isFile(cf)) problems.push(`${file} checklist: ${cf} does not exist`);
    else {
      try {
        checklist = parseChecklist(cf);
      } catch (e) {
        problems.push(errorMessage(e));
      }
    }
  }

  let toc: string | undefined;
  if (typeof m.tableOfContents === 'string' && m.tableOfContents) {
    const tf = own(m.tableOfContents);
    if (!isFile(tf)) problems.push(`${file} tableOfContents: ${tf} does not exist`);
    else {
      try {
        toc = readUtf8(tf);
      } catch (e) {
        problems.push(errorMessage(e));
      }
    }
  } else if (m.tableOfContents && typeof m.tableOfContents === 'object' && typeof m.tableOfContents.text === 'string') {
    toc = m.tableOfContents.text;
  }

  const data: VisibleFile[] = [];
  const docs: VisibleFile[] = [];
  const hiddenSet = new Set(hiddenFiles);
  const add = (list: VisibleFile[], globs: unknown, field: string, classify: boolean) => {
    if (globs === undefined) return;
    if (!Array.isArray(globs) || globs.some((g) => typeof g !== 'string')) {
      problems.push(`${file} ${field}: expected a list of glob strings`);
      return;
    }
    if (!isDir(base)) return;
    let files: string[];
    try {
      files = globFiles(
        base,
        (globs as string[]).map((g) => expand(g, env, unset)),
        `${file} ${field}`,
      );
    } catch (e) {
      problems.push(errorMessage(e));
      return;
    }
    if (files.length === 0) problems.push(`${file} ${field}: no file matches ${JSON.stringify(globs)}`);
    for (const f of files) {
      if (hiddenSet.has(f)) {
        problems.push(`${file} ${field}: ${f} is the reference report or checklist; not made visible`);
        continue;
      }
      const vf = { path: f, rel: posixRelative(base, f), size: fileSize(f) };
      if (classify) (DATA_EXT.has(extname(f).toLowerCase()) ? data : docs).push(vf);
      else list.push(vf);
    }
  };
  if (Array.isArray(m.sources)) add(data, m.sources, 'sources', true);
  else if (m.sources && typeof m.sources === 'object') {
    add(data, m.sources.data, 'sources.data', false);
    add(docs, m.sources.docs, 'sources.docs', false);
  } else problems.push(`${file} sources: required (a list of globs or {data, docs})`);
  if (unset.length) problems.push(`${file}: environment variable(s) not set: ${[...new Set(unset)].join(', ')}`);
  const dedupe = (l: VisibleFile[]) => l.filter((f, i) => l.findIndex((g) => g.rel === f.rel) === i);
  const instruction = typeof m.instruction === 'string' ? m.instruction.trim() : '';
  const runnable =
    formatOk &&
    !!instruction &&
    data.length + docs.length > 0 &&
    !!referenceReport &&
    isFile(referenceReport) &&
    unset.length === 0;
  return {
    id,
    suite: 'analystbench',
    suiteId,
    title:
      typeof m.title === 'string' && m.title ? m.title : `${m.task ?? fallbackId}${m.variant ? ` / ${m.variant}` : ''}`,
    items: instruction ? [{ type: 'analyst-task', id: 'report', instruction }] : [],
    visible: {
      data: dedupe(data),
      docs: dedupe(docs),
      instruction,
      ...(toc !== undefined ? { tableOfContents: toc } : {}),
      missing: [],
    },
    hidden: {
      files: hiddenFiles,
      checklist,
      ...(referenceReport ? { referenceReport } : {}),
      ...(Array.isArray(m.excluded) ? { excluded: m.excluded.map(String) } : {}),
    },
    runnable,
    problems,
    analyst: {
      manifest: file,
      task: String(m.task ?? fallbackId),
      ...(m.variant ? { variant: String(m.variant) } : {}),
    },
  };
}

/**
 * Reads a checklist: a JSON list of `{id?, question, answer?, sourceText?}` or of strings.
 * @throws LoupeInputError naming the file (and `[i]`) for bad JSON or entries.
 */
export function parseChecklist(file: string): ChecklistItem[] {
  const j = readJson(file);
  if (!Array.isArray(j)) throw new LoupeInputError(file, 'checklist must be a JSON list');
  return j.map((x, i) => {
    if (typeof x === 'string') return { id: `c${i + 1}`, question: x, answer: '' };
    const o = x as Record<string, unknown>;
    if (typeof o !== 'object' || o === null || typeof o.question !== 'string') {
      throw new LoupeInputError(`${file}[${i}]`, 'expected a string or {question, answer?}');
    }
    return {
      id: typeof o.id === 'string' ? o.id : `c${i + 1}`,
      question: o.question,
      answer: typeof o.answer === 'string' ? o.answer : '',
      ...(typeof o.sourceText === 'string' ? { sourceText: o.sourceText } : {}),
    };
  });
}
