/**
 * How BLADE's scores are shown: a Results-view table of every per-run metric, and per decision type the bootstrap
 * precision, coverage and F1 with 95% intervals from the model's aggregate (BLADE paper §4.2, Table 3).
 * Source: issue 12 (presentation behind the registry).
 */
import type { ScoreAggregate } from '../../eval/run-score.ts';
import type { BenchmarkPresentation, CategoryCiRow, IntervalEstimate } from '../types.ts';

const interval = (x: unknown): IntervalEstimate => {
  const o = (x ?? {}) as Record<string, number>;
  return { mean: o.mean ?? NaN, lo: o.lo ?? o.low ?? o.lower ?? NaN, hi: o.hi ?? o.high ?? o.upper ?? NaN };
};
const NONE: IntervalEstimate = { mean: NaN, lo: NaN, hi: NaN };

/** The bootstrap part of a BLADE aggregate (`aggregateBlade`'s `extra`). */
interface BladeBootstrap {
  bootstrap: { weightedF1: unknown; perType: Record<string, { precision: unknown; coverage: unknown; f1: unknown }> };
}

/**
 * Flattens BLADE aggregates into one row per model × decision type plus a `weighted` F1 row per model; aggregates
 * without a bootstrap are left out.
 * @param aggs BLADE aggregates (`extra` holds `bootstrap`). @returns rows with NaN for unknown intervals.
 */
export function bladeCiRows(aggs: ReadonlyArray<Pick<ScoreAggregate, 'model' | 'runIds' | 'extra'>>): CategoryCiRow[] {
  const rows: CategoryCiRow[] = [];
  for (const a of aggs) {
    const b = (a.extra as Partial<BladeBootstrap> | undefined)?.bootstrap;
    if (!b) continue;
    for (const [type, s] of Object.entries(b.perType)) {
      rows.push({
        model: a.model,
        type,
        precision: interval(s.precision),
        coverage: interval(s.coverage),
        f1: interval(s.f1),
        runIds: a.runIds,
      });
    }
    rows.push({
      model: a.model,
      type: 'weighted',
      precision: NONE,
      coverage: NONE,
      f1: interval(b.weightedF1),
      runIds: a.runIds,
    });
  }
  return rows;
}

export const BLADE_PRESENTATION: BenchmarkPresentation = {
  tableTitle: 'BLADE per run',
  mainMetric: { key: 'transformValuePrecision', label: 'BLADE transform precision (value)', percent: true },
  resultsColumns: null,
  tokenEfficiency: null,
  toolUsage: null,
  categoryCis: {
    heading: 'BLADE: precision, coverage and F1 per decision type',
    caption: 'BLADE per decision type: bootstrap mean [95% CI]',
    figureTitle: 'BLADE F1 by decision type',
    rows: bladeCiRows,
  },
  // BLADE scores a run's analysis as a whole (precision, coverage@k): no per-item verdicts
  itemOutcomes: null,
};

export const BLADE_MCQ_PRESENTATION: BenchmarkPresentation = {
  tableTitle: 'BLADE MCQ',
  mainMetric: { key: 'mcqAccuracy', label: 'BLADE MCQ accuracy', percent: true },
  resultsColumns: null,
  tokenEfficiency: null,
  toolUsage: null,
  categoryCis: null,
  itemOutcomes: null,
};
