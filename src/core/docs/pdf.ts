/**
 * PDF → one text unit per page with pdfjs-dist's legacy (Node) build. Reading order: pdf.js content
 * order, with the items of one visual line (same baseline) sorted left to right and a space inserted
 * where a horizontal gap separates them; a word hyphenated across a line break is joined.
 * Source: spec §2.3 (LongTA `tools/common.py`: one unit per page, label "Page n").
 */
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

/**
 * pdf.js assigns `globalThis.navigator` when it finds none. VS Code's extension host replaces Node's `navigator`
 * with a getter that returns undefined (and warns), so that assignment throws "Cannot set property navigator of
 * #<Object> which has only a getter" and every PDF fails to extract. Give pdf.js a plain, writable value there.
 */
function ensureWritableNavigator(): void {
  const g = globalThis as { navigator?: unknown };
  const desc = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
  if (g.navigator !== undefined || !desc || desc.set || !desc.configurable) return;
  Object.defineProperty(globalThis, 'navigator', { value: { userAgent: 'node', language: 'en-US', platform: '' }, writable: true, configurable: true });
}
let pdfjsPromise: Promise<PdfjsModule> | undefined;

/**
 * pdf.js's data folders (standard font metrics, CMaps, wasm decoders) as `path/` strings, read from
 * disk by pdf.js's Node data factory; empty when the package folder cannot be found (bundled build).
 */
function pdfjsDataUrls(): { standardFontDataUrl?: string; cMapUrl?: string; wasmUrl?: string } {
  try {
    // from source (ESM) import.meta.url is set; in the CommonJS bundle it is empty and `require` exists
    const req = import.meta.url ? createRequire(import.meta.url) : typeof require === 'function' ? require : undefined;
    if (!req) return {};
    const dir = dirname(req.resolve('pdfjs-dist/package.json'));
    return { standardFontDataUrl: join(dir, 'standard_fonts') + sep, cMapUrl: join(dir, 'cmaps') + sep, wasmUrl: join(dir, 'wasm') + sep };
  } catch {
    return {};
  }
}
let dataUrls: ReturnType<typeof pdfjsDataUrls> | undefined;

function loadPdfjs(): Promise<PdfjsModule> {
  pdfjsPromise ??= (ensureWritableNavigator(), import('pdfjs-dist/legacy/build/pdf.mjs'));
  return pdfjsPromise;
}

const COMPOUND_PREFIX = new Set(
  'self non co pre post anti multi sub semi well long short full part cross low high mid inter intra over under age sex year'.split(' '),
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
 * @param data the file content (copied; pdf.js detaches the buffer it is given).
 * @param subject file name used in errors.
 * @param signal aborts between pages.
 * @returns one string per page (raw reading-order text, not yet whitespace-collapsed).
 * @throws LoupeInputError for an empty, corrupt or password-protected PDF (message says which).
 */
export async function extractPdfPages(data: Uint8Array, subject: string, signal?: AbortSignal): Promise<string[]> {
  if (data.byteLength === 0) throw new LoupeInputError(subject, 'empty file (0 bytes), not a PDF');
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
