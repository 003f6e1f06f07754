/**
 * LongDA scoring of a stored run: the answers the answer tool recorded, matched against the block's ground
 * truth with LongTA's tolerance rule (`eval.ts`), efficiency and the tool-usage heatmap; and the pooled
 * aggregate of LongTA's `generate_evaluation_summary`. Source: LongDA paper §4 (metrics); LongTA `metric.py`,
 * `main.py`; issue 8.
 */
import type { RunStore } from '../../store/run-store.ts';
import type { InterventionRecord, RunRecord, StepRecord } from '../../store/records.ts';
import { parseAnswerArg } from './toolset.ts';
import type { Block } from '../../suites/types.ts';
import type { LongdaQuery } from './items.ts';
import { aggregateBase, scoreBase, type RunScore, type ScoreAggregate } from '../../eval/run-score.ts';
import type { ScoreGroup } from '../types.ts';
import type { OptionValues } from '../options.ts';
import {
  LONGDA_TOOLS,
  longdaEfficiency,
  longdaOptions,
  longdaRates,
  scoreLongda,
  toolUsageHeatmap,
  type LongdaAnswerInput,
  type LongdaEfficiency,
  type LongdaRowScore,
  type LongdaScore,
  type ToolHeatmap,
} from './eval.ts';

/**
 * The queries of a LongDA block: its items (LongDA's one query shape, which the score reads as it is).
 * @param block a LongDA block from the loader. @returns its queries (q_id = `longdaId`, LongTA's q_id).
 */
export function longdaQueriesOf(block: Block): LongdaQuery[] {
  return block.items.filter((i): i is LongdaQuery => i.type === 'longda-query');
}

/**
 * LongDA's one query id is LongTA's q_id (`LongdaQuery.longdaId`, `{survey}_{source}_q{i}`): scores, exports and
 * the results file use it. Answers recorded by the `answer` tool, by MCP clients or by earlier Loupe versions may
 * name a query by its block-local id (`q1`) or its suite-wide uid (`<blockId>/q1`); this is the one documented
 * mapping from any of the three to the q_id (an id the block does not know is kept as given).
 * @param block a LongDA block. @returns a function from a stored query id to the q_id.
 */
export function longdaQIdOf(block: Block): (storedId: string) => string {
  const map = new Map<string, string>();
  for (const q of block.items) {
    if (q.type !== 'longda-query') continue;
    map.set(q.id, q.longdaId);
    map.set(q.uid, q.longdaId);
    map.set(q.longdaId, q.longdaId);
  }
  return (id) => map.get(id) ?? id;
}

/** Tool names called at each step (one entry per step). */
export function stepToolNames(steps: readonly StepRecord[]): string[][] {
  return steps.map((s) => s.toolCalls.map((c) => c.name));
}

/** LongDA details of one run. */
export interface LongdaRunDetail {
  score: LongdaScore;
  efficiency: LongdaEfficiency;
  /** The run's token use is unknown (an external MCP client, issue 24): `efficiency`'s token counts are not measurements. */
  tokensUnknown?: true;
  heatmap: ToolHeatmap;
  /** Tool names called at each step (for pooled heatmaps). */
  toolSteps: string[][];
}

/**
 * Scores one LongDA run (no judge: tolerance matching).
 * @param options parsed scoring options (`tolerance`, `tolerance_floor`, `list_scoring`, `coverage`).
 * @returns the run's score; rates are fractions in [0, 1].
 * @throws LoupeInputError for an invalid option value.
 */
export async function scoreLongdaRun(
  store: RunStore,
  run: RunRecord,
  block: Block,
  options: OptionValues,
): Promise<RunScore> {
  const opts = longdaOptions(options as Record<string, string | number>);
  const queries = longdaQueriesOf(block);
  const answers = new Map<string, LongdaAnswerInput>();
  const qIdOf = longdaQIdOf(block);
  // One recorded value, one score: the value the answer tool recorded (and the results export writes, as LongTA's
  // `my_answer`), not the raw text it came from (`[503.6]` for a single-number question was recorded as 503.6).
  // The number (or number[]) is scored as it is, never printed and parsed again.
  for (const a of await store.getAnswers(run.id)) answers.set(qIdOf(a.queryId), a.answer != null ? a.answer : a.raw);
  const score = scoreLongda(queries, answers, opts);
  const steps = await store.getSteps(run.id);
  const names = stepToolNames(steps);
  const toolCalls: Record<string, number> = {};
  for (const s of names) for (const t of s) toolCalls[t] = (toolCalls[t] ?? 0) + 1;
  // An external MCP client's token use is unknown (issue 24): null in the summary, never counted as 0.
  const tokensKnown = run.tokens !== null;
  const efficiency = longdaEfficiency([
    {
      blockId: run.blockId,
      inputTokens: run.tokens?.input ?? 0,
      outputTokens: run.tokens?.output ?? 0,
      steps: run.steps,
      wallSeconds: run.durationMs / 1000,
      toolCalls,
    },
  ]);
  const heatmap = toolUsageHeatmap([names], { tools: [...LONGDA_TOOLS, 'python'] });
  return {
    ...scoreBase(run, 'longda', 'none', { ...opts }),
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
      inputTokens: tokensKnown ? efficiency.inputTokens : null,
      outputTokens: tokensKnown ? efficiency.outputTokens : null,
      steps: efficiency.totalSteps,
      wallSeconds: efficiency.wallSeconds,
    },
    detail: {
      score,
      efficiency,
      heatmap,
      toolSteps: names,
      ...(tokensKnown ? {} : { tokensUnknown: true as const }),
    } satisfies LongdaRunDetail,
    ...(Object.keys(score.changedBy).length ? { changedBy: score.changedBy } : {}),
  };
}

/**
 * Issue 20: the number of interventions an assisted run had before every answer of its block was within tolerance.
 * Replays the answers the run's `answer` tool recorded (add / update, step by step, as the tool stored them) and
 * scores them after each step with LongTA's tolerance rule and the given options; the first step after which every
 * query matches fixes the count (interventions placed before or at that step).
 * @param options parsed LongDA scoring options. @returns the count, or null when the answers never all matched.
 */
export async function longdaInterventionsUntilWithinTolerance(
  store: RunStore,
  run: RunRecord,
  block: Block,
  options: OptionValues,
  interventions: readonly InterventionRecord[],
): Promise<number | null> {
  const opts = longdaOptions(options as Record<string, string | number>);
  const queries = longdaQueriesOf(block);
  if (!queries.length) return null;
  const single = new Map<string, boolean>();
  const qIdOf = longdaQIdOf(block);
  for (const q of block.items) {
    if (q.type === 'longda-query') single.set(q.longdaId, q.answerStructure.kind === 'single_number');
  }
  const answers = new Map<string, LongdaAnswerInput>();
  for (const s of await store.getSteps(run.id)) {
    for (const c of s.toolCalls) {
      if (c.name !== 'answer' || c.isError) continue;
      let args: { action?: unknown; q_id?: unknown; answer?: unknown };
      try {
        args = JSON.parse(c.argumentsText) as typeof args;
      } catch {
        continue;
      }
      if (args.action !== 'add' && args.action !== 'update') continue;
      const qid = qIdOf(String(args.q_id));
      const p = parseAnswerArg(args.answer);
      if (!p.ok) continue;
      const v = single.get(qid) && Array.isArray(p.value) && p.value.length === 1 ? p.value[0]! : p.value;
      answers.set(qid, v);
    }
    const sc = scoreLongda(queries, answers, opts);
    if (sc.rows.length && sc.rows.every((r) => r.match >= 1)) {
      return interventions.filter((i) => i.beforeStep <= s.index).length;
    }
  }
  return null;
}

/**
 * LongDA aggregate per model: rates pooled over every query of the runs (Σ match / Σ queries), tokens and time
 * summed, average steps per block. Source: LongTA `generate_evaluation_summary`.
 */
export function aggregateLongda(groups: readonly ScoreGroup[], options: OptionValues = {}): ScoreAggregate[] {
  const o = longdaOptions(options as Record<string, string | number>);
  return groups.map(({ model, scores }) => {
    const agg = aggregateBase('longda', model, scores);
    const ok = scores.filter((s) => !s.error);
    const rows: LongdaRowScore[] = ok.flatMap((s) => (s.detail as LongdaRunDetail).score.rows);
    const r = longdaRates(rows, o);
    const eff = longdaEfficiency(
      ok.map((s) => ({
        blockId: s.blockId,
        inputTokens: s.summary.inputTokens ?? 0,
        outputTokens: s.summary.outputTokens ?? 0,
        steps: s.summary.steps ?? 0,
        wallSeconds: s.summary.wallSeconds ?? 0,
      })),
    );
    // Tokens are summed over the runs whose token use is known; none known (an MCP client's runs, issue 24): null.
    const known = ok.some((s) => s.summary.inputTokens != null);
    agg.metrics = {
      queries: r.n,
      coverage: r.coverage,
      coverageComparable: r.coverageComparable,
      coverageStructural: r.coverageStructural,
      match: r.match,
      matchPartial: r.matchPartial,
      matchStrict: r.matchStrict,
      mae: r.mae,
      inputTokens: known ? eff.inputTokens : null,
      outputTokens: known ? eff.outputTokens : null,
      totalTokens: known ? eff.totalTokens : null,
      avgStepsPerBlock: eff.avgStepsPerBlock,
      wallHours: eff.wallHours,
    };
    agg.method = 'pooled over queries (LongTA generate_evaluation_summary); tokens and time summed over runs';
    return agg;
  });
}

/**
 * The LongDA score of one run for `loupe run --json` (no judge needed): rates as fractions and the options used.
 * @returns `{ benchmark, options, queries, answered, coverage, coverageStructural, match, matchStrict }`.
 * @throws LoupeInputError for an unknown run id or invalid options.
 */
export async function longdaJsonScore(
  store: RunStore,
  runId: string,
  block: Block,
  options: OptionValues = {},
): Promise<Record<string, unknown>> {
  const run = await store.getRun(runId);
  if (!run) throw new Error(`run ${runId} not found in ${store.location}`);
  const s = await scoreLongdaRun(store, run, block, options);
  const m = s.summary;
  return {
    benchmark: 'longda',
    options: s.options,
    queries: m.queries,
    answered: m.answered,
    coverage: m.coverage,
    coverageStructural: m.coverageStructural,
    match: m.match,
    matchStrict: m.matchStrict,
  };
}
