/**
 * BLADE scoring of stored runs: the run's final `submit_analysis` against the dataset's ground-truth decisions
 * (conceptual variables, transforms by value and by graph, model), per run; and BLADE's bootstrap aggregate over
 * datasets (precision, coverage@k, F1). BLADE MCQ: accuracy over questions.
 * Source: BLADE paper §4 (metrics), `blade_bench` (`eval/metrics`, `llms/...`); spec §1.7; issues 8, 12.
 */
import type { RunStore } from '../../store/run-store.ts';
import type { RunRecord } from '../../store/records.ts';
import type { Block } from '../../suites/types.ts';
import {
  aggregateBase,
  meanSummaries,
  scoreBase,
  type GroundTruthUsed,
  type RunScore,
  type ScoreAggregate,
  type ScoringSession,
} from '../../eval/run-score.ts';
import type { Judge } from '../../eval/judges/types.ts';
import { LoupeInputError, errorMessage } from '../../util/errors.ts';
import { nullLogger, type Logger } from '../../util/log.ts';
import type { OptionValues } from '../options.ts';
import type { ScoreGroup } from '../types.ts';
import { bladeState } from './toolset.ts';
import { bladeMcqAccuracy, type BladeMcqState } from './mcq.ts';
import type { BladePython, ValueHashing } from './eval/python.ts';
import type { BladeGroundTruth } from './eval/score.ts';
import type { DataflowOptions } from './eval/dataflow.ts';
import type { BladeAggregateOptions } from './eval/metrics.ts';
import type { GtChoice } from './gt-versions.ts';

/** Shared state for BLADE scoring across runs: one Python driver, ground truth per dataset. */
interface BladeSession {
  python(): Promise<BladePython>;
  gt: Map<string, Promise<BladeGroundTruth>>;
}

/**
 * The BLADE resources of a scoring session (started lazily, closed with the session).
 * @param pythonPath interpreter (default: found by the BLADE driver).
 */
export function bladeSession(session: ScoringSession, pythonPath?: string): BladeSession {
  return session.resource(
    'blade',
    () => {
      let p: Promise<BladePython> | undefined;
      return {
        gt: new Map(),
        python() {
          if (!p) {
            p = import('./eval/python.ts').then((m) => m.startBladePython(pythonPath ? { python: pythonPath } : {}));
          }
          return p;
        },
        async close() {
          if (p) await (await p).close();
        },
      };
    },
    (s) => s.close(),
  );
}

/**
 * The transform data-flow switches of parsed BLADE scoring options (`whole_table_verbs`, `graph_hash_collisions`,
 * `unit_outputs`); absent options take the Loupe 0.1 behaviour. Source: spec §1.7 #9, #15; issue 21 item 9.
 */
export function bladeDataflowOptions(options: OptionValues): DataflowOptions {
  return {
    wholeTableVerbs: (options.whole_table_verbs ?? 'fixed') as 'fixed' | 'blade',
    graphHashCollisions: (options.graph_hash_collisions ?? 'keep-all') as 'keep-all' | 'keep-last',
    unitOutputs: (options.unit_outputs ?? 'all') as 'all' | 'one-per-input-set',
  };
}

/**
 * BLADE's aggregation options (`aggregateBlade`) from parsed scoring options (`failed_runs`, `coverage_key`,
 * `model_coverage_denominator`, `generation_failures`, `unweighted_formula`, `summation`, `f1_zero`, `k`, `samples`, `seed`).
 * Source: spec §1.4.8, §1.7; issue 21 items 5–7.
 */
export function bladeAggregateOptions(options: OptionValues): Partial<BladeAggregateOptions> {
  return {
    failedRuns: options.failed_runs as 'zero' | 'drop',
    coverageKey: options.coverage_key as 'id' | 'name',
    modelCoverageDenominator: options.model_coverage_denominator as 'code' | 'paper',
    generationFailures: (options.generation_failures ?? 'in-place') as 'append' | 'in-place',
    unweightedFormula: (options.unweighted_formula ?? 'paper') as 'code' | 'paper',
    summation: (options.summation ?? 'left-to-right') as 'numpy' | 'left-to-right',
    f1ZeroGuard: options.f1_zero !== 'nan',
    k: options.k as number,
    samples: options.samples as number,
    seed: options.seed as number,
  };
}

/**
 * Scores one BLADE run. A run whose scoring fails (no data, Python error) is returned with `error` and its
 * dataset, so the aggregate can score it 0 or drop it (`failed_runs`).
 * @param options parsed scoring options (`model_cvar_alternatives`, `model_cvar_check`, `failed_runs`, ...).
 * @throws LoupeInputError only for an invalid option value.
 */
export async function scoreBladeStoredRun(o: {
  store: RunStore;
  run: RunRecord;
  block: Block;
  judge: Judge;
  options: OptionValues;
  session: ScoringSession;
  log?: Logger;
  groundTruth?: GtChoice;
}): Promise<RunScore> {
  const { store, run, block, options } = o;
  const dataset = block.blade?.dataset ?? block.id;
  let used: GroundTruthUsed | undefined;
  try {
    const { parseBladeAnalysis, scoreBladeRun, groundTruthFrom } = await import('./eval/score.ts');
    const { semanticJudgeFrom } = await import('./eval/semantic.ts');
    const opts = {
      modelCvarAlternatives: options.model_cvar_alternatives as 'all-specs' | 'representative',
      modelCvarCheck: options.model_cvar_check as 'strict' | 'blade',
    };
    const dataPath = block.visible.data.find((f) => /data\.csv$/.test(f.path))?.path;
    if (!dataPath || !block.hidden.annotations) {
      throw new LoupeInputError(`block ${block.id}`, 'BLADE scoring needs data.csv and annotations');
    }
    const ctx = bladeSession(o.session);
    const valueHashing = (options.value_hashing ?? 'blade') as ValueHashing;
    const py = (await ctx.python()).withValueHashing(valueHashing);
    const { groundTruthFor } = await import('./gt-versions.ts');
    const picked = await groundTruthFor(
      store,
      dataset,
      block.hidden.annotations.file,
      block.hidden.annotations,
      o.groundTruth ?? 'latest',
    );
    used = picked.used;
    const dataflow = bladeDataflowOptions(options);
    const gtKey = `${dataset}\u0000${picked.used.hash}\u0000${dataflow.wholeTableVerbs}\u0000${dataflow.graphHashCollisions}\u0000${dataflow.unitOutputs}\u0000${valueHashing}`;
    let gtP = ctx.gt.get(gtKey);
    if (!gtP) {
      gtP = groundTruthFrom(
        {
          dataset,
          dataPath,
          annotations: picked.annotations,
          researchQuestion: block.visible.researchQuestions?.[0] ?? '',
        },
        py,
        { dataflow, log: o.log ?? nullLogger },
      );
      ctx.gt.set(gtKey, gtP);
    }
    const gt = await gtP;
    const final = bladeState(await store.getExtraState(run.id)).final;
    const input = final
      ? { runId: run.id, analysis: parseBladeAnalysis(final, `run ${run.id}`) }
      : { runId: run.id, generationFailed: 'no valid submit_analysis' };
    const s = await scoreBladeRun(input, gt, {
      python: py,
      judge: semanticJudgeFrom(o.judge, { runId: run.id, dataset }),
      ...opts,
      log: o.log ?? nullLogger,
    });
    const m = s.metrics;
    return {
      ...scoreBase(run, 'blade', o.judge.id, {
        model_cvar_alternatives: s.options.modelCvarAlternatives,
        model_cvar_check: s.options.modelCvarCheck,
        dataflow: s.options.dataflow,
        cvar_matching: s.options.cvarMatching,
        model_extraction: s.options.modelExtraction,
        failed_runs: options.failed_runs,
        value_hashing: valueHashing,
      }),
      pending: s.judges.pending ?? 0,
      unjudged: (s.judges.pending ?? 0) + (s.judges.errors ?? 0),
      summary: {
        cvarPrecision: m.cvar.precision,
        modelPrecision: m.model.precision,
        transformValuePrecision: m.transformValue.precision,
        transformGraphPrecision: m.transformGraph.precision,
      },
      detail: { score: s, gtCounts: gt.counts, dataset },
      ...(used ? { groundTruth: used } : {}),
    };
  } catch (e) {
    if (e instanceof LoupeInputError && /^(option |ground-truth version)/.test(e.subject)) throw e;
    // a failed run still belongs to its dataset: the aggregate scores it 0 or drops it (option failed_runs)
    return { ...scoreBase(run, 'blade', o.judge.id, {}), summary: {}, detail: { dataset }, error: errorMessage(e) };
  }
}

/**
 * BLADE aggregate per model: per-run precisions averaged, plus BLADE's bootstrap aggregate over datasets
 * (weighted F1 with its interval; the whole result in `extra`).
 * @param options parsed options (`failed_runs`, `coverage_key`, `model_coverage_denominator`, `k`, `samples`, `seed`).
 */
export async function aggregateBladeGroups(
  groups: readonly ScoreGroup[],
  options: OptionValues,
): Promise<ScoreAggregate[]> {
  const out: ScoreAggregate[] = [];
  for (const { model, scores: g } of groups) {
    const agg = aggregateBase('blade', model, g);
    const ok = g.filter((s) => !s.error);
    agg.metrics = meanSummaries(ok);
    agg.options = { failed_runs: options.failed_runs };
    if (ok.length) {
      try {
        const { aggregateBlade, zeroRun } = await import('./eval/metrics.ts');
        const byDs = new Map<
          string,
          {
            dataset: string;
            gt: import('./eval/metrics.ts').BladeGtCounts;
            runs: import('./eval/metrics.ts').BladeRunMetrics[];
          }
        >();
        for (const s of ok) {
          const d = s.detail as {
            score: import('./eval/metrics.ts').BladeRunMetrics;
            gtCounts: import('./eval/metrics.ts').BladeGtCounts;
            dataset: string;
          };
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
        const a = aggregateBlade([...byDs.values()], bladeAggregateOptions(options));
        agg.extra = a;
        agg.metrics.weightedF1 = a.bootstrap.weightedF1.mean;
        agg.metrics.weightedF1Lo = a.bootstrap.weightedF1.lo;
        agg.metrics.weightedF1Hi = a.bootstrap.weightedF1.hi;
        if (unplaced.length) {
          a.warnings.push(
            `failed runs left out (their dataset has no scored run to take GT denominators from): ${unplaced.join(', ')}`,
          );
        }
        agg.options = { failed_runs: a.options.failedRuns }; // every aggregation option is in extra.options
        agg.metrics.unweightedF1 = a.point.unweightedF1;
        if (Object.keys(a.changedBy).length) agg.changedBy = a.changedBy;
        agg.method = `BLADE aggregateBlade (bootstrap) over datasets; failed_runs=${a.options.failedRuns}: runs whose scoring failed are ${a.options.failedRuns === 'zero' ? 'scored 0 and counted' : 'dropped'}, runs without a submission are padded as 0 either way`;
      } catch (e) {
        agg.extra = { error: errorMessage(e) };
      }
    }
    out.push(agg);
  }
  return out;
}

/**
 * Scores one BLADE MCQ run: accuracy over its questions, per family (conceptual variable / transform); an
 * unparsed reply counts as wrong. Source: BLADE paper §4.1 (Task 1).
 */
export async function scoreBladeMcqRun(
  store: RunStore,
  run: RunRecord,
  block: Block,
  parsing: 'strict' | 'blade' = 'strict',
): Promise<RunScore> {
  const st = (await store.getExtraState(run.id)).bladeMcq as BladeMcqState | undefined;
  const recorded = st?.answers ?? [];
  let reparsed = 0;
  let answers = recorded;
  if (parsing === 'blade') {
    // issue 21 item 11: re-read each reply as blade_bench does; count the answers whose letter that changed
    const { parseMcqAnswer } = await import('./eval/metrics.ts');
    const nOpts = new Map(block.items.filter((i) => i.type === 'blade-mcq').map((i) => [i.id, i.options.length]));
    answers = recorded.map((a) => {
      const letter = parseMcqAnswer(a.raw, nOpts.get(a.itemId) ?? 4, 'blade');
      if (letter !== a.answer) reparsed++;
      return { ...a, answer: letter };
    });
  }
  const all = bladeMcqAccuracy(block, answers);
  const fam = new Map(block.items.filter((i) => i.type === 'blade-mcq').map((i) => [i.id, i.family]));
  const part = (f: 'cvar' | 'transform') =>
    bladeMcqAccuracy(
      block,
      answers.filter((a) => fam.get(a.itemId) === f),
    );
  const t = part('transform');
  const c = part('cvar');
  return {
    ...scoreBase(run, 'blade-mcq', 'none', { mcq_parsing: parsing, unparsed: 'wrong' }),
    ...(reparsed ? { changedBy: { mcq_parsing: reparsed } } : {}),
    summary: {
      mcqAccuracy: all.accuracy,
      correct: all.correct,
      total: all.total,
      unparsed: answers.filter((a) => a.answer === null).length,
      transformAccuracy: t.total ? t.accuracy : null,
      cvarAccuracy: c.total ? c.accuracy : null,
    },
    detail: { answers },
  };
}

/** BLADE MCQ aggregate per model: pooled over questions (unparsed answers count as wrong). */
export function aggregateBladeMcq(groups: readonly ScoreGroup[]): ScoreAggregate[] {
  return groups.map(({ model, scores }) => {
    const agg = aggregateBase('blade-mcq', model, scores);
    const ok = scores.filter((s) => !s.error);
    const sum = (k: string) => ok.reduce((s, x) => s + (x.summary[k] ?? 0), 0);
    agg.metrics = {
      mcqAccuracy: sum('total') ? sum('correct') / sum('total') : null,
      correct: sum('correct'),
      total: sum('total'),
      unparsed: sum('unparsed'),
    };
    agg.method = 'pooled over questions (unparsed answers count as wrong)';
    return agg;
  });
}
