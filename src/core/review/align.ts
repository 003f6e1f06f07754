/**
 * Aligned side-by-side documents for pairwise review (issue 16 "See both outputs aligned"), no LLM involved:
 * a run's output becomes a {@link ReviewDoc} (sections split at headings, figures, every number written in prose,
 * lists, headings and table cells with the words it is about), its numbers are traced to the notebook cell whose
 * output contains them ({@link numberMatches}), and two documents are aligned section by section
 * ({@link alignReviewDocs}) with the numbers that differ under the same label. One marked lexer pass per document;
 * the HTML of each section wraps each number in `<span class="loupe-num" data-num="<id>">` (sanitised later, in
 * the webview, with DOMPurify).
 */
import { distance } from 'fastest-levenshtein';
import { Lexer, Parser, Renderer, type Token, type Tokens, type TokensList } from 'marked';

/** A number written in a document. */
export interface ReviewNumber {
  /** 0-based, in reading order within its document. */
  id: number;
  value: number;
  /** As written (`40.3%`, `1,234`). */
  raw: string;
  /** Digits after the decimal point as written. */
  decimals: number;
  /** Written with `%` or "percent". */
  percent: boolean;
  /** Key of its section. */
  section: string;
  /** The words it is about: up to three words before it in its sentence (lower case, stop words dropped), or a table cell's row and column headers. */
  label: string;
  /** The notebook cell whose output contains it, or null ("no source found"); set by {@link traceNumbers}. */
  source: { seq: number } | null;
}

/** A section of a document: the text under one heading. */
export interface ReviewSection {
  /** Normalised heading (lower case, numbering and punctuation dropped; `#2` for a repeated heading); `preamble` for text before the first heading. */
  key: string;
  title: string;
  level: number;
  markdown: string;
  /** Rendered HTML with numbers wrapped (not yet sanitised). */
  html: string;
  /** Ids of its numbers. */
  numbers: number[];
}

/** A run's output as review shows it. */
export interface ReviewDoc {
  runId: string;
  sections: ReviewSection[];
  figures: Array<{ section: string; alt: string; src: string }>;
  numbers: ReviewNumber[];
  /** Nothing to review ("no report"). */
  empty: boolean;
}

/** The tracing rule, as shown to reviewers. */
export const TRACE_RULE = 'A number is traced to the last notebook cell whose output holds a value equal to it after rounding that value to the precision written; percent and fraction forms are equivalent (12.3% = 0.123); thousands separators are ignored; the sign must agree.';

const STOP = new Set(['a', 'an', 'the', 'and', 'or', 'of', 'in', 'on', 'at', 'to', 'for', 'by', 'with', 'was', 'were', 'is', 'are', 'be', 'been', 'from', 'as', 'than', 'that', 'this', 'it', 'its', 'about', 'approximately', 'around', 'roughly', 'nearly', 'some', 'rose', 'fell', 'reached', 'has', 'had', 'have']);

/** A number found in a text: offsets, value, decimals, percent. */
interface Found { start: number; end: number; raw: string; value: number; decimals: number; percent: boolean }

const NUM_RE = /-?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?(?:\s?%|\s?percent\b)?/g;

/**
 * Numbers in a plain text: optional sign, thousands separators (groups of three), decimals, `%` or "percent".
 * A number glued to a letter (`F1`, `v2`, `3rd`, `1990s`) or to a dot (`1.2.3`) is not a number here; a hyphen
 * between digits (`2017-2018`) is not a sign.
 * @returns the numbers in order of appearance.
 */
export function findNumbers(text: string): Found[] {
  const out: Found[] = [];
  for (const m of text.matchAll(NUM_RE)) {
    let raw = m[0];
    let start = m.index;
    const before = start > 0 ? text[start - 1]! : '';
    if (raw.startsWith('-') && /[\w.]/.test(before)) { raw = raw.slice(1); start++; }
    const b = start > 0 ? text[start - 1]! : '';
    const end = start + raw.length;
    const after = text[end] ?? '';
    if (/[A-Za-z_]/.test(b) || (b === '.' && /\d/.test(text[start - 2] ?? '')) || /[A-Za-z_]/.test(after) || (after === '.' && /\d/.test(text[end + 1] ?? ''))) continue;
    const percent = /%|percent$/.test(raw);
    const num = raw.replace(/\s?(%|percent)$/, '').replace(/,/g, '');
    const dot = num.indexOf('.');
    const value = Number(num);
    if (!Number.isFinite(value)) continue;
    out.push({ start, end, raw, value, decimals: dot < 0 ? 0 : num.length - dot - 1, percent });
  }
  return out;
}

/** Label words: up to three non-stop words before a number in its sentence (lower case), from the text since the previous number, or before it when that is empty ("aged 20–29 was 31%" → "among adults aged"). */
function labelBefore(context: string): string {
  const sentence = context.split(/[.;:!?\n](?:\s|$)/).pop() ?? '';
  const pieces = sentence.split(/\d+(?:[.,]\d+)*/);
  for (let i = pieces.length - 1; i >= 0; i--) {
    const words = pieces[i]!.toLowerCase().replace(/[^a-z\s'-]/g, ' ').split(/\s+/).filter((w) => w && w !== '-' && !STOP.has(w));
    if (words.length) return words.slice(-3).join(' ');
  }
  return '';
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** Normalised section key of a heading. */
function keyOf(title: string): string {
  return title.toLowerCase().replace(/^\s*(?:\d+(?:\.\d+)*\.?|[ivx]+\.)\s+/, '').replace(/[^\p{L}\p{N}]+/gu, ' ').trim() || 'section';
}

/** Plain text of inline tokens (for headings and labels). */
function plain(tokens: readonly Token[] | undefined, fallback: string): string {
  if (!tokens) return fallback;
  return tokens.map((t) => ('tokens' in t && t.tokens ? plain(t.tokens, (t as { text?: string }).text ?? '') : (t as { text?: string }).text ?? '')).join('');
}

/** Builds docs: one renderer whose text hook extracts and wraps numbers. */
class NumberRenderer extends Renderer {
  numbers: ReviewNumber[] = [];
  figures: ReviewDoc['figures'] = [];
  section = '';
  sectionIds: number[] = [];
  /** Plain text of the current block so far (label context). */
  context = '';
  /** Label forced for the cell being rendered (row + column headers). */
  cellLabel: string | null = null;

  private wrap(text: string, escaped: boolean): string {
    const src = escaped ? text.replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'") : text;
    const found = findNumbers(src);
    if (!found.length) {
      this.context += src;
      return escapeHtml(src);
    }
    let html = '';
    let at = 0;
    for (const f of found) {
      html += escapeHtml(src.slice(at, f.start));
      this.context += src.slice(at, f.start);
      const id = this.numbers.length;
      this.numbers.push({ id, value: f.value, raw: f.raw, decimals: f.decimals, percent: f.percent, section: this.section, label: this.cellLabel ?? labelBefore(this.context.slice(-240)), source: null });
      this.sectionIds.push(id);
      html += `<span class="loupe-num" data-num="${id}">${escapeHtml(f.raw)}</span>`;
      this.context += f.raw;
      at = f.end;
    }
    html += escapeHtml(src.slice(at));
    this.context += src.slice(at);
    return html;
  }

  override text(token: Tokens.Text | Tokens.Escape): string {
    if ('tokens' in token && token.tokens) return this.parser.parseInline(token.tokens);
    return this.wrap(token.text, 'escaped' in token && !!token.escaped);
  }

  override paragraph(token: Tokens.Paragraph): string {
    this.context = '';
    return super.paragraph(token);
  }

  override heading(token: Tokens.Heading): string {
    this.context = '';
    return super.heading(token);
  }

  override listitem(item: Tokens.ListItem): string {
    this.context = '';
    return super.listitem(item);
  }

  override image(token: Tokens.Image): string {
    this.figures.push({ section: this.section, alt: token.text, src: token.href });
    if (/^data:image\/(png|jpeg|gif|svg\+xml);base64,/.test(token.href)) return super.image(token);
    return `<span class="loupe-figure" title="${escapeHtml(token.href)}">[figure: ${escapeHtml(token.text || token.href)}]</span>`;
  }

  override table(token: Tokens.Table): string {
    const headers = token.header.map((c) => plain(c.tokens, c.text).trim().toLowerCase());
    let head = '';
    this.cellLabel = null;
    for (const c of token.header) { this.context = ''; head += this.tablecell(c); }
    let body = '';
    for (const row of token.rows) {
      const rowHead = plain(row[0]?.tokens, row[0]?.text ?? '').trim().toLowerCase();
      let cells = '';
      row.forEach((c, i) => {
        this.context = '';
        this.cellLabel = i === 0 ? null : `${rowHead} · ${headers[i] ?? ''}`.trim();
        cells += this.tablecell(c);
      });
      this.cellLabel = null;
      body += this.tablerow({ text: cells });
    }
    return `<table>\n<thead>\n${this.tablerow({ text: head })}</thead>\n${body ? `<tbody>${body}</tbody>` : ''}</table>\n`;
  }
}

/**
 * A review document from sections already keyed (structured outputs: BLADE decision types, DDR insights, LongDA
 * answers). Keys are kept as given (made unique with `#n`).
 */
export function reviewDocFromSections(runId: string, sections: ReadonlyArray<{ key: string; title: string; markdown: string }>): ReviewDoc {
  const r = new NumberRenderer();
  const seen = new Map<string, number>();
  const out: ReviewSection[] = [];
  for (const s of sections) {
    const n = (seen.get(s.key) ?? 0) + 1;
    seen.set(s.key, n);
    const key = n > 1 ? `${s.key}#${n}` : s.key;
    r.section = key;
    r.sectionIds = [];
    const tokens = new Lexer().lex(s.markdown);
    const html = new Parser({ renderer: r }).parse(tokens);
    out.push({ key, title: s.title, level: 2, markdown: s.markdown, html, numbers: r.sectionIds });
  }
  return { runId, sections: out, figures: r.figures, numbers: r.numbers, empty: !sections.some((s) => s.markdown.trim()) };
}

/**
 * A review document from a Markdown report: one lexer pass; a section per heading (text before the first heading
 * is the `preamble`); numbers from prose, lists, headings and table cells (never code); figures from images.
 * @param markdown the report ('' → an empty doc, "no report").
 */
export function reviewDocFromMarkdown(runId: string, markdown: string): ReviewDoc {
  const r = new NumberRenderer();
  if (!markdown.trim()) return { runId, sections: [], figures: [], numbers: [], empty: true };
  const all: TokensList = new Lexer().lex(markdown);
  const groups: Array<{ title: string; level: number; tokens: Token[] }> = [];
  let cur: { title: string; level: number; tokens: Token[] } | null = null;
  for (const t of all) {
    if (t.type === 'heading') {
      cur = { title: plain((t as Tokens.Heading).tokens, (t as Tokens.Heading).text), level: (t as Tokens.Heading).depth, tokens: [t] };
      groups.push(cur);
    } else {
      if (!cur) { cur = { title: 'Introduction', level: 0, tokens: [] }; groups.push(cur); }
      cur.tokens.push(t);
    }
  }
  const seen = new Map<string, number>();
  const sections: ReviewSection[] = [];
  for (const g of groups) {
    const base = g.level === 0 ? 'preamble' : keyOf(g.title);
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    const key = n > 1 ? `${base}#${n}` : base;
    r.section = key;
    r.sectionIds = [];
    const list = Object.assign([...g.tokens], { links: all.links }) as TokensList;
    const html = new Parser({ renderer: r }).parse(list);
    sections.push({ key, title: g.title, level: g.level, markdown: g.tokens.map((t) => t.raw).join(''), html, numbers: r.sectionIds });
  }
  return { runId, sections, figures: r.figures, numbers: r.numbers, empty: false };
}

/** Round half away from zero to `d` decimals, as a canonical string (no `-0`). */
function roundKey(v: number, d: number): string {
  const f = 10 ** d;
  const x = Math.sign(v) * Math.round(Math.abs(v) * f + 1e-9) / f;
  return (x === 0 ? 0 : x).toFixed(d);
}

/**
 * The tracing rule ({@link TRACE_RULE}): does a cell value match a written number? Equal after rounding the cell
 * value to the decimals written (half away from zero); percent and fraction forms equivalent (the cell value, ×100
 * or ÷100, may match); thousands separators are already gone from both; the sign must agree.
 * @param written the number as written; `cellValue` a number printed by a cell.
 */
export function numberMatches(written: Pick<ReviewNumber, 'value' | 'decimals'>, cellValue: number): boolean {
  const want = roundKey(written.value, written.decimals);
  return [cellValue, cellValue * 100, cellValue / 100].some((v) => roundKey(v, written.decimals) === want);
}

/**
 * Traces every number of a document to the last cell whose output (stdout, result, tables) holds a matching value
 * ({@link numberMatches}); sets `source`, null when none. Cell numbers are indexed once per precision used.
 * @param cells the run's cells in execution order (replays excluded by the caller).
 * @returns the same document.
 */
export function traceNumbers(doc: ReviewDoc, cells: ReadonlyArray<{ seq: number; stdout: string; result: string | null; tables: ReadonlyArray<{ text: string }> }>): ReviewDoc {
  const values: Array<{ seq: number; v: number }> = [];
  for (const c of cells) {
    const text = [c.stdout, c.result ?? '', ...c.tables.map((t) => t.text)].join('\n');
    for (const f of findNumbers(text)) values.push({ seq: c.seq, v: f.value });
  }
  const byPrecision = new Map<number, Map<string, number>>();
  const index = (d: number): Map<string, number> => {
    let m = byPrecision.get(d);
    if (!m) {
      m = new Map();
      for (const { seq, v } of values) for (const x of [v, v * 100, v / 100]) m.set(roundKey(x, d), seq); // later cells win
      byPrecision.set(d, m);
    }
    return m;
  };
  for (const n of doc.numbers) {
    const seq = values.length ? index(n.decimals).get(roundKey(n.value, n.decimals)) : undefined;
    n.source = seq === undefined ? null : { seq };
  }
  return doc;
}

/** One aligned row: the same section of both documents, or a section only one has. */
export interface AlignedRow {
  key: string;
  a: ReviewSection | null;
  b: ReviewSection | null;
  /** Numbers (A id, B id) under the same label whose values differ after the precision rule (paired in reading order per label). */
  differing: Array<{ label: string; a: number; b: number }>;
}

/** Similarity of two titles in [0, 1] (1 − Levenshtein distance / longer length). */
function similarity(x: string, y: string): number {
  const l = Math.max(x.length, y.length);
  return l ? 1 - distance(x, y) / l : 1;
}

/** Titles at least this similar are aligned when their keys differ. */
export const TITLE_SIMILARITY = 0.6;

/**
 * Aligns two documents in reading order: sections with equal keys first (longest common subsequence, so order is
 * kept), then, between those anchors, sections whose titles are similar (≥ {@link TITLE_SIMILARITY}, or one key
 * contains the other: "Results" ↔ "Key results"); the rest stand alone on their side.
 * @returns rows with the differing numbers of each aligned pair.
 */
export function alignReviewDocs(a: ReviewDoc, b: ReviewDoc): AlignedRow[] {
  const A = a.sections;
  const B = b.sections;
  const n = A.length;
  const m = B.length;
  const L: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) L[i]![j] = A[i]!.key === B[j]!.key ? L[i + 1]![j + 1]! + 1 : Math.max(L[i + 1]![j]!, L[i]![j + 1]!);
  const anchors: Array<[number, number]> = [];
  for (let i = 0, j = 0; i < n && j < m;) {
    if (A[i]!.key === B[j]!.key) { anchors.push([i, j]); i++; j++; } else if (L[i + 1]![j]! >= L[i]![j + 1]!) i++; else j++;
  }
  const rows: AlignedRow[] = [];
  const gap = (i0: number, i1: number, j0: number, j1: number) => {
    let j = j0;
    for (let i = i0; i < i1; i++) {
      let hit = -1;
      for (let k = j; k < j1; k++) {
        const x = A[i]!.key;
        const y = B[k]!.key;
        if (similarity(x, y) >= TITLE_SIMILARITY || (x.length > 2 && y.length > 2 && (x.includes(y) || y.includes(x)))) { hit = k; break; }
      }
      if (hit < 0) { rows.push(row(A[i]!, null)); continue; }
      for (; j < hit; j++) rows.push(row(null, B[j]!));
      rows.push(row(A[i]!, B[hit]!));
      j = hit + 1;
    }
    for (; j < j1; j++) rows.push(row(null, B[j]!));
  };
  const row = (x: ReviewSection | null, y: ReviewSection | null): AlignedRow => ({ key: x?.key ?? y!.key, a: x, b: y, differing: x && y ? differingNumbers(a, x, b, y) : [] });
  let pi = 0;
  let pj = 0;
  for (const [i, j] of anchors) {
    gap(pi, i, pj, j);
    rows.push(row(A[i]!, B[j]!));
    pi = i + 1;
    pj = j + 1;
  }
  gap(pi, n, pj, m);
  return rows;
}

/**
 * Numbers under the same label in two aligned sections whose values differ: the numbers of each label are paired in
 * reading order (the k-th "women" number of A with the k-th of B); a pair differs when the values are not equal at
 * the smaller precision written (percent and fraction forms equivalent).
 */
function differingNumbers(da: ReviewDoc, sa: ReviewSection, db: ReviewDoc, sb: ReviewSection): Array<{ label: string; a: number; b: number }> {
  const byLabel = (d: ReviewDoc, s: ReviewSection) => {
    const m = new Map<string, ReviewNumber[]>();
    for (const id of s.numbers) {
      const x = d.numbers[id]!;
      if (!x.label) continue;
      const l = m.get(x.label);
      if (l) l.push(x);
      else m.set(x.label, [x]);
    }
    return m;
  };
  const ma = byLabel(da, sa);
  const mb = byLabel(db, sb);
  const out: Array<{ label: string; a: number; b: number }> = [];
  for (const [label, xs] of ma) {
    const ys = mb.get(label);
    if (!ys) continue;
    for (let k = 0; k < Math.min(xs.length, ys.length); k++) {
      const x = xs[k]!;
      const y = ys[k]!;
      const d = Math.min(x.decimals, y.decimals);
      const same = x.percent === y.percent ? roundKey(x.value, d) === roundKey(y.value, d) : numberMatches({ value: x.value, decimals: d }, y.value);
      if (!same) out.push({ label, a: x.id, b: y.id });
    }
  }
  return out;
}
