/**
 * Question-level retrieval (issue 25): from an analyst's question to the documentation files and the
 * variables it needs. The question is decomposed into concepts — groupings (age, sex, race, …) and the
 * survey design (weights) from the family's design data ({@link SURVEY_DESIGNS}), and measures (the
 * remaining words) — which are matched against the variable catalog (BM25 over name, label, question
 * text and value labels, with the codebook stemmer and a synonym map built from the catalog) and the
 * pages (the index's `bm25` mode). The three file rankings are fused by reciprocal rank fusion.
 * Source: Cormack, Clarke & Büttcher 2009 (RRF, k = 60); Robertson & Zaragoza 2009 (BM25, k1 = 1.2, b = 0.75).
 */
import { LoupeInputError } from '../util/errors.ts';
import { codebookQueryTerms, codebookTokens } from './text.ts';
import type { CatalogVariable } from './catalog.ts';
import { SURVEY_DESIGNS, type SurveyDesign } from './survey-design.ts';
import type { DocIndex } from './types.ts';

/** Options of {@link QuestionRetriever.ask}. */
export interface QuestionOptions {
  /** Files to return (default 10). */
  top?: number;
  /** Variables to return (default 20). */
  topVariables?: number;
  /** RRF constant (default 60). */
  rrfK?: number;
  /** Weights of the rankings in the fusion (default variables 1, pages 1, design 2, concepts 0.5, named 2). */
  weights?: { variables?: number; pages?: number; design?: number; concepts?: number; named?: number };
  /** Share of a clause's informative words its best variable must cover for the clause's file to count (default 0.6). */
  minConceptCoverage?: number;
  /** Page ranking query: the measures only (default) or the whole question. */
  pageQuery?: 'measures' | 'question';
  /** Files of the variable ranking must score at least this share of its best file (0 = keep all; default 0.5, chosen on the tuning part). */
  minVariableShare?: number;
  /** Extra measure terms from an LLM decomposition ({@link decomposeWithModel}), matched like the question's own words. */
  extraMeasures?: string[];
}

/** What an LLM decomposition of a question returns (all lists of short phrases). */
export interface LlmDecomposition {
  population: string[];
  measures: string[];
  groupings: string[];
  design: string[];
}

/** The instruction of the optional LLM decomposition (the question is sent as the user message). */
export const DECOMPOSE_SYSTEM_PROMPT = [
  'You help a survey analyst find the variables a question needs in the survey codebooks.',
  'Split the question into concepts and answer with JSON only:',
  '{"population": [...], "measures": [...], "groupings": [...], "design": [...]}',
  'population: who is counted (e.g. "adults 20 and over", "pregnant women excluded");',
  'measures: what is measured, in the words a codebook label would use, with synonyms (e.g. "hemoglobin", "body mass index");',
  'groupings: the breakdowns (e.g. "sex", "age group", "race and Hispanic origin", "family income");',
  'design: survey design needs (e.g. "examination weight", "fasting subsample weight"). Short phrases, no explanations.',
].join('\n');

/**
 * Parses an LLM's decomposition answer: the first JSON object in the text, each field a list of strings.
 * @param text the model's reply.
 * @returns the four lists (missing or malformed fields → empty lists).
 * @throws LoupeInputError naming the reply when it holds no JSON object.
 */
export function parseDecomposition(text: string): LlmDecomposition {
  const a = text.indexOf('{');
  const b = text.lastIndexOf('}');
  let raw: Record<string, unknown>;
  try {
    if (a < 0 || b <= a) throw new Error('no JSON object');
    raw = JSON.parse(text.slice(a, b + 1)) as Record<string, unknown>;
  } catch (e) {
    throw new LoupeInputError(
      'model reply',
      `not a JSON decomposition (${(e as Error).message}): ${text.slice(0, 120)}`,
    );
  }
  const list = (k: string) =>
    Array.isArray(raw[k])
      ? (raw[k] as unknown[]).filter((x): x is string => typeof x === 'string' && x.trim() !== '').map((x) => x.trim())
      : [];
  return {
    population: list('population'),
    measures: list('measures'),
    groupings: list('groupings'),
    design: list('design'),
  };
}

/**
 * Optional LLM-assisted decomposition of a question (issue 25): asks the configured model for the question's
 * population, measures, groupings and design needs; pass `measures` (and `population`) as
 * {@link QuestionOptions.extraMeasures}.
 * @param question the analyst's question; `complete(system, user)` calls the model and resolves to its text
 *   (the caller owns the client, its key and its errors).
 * @returns the parsed decomposition.
 * @throws LoupeInputError when the reply holds no JSON object; whatever `complete` throws.
 */
export async function decomposeWithModel(
  question: string,
  complete: (system: string, user: string) => Promise<string>,
): Promise<LlmDecomposition> {
  return parseDecomposition(await complete(DECOMPOSE_SYSTEM_PROMPT, question));
}

/** A candidate variable for a question. */
export interface VariableCandidate {
  name: string;
  label: string | null;
  file: string;
  doc: string;
  page: string | null;
  score: number;
  /** 'measure' (matched the question's words), or the grouping concept / 'design'. */
  why: string;
}

/** A ranked documentation file with the rankings that put it there. */
export interface FileCandidate {
  file: string;
  score: number;
  /** e.g. ["variables #1", "pages #3", "design"]. */
  from: string[];
}

/** Result of a question-mode search. */
export interface QuestionResult {
  /** The question's concepts: matched groupings, the design family, the measure terms. */
  concepts: { family: string | null; groupings: string[]; measures: string[] };
  variables: VariableCandidate[];
  files: FileCandidate[];
}

const QUESTION_WORDS = new Set(
  'percentage percent prevalence proportion overall among given average what which number rate estimate mean total us united state u.s population people person'.split(
    ' ',
  ),
);
const K1 = 1.2;
const B = 0.75;

interface VarDoc {
  v: CatalogVariable;
  tf: Map<string, number>;
  len: number;
}

/**
 * Synonyms the catalog itself defines: "Body Mass Index (BMI)", "high-density lipoprotein (HDL)" —
 * an acronym in parentheses whose letters are the initials of the words before it.
 * @param texts labels and question texts of the catalog.
 * @returns token → related tokens (both directions: acronym → words, each word-phrase head → acronym).
 */
export function catalogSynonyms(texts: Iterable<string>): Map<string, string[]> {
  const out = new Map<string, Set<string>>();
  const add = (k: string, vs: string[]) => {
    const s = out.get(k) ?? new Set<string>();
    for (const v of vs) if (v !== k) s.add(v);
    out.set(k, s);
  };
  for (const t of texts) {
    for (const m of t.matchAll(/((?:[A-Za-z][A-Za-z-]*\s+){1,6})\(([A-Z]{2,6})\)/g)) {
      const acr = m[2]!;
      const words = m[1]!.trim().split(/[\s-]+/);
      const tail = words.slice(-acr.length);
      if (tail.length !== acr.length) continue;
      if (tail.map((w) => w[0]!.toUpperCase()).join('') !== acr) continue;
      const wt = codebookTokens(tail.join(' '));
      if (!wt.length) continue;
      add(acr.toLowerCase(), wt);
      for (const w of wt) add(w, [acr.toLowerCase()]);
    }
  }
  return new Map([...out].map(([k, s]) => [k, [...s]]));
}

/** Phrases of a question that ask for the survey design rather than a measure ("weight" alone may be body weight). */
const DESIGN_PHRASE =
  /\b(?:(?:replicate|sample|sampling|survey|final|person|household|subsample|interview|examination|phlebotomy|fasting)[- ]weights?|standard errors?|margins? of error|variances?|strata|stratum|psus?|primary sampling units?|complex (?:sample|survey) design|confidence intervals?)\b/gi;
/** What the design documentation of any survey talks about (used when no design family applies). */
const DESIGN_QUERY =
  'sample weights final weight replicate weights variance estimation standard errors strata primary sampling units PSU';

/** The clauses of a question: split at punctuation and at the words that join a measure to its qualifiers. */
export function splitClauses(question: string): string[] {
  return question
    .split(
      /[,;:()[\]?!]|\s(?:and|or(?! (?:more|higher|greater|above|less|lower|below|over)\b)|with|by|among|excluding|including|using|versus|vs\.?|per|who|that|whose|defined as|based on)\s/i,
    )
    .map((c) => c.trim())
    .filter((c) => c.length > 0);
}

/** Words that state a comparison, not a measure. */
const COMPARISON_WORDS = new Set(
  codebookTokens('more higher greater above less lower below over under least most than exceed equal'),
);

/** Words that restate a cut-off's direction. */
const LEVEL_WORDS = new Set(codebookTokens('high low elevated raised'));

const CUT_CUE =
  /(?:>=?|<=?|≥|≤|\bor (?:more|higher|greater|above|less|lower|below|over)\b|\bat least\b|\bat most\b|\b(?:greater|more|higher|less|lower) than\b|\babove\b|\bbelow\b|\bunder\b|\bover\b|\bexceed)/i;

/**
 * The numbers a clause compares a measure with ("non-HDL cholesterol of 190 mg/dL or more" → [190];
 * "HbA1c >= 6.5%" → [6.5]); none when the clause has no comparison word or sign.
 * @param clause one clause of a question.
 * @returns the clause's numbers (empty when it states no cut-off).
 */
export function cutOffs(clause: string): number[] {
  if (!CUT_CUE.test(clause)) return [];
  return [...clause.matchAll(/(?<![\w.])(\d+(?:\.\d+)?)(?![\w.]*\d)/g)]
    .map((m) => Number(m[1]))
    .filter((n) => Number.isFinite(n));
}

/** True when one of `xs` lies in a documented "a to b" range of values of `v`. */
export function inRange(v: CatalogVariable, xs: readonly number[]): boolean {
  for (const val of v.values) {
    const m = /^\s*(-?\d+(?:\.\d+)?)\s+to\s+(-?\d+(?:\.\d+)?)\s*$/.exec(val.code);
    if (!m) continue;
    const lo = Number(m[1]);
    const hi = Number(m[2]);
    if (xs.some((x) => x >= lo && x <= hi)) return true;
  }
  return false;
}

function safeFiles(idx: DocIndex): string[] {
  try {
    return idx.report().files.map((f) => f.file);
  } catch {
    return [];
  }
}

/**
 * The informative words of each file's name (`poverty-level-guidelines-2024.pdf` → poverty, level, guideline):
 * digits, one- and two-letter pieces and words in more than a third of the names (`info`, `docs`, the survey's) dropped.
 * @param files paths relative to the index root.
 * @returns per file its name words ({@link codebookTokens} form); files without any are left out.
 */
export function nameTokensOfFiles(files: readonly string[]): Array<{ file: string; tokens: string[] }> {
  const base = (f: string) => (f.split('/').pop() ?? f).replace(/\.[A-Za-z0-9]+$/, '');
  const toks = files.map((f) => ({
    file: f,
    tokens: [
      ...new Set(
        codebookTokens(
          base(f)
            .replace(/([a-z])([A-Z])/g, '$1 $2')
            .replace(/[_\-.\d]+/g, ' '),
        ),
      ),
    ].filter((t) => t.length > 2),
  }));
  const df = new Map<string, number>();
  for (const x of toks) for (const t of x.tokens) df.set(t, (df.get(t) ?? 0) + 1);
  const limit = Math.max(1, files.length / 3);
  return toks
    .map((x) => ({ file: x.file, tokens: x.tokens.filter((t) => df.get(t)! <= limit) }))
    .filter((x) => x.tokens.length > 0);
}

/**
 * Files a question names: every informative word of the file's name occurs in the question (two or more such words,
 * or a single word of at least six letters), best coverage first.
 * @param questionTokens the question's {@link codebookTokens}; `named` from {@link nameTokensOfFiles}.
 */
export function namedIn(
  questionTokens: readonly string[],
  named: ReadonlyArray<{ file: string; tokens: string[] }>,
): string[] {
  const q = new Set(questionTokens);
  return named
    .filter((x) => x.tokens.every((t) => q.has(t)) && (x.tokens.length >= 2 || x.tokens[0]!.length >= 6))
    .sort((a, b) => b.tokens.length - a.tokens.length || (a.file < b.file ? -1 : 1))
    .map((x) => x.file);
}

/**
 * Question-mode retriever over one built documentation index and its variable catalog.
 * Build once (it indexes the catalog, about 1 ms per 1,000 variables) and call {@link ask} per question.
 */
export class QuestionRetriever {
  private readonly idx: DocIndex;
  private readonly docs: VarDoc[] = [];
  private readonly df = new Map<string, number>();
  private readonly avgdl: number;
  private readonly synonyms: Map<string, string[]>;
  private readonly design: SurveyDesign | null;
  private readonly defined = new Map<string, CatalogVariable[]>();
  /** term → [index into `docs`, term frequency] (the variable BM25's inverted index). */
  private readonly postings = new Map<string, Array<[number, number]>>();
  private readonly namedFiles: Array<{ file: string; tokens: string[] }>;
  private designSearch: string[] | undefined;
  /** Documented variables per documentation file. */
  private readonly byDoc = new Map<string, VarDoc[]>();

  /**
   * @param idx a built documentation index (pages are searched with its `bm25` mode).
   * @param variables the catalog's entries (undocumented ones are ignored: they have no documentation to point at).
   */
  constructor(idx: DocIndex, variables: readonly CatalogVariable[]) {
    this.idx = idx;
    let total = 0;
    for (const v of variables) {
      if (!v.documented || !v.doc) continue;
      const list = this.defined.get(v.name.toUpperCase()) ?? [];
      list.push(v);
      this.defined.set(v.name.toUpperCase(), list);
      const toks = [
        ...codebookTokens(v.name),
        ...codebookTokens(v.label ?? ''),
        ...codebookTokens(v.label ?? ''),
        ...codebookTokens(v.text ?? ''),
        ...v.values.flatMap((x) => codebookTokens(x.label)),
        ...codebookTokens(v.universe ?? ''),
      ];
      const tf = new Map<string, number>();
      for (const t of toks) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const [t, f] of tf) {
        this.df.set(t, (this.df.get(t) ?? 0) + 1);
        const list = this.postings.get(t) ?? [];
        list.push([this.docs.length, f]);
        this.postings.set(t, list);
      }
      const doc: VarDoc = { v, tf, len: toks.length };
      this.docs.push(doc);
      const inDoc = this.byDoc.get(v.doc) ?? [];
      inDoc.push(doc);
      this.byDoc.set(v.doc, inDoc);
      total += toks.length;
    }
    this.avgdl = this.docs.length ? total / this.docs.length : 1;
    this.synonyms = catalogSynonyms(variables.flatMap((v) => [v.label ?? '', v.text ?? '']));
    this.design = SURVEY_DESIGNS.find((d) => d.detect.every((n) => this.defined.has(n))) ?? null;
    this.namedFiles = nameTokensOfFiles(safeFiles(idx));
  }

  /** BM25 of every variable for weighted query terms, through the postings (only variables holding a term are visited). */
  private scoreVariables(q: ReadonlyMap<string, number>): Map<number, number> {
    const N = this.docs.length;
    const out = new Map<number, number>();
    for (const [t, qw] of q) {
      const post = this.postings.get(t);
      if (!post) continue;
      const idf = Math.log(1 + (N - post.length + 0.5) / (post.length + 0.5));
      for (const [i, f] of post) {
        const d = this.docs[i]!;
        out.set(i, (out.get(i) ?? 0) + qw * idf * ((f * (K1 + 1)) / (f + K1 * (1 - B + (B * d.len) / this.avgdl))));
      }
    }
    return out;
  }

  private idf(t: string): number {
    const n = this.df.get(t) ?? 0;
    return Math.log(1 + (this.docs.length - n + 0.5) / (n + 0.5));
  }

  /**
   * Concept-level variable retrieval: each clause of the question (a measure with its definition, a cut-off,
   * an adjustment, a population) is matched on its own against the catalog's names, labels, question texts,
   * value labels and universes, so a long question naming four measures finds the four files rather than the
   * one whose words dominate. A clause counts when its best variable covers at least `minCoverage` of the
   * clause's informative words (by idf; a catalog synonym covers its word).
   * @returns the files of the clauses' best variables (best clause first) and those variables.
   */
  private conceptFiles(
    question: string,
    isMeasure: (t: string) => boolean,
    minCoverage: number,
  ): { files: string[]; vars: Array<{ d: VarDoc; s: number; clause: string }> } {
    const found: Array<{ d: VarDoc; s: number; clause: string }> = [];
    for (const raw of splitClauses(question)) {
      const cut = cutOffs(raw);
      // with a cut-off, "high" / "low" / "elevated" restate the comparison rather than name the measure
      const words = [
        ...new Set(
          codebookTokens(raw).filter(
            (t) => isMeasure(t) && !COMPARISON_WORDS.has(t) && !(cut.length && LEVEL_WORDS.has(t)),
          ),
        ),
      ];
      const terms = words.filter((t) => this.df.has(t) || (this.synonyms.get(t) ?? []).some((x) => this.df.has(x)));
      if (!terms.length) {
        // the clause's words are the documentation's, not the catalog's ("HbA1c >= 6.5%"): its best page's file
        // counts when that file documents a variable whose range of values holds the clause's cut-off
        if (cut.length && words.length) {
          const hit = this.idx.search(words.join(' '), { mode: 'bm25', top: 1 })[0];
          const v = hit ? this.byDoc.get(hit.file)?.find((x) => inRange(x.v, cut)) : undefined;
          if (v) found.push({ d: v, s: hit!.score, clause: raw.trim() });
        }
        continue;
      }
      const q = new Map<string, number>();
      for (const t of terms) q.set(t, 1);
      for (const t of terms) for (const x of this.synonyms.get(t) ?? []) if (!q.has(x)) q.set(x, 0.5);
      // a cut-off in the clause ("190 mg/dL or more", ">= 6.5%") asks for a measured value: variables whose
      // documented range of values holds the number count twice (a yes/no item about the same words does not)
      let best = -1;
      let bestS = 0;
      for (const [i, sc0] of this.scoreVariables(q)) {
        const sc = cut.length && inRange(this.docs[i]!.v, cut) ? 2 * sc0 : sc0;
        if (sc > bestS || (sc === bestS && i < best)) [best, bestS] = [i, sc];
      }
      if (best < 0) continue;
      const d = this.docs[best]!;
      const weightOf = (t: string) =>
        Math.max(this.idf(t), ...(this.synonyms.get(t) ?? []).filter((x) => this.df.has(x)).map((x) => this.idf(x)));
      const total = terms.reduce((a, t) => a + weightOf(t), 0);
      const covered = terms
        .filter((t) => d.tf.has(t) || (this.synonyms.get(t) ?? []).some((x) => d.tf.has(x)))
        .reduce((a, t) => a + weightOf(t), 0);
      if (total > 0 && covered / total >= minCoverage) found.push({ d, s: bestS, clause: raw.trim() });
    }
    found.sort((a, b) => b.s - a.s);
    const files: string[] = [];
    for (const f of found) if (!files.includes(f.d.v.doc!)) files.push(f.d.v.doc!);
    return { files, vars: found };
  }

  /**
   * The survey's design documentation found by its own words (weights, strata, PSUs, replicate weights, variance
   * estimation), for surveys without a design family: files ranked by the reciprocal ranks of their pages.
   * With `terms` (the design words of a question) the search is that question's; without, the survey's (memoised).
   */
  private designDocsBySearch(terms?: string): string[] {
    if (!terms && this.designSearch) return this.designSearch;
    const score = new Map<string, number>();
    const hits = this.idx.search(terms ? `${terms} weight` : DESIGN_QUERY, { mode: 'bm25', top: 40, expand: false });
    hits.forEach((h, i) => score.set(h.file, (score.get(h.file) ?? 0) + 1 / (i + 1)));
    const ranked = [...score].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const best = ranked[0]?.[1] ?? 0;
    // the design documentation proper: files scoring at least a third of the best one, at most two
    const out = ranked
      .filter(([, s]) => s >= best / 3)
      .slice(0, 2)
      .map(([f]) => f);
    if (!terms) this.designSearch = out;
    return out;
  }

  /**
   * Documents that define the family's design and grouping variables (for NHANES the demographics
   * file), i.e. what the design ranking always proposes; used to report recall without them.
   * @returns document paths (relative to the index root); empty when no family matched.
   */
  designDocs(): string[] {
    const out = new Set<string>();
    for (const name of [
      ...(this.design?.design ?? []),
      ...(this.design?.groupings ?? []).flatMap((g) => g.variables),
    ]) {
      const defs = this.defined.get(name) ?? [];
      if (defs.length && defs.length <= 2) defs.forEach((v) => out.add(v.doc!));
    }
    return [...out];
  }

  /** The design family this catalog matched, or null. */
  get family(): string | null {
    return this.design?.family ?? null;
  }

  /**
   * Ranks documentation files and candidate variables for a question.
   * @param question the analyst's question (any length; extra context such as definitions helps).
   * @returns concepts, candidate variables (best first) and fused file ranking (best first).
   */
  ask(question: string, opts: QuestionOptions = {}): QuestionResult {
    const top = opts.top ?? 10;
    const k = opts.rrfK ?? 60;
    // design files get twice the weight: every estimate needs the design weights (and groupings their variables)
    const w = { variables: 1, pages: 1, design: 2, ...opts.weights };
    const toks = codebookTokens(question);
    const groupings: Array<{ concept: string; variables: string[] }> = [];
    const groupTerms = new Set<string>();
    for (const g of this.design?.groupings ?? []) {
      if (toks.some((t) => g.terms.includes(t))) groupings.push(g);
      g.terms.forEach((t) => groupTerms.add(t));
    }
    const extra = codebookTokens((opts.extraMeasures ?? []).join(' '));
    const isMeasure = (t: string) => !QUESTION_WORDS.has(t) && !groupTerms.has(t) && !/^[\d.]+$/.test(t);
    const measures = [...new Set([...toks, ...extra].filter(isMeasure))];
    const designTerms = [...new Set([...question.matchAll(DESIGN_PHRASE)].map((m) => m[0].toLowerCase()))];
    // query terms: measures (1), survey synonyms and catalog synonyms (0.5)
    const q = new Map<string, number>();
    for (const { term, weight } of codebookQueryTerms(measures.join(' '))) {
      q.set(term, Math.max(q.get(term) ?? 0, weight));
    }
    for (const m of measures) for (const s of this.synonyms.get(m) ?? []) if (!q.has(s)) q.set(s, 0.5);

    // 1. variables by BM25 (the whole question's measures)
    const scored: Array<{ d: VarDoc; s: number }> = [];
    for (const [i, sc] of this.scoreVariables(q)) if (sc > 0) scored.push({ d: this.docs[i]!, s: sc });
    scored.sort((a, b) => b.s - a.s || (a.d.v.name < b.d.v.name ? -1 : 1));
    const varFiles: string[] = [];
    const varScore = new Map<string, number>();
    for (const { d, s } of scored) {
      const f = d.v.doc!;
      // a file's score: its best variable plus a share of the next ones (a file with several matching variables is more likely)
      const prev = varScore.get(f);
      varScore.set(f, prev === undefined ? s : prev + 0.25 * s);
      if (prev === undefined) varFiles.push(f);
    }
    varFiles.sort((a, b) => varScore.get(b)! - varScore.get(a)!);
    // weak matches (a common word in one label) are noise: keep files scoring at least `minVariableShare` of the best
    const bestVar = varFiles.length ? varScore.get(varFiles[0]!)! : 0;
    const minShare = opts.minVariableShare ?? 0.5;
    if (minShare > 0) {
      varFiles.splice(0, varFiles.length, ...varFiles.filter((f) => varScore.get(f)! >= minShare * bestVar));
    }

    // 2. pages by the index's bm25 ranking, measures only (grouping words would pull every demographics page)
    const pageFiles: string[] = [];
    const pageQuery = opts.pageQuery === 'question' ? question : measures.join(' ');
    if (pageQuery) {
      for (const h of this.idx.search(pageQuery, { mode: 'bm25', top: 100 })) {
        if (!pageFiles.includes(h.file)) pageFiles.push(h.file);
      }
    }

    // 3. design: the documents defining the design variables and the matched groupings
    const designVars: Array<{ name: string; why: string }> = [
      ...(this.design?.design ?? []).map((name) => ({ name, why: 'design' })),
      ...groupings.flatMap((g) => g.variables.map((name) => ({ name, why: g.concept }))),
    ];
    const designFiles: string[] = [];
    const candidates: VariableCandidate[] = [];
    for (const { name, why } of designVars) {
      const defs = this.defined.get(name) ?? [];
      if (!defs.length || defs.length > 2) continue; // defined everywhere (e.g. a weight repeated in every lab file) says nothing
      for (const v of defs) {
        if (!designFiles.includes(v.doc!)) designFiles.push(v.doc!);
        candidates.push({ name: v.name, label: v.label, file: v.file, doc: v.doc!, page: v.page, score: 0, why });
      }
    }

    const fused = new Map<string, { score: number; from: string[] }>();
    const addList = (list: string[], weight: number, tag: string) => {
      list.forEach((f, i) => {
        const e = fused.get(f) ?? { score: 0, from: [] };
        e.score += weight / (k + i + 1);
        e.from.push(tag === 'design' || tag === 'design-terms' || tag === 'named' ? tag : `${tag} #${i + 1}`);
        fused.set(f, e);
      });
    };
    addList(varFiles, w.variables, 'variables');
    addList(pageFiles, w.pages, 'pages');
    addList(designFiles, w.design, 'design');
    // 4. concepts: each clause's best variable (definitional phrases, cut-offs, adjustments); weight 0.5 chosen on the
    //    design parts (issue 49 split and the issue 25 tuning part): it keeps the NHANES nDCG of the whole-question ranking
    const concepts = this.conceptFiles(question, isMeasure, opts.minConceptCoverage ?? 0.6);
    addList(concepts.files, w.concepts ?? 0.5, 'concepts');
    // 5. design documentation by search when no design family applies; the question's own design words
    //    (replicate weights, variance, strata) find the document describing them
    if (!this.design) addList(this.designDocsBySearch(), w.design, 'design');
    if (designTerms.length) {
      addList(this.designDocsBySearch(designTerms.join(' ')).slice(0, 1), w.design, 'design-terms');
    }
    // 6. documents the question names (a guideline, an appendix, a file by its name)
    addList(namedIn(toks, this.namedFiles), w.named ?? 2, 'named');
    const files = [...fused]
      .map(([file, e]) => ({ file, score: Number(e.score.toFixed(6)), from: e.from }))
      .sort((a, b) => b.score - a.score || (a.file < b.file ? -1 : 1))
      .slice(0, top);
    const measureVars = scored.slice(0, opts.topVariables ?? 20).map(({ d, s }) => ({
      name: d.v.name,
      label: d.v.label,
      file: d.v.file,
      doc: d.v.doc!,
      page: d.v.page,
      score: Number(s.toFixed(4)),
      why: 'measure',
    }));
    return {
      concepts: { family: this.family, groupings: groupings.map((g) => g.concept), measures },
      variables: [
        ...measureVars,
        ...concepts.vars
          .filter((c) => !measureVars.some((m) => m.name === c.d.v.name && m.file === c.d.v.file))
          .map(({ d, s }) => ({
            name: d.v.name,
            label: d.v.label,
            file: d.v.file,
            doc: d.v.doc!,
            page: d.v.page,
            score: Number(s.toFixed(4)),
            why: 'concept',
          })),
        ...candidates,
      ],
      files,
    };
  }
}
