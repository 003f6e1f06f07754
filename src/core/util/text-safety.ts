/**
 * Agent text is data on every expert surface (issue 38): whatever an agent, a model or an MCP client wrote — model
 * text, observations, answers, insight text, agent and client names, file names — is shown to an expert in a
 * terminal, a CLI table or a VS Code message. There it must not act: no ANSI/CSI colours or cursor moves, no OSC
 * window titles, OSC 8 links or OSC 52 clipboard writes, no DCS strings, no carriage return overwriting a line, no
 * bidirectional overrides reordering what is shown. These functions show such characters *escaped* (visible, never
 * dropped silently, so the evidence is not changed in meaning) and are the one place that decides how.
 * Source: issue 38 "Agent text is data on every expert surface"; ECMA-48 (C0/C1 control sets, CSI/OSC/DCS);
 * Unicode TR #9 (bidi embedding/override/isolate controls); Trojan Source (CVE-2021-42574).
 */

export interface NeutraliseOptions {
  /** Keep `\n` (and turn `\r\n` into `\n`); otherwise a line break is shown as the two characters `\n`. Default true. */
  keepNewlines?: boolean;
  /** Keep `\t`; otherwise shown as the two characters `\t`. Default true. */
  keepTabs?: boolean;
}

// C0 (U+0000–U+001F), DEL (U+007F), C1 (U+0080–U+009F), bidi embeddings/overrides (U+202A–U+202E) and isolates
// (U+2066–U+2069), the implicit marks U+200E/U+200F/U+061C, line/paragraph separators (U+2028/U+2029), and the
// interlinear annotation / object replacement controls U+FFF9–U+FFFB.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufff9-\ufffb]/;
const UNSAFE_G =
  // eslint-disable-next-line no-control-regex
  /\r\n|[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufff9-\ufffb]/g;

const NAMED: Record<string, string> = { '\r': '\\r', '\n': '\\n', '\t': '\\t' };

/**
 * How one unsafe character is shown, as the escape a programmer would type (visible in any font): `\x1b`, `\r`,
 * `\x9b` (C0, DEL, C1), `\u202e` (bidi and separators).
 */
function shown(ch: string): string {
  const code = ch.charCodeAt(0);
  if (NAMED[ch]) return NAMED[ch];
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
  return `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * Shows every terminal/display control character of `text` escaped, as the characters of its escape (visible in any
 * font), so the text cannot act on a terminal, a table or a message: C0 controls and DEL as `\xNN` (ESC `[2J` prints
 * as the text `\x1b[2J`; NUL `\x00`), `\r` as `\r`, C1 controls as `\x9b` …, bidi overrides/isolates/marks and
 * U+2028/U+2029 as `\u202e` …. With the defaults `\n` and `\t` stay (a `\r\n` becomes `\n`); otherwise they are
 * shown as `\n` / `\t`. Printable text, including every non-ASCII letter and emoji, is unchanged.
 * @param text any string (model text, an observation, an answer, a name); a non-string is turned into one with
 *   `String()`.
 * @param opts {@link NeutraliseOptions}: `keepNewlines` (default true), `keepTabs` (default true).
 * @returns the neutralised text; the same string when nothing had to change. Never throws.
 * @example neutraliseControls('a\x1b[2Jb') === 'a\\x1b[2Jb'
 * Source: issue 38; ECMA-48 §5 (C0, C1, CSI, OSC, DCS).
 */
export function neutraliseControls(text: string, opts: NeutraliseOptions = {}): string {
  const s = typeof text === 'string' ? text : String(text);
  if (!UNSAFE.test(s)) return s;
  const keepNl = opts.keepNewlines ?? true;
  const keepTab = opts.keepTabs ?? true;
  return s.replace(UNSAFE_G, (ch) => {
    if (ch === '\r\n' || ch === '\n') return keepNl ? '\n' : '\\n';
    if (ch === '\t') return keepTab ? '\t' : '\\t';
    return shown(ch);
  });
}

/**
 * True when `text` holds a character {@link neutraliseControls} would escape (with the default options, i.e.
 * `\n`, `\r\n` and `\t` allowed).
 * @param text any string. @returns whether it holds a control character. Never throws.
 * Source: issue 38.
 */
export function hasControls(text: string): boolean {
  return UNSAFE.test(text.replace(/\r\n|[\n\t]/g, ''));
}

/**
 * One line of agent-derived text for a table cell, a label or a one-line message: controls escaped as in
 * {@link neutraliseControls}, line breaks and tabs shown as `\n`, `\t`, and cut to `maxChars` characters (code
 * points, so an emoji is never split) with `…` appended.
 * @param text any string; @param maxChars the longest result before the `…` (default 200; ≥ 1).
 * @returns the single-line text. Never throws.
 * @example oneLine('bad\nname\x1b]0;t\x07') === 'bad\\nname\\x1b]0;t\\x07'
 * Source: issue 38.
 */
export function oneLine(text: string, maxChars = 200): string {
  const s = neutraliseControls(text, { keepNewlines: false, keepTabs: false });
  const cps = Array.from(s);
  return cps.length > maxChars ? `${cps.slice(0, Math.max(1, maxChars)).join('')}…` : s;
}

/**
 * Text for a VS Code notification or modal detail that may hold agent-derived text: controls escaped as in
 * {@link neutraliseControls} (line breaks and tabs kept), Markdown-style links broken apart — a notification turns
 * `[label](command:…)` / `[label](https://…)` into a clickable link, so `](` becomes `] (` and the text stays
 * readable but inert — and cut to `maxChars` characters with `…`.
 * @param text any string; @param maxChars the longest result (default 2,000).
 * @returns the inert text. Never throws.
 * @example forMessage('[x](command:rm)') === '[x] (command:rm)'
 * Source: issue 38; VS Code notifications' link syntax (`parseLinkedText`, vs/base/common/linkedText.ts).
 */
export function forMessage(text: string, maxChars = 2000): string {
  const s = neutraliseControls(text).replace(/\]\s*\(/g, '] (');
  const cps = Array.from(s);
  return cps.length > maxChars ? `${cps.slice(0, maxChars).join('')}…` : s;
}

/**
 * Agent text for Markdown: every character Markdown or HTML could read as syntax — `& < > " ' [ ] ( ) ! * \` | \\ $
 * ~ : = { } ^`, and `_` where it could open or close emphasis (not inside a word, so `NHANES_508` stays readable) —
 * is written as a numeric character reference (`&#60;`), which Markdown renders as that character and never as
 * markup; line breaks and controls are shown escaped (`\n`, `\x1b`), so the result is one line. It holds no
 * `<script`, `onerror=` or `javascript:`.
 * @param text any string. @returns Markdown source that renders as exactly `text` (on one line). Never throws.
 * @example markdownText('<img onerror=x>') === '&#60;img onerror&#61;x&#62;'
 * Source: issue 38; CommonMark 0.31 §2.5 (entity and numeric character references), §6.6 (raw HTML).
 */
export function markdownText(text: string): string {
  return neutraliseControls(String(text), { keepNewlines: false, keepTabs: false }).replace(
    /[&<>"'[\]()!*`|\\$~:={}^]|(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu,
    (ch) => `&#${ch.charCodeAt(0)};`,
  );
}
