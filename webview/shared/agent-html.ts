/**
 * The one way text an agent (or an MCP client) wrote becomes DOM in a Loupe webview (issue 38): reports, submissions,
 * observations, insights, claims, answers, notes. Everything an agent writes is data: it may be shown, never obeyed.
 *
 * A DOMPurify profile narrower than DOMPurify's default:
 * - an allowlist of the elements Markdown produces (headings, paragraphs, lists, tables, code, emphasis, images,
 *   links); everything else is dropped — `<style>`, `<link>`, `<meta>`, `<base>`, `<form>` and every form control,
 *   `<iframe>`/`<object>`/`<embed>`, `<svg>`/`<math>` foreign content, `<details>` (its content is kept, always
 *   open), `<template>`, media elements, custom elements. The text of `<style>`, `<script>`, `<template>` … goes too;
 *   of the others it stays as text.
 * - an allowlist of attributes: no `style`, no `id` / `name` (nothing can take or clobber the panel's own ids), no
 *   `srcset`/`sizes`, no `target`, no event handlers, no presentational attributes (`width`, `bgcolor`, `align`);
 *   `class` keeps only the classes the caller names (the review's `loupe-num` markers), nothing of the panel's own.
 * - no network and no navigation: a link keeps its text, loses its `href` (shown as the tooltip, "not followed");
 *   an image shows only when it is a `data:` PNG/JPEG/GIF/WebP (an agent's own figure embedded in its report),
 *   any other image becomes the text `[image: alt]`.
 * The result goes in a `div.agent-html` whose stylesheet contains it: layout and paint containment (nothing inside
 * can be positioned over the rest of the panel), long words wrap, wide tables and code scroll in the box.
 *
 * The panels' CSP (`src/vscode/webview-shell.ts`) backs this up: no `'unsafe-inline'` style, `form-action`,
 * `base-uri` and `frame-src` `'none'`. Loupe's own markup is styled through {@link adoptCss}.
 */
import DOMPurify, { type Config, type DOMPurify as Purifier, type WindowLike } from 'dompurify';
import { marked } from 'marked';
import { adoptCss } from './styles.ts';

/** Elements an agent's HTML may keep (what Markdown renders to, plus a few inline ones). */
export const AGENT_TAGS: readonly string[] = [
  'a',
  'abbr',
  'b',
  'blockquote',
  'br',
  'caption',
  'cite',
  'code',
  'col',
  'colgroup',
  'dd',
  'del',
  'dfn',
  'div',
  'dl',
  'dt',
  'em',
  'figcaption',
  'figure',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'i',
  'img',
  'ins',
  'kbd',
  'li',
  'mark',
  'ol',
  'p',
  'pre',
  'q',
  's',
  'samp',
  'small',
  'span',
  'strong',
  'sub',
  'sup',
  'table',
  'tbody',
  'td',
  'tfoot',
  'th',
  'thead',
  'tr',
  'u',
  'ul',
  'var',
];

/** Attributes an agent's HTML may keep; `class` is further narrowed to the caller's classes, `href`/`src` to no network. */
export const AGENT_ATTRS: readonly string[] = [
  'alt',
  'title',
  'colspan',
  'rowspan',
  'start',
  'reversed',
  'src',
  'class',
  'data-num',
  'data-fig',
];

/** Elements whose content goes with them (DOMPurify's list plus what could carry CSS or markup as text). */
const DROP_CONTENT = [
  'script',
  'style',
  'template',
  'noscript',
  'noembed',
  'noframes',
  'xmp',
  'plaintext',
  'iframe',
  'object',
  'embed',
  'svg',
  'math',
  'title',
  'head',
  'textarea',
  'select',
  'option',
  'audio',
  'video',
];

/** An image an agent may show: a base64 `data:` raster image, nothing fetched. */
export const DATA_IMAGE = /^data:image\/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]+$/i;

/** The class of the container every agent content is rendered into. */
export const AGENT_HTML_CLASS = 'agent-html';

/** Containment of agent content (adopted once per document by {@link agentHtml}). */
export const AGENT_HTML_CSS = `
.${AGENT_HTML_CLASS} { contain: layout paint; max-width: 100%; overflow-x: auto; overflow-wrap: anywhere; }
.${AGENT_HTML_CLASS} img { max-width: 100%; max-height: 60vh; height: auto; }
.${AGENT_HTML_CLASS} pre { overflow-x: auto; overflow-wrap: normal; }
.${AGENT_HTML_CLASS} a { color: inherit; text-decoration: underline dotted; cursor: help; }
.${AGENT_HTML_CLASS} .agent-image-ref { color: var(--vscode-descriptionForeground); font-style: italic; }
`;

/** Options of one rendering. */
export interface AgentHtmlOptions {
  /** Classes the content may carry (e.g. the review's `loupe-num`, put there by Loupe's own renderer); default none. */
  classes?: readonly string[];
}

/** A sanitiser bound to one window (the webview's, or a jsdom window in tests). */
export interface AgentSanitizer {
  /** The DOM of `html` under the profile: a fragment of `window`'s document. */
  fragment(html: string, opts?: AgentHtmlOptions): DocumentFragment;
  /** `html` under the profile, serialised (for tests and logs; render with {@link AgentSanitizer.fragment}). */
  html(html: string, opts?: AgentHtmlOptions): string;
  /** Markdown (marked, GFM) rendered, then sanitised: the fragment. */
  markdown(md: string, opts?: AgentHtmlOptions): DocumentFragment;
}

/**
 * Builds the agent-content sanitiser for `win` (its own DOMPurify instance, so the hooks touch no other user).
 * @throws Error when `win` is no DOM window DOMPurify supports.
 */
export function createAgentSanitizer(win: WindowLike & { document: Document }): AgentSanitizer {
  const purify: Purifier = DOMPurify(win);
  if (!purify.isSupported) throw new Error('DOMPurify does not support this window: agent content cannot be sanitised');
  let classes = new Set<string>();
  purify.addHook('beforeSanitizeAttributes', (node) => {
    const el = node as Element;
    if (el.nodeType !== 1) return;
    if (el.tagName === 'A') {
      const href = el.getAttribute('href') ?? el.getAttribute('xlink:href');
      el.removeAttribute('href');
      if (href && href.trim()) el.setAttribute('title', `link not followed: ${href.trim().slice(0, 300)}`);
    }
    if (el.tagName === 'IMG') {
      const src = el.getAttribute('src') ?? '';
      if (!DATA_IMAGE.test(src)) el.removeAttribute('src');
    }
  });
  purify.addHook('uponSanitizeAttribute', (_node, data) => {
    if (data.attrName === 'class') {
      const kept = data.attrValue.split(/\s+/).filter((c) => classes.has(c));
      data.attrValue = kept.join(' ');
      if (!kept.length) data.keepAttr = false;
    } else if (data.attrName === 'src' && !DATA_IMAGE.test(data.attrValue)) data.keepAttr = false;
  });
  const config: Config = {
    ALLOWED_TAGS: [...AGENT_TAGS],
    ALLOWED_ATTR: [...AGENT_ATTRS],
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    ALLOW_UNKNOWN_PROTOCOLS: false,
    ALLOW_SELF_CLOSE_IN_ATTR: false,
    // every attribute not "URI-safe" must match this: only a data: image (src) — and the plain values below are URI-safe
    ALLOWED_URI_REGEXP: DATA_IMAGE,
    ADD_URI_SAFE_ATTR: ['colspan', 'rowspan', 'start', 'reversed', 'data-num', 'data-fig'],
    FORBID_CONTENTS: DROP_CONTENT,
    KEEP_CONTENT: true,
    SANITIZE_DOM: true,
    SAFE_FOR_TEMPLATES: false,
    WHOLE_DOCUMENT: false,
    RETURN_DOM_FRAGMENT: true,
  };
  const fragment = (html: string, opts: AgentHtmlOptions = {}): DocumentFragment => {
    classes = new Set(opts.classes ?? []);
    let frag: DocumentFragment;
    try {
      frag = purify.sanitize(String(html), config) as unknown as DocumentFragment;
    } finally {
      classes = new Set();
    }
    // an image Loupe may not show (a file, a URL) reads as what it is
    for (const img of [...frag.querySelectorAll('img')]) {
      if (img.getAttribute('src')) continue;
      const ref = win.document.createElement('span');
      ref.className = 'agent-image-ref';
      ref.textContent = `[image${img.alt ? `: ${img.alt}` : ''}]`;
      img.replaceWith(ref);
    }
    return win.document.importNode(frag, true);
  };
  const serialise = (f: DocumentFragment) => {
    const div = win.document.createElement('div');
    div.append(f);
    return div.innerHTML;
  };
  return {
    fragment,
    html: (html, opts) => serialise(fragment(html, opts)),
    markdown: (md, opts) => fragment(marked.parse(String(md), { async: false }) as string, opts),
  };
}

let shared: AgentSanitizer | undefined;
const sanitizer = () => (shared ??= createAgentSanitizer(window));

/**
 * Agent HTML as a `div.agent-html` (plus `extraClass`, e.g. `markdown`) holding the sanitised content; adopts the
 * containment stylesheet on first use.
 */
export function agentHtml(html: string, opts: AgentHtmlOptions & { extraClass?: string } = {}): HTMLElement {
  adoptCss(AGENT_HTML_CSS);
  const div = document.createElement('div');
  div.className = `${AGENT_HTML_CLASS}${opts.extraClass ? ` ${opts.extraClass}` : ''}`;
  div.append(sanitizer().fragment(html, opts));
  return div;
}

/** Agent Markdown (rendered by marked, then sanitised) as a `div.agent-html.markdown`. */
export function agentMarkdown(md: string, opts: AgentHtmlOptions = {}): HTMLElement {
  adoptCss(AGENT_HTML_CSS);
  const div = document.createElement('div');
  div.className = `${AGENT_HTML_CLASS} markdown`;
  div.append(sanitizer().markdown(md, opts));
  return div;
}
