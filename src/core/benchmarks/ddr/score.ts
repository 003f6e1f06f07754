/**
 * DDR-Bench scoring of stored runs: the entity's fact checklist against the run's message-wise insights (I_m)
 * and final report (I_t) through the judge, exploration coverage and entropy of the fields queried, and the
 * hallucination audit; the aggregate gives sample- and item-averaged accuracy over entities and, with two or
 * more models on shared entities, Bradley–Terry novelty. Source: DDR-Bench paper §4; DDR code
 * (`calculate_overall_stats`, judges); spec §3.4–3.7; issues 8, 12.
 */
import type { RunStore } from '../../store/run-store.ts';
import type { RunRecord } from '../../store/records.ts';
import type { Block, Suite } from '../../suites/types.ts';
import { aggregateBase, scoreBase, type RunScore, type ScoreAggregate } from '../../eval/run-score.ts';
import type { Judge } from '../../eval/judges/types.ts';
import type { OptionValues } from '../options.ts';
import type { ScoreGroup } from '../types.ts';
import {
  ddrExploration,
  ddrOptions,
  ddrTopK,
  scoreDdrChecklists,
  scoreDdrHallucination,
  scoreDdrNovelty,
  validInsights,
  type DdrChecklistScore,
  type DdrNoveltyInput,
} from './eval.ts';
import { pyStatisticsMean } from '../../eval/numpy-python.ts';
import { ddrFinalReport, ddrInsightsFromReasoning, ddrState, readDdrResult } from './toolset.ts';
import { ddrHallucinationItems, type DdrUncheckedFact } from './hallucination-items.ts';
import {
  decomposeClaims,
  linkFacts,
  stepTextOf,
  type ClaimsMode,
  type DecomposedClaim,
  type FactSplitMode,
  type LinkedFact,
} from '../../eval/atomic-claims.ts';
import { annotationStoreOf, expertFactSplits } from '../../annotations/index.ts';

/** Guesses the DDR scenario (mimic / 10k / globem) from a suite root path. */
export function guessDdrScenario(root: string): string {
  const r = root.toLowerCase();
  if (/10-?k/.test(r)) return '10k';
  if (r.includes('globem')) return 'globem';
  return 'mimic';
}

const EVAL_OPTIONS = [
  'scenario',
  'empty_insights',
  'no_insight_filter',
  'lenient',
  'globem_check',
  'failed_judgements',
  'unparsed_reply',
  'label_case',
  'concurrency',
] as const;

/**
 * Scores one DDR run.
 * @param options parsed options; `scenario` defaults to the one guessed from the suite root.
 * @returns the run's score (accuracies are fractions; pending counts human items still open).
 */
export async function scoreDdrRun(o: {
  store: RunStore;
  run: RunRecord;
  block: Block;
  suite: Suite;
  judge: Judge;
  options: OptionValues;
}): Promise<RunScore> {
  const { store, run, block } = o;
  const picked: Record<string, string | number> = {};
  for (const k of EVAL_OPTIONS) if (o.options[k] !== undefined) picked[k] = o.options[k] as string | number;
  const opts = ddrOptions({ scenario: guessDdrScenario(o.suite.root), ...picked });
  const steps = await store.getSteps(run.id);
  const recorded = await readDdrResult(store, run.id);
  const insights = recorded ? recorded.insights : ddrInsightsFromReasoning(steps);
  const report = recorded ? recorded.finalReport : ddrFinalReport(steps, run.params.finishRule ?? 'paper');
  const checklist = (block.hidden.checklist ?? []).map((c) => ({ question: c.question, answer: c.answer }));
  const entityId = block.ddr?.entityId ?? block.id;
  // claims = atomic (issue 43): the checklist judge, the top-k curve and novelty read the insights' atomic facts (an
  // expert's split first, else the judge's or the rule's), each linked to the queries that mention its values
  const claimsMode = (o.options.claims as ClaimsMode | undefined) ?? 'whole';
  const factSplit = (o.options.fact_split as FactSplitMode | undefined) ?? 'judge';
  let atomic: { claims: DecomposedClaim[]; facts: LinkedFact[] } | null = null;
  let judged: Array<string | null> = insights.map((i) => i.insight);
  if (claimsMode === 'atomic') {
    const valid = insights.filter((i) => i.insight && validInsights([i.insight], opts.no_insight_filter).length);
    const expert = await expertFactSplits(annotationStoreOf(store), run.id).catch(() => new Map<string, string[]>());
    const split = await decomposeClaims(
      valid.map((i) => i.insight!),
      { mode: factSplit, judge: o.judge, expert, ctx: { runId: run.id }, concurrency: opts.concurrency },
    );
    atomic = { claims: split, facts: linkFacts(split, steps.map(stepTextOf), (c) => valid[c]!.stepIndex) };
    judged = atomic.facts.map((f) => f.text);
  }
  const cs = await scoreDdrChecklists(
    [{ entityId, checklist, insights: judged, report, runId: run.id }],
    o.judge,
    opts,
  );
  const queries = ddrState(await store.getExtraState(run.id)).queries;
  const totalFields = block.visible.database?.tables.reduce((s, t) => s + t.columns.length, 0) ?? 0;
  const exploration =
    totalFields > 0
      ? ddrExploration(
          queries.map((q) => q.columns),
          totalFields,
        )
      : null;
  let hallucination:
    | (Awaited<ReturnType<typeof scoreDdrHallucination>> & { unit: 'atomic fact'; unchecked: DdrUncheckedFact[] })
    | null = null;
  const hall = (o.options.hallucination as string | undefined) ?? 'on';
  if (hall !== 'off' && o.judge.id !== 'none') {
    // issue 42: one item per checkable atomic fact, with the steps relevant to it; filler is kept apart, not judged
    const valid = insights.filter((i) => i.insight && validInsights([i.insight], opts.no_insight_filter).length);
    const facts = ddrHallucinationItems(valid, steps);
    hallucination = {
      ...(await scoreDdrHallucination(
        facts.items.map((f) => ({ insight: f.insight, evidence: f.evidence, runId: run.id })),
        o.judge,
        opts.concurrency,
      )),
      unit: 'atomic fact',
      unchecked: facts.unchecked,
    };
  }
  const e = cs.perEntity[0]!;
  // a verdict per fact: the checklist items it supports or contradicts (indices of the judged list = fact indices)
  const atomicDetail = atomic
    ? {
        claims: atomic.claims.map((c) => ({
          index: c.index,
          text: c.text,
          source: c.source,
          facts: c.facts.length,
          ...(c.fallback ? { fallback: c.fallback } : {}),
        })),
        facts: atomic.facts.map((f) => ({
          ...f,
          supports: e.messageWise.items.filter((i) => i.supporting.includes(f.index)).map((i) => i.index),
          contradicts: e.messageWise.items.filter((i) => i.contradicting.includes(f.index)).map((i) => i.index),
        })),
      }
    : null;
  const pending = cs.messageWise.pending + cs.trajectoryWise.pending + (hallucination?.judgements.pending ?? 0);
  const unjudged = pending + cs.messageWise.errors + cs.trajectoryWise.errors + (hallucination?.judgements.errors ?? 0);
  return {
    ...scoreBase(run, 'ddr', o.judge.id, {
      ...opts,
      hallucination: hall,
      claims: claimsMode,
      ...(claimsMode === 'atomic' ? { fact_split: factSplit } : {}),
    }),
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
      ...(atomic ? { atomicFacts: atomic.facts.length } : {}),
    },
    detail: {
      checklist: cs,
      exploration,
      hallucination,
      entityId,
      insights: validInsights(judged, opts.no_insight_filter),
      claims: claimsMode,
      atomic: atomicDetail,
    },
    ...(Object.keys(cs.changedBy).length ? { changedBy: cs.changedBy } : {}),
  };
}

const avg = (xs: Array<number | null>) => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
};

/** Mean of the non-null values as DDR's `statistics.mean` (exact, rounded once); null when none (issue 47 item 12). */
const exactAvg = (xs: Array<number | null>) => {
  const v = xs.filter((x): x is number => x !== null);
  return v.length ? pyStatisticsMean(v) : null;
};

/**
 * DDR aggregates: per model, sample-averaged (mean over entities) and item-averaged (Σ correct / Σ judged)
 * accuracy, the top-k curve pooled over entities (`extra.topK`, DDR calculate_cumulative_message_stats); with a judge
 * and two or more models, Bradley–Terry novelty strengths and ranks (`novelty_seed`,
 * `novelty_ties`). Source: DDR `calculate_overall_stats`; DDR-Bench paper §4.3 (novelty).
 */
export async function aggregateDdr(
  groups: readonly ScoreGroup[],
  judge: Judge | undefined,
  options: OptionValues,
): Promise<ScoreAggregate[]> {
  const out = groups.map(({ model, scores }) => {
    const agg = aggregateBase('ddr', model, scores);
    const ok = scores.filter((s) => !s.error);
    const per = ok.map((s) => (s.detail as { checklist: DdrChecklistScore }).checklist);
    const m = per.flatMap((c) => c.perEntity.map((e) => e.messageWise)).filter((x) => x.included);
    const t = per.flatMap((c) => c.perEntity.map((e) => e.trajectoryWise)).filter((x) => x.included);
    const items = (xs: typeof m) => {
      const j = xs.reduce((s, x) => s + x.judged, 0);
      return j ? xs.reduce((s, x) => s + x.correct, 0) / j : null;
    };
    agg.metrics = {
      entities: ok.length,
      messageWiseSampleAveraged: exactAvg(m.map((x) => x.accuracy)),
      messageWiseItemAveraged: items(m),
      trajectoryWiseSampleAveraged: exactAvg(t.map((x) => x.accuracy)),
      trajectoryWiseItemAveraged: items(t),
      coverage: avg(ok.map((s) => s.summary.coverage ?? null)),
      normalizedEntropy: avg(ok.map((s) => s.summary.normalizedEntropy ?? null)),
      hallucinationRate: avg(ok.map((s) => s.summary.hallucinationRate ?? null)),
    };
    agg.method =
      'sample-averaged = mean over entities; item-averaged = Σ correct / Σ judged (DDR calculate_overall_stats)';
    agg.extra = {
      topK: ddrTopK(
        m.flatMap((x) => x.items),
        options.failed_judgements === 'count' ? 'count' : 'exclude',
      ),
    };
    return agg;
  });
  // novelty across models sharing entities
  const ddr = groups.flatMap((g) => g.scores).filter((s) => !s.error);
  if (judge && judge.id !== 'none' && new Set(ddr.map((s) => s.model)).size >= 2) {
    const inputs: DdrNoveltyInput[] = ddr.map((s) => {
      const d = s.detail as { checklist: DdrChecklistScore; entityId: string; insights: string[] };
      const used =
        d.checklist.perEntity[0]?.messageWise.items.flatMap((i) => [...i.supporting, ...i.contradicting]) ?? [];
      return { model: s.model, entityId: d.entityId, insights: d.insights, usedIndices: used };
    });
    const nov = await scoreDdrNovelty(inputs, judge, {
      seed: options.novelty_seed as number,
      ties: options.novelty_ties === 'ignore' ? 'ignore' : 'half',
    });
    for (const a of out) {
      a.metrics.noveltyStrength = nov.fit.strengths[a.model] ?? null;
      a.metrics.noveltyRank = nov.fit.ranking.indexOf(a.model) + 1 || null;
      a.extra = { ...(a.extra as object), novelty: nov };
    }
  }
  return out;
}
