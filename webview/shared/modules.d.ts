/** Module shapes esbuild provides to webview bundles (see esbuild.js: `.css` loads as text). */
declare module '*.css' {
  const text: string;
  export default text;
}

/** pdf.js's worker bundle (no typings shipped); Loupe runs it on the webview's main thread, see pdf-view.ts. */
declare module 'pdfjs-dist/build/pdf.worker.mjs' {
  export const WorkerMessageHandler: unknown;
}
