/**
 * AnalystBench-style report scoring: a 15-item checklist scored 1–5 per criterion with an explicit
 * rubric (normalised as the paper's numbers imply: 20·mean), claims extracted from the report and
 * checked against the sources (hallucination rate), figure coverage by caption similarity
 * (embeddings from an OpenAI-compatible endpoint, or a lexical fallback that says it is one) and
 * figure quality scores.
 * Source: spec §4.3 (a)–(d), §4.5, §5.3 row 8 (paper only; no public code).
 */
import OpenAI from 'openai';
import { LoupeInputError, errorMessage } from '../../util/errors.ts';
import { mapLimit, tallyJudgements } from '../../eval/judges/judge.ts';
import {
  CLAIMS_MODES,
  FACT_SPLIT_MODES,
  decomposeClaims,
  linkFacts,
  type ClaimsMode,
  type FactSource,
  type FactSplitMode,
} from '../../eval/atomic-claims.ts';
import type { StepText } from '../../eval/atomic-facts.ts';
import type { Judge, JudgeContext, JudgementTally } from '../../eval/judges/types.ts';

// ------------------------------------------------------------------ checklist

/** One checklist criterion with its five-level rubric. */
export interface AnalystCriterion {
  criterion: string;
  /** Descriptions of levels 1..5 (may be empty when the checklist gives none). */
  rubric: string[];
}

/**
 * Parses a checklist in AnalystBench's format: top-level bullets `- The response should …`, each
 * followed by indented `- 1: …` … `- 5: …` rubric bullets.
 * @param text the checklist text; `name` for error messages.
 * @returns the criteria in order.
 * @throws LoupeInputError naming `name:line` for a rubric bullet before any criterion or a level out of 1–5.
 * Source: spec §4.3(a) (checklist output format).
 */
export function parseAnalystChecklist(text: string, name = 'checklist'): AnalystCriterion[] {
  const out: AnalystCriterion[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const level = /^\s+[-*]\s*([0-9]+)\s*[:.)-]\s*(.*)$/.exec(line);
    if (level) {
      const cur = out[out.length - 1];
      if (!cur) throw new LoupeInputError(`${name}:${i + 1}`, 'rubric level before any criterion');
      const n = Number(level[1]);
      if (n < 1 || n > 5) throw new LoupeInputError(`${name}:${i + 1}`, `rubric level ${n} is not in 1–5`);
      cur.rubric[n - 1] = level[2]!.trim();
      return;
    }
    const top = /^[-*]\s+(.*\S)\s*$/.exec(line) ?? /^\d+[.)]\s+(.*\S)\s*$/.exec(line);
    if (top) out.push({ criterion: top[1]!, rubric: [] });
  });
  for (const c of out) c.rubric = Array.from({ length: c.rubric.length }, (_, k) => c.rubric[k] ?? '');
  return out;
}

/** How 1–5 scores become a percentage. */
export type ChecklistNormalisation = 'mean20' | 'rescaled';

/** Options of AnalystBench scoring. */
export interface AnalystOptions {
  /** `mean20`: 100·Σs/(5·n) = 20·mean (implied by the paper's k/75 values; default); `rescaled`: 100·mean((s−1)/4). */
  checklist_normalisation: ChecklistNormalisation;
  /** Pooled over claims (`micro`, default) or mean of per-report rates (`macro`); the paper does not say. */
  hallucination_aggregate: 'micro' | 'macro';
  /** Cosine threshold for a caption match (default 0.5 with embeddings; the paper gives none). */
  figure_threshold: number;
  /** `any`: a reference is covered if ≥1 generated figure passes the threshold (paper's definition); `one-to-one`: greedy unique pairs. */
  figure_assignment: 'any' | 'one-to-one';
  /** Characters of source text sent with each claim (lexically selected passages). Default 12,000. */
  source_chars: number;
  concurrency: number;
  /** What the hallucination rate counts: claims as extracted (`whole`, official) or their atomic facts (issue 43). */
  claims: ClaimsMode;
  /** Who splits a claim with `claims = atomic` when no expert did. */
  fact_split: FactSplitMode;
}

/** Defaults; every score records the values used. */
export const DEFAULT_ANALYST_OPTIONS: Readonly<AnalystOptions> = Object.freeze({
  checklist_normalisation: 'mean20',
  hallucination_aggregate: 'micro',
  figure_threshold: 0.5,
  figure_assignment: 'any',
  source_chars: 12_000,
  concurrency: 4,
  claims: 'whole',
  fact_split: 'judge',
});

/**
 * Builds AnalystBench options from `name=value` strings.
 * @param raw values by name. @returns complete options.
 * @throws LoupeInputError naming the option for an invalid value.
 */
export function analystOptions(raw: Record<string, string | number | undefined> = {}): AnalystOptions {
  const o: AnalystOptions = { ...DEFAULT_ANALYST_OPTIONS };
  const oneOf = <T extends string>(k: keyof AnalystOptions, allowed: readonly T[]): T | undefined => {
    const v = raw[k];
    if (v === undefined) return undefined;
    if (!allowed.includes(v as T)) {
      throw new LoupeInputError(`option ${k}`, `must be one of ${allowed.join(', ')}, got '${v}'`);
    }
    return v as T;
  };
  const num = (k: keyof AnalystOptions, min: number, max: number): number | undefined => {
    const v = raw[k];
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n) || n < min || n > max) {
      throw new LoupeInputError(`option ${k}`, `must be a number in [${min}, ${max}], got '${v}'`);
    }
    return n;
  };
  o.checklist_normalisation =
    oneOf('checklist_normalisation', ['mean20', 'rescaled'] as const) ?? o.checklist_normalisation;
  o.hallucination_aggregate =
    oneOf('hallucination_aggregate', ['micro', 'macro'] as const) ?? o.hallucination_aggregate;
  o.figure_assignment = oneOf('figure_assignment', ['any', 'one-to-one'] as const) ?? o.figure_assignment;
  o.figure_threshold = num('figure_threshold', -1, 1) ?? o.figure_threshold;
  o.source_chars = num('source_chars', 100, 10_000_000) ?? o.source_chars;
  o.concurrency = num('concurrency', 1, 64) ?? o.concurrency;
  o.claims = oneOf('claims', CLAIMS_MODES) ?? o.claims;
  o.fact_split = oneOf('fact_split', FACT_SPLIT_MODES) ?? o.fact_split;
  return o;
}

/**
 * Normalises 1–5 criterion scores to a percentage.
 * @param scores integers 1–5; `mode` see {@link ChecklistNormalisation}.
 * @returns the percentage (0–100), null for no scores. `mean20` of fifteen scores summing to 70 gives 93.33.
 * Source: spec §4.3(b) (instance values 93.33, 57.33, 45.3, 86.7 are all k/75).
 */
export function normaliseChecklist(scores: readonly number[], mode: ChecklistNormalisation = 'mean20'): number | null {
  if (!scores.length) return null;
  const mean = scores.reduce((s, x) => s + x, 0) / scores.length;
  return mode === 'mean20' ? 20 * mean : ((mean - 1) / 4) * 100;
}

/** Checklist score of one report. */
export interface AnalystChecklistScore {
  /** Percentage 0–100 under the chosen normalisation, over judged criteria; null if none judged. */
  percent: number | null;
  scores: Array<{ criterion: string; score: number | null; reason: string; judgeId: string; status: string }>;
  judgements: JudgementTally;
}

/**
 * Scores a report against each criterion through the judge (one call per criterion).
 * @param task instruction and report text (plotting code included), the task's id (recorded verdicts are keyed by
 *   task + criterion index); `criteria` from {@link parseAnalystChecklist}.
 * @returns per-criterion scores and the normalised percentage over judged criteria; pending ones are counted.
 * Source: spec §4.3(b).
 */
export async function scoreAnalystChecklist(
  task: { instruction: string; response: string; runId?: string; taskId?: string },
  criteria: readonly AnalystCriterion[],
  judge: Judge,
  options: Partial<AnalystOptions> = {},
): Promise<AnalystChecklistScore> {
  const opts = { ...DEFAULT_ANALYST_OPTIONS, ...options };
  const ctx: JudgeContext = task.runId ? { runId: task.runId } : {};
  const js = await mapLimit(criteria, opts.concurrency, (c, i) =>
    judge.judge(
      'checklist-score',
      { instruction: task.instruction, response: task.response, criterion: c.criterion, rubric: c.rubric },
      {
        ...ctx,
        itemRef: `criterion ${i + 1}`,
        ...(task.taskId !== undefined ? { nativeId: { task: task.taskId, criterion: i } } : {}),
      },
    ),
  );
  const scores = js.map((j, i) => ({
    criterion: criteria[i]!.criterion,
    score: j.status === 'done' ? j.verdict!.score : null,
    reason: j.verdict?.reason ?? j.error ?? '',
    judgeId: j.judgeId,
    status: j.status,
  }));
  const got = scores.map((s) => s.score).filter((s): s is NonNullable<typeof s> => s !== null);
  return { percent: normaliseChecklist(got, opts.checklist_normalisation), scores, judgements: tallyJudgements(js) };
}

// ------------------------------------------------------------------ claims → hallucination

const STOP = new Set(
  'the a an of and or to in on for by with at from is are was were be been this that these those as it its their his her than then into per over under about'.split(
    ' ',
  ),
);

/**
 * Lower-cased word tokens without stop words (numbers kept, `40.3` stays one token).
 * @param s text. @returns tokens.
 */
export function tokens(s: string): string[] {
  return (s.toLowerCase().match(/[a-z]+|\d+(?:[.,]\d+)*%?/g) ?? []).filter((t) => !STOP.has(t));
}

/**
 * Picks the source passages most related to a claim (token overlap, numbers weighted ×3), up to
 * `maxChars`, in source order. Sources larger than any judge context need this.
 * @param claim the claim; `sources` documents; `maxChars` budget.
 * @returns the selected text (passages separated by `\n…\n`).
 */
export function selectSourceContext(claim: string, sources: readonly string[], maxChars: number): string {
  const all = sources.join('\n\n');
  if (all.length <= maxChars) return all;
  const q = new Set(tokens(claim));
  const passages: Array<{ text: string; order: number; score: number }> = [];
  let order = 0;
  for (const src of sources) {
    for (const para of src.split(/\n\s*\n/)) {
      for (let i = 0; i < para.length; i += 1500) {
        const text = para.slice(i, i + 1500);
        let score = 0;
        for (const t of new Set(tokens(text))) if (q.has(t)) score += /\d/.test(t) ? 3 : 1;
        passages.push({ text, order: order++, score });
      }
    }
  }
  const chosen: typeof passages = [];
  let used = 0;
  for (const p of [...passages].sort((a, b) => b.score - a.score || a.order - b.order)) {
    if (p.score === 0 || used + p.text.length > maxChars) continue;
    chosen.push(p);
    used += p.text.length;
  }
  return chosen
    .sort((a, b) => a.order - b.order)
    .map((p) => p.text)
    .join('\n…\n');
}

/** One atomic fact of a claim with its verdict (claims = atomic, issue 43). */
export interface AnalystFactVerdict {
  /** 0-based position of its claim in `claims`, and of the fact within the claim. */
  claim: number;
  part: number;
  fact: string;
  /** Who split the claim: the judge, the rule (also when the judge failed) or an expert. */
  source: FactSource;
  supported: boolean | null;
  reason: string;
  judgeId: string;
  /** 0-based steps (notebook cells) whose code or output mention the fact's values or entities. */
  steps: number[];
  /** Terms of the fact no step mentions. */
  unseen: string[];
}

/** Hallucination result of one report. */
export interface AnalystClaimsScore {
  claims: Array<{ claim: string; quote: string; supported: boolean | null; reason: string; judgeId: string }>;
  /** What the rate counts: extracted claims (`whole`) or their atomic facts (`atomic`). */
  unit: ClaimsMode;
  /** With `atomic`: each fact with its verdict and supporting steps; a claim is supported when all its judged facts are. */
  facts?: AnalystFactVerdict[];
  /** unsupported / judged units (claims or facts; fraction), null if none judged. */
  rate: number | null;
  unsupported: number;
  judged: number;
  judgements: JudgementTally;
}

/**
 * Extracts atomic claims from a report (judge task `claim-extraction`), or uses given claims, and
 * checks each against the sources (`claim-support`). With `claims = atomic` (issue 43) each claim is first split into
 * atomic facts (`fact-decomposition`, or the rule, or an expert's split) and each fact is checked; the rate then counts
 * facts, and a claim's own verdict is "supported" only when every judged fact of it is.
 * @param input.report the report text; `sources` the source documents' text (lexically selected per
 *   claim) or `select` a retriever giving the passages for a claim; `claims` pre-extracted claims (skip extraction);
 *   `steps` the run's step texts (cells' code and output) a fact is linked to; `expert` claim text → an expert's facts.
 * @returns per-claim (and per-fact) verdicts and the hallucination rate (fraction).
 * Source: spec §4.3(c) (hallucination% = 100 · unsupported / claims); FActScore (atomic facts).
 */
export async function scoreAnalystClaims(
  input: {
    report: string;
    sources: readonly string[];
    claims?: Array<{ claim: string; quote: string }>;
    runId?: string;
    select?: (claim: string, maxChars: number) => Promise<string>;
    steps?: readonly StepText[];
    expert?: ReadonlyMap<string, readonly string[]>;
  },
  judge: Judge,
  options: Partial<AnalystOptions> = {},
): Promise<AnalystClaimsScore> {
  const opts = { ...DEFAULT_ANALYST_OPTIONS, ...options };
  const ctx: JudgeContext = input.runId ? { runId: input.runId } : {};
  const all = [];
  let claims = input.claims;
  if (!claims) {
    const ex = await judge.judge('claim-extraction', { report: input.report }, { ...ctx, itemRef: 'claim extraction' });
    all.push(ex);
    claims = ex.status === 'done' ? ex.verdict!.claims : [];
  }
  const support = (text: string, quote: string, ref: string) =>
    (async () => {
      const sources = input.select
        ? await input.select(text, opts.source_chars)
        : selectSourceContext(text, input.sources, opts.source_chars);
      return judge.judge('claim-support', { claim: text, quote, sources }, { ...ctx, itemRef: ref });
    })();
  if (opts.claims === 'atomic') {
    const split = await decomposeClaims(
      claims.map((c) => c.claim),
      {
        mode: opts.fact_split,
        judge,
        ...(input.expert ? { expert: input.expert } : {}),
        ctx,
        concurrency: opts.concurrency,
      },
    );
    const linked = linkFacts(split, input.steps ?? [], Number.MAX_SAFE_INTEGER);
    const js = await mapLimit(linked, opts.concurrency, (f) =>
      support(f.text, claims[f.claim]!.quote, `claim ${f.claim + 1} fact ${f.part + 1}`),
    );
    all.push(...js);
    const facts: AnalystFactVerdict[] = linked.map((f, k) => {
      const j = js[k]!;
      return {
        claim: f.claim,
        part: f.part,
        fact: f.text,
        source: f.source,
        supported: j.status === 'done' ? j.verdict!.supported : null,
        reason: j.verdict?.reason ?? j.error ?? '',
        judgeId: j.judgeId,
        steps: f.steps,
        unseen: f.unseen,
      };
    });
    const out = claims.map((c, i) => {
      const mine = facts.filter((f) => f.claim === i);
      const judgedFacts = mine.filter((f) => f.supported !== null);
      const supported = judgedFacts.length ? judgedFacts.every((f) => f.supported) : null;
      const why = split[i]!.fallback ? `facts by the rule (${split[i]!.fallback})` : `facts by ${split[i]!.source}`;
      return {
        claim: c.claim,
        quote: c.quote,
        supported,
        reason: `${judgedFacts.filter((f) => f.supported).length}/${mine.length} facts supported; ${why}`,
        judgeId: mine[0]?.judgeId ?? judge.id,
      };
    });
    const judged = facts.filter((f) => f.supported !== null);
    const unsupported = judged.filter((f) => f.supported === false).length;
    return {
      claims: out,
      unit: 'atomic',
      facts,
      rate: judged.length ? unsupported / judged.length : null,
      unsupported,
      judged: judged.length,
      judgements: tallyJudgements(all),
    };
  }
  const js = await mapLimit(claims, opts.concurrency, (c, i) => support(c.claim, c.quote, `claim ${i + 1}`));
  all.push(...js);
  const out = claims.map((c, i) => {
    const j = js[i]!;
    return {
      claim: c.claim,
      quote: c.quote,
      supported: j.status === 'done' ? j.verdict!.supported : null,
      reason: j.verdict?.reason ?? j.error ?? '',
      judgeId: j.judgeId,
    };
  });
  const judged = out.filter((c) => c.supported !== null);
  const unsupported = judged.filter((c) => c.supported === false).length;
  return {
    claims: out,
    unit: 'whole',
    rate: judged.length ? unsupported / judged.length : null,
    unsupported,
    judged: judged.length,
    judgements: tallyJudgements(all),
  };
}

/**
 * Aggregates hallucination over reports.
 * @param reports per-report results; `mode` micro (pooled claims) or macro (mean of rates).
 * @returns the rate (fraction) or null.
 */
export function aggregateHallucination(
  reports: ReadonlyArray<Pick<AnalystClaimsScore, 'rate' | 'unsupported' | 'judged'>>,
  mode: 'micro' | 'macro' = 'micro',
): number | null {
  if (mode === 'macro') {
    const rs = reports.map((r) => r.rate).filter((r): r is number => r !== null);
    return rs.length ? rs.reduce((s, x) => s + x, 0) / rs.length : null;
  }
  const j = reports.reduce((s, r) => s + r.judged, 0);
  return j ? reports.reduce((s, r) => s + r.unsupported, 0) / j : null;
}

// ------------------------------------------------------------------ figures

/** A figure of a report: caption (alt text / "Figure n:" line / plot title) and where it came from. */
export interface ReportFigure {
  caption: string;
  /** Image path or `data:` URI prefix, or `code` for figures found in plotting code. */
  source: string;
  /** Plotting code, when the figure comes from code. */
  code?: string;
  rendered: boolean;
}

/**
 * Finds figures in a markdown report: images `![alt](src)` (caption = alt text, else the next
 * "Figure …" line) and titles set in fenced Python plotting code (`title(…)`, `set_title(…)`, `suptitle(…)`).
 * @param markdown the report. @returns figures in order of appearance.
 * Source: spec §4.3(d) "Generated figures are extracted from markdown image paths, from executable plotting code, or from base64 strings".
 */
export function extractFigures(markdown: string): ReportFigure[] {
  const out: ReportFigure[] = [];
  const lines = markdown.split(/\r?\n/);
  lines.forEach((line, i) => {
    for (const m of line.matchAll(/!\[([^\]]*)\]\(([^)\s]+)(?:\s+"([^"]*)")?\)/g)) {
      let caption = (m[1] || m[3] || '').trim();
      if (!caption) {
        const next = lines.slice(i + 1, i + 3).find((l) => /^\s*[*_]*(figure|fig\.)\s*\d*/i.test(l));
        caption = next?.replace(/^[\s*_]+|[\s*_]+$/g, '') ?? '';
      }
      out.push({ caption, source: m[2]!.startsWith('data:') ? m[2]!.slice(0, 30) : m[2]!, rendered: true });
    }
  });
  for (const block of markdown.matchAll(/```(?:python|py)\s*\n([\s\S]*?)```/g)) {
    const code = block[1]!;
    if (!/plt\.|\.plot\(|seaborn|sns\.|ax\.|\.bar\(|\.hist\(/.test(code)) continue;
    const titles = [...code.matchAll(/(?:suptitle|set_title|title)\(\s*[fr]?(["'])(.*?)\1/g)].map((m) => m[2]!);
    if (titles.length) for (const t of titles) out.push({ caption: t, source: 'code', code, rendered: false });
    else out.push({ caption: '', source: 'code', code, rendered: false });
  }
  return out;
}

/**
 * Figure captions in plain text (e.g. a PDF's page text): "Figure 1. Caption…" up to the first
 * sentence end, one per figure number (first occurrence).
 * @param text document text. @returns figures (`source` = `Figure n`).
 */
export function figureCaptionsFromText(text: string): ReportFigure[] {
  const seen = new Set<string>();
  const out: ReportFigure[] = [];
  for (const m of text.matchAll(/\bFig(?:ure|\.)\s*(\d+)[.:]\s+([^\n]{5,240}?)(?:\.(?:\s|$)|\n|$)/g)) {
    const n = m[1]!;
    if (seen.has(n)) continue;
    seen.add(n);
    out.push({ caption: m[2]!.trim(), source: `Figure ${n}`, rendered: true });
  }
  return out;
}

/** Turns captions into vectors. `lexical` embedders must say so in results. */
export interface CaptionEmbedder {
  readonly id: string;
  readonly lexical: boolean;
  embed(texts: readonly string[]): Promise<number[][]>;
}

/**
 * Embeddings from an OpenAI-compatible `/embeddings` endpoint (e.g. a server hosting all-MiniLM-L6-v2).
 * @param cfg baseUrl, model, apiKey. @returns an embedder; calls throw LoupeInputError naming the endpoint on failure.
 */
export function openAiEmbedder(cfg: { baseUrl: string; model: string; apiKey?: string }): CaptionEmbedder {
  const client = new OpenAI({ baseURL: cfg.baseUrl, apiKey: cfg.apiKey || 'none', maxRetries: 2 });
  return {
    id: `embeddings:${cfg.model}`,
    lexical: false,
    async embed(texts) {
      if (!texts.length) return [];
      try {
        const r = await client.embeddings.create({ model: cfg.model, input: [...texts] });
        return [...r.data].sort((a, b) => a.index - b.index).map((d) => d.embedding as number[]);
      } catch (e) {
        throw new LoupeInputError(`embeddings endpoint ${cfg.baseUrl}`, errorMessage(e), { cause: e });
      }
    },
  };
}

/**
 * The lexical fallback: bag-of-words (stop words removed, counts) vectors over the vocabulary of
 * the batch. Results computed with it are flagged `lexical-fallback`; its similarities run lower than
 * sentence embeddings', so use a lower `figure_threshold` (e.g. 0.3).
 * @returns an embedder with `lexical: true`.
 */
export function lexicalEmbedder(): CaptionEmbedder {
  return {
    id: 'lexical-fallback',
    lexical: true,
    async embed(texts) {
      const vocab = new Map<string, number>();
      const toks = texts.map((t) => tokens(t));
      for (const ts of toks) for (const t of ts) if (!vocab.has(t)) vocab.set(t, vocab.size);
      return toks.map((ts) => {
        const v = new Array<number>(vocab.size).fill(0);
        for (const t of ts) v[vocab.get(t)!]! += 1;
        return v;
      });
    },
  };
}

/**
 * Cosine similarity. @param a vector; `b` vector of the same length. @returns cos ∈ [−1, 1], 0 for a zero vector.
 */
export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0,
    na = 0,
    nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * (b[i] ?? 0);
    na += a[i]! * a[i]!;
    nb += (b[i] ?? 0) * (b[i] ?? 0);
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

/** Figure coverage and quality of one report. */
export interface AnalystFigureScore {
  /** Percentage (0–100) of reference figures matched; null when there are no reference figures. */
  coverage: number | null;
  /** Mean figure-quality score normalised to 0–100 (mean of the 4 dimensions / 5 · 100); null ("N/A") when no pair was judged. */
  quality: number | null;
  method: string;
  lexicalFallback: boolean;
  matches: Array<{ reference: number; generated: number; similarity: number; quality: number | null }>;
  similarity: number[][];
  judgements: JudgementTally;
}

/**
 * Matches generated figures to reference figures by caption similarity and scores matched pairs.
 * @param reference reference figures; `generated` figures of the report; `embedder` captions → vectors;
 *   `judge` decides `figure-quality` (omit to skip quality).
 * @returns coverage (%), quality (%), the similarity matrix [reference][generated] and matches.
 * Source: spec §4.3(d) (threshold and assignment unspecified in the paper: options here).
 */
export async function scoreAnalystFigures(
  input: {
    reference: readonly ReportFigure[];
    generated: readonly ReportFigure[];
    instruction?: string;
    runId?: string;
  },
  embedder: CaptionEmbedder,
  judge?: Judge,
  options: Partial<AnalystOptions> = {},
): Promise<AnalystFigureScore> {
  const opts = { ...DEFAULT_ANALYST_OPTIONS, ...options };
  const R = input.reference.length;
  const G = input.generated.length;
  const vecs = await embedder.embed([
    ...input.reference.map((f) => f.caption),
    ...input.generated.map((f) => f.caption),
  ]);
  const sim = Array.from({ length: R }, (_, r) => Array.from({ length: G }, (_, g) => cosine(vecs[r]!, vecs[R + g]!)));
  const pairs: Array<{ reference: number; generated: number; similarity: number }> = [];
  if (opts.figure_assignment === 'any') {
    for (let r = 0; r < R; r++) {
      let best = -1;
      for (let g = 0; g < G; g++) {
        if (sim[r]![g]! >= opts.figure_threshold && (best < 0 || sim[r]![g]! > sim[r]![best]!)) best = g;
      }
      if (best >= 0) pairs.push({ reference: r, generated: best, similarity: sim[r]![best]! });
    }
  } else {
    const cand: typeof pairs = [];
    for (let r = 0; r < R; r++) {
      for (let g = 0; g < G; g++) {
        if (sim[r]![g]! >= opts.figure_threshold) cand.push({ reference: r, generated: g, similarity: sim[r]![g]! });
      }
    }
    cand.sort((a, b) => b.similarity - a.similarity || a.reference - b.reference || a.generated - b.generated);
    const ur = new Set<number>();
    const ug = new Set<number>();
    for (const c of cand) {
      if (ur.has(c.reference) || ug.has(c.generated)) continue;
      ur.add(c.reference);
      ug.add(c.generated);
      pairs.push(c);
    }
    pairs.sort((a, b) => a.reference - b.reference);
  }
  const js = judge
    ? await mapLimit(pairs, opts.concurrency, (p) => {
        const gen = input.generated[p.generated]!;
        const q: {
          referenceCaption: string;
          generatedCaption: string;
          rendered: boolean;
          generatedCode?: string;
          instruction?: string;
        } = {
          referenceCaption: input.reference[p.reference]!.caption,
          generatedCaption: gen.caption,
          rendered: gen.rendered || !!gen.code,
        };
        if (gen.code) q.generatedCode = gen.code;
        if (input.instruction) q.instruction = input.instruction;
        return judge.judge('figure-quality', q, {
          ...(input.runId ? { runId: input.runId } : {}),
          itemRef: `figure ${p.reference + 1} ↔ ${p.generated + 1}`,
        });
      })
    : [];
  const matches = pairs.map((p, k) => {
    const v = js[k]?.status === 'done' ? js[k]!.verdict! : null;
    return {
      ...p,
      quality: v ? ((v.readability + v.groundedness + v.task_utility + v.reproducibility) / 4 / 5) * 100 : null,
    };
  });
  const qs = matches.map((m) => m.quality).filter((x): x is number => x !== null);
  return {
    coverage: R ? (100 * pairs.length) / R : null,
    quality: qs.length ? qs.reduce((s, x) => s + x, 0) / qs.length : null,
    method: embedder.id,
    lexicalFallback: embedder.lexical,
    matches,
    similarity: sim,
    judgements: tallyJudgements(js),
  };
}
