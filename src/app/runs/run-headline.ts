/**
 * Each run's headline metric for run listings (the Runs view, issue 22): the benchmark's `presentation.mainMetric`
 * from the run's newest stored score, or — for a judge-free benchmark — scored now; never by the benchmark's name.
 */
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import type { BenchmarkDefinition } from '../../core/benchmarks/types.ts';
import { createJudge } from '../../core/eval/judges/factory.ts';
import { judgementStoreOf } from '../../core/eval/store.ts';
import { saveRunScore, scoreStoredRun } from '../../core/runs/score-stored-run.ts';
import type { RunRecord, StoredScore } from '../../core/store/records.ts';
import type { RunStore } from '../../core/store/types.ts';
import type { Suite } from '../../core/suites/types.ts';

/** A run's headline metric as a listing shows it. */
export interface RunHeadline {
  /** `LongDA match 66.7%`, `not scored`, `scoring failed`. */
  text: string;
  /** The value alone (`66.7%`), for narrow places; '' when there is none. */
  short: string;
  /** The value in the metric's unit (a fraction for percent metrics), null when there is none. */
  value: number | null;
  /** Where it came from: `stored score of <ISO time>`, `scored live`, or why there is none. */
  source: string;
  /** Judgements still pending in the score (the value is partial while > 0). */
  pending: number;
}

/**
 * Formats a run's headline metric from a score summary.
 * @param def the run's benchmark (undefined: unknown to this Loupe); `summary` the score's summary metrics.
 * @returns the headline, or null when the benchmark has no headline metric.
 */
export function headlineFrom(
  def: BenchmarkDefinition | undefined,
  summary: Record<string, unknown>,
  source: string,
  pending = 0,
): RunHeadline | null {
  const m = def?.presentation.mainMetric;
  if (!m) return null;
  const v = summary[m.key];
  const value = typeof v === 'number' && Number.isFinite(v) ? v : null;
  const shown = value === null ? '—' : m.percent ? `${(value * 100).toFixed(1)}%` : `${Number(value.toFixed(2))}`;
  return {
    text: `${m.label} ${shown}${pending ? ` (${pending} pending)` : ''}`,
    short: value === null ? '' : shown,
    value,
    source,
    pending,
  };
}

/**
 * Headline metrics of runs: from each run's newest stored score; runs without one are scored now when their benchmark
 * needs no judge and the run has ended (`live`) and that score is saved (`saveRunScore`, as `loupe score` does: the
 * Results view and the report then rest on the same score, issue 42; a store that refuses the write keeps it unsaved,
 * said in `source`), else `not scored`.
 * @param runs the runs listed; `o.suites` a suite cache kept across calls; `o.live` false to never score here (a live
 *   score reads the run's files from the store's copy only, never a recorded workspace: issue 36).
 * @returns run id → headline (runs whose benchmark has no headline metric are left out).
 */
export async function runHeadlines(
  store: RunStore,
  runs: readonly RunRecord[],
  o: { suites?: Map<string, Promise<Suite>>; live?: boolean } = {},
): Promise<Map<string, RunHeadline>> {
  const out = new Map<string, RunHeadline>();
  // a store never scored has no scores table
  const stored: StoredScore[] = await store.scores.list().catch(() => []);
  const newest = new Map<string, StoredScore>();
  for (const s of stored) if (!newest.has(s.runId)) newest.set(s.runId, s);
  for (const r of runs) {
    const def = findBenchmark(r.suite);
    if (!def?.presentation.mainMetric) continue;
    const s = newest.get(r.id);
    if (s) {
      const h = headlineFrom(def, s.summary, `stored score of ${s.scoredAt}`, s.pending);
      if (h) out.set(r.id, h);
      continue;
    }
    if (o.live !== false && def.judgeFree && r.status !== 'running' && r.status !== 'pending' && r.steps > 0) {
      const sc = await scoreStoredRun(store, r.id, {
        judge: createJudge({ kind: 'none' }, judgementStoreOf(store)),
        runsRoot: null,
        ...(o.suites ? { suites: o.suites } : {}),
      }).catch((e: unknown) => ({ error: e instanceof Error ? e.message : String(e), summary: {}, pending: 0 }));
      if (sc.error) out.set(r.id, { text: 'scoring failed', short: '', value: null, source: sc.error, pending: 0 });
      else {
        // Saved like `loupe score` saves it, so Results and the report show the same number for this run (issue 42);
        // a store this user may not write (a team store's annotator) keeps it shown here only, and says so.
        const saved =
          'runId' in sc
            ? await saveRunScore(store, sc).then(
                () => '',
                (e: unknown) => (e instanceof Error ? e.message : String(e)),
              )
            : 'no score';
        const h = headlineFrom(
          def,
          sc.summary,
          saved ? `scored live (not saved: ${saved})` : "scored live, saved with the run's scores",
          sc.pending,
        );
        if (h) out.set(r.id, h);
      }
      continue;
    }
    out.set(r.id, {
      text: 'not scored',
      short: '',
      value: null,
      source: def.judgeFree ? 'the run has not ended' : 'this benchmark needs a judge: score the run to see its metric',
      pending: 0,
    });
  }
  return out;
}
