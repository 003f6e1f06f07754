/**
 * PDF → one text unit per page, with one of two named extractors (issue 23):
 * - `pdfium` (default): PDFium (the PDF engine of Chrome) compiled to WebAssembly, npm `@embedpdf/pdfium`; page text
 *   from `FPDFText_GetText` in PDFium's reading order; a word PDFium joined across a line break (marked U+FFFE) is
 *   joined as below; unmapped glyphs (U+FFFD, e.g. dot leaders) and control characters become spaces. About 1.2× the
 *   CPU of poppler's `pdftotext` on the shared LongDA documentation (pdf.js: about 4×). Runs inside the WebAssembly
 *   sandbox: a hostile PDF cannot reach memory outside the module's own.
 * - `pdfjs`: pdfjs-dist's legacy (Node) build, Loupe's extractor before issue 23 (indexes built with it keep their
 *   text). Reading order: pdf.js content order, with the items of one visual line (same baseline) sorted left to right
 *   and a space inserted where a horizontal gap separates them; a word hyphenated across a line break is joined.
 * Neither is LongTA's own (PyPDF2 `extract_text`, not available in Node); page units are whitespace-collapsed
 * afterwards, so the two differ mostly where glyphs lack Unicode maps and in the order of table cells.
 * Source: spec §2.3 (LongTA `tools/common.py`: one unit per page, label "Page n").
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { LoupeInputError } from '../util/errors.ts';

interface TextItemLike {
  str: string;
  hasEOL?: boolean;
  transform?: number[];
  width?: number;
  height?: number;
}

type PdfjsModule = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
type PdfiumModule = import('@embedpdf/pdfium').WrappedPdfiumModule;

/** The PDF text extractors (see the file comment). */
export type PdfExtractor = 'pdfium' | 'pdfjs';
/** Every {@link PdfExtractor}, the default first. */
export const PDF_EXTRACTORS: readonly PdfExtractor[] = ['pdfium', 'pdfjs'];
/** The extractor used when none is named. */
export const DEFAULT_PDF_EXTRACTOR: PdfExtractor = 'pdfium';

/**
 * The version of unit extraction with each PDF extractor (above); cached units of another version are re-extracted.
 * Bump both, to numbers neither used before, when extraction of other file types changes. 3 = pdf.js (Loupe before
 * issue 23: caches built with it stay valid for `pdfjs`); 4 = PDFium.
 */
export const EXTRACTOR_VERSIONS: Readonly<Record<PdfExtractor, number>> = { pdfjs: 3, pdfium: 4 };
/** The extraction version of the default PDF extractor. */
export const EXTRACTOR_VERSION = EXTRACTOR_VERSIONS[DEFAULT_PDF_EXTRACTOR];

/**
 * Checks a user-given extractor name.
 * @param value the name as given; `subject` names the setting or option in errors.
 * @returns the extractor.
 * @throws LoupeInputError naming `subject` and the valid names when `value` is not one.
 */
export function parsePdfExtractor(value: unknown, subject: string): PdfExtractor {
  if (typeof value === 'string' && (PDF_EXTRACTORS as readonly string[]).includes(value)) return value as PdfExtractor;
  throw new LoupeInputError(
    subject,
    `unknown PDF extractor ${JSON.stringify(value)}: use ${PDF_EXTRACTORS.map((e) => `"${e}"`).join(' or ')}`,
  );
}

/**
 * pdf.js assigns `globalThis.navigator` when it finds none. VS Code's extension host replaces Node's `navigator`
 * with a getter that returns undefined (and warns), so that assignment throws "Cannot set property navigator of
 * #<Object> which has only a getter" and every PDF fails to extract. Give pdf.js a plain, writable value there.
 */
function ensureWritableNavigator(): void {
  const g = globalThis as { navigator?: unknown };
  const desc = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
  if (g.navigator !== undefined || !desc || desc.set || !desc.configurable) return;
  Object.defineProperty(globalThis, 'navigator', {
    value: { userAgent: 'node', language: 'en-US', platform: '' },
    writable: true,
    configurable: true,
  });
}
let pdfjsPromise: Promise<PdfjsModule> | undefined;

/**
 * pdf.js's data folders (standard font metrics, CMaps, wasm decoders) as `path/` strings, read from
 * disk by pdf.js's Node data factory; empty when the package folder cannot be found (bundled build).
 */
function pdfjsDataUrls(): { standardFontDataUrl?: string; cMapUrl?: string; wasmUrl?: string } {
  try {
    // from source (ESM) import.meta.url is set; in the CommonJS bundle it is empty and `require` exists
    const req = packageRequire();
    if (!req) return {};
    const dir = dirname(req.resolve('pdfjs-dist/package.json'));
    return {
      standardFontDataUrl: join(dir, 'standard_fonts') + sep,
      cMapUrl: join(dir, 'cmaps') + sep,
      wasmUrl: join(dir, 'wasm') + sep,
    };
  } catch {
    return {};
  }
}
let dataUrls: ReturnType<typeof pdfjsDataUrls> | undefined;

/** `require` for package files: from source (ESM) made from import.meta.url, in the CommonJS bundles the real one. */
function packageRequire(): NodeJS.Require | undefined {
  return import.meta.url ? createRequire(import.meta.url) : typeof require === 'function' ? require : undefined;
}

let pdfiumPromise: Promise<PdfiumModule> | undefined;
/** PDFium's WebAssembly module, instantiated once per thread (each extraction worker has its own). */
function loadPdfium(): Promise<PdfiumModule> {
  pdfiumPromise ??= (async () => {
    const req = packageRequire();
    if (!req) throw new Error('cannot locate the @embedpdf/pdfium package');
    // required (the package's CommonJS build), as the .vsix ships it: an import() from the bundles would ask for its ESM build
    const { init } = req('@embedpdf/pdfium') as typeof import('@embedpdf/pdfium');
    const m = await init({
      wasmBinary: readFileSync(req.resolve('@embedpdf/pdfium/pdfium.wasm')).buffer as ArrayBuffer,
    });
    m.PDFiumExt_Init();
    return m;
  })();
  pdfiumPromise.catch(() => (pdfiumPromise = undefined));
  return pdfiumPromise;
}

function loadPdfjs(): Promise<PdfjsModule> {
  pdfjsPromise ??= (ensureWritableNavigator(), import('pdfjs-dist/legacy/build/pdf.mjs'));
  return pdfjsPromise;
}

const COMPOUND_PREFIX = new Set(
  'self non co pre post anti multi sub semi well long short full part cross low high mid inter intra over under age sex year'.split(
    ' ',
  ),
);

/**
 * Joins the text items of one page into reading-order text.
 * @param items pdf.js `TextContent.items` (marked-content entries without `str` are ignored).
 * @returns page text with `\n` between visual lines and hyphenated line breaks joined.
 */
export function pageTextFromItems(items: readonly unknown[]): string {
  type Piece = { s: string; x: number; y: number; w: number; h: number };
  const lines: Piece[][] = [];
  let cur: Piece[] = [];
  let curY: number | undefined;
  for (const raw of items) {
    const it = raw as TextItemLike;
    if (typeof it.str !== 'string') continue;
    const t = it.transform ?? [1, 0, 0, 1, 0, 0];
    const x = t[4] ?? 0;
    const y = t[5] ?? 0;
    const h = Math.abs(it.height ?? t[3] ?? 10) || 10;
    if (it.str === '') {
      // empty items carry only EOL information
      if (it.hasEOL && cur.length) {
        lines.push(cur);
        cur = [];
        curY = undefined;
      }
      continue;
    }
    if (curY !== undefined && Math.abs(y - curY) > h * 0.5 && cur.length) {
      lines.push(cur);
      cur = [];
    }
    cur.push({ s: it.str, x, y, w: it.width ?? 0, h });
    curY = y;
    if (it.hasEOL) {
      lines.push(cur);
      cur = [];
      curY = undefined;
    }
  }
  if (cur.length) lines.push(cur);

  const out: string[] = [];
  for (const line of lines) {
    const sorted = line.length > 1 ? [...line].sort((a, b) => a.x - b.x) : line;
    let text = '';
    let endX = -Infinity;
    for (const p of sorted) {
      if (text && endX > -Infinity) {
        const gap = p.x - endX;
        const needsSpace = !/\s$/.test(text) && !/^\s/.test(p.s) && gap > p.h * 0.15;
        if (needsSpace) text += ' ';
      }
      text += p.s;
      endX = p.x + p.w;
    }
    out.push(text);
  }
  // join words hyphenated across line breaks: "exami-" + "nation" → "examination"
  const parts: string[] = [];
  let prev = '';
  for (let i = 0; i < out.length; i++) {
    const line = out[i] ?? '';
    if (i === 0) {
      parts.push(line);
      prev = line;
      continue;
    }
    const frag = prev.endsWith('-') && /^[a-z]/.test(line) ? /([A-Za-z]+)-$/.exec(prev.slice(-40)) : null;
    if (frag) {
      // "exami-" + "nation" → "examination"; compounds like "self-" + "reported" keep the hyphen
      if (!COMPOUND_PREFIX.has(frag[1]!.toLowerCase())) parts[parts.length - 1] = parts[parts.length - 1]!.slice(0, -1);
      parts[parts.length - 1] += line;
      prev = line;
    } else {
      parts.push(line);
      prev = line;
    }
  }
  return parts.join('\n');
}

/**
 * Extracts page texts from PDF bytes.
 * @param data the file content (not modified).
 * @param subject file name used in errors.
 * @param signal aborts between pages.
 * @param extractor which extractor reads the text (default {@link DEFAULT_PDF_EXTRACTOR}).
 * @returns one string per page (raw reading-order text with `\n` between lines, not yet whitespace-collapsed); a page
 *   that fails to load is an empty string (one broken page must not lose the others).
 * @throws LoupeInputError for an empty, corrupt or password-protected PDF (message says which).
 */
export async function extractPdfPages(
  data: Uint8Array,
  subject: string,
  signal?: AbortSignal,
  extractor: PdfExtractor = DEFAULT_PDF_EXTRACTOR,
): Promise<string[]> {
  if (data.byteLength === 0) throw new LoupeInputError(subject, 'empty file (0 bytes), not a PDF');
  if (extractor === 'pdfjs') return pdfjsPages(data, subject, signal);
  try {
    return await pdfiumPages(data, subject, signal);
  } catch (e) {
    if (e instanceof LoupeInputError || signal?.aborted) throw e;
    // a trap inside the WebAssembly module (out of memory, a PDFium assertion) leaves its state unknown: start afresh
    pdfiumPromise = undefined;
    throw new LoupeInputError(subject, `PDFium failed while reading it: ${(e as Error).message ?? String(e)}`);
  }
}

/** PDFium's FPDF_GetLastError codes (fpdfview.h) as the reason a document did not open. */
const PDFIUM_ERRORS: Record<number, string> = {
  1: 'cannot open PDF: unknown error',
  2: 'cannot open PDF: file not found or could not be opened',
  3: 'not a valid PDF (file not in PDF format or corrupted)',
  4: 'encrypted PDF needs a password',
  5: 'cannot open PDF: unsupported security scheme',
  6: 'cannot open PDF: page not found or content error',
};

/**
 * One page's text as PDFium gives it, in the same shape as {@link pageTextFromItems}: `\n` between lines; a word
 * PDFium joined across a line break (its hyphen marked U+FFFE) loses the hyphen unless its first part is a compound
 * prefix ("self-reported"); runs of unmapped glyphs (U+FFFD) and control characters become one space.
 * @param raw `FPDFText_GetText` of the whole page (UTF-16 decoded).
 * @returns the page text.
 */
export function pageTextFromPdfium(raw: string): string {
  return (
    raw
      .replace(/\r\n?/g, '\n')
      .replace(/([A-Za-z]*)\uFFFE/g, (_m, frag: string) =>
        frag && !COMPOUND_PREFIX.has(frag.toLowerCase()) ? frag : `${frag}-`,
      )
      // eslint-disable-next-line no-control-regex -- control characters are what this removes
      .replace(/[\uFFFD\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]+/g, ' ')
  );
}

async function pdfiumPages(data: Uint8Array, subject: string, signal?: AbortSignal): Promise<string[]> {
  const m = await loadPdfium();
  const P = m.pdfium;
  const buf = P.wasmExports.malloc(data.byteLength);
  if (!buf) {
    throw new LoupeInputError(
      subject,
      `PDF too large for the extractor's memory (${(data.byteLength / 1048576).toFixed(1)} MiB)`,
    );
  }
  P.HEAPU8.set(data, buf);
  let doc = 0;
  try {
    doc = m.FPDF_LoadMemDocument(buf, data.byteLength, '');
    if (!doc) {
      const code = m.FPDF_GetLastError();
      throw new LoupeInputError(subject, PDFIUM_ERRORS[code] ?? `cannot open PDF (PDFium error ${code})`);
    }
    const n = m.FPDF_GetPageCount(doc);
    const pages: string[] = [];
    let out = 0;
    let outChars = 0;
    try {
      for (let i = 0; i < n; i++) {
        signal?.throwIfAborted();
        const page = m.FPDF_LoadPage(doc, i);
        if (!page) {
          pages.push('');
          continue;
        }
        try {
          const tp = m.FPDFText_LoadPage(page);
          if (!tp) {
            pages.push('');
            continue;
          }
          try {
            const count = m.FPDFText_CountChars(tp);
            if (count <= 0) {
              pages.push('');
              continue;
            }
            if (count + 1 > outChars) {
              if (out) P.wasmExports.free(out);
              outChars = Math.max(count + 1, outChars * 2);
              out = P.wasmExports.malloc(outChars * 2);
              if (!out) {
                throw new LoupeInputError(subject, `page ${i + 1} has too much text for the extractor's memory`);
              }
            }
            const written = m.FPDFText_GetText(tp, 0, count, out);
            pages.push(written > 0 ? pageTextFromPdfium(P.UTF16ToString(out)) : '');
          } finally {
            m.FPDFText_ClosePage(tp);
          }
        } finally {
          m.FPDF_ClosePage(page);
        }
      }
    } finally {
      if (out) P.wasmExports.free(out);
    }
    return pages;
  } finally {
    if (doc) m.FPDF_CloseDocument(doc);
    P.wasmExports.free(buf);
  }
}

async function pdfjsPages(data: Uint8Array, subject: string, signal?: AbortSignal): Promise<string[]> {
  const pdfjs = await loadPdfjs();
  const task = pdfjs.getDocument({
    data: new Uint8Array(data),
    ...(dataUrls ??= pdfjsDataUrls()),
    useWorkerFetch: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: 0,
  });
  let doc: Awaited<typeof task.promise>;
  try {
    doc = await task.promise;
  } catch (e) {
    await task.destroy().catch(() => {});
    const name = (e as { name?: string }).name ?? '';
    const msg = (e as Error).message ?? String(e);
    if (name === 'PasswordException') throw new LoupeInputError(subject, `encrypted PDF needs a password (${msg})`);
    if (name === 'InvalidPDFException') throw new LoupeInputError(subject, `not a valid PDF (${msg})`);
    throw new LoupeInputError(subject, `cannot open PDF: ${msg}`);
  }
  try {
    const pages: string[] = [];
    for (let i = 1; i <= doc.numPages; i++) {
      signal?.throwIfAborted();
      try {
        const page = await doc.getPage(i);
        const tc = await page.getTextContent();
        pages.push(pageTextFromItems(tc.items));
        page.cleanup();
      } catch (e) {
        if (signal?.aborted) throw e;
        pages.push(''); // one broken page must not lose the others
      }
    }
    return pages;
  } finally {
    await task.destroy().catch(() => {});
  }
}
