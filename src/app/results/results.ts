/**
 * Data shaping for results views and reports: metrics per model × block, LongDA match vs total
 * tokens (LongDA Figure 4, with its log fit), tool-usage heatmap matrices per model (Figure 8),
 * BLADE precision / coverage / F1 rows with CIs, and Vega-Lite specs for all of them. Every cell
 * carries the run ids behind it so a view can link each number to its runs.
 * Source: issue 8 "Results webview"; spec §2.4 "Other figure procedures", §2.5.
 */
import type { CategoryCiRow, ToolHeatmap } from '../../core/benchmarks/types.ts';

/** One scored run, flattened for tables. */
export interface ScoredRunRow {
  runId: string;
  suite: string;
  blockId: string;
  /** Model name (`agent` when the run has no model, e.g. the reference agent). */
  model: string;
  /** Headline metrics of the run (fractions in [0, 1] for rates). */
  metrics: Record<string, number | null>;
  /** Tokens and wall time of the run. */
  tokens?: { input: number; output: number };
  durationMs?: number;
}

/** A model × block table of one metric. */
export interface ModelBlockTable {
  metric: string;
  models: string[];
  blocks: string[];
  /** Mean over the runs of a (model, block) pair (repeats), with the runs behind it. */
  cells: Array<{ model: string; block: string; value: number | null; n: number; runIds: string[] }>;
  /** Per model: mean over its cells. */
  modelMeans: Array<{ model: string; value: number | null; runIds: string[] }>;
}

const mean = (xs: number[]): number | null => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null);

/**
 * Builds the model × block table of one metric.
 * @param rows scored runs; `metric` a key of `metrics`.
 * @returns sorted models and blocks, cells with run ids; null values are ignored in means.
 */
export function metricsByModelBlock(rows: readonly ScoredRunRow[], metric: string): ModelBlockTable {
  const models = [...new Set(rows.map((r) => r.model))].sort();
  const blocks = [...new Set(rows.map((r) => r.blockId))].sort();
  const groups = new Map<string, ScoredRunRow[]>();
  for (const r of rows) {
    const k = `${r.model}\u0000${r.blockId}`;
    let g = groups.get(k);
    if (!g) groups.set(k, (g = []));
    g.push(r);
  }
  const cells: ModelBlockTable['cells'] = [];
  for (const m of models) {
    for (const b of blocks) {
      const g = groups.get(`${m}\u0000${b}`);
      if (!g) continue;
      const vals = g.map((r) => r.metrics[metric]).filter((v): v is number => typeof v === 'number');
      cells.push({ model: m, block: b, value: mean(vals), n: vals.length, runIds: g.map((r) => r.runId) });
    }
  }
  const modelMeans = models.map((m) => {
    const cs = cells.filter((c) => c.model === m);
    return {
      model: m,
      value: mean(cs.map((c) => c.value).filter((v): v is number => v !== null)),
      runIds: cs.flatMap((c) => c.runIds),
    };
  });
  return { metric, models, blocks, cells, modelMeans };
}

/** A LongDA point: one model's pooled match against its total tokens. */
export interface MatchTokensPoint {
  model: string;
  /** Σ input + output tokens over the model's runs. */
  totalTokens: number;
  /** Pooled match (Σ match / Σ queries), fraction. */
  match: number;
  coverage: number;
  queries: number;
  runIds: string[];
}

/**
 * LongDA Figure 4 data: per model, pooled match vs total tokens, and the fit y = a·ln(x) + b over
 * the models not excluded (LongDA's script excluded GPT-5-High, GPT-5 and GLM-4.7).
 * @param runs per run: model, tokens, match sum and query count (`match·n`), coverage sum.
 * @param exclude model names left out of the fit (still plotted).
 * @returns points and the fit (null with fewer than two distinct token totals).
 */
export function longdaMatchVsTokens(
  runs: ReadonlyArray<{
    runId: string;
    model: string;
    inputTokens: number;
    outputTokens: number;
    matchSum: number;
    coverageSum: number;
    queries: number;
  }>,
  exclude: readonly string[] = [],
): { points: MatchTokensPoint[]; fit: { a: number; b: number; r2: number; models: string[] } | null } {
  const by = new Map<string, MatchTokensPoint & { m: number; c: number }>();
  for (const r of runs) {
    let p = by.get(r.model);
    if (!p) {
      by.set(
        r.model,
        (p = { model: r.model, totalTokens: 0, match: 0, coverage: 0, queries: 0, runIds: [], m: 0, c: 0 }),
      );
    }
    p.totalTokens += r.inputTokens + r.outputTokens;
    p.m += r.matchSum;
    p.c += r.coverageSum;
    p.queries += r.queries;
    p.runIds.push(r.runId);
  }
  const points = [...by.values()]
    .map(({ m, c, ...p }) => ({ ...p, match: p.queries ? m / p.queries : 0, coverage: p.queries ? c / p.queries : 0 }))
    .sort((a, b) => a.model.localeCompare(b.model));
  const used = points.filter((p) => !exclude.includes(p.model) && p.totalTokens > 0);
  const xs = used.map((p) => Math.log(p.totalTokens));
  const ys = used.map((p) => p.match);
  if (new Set(xs).size < 2) return { points, fit: null };
  const mx = mean(xs)!;
  const my = mean(ys)!;
  let sxy = 0,
    sxx = 0,
    syy = 0;
  xs.forEach((x, i) => {
    sxy += (x - mx) * (ys[i]! - my);
    sxx += (x - mx) ** 2;
    syy += (ys[i]! - my) ** 2;
  });
  const a = sxy / sxx;
  const b = my - a * mx;
  const r2 = syy ? (sxy * sxy) / (sxx * syy) : 1;
  return { points, fit: { a, b, r2, models: used.map((p) => p.model) } };
}

/**
 * Tool-usage heatmaps per model (LongDA Figure 8) from each run's step-wise tool names.
 * @param runs per run: model and its steps' tool names (one entry per step); `heatmap` the benchmark's heatmap builder
 *   (`BenchmarkPresentation.toolUsage.heatmap`); `opts` its tools and bins.
 * @returns model → heatmap (with run ids).
 */
export function heatmapsByModel(
  runs: ReadonlyArray<{ runId: string; model: string; steps: ReadonlyArray<readonly string[]> }>,
  heatmap: (
    trajectories: ReadonlyArray<ReadonlyArray<readonly string[]>>,
    opts: { tools?: readonly string[]; bins?: number },
  ) => ToolHeatmap,
  opts: { tools?: readonly string[]; bins?: number } = {},
): Array<{ model: string; heatmap: ToolHeatmap; runIds: string[] }> {
  const by = new Map<string, { steps: Array<ReadonlyArray<readonly string[]>>; runIds: string[] }>();
  for (const r of runs) {
    let g = by.get(r.model);
    if (!g) by.set(r.model, (g = { steps: [], runIds: [] }));
    g.steps.push(r.steps);
    g.runIds.push(r.runId);
  }
  return [...by.entries()]
    .sort((a, b) => a[0].localeCompare(b[0]))
    .map(([model, g]) => ({ model, heatmap: heatmap(g.steps, opts), runIds: g.runIds }));
}

/** A per-category row with bootstrap CIs (BLADE decision types): see `BenchmarkPresentation.categoryCis`. */
export type BladeCiRow = CategoryCiRow;

// ------------------------------------------------------------------ Vega-Lite specs

/** A Vega-Lite spec (JSON). */
export type VegaLiteSpec = Record<string, unknown>;

/**
 * Scatter of match vs total tokens (log x) with the log fit as a line.
 * @param data from {@link longdaMatchVsTokens}. @returns a Vega-Lite spec with inline data.
 */
export function matchVsTokensSpec(data: ReturnType<typeof longdaMatchVsTokens>): VegaLiteSpec {
  const values = data.points.map((p) => ({
    model: p.model,
    tokensM: p.totalTokens / 1e6,
    match: p.match * 100,
    runs: p.runIds.join(', '),
  }));
  const layers: VegaLiteSpec[] = [
    {
      mark: { type: 'point', filled: true, size: 80 },
      encoding: {
        x: { field: 'tokensM', type: 'quantitative', scale: { type: 'log' }, title: 'Total tokens (M)' },
        y: { field: 'match', type: 'quantitative', title: 'Match (%)' },
        color: { field: 'model', type: 'nominal' },
        tooltip: [
          { field: 'model' },
          { field: 'match', format: '.2f' },
          { field: 'tokensM', format: '.3f' },
          { field: 'runs' },
        ],
      },
    },
  ];
  if (data.fit && values.length) {
    const xs = values.map((v) => v.tokensM).filter((x) => x > 0);
    const lo = Math.min(...xs);
    const hi = Math.max(...xs);
    const line = Array.from({ length: 30 }, (_, i) => {
      const x = lo * (hi / lo) ** (i / 29);
      return { tokensM: x, fit: (data.fit!.a * Math.log(x * 1e6) + data.fit!.b) * 100 };
    });
    layers.push({
      data: { values: line },
      mark: { type: 'line', strokeDash: [4, 3], color: 'gray' },
      encoding: {
        x: { field: 'tokensM', type: 'quantitative', scale: { type: 'log' } },
        y: { field: 'fit', type: 'quantitative' },
      },
    });
  }
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: 'LongDA: match vs total tokens',
    width: 420,
    height: 280,
    data: { values },
    layer: layers,
  };
}

/**
 * Heatmap of tool usage by relative step bin.
 * @param model model name; `h` heatmap. @returns a Vega-Lite spec.
 */
export function heatmapSpec(model: string, h: ToolHeatmap): VegaLiteSpec {
  const values = h.tools.flatMap((t, r) =>
    h.matrix[r]!.map((v, b) => ({ tool: t, bin: b + 1, share: v, count: h.counts[r]![b]! })),
  );
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: `Tool usage over the trajectory — ${model}`,
    width: 420,
    height: 20 * h.tools.length,
    data: { values },
    mark: 'rect',
    encoding: {
      x: { field: 'bin', type: 'ordinal', title: `Relative step (${h.bins} bins)` },
      y: { field: 'tool', type: 'nominal', sort: h.tools, title: null },
      color: { field: 'share', type: 'quantitative', scale: { scheme: 'blues' }, title: 'share of bin' },
      tooltip: [{ field: 'tool' }, { field: 'bin' }, { field: 'share', format: '.2f' }, { field: 'count' }],
    },
  };
}

/**
 * Bar chart of one metric per model (mean over blocks), for any benchmark.
 * @param t a model × block table; `title` chart title; `percent` multiply by 100.
 * @returns a Vega-Lite spec.
 */
export function modelBarSpec(t: ModelBlockTable, title: string, percent = true): VegaLiteSpec {
  const values = t.modelMeans
    .filter((m) => m.value !== null)
    .map((m) => ({ model: m.model, value: m.value! * (percent ? 100 : 1), runs: m.runIds.length }));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: 420,
    data: { values },
    mark: 'bar',
    encoding: {
      y: { field: 'model', type: 'nominal', sort: '-x', title: null },
      x: { field: 'value', type: 'quantitative', title: percent ? `${t.metric} (%)` : t.metric },
      tooltip: [{ field: 'model' }, { field: 'value', format: '.2f' }, { field: 'runs' }],
    },
  };
}

/**
 * BLADE F1 per decision type with 95% CI error bars.
 * @param rows from {@link bladeCiRows}. @returns a Vega-Lite spec.
 */
export function bladeCiSpec(rows: readonly BladeCiRow[]): VegaLiteSpec {
  const values = rows
    .filter((r) => Number.isFinite(r.f1.mean))
    .map((r) => ({ model: r.model, type: r.type, f1: r.f1.mean, lo: r.f1.lo, hi: r.f1.hi }));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: 'BLADE F1 by decision type (bootstrap 95% CI)',
    data: { values },
    facet: { column: { field: 'type', type: 'nominal', title: null } },
    spec: {
      width: 120,
      layer: [
        {
          mark: 'bar',
          encoding: {
            x: { field: 'model', type: 'nominal', title: null },
            y: { field: 'f1', type: 'quantitative', title: 'F1' },
          },
        },
        // the error bar's y shares the bar's axis: same title, or Vega-Lite merges them into "F1, lo"
        {
          mark: 'errorbar',
          encoding: {
            x: { field: 'model', type: 'nominal' },
            y: { field: 'lo', type: 'quantitative', title: 'F1' },
            y2: { field: 'hi' },
          },
        },
      ],
    },
  };
}
