/**
 * Protocol of the Results panel: scores per model × block, LongDA match vs tokens (LongDA Figure 4), tool-usage
 * heatmaps (LongDA Figure 8) and BLADE precision / coverage / F1 with bootstrap CIs per decision type.
 * Every number carries the ids of the runs behind it; clicking it sends {@link OpenRunsRequest} and the host
 * runs the command `loupe.openRun` (one run) or lets the user pick among several.
 */
import { IpcRequest } from './ipc.ts';

/** One number with where it came from. */
export interface MetricCell {
  /** The value in the column's unit (fractions in [0, 1] for `percent` columns); null = not computable. */
  value: number | null;
  /** 95% confidence interval, same unit as `value`. */
  ci?: [number, number];
  /** How many items the value averages over (queries, runs, decisions). */
  n?: number;
  /** Runs behind the number (never empty for a real value). */
  runIds: string[];
  /** Items still waiting for a (human) judge. */
  pending?: number;
  /** Spread of the per-run values across the repeats behind the number (issue 22), when there are several runs. */
  spread?: Spread;
}

/** `percent`: fraction shown as %; `fraction`: a value in [0, 1] with 2 decimals (precision, F1). */
export type MetricFormat = 'percent' | 'fraction' | 'number' | 'integer' | 'tokens' | 'seconds';

export interface MetricColumn {
  key: string;
  label: string;
  format: MetricFormat;
  /** Tooltip: definition, which judge, which option. */
  description?: string;
}

export interface MetricsRow {
  model: string;
  /** Block id, or `*` for the model's aggregate over all blocks. */
  block: string;
  blockTitle?: string;
  cells: Record<string, MetricCell>;
  /**
   * The runs the row rests on (issue 42): every figure of the row is computed over `scored` (the runs with a stored
   * score; all of `total` when none has one); `unscored` are left out and named.
   */
  runs?: { total: number; scored: string[]; unscored: string[] };
}

/** A table of metrics for one suite: rows model × block, columns metrics. */
export interface MetricsTable {
  id: string;
  title: string;
  suite: string;
  columns: MetricColumn[];
  rows: MetricsRow[];
  /** Options used to compute it (e.g. `tolerance=0.05`, `list_scoring=partial`). */
  options?: Record<string, string | number | boolean>;
  note?: string;
}

/** LongDA Figure 4: one point per model (or per run): match rate vs total tokens. */
export interface ScatterPoint {
  model: string;
  /** Input + output tokens summed over the runs. */
  totalTokens: number;
  /** Match rate as a fraction in [0, 1]. */
  match: number;
  blocks: number;
  runIds: string[];
}

/** LongDA Figure 8: tool × bin shares for one model (columns sum to 1). */
export interface ToolHeatmapView {
  model: string;
  /**
   * `paper`: the tool list of the benchmark's paper figure (LongDA Figure 8, helpers counted inside code); `own`: the
   * tools the runs actually called (issue 22). Absent: `paper`.
   */
  view?: 'paper' | 'own';
  /** The benchmark (table title) the runs belong to. */
  benchmark?: string;
  tools: string[];
  bins: number;
  /** `matrix[tool][bin]`, column-normalised. */
  matrix: number[][];
  /** Raw counts, same shape. */
  counts: number[][];
  nTrajectories: number;
  runIds: string[];
}

/** BLADE: precision / coverage@k / F1 for one model and decision type, with bootstrap CIs. */
export interface BladeDecisionRow {
  model: string;
  /** `transform`, `cvar`, `model`, ... or `weighted` for the decision-type-weighted F1. */
  decisionType: string;
  precision: MetricCell;
  coverage: MetricCell;
  f1: MetricCell;
}

/**
 * The spread of a value across repeats (issue 22): min–max and every point below 5 repeats (`points`); from 5 on the
 * mean with a bootstrap 95% CI (`ci`). `n` repeats; same unit as the value.
 */
export interface Spread {
  kind: 'points' | 'ci';
  n: number;
  mean: number;
  min: number;
  max: number;
  points: number[];
  /** `ci` only: the 95% interval of the mean. */
  lo?: number;
  hi?: number;
}

/** One repeat's answer to a question. */
export interface RepeatAnswer {
  runId: string;
  model: string;
  /** The run's profile (agent + model + behaviour parameters: the Bradley–Terry player), as shown. */
  profile: string;
  /** 1-based repeat number within its profile on this block. */
  repeat: number;
  verdict: 'right' | 'wrong' | 'partial' | 'unanswered' | 'pending';
  credit: number | null;
  given: string;
  /** 0-based step that recorded the answer (link target), when there is one. */
  stepIndex?: number;
}

/** The per-question drill-down of one block (issue 22). */
export interface QuestionDrilldown {
  suite: string;
  blockId: string;
  runIds: string[];
  /**
   * Per question: its text as the agent was asked it; every repeat; the spread of credit per run profile (never
   * pooled across profiles, issue 42), with the runs each rests on; `spread` the spread when there is one profile,
   * else null.
   */
  questions: Array<{
    ref: string;
    question: string;
    expected: string;
    repeats: RepeatAnswer[];
    spread: Spread | null;
    profiles: Array<{ player: string; label: string; runIds: string[]; spread: Spread | null }>;
  }>;
}

export interface ResultsState {
  /** Where the runs came from (store file). */
  source: string;
  generatedAt: string;
  tables: MetricsTable[];
  scatter: ScatterPoint[];
  heatmaps: ToolHeatmapView[];
  blade: BladeDecisionRow[];
  /** Heading of the per-category section (the benchmark's `presentation.categoryCis.heading`), when there are rows. */
  categoryHeading?: string;
  /** BLADE options (k for coverage@k, bootstrap samples, seed). */
  bladeOptions?: Record<string, string | number | boolean>;
  /** Judgements still pending across all scores. */
  pendingJudgements: number;
  /** The experiment the results are scoped to, as a caption (`experiment ablation-A (3 runs)`; issue 43); absent: every run. */
  experiment?: string;
  /** Shown instead of content when there is nothing to show (no store, no scored runs). */
  message?: string;
  /** Per-question drill-down of the blocks whose benchmark scores items (issue 22). */
  drilldown?: QuestionDrilldown[];
  /** Expert failure analysis (issue 19): the Fig. 8-form chart (Vega-Lite) of resolved failure cases, if any. */
  failures?: { fig8: Record<string, unknown>; cases: number; resolved: number };
}

export const RefreshResultsRequest = new IpcRequest<Record<string, never>, ResultsState>('results/refresh');
/** Opens a run's timeline at a step (drill-down → step link). */
export const OpenStepRequest = new IpcRequest<{ runId: string; stepIndex: number }, void>('results/openStep');
/** Opens the runs behind a number (label says which number, for the pick list). */
export const OpenRunsRequest = new IpcRequest<{ runIds: string[]; label: string }, void>('results/openRuns');
