/**
 * pdf.js's worker, bundled as its own file (dist/webview/pdf-worker.js) and loaded on demand by
 * shared/pdf-view.ts only when a PDF page is opened. It runs on the webview's main thread: a webview cannot start a
 * Worker from its resource origin, and the CSP allows no fetch to build one from a blob.
 */
export { WorkerMessageHandler } from 'pdfjs-dist/build/pdf.worker.mjs';
