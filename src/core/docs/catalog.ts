/**
 * Survey variable catalog (issue 25): every variable's name, label, data file, universe, value codes and
 * the document unit that defines it, parsed from the units of indexed documentation.
 *
 * Parsers (one per documentation family, chosen by what a file contains, never by survey name):
 * - NHANES codebooks ("Variable Name: X SAS Label: … English Text: … Target: … Code or Value Value
 *   Description Count Cumulative Skip to Item …"), as PDF pages (CDC's PDF codebooks) or as Markdown /
 *   text (the CDC HTML codebook saved as Markdown): {@link parseNhanesCodebook}.
 * - NCSES data dictionaries (SDR, NSCG, NTEWS `D*.xlsx`: SAS_NAME | DESCRIPTION | QUESTION | DOMAIN |
 *   SAS_FMT) with the value labels of the survey's SAS `PROC FORMAT` file (`P*.sas`):
 *   {@link parseNcsesDictionary}, {@link parseSasFormats}.
 * - Markdown variable tables (`| Variable | Label | Values |`): {@link parseMarkdownTables}.
 * Data-file headers (SAS XPORT `.xpt`, CSV) give the columns a data file really has: {@link readXptColumns}, {@link readCsvColumns}.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { LoupeInputError } from '../util/errors.ts';
import { assertNotHeldDatabaseFile } from '../util/held-files.ts';

/** Version of the catalog parsers; a change re-parses every file (cached per content hash). */
export const CATALOG_VERSION = 2;

/** One value code of a variable: `code` as printed ("1", ".", "0 to 79"), `label` its description. */
export interface ValueCode {
  code: string;
  label: string;
}

/** One catalog entry. */
export interface CatalogVariable {
  /** Variable name as in the data (`RIAGENDR`). */
  name: string;
  /** Short label from the documentation (SAS label / DESCRIPTION); null when undocumented. */
  label: string | null;
  /** Data file (table) the variable lives in, by stem (`DEMO_L`, `ntews22`). */
  file: string;
  /** Documentation file defining it (relative to the index root); null when undocumented. */
  doc: string | null;
  /** Unit label of the definition ("Page 9", "Row 12", "Line 40"); null when undocumented. */
  page: string | null;
  /** 0-based unit index of `page` (for opening the unit); null when undocumented. */
  unitIndex: number | null;
  /** Universe / target group ("Both males and females 20 YEARS - 150 YEARS"). */
  universe: string | null;
  /** Question text or longer description, when the documentation has one. */
  text: string | null;
  /** Value codes with labels, in documentation order (empty for ranges-only or unknown). */
  values: ValueCode[];
  /** False for a column known only from a data file header. */
  documented: boolean;
  /** Label stored in the data file itself (XPT header), never shown as the documented label. */
  dataLabel?: string;
  /** Survey family's SAS format name (NCSES dictionaries), used to attach value labels. */
  format?: string;
}

/** Result of parsing one documentation file. */
export interface ParsedDoc {
  /** Which parser matched: null when none (not a codebook). */
  parser: 'nhanes-codebook' | 'ncses-dictionary' | 'sas-formats' | 'markdown-table' | null;
  variables: CatalogVariable[];
  /** SAS formats defined in the file (name upper-case without `$`/trailing dot → values). */
  formats?: Record<string, ValueCode[]>;
  /** Why a file that looks like a codebook could not be parsed. */
  error?: string;
}

const NHANES_HEADER = 'Code or Value Value Description Count Cumulative Skip to Item';
const NAME_RE = /^[A-Za-z][A-Za-z0-9_]*$/;

/** Unit labels as the index names them. */
function unitLabel(kind: 'Page' | 'Line' | 'Row', i: number): string {
  return `${kind} ${i + 1}`;
}

/** Strips Markdown decoration (headings, emphasis, table pipes, list bullets) so a Markdown codebook reads like the PDF text. */
function demarkdown(s: string): string {
  return s
    .replace(/^\s{0,3}#{1,6}\s+/, '')
    .replace(/^\s*[-*+]\s+/, '')
    .replace(/\*\*|__|`/g, '')
    .replace(/^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/, '')
    .replace(/\s*\|\s*/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Parses the rows of an NHANES "Codebook and Frequencies" table, whitespace-collapsed:
 * `CODE DESCRIPTION COUNT CUMULATIVE [SKIP-TO]` repeated. A row ends where two integers satisfy
 * `cumulative = previous cumulative + count`; a skip target (a variable name or "End of Section")
 * opens the next segment.
 * @param table text after the table header.
 * @returns value codes in order (empty when no row parses).
 * Source: the layout of CDC's NHANES codebooks (e.g. DEMO_L RIAGENDR: "1 Male 5575 5575 2 Female 6358 11933 . Missing 0 11933").
 */
export function parseNhanesValueTable(table: string): ValueCode[] {
  const tok = table.split(' ').filter(Boolean);
  const out: ValueCode[] = [];
  let cum = 0;
  let start = 0;
  const isInt = (s: string | undefined) => s !== undefined && /^\d+$/.test(s);
  for (let i = 0; i + 1 < tok.length; i++) {
    if (!isInt(tok[i]) || !isInt(tok[i + 1])) continue;
    if (Number(tok[i + 1]) !== cum + Number(tok[i])) continue;
    let seg = tok.slice(start, i);
    // skip target of the previous row
    if (out.length && seg.length > 2 && seg[0] === 'End' && seg[1] === 'of' && seg[2] === 'Section') seg = seg.slice(3);
    else if (out.length && seg.length > 2 && /^[A-Z][A-Z0-9_]{3,}$/.test(seg[0]!) && !/^\d/.test(seg[0]!)) {
      seg = seg.slice(1);
    }
    if (seg.length < 2) continue; // a code needs a description: these integers belong to the description
    let code: string;
    let rest: string[];
    if (seg.length >= 4 && seg[1] === 'to') {
      code = `${seg[0]} to ${seg[2]}`;
      rest = seg.slice(3);
    } else {
      code = seg[0]!;
      rest = seg.slice(1);
    }
    out.push({ code, label: rest.join(' ') });
    cum = Number(tok[i + 1]);
    start = i + 2;
    i++;
  }
  return out;
}

function between(s: string, from: string, ends: string[]): string | null {
  const a = s.indexOf(from);
  if (a < 0) return null;
  const b0 = a + from.length;
  let b = s.length;
  for (const e of ends) {
    const j = s.indexOf(e, b0);
    if (j >= 0 && j < b) b = j;
  }
  const v = s.slice(b0, b).trim();
  return v || null;
}

/**
 * Parses an NHANES codebook (PDF pages, or Markdown / text lines) into catalog entries: one per
 * "Variable Name:" block, with its SAS label, English text, target (universe) and value table.
 * @param doc path of the documentation file (relative to the index root).
 * @param units unit texts of the file in order; `kind` their unit kind (labels "Page n" / "Line n").
 * @returns entries with `file` = the codebook's stem (NHANES codebook `DEMO_L.pdf` documents `DEMO_L.xpt`).
 * Source: CDC NHANES codebook layout (Variable Name / SAS Label / English Text / Target / Codebook and Frequencies).
 */
export function parseNhanesCodebook(
  doc: string,
  units: readonly string[],
  kind: 'Page' | 'Line' | 'Row',
): CatalogVariable[] {
  const md = kind === 'Line';
  // one text with unit starts, to find which unit each "Variable Name:" starts in
  const parts: string[] = [];
  const starts: number[] = [];
  let pos = 0;
  for (const u of units) {
    const t = md ? demarkdown(u) : u;
    starts.push(pos);
    parts.push(t);
    pos += t.length + 1;
  }
  const all = parts.join(' ');
  const file = basename(doc, extname(doc));
  const out: CatalogVariable[] = [];
  const re = /Variable Name:\s*([A-Za-z][A-Za-z0-9_]*)/g;
  const hits = [...all.matchAll(re)];
  for (let h = 0; h < hits.length; h++) {
    const m = hits[h]!;
    const name = m[1]!;
    const from = m.index;
    const to = h + 1 < hits.length ? hits[h + 1]!.index : all.length;
    const block = all.slice(from, to);
    let u = 0;
    while (u + 1 < starts.length && starts[u + 1]! <= from) u++;
    const label = between(block, 'SAS Label:', ['English Text:', 'Target:', 'English Instructions:', `${name} - `]);
    const text = between(block, 'English Text:', ['Target:', 'English Instructions:', 'Hard Edits:', `${name} - `]);
    const targets = [
      ...block.matchAll(
        /Target:\s*(.+?)(?=Target:|English Instructions:|Hard Edits:|Codebook and Frequencies|Code or Value|$)/g,
      ),
    ].map((t) => t[1]!.trim());
    const universe = targets.length
      ? [...new Set(targets.map((t) => t.replace(new RegExp(`\\s*${name} - .*$`), '').trim()))].join('; ')
      : null;
    const th = block.indexOf(NHANES_HEADER);
    const values =
      th >= 0
        ? parseNhanesValueTable(
            block
              .slice(th + NHANES_HEADER.length)
              .replace(/\s+/g, ' ')
              .trim(),
          )
        : [];
    out.push({
      name,
      label,
      file,
      doc,
      page: unitLabel(kind, u),
      unitIndex: u,
      universe,
      text,
      values,
      documented: true,
    });
  }
  return out;
}

/**
 * Parses an NCSES data dictionary (rows `SAS_NAME: X | SESTAT_NAME: … | DESCRIPTION: … | QUESTION: … |
 * DOMAIN: … | SAS_FMT: …`, as the index renders spreadsheet rows) into catalog entries.
 * @param doc dictionary path (relative to the root), e.g. `SDR/docs/Dpsd23.xlsx`; the data file is its stem without the leading `D`.
 * @param units row texts in order.
 * @returns entries (values empty: attach them from the survey's SAS formats with {@link attachFormats}).
 * Source: NCSES SESTAT public-use file dictionaries (SDR 2023 `Dpsd23.xlsx`, NSCG `Dpcg23.xlsx`, NTEWS `Dntews22.xlsx`).
 */
export function parseNcsesDictionary(doc: string, units: readonly string[]): CatalogVariable[] {
  const stem = basename(doc, extname(doc));
  const file = /^D/i.test(stem) ? stem.slice(1) : stem;
  const out: CatalogVariable[] = [];
  for (let i = 0; i < units.length; i++) {
    const cells = new Map<string, string>();
    for (const c of units[i]!.split(' | ')) {
      const k = c.indexOf(': ');
      if (k > 0) cells.set(c.slice(0, k).trim().toUpperCase(), c.slice(k + 2).trim());
    }
    const name = cells.get('SAS_NAME');
    if (!name || !NAME_RE.test(name)) continue;
    const fmt = cells.get('SAS_FMT');
    const v: CatalogVariable = {
      name,
      label: cells.get('DESCRIPTION') || cells.get('SESTAT_NAME') || null,
      file,
      doc,
      page: unitLabel('Row', i),
      unitIndex: i,
      universe: cells.get('DOMAIN') || null,
      text: cells.get('QUESTION') || null,
      values: [],
      documented: true,
    };
    if (fmt && fmt !== 'N/A') v.format = normFormat(fmt);
    out.push(v);
  }
  return out;
}

function normFormat(f: string): string {
  return f.replace(/^\$/, '').replace(/\.$/, '').toUpperCase();
}

/**
 * Parses SAS `PROC FORMAT` `VALUE` statements (one statement per format; `"code" = "label"` lines).
 * @param units the file's lines.
 * @returns format name (upper case, without `$` and trailing dot) → value codes; empty when none.
 * Source: SAS PROC FORMAT syntax as written in NCSES `P*.sas` files (e.g. NTEWS `Pntews22.sas`).
 */
export function parseSasFormats(units: readonly string[]): Record<string, ValueCode[]> {
  const out: Record<string, ValueCode[]> = {};
  let cur: ValueCode[] | undefined;
  for (const raw of units) {
    const line = raw.trim();
    const vm = /^VALUE\s+(\$?[A-Za-z_][A-Za-z0-9_]*)/i.exec(line);
    if (vm) {
      cur = [];
      out[normFormat(vm[1]!)] = cur;
      continue;
    }
    if (!cur) continue;
    if (line.startsWith(';')) {
      cur = undefined;
      continue;
    }
    const pm = /^("[^"]*"|'[^']*'|[^=]+?)\s*=\s*("[^"]*"|'[^']*')/.exec(line);
    if (pm) {
      const code = pm[1]!.replace(/^["']|["']$/g, '').trim() || '(blank)';
      const label = pm[2]!.slice(1, -1).trim();
      cur.push({ code, label });
    }
  }
  return out;
}

/**
 * Fills `values` of entries that name a SAS format (NCSES dictionaries) from the survey's formats.
 * @param vars catalog entries (changed in place); `formats` from {@link parseSasFormats}.
 * @returns the number of entries that received values.
 */
export function attachFormats(vars: CatalogVariable[], formats: Record<string, ValueCode[]>): number {
  let n = 0;
  for (const v of vars) {
    if (!v.format || v.values.length) continue;
    const vals = formats[v.format];
    if (vals?.length) {
      v.values = vals;
      n++;
    }
  }
  return n;
}

const MD_NAME = /^(variable|variable name|name|var|column)$/i;
const MD_LABEL = /^(label|sas label|description|variable label)$/i;
const MD_VALUES = /^(values?|codes?|value labels?|code list)$/i;
const MD_UNIVERSE = /^(universe|target|domain)$/i;

function mdCells(line: string): string[] | null {
  const t = line.trim();
  if (!t.startsWith('|')) return null;
  return t
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((c) =>
      c
        .trim()
        .replace(/^(\*\*|__|`)(.*)\1$/, '$2')
        .trim(),
    );
}

/**
 * Parses Markdown variable tables (`| Variable | Label | Values |` with a `|---|` rule): one entry per row whose
 * first matching column holds a variable name. Values like `1=Male; 2=Female` become value codes.
 * @param doc path of the Markdown file; the data file is its stem (`codebooks/BMX_J.md` documents `BMX_J`).
 * @param units the file's lines.
 * @returns entries with `page` = the row's line label.
 * Source: Markdown codebook tables (GitHub-flavoured Markdown tables), as in Loupe's unseen NHANES fixtures.
 */
export function parseMarkdownTables(doc: string, units: readonly string[]): CatalogVariable[] {
  const file = basename(doc, extname(doc));
  const out: CatalogVariable[] = [];
  for (let i = 0; i + 1 < units.length; i++) {
    const head = mdCells(units[i]!);
    const rule = mdCells(units[i + 1]!);
    if (!head || !rule || !rule.every((c) => /^:?-{3,}:?$/.test(c))) continue;
    const col = (re: RegExp) => head.findIndex((c) => re.test(c));
    const n = col(MD_NAME);
    const l = col(MD_LABEL);
    if (n < 0 || l < 0) continue;
    const vc = col(MD_VALUES);
    const uc = col(MD_UNIVERSE);
    let j = i + 2;
    for (; j < units.length; j++) {
      const cells = mdCells(units[j]!);
      if (!cells) break;
      const name = cells[n] ?? '';
      if (!NAME_RE.test(name)) continue;
      const values: ValueCode[] = [];
      for (const part of vc >= 0 ? (cells[vc] ?? '').split(/;\s*/) : []) {
        const m = /^\s*([^=]+?)\s*=\s*(.+?)\s*$/.exec(part);
        if (m) values.push({ code: m[1]!, label: m[2]! });
      }
      out.push({
        name,
        label: cells[l] || null,
        file,
        doc,
        page: unitLabel('Line', j),
        unitIndex: j,
        universe: uc >= 0 ? cells[uc] || null : null,
        text: null,
        values,
        documented: true,
      });
    }
    i = j - 1;
  }
  return out;
}

/**
 * Chooses the parser for one documentation file by its content and parses it.
 * A file whose name says it is a codebook / data dictionary (`codebook`, `dictionary`, or an NHANES
 * table name like `DEMO_L`) but that no parser understands is returned with `error` set, so the
 * catalog can report it and skip it.
 * @param doc path relative to the index root; `units` its unit texts; `kind` its unit kind.
 * Source: issue 25 ("codebooks that cannot be parsed are reported per file and skipped").
 */
export function parseDoc(doc: string, units: readonly string[], kind: 'Page' | 'Line' | 'Row'): ParsedDoc {
  const sample = units.slice(0, 50).join(' ');
  if (kind === 'Row' && /(^|\| )SAS_NAME: /.test(sample)) {
    const variables = parseNcsesDictionary(doc, units);
    return variables.length
      ? { parser: 'ncses-dictionary', variables }
      : { parser: null, variables, error: 'data dictionary rows without a usable SAS_NAME' };
  }
  if (kind === 'Line' && /\.sas$/i.test(doc) && units.some((u) => /^\s*VALUE\s+\$?[A-Za-z_]/i.test(u))) {
    const formats = parseSasFormats(units);
    return { parser: 'sas-formats', variables: [], formats };
  }
  if (units.some((u) => u.includes('Variable Name:'))) {
    const variables = parseNhanesCodebook(doc, units, kind);
    if (variables.length) return { parser: 'nhanes-codebook', variables };
  }
  if (kind === 'Line' && /\.(md|markdown|txt)$/i.test(doc) && units.some((u) => u.trimStart().startsWith('|'))) {
    const variables = parseMarkdownTables(doc, units);
    if (variables.length) return { parser: 'markdown-table', variables };
  }
  const name = basename(doc);
  if (
    /codebook|dictionary|data ?dictionary/i.test(name) ||
    /^[A-Z0-9]+(_[A-Z0-9]+)*_[A-Z]\.(pdf|md|txt|html?)$/.test(name)
  ) {
    return {
      parser: null,
      variables: [],
      error:
        'looks like a codebook but no variable definitions were recognised (no NHANES "Variable Name:" blocks, SAS_NAME rows or Markdown variable tables)',
    };
  }
  return { parser: null, variables: [] };
}

/**
 * Reads the header row of a CSV / TSV data file (first line only).
 * @param path absolute path; the delimiter is a tab for `.tsv`, else a comma.
 * @returns column names in order (quotes removed), empty labels.
 */
export function readCsvColumns(path: string): Array<{ name: string; label: string }> {
  assertNotHeldDatabaseFile(path);
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(65536);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const line =
      buf
        .subarray(0, n)
        .toString('utf8')
        .replace(/^\uFEFF/, '')
        .split(/\r?\n/)[0] ?? '';
    const sep = /\.tsv$/i.test(path) ? '\t' : ',';
    return line
      .split(sep)
      .map((c) => ({ name: c.trim().replace(/^"|"$/g, ''), label: '' }))
      .filter((c) => c.name);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads the column names and labels of a SAS XPORT (v5/v6, `.xpt`) file from its header only.
 * @param path absolute path of the `.xpt` file.
 * @returns columns in file order, `{ name, label }` (label as stored in the file, may be empty).
 * @throws LoupeInputError naming the file when it is not a SAS transport file.
 * Source: SAS Technical Note TS-140 (XPORT format: 80-byte header records, 140-byte NAMESTR records).
 */
export function readXptColumns(path: string): Array<{ name: string; label: string }> {
  assertNotHeldDatabaseFile(path);
  const fd = openSync(path, 'r');
  try {
    const head = Buffer.alloc(80 * 8);
    readSync(fd, head, 0, head.length, 0);
    if (!head.subarray(0, 80).toString('latin1').startsWith('HEADER RECORD*******LIBRARY HEADER RECORD')) {
      throw new LoupeInputError(path, 'not a SAS transport (XPORT) file');
    }
    // find the NAMESTR header record within the first records
    const max = 80 * 40;
    const buf = Buffer.alloc(max);
    const n = readSync(fd, buf, 0, max, 0);
    const text = buf.subarray(0, n).toString('latin1');
    const k = text.indexOf('HEADER RECORD*******NAMESTR HEADER RECORD');
    if (k < 0 || k % 80 !== 0) throw new LoupeInputError(path, 'SAS transport file without a NAMESTR header');
    const off = k;
    const nvars = Number(text.slice(off + 54, off + 58));
    const descLen = 140;
    if (!Number.isInteger(nvars) || nvars <= 0) {
      throw new LoupeInputError(path, 'SAS transport file with an unreadable variable count');
    }
    const rec = Buffer.alloc(nvars * descLen);
    readSync(fd, rec, 0, rec.length, off + 80);
    const cols: Array<{ name: string; label: string }> = [];
    for (let i = 0; i < nvars; i++) {
      const o = i * descLen;
      const name = rec
        .subarray(o + 8, o + 16)
        .toString('latin1')
        .trim();
      const label = rec
        .subarray(o + 16, o + 56)
        .toString('latin1')
        .trim();
      if (name) cols.push({ name, label });
    }
    return cols;
  } finally {
    closeSync(fd);
  }
}
