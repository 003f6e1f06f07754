/**
 * Loupe's own stylesheets in a webview, applied through the CSSOM (constructed stylesheets adopted by the document).
 * The panels' CSP has no `'unsafe-inline'` in `style-src` (issue 38: a `<style>` element or `style="…"` attribute an
 * agent smuggled into a report must not apply), so a `<style>` element — ours included — would be refused; a
 * constructed stylesheet is created by our own (nonce'd) script and is not subject to `style-src`.
 */

const adopted = new WeakMap<Document, Set<string>>();

/**
 * Adds `css` to the document's adopted stylesheets, after those already adopted (so a panel's rules come after the
 * shared ones, as `<style>` elements appended to `<head>` did). The same text is adopted once per document.
 */
export function adoptCss(css: string, doc: Document = document): void {
  let seen = adopted.get(doc);
  if (!seen) adopted.set(doc, (seen = new Set()));
  if (seen.has(css)) return;
  seen.add(css);
  const win = doc.defaultView ?? window;
  const sheet = new win.CSSStyleSheet();
  sheet.replaceSync(css);
  doc.adoptedStyleSheets = [...doc.adoptedStyleSheets, sheet];
}
