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
  /** Weights of the three rankings in the fusion (default 1 each). */
  weights?: { variables?: number; pages?: number; design?: number };
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
    throw new LoupeInputError('model reply', `not a JSON decomposition (${(e as Error).message}): ${text.slice(0, 120)}`);
  }
  const list = (k: string) => (Array.isArray(raw[k]) ? (raw[k] as unknown[]).filter((x): x is string => typeof x === 'string' && x.trim() !== '').map((x) => x.trim()) : []);
  return { population: list('population'), measures: list('measures'), groupings: list('groupings'), design: list('design') };
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
export async function decomposeWithModel(question: string, complete: (system: string, user: string) => Promise<string>): Promise<LlmDecomposition> {
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
  'percentage percent prevalence proportion overall among given average what which number rate estimate mean total us united state u.s population people person'.split(' '),
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
      ];
      const tf = new Map<string, number>();
      for (const t of toks) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const t of tf.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
      this.docs.push({ v, tf, len: toks.length });
      total += toks.length;
    }
    this.avgdl = this.docs.length ? total / this.docs.length : 1;
    this.synonyms = catalogSynonyms(variables.flatMap((v) => [v.label ?? '', v.text ?? '']));
    this.design = SURVEY_DESIGNS.find((d) => d.detect.every((n) => this.defined.has(n))) ?? null;
  }

  /**
   * Documents that define the family's design and grouping variables (for NHANES the demographics
   * file), i.e. what the design ranking always proposes; used to report recall without them.
   * @returns document paths (relative to the index root); empty when no family matched.
   */
  designDocs(): string[] {
    const out = new Set<string>();
    for (const name of [...(this.design?.design ?? []), ...(this.design?.groupings ?? []).flatMap((g) => g.variables)]) {
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
    const measures = [...new Set([...toks, ...extra].filter((t) => !QUESTION_WORDS.has(t) && !groupTerms.has(t) && !/^[\d.]+$/.test(t)))];
    // query terms: measures (1), survey synonyms and catalog synonyms (0.5)
    const q = new Map<string, number>();
    for (const { term, weight } of codebookQueryTerms(measures.join(' '))) q.set(term, Math.max(q.get(term) ?? 0, weight));
    for (const m of measures) for (const s of this.synonyms.get(m) ?? []) if (!q.has(s)) q.set(s, 0.5);

    // 1. variables by BM25
    const N = this.docs.length;
    const scored: Array<{ d: VarDoc; s: number }> = [];
    for (const d of this.docs) {
      let s = 0;
      for (const [t, qw] of q) {
        const f = d.tf.get(t);
        if (!f) continue;
        const n = this.df.get(t)!;
        const idf = Math.log(1 + (N - n + 0.5) / (n + 0.5));
        s += qw * idf * ((f * (K1 + 1)) / (f + K1 * (1 - B + (B * d.len) / this.avgdl)));
      }
      if (s > 0) scored.push({ d, s });
    }
    scored.sort((a, b) => b.s - a.s);
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
    if (minShare > 0) varFiles.splice(0, varFiles.length, ...varFiles.filter((f) => varScore.get(f)! >= minShare * bestVar));

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
        e.from.push(tag === 'design' ? 'design' : `${tag} #${i + 1}`);
        fused.set(f, e);
      });
    };
    addList(varFiles, w.variables, 'variables');
    addList(pageFiles, w.pages, 'pages');
    addList(designFiles, w.design, 'design');
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
      variables: [...measureVars, ...candidates],
      files,
    };
  }
}
