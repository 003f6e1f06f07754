/**
 * Renders one page of a PDF into a canvas with pdf.js, and marks where query terms occur on it.
 * The PDF bytes come from the host (GetPdfRequest); no URL outside the webview's resource roots is loaded.
 */
import * as pdfjs from 'pdfjs-dist';
import type { SearchMode } from '../../src/protocol/docsearch.ts';
import { matchRanges } from './highlight.ts';

let workerReady: Promise<void> | undefined;

/** Loads dist/webview/pdf-worker.js once and hands its message handler to pdf.js (main-thread "fake worker"). */
function ensureWorker(): Promise<void> {
  workerReady ??= (async () => {
    // Next to the panel's entry script (dist/webview/), not this module: with code splitting this file is a chunk
    // under dist/webview/chunks/.
    const entry = document.querySelector<HTMLScriptElement>('script[type="module"][src]');
    const url = new URL('pdf-worker.js', entry?.src ?? import.meta.url).href;
    const mod = (await import(/* @vite-ignore */ url)) as { WorkerMessageHandler: unknown };
    (globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = { WorkerMessageHandler: mod.WorkerMessageHandler };
  })();
  return workerReady;
}

const docs = new Map<string, Promise<pdfjs.PDFDocumentProxy>>();

/** Opens (and caches by key) a PDF from its bytes. */
export async function openPdf(
  key: string,
  load: () => Promise<ArrayBuffer | Uint8Array>,
): Promise<pdfjs.PDFDocumentProxy> {
  let doc = docs.get(key);
  if (!doc) {
    doc = (async () => {
      await ensureWorker();
      const bytes = await load();
      const data = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
      return pdfjs.getDocument({ data, useSystemFonts: true }).promise;
    })();
    docs.set(key, doc);
    doc.catch(() => docs.delete(key));
  }
  return doc;
}

export interface RenderedPage {
  page: number;
  pages: number;
  /** Text items on the page that contain a query term. */
  marks: number;
}

/**
 * Draws page `pageNo` (1-based) of `doc` into `canvas`, scaled to `width` CSS pixels, and outlines the text items
 * that contain query terms on `overlay` (a canvas stacked on top).
 */
export async function renderPage(
  doc: pdfjs.PDFDocumentProxy,
  pageNo: number,
  canvas: HTMLCanvasElement,
  overlay: HTMLCanvasElement,
  width: number,
  query: string,
  mode: SearchMode,
): Promise<RenderedPage> {
  const page = await doc.getPage(Math.max(1, Math.min(doc.numPages, pageNo)));
  const base = page.getViewport({ scale: 1 });
  const scale = Math.max(0.2, width / base.width);
  const viewport = page.getViewport({ scale });
  const dpr = window.devicePixelRatio || 1;
  for (const c of [canvas, overlay]) {
    c.width = Math.floor(viewport.width * dpr);
    c.height = Math.floor(viewport.height * dpr);
    c.style.width = `${Math.floor(viewport.width)}px`;
    c.style.height = `${Math.floor(viewport.height)}px`;
  }
  await page.render({ canvas, viewport, transform: dpr !== 1 ? [dpr, 0, 0, dpr, 0, 0] : undefined }).promise;

  const ctx = overlay.getContext('2d');
  let marks = 0;
  if (ctx && query.trim()) {
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, viewport.width, viewport.height);
    const styles = getComputedStyle(document.body);
    ctx.fillStyle =
      styles.getPropertyValue('--vscode-editor-findMatchHighlightBackground').trim() || 'rgba(234, 92, 0, 0.33)';
    ctx.strokeStyle = styles.getPropertyValue('--vscode-editor-findMatchBorder').trim() || 'rgba(234, 92, 0, 0.8)';
    const content = await page.getTextContent();
    for (const item of content.items) {
      if (!('str' in item) || !item.str) continue;
      const ranges = matchRanges(item.str, query, mode);
      if (!ranges.length) continue;
      const tx = pdfjs.Util.transform(viewport.transform, item.transform) as number[];
      const fontHeight = Math.hypot(tx[2] ?? 0, tx[3] ?? 0);
      const itemWidth = item.width * scale;
      // Measure with a generic font of the same size, then scale to the item's real width: close enough to box
      // words in proportional fonts (a per-character average is visibly off).
      ctx.font = `${fontHeight}px sans-serif`;
      const whole = ctx.measureText(item.str).width || 1;
      const k = itemWidth / whole;
      for (const [s, e] of ranges) {
        const x = (tx[4] ?? 0) + ctx.measureText(item.str.slice(0, s)).width * k;
        const w = ctx.measureText(item.str.slice(s, e)).width * k;
        const y = (tx[5] ?? 0) - fontHeight;
        ctx.fillRect(x - 1, y, Math.max(2, w + 2), fontHeight * 1.2);
        marks++;
      }
    }
  }
  return { page: page.pageNumber, pages: doc.numPages, marks };
}
