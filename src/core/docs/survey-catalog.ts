/**
 * One survey's variable catalog (issue 25): the documented variables parsed by the documentation index,
 * value labels of SAS format files attached, and the columns of the survey's data files (`.xpt`, `.csv`, `.tsv` headers)
 * that no documentation defines, listed as undocumented.
 */
import { readdirSync, statSync } from 'node:fs';
import { basename, extname, join, relative, sep } from 'node:path';
import { errorMessage } from '../util/errors.ts';
import { attachFormats, readCsvColumns, readXptColumns, type CatalogVariable, type ValueCode } from './catalog.ts';
import type { DocIndex } from './types.ts';

/** A file that could not be used, with the reason. */
export interface CatalogProblem {
  file: string;
  reason: string;
}

/** A survey's catalog. */
export interface SurveyCatalog {
  /** Entries sorted by file then documentation order; undocumented columns last within their file. */
  variables: CatalogVariable[];
  /** Codebooks no parser understood and data files whose header could not be read (skipped). */
  problems: CatalogProblem[];
  /** Data-file columns and how many of them have a documented entry (same name, same file). */
  coverage: { columns: number; documented: number };
  /** Documentation files each parser read. */
  parsers: Record<string, number>;
  /** Data files found under the data folder, by file stem (`DEMO_L` → `NHANES/data/Demographics/DEMO_L.xpt`, relative to the root). */
  dataFiles: Record<string, string>;
}

/** Extensions of data files a catalog entry can point at (what `pandas` reads). */
const DATA_EXT = new Set(['.xpt', '.csv', '.tsv', '.xlsx', '.sas7bdat', '.sav', '.dta', '.parquet']);

function walk(dir: string, out: string[]): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    if (e.name.startsWith('.')) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile()) out.push(p);
  }
}

/**
 * Builds the catalog of the documents of `idx` plus the data files under `dataDir`.
 * @param idx a built documentation index (its allowlist is the survey's documentation).
 * @param dataDir folder of the survey's data files (`<root>/<SURVEY>/data`); missing is fine (docs-only surveys).
 * @param root folder data paths are reported relative to (the index root).
 * @returns the merged catalog; a documented variable appears once per data file it is defined for.
 * Source: issue 25 (catalog entries `name, label, file, doc, page, values`; undocumented columns never get an invented label).
 */
export function surveyCatalog(idx: DocIndex, dataDir: string | undefined, root: string): SurveyCatalog {
  const parsed = idx.catalog();
  const problems: CatalogProblem[] = [];
  const parsers: Record<string, number> = {};
  const formats: Record<string, ValueCode[]> = {};
  const vars: CatalogVariable[] = [];
  for (const p of parsed) {
    if (p.error) problems.push({ file: p.doc, reason: p.error });
    if (p.parser) parsers[p.parser] = (parsers[p.parser] ?? 0) + 1;
    if (p.formats) Object.assign(formats, p.formats);
    vars.push(...p.variables);
  }
  attachFormats(vars, formats);
  // de-duplicate (same variable, same data file): keep the first definition (a table may span codebooks)
  // SAS names are case-insensitive: a codebook's `MCQ160a` is the data's `MCQ160A`
  const seen = new Map<string, CatalogVariable>();
  const documented: CatalogVariable[] = [];
  for (const v of vars) {
    const k = `${v.file}\u0000${v.name.toUpperCase()}`;
    if (seen.has(k)) continue;
    seen.set(k, v);
    documented.push(v);
  }
  let columns = 0;
  let covered = 0;
  const undocumented: CatalogVariable[] = [];
  const dataFiles: string[] = [];
  let isDir: boolean;
  try {
    isDir = !!dataDir && statSync(dataDir).isDirectory();
  } catch {
    isDir = false;
  }
  if (isDir) walk(dataDir!, dataFiles);
  const byStem: Record<string, string> = {};
  for (const abs of dataFiles.sort()) {
    if (DATA_EXT.has(extname(abs).toLowerCase())) {
      byStem[basename(abs, extname(abs))] ??= relative(root, abs).split(sep).join('/');
    }
  }
  for (const abs of dataFiles) {
    const ext = extname(abs).toLowerCase();
    if (ext !== '.xpt' && ext !== '.csv' && ext !== '.tsv') continue;
    const rel = relative(root, abs).split(sep).join('/');
    let cols;
    try {
      cols = ext === '.xpt' ? readXptColumns(abs) : readCsvColumns(abs);
    } catch (e) {
      problems.push({ file: rel, reason: errorMessage(e) });
      continue;
    }
    const file = basename(abs, extname(abs));
    for (const c of cols) {
      columns++;
      const doc = seen.get(`${file}\u0000${c.name.toUpperCase()}`);
      if (doc) {
        covered++;
        doc.name = c.name; // the spelling pandas reads
        continue;
      }
      const u: CatalogVariable = {
        name: c.name,
        label: null,
        file,
        doc: null,
        page: null,
        unitIndex: null,
        universe: null,
        text: null,
        values: [],
        documented: false,
      };
      if (c.label) u.dataLabel = c.label;
      undocumented.push(u);
    }
  }
  const variables = [...documented, ...undocumented];
  return { variables, problems, coverage: { columns, documented: covered }, parsers, dataFiles: byStem };
}

/**
 * Case-insensitive filter of catalog entries: every whitespace-separated term must occur in the name,
 * label, file, universe, question text or a value label.
 * @param vars entries; `query` free text (empty → all).
 * @returns matching entries; exact name matches first.
 */
export function filterCatalog(vars: readonly CatalogVariable[], query: string): CatalogVariable[] {
  const terms = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!terms.length) return [...vars];
  const hay = (v: CatalogVariable) =>
    [v.name, v.label ?? '', v.file, v.universe ?? '', v.text ?? '', v.dataLabel ?? '', ...v.values.map((x) => x.label)]
      .join('\u0001')
      .toLowerCase();
  const out = vars.filter((v) => {
    const h = hay(v);
    return terms.every((t) => h.includes(t));
  });
  const q = query.trim().toUpperCase();
  return out.sort((a, b) => Number(b.name === q) - Number(a.name === q));
}
