/**
 * Helpers shared by the suite loaders: strict UTF-8 reading, CSV parsing that reports bad rows
 * instead of failing the whole file, recursive listings, filesystem-safe ids.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { parse } from 'csv-parse/sync';
import { LoupeInputError } from '../util/errors.ts';

/**
 * Reads a file as UTF-8, refusing invalid byte sequences.
 * @param file absolute path.
 * @returns the text (a leading BOM is removed).
 * @throws LoupeInputError `file:line N` when the bytes are not valid UTF-8, or when the file cannot be read.
 */
export function readUtf8(file: string): string {
  let buf: Buffer;
  try {
    buf = readFileSync(file);
  } catch (e) {
    throw new LoupeInputError(file, `cannot read: ${(e as Error).message}`);
  }
  const bad = firstInvalidUtf8Line(buf);
  if (bad) throw new LoupeInputError(`${file}:${bad.line}`, `not valid UTF-8 (byte offset ${bad.offset})`);
  const text = buf.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/**
 * Reads and parses a JSON file.
 * @returns the parsed value (`unknown`: callers check its shape).
 * @throws LoupeInputError naming the file for a missing or non-UTF-8 file, or invalid JSON.
 */
export function readJson(file: string): unknown {
  const text = readUtf8(file);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new LoupeInputError(file, `invalid JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * Finds the first line holding bytes that are not valid UTF-8.
 * @returns `{ line (1-based), offset (byte) }` or undefined when the buffer is valid.
 */
export function firstInvalidUtf8Line(buf: Buffer): { line: number; offset: number } | undefined {
  const dec = new TextDecoder('utf-8', { fatal: true });
  try {
    dec.decode(buf);
    return undefined;
  } catch {
    // locate it line by line
  }
  let start = 0;
  let line = 1;
  while (start <= buf.length) {
    let end = buf.indexOf(0x0a, start);
    if (end < 0) end = buf.length;
    try {
      dec.decode(buf.subarray(start, end));
    } catch {
      // Byte offset of the first bad byte: the valid prefix decodes to the text before the first U+FFFD.
      const text = new TextDecoder('utf-8').decode(buf.subarray(start, end));
      const i = text.indexOf('\uFFFD');
      return { line, offset: start + (i > 0 ? Buffer.byteLength(text.slice(0, i)) : 0) };
    }
    start = end + 1;
    line++;
  }
  return { line, offset: start };
}

/** @returns a function from a byte offset in `buf` to its 1-based line number (lines end at LF). */
function lineIndex(buf: Buffer): (offset: number) => number {
  const nl: number[] = [];
  for (let i = buf.indexOf(0x0a); i >= 0; i = buf.indexOf(0x0a, i + 1)) nl.push(i);
  return (offset) => {
    let lo = 0;
    let hi = nl.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (nl[mid]! < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  };
}

/**
 * Every line (1-based) holding bytes that are not valid UTF-8.
 * @returns sorted line numbers ([] for a valid buffer).
 */
export function invalidUtf8Lines(buf: Buffer): number[] {
  const dec = new TextDecoder('utf-8', { fatal: true });
  try {
    dec.decode(buf);
    return [];
  } catch {
    // find them line by line
  }
  const out: number[] = [];
  let start = 0;
  let line = 1;
  while (start <= buf.length) {
    let end = buf.indexOf(0x0a, start);
    if (end < 0) end = buf.length;
    try {
      dec.decode(buf.subarray(start, end));
    } catch {
      out.push(line);
    }
    start = end + 1;
    line++;
  }
  return out;
}

/** One parsed CSV record with its 1-based line span in the file. */
export interface CsvRow {
  /** Column name → cell text. */
  cells: Record<string, string>;
  /** First line of the record (header is line 1). */
  line: number;
  /** 1-based record number counting the header as record 1. */
  record: number;
}

/**
 * Parses a CSV file with a header row. Malformed records (wrong field count, broken quotes) and
 * records with bytes that are not valid UTF-8 are skipped and reported as `file:N: ...` problems;
 * the other rows stay usable.
 * @param file absolute path (used in messages and read when `text` is not given).
 * @param opts `requiredColumns` must appear in the header (else LoupeInputError naming the file).
 * @returns rows, header and problems.
 * @throws LoupeInputError for an unreadable / non-UTF-8 file, an empty file, or missing required columns.
 */
export function parseCsvFile(
  file: string,
  opts: { text?: string; requiredColumns?: string[] } = {},
): { header: string[]; rows: CsvRow[]; problems: string[] } {
  const problems: string[] = [];
  let badLines: number[] = [];
  let text = opts.text;
  if (text === undefined) {
    let buf: Buffer;
    try {
      buf = readFileSync(file);
    } catch (e) {
      throw new LoupeInputError(file, `cannot read: ${(e as Error).message}`);
    }
    badLines = invalidUtf8Lines(buf);
    if (badLines[0] === 1) throw new LoupeInputError(`${file}:1`, 'header row is not valid UTF-8');
    text = buf.toString('utf8').replace(/^\uFEFF/, '');
  }
  if (text.trim() === '') throw new LoupeInputError(file, 'empty CSV file');
  // Line numbers come from byte offsets: csv-parse's own `lines` counts a CRLF inside a quoted cell
  // twice (BLADE's annotation cells hold CRLF JSON), which put problems ~100 lines off.
  const bytes = Buffer.from(text, 'utf8');
  const lineAt = lineIndex(bytes);
  const skipped: { bytes: number; message: string }[] = [];
  let raw: { record: string[]; info: { lines: number; records: number; bytes: number } }[];
  try {
    raw = parse(text, {
      info: true,
      relax_quotes: false,
      skip_empty_lines: true,
      skip_records_with_error: true,
      on_skip: (err) => {
        if (err) skipped.push({ bytes: (err as unknown as { bytes?: number }).bytes ?? 0, message: err.message });
        return undefined;
      },
    }) as unknown as { record: string[]; info: { lines: number; records: number; bytes: number } }[];
  } catch (e) {
    const at = (e as { bytes?: number }).bytes;
    const line = typeof at === 'number' ? lineAt(Math.max(0, at - 1)) : (e as { lines?: number }).lines;
    throw new LoupeInputError(`${file}${line ? `:${line}` : ''}`, `malformed CSV: ${(e as Error).message}`);
  }
  // A record starts at the first non-newline byte after the end of the record before it (good or skipped).
  const ends = raw.map((r) => r.info.bytes);
  const startLine = (prevEnd: number) => {
    let i = prevEnd;
    while (i < bytes.length && (bytes[i] === 0x0a || bytes[i] === 0x0d)) i++;
    return lineAt(Math.min(i, Math.max(0, bytes.length - 1)));
  };
  for (const sk of skipped) {
    const prevEnd = Math.max(
      0,
      ...ends.filter((e) => e < sk.bytes),
      ...skipped.filter((o) => o !== sk && o.bytes < sk.bytes).map((o) => o.bytes),
    );
    problems.push(`${file}:${startLine(prevEnd)}: malformed CSV record (${sk.message.replace(/ at line \d+/, '')})`);
  }
  if (raw.length === 0) throw new LoupeInputError(file, 'CSV file has no header row');
  const header = raw[0]!.record.map((h) => h.trim());
  for (const col of opts.requiredColumns ?? []) {
    if (!header.includes(col)) {
      throw new LoupeInputError(`${file}:1`, `missing column '${col}' (header: ${header.join(', ')})`);
    }
  }
  const rows: CsvRow[] = [];
  for (let i = 1; i < raw.length; i++) {
    const r = raw[i]!;
    const start = startLine(raw[i - 1]!.info.bytes);
    const end = lineAt(Math.max(0, r.info.bytes - 1));
    if (r.record.length !== header.length) {
      problems.push(`${file}:${start}: malformed CSV record: ${r.record.length} fields, header has ${header.length}`);
      continue;
    }
    const bad = badLines.find((l) => l >= start && l <= end);
    if (bad !== undefined) {
      problems.push(`${file}:${bad}: not valid UTF-8; record skipped`);
      continue;
    }
    const cells: Record<string, string> = {};
    header.forEach((h, j) => (cells[h] = r.record[j] ?? ''));
    rows.push({ cells, line: start, record: i + 1 });
  }
  return { header, rows, problems };
}

/** Unfinished downloads / imports (`x.csv.part`, `db.sqlite.123.partial`): never listed as benchmark files. */
const PARTIAL_RE = /\.(part|partial|tmp)$/i;

/**
 * Lists files under `dir` recursively, sorted case-insensitively by name at each level (the order
 * of LongTA `utils.py::get_data_and_doc_paths`). Hidden dot-files and unfinished downloads
 * (`*.part`, `*.partial`, `*.tmp`) are skipped.
 * @returns absolute paths ([] when `dir` does not exist).
 */
export function listFilesRecursive(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  const walk = (d: string, depth: number) => {
    if (depth > 32) return;
    const entries = readdirSync(d, { withFileTypes: true })
      .filter((e) => !e.name.startsWith('.') && !PARTIAL_RE.test(e.name))
      .sort((a, b) => a.name.toLowerCase().localeCompare(b.name.toLowerCase()) || a.name.localeCompare(b.name));
    for (const e of entries) {
      const p = join(d, e.name);
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      if (e.isSymbolicLink()) {
        try {
          const st = statSync(p);
          isDir = st.isDirectory();
          isFile = st.isFile();
        } catch {
          continue;
        }
      }
      if (isDir) walk(p, depth + 1);
      else if (isFile) out.push(p);
    }
  };
  walk(dir, 0);
  return out;
}

/** POSIX relative path from `from` to `to`. */
export function posixRelative(from: string, to: string): string {
  return relative(from, to).split(sep).join('/');
}

/** File size in bytes, 0 when it cannot be read. */
export function fileSize(p: string): number {
  try {
    return statSync(p).size;
  } catch {
    return 0;
  }
}

/**
 * Makes a filesystem-safe, readable id: keeps `[A-Za-z0-9._-]`, turns other runs into `_`,
 * trims `_`/`.` at the ends. Never empty (returns `x` for an empty result).
 * @example safeId('NCHS Data Brief No. 508') === 'NCHS_Data_Brief_No._508'
 */
export function safeId(s: string): string {
  const id = s
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[_.]+|[_.]+$/g, '');
  return id === '' ? 'x' : id.slice(0, 120);
}

/** True when `p` exists and is a directory. */
export function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** True when `p` exists and is a regular file. */
export function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}
