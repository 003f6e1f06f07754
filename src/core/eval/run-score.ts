/**
 * The uniform score of one stored run and the aggregate of a (benchmark, model) group, whatever the
 * benchmark; plus the scoring session that benchmarks share resources through. Produced by each
 * benchmark's scorer (src/core/benchmarks/<name>/), read by `loupe score`, `loupe report`, the Results view.
 * Source: issue 8 "CLI and UI"; issue 12 (one definition per benchmark).
 */
import type { RunRecord } from '../store/records.ts';
import type { DecisionCounts } from './judges/judge.ts';

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
  /** Options used, by the name the user types (the benchmark's complete option set, defaults included). */
  options: Record<string, unknown>;
  /**
   * The tool-set options the run was made with (its recorded `params.toolSetOptions`, the benchmark's defaults filled
   * in): which tools and retrieval the agent had, e.g. LongDA `findVariables`, `findVariablesDecompose`. Absent for a
   * benchmark without tool-set options.
   */
  toolOptions?: Record<string, unknown>;
  /**
   * The scoring preset the options were resolved from (`official`, `paper`; issue 21); absent on a score made before
   * presets existed — read it with {@link presetOf}, which says `legacy` then.
   */
  preset?: string;
  /**
   * Items whose result an option reproducing a bug of the official code changed, by option name (e.g. DDR
   * `unparsed_reply`: verdicts the official substring fallback flipped). Absent or 0 when none did.
   */
  changedBy?: Record<string, number>;
  /** Headline metrics: fractions in [0, 1] for rates; percentages only where the name says `Percent`. */
  summary: Record<string, number | null>;
  /** Judgements still pending (human) or failed: the score is partial while > 0. */
  pending: number;
  unjudged: number;
  /** Who decided the judgements of this score (experts, the LLM, identical-text shortcuts) and how many wait. */
  decided?: DecisionCounts;
  /** The checklist the run was scored against (benchmarks with checklists): the suite's own, or an authored version. */
  checklist?: ChecklistUsed;
  /** The ground truth the run was scored against (benchmarks with versioned ground truth: BLADE). */
  groundTruth?: GroundTruthUsed;
  detail: unknown;
  error?: string;
  /**
   * Human help the run had (issue 20): its interventions, its fork point, the label its scores are kept apart under,
   * and — for benchmarks that define it (LongDA) — after how many interventions the block was solved (null: never).
   * Absent for runs scored before issue 20 (treated as unassisted unless the store says otherwise).
   */
  assistance?: ScoreAssistance;
}

/** See {@link RunScore.assistance}. */
export interface ScoreAssistance {
  interventions: number;
  /** An analyst ran code in the agent's kernel while it was running (also counts as assisted). */
  analystCode?: boolean;
  forkOf?: { runId: string; step: number };
  /** `assisted`, `fork` or `assisted fork`; absent for an unassisted run. */
  label?: 'assisted' | 'fork' | 'assisted fork';
  /** Interventions before the block counted as solved (LongDA: every answer within tolerance); null when never. */
  untilSolved?: number | null;
}

/** Which ground truth a score used (BLADE, issue 17). */
export interface GroundTruthUsed {
  /** `shipped`: the dataset's own file (version 0); `authored`: a version saved in Loupe. */
  source: 'shipped' | 'authored';
  version: number;
  /** sha256 of the ground-truth file text. */
  hash: string;
  /** Specs of each kind in that version. */
  specs: { conceptualVars: number; transforms: number; models: number };
}

/** Which checklist a score used. */
export interface ChecklistUsed {
  /** `native`: the suite's file; `authored`: a version written in Loupe. */
  source: 'native' | 'authored';
  /** The authored version (absent for native). */
  version?: number;
  /** The authored version's content hash, or for native items the same hash of their content (`checklistHash`). */
  hash: string;
  /** Items scored (retired items excluded). */
  items: number;
}

/** Aggregate of one (benchmark, model) group. */
export interface ScoreAggregate {
  benchmark: string;
  model: string;
  runs: number;
  runIds: string[];
  failed: number;
  pending: number;
  /** Per benchmark: pooled, averaged or bootstrapped as `method` says. */
  metrics: Record<string, number | null>;
  /** How `metrics` were combined. */
  method: string;
  /** Aggregation options in effect (BLADE: `failed_runs`). */
  options?: Record<string, unknown>;
  /** The scoring preset of the aggregation options (issue 21). */
  preset?: string;
  /** Items an official-bug option changed in the aggregate (BLADE: generation failures moved to the end), by option. */
  changedBy?: Record<string, number>;
  extra?: unknown;
  /** The group's assistance label (issue 20): assisted and forked runs are aggregated apart from unassisted ones. */
  assistance?: 'assisted' | 'fork' | 'assisted fork';
}

/**
 * Resources shared by the runs scored together (a Python driver, ground truth per dataset), created on first
 * use and closed once at the end.
 */
export interface ScoringSession {
  /** The resource under `key`, made by `make` on first use; `close` is called by {@link ScoringSession.close}. */
  resource<T>(key: string, make: () => T, close?: (value: T) => Promise<void> | void): T;
  close(): Promise<void>;
}

/**
 * A scoring session: resources by key, closed in reverse order of creation.
 * @returns the session; call `close()` when the scoring is done (errors of one close do not stop the others).
 */
export function scoringSession(): ScoringSession {
  const items = new Map<string, { value: unknown; close?: (v: unknown) => Promise<void> | void }>();
  return {
    resource<T>(key: string, make: () => T, close?: (value: T) => Promise<void> | void): T {
      let e = items.get(key);
      if (!e) {
        items.set(
          key,
          (e = { value: make(), ...(close ? { close: close as (v: unknown) => Promise<void> | void } : {}) }),
        );
      }
      return e.value as T;
    },
    async close() {
      for (const e of [...items.values()].reverse()) {
        try {
          await e.close?.(e.value);
        } catch {
          /* a resource that fails to close must not keep the others open */
        }
      }
      items.clear();
    },
  };
}

/** The model a run is grouped under: its model, else its agent (`reference`). */
export const modelOf = (r: RunRecord): string => r.model ?? r.agent;

/**
 * The fields of a {@link RunScore} every benchmark fills the same way.
 * @param benchmark the benchmark kind; `judgeId` the judge's id; `options` the options used.
 */
export function scoreBase(
  run: RunRecord,
  benchmark: string,
  judgeId: string,
  options: Record<string, unknown>,
): Omit<RunScore, 'summary' | 'detail'> {
  return {
    runId: run.id,
    suite: run.suite,
    blockId: run.blockId,
    model: modelOf(run),
    agent: run.agent,
    status: run.status,
    benchmark,
    judgeId,
    options,
    pending: 0,
    unjudged: 0,
  };
}

/**
 * The skeleton aggregate of a group: counts, run ids, pending, no metrics yet.
 * @param benchmark kind; `model` the group's model; `scores` its runs.
 */
export function aggregateBase(benchmark: string, model: string, scores: readonly RunScore[]): ScoreAggregate {
  return {
    benchmark,
    model,
    runs: scores.length,
    runIds: scores.map((s) => s.runId),
    failed: scores.filter((s) => s.error).length,
    pending: scores.reduce((n, s) => n + s.pending, 0),
    metrics: {},
    method: 'mean over runs',
  };
}

/**
 * Means of every numeric summary metric over the runs that scored (nulls skipped; a metric no run has is null).
 * @returns metrics by name.
 */
export function meanSummaries(scores: readonly RunScore[]): Record<string, number | null> {
  const ok = scores.filter((s) => !s.error);
  const out: Record<string, number | null> = {};
  for (const key of new Set(ok.flatMap((s) => Object.keys(s.summary)))) {
    const v = ok.map((s) => s.summary[key]).filter((x): x is number => typeof x === 'number');
    out[key] = v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;
  }
  return out;
}

/**
 * The preset a score was made with: its `preset`, else `preset` among its stored options, else `legacy` (a score
 * stored before presets existed, issue 21; re-score it to get one).
 * @param s a run score or a stored score row's `options`.
 */
export function presetOf(s: { preset?: string; options?: Record<string, unknown> } | null | undefined): string {
  if (s?.preset) return s.preset;
  const p = s?.options?.preset;
  return typeof p === 'string' && p ? p : 'legacy';
}

/**
 * Adds `n` to `changedBy[option]` of a score (nothing when `n` is 0).
 * @returns the same object, for chaining.
 */
export function countChanged<T extends { changedBy?: Record<string, number> }>(s: T, option: string, n: number): T {
  if (n > 0) s.changedBy = { ...s.changedBy, [option]: (s.changedBy?.[option] ?? 0) + n };
  return s;
}
