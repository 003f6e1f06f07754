/**
 * Aligned side-by-side documents for pairwise review (issue 16 "See both outputs aligned"), no LLM involved:
 * a run's output becomes a {@link ReviewDoc} (sections split at headings, figures, every number written in prose,
 * lists, headings and table cells with the words it is about and its offsets), its numbers are traced to the
 * notebook cell whose output contains them ({@link traceNumbers}, rule {@link numberMatches}), and two documents
 * are aligned section by section ({@link alignReviewDocs}) with the numbers that differ under the same label.
 * One marked lexer pass per document; the HTML of each section is marked's, with each number wrapped in
 * `<span class="loupe-num" data-num="<id>">` (plain markup, sanitised later in the webview with DOMPurify).
 */
import { distance } from 'fastest-levenshtein';
import { getDefaults, Lexer, Parser, Renderer, type Token, type Tokens } from 'marked';
import { LoupeInputError } from '../util/errors.ts';
import { CellNumberIndex, findNumbers, isLetterAt, sameWrittenValue, type IndexedCell } from './numbers.ts';

export {
  findNumbers,
  numberMatches,
  roundedKey,
  roundedScaled,
  sameWrittenValue,
  CellNumberIndex,
  type FoundNumber,
  type WrittenNumber,
  type CellNumber,
  type IndexedCell,
  type MatchTier,
} from './numbers.ts';

/** A number written in a document. */
export interface ReviewNumber {
  /** 0-based, in reading order within its document. */
  id: number;
  value: number;
  /** As written (`40.3%`, `1,234`, `-2.5`). */
  raw: string;
  /** Digits after the decimal point as written. */
  decimals: number;
  /** Written with `%`, "percent" or "per cent" (`value` is then the number written: `40.3%` → 40.3). */
  percent: boolean;
  /** Key of its section. */
  section: string;
  /**
   * The words it is about, normalised lower case, stop words dropped: up to three words before it in its sentence
   * ("median age"), looking past earlier numbers when only stop words separate them ("aged 20–29 was 31%" → "adults
   * aged" for all three); for the first number of a sentence with no words before it, up to three words after it
   * ("40% of adults" → "adults"); in a table body, `<row header> · <column header>` ("men · prevalence"); '' when
   * there are none.
   */
  label: string;
  /** Offsets in its section's `markdown` (UTF-16 code units; `end` exclusive). */
  start: number;
  end: number;
  /** The notebook cell whose output contains it, or null ("no source found"); set by {@link traceNumbers}. */
  source: { seq: number } | null;
}

/** A section of a document: the text under one heading (or one structured part of an output). */
export interface ReviewSection {
  /**
   * What sections are aligned by. Reports: the heading path, each heading normalised (lower case, leading
   * numbering and punctuation dropped) and joined by ` / ` (`results / by sex`); a document title (the first heading,
   * alone at the top level) is `title` and left out of its children's paths; text before the first heading is
   * `preamble`; a repeated path gets `#2`, `#3`. Structured outputs: the key given.
   */
  key: string;
  title: string;
  /** Heading depth (1–6); 0 for the preamble; 2 for structured sections. */
  level: number;
  /** Its Markdown (heading line included), line ends normalised to `\n`; number offsets refer to it. */
  markdown: string;
  /** Rendered HTML with numbers wrapped (not yet sanitised). */
  html: string;
  /** Ids of its numbers. */
  numbers: number[];
}

/** A figure of a document. */
export interface ReviewFigure {
  /** Key of its section. */
  section: string;
  alt: string;
  /** As written: a path relative to the run's workspace, a URL or a `data:` URI. */
  src: string;
}

/** A run's output as review shows it. */
export interface ReviewDoc {
  runId: string;
  sections: ReviewSection[];
  figures: ReviewFigure[];
  numbers: ReviewNumber[];
  /** Nothing to review: shown as "no report". */
  empty: boolean;
  /** Sections keyed by the caller (structured outputs): aligned by key only, never by similar titles. */
  keyed: boolean;
}

/** The tracing rule, as shown to reviewers (the legend of the review panel). */
export const TRACE_RULE =
  'A number is traced to the notebook cell whose output holds a value equal to it after rounding that value to the precision written (half away from zero; an integer matches within 0.5). 12.3% matches 0.123 or 12.3, and 0.123 matches a printed 12.3%; thousands separators are ignored; the sign must agree. Among matching cells: one that printed it as written first, then one that rounds to it, then a percent ↔ fraction match; the latest cell among equals.';

// ------------------------------------------------------------------------------------------------ documents

const STOP = new Set([
  'a',
  'an',
  'the',
  'and',
  'or',
  'but',
  'of',
  'in',
  'on',
  'at',
  'to',
  'for',
  'by',
  'with',
  'was',
  'were',
  'is',
  'are',
  'be',
  'been',
  'being',
  'from',
  'as',
  'than',
  'that',
  'this',
  'these',
  'those',
  'it',
  'its',
  'about',
  'approximately',
  'around',
  'roughly',
  'nearly',
  'almost',
  'over',
  'under',
  'some',
  'has',
  'had',
  'have',
  'which',
  'who',
  'whom',
  'while',
  'we',
  'our',
  'they',
  'their',
  'there',
  'here',
  'also',
  'only',
  'just',
  'then',
  'so',
  'such',
  'into',
  'per',
  'up',
  'down',
  'out',
  'at',
  'i',
  'e',
  'g',
  'ie',
  'eg',
  'vs',
  'versus',
  'more',
  'less',
  'most',
  'least',
  'very',
  'all',
  'each',
  'both',
  'between',
  'among',
  'within',
  'compared',
  'rose',
  'fell',
  'reached',
  'increased',
  'decreased',
  'stood',
  'remained',
]);
/** A character of a label word: letter, digit, apostrophe or hyphen. */
function isWordAt(text: string, i: number): boolean {
  const k = text.charCodeAt(i);
  return (k >= 48 && k <= 57) || k === 39 || k === 45 || k === 0x2019 || isLetterAt(text, i);
}

/**
 * Label words of `text[from, to)`: words (a letter, then letters, digits, apostrophes, hyphens), lower case, stop
 * words dropped; the last `max` of them (`last`) or the first `max`, joined by a space. Scans only as far as needed.
 */
function labelWords(text: string, from: number, to: number, max: number, last: boolean): string {
  let out = '';
  let n = 0;
  if (last) {
    let i = to - 1;
    while (n < max) {
      while (i >= from && !isWordAt(text, i)) i--;
      if (i < from) break;
      const e = i + 1;
      while (i >= from && isWordAt(text, i)) i--;
      let b = i + 1;
      while (b < e && !isLetterAt(text, b)) b++;
      if (b < e) {
        const w = text.slice(b, e).toLowerCase();
        if (!STOP.has(w)) {
          out = n ? `${w} ${out}` : w;
          n++;
        }
      }
    }
  } else {
    let i = from;
    while (n < max) {
      while (i < to && !isWordAt(text, i)) i++;
      if (i >= to) break;
      const b0 = i;
      while (i < to && isWordAt(text, i)) i++;
      let b = b0;
      while (b < i && !isLetterAt(text, b)) b++;
      if (b < i) {
        const w = text.slice(b, i).toLowerCase();
        if (!STOP.has(w)) {
          out = n ? `${out} ${w}` : w;
          n++;
        }
      }
    }
  }
  return out;
}

/** A table header or row header as a label part: lower case, markup dropped, spaces collapsed. */
function headerLabel(s: string): string {
  return (s.toLowerCase().match(/[\p{L}\p{N}%][\p{L}\p{N}%'’.-]*/gu) ?? []).join(' ');
}

/** Normalised form of one heading: lower case, leading numbering ("2.1", "IV.") and punctuation dropped. */
function headingKey(title: string): string {
  return (
    title
      .toLowerCase()
      .replace(/^\s*(?:\d+(?:\.\d+)*\.?|[ivxlc]+\.|[a-z]\))\s+/, '')
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim() || 'section'
  );
}

/** Length of a heading's leading numbering ("2.1 ", "IV. "), whose digits are not numbers of the report. */
const NUMBERING = /^\s*(?:\d+(?:\.\d+)*\.?|[IVXLCivxlc]+\.)\s+/;

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (s: string) => (/[&<>"']/.test(s) ? s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!) : s);

/** Plain text of inline tokens (heading titles, table headers). */
function plain(tokens: readonly Token[] | undefined, fallback: string): string {
  if (!tokens) return fallback;
  let s = '';
  for (const t of tokens) {
    if (t.type === 'image') continue;
    const x = t as { tokens?: Token[]; text?: string };
    s += x.tokens ? plain(x.tokens, x.text ?? '') : (x.text ?? '');
  }
  return s;
}

/** Where numbers go in a text token: start and end offsets in `token.text` and id of each, flat (`[s0, e0, id0, s1, …]`). */
type Wraps = number[];

/** One inline leaf of a block, as number extraction sees it. */
interface Piece {
  text: string;
  /** A text token whose numbers count (prose), or null (code span, escape, image…). */
  token: Tokens.Text | null;
  /** Offset of `text` in the block's plain text. */
  at: number;
  /** Its Markdown source (to move past it in the section markdown). */
  raw: string;
}

/**
 * Extraction state of one document: walks the tokens of each section in reading order, records numbers (offsets,
 * labels), figures, and which text tokens to wrap; the renderer below then wraps them.
 */
class Extractor {
  readonly numbers: ReviewNumber[] = [];
  readonly figures: ReviewFigure[] = [];
  readonly wraps = new Map<object, Wraps>();
  readonly figureIndex = new Map<object, number>();
  private section = '';
  private ids: number[] = [];
  private md = '';
  private cursor = 0;
  /** The leaves of the block being read (reused) and the plain-text length so far. */
  private readonly pieces: Piece[] = [];
  private at = 0;

  /** Walks one section's tokens. @returns the ids of its numbers. */
  sectionNumbers(key: string, md: string, tokens: readonly Token[]): number[] {
    this.section = key;
    this.ids = [];
    this.md = md;
    this.cursor = 0;
    this.blocks(tokens);
    return this.ids;
  }

  private blocks(tokens: readonly Token[]): void {
    for (let k = 0; k < tokens.length; k++) {
      const t = tokens[k]!;
      switch (t.type) {
        case 'heading':
          this.inline((t as Tokens.Heading).tokens, true, null);
          break;
        case 'paragraph':
          this.inline((t as Tokens.Paragraph).tokens, false, null);
          break;
        case 'text': {
          const x = t as Tokens.Text;
          if (x.tokens) this.inline(x.tokens, false, null);
          break;
        }
        case 'blockquote':
          this.blocks((t as Tokens.Blockquote).tokens);
          break;
        case 'list':
          for (let i = 0, items = (t as Tokens.List).items; i < items.length; i++) this.blocks(items[i]!.tokens);
          break;
        case 'table':
          this.table(t as Tokens.Table);
          break;
        case 'html':
          this.htmlFigures((t as Tokens.HTML).text);
          this.skip(t.raw);
          break;
        default: // code, space, hr, def: no numbers
          this.skip(t.raw);
      }
    }
  }

  /** Moves the cursor past a token that holds no numbers (so a number after it is not located inside it). */
  private skip(raw: string): void {
    if (!raw) return;
    const p = this.md.indexOf(raw, this.cursor);
    if (p >= 0) this.cursor = p + raw.length;
  }

  private table(t: Tokens.Table): void {
    const heads = t.header.map((c) => headerLabel(plain(c.tokens, c.text)));
    for (let i = 0; i < t.header.length; i++) this.inline(t.header[i]!.tokens, false, null);
    for (let r = 0; r < t.rows.length; r++) {
      const row = t.rows[r]!;
      const rowHead = headerLabel(plain(row[0]?.tokens, row[0]?.text ?? ''));
      row.forEach((c, i) => {
        const col = heads[i] ?? '';
        const label = i === 0 ? col : rowHead && col ? `${rowHead} · ${col}` : rowHead || col;
        this.inline(c.tokens, false, label);
      });
    }
  }

  private htmlFigures(html: string): void {
    for (const m of html.matchAll(/<img\b[^>]*?\bsrc\s*=\s*["']([^"']+)["'][^>]*>/gi)) {
      const alt = /\balt\s*=\s*["']([^"']*)["']/i.exec(m[0]);
      this.figures.push({ section: this.section, alt: alt?.[1] ?? '', src: m[1]! });
    }
  }

  /** Leaves of inline tokens in reading order; images become figures; raw HTML is skipped. */
  private leaves(tokens: readonly Token[], out: Piece[]): void {
    for (let k = 0; k < tokens.length; k++) {
      const t = tokens[k]!;
      switch (t.type) {
        case 'text': {
          const x = t as Tokens.Text;
          if (x.tokens) {
            this.leaves(x.tokens, out);
            break;
          }
          out.push({ text: x.text, token: x.escaped ? null : x, at: this.at, raw: x.raw });
          this.at += x.text.length;
          break;
        }
        case 'strong':
        case 'em':
        case 'del':
        case 'link':
          this.leaves((t as Tokens.Strong).tokens, out);
          break;
        case 'image': {
          const x = t as Tokens.Image;
          this.figureIndex.set(x, this.figures.length);
          this.figures.push({ section: this.section, alt: x.text, src: x.href });
          out.push({ text: ' ', token: null, at: this.at, raw: x.raw });
          this.at += 1;
          break;
        }
        case 'html':
          this.htmlFigures((t as Tokens.HTML).text);
          out.push({ text: ' ', token: null, at: this.at, raw: t.raw });
          this.at += 1;
          break;
        case 'br': // a hard break ends a clause (a soft line break in a paragraph does not)
          out.push({ text: BREAK, token: null, at: this.at, raw: t.raw });
          this.at += 1;
          break;
        default: {
          // codespan, escape, checkbox
          const text = (t as { text?: string }).text ?? '';
          out.push({ text, token: null, at: this.at, raw: t.raw });
          this.at += text.length;
        }
      }
    }
  }

  /** One block of inline tokens (paragraph, heading, list text, table cell): numbers, offsets, labels. */
  private inline(tokens: readonly Token[] | undefined, heading: boolean, label: string | null): void {
    if (!tokens?.length) return;
    const pieces = this.pieces;
    pieces.length = 0;
    this.at = 0;
    this.leaves(tokens, pieces);
    const numbering = heading ? (NUMBERING.exec(joinText(pieces))?.[0].length ?? 0) : 0;
    const first = this.numbers.length;
    // start and end of each number in the block's plain text, for labels
    let pos: number[] | null = null;
    // locate each leaf in the section markdown in order; numbers inside prose leaves
    for (let k = 0; k < pieces.length; k++) {
      const p = pieces[k]!;
      const raw = p.raw;
      let base = -1;
      if (raw) {
        const q = this.md.indexOf(raw, this.cursor);
        if (q >= 0) {
          base = q;
          this.cursor = q + raw.length;
        }
      }
      const tok = p.token;
      if (!tok || !HAS_DIGIT.test(p.text)) continue;
      const fs = findNumbers(p.text);
      for (let x = 0; x < fs.length; x++) {
        const f = fs[x]!;
        if (p.at + f.start < numbering) continue;
        let start: number;
        if (base >= 0 && tok.raw === tok.text) start = base + f.start;
        else {
          const q = this.md.indexOf(f.raw, base >= 0 ? base : this.cursor);
          start = q >= 0 ? q : Math.min(this.cursor, this.md.length);
          if (base < 0 && q >= 0) this.cursor = q + f.raw.length;
        }
        const id = this.numbers.length;
        this.numbers.push({
          id,
          value: f.value,
          raw: f.raw,
          decimals: f.decimals,
          percent: f.percent,
          section: this.section,
          label: label ?? '',
          start,
          end: Math.min(this.md.length, start + (start < this.md.length ? f.raw.length : 0)),
          source: null,
        });
        this.ids.push(id);
        const w = this.wraps.get(tok);
        if (w) w.push(f.start, f.end, id);
        else this.wraps.set(tok, [f.start, f.end, id]);
        if (label === null) (pos ??= []).push(p.at + f.start, p.at + f.end);
      }
    }
    if (pos) {
      const text = joinText(pieces);
      const labels = labelsOf(text, pos);
      for (let i = 0; i < labels.length; i++) this.numbers[first + i]!.label = labels[i]!;
    }
  }
}

const HAS_DIGIT = /\d/;

/** The plain text of a block's leaves. */
function joinText(pieces: readonly Piece[]): string {
  let text = '';
  for (let k = 0; k < pieces.length; k++) text += pieces[k]!.text;
  return text;
}

/** Stands for a hard line break in a block's plain text. */
const BREAK = '\u2029';

/** Is `text[i]` the end of a sentence or clause (". ", ";", ":", "!", "?", a hard line break)? (Char codes: no strings made.) */
function isBoundary(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  if (c === 0x2029 || c === 59) return true; // BREAK, ';'
  if (c === 46 || c === 58 || c === 33 || c === 63) {
    // '.', ':', '!', '?'
    const n = text.charCodeAt(i + 1);
    return Number.isNaN(n) || n === 32 || n === 10 || n === 9 || n === 13 || n === 0xa0 || n === 0x2029;
  }
  return false;
}

/**
 * The labels of a block's numbers (`pos`: start, end of each in the block's plain text `text`; see
 * {@link ReviewNumber.label}), in one pass: the words of the text since the previous number (or since the sentence
 * began); when there are none, the last words found earlier in the same sentence; for the first number of a sentence
 * with none, the words after it.
 */
function labelsOf(text: string, pos: readonly number[]): string[] {
  const out: string[] = [];
  let carry = '';
  for (let i = 0; 2 * i < pos.length; i++) {
    const start = pos[2 * i]!;
    const from = i > 0 ? pos[2 * i - 1]! : 0;
    let s = start - 1;
    while (s >= from && !isBoundary(text, s)) s--;
    const first = s >= from || i === 0; // the sentence began since the previous number
    if (first) carry = '';
    const w = labelWords(text, s + 1, start, 3, true);
    if (w) {
      carry = w;
      out.push(w);
      continue;
    }
    if (carry || !first) {
      out.push(carry);
      continue;
    }
    const after = pos[2 * i + 1]!;
    const stop = 2 * i + 2 < pos.length ? pos[2 * i + 2]! : text.length;
    let e = after;
    while (e < stop && !isBoundary(text, e)) e++;
    out.push(labelWords(text, after, e, 3, false));
  }
  return out;
}

/** marked's renderer with numbers wrapped and figures kept as references. */
class ReviewRenderer extends Renderer {
  ex: Extractor;

  constructor(ex: Extractor) {
    super();
    this.ex = ex;
  }

  override text(token: Tokens.Text | Tokens.Escape): string {
    if ('tokens' in token && token.tokens) return this.parser.parseInline(token.tokens);
    if ('escaped' in token && token.escaped) return token.text;
    const w = this.ex.wraps.get(token);
    if (!w) return escapeHtml(token.text);
    let html = '';
    let at = 0;
    for (let k = 0; k < w.length; k += 3) {
      const start = w[k]!;
      const end = w[k + 1]!;
      html +=
        escapeHtml(token.text.slice(at, start)) +
        `<span class="loupe-num" data-num="${w[k + 2]!}">${escapeHtml(token.text.slice(start, end))}</span>`;
      at = end;
    }
    return html + escapeHtml(token.text.slice(at));
  }

  /** Figures embedded as data URIs are shown; a file or URL becomes a reference the webview resolves (`data-fig`: index in `ReviewDoc.figures`). */
  override image(token: Tokens.Image): string {
    if (/^data:image\/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]+$/.test(token.href)) return super.image(token);
    const i = this.ex.figureIndex.get(token);
    return `<span class="loupe-figure"${i === undefined ? '' : ` data-fig="${i}"`} title="${escapeHtml(token.href)}">[figure: ${escapeHtml(token.text || token.href)}]</span>`;
  }
}

function checkText(v: unknown, subject: string): string {
  if (typeof v !== 'string') throw new LoupeInputError(subject, `must be text, got ${v === null ? 'null' : typeof v}`);
  return v.replace(/\r\n?/g, '\n');
}

function renderSection(
  ex: Extractor,
  parser: Parser,
  key: string,
  md: string,
  tokens: Token[],
): { html: string; numbers: number[] } {
  const numbers = ex.sectionNumbers(key, md, tokens);
  return { html: parser.parse(tokens), numbers };
}

function newParser(ex: Extractor): Parser {
  return new Parser({ ...getDefaults(), renderer: new ReviewRenderer(ex) });
}

/**
 * A review document from sections already keyed (structured outputs: BLADE decision types, DDR report and
 * insights, LongDA answers per query), with the same number extraction and HTML as {@link reviewDocFromMarkdown}.
 * Keys are kept as given (a repeated key gets `#2`, `#3`); sections are aligned by key only (`keyed`).
 * @param runId the run; `sections` in reading order, Markdown each (no heading needed: the title is shown).
 * @returns the document; `empty` when every section's Markdown is blank.
 * @throws LoupeInputError when a key is blank or a title / Markdown is not text.
 */
export function reviewDocFromSections(
  runId: string,
  sections: ReadonlyArray<{ key: string; title: string; markdown: string }>,
): ReviewDoc {
  const ex = new Extractor();
  const parser = newParser(ex);
  const seen = new Map<string, number>();
  const out: ReviewSection[] = [];
  sections.forEach((s, i) => {
    if (typeof s.key !== 'string' || !s.key.trim()) {
      throw new LoupeInputError(`run ${runId} section ${i + 1}`, 'has no key');
    }
    const md = checkText(s.markdown, `run ${runId} section ${s.key}`);
    const title = checkText(s.title, `run ${runId} section ${s.key} title`);
    const n = (seen.get(s.key) ?? 0) + 1;
    seen.set(s.key, n);
    const key = n > 1 ? `${s.key}#${n}` : s.key;
    const r = renderSection(ex, parser, key, md, new Lexer().lex(md));
    out.push({ key, title, level: 2, markdown: md, html: r.html, numbers: r.numbers });
  });
  return {
    runId,
    sections: out,
    figures: ex.figures,
    numbers: ex.numbers,
    empty: !out.some((s) => s.markdown.trim()),
    keyed: true,
  };
}

/**
 * A review document from a Markdown report, in one lexer pass: a section per heading (the text before the first
 * heading is the `preamble` section, titled "Introduction"); numbers from prose, list items, headings (not their
 * leading numbering) and table cells — never from code blocks, code spans, raw HTML, link URLs or image sources;
 * figures from images (`![alt](src)`, also `<img src>`), files or data URIs alike.
 * @param runId the run; `markdown` the report ('' or blank → an empty doc, "no report").
 * @returns the document; keys as in {@link ReviewSection.key}.
 * @throws LoupeInputError when `markdown` is not text.
 */
export function reviewDocFromMarkdown(runId: string, markdown: string): ReviewDoc {
  const src = checkText(markdown, `run ${runId} report`);
  if (!src.trim()) return { runId, sections: [], figures: [], numbers: [], empty: true, keyed: false };
  const all = new Lexer().lex(src);
  const groups: Array<{ title: string; level: number; tokens: Token[] }> = [];
  let cur: (typeof groups)[number] | null = null;
  for (const t of all) {
    if (t.type === 'heading') {
      const h = t as Tokens.Heading;
      cur = { title: plain(h.tokens, h.text).trim(), level: h.depth, tokens: [t] };
      groups.push(cur);
    } else {
      if (!cur) {
        cur = { title: 'Introduction', level: 0, tokens: [] };
        groups.push(cur);
      }
      cur.tokens.push(t);
    }
  }
  // a document title: the first heading, the only one at its level or above
  const heads = groups.filter((g) => g.level > 0);
  const top = heads.length ? Math.min(...heads.map((g) => g.level)) : 0;
  const titleGroup =
    heads.length > 1 && heads[0]!.level === top && heads.filter((g) => g.level === top).length === 1 ? heads[0]! : null;
  const ex = new Extractor();
  const parser = newParser(ex);
  const seen = new Map<string, number>();
  const path: Array<{ level: number; key: string }> = [];
  const sections: ReviewSection[] = [];
  for (const g of groups) {
    let base: string;
    if (g.level === 0) base = 'preamble';
    else if (g === titleGroup) base = 'title';
    else {
      while (path.length && path[path.length - 1]!.level >= g.level) path.pop();
      path.push({ level: g.level, key: headingKey(g.title) });
      base = path.map((p) => p.key).join(' / ');
    }
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    const key = n > 1 ? `${base}#${n}` : base;
    const md = g.tokens.map((t) => t.raw).join('');
    const r = renderSection(ex, parser, key, md, g.tokens);
    sections.push({ key, title: g.title, level: g.level, markdown: md, html: r.html, numbers: r.numbers });
  }
  return { runId, sections, figures: ex.figures, numbers: ex.numbers, empty: false, keyed: false };
}

// ------------------------------------------------------------------------------------------------ tracing

/**
 * Traces every number of a document to a notebook cell of its run: the cell whose output (stdout, result, table
 * texts) holds a value that matches it by {@link numberMatches}; when several do, the best — one that printed it at
 * no finer precision than written, then one whose value rounds to it, then a percent ↔ fraction match — and among
 * equals the latest (highest `seq`: a recomputed value supersedes an earlier one). Sets `source` on each number,
 * null = "no source found". The cells' numbers are indexed once ({@link CellNumberIndex}), one map per precision
 * the document uses, so tracing is linear in the numbers of both.
 * @param doc the document (changed in place); `cells` the run's cells (`KernelCellRecord`s fit; replays skipped).
 * @returns the same document.
 */
export function traceNumbers(doc: ReviewDoc, cells: ReadonlyArray<IndexedCell> | CellNumberIndex): ReviewDoc {
  const index = cells instanceof CellNumberIndex ? cells : new CellNumberIndex(cells);
  const hits = index.findAll(doc.numbers);
  for (let i = 0; i < doc.numbers.length; i++) {
    const hit = hits[i];
    doc.numbers[i]!.source = hit ? { seq: hit.seq } : null;
  }
  return doc;
}

// ------------------------------------------------------------------------------------------------ alignment

/** One aligned row: the same section of both documents, or a section only one has. */
export interface AlignedRow {
  /** The A section's key, else the B section's. */
  key: string;
  titleA: string | null;
  titleB: string | null;
  a: ReviewSection | null;
  b: ReviewSection | null;
  /** How the two were matched: equal keys, similar titles, or not (one side only). */
  match: 'key' | 'title' | null;
  /** Numbers (A id, B id) under the same label whose values differ after the precision rule ({@link sameWrittenValue}). */
  differing: Array<{ label: string; a: number; b: number }>;
}

/** Titles (normalised headings) at least this similar are aligned when their keys differ: 1 − Levenshtein distance / longer length. */
export const TITLE_SIMILARITY = 0.6;

/**
 * Similarity of two section titles in [0, 1]: 1 − Levenshtein distance / longer length of the normalised headings
 * (lower case, numbering and punctuation dropped), and at least {@link TITLE_SIMILARITY} when one's words are the
 * other's with more around them ("Results" ↔ "Key results").
 * @example titleSimilarity('2. Results', 'Key results') >= TITLE_SIMILARITY
 */
export function titleSimilarity(x: string, y: string): number {
  const a = headingKey(x);
  const b = headingKey(y);
  const l = Math.max(a.length, b.length);
  const sim = l ? 1 - distance(a, b) / l : 1;
  const contains = a.length > 2 && b.length > 2 && (` ${a} `.includes(` ${b} `) || ` ${b} `.includes(` ${a} `));
  return contains ? Math.max(sim, TITLE_SIMILARITY) : sim;
}

/**
 * Aligns two documents in reading order, like a diff: sections with equal keys first (a longest common subsequence,
 * so order is kept), then, between two such anchors, sections whose titles are similar ({@link titleSimilarity} ≥
 * {@link TITLE_SIMILARITY}; the order-preserving matching with the greatest total similarity) — not for structured
 * documents (`keyed`), whose keys are the only match, nor for a section whose key the other document has. A section
 * whose key the other document has out of order (B answered q3 last) is still aligned with it, in A's row (issue 42:
 * one section is never split across two rows); a row with one side only means the other document truly lacks it.
 * @returns the rows, each with the numbers that differ under the same label.
 */
export function alignReviewDocs(a: ReviewDoc, b: ReviewDoc): AlignedRow[] {
  const A = a.sections;
  const B = b.sections;
  const n = A.length;
  const m = B.length;
  const fuzzy = !a.keyed && !b.keyed;
  const keysA = new Set(A.map((x) => x.key));
  const keysB = new Set(B.map((x) => x.key));
  const L: Int32Array[] = Array.from({ length: n + 1 }, () => new Int32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      L[i]![j] = A[i]!.key === B[j]!.key ? L[i + 1]![j + 1]! + 1 : Math.max(L[i + 1]![j]!, L[i]![j + 1]!);
    }
  }
  const rows: AlignedRow[] = [];
  const row = (x: ReviewSection | null, y: ReviewSection | null, match: AlignedRow['match']): AlignedRow => ({
    key: x?.key ?? y!.key,
    titleA: x?.title ?? null,
    titleB: y?.title ?? null,
    a: x,
    b: y,
    match,
    differing: x && y ? differingNumbers(a, x, b, y) : [],
  });
  const gap = (i0: number, i1: number, j0: number, j1: number) => {
    const h = i1 - i0;
    const w = j1 - j0;
    if (!fuzzy || !h || !w) {
      for (let i = i0; i < i1; i++) rows.push(row(A[i]!, null, null));
      for (let j = j0; j < j1; j++) rows.push(row(null, B[j]!, null));
      return;
    }
    const sim = (i: number, j: number) => {
      if (keysB.has(A[i0 + i]!.key) || keysA.has(B[j0 + j]!.key)) return -1; // aligned by key below, wherever it is
      const s = titleSimilarity(A[i0 + i]!.title, B[j0 + j]!.title);
      return s >= TITLE_SIMILARITY ? s : -1;
    };
    const S: Float64Array[] = Array.from({ length: h + 1 }, () => new Float64Array(w + 1));
    const M: Float64Array[] = Array.from({ length: h }, () => new Float64Array(w));
    for (let i = h - 1; i >= 0; i--) {
      for (let j = w - 1; j >= 0; j--) {
        const s = sim(i, j);
        M[i]![j] = s;
        S[i]![j] = Math.max(S[i + 1]![j]!, S[i]![j + 1]!, s > 0 ? s + S[i + 1]![j + 1]! : -Infinity);
      }
    }
    let i = 0;
    let j = 0;
    while (i < h && j < w) {
      const s = M[i]![j]!;
      if (s > 0 && S[i]![j] === s + S[i + 1]![j + 1]!) {
        rows.push(row(A[i0 + i]!, B[j0 + j]!, 'title'));
        i++;
        j++;
      } else if (S[i]![j] === S[i + 1]![j]) {
        rows.push(row(A[i0 + i]!, null, null));
        i++;
      } else {
        rows.push(row(null, B[j0 + j]!, null));
        j++;
      }
    }
    for (; i < h; i++) rows.push(row(A[i0 + i]!, null, null));
    for (; j < w; j++) rows.push(row(null, B[j0 + j]!, null));
  };
  let pi = 0;
  let pj = 0;
  for (let i = 0, j = 0; i < n && j < m;) {
    if (A[i]!.key === B[j]!.key) {
      gap(pi, i, pj, j);
      rows.push(row(A[i]!, B[j]!, 'key'));
      pi = ++i;
      pj = ++j;
    } else if (L[i + 1]![j]! >= L[i]![j + 1]!) i++;
    else j++;
  }
  gap(pi, n, pj, m);
  // equal keys the common subsequence left apart (another order): one row, where A has it (keys are unique per document)
  const onlyB = new Map<string, AlignedRow>();
  for (const r of rows) if (!r.a && r.b && keysA.has(r.b.key)) onlyB.set(r.b.key, r);
  if (!onlyB.size) return rows;
  const out: AlignedRow[] = [];
  for (const r of rows) {
    if (!r.a && r.b && onlyB.has(r.b.key)) continue;
    const other = r.a && !r.b ? onlyB.get(r.a.key) : undefined;
    out.push(other ? row(r.a, other.b, 'key') : r);
  }
  return out;
}

/**
 * Numbers under the same label in two aligned sections whose values differ: the k-th number labelled ℓ in A is
 * compared with the k-th labelled ℓ in B (the same label written twice pairs in reading order); the same value is
 * the finer one rounded to the coarser one's precision, percent ↔ fraction allowed ({@link sameWrittenValue}).
 * Unlabelled numbers are compared only between structured documents (a LongDA answer: its position is its label).
 */
function differingNumbers(
  da: ReviewDoc,
  sa: ReviewSection,
  db: ReviewDoc,
  sb: ReviewSection,
): Array<{ label: string; a: number; b: number }> {
  const byLabel = (d: ReviewDoc, s: ReviewSection) => {
    const m = new Map<string, ReviewNumber[]>();
    for (let i = 0; i < s.numbers.length; i++) {
      const x = d.numbers[s.numbers[i]!]!;
      const l = m.get(x.label);
      if (l) l.push(x);
      else m.set(x.label, [x]);
    }
    return m;
  };
  const mb = byLabel(db, sb);
  const out: Array<{ label: string; a: number; b: number }> = [];
  const unlabelled = da.keyed && db.keyed;
  for (const [label, xs] of byLabel(da, sa)) {
    if (!label && !unlabelled) continue;
    const ys = mb.get(label);
    if (!ys) continue;
    for (let k = 0; k < Math.min(xs.length, ys.length); k++) {
      if (!sameWrittenValue(xs[k]!, ys[k]!)) out.push({ label, a: xs[k]!.id, b: ys[k]!.id });
    }
  }
  return out.sort((p, q) => p.a - q.a);
}
