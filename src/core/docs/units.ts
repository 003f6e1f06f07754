/**
 * Document units as LongTA defines them (spec §2.3 "Document units", LongTA `tools/common.py`):
 * PDF → one unit per page ("Page n"); text / markdown / code → one unit per line ("Line n");
 * JSON → pretty-printed with indent 2, one unit per line; CSV / XLSX → one unit per data row
 * ("Row n"), rendered `col: val | col: val`. Unit text is whitespace-collapsed.
 * Loupe additions (recorded in `note`): HTML is reduced to its text and split into lines (LongTA
 * rejects it), every sheet of a workbook is read (pandas reads only the first), text that is not
 * valid UTF-8 is decoded as Windows-1252.
 */
import JSZip from 'jszip';
import { extname } from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { LoupeInputError } from '../util/errors.ts';
import { extractPdfPages, type PdfExtractor } from './pdf.ts';
import type { UnitKind } from './types.ts';

/** Extracted units of one file. */
export interface ExtractedDoc {
  kind: UnitKind;
  /** Whitespace-collapsed unit texts; index i has label `${kind} ${i + 1}`. */
  units: string[];
  /** Something the user should know (decoding fallback, empty text layer, …). */
  note?: string;
}

const TEXT_EXT = new Set([
  '.txt',
  '.md',
  '.markdown',
  '.rst',
  '.py',
  '.r',
  '.sas',
  '.sps',
  '.do',
  '.dct',
  '.sql',
  '.ts',
  '.js',
  '.sh',
  '.yaml',
  '.yml',
  '.toml',
  '.ini',
  '.cfg',
  '.log',
  '.tex',
  '.xml',
]);
const HTML_EXT = new Set(['.html', '.htm']);

/** Text files larger than this are skipped (a reason is reported), default 20 MiB. */
export const DEFAULT_MAX_TEXT_BYTES = 20 * 1024 * 1024;
/** Lines longer than this make a text file "not line-structured" and it is skipped. */
export const DEFAULT_MAX_LINE_CHARS = 1_000_000;

/** Collapses every whitespace run to one space and trims (LongTA: `" ".join(text.split())`). */
export function collapseWhitespace(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

/**
 * Which unit kind a path would get, or undefined for an unsupported type.
 * @param path file path or name.
 */
export function unitKindFor(path: string): UnitKind | undefined {
  const ext = extname(path).toLowerCase();
  if (ext === '.pdf') return 'Page';
  if (ext === '.csv' || ext === '.xlsx' || ext === '.xls' || ext === '.tsv') return 'Row';
  if (ext === '.json' || ext === '.docx' || TEXT_EXT.has(ext) || HTML_EXT.has(ext)) return 'Line';
  return undefined;
}

/** True when the bytes look binary: a NUL byte, or > 10% control characters, in the first 64 KiB. */
export function looksBinary(data: Uint8Array): boolean {
  const n = Math.min(data.byteLength, 65536);
  if (n === 0) return false;
  let ctrl = 0;
  for (let i = 0; i < n; i++) {
    const b = data[i]!;
    if (b === 0) return true;
    if (b < 9 || (b > 13 && b < 32) || b === 127) ctrl++;
  }
  return ctrl / n > 0.1;
}

/**
 * Decodes text bytes: UTF-8 (BOM stripped) when valid, else Windows-1252.
 * @returns the text and whether the fallback was used.
 */
export function decodeText(data: Uint8Array): { text: string; fallback: boolean } {
  try {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(data);
    return { text, fallback: false };
  } catch {
    return { text: new TextDecoder('windows-1252').decode(data), fallback: true };
  }
}

function textToLines(text: string): string[] {
  const lines = text.split(/\r\n|\n|\r/);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Reduces HTML to text lines: scripts/styles dropped, block elements become line breaks, entities decoded. */
export function htmlToText(html: string): string {
  const named: Record<string, string> = {
    amp: '&',
    lt: '<',
    gt: '>',
    quot: '"',
    apos: "'",
    nbsp: ' ',
    ndash: '–',
    mdash: '—',
  };
  return html
    .replace(/<(script|style|head)\b[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<\/(p|div|tr|li|h[1-6]|table|section|header|footer|pre|dt|dd|caption)\s*>|<br\s*\/?>/gi, '\n')
    .replace(/<\/(td|th)\s*>/gi, ' \t ')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
      if (e[0] === '#') {
        const cp = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return Number.isFinite(cp) && cp > 0 && cp < 0x110000 ? String.fromCodePoint(cp) : m;
      }
      return named[e.toLowerCase()] ?? m;
    })
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .join('\n');
}

function rowsToUnits(header: string[], rows: unknown[][]): string[] {
  return rows.map((r) => header.map((h, i) => `${h}: ${cellText(r[i])}`).join(' | '));
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (v instanceof Date) return v.toISOString().slice(0, 10);
  if (typeof v === 'object') {
    const o = v as { text?: unknown; result?: unknown; richText?: { text: string }[]; hyperlink?: string };
    if (Array.isArray(o.richText)) return o.richText.map((t) => t.text).join('');
    if (o.result !== undefined) return cellText(o.result);
    if (typeof o.text === 'string') return o.text;
    return JSON.stringify(v);
  }
  return String(v);
}

function headerNames(raw: unknown[]): string[] {
  // pandas names blank header cells "Unnamed: i"
  return raw.map((h, i) => {
    const s = collapseWhitespace(cellText(h));
    return s === '' ? `Unnamed: ${i}` : s;
  });
}

async function xlsxUnits(data: Uint8Array, subject: string): Promise<{ units: string[]; sheets: number }> {
  const ExcelJS = (await import('exceljs')).default;
  const wb = new ExcelJS.Workbook();
  try {
    await wb.xlsx.load(Buffer.from(data.buffer, data.byteOffset, data.byteLength) as unknown as ArrayBuffer);
  } catch (e) {
    throw new LoupeInputError(subject, `not a readable .xlsx workbook (${(e as Error).message})`);
  }
  const units: string[] = [];
  let sheets = 0;
  wb.eachSheet((ws) => {
    sheets++;
    const rows: unknown[][] = [];
    let width = 0;
    ws.eachRow({ includeEmpty: false }, (row) => {
      const vals = (row.values as unknown[]).slice(1); // exceljs rows are 1-based
      width = Math.max(width, vals.length);
      rows.push(vals);
    });
    if (!rows.length) return;
    const head = rows[0]!;
    while (head.length < width) head.push(undefined);
    const header = headerNames(head);
    const prefix = sheets > 1 ? `[${ws.name}] ` : '';
    for (const u of rowsToUnits(header, rows.slice(1))) units.push(collapseWhitespace(prefix + u));
  });
  return { units, sheets };
}

/**
 * Extracts the units of one file.
 * @param name path relative to the root (for messages and the extension).
 * @param data the file's bytes.
 * @param opts `maxTextBytes` / `maxLineChars` limits, `signal` to cancel PDF extraction, `pdfExtractor` the PDF text
 *   extractor (default `pdfium`, see `pdf.ts`).
 * @returns the units (see {@link ExtractedDoc}).
 * @throws LoupeInputError naming the file with the reason it cannot be indexed (unsupported type,
 *   corrupt/encrypted/empty PDF, binary content in a text file, too large, invalid JSON/CSV/XLSX).
 */
export async function extractUnits(
  name: string,
  data: Uint8Array,
  opts: { maxTextBytes?: number; maxLineChars?: number; signal?: AbortSignal; pdfExtractor?: PdfExtractor } = {},
): Promise<ExtractedDoc> {
  const ext = extname(name).toLowerCase();
  const kind = unitKindFor(name);
  if (!kind) throw new LoupeInputError(name, `unsupported file type "${ext || '(no extension)'}"`);
  if (kind === 'Page') {
    const pages = await extractPdfPages(data, name, opts.signal, opts.pdfExtractor);
    const units = pages.map(collapseWhitespace);
    if (units.length === 0) throw new LoupeInputError(name, 'PDF has no pages');
    const note = units.every((u) => u === '') ? 'no text layer (scanned PDF?): pages are empty' : undefined;
    return { kind, units, note };
  }
  if (ext === '.xlsx' || ext === '.xls') {
    if (ext === '.xls') throw new LoupeInputError(name, 'legacy .xls workbooks are not supported (save as .xlsx)');
    const { units, sheets } = await xlsxUnits(data, name);
    return { kind, units, note: sheets > 1 ? `${sheets} sheets read (LongTA reads only the first)` : undefined };
  }
  const maxBytes = opts.maxTextBytes ?? DEFAULT_MAX_TEXT_BYTES;
  if (ext === '.docx') return { kind, units: await docxUnits(data, name, maxBytes) };
  if (data.byteLength > maxBytes) {
    throw new LoupeInputError(
      name,
      `text file too large (${(data.byteLength / 1048576).toFixed(1)} MiB > ${(maxBytes / 1048576).toFixed(0)} MiB limit)`,
    );
  }
  if (looksBinary(data)) throw new LoupeInputError(name, `binary content in a "${ext}" file (NUL or control bytes)`);
  const { text, fallback } = decodeText(data);
  const note = fallback ? 'not valid UTF-8: decoded as Windows-1252' : undefined;
  if (ext === '.csv' || ext === '.tsv') {
    let rows: unknown[][];
    try {
      rows = parseCsv(text, {
        delimiter: ext === '.tsv' ? '\t' : ',',
        relax_column_count: true,
        relax_quotes: true,
        skip_empty_lines: true,
        bom: true,
      }) as unknown[][];
    } catch (e) {
      throw new LoupeInputError(name, `cannot parse CSV (${(e as Error).message})`);
    }
    if (!rows.length) return { kind, units: [], note };
    return { kind, units: rowsToUnits(headerNames(rows[0]!), rows.slice(1)).map(collapseWhitespace), note };
  }
  let body = text;
  if (ext === '.json') {
    try {
      body = JSON.stringify(JSON.parse(text), null, 2);
    } catch (e) {
      throw new LoupeInputError(name, `invalid JSON (${(e as Error).message})`);
    }
  } else if (HTML_EXT.has(ext)) {
    body = htmlToText(text);
  }
  const lines = textToLines(body);
  const maxLine = opts.maxLineChars ?? DEFAULT_MAX_LINE_CHARS;
  const longest = lines.reduce((m, l) => Math.max(m, l.length), 0);
  if (longest > maxLine) {
    throw new LoupeInputError(
      name,
      `a single line of ${longest.toLocaleString('en-US')} characters (> ${maxLine.toLocaleString('en-US')}): not line-structured text`,
    );
  }
  const units = lines.map(collapseWhitespace);
  return { kind, units, note: HTML_EXT.has(ext) ? joinNotes(note, 'HTML reduced to text lines') : note };
}

/** XML entities of WordprocessingML text. */
const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/**
 * The paragraphs of a Word document (`word/document.xml` of the .docx package), one unit each, empty ones dropped;
 * tabs and line breaks become spaces. Source: ECMA-376 Part 1 §17.3 (paragraphs `w:p`, runs `w:r`, text `w:t`).
 */
async function docxUnits(data: Uint8Array, subject: string, maxBytes: number): Promise<string[]> {
  if (data.byteLength > maxBytes) {
    throw new LoupeInputError(
      subject,
      `document too large (${(data.byteLength / 1048576).toFixed(1)} MiB > ${(maxBytes / 1048576).toFixed(0)} MiB limit)`,
    );
  }
  let xml: string;
  try {
    const zip = await JSZip.loadAsync(data);
    const doc = zip.file('word/document.xml');
    if (!doc) throw new Error('no word/document.xml part');
    xml = await doc.async('string');
  } catch (e) {
    throw new LoupeInputError(subject, `not a readable .docx document (${(e as Error).message})`);
  }
  // the text part is bounded like a text file (a small package may inflate to much more)
  if (xml.length > 4 * maxBytes) {
    throw new LoupeInputError(subject, `document text too large (${(xml.length / 1048576).toFixed(1)} MiB of XML)`);
  }
  const units: string[] = [];
  for (const para of xml.split(/<\/w:p>/)) {
    const text = para
      .replace(/<w:(?:tab|br|cr)\b[^>]*\/>/g, ' ')
      .replace(/<[^>]+>/g, '')
      .replace(/&(amp|lt|gt|quot|apos);/g, (_, e: string) => XML_ENTITIES[e]!)
      .replace(/&#(x?)([0-9a-fA-F]+);/g, (_, x: string, n: string) => String.fromCodePoint(parseInt(n, x ? 16 : 10)));
    const u = collapseWhitespace(text);
    if (u) units.push(u);
  }
  return units;
}

function joinNotes(a: string | undefined, b: string): string {
  return a ? `${a}; ${b}` : b;
}
