/**
 * Scores runs recorded in the run store, whatever their benchmark: loads the run's suite and block
 * (from `run.params.suiteRoot`), reads what the run produced, calls the benchmark's scorer with the
 * chosen judge and options, and returns one uniform result per run plus aggregates per model.
 * Used by `loupe score`, `loupe report`, `loupe run --json` and the Results view.
 * Source: issue 8 "CLI and UI".
 */
import { pyNumberText } from '../store/export.ts';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { readContainedFile } from '../util/contained.ts';
import { extname, join } from 'node:path';
import { ddrFinalReport, ddrInsightsFromReasoning, ddrState, readDdrResult } from '../benchmarks/ddr/toolset.ts';
import { bladeState } from '../benchmarks/blade/toolset.ts';
import type { RunRecord, StepRecord } from '../agent/types.ts';
import type { RunStore } from '../store/run-store.ts';
import { loadSuite } from '../suites/index.ts';
import type { Block, LoadSuiteOptions, LongdaQuery as SuiteLongdaQuery, Suite, SuiteKind } from '../suites/types.ts';
import { LoupeInputError, errorMessage } from '../util/errors.ts';
import { nullLogger, type Logger } from '../util/log.ts';
import {
  analystOptions, extractFigures, figureCaptionsFromText, lexicalEmbedder, parseAnalystChecklist, scoreAnalystChecklist, scoreAnalystClaims, scoreAnalystFigures,
  type AnalystCriterion, type CaptionEmbedder, type ReportFigure,
} from '../benchmarks/analystbench/eval.ts';
import { ddrExploration, ddrOptions, scoreDdrChecklists, scoreDdrHallucination, scoreDdrNovelty, validInsights, type DdrChecklistScore, type DdrNoveltyInput } from '../benchmarks/ddr/eval.ts';
import type { Judge } from '../eval/judges/types.ts';
import {
  LONGDA_TOOLS, longdaEfficiency, longdaOptions, longdaRates, scoreLongda, toolUsageHeatmap,
  type LongdaEfficiency, type LongdaQuery, type LongdaRowScore, type LongdaScore, type ToolHeatmap,
} from '../benchmarks/longda/eval.ts';

/** Option names each benchmark accepts (for `--option name=value` validation). */
export const OPTION_NAMES: Record<string, readonly string[]> = {
  longda: ['tolerance', 'tolerance_floor', 'list_scoring', 'coverage'],
  ddr: ['scenario', 'empty_insights', 'no_insight_filter', 'lenient', 'globem_check', 'failed_judgements', 'concurrency', 'hallucination', 'novelty_seed', 'novelty_ties'],
  analystbench: ['checklist_normalisation', 'hallucination_aggregate', 'figure_threshold', 'figure_assignment', 'source_chars', 'concurrency'],
  blade: ['model_cvar_alternatives', 'model_cvar_check', 'failed_runs', 'coverage_key', 'k', 'samples', 'seed', 'model_coverage_denominator'],
};

/**
 * Checks that every option name is known to some benchmark.
 * @param raw options by name. @throws LoupeInputError naming an unknown option.
 */
export function validateOptionNames(raw: Record<string, string>): void {
  const known = new Set(Object.values(OPTION_NAMES).flat());
  for (const k of Object.keys(raw)) if (!known.has(k)) throw new LoupeInputError(`option ${k}`, `unknown; known options: ${[...known].sort().join(', ')}`);
}

/** Inputs of {@link scoreStoredRun}. */
export interface ScoreRunOptions {
  judge: Judge;
  /** Raw `--option name=value` values. */
  options?: Record<string, string>;
  /** Override the suite root recorded with the run. */
  suiteRoot?: string;
  /** Caption embedder for AnalystBench figures (default: the lexical fallback). */
  embedder?: CaptionEmbedder;
  /** Suite cache shared across runs. */
  suites?: Map<string, Promise<Suite>>;
  /** Loader options the run was made with (DDR `entities`, `database`, `metadataDir`, `checklist`; not stored with runs). */
  loadOptions?: Omit<LoadSuiteOptions, 'log' | 'onProgress'>;
  log?: Logger;
}

/** The uniform per-run result. */
export interface RunScore {
  runId: string;
  suite: string;
  blockId: string;
  model: string;
  agent: string;
  status: string;
  benchmark: string;
  judgeId: string;
  /** Options used (benchmark's complete option object). */
  options: Record<string, unknown>;
  /** Headline metrics: fractions in [0, 1] for rates; percentages only where the name says `Percent`. */
  summary: Record<string, number | null>;
  /** Judgements still pending (human) or failed: the score is partial while > 0. */
  pending: number;
  unjudged: number;
  detail: unknown;
  error?: string;
}

const modelOf = (r: RunRecord) => r.model ?? r.agent;

async function suiteFor(run: RunRecord, o: ScoreRunOptions): Promise<Suite> {
  const root = o.suiteRoot ?? (run.params.suiteRoot as string | undefined);
  if (!root) throw new LoupeInputError(`run ${run.id}`, 'has no suiteRoot in its params; pass --suite-root');
  const key = `${run.suite}\u0000${root}`;
  const cache = o.suites ?? new Map<string, Promise<Suite>>();
  let p = cache.get(key);
  if (!p) {
    p = loadSuite(run.suite as SuiteKind, root, { ...o.loadOptions, log: o.log ?? nullLogger });
    cache.set(key, p);
  }
  return p;
}

function blockOf(suite: Suite, run: RunRecord): Block {
  const b = suite.blocks.find((x) => x.id === run.blockId);
  if (!b) throw new LoupeInputError(`run ${run.id}`, `block '${run.blockId}' is not in suite ${suite.root}`);
  return b;
}

/**
 * Ground-truth queries of a LongDA block in the evaluator's shape.
 * @param block a LongDA block from the suites loader. @returns queries (q_id = LongTA q_id).
 */
export function longdaQueriesOf(block: Block): LongdaQuery[] {
  return block.items.filter((i): i is SuiteLongdaQuery => i.type === 'longda-query').map((q) => ({
    qId: q.longdaId,
    blockId: `${block.longda?.survey ?? ''}_${block.longda?.source ?? ''}`,
    survey: block.longda?.survey ?? '',
    source: block.longda?.source ?? '',
    internalId: q.internalId,
    query: q.question,
    answerStructure: q.answerStructure.kind === 'single_number' ? 'single_number' : `[${q.answerStructure.labels.join(', ')}]`,
    additionalInfo: q.additionalInfo,
    answer: q.answerText,
  }));
}

/** Tool names called at each step (one entry per step). */
export function stepToolNames(steps: readonly StepRecord[]): string[][] {
  return steps.map((s) => s.toolCalls.map((c) => c.name));
}

/** LongDA details of one run. */
export interface LongdaRunDetail {
  score: LongdaScore;
  efficiency: LongdaEfficiency;
  heatmap: ToolHeatmap;
  /** Tool names called at each step (for pooled heatmaps). */
  toolSteps: string[][];
}

function longdaRun(store: RunStore, run: RunRecord, block: Block, raw: Record<string, string>): RunScore {
  const opts = longdaOptions(raw);
  const queries = longdaQueriesOf(block);
  const answers = new Map<string, string>();
  const byAlt = new Map<string, string>();
  for (const q of block.items) {
    if (q.type !== 'longda-query') continue;
    byAlt.set(q.id, q.longdaId);
    byAlt.set(q.uid, q.longdaId);
  }
  // One recorded value, one score: the value the answer tool recorded (and the results export writes, as LongTA's
  // `my_answer`), not the raw text it came from (`[503.6]` for a single-number question was recorded as 503.6).
  for (const a of store.getAnswers(run.id)) answers.set(byAlt.get(a.queryId) ?? a.queryId, a.answer != null ? pyNumberText(a.answer) : a.raw);
  const score = scoreLongda(queries, answers, opts);
  const steps = store.getSteps(run.id);
  const names = stepToolNames(steps);
  const toolCalls: Record<string, number> = {};
  for (const s of names) for (const t of s) toolCalls[t] = (toolCalls[t] ?? 0) + 1;
  const efficiency = longdaEfficiency([{ blockId: run.blockId, inputTokens: run.tokens.input, outputTokens: run.tokens.output, steps: run.steps, wallSeconds: run.durationMs / 1000, toolCalls }]);
  const heatmap = toolUsageHeatmap([names], { tools: [...LONGDA_TOOLS, 'python'] });
  return {
    ...base(run, 'longda', 'none', { ...opts }),
    summary: {
      queries: score.n,
      answered: score.answered,
      coverage: score.coverage,
      coverageComparable: score.coverageComparable,
      coverageStructural: score.coverageStructural,
      match: score.match,
      matchPartial: score.matchPartial,
      matchStrict: score.matchStrict,
      mae: score.mae,
      inputTokens: efficiency.inputTokens,
      outputTokens: efficiency.outputTokens,
      steps: efficiency.totalSteps,
      wallSeconds: efficiency.wallSeconds,
    },
    detail: { score, efficiency, heatmap, toolSteps: names } satisfies LongdaRunDetail,
  };
}

function base(run: RunRecord, benchmark: string, judgeId: string, options: Record<string, unknown>): Omit<RunScore, 'summary' | 'detail'> {
  return { runId: run.id, suite: run.suite, blockId: run.blockId, model: modelOf(run), agent: run.agent, status: run.status, benchmark, judgeId, options, pending: 0, unjudged: 0 };
}

/** Guesses the DDR scenario (mimic / 10k / globem) from a suite root path. */
export function guessDdrScenario(root: string): string {
  const r = root.toLowerCase();
  if (/10-?k/.test(r)) return '10k';
  if (r.includes('globem')) return 'globem';
  return 'mimic';
}

async function ddrRun(store: RunStore, run: RunRecord, block: Block, suite: Suite, raw: Record<string, string>, o: ScoreRunOptions): Promise<RunScore> {
  const opts = ddrOptions({ scenario: raw.scenario ?? guessDdrScenario(suite.root), ...raw });
  const steps = store.getSteps(run.id);
  const recorded = readDdrResult(store, run.id);
  const insights = recorded ? recorded.insights : ddrInsightsFromReasoning(steps);
  const report = recorded ? recorded.finalReport : ddrFinalReport(steps, (run.params.finishRule as 'paper' | 'code' | undefined) ?? 'paper');
  const checklist = (block.hidden.checklist ?? []).map((c) => ({ question: c.question, answer: c.answer }));
  const entityId = block.ddr?.entityId ?? block.id;
  const cs = await scoreDdrChecklists([{ entityId, checklist, insights: insights.map((i) => i.insight), report, runId: run.id }], o.judge, opts);
  const queries = ddrState(store.getExtraState(run.id)).queries;
  const totalFields = block.visible.database?.tables.reduce((s, t) => s + t.columns.length, 0) ?? 0;
  const exploration = totalFields > 0 ? ddrExploration(queries.map((q) => q.columns), totalFields) : null;
  let hallucination: Awaited<ReturnType<typeof scoreDdrHallucination>> | null = null;
  if ((raw.hallucination ?? 'on') !== 'off' && o.judge.id !== 'none') {
    const byStep = new Map(steps.map((s) => [s.index, s]));
    const items = insights.filter((i) => i.insight && validInsights([i.insight], opts.no_insight_filter).length).map((i) => {
      const s = byStep.get(i.stepIndex);
      const evidence = s ? [s.assistant.content ?? '', ...s.toolCalls.map((c) => `${c.name}(${c.argumentsText}) → ${c.observation}`)].join('\n').slice(0, 12_000) : '';
      return { insight: i.insight!, evidence, runId: run.id };
    });
    hallucination = await scoreDdrHallucination(items, o.judge, opts.concurrency);
  }
  const e = cs.perEntity[0]!;
  const pending = cs.messageWise.pending + cs.trajectoryWise.pending + (hallucination?.judgements.pending ?? 0);
  const unjudged = pending + cs.messageWise.errors + cs.trajectoryWise.errors + (hallucination?.judgements.errors ?? 0);
  return {
    ...base(run, 'ddr', o.judge.id, { ...opts, hallucination: raw.hallucination ?? 'on' }),
    pending,
    unjudged,
    summary: {
      items: checklist.length,
      messageWiseAccuracy: e.messageWise.included ? e.messageWise.accuracy : null,
      trajectoryWiseAccuracy: e.trajectoryWise.included ? e.trajectoryWise.accuracy : null,
      messageWiseCorrect: e.messageWise.correct,
      trajectoryWiseCorrect: e.trajectoryWise.correct,
      validInsights: e.validInsights,
      totalInsights: e.totalInsights,
      coverage: exploration?.coverage ?? null,
      normalizedEntropy: exploration?.normalizedEntropy ?? null,
      hallucinationRate: hallucination?.rate ?? null,
    },
    detail: { checklist: cs, exploration, hallucination, entityId, insights: validInsights(insights.map((i) => i.insight), opts.no_insight_filter) },
  };
}

const TEXT_EXT = new Set(['.md', '.txt', '.csv', '.json', '.tsv', '.html', '.htm']);

function readSourcesText(block: Block, maxBytes = 20_000_000): { texts: string[]; skipped: string[] } {
  const texts: string[] = [];
  const skipped: string[] = [];
  let used = 0;
  for (const f of [...block.visible.docs, ...block.visible.data]) {
    if (!TEXT_EXT.has(extname(f.path).toLowerCase())) {
      skipped.push(f.rel);
      continue;
    }
    try {
      const size = statSync(f.path).size;
      if (used + size > maxBytes) {
        skipped.push(f.rel);
        continue;
      }
      texts.push(`[${f.rel}]\n${readFileSync(f.path, 'utf8')}`);
      used += size;
    } catch {
      skipped.push(f.rel);
    }
  }
  return { texts, skipped };
}

/**
 * Criteria from suite checklist items: `question` is the criterion; a rubric is read from `answer`
 * lines `1: …` … `5: …` when present.
 * @param items checklist items. @returns criteria.
 */
export function criteriaFromChecklist(items: ReadonlyArray<{ question: string; answer?: string }>): AnalystCriterion[] {
  return items.map((c) => {
    const text = `- ${c.question}\n${(c.answer ?? '').split(/\r?\n/).map((l) => `  ${l.trim().replace(/^[-*]\s*/, '- ')}`).join('\n')}`;
    const parsed = /(^|\n)\s+- [1-5]\s*:/.test(text) ? parseAnalystChecklist(text)[0] : undefined;
    if (parsed) return parsed;
    // a fact checklist (question + expected answer): the criterion asks for that fact
    return { criterion: c.answer?.trim() ? `${c.question} The expected answer is: ${c.answer.trim()}` : c.question, rubric: [] };
  });
}

async function analystRun(run: RunRecord, block: Block, raw: Record<string, string>, o: ScoreRunOptions): Promise<RunScore> {
  const opts = analystOptions(raw);
  const reportPath = join(run.workspace, 'report.md');
  let report: string | null;
  try {
    report = readContainedFile(run.workspace, 'report.md', 'utf8');
  } catch {
    report = null; // absent, or a link the agent planted (never followed)
  }
  const b = base(run, 'analystbench', o.judge.id, { ...opts });
  if (report === null) {
    return { ...b, summary: { checklistPercent: null, hallucinationRate: null, figureCoveragePercent: null, figureQualityPercent: null }, detail: { reportPath, error: 'no report.md: agent generation failure' }, error: `no report at ${reportPath}` };
  }
  const criteria = criteriaFromChecklist(block.hidden.checklist ?? []);
  const instruction = block.visible.instruction ?? '';
  const checklist = criteria.length ? await scoreAnalystChecklist({ instruction, response: report, runId: run.id }, criteria, o.judge, opts) : null;
  const sources = readSourcesText(block);
  const retriever = sources.skipped.length ? await docRetriever(block, o) : null;
  try {
    const claims = await scoreAnalystClaims({ report, sources: sources.texts, runId: run.id, ...(retriever ? { select: retriever.select } : {}) }, o.judge, opts);
    const reference = await referenceFigures(block.hidden.referenceReport);
    const generated = extractFigures(report);
    const figures = await scoreAnalystFigures({ reference, generated, instruction, runId: run.id }, o.embedder ?? lexicalEmbedder(), o.judge, opts);
    const tallies = [checklist?.judgements, claims.judgements, figures.judgements].filter((t) => !!t);
    const pending = tallies.reduce((s, t) => s + t!.pending, 0);
    return {
      ...b,
      options: { ...opts, figureMatching: figures.method, lexicalFallback: figures.lexicalFallback, sourceSelection: retriever ? 'doc-index bm25 + lexical' : 'lexical' },
      pending,
      unjudged: pending + tallies.reduce((s, t) => s + t!.errors, 0),
      summary: {
        checklistPercent: checklist?.percent ?? null,
        hallucinationRate: claims.rate,
        figureCoveragePercent: figures.coverage,
        figureQualityPercent: figures.quality,
        claims: claims.claims.length,
        referenceFigures: reference.length,
        generatedFigures: generated.length,
        reportChars: report.length,
      },
      detail: { checklist, claims, figures, sourcesSkipped: retriever ? [] : sources.skipped },
    };
  } finally {
    retriever?.close();
  }
}

/** Reference figures: markdown images, or "Figure n." captions in the text of a PDF / HTML / text report. */
async function referenceFigures(path: string | undefined): Promise<ReportFigure[]> {
  if (!path || !existsSync(path)) return [];
  if (/\.(md|markdown)$/i.test(path)) return extractFigures(readFileSync(path, 'utf8'));
  const { extractUnits } = await import('../docs/index.ts');
  const doc = await extractUnits(path, new Uint8Array(readFileSync(path)));
  return figureCaptionsFromText(doc.units.join('\n'));
}

/** Claim → passages of the block's documentation (PDFs included) through the documentation index. */
async function docRetriever(block: Block, o: ScoreRunOptions): Promise<{ select: (claim: string, maxChars: number) => Promise<string>; close: () => void } | null> {
  const roots = new Set(block.visible.docs.map((d) => (d.path.endsWith(d.rel) ? d.path.slice(0, d.path.length - d.rel.length) : '\u0000')));
  const [root] = roots;
  if (roots.size !== 1 || !root || root === '\u0000') return null;
  try {
    const { openDocIndex } = await import('../docs/index.ts');
    const idx = await openDocIndex({ root, files: block.visible.docs.map((d) => d.rel) });
    await idx.build();
    return {
      async select(claim, maxChars) {
        const parts: string[] = [];
        let used = 0;
        for (const h of idx.search(claim, { top: 12 })) {
          const unit = idx.units(h.file)[h.unitIndex]?.text ?? h.snippet;
          const text = `[${h.file} ${h.unit}] ${unit.slice(Math.max(0, h.start - 800), h.end + 800)}`;
          if (used + text.length > maxChars) break;
          parts.push(text);
          used += text.length;
        }
        return parts.join('\n…\n');
      },
      close: () => idx.close(),
    };
  } catch (e) {
    (o.log ?? nullLogger).warn(`documentation index unavailable for ${block.id}: ${errorMessage(e)}; claims are checked against text sources only`);
    return null;
  }
}

async function bladeRun(store: RunStore, run: RunRecord, block: Block, raw: Record<string, string>, o: ScoreRunOptions, ctx: BladeContext): Promise<RunScore> {
  const { parseBladeAnalysis, scoreBladeRun, groundTruthFrom } = await import('../benchmarks/blade/eval/score.ts');
  const { semanticJudgeFrom } = await import('../benchmarks/blade/eval/semantic.ts');
  const opts = {
    modelCvarAlternatives: (raw.model_cvar_alternatives ?? 'all-specs') as 'all-specs' | 'representative',
    modelCvarCheck: (raw.model_cvar_check ?? 'strict') as 'strict' | 'blade',
  };
  if (!['all-specs', 'representative'].includes(opts.modelCvarAlternatives)) throw new LoupeInputError('option model_cvar_alternatives', `must be all-specs or representative, got '${opts.modelCvarAlternatives}'`);
  if (!['strict', 'blade'].includes(opts.modelCvarCheck)) throw new LoupeInputError('option model_cvar_check', `must be strict or blade, got '${opts.modelCvarCheck}'`);
  const dataset = block.blade?.dataset ?? block.id;
  const dataPath = block.visible.data.find((f) => /data\.csv$/.test(f.path))?.path;
  if (!dataPath || !block.hidden.annotations) throw new LoupeInputError(`block ${block.id}`, 'BLADE scoring needs data.csv and annotations');
  const py = await ctx.python();
  let gtP = ctx.gt.get(dataset);
  if (!gtP) {
    gtP = groundTruthFrom({ dataset, dataPath, annotations: block.hidden.annotations, researchQuestion: block.visible.researchQuestions?.[0] ?? '' }, py, { log: o.log ?? nullLogger });
    ctx.gt.set(dataset, gtP);
  }
  const gt = await gtP;
  const final = bladeState(store.getExtraState(run.id)).final;
  const input = final ? { runId: run.id, analysis: parseBladeAnalysis(final, `run ${run.id}`) } : { runId: run.id, generationFailed: 'no valid submit_analysis' };
  const s = await scoreBladeRun(input, gt, { python: py, judge: semanticJudgeFrom(o.judge, { runId: run.id }), ...opts, log: o.log ?? nullLogger });
  const m = s.metrics;
  return {
    ...base(run, 'blade', o.judge.id, { ...opts, ...s.options, failedRuns: raw.failed_runs ?? 'zero' }),
    pending: s.judges.pending ?? 0,
    unjudged: (s.judges.pending ?? 0) + (s.judges.errors ?? 0),
    summary: {
      cvarPrecision: m.cvar.precision,
      modelPrecision: m.model.precision,
      transformValuePrecision: m.transformValue.precision,
      transformGraphPrecision: m.transformGraph.precision,
    },
    detail: { score: s, gtCounts: gt.counts, dataset },
  };
}

async function bladeMcqRun(store: RunStore, run: RunRecord, block: Block): Promise<RunScore> {
  const { bladeMcqAccuracy } = await import('../benchmarks/blade/mcq.ts');
  const st = store.getExtraState(run.id).bladeMcq as { answers?: Array<{ itemId: string; answer: string | null; raw: string; stepIndex: number }> } | undefined;
  const answers = st?.answers ?? [];
  const all = bladeMcqAccuracy(block, answers);
  const fam = new Map(block.items.filter((i) => i.type === 'blade-mcq').map((i) => [i.id, i.family]));
  const part = (f: 'cvar' | 'transform') => bladeMcqAccuracy(block, answers.filter((a) => fam.get(a.itemId) === f));
  const t = part('transform');
  const c = part('cvar');
  return {
    ...base(run, 'blade-mcq', 'none', { parsing: 'strict', unparsed: 'wrong' }),
    summary: { mcqAccuracy: all.accuracy, correct: all.correct, total: all.total, unparsed: answers.filter((a) => a.answer === null).length, transformAccuracy: t.total ? t.accuracy : null, cvarAccuracy: c.total ? c.accuracy : null },
    detail: { answers },
  };
}

/** Shared state for BLADE scoring across runs (one Python driver, GT per dataset). */
export interface BladeContext {
  python(): Promise<import('../benchmarks/blade/eval/python.ts').BladePython>;
  gt: Map<string, Promise<import('../benchmarks/blade/eval/score.ts').BladeGroundTruth>>;
  close(): Promise<void>;
}

/**
 * A lazily started BLADE context.
 * @param pythonPath interpreter (default: found by the BLADE driver).
 * @returns a context; call `close()` at the end.
 */
export function bladeContext(pythonPath?: string): BladeContext {
  let p: Promise<import('../benchmarks/blade/eval/python.ts').BladePython> | undefined;
  return {
    gt: new Map(),
    python() {
      if (!p) p = import('../benchmarks/blade/eval/python.ts').then((m) => m.startBladePython(pythonPath ? { python: pythonPath } : {}));
      return p;
    },
    async close() {
      if (p) await (await p).close();
    },
  };
}

/**
 * Scores one stored run. Never throws for a scoring failure of the run itself: the result carries `error`.
 * @param store the run store; `runId` the run; `o` judge, options, suite cache.
 * @returns the run's score.
 * @throws LoupeInputError for an unknown run id or invalid options.
 */
export async function scoreStoredRun(store: RunStore, runId: string, o: ScoreRunOptions, blade?: BladeContext): Promise<RunScore> {
  const run = store.getRun(runId);
  if (!run) throw new LoupeInputError(`run ${runId}`, `not found in ${store.file}`);
  const raw = o.options ?? {};
  validateOptionNames(raw);
  try {
    const suite = await suiteFor(run, o);
    const block = blockOf(suite, run);
    switch (run.suite) {
      case 'longda':
        return longdaRun(store, run, block, raw);
      case 'ddr':
        return await ddrRun(store, run, block, suite, raw, o);
      case 'analystbench':
        return await analystRun(run, block, raw, o);
      case 'blade': {
        const ctx = blade ?? bladeContext();
        try {
          return await bladeRun(store, run, block, raw, o, ctx);
        } catch (e) {
          if (e instanceof LoupeInputError && /^option /.test(e.subject)) throw e;
          // a failed run still belongs to its dataset: the aggregate scores it 0 or drops it (option failed_runs)
          return { ...base(run, 'blade', o.judge.id, {}), summary: {}, detail: { dataset: block.blade?.dataset ?? block.id }, error: errorMessage(e) };
        } finally {
          if (!blade) await ctx.close();
        }
      }
      case 'blade-mcq':
        return await bladeMcqRun(store, run, block);
      default:
        return { ...base(run, run.suite, o.judge.id, {}), summary: {}, detail: null, error: `scoring of suite '${run.suite}' runs is not supported by loupe score` };
    }
  } catch (e) {
    if (e instanceof LoupeInputError && /^option /.test(e.subject)) throw e;
    return { ...base(run, run.suite, o.judge.id, {}), summary: {}, detail: null, error: errorMessage(e) };
  }
}

/** Aggregate of one (benchmark, model) group. */
export interface ScoreAggregate {
  benchmark: string;
  model: string;
  runs: number;
  runIds: string[];
  failed: number;
  pending: number;
  /** LongDA: pooled over every query of the runs (Σ match / Σ queries), as LongTA's summary. Others: means over runs. */
  metrics: Record<string, number | null>;
  /** How `metrics` were combined. */
  method: string;
  /** Aggregation options in effect (BLADE: `failed_runs`). */
  options?: Record<string, unknown>;
  extra?: unknown;
}

/**
 * Aggregates run scores per (benchmark, model).
 * LongDA pools rows (Σ/N over all queries, tokens summed, avg steps per block); DDR gives sample-
 * and item-averaged accuracy over entities (entities scored 0 when they have no insights, per the
 * option) and, with two or more models on shared entities, Bradley–Terry novelty; AnalystBench and
 * BLADE per-run metrics are averaged (BLADE's bootstrap aggregate is in `extra` when available).
 * @param scores per-run scores; `judge` for DDR novelty (omit to skip).
 * @returns one aggregate per group, sorted by benchmark then model.
 */
export async function aggregateScores(scores: readonly RunScore[], judge?: Judge, raw: Record<string, string> = {}): Promise<ScoreAggregate[]> {
  const groups = new Map<string, RunScore[]>();
  for (const s of scores) {
    const k = `${s.benchmark}\u0000${s.model}`;
    let g = groups.get(k);
    if (!g) groups.set(k, (g = []));
    g.push(s);
  }
  const out: ScoreAggregate[] = [];
  for (const [k, g] of groups) {
    const [benchmark, model] = k.split('\u0000') as [string, string];
    const ok = g.filter((s) => !s.error);
    const agg: ScoreAggregate = { benchmark, model, runs: g.length, runIds: g.map((s) => s.runId), failed: g.length - ok.length, pending: g.reduce((s, x) => s + x.pending, 0), metrics: {}, method: 'mean over runs' };
    if (benchmark === 'longda') {
      const rows: LongdaRowScore[] = ok.flatMap((s) => (s.detail as LongdaRunDetail).score.rows);
      const r = longdaRates(rows);
      const eff = longdaEfficiency(ok.map((s) => ({ blockId: s.blockId, inputTokens: s.summary.inputTokens ?? 0, outputTokens: s.summary.outputTokens ?? 0, steps: s.summary.steps ?? 0, wallSeconds: s.summary.wallSeconds ?? 0 })));
      agg.metrics = { queries: r.n, coverage: r.coverage, coverageComparable: r.coverageComparable, coverageStructural: r.coverageStructural, match: r.match, matchPartial: r.matchPartial, matchStrict: r.matchStrict, mae: r.mae, inputTokens: eff.inputTokens, outputTokens: eff.outputTokens, totalTokens: eff.totalTokens, avgStepsPerBlock: eff.avgStepsPerBlock, wallHours: eff.wallHours };
      agg.method = 'pooled over queries (LongTA generate_evaluation_summary); tokens and time summed over runs';
    } else if (benchmark === 'ddr') {
      const per = ok.map((s) => (s.detail as { checklist: DdrChecklistScore }).checklist);
      const m = per.flatMap((c) => c.perEntity.map((e) => e.messageWise)).filter((x) => x.included);
      const t = per.flatMap((c) => c.perEntity.map((e) => e.trajectoryWise)).filter((x) => x.included);
      const avg = (xs: Array<number | null>) => {
        const v = xs.filter((x): x is number => x !== null);
        return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
      };
      const items = (xs: typeof m) => {
        const j = xs.reduce((s, x) => s + x.judged, 0);
        return j ? xs.reduce((s, x) => s + x.correct, 0) / j : null;
      };
      agg.metrics = {
        entities: ok.length,
        messageWiseSampleAveraged: avg(m.map((x) => x.accuracy)),
        messageWiseItemAveraged: items(m),
        trajectoryWiseSampleAveraged: avg(t.map((x) => x.accuracy)),
        trajectoryWiseItemAveraged: items(t),
        coverage: avg(ok.map((s) => s.summary.coverage ?? null)),
        normalizedEntropy: avg(ok.map((s) => s.summary.normalizedEntropy ?? null)),
        hallucinationRate: avg(ok.map((s) => s.summary.hallucinationRate ?? null)),
      };
      agg.method = 'sample-averaged = mean over entities; item-averaged = Σ correct / Σ judged (DDR calculate_overall_stats)';
    } else if (benchmark === 'blade-mcq') {
      const sum = (k: string) => ok.reduce((s, x) => s + (x.summary[k] ?? 0), 0);
      agg.metrics = { mcqAccuracy: sum('total') ? sum('correct') / sum('total') : null, correct: sum('correct'), total: sum('total'), unparsed: sum('unparsed') };
      agg.method = 'pooled over questions (unparsed answers count as wrong)';
    } else {
      const keys = new Set(ok.flatMap((s) => Object.keys(s.summary)));
      for (const key of keys) {
        const v = ok.map((s) => s.summary[key]).filter((x): x is number => typeof x === 'number');
        agg.metrics[key] = v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
      }
      if (benchmark === 'blade') agg.options = { failed_runs: raw.failed_runs ?? 'zero' };
      if (benchmark === 'blade' && ok.length) {
        try {
          const { aggregateBlade, zeroRun } = await import('../benchmarks/blade/eval/metrics.ts');
          const byDs = new Map<string, { dataset: string; gt: import('../benchmarks/blade/eval/metrics.ts').BladeGtCounts; runs: import('../benchmarks/blade/eval/metrics.ts').BladeRunMetrics[] }>();
          for (const s of ok) {
            const d = s.detail as { score: import('../benchmarks/blade/eval/metrics.ts').BladeRunMetrics; gtCounts: import('../benchmarks/blade/eval/metrics.ts').BladeGtCounts; dataset: string };
            let e = byDs.get(d.dataset);
            if (!e) byDs.set(d.dataset, (e = { dataset: d.dataset, gt: d.gtCounts, runs: [] }));
            e.runs.push(d.score);
          }
          // runs whose scoring failed (spec §1.7 #12): status 'failed', scored 0 under failed_runs=zero, dropped under drop.
          // Their dataset's GT denominators come from its scored runs; a dataset with no scored run cannot be aggregated.
          const unplaced: string[] = [];
          for (const s of g.filter((x) => x.error)) {
            const ds = (s.detail as { dataset?: string } | null)?.dataset ?? s.blockId;
            const e = byDs.get(ds);
            if (e) e.runs.push(zeroRun('failed', s.runId));
            else unplaced.push(`${s.runId} (${ds})`);
          }
          const num = (x: string | undefined) => (x === undefined ? undefined : Number(x));
          const bo: Record<string, unknown> = {};
          if (raw.failed_runs) bo.failedRuns = raw.failed_runs;
          if (raw.coverage_key) bo.coverageKey = raw.coverage_key;
          if (raw.model_coverage_denominator) bo.modelCoverageDenominator = raw.model_coverage_denominator;
          for (const key of ['k', 'samples', 'seed'] as const) if (raw[key] !== undefined) bo[key] = num(raw[key]);
          const a = aggregateBlade([...byDs.values()], bo);
          agg.extra = a;
          agg.metrics.weightedF1 = a.bootstrap.weightedF1.mean;
          agg.metrics.weightedF1Lo = a.bootstrap.weightedF1.lo;
          agg.metrics.weightedF1Hi = a.bootstrap.weightedF1.hi;
          if (unplaced.length) a.warnings.push(`failed runs left out (their dataset has no scored run to take GT denominators from): ${unplaced.join(', ')}`);
          agg.options = { failed_runs: a.options.failedRuns };
          agg.method = `BLADE aggregateBlade (bootstrap) over datasets; failed_runs=${a.options.failedRuns}: runs whose scoring failed are ${a.options.failedRuns === 'zero' ? 'scored 0 and counted' : 'dropped'}, runs without a submission are padded as 0 either way`;
        } catch (e) {
          agg.extra = { error: errorMessage(e) };
        }
      }
    }
    out.push(agg);
  }
  // DDR novelty across models sharing entities
  if (judge && judge.id !== 'none') {
    const ddr = scores.filter((s) => s.benchmark === 'ddr' && !s.error);
    if (new Set(ddr.map((s) => s.model)).size >= 2) {
      const inputs: DdrNoveltyInput[] = ddr.map((s) => {
        const d = s.detail as { checklist: DdrChecklistScore; entityId: string; insights: string[] };
        const used = d.checklist.perEntity[0]?.messageWise.items.flatMap((i) => [...i.supporting, ...i.contradicting]) ?? [];
        return { model: s.model, entityId: d.entityId, insights: d.insights, usedIndices: used };
      });
      const seed = raw.novelty_seed !== undefined ? Number(raw.novelty_seed) : 0;
      const ties = raw.novelty_ties === 'ignore' ? 'ignore' : 'half';
      const nov = await scoreDdrNovelty(inputs, judge, { seed, ties });
      for (const a of out) {
        if (a.benchmark !== 'ddr') continue;
        a.metrics.noveltyStrength = nov.fit.strengths[a.model] ?? null;
        a.metrics.noveltyRank = nov.fit.ranking.indexOf(a.model) + 1 || null;
        a.extra = { novelty: nov };
      }
    }
  }
  return out.sort((a, b) => a.benchmark.localeCompare(b.benchmark) || a.model.localeCompare(b.model));
}

/**
 * The LongDA score of one run for `loupe run --json` (no judge needed): rates as fractions and the
 * options used. Synchronous; the block comes from the caller (no suite loading).
 * @param store the run store; `runId` the run; `block` its LongDA block; `raw` `--option` values.
 * @returns `{ benchmark, options, queries, answered, coverage, coverageStructural, match, matchStrict }`.
 * @throws LoupeInputError for invalid options.
 */
export function longdaJsonScore(store: RunStore, runId: string, block: Block, raw: Record<string, string> = {}): Record<string, unknown> {
  const run = store.getRun(runId);
  if (!run) throw new LoupeInputError(`run ${runId}`, `not found in ${store.file}`);
  const s = longdaRun(store, run, block, raw);
  const m = s.summary;
  return { benchmark: 'longda', options: s.options, queries: m.queries, answered: m.answered, coverage: m.coverage, coverageStructural: m.coverageStructural, match: m.match, matchStrict: m.matchStrict };
}
