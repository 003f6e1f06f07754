/**
 * Pure helpers of the Results panel: number formatting and the Vega-Lite specs of its charts. No DOM, so they are
 * tested in Node (test/unit/webview/results-view.test.ts).
 */
import type {
  BladeDecisionRow,
  MetricCell,
  MetricFormat,
  ScatterPoint,
  Spread,
  ToolHeatmapView,
} from '../../src/protocol/results.ts';

/** Colours the charts take from the VS Code theme (CSS variables read by the webview). */
export interface ChartTheme {
  foreground: string;
  muted: string;
  grid: string;
  font: string;
  /** Low and high end of the heatmap scale. */
  heatLow: string;
  heatHigh: string;
}

export const DEFAULT_THEME: ChartTheme = {
  foreground: '#cccccc',
  muted: '#9d9d9d',
  grid: '#3c3c3c',
  font: 'sans-serif',
  heatLow: '#1e1e1e',
  heatHigh: '#3794ff',
};

/** Formats a value in a column's unit. `percent` values are fractions in [0, 1]. */
export function formatValue(v: number | null | undefined, format: MetricFormat): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  switch (format) {
    case 'percent':
      return `${(v * 100).toFixed(1)}%`;
    case 'integer':
      return Math.round(v).toLocaleString('en-US');
    case 'tokens':
      return formatTokens(v);
    case 'seconds':
      return v >= 3600 ? `${(v / 3600).toFixed(2)} h` : v >= 60 ? `${(v / 60).toFixed(1)} min` : `${v.toFixed(1)} s`;
    case 'fraction':
      return v.toFixed(2);
    case 'number':
      if (Number.isInteger(v)) return String(v);
      return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2);
  }
}

/** 1234 → "1.2k", 8_250_000 → "8.25M". */
export function formatTokens(v: number): string {
  const a = Math.abs(v);
  if (a >= 1e9) return `${(v / 1e9).toFixed(2)}B`;
  if (a >= 1e6) return `${(v / 1e6).toFixed(2)}M`;
  if (a >= 1e3) return `${(v / 1e3).toFixed(1)}k`;
  return String(Math.round(v));
}

/** "68.9% [61.2, 75.0]": the value and, when present, its CI in the same unit (without repeating the unit sign). */
export function formatCell(c: MetricCell | undefined, format: MetricFormat): { text: string; ci?: string } {
  if (!c) return { text: '—' };
  const text = formatValue(c.value, format);
  if (!c.ci || c.value === null) return { text };
  const [lo, hi] = c.ci;
  const f = (x: number) => (format === 'percent' ? (x * 100).toFixed(1) : formatValue(x, format));
  return { text, ci: `[${f(lo)}, ${f(hi)}]` };
}

/**
 * The spread across repeats in a column's unit (issue 22): "range 33.3–66.7% · n=3" with the points below 5 repeats,
 * "95% CI [41.2, 58.8] · n=6" (bootstrap of the mean) from 5 on.
 */
export function formatSpread(
  sp: Spread | undefined,
  format: MetricFormat,
): { text: string; points: string } | undefined {
  if (!sp) return undefined;
  const f = (x: number) => (format === 'percent' ? (x * 100).toFixed(1) : formatValue(x, format));
  const unit = format === 'percent' ? '%' : '';
  const points = sp.points.map((x) => formatValue(x, format)).join(', ');
  if (sp.kind === 'ci' && sp.lo !== undefined && sp.hi !== undefined) {
    return { text: `95% CI [${f(sp.lo)}, ${f(sp.hi)}]${unit} · n=${sp.n}`, points };
  }
  return { text: `range ${f(sp.min)}–${f(sp.max)}${unit} · n=${sp.n}`, points };
}

/** A tooltip for a cell: value, CI, n, pending judgements and how many runs are behind it. */
export function cellTooltip(label: string, c: MetricCell | undefined, format: MetricFormat): string {
  if (!c) return label;
  const { text, ci } = formatCell(c, format);
  const parts = [`${label}: ${text}`];
  if (ci) parts.push(`95% CI ${ci}`);
  if (c.n !== undefined) parts.push(`n = ${c.n}`);
  const sp = formatSpread(c.spread, format);
  if (sp) {
    parts.push(
      `across repeats: ${sp.text} (${c.spread?.kind === 'ci' ? 'bootstrap 95% CI of the mean' : `values ${sp.points}`})`,
    );
  }
  if (c.pending) parts.push(`${c.pending} pending judgement${c.pending === 1 ? '' : 's'}`);
  parts.push(c.runIds.length === 1 ? 'click to open the run' : `click to choose among ${c.runIds.length} runs`);
  return parts.join(' · ');
}

function axisConfig(t: ChartTheme): Record<string, unknown> {
  return {
    labelColor: t.foreground,
    titleColor: t.foreground,
    domainColor: t.muted,
    tickColor: t.muted,
    gridColor: t.grid,
    labelFont: t.font,
    titleFont: t.font,
    titleFontWeight: 600,
  };
}

function baseConfig(t: ChartTheme): Record<string, unknown> {
  return {
    background: null,
    font: t.font,
    axis: axisConfig(t),
    legend: { labelColor: t.foreground, titleColor: t.foreground, labelFont: t.font, titleFont: t.font },
    title: { color: t.foreground, font: t.font, anchor: 'start', fontWeight: 600 },
    view: { stroke: null },
    header: { labelColor: t.foreground, titleColor: t.foreground, labelFont: t.font },
  };
}

/**
 * LongDA Figure 4: match rate vs total tokens, one point per model, x on a log scale, plus the paper's log fit
 * y = a·ln(x) + b when there are at least 3 points.
 */
export function scatterSpec(points: ScatterPoint[], theme: ChartTheme = DEFAULT_THEME): Record<string, unknown> {
  const values = points.map((p) => ({ ...p, matchPct: p.match * 100, runCount: p.runIds.length }));
  const layers: Record<string, unknown>[] = [
    {
      mark: { type: 'point', filled: true, size: 110, cursor: 'pointer' },
      encoding: {
        x: {
          field: 'totalTokens',
          type: 'quantitative',
          scale: { type: 'log', nice: false, padding: 24 },
          title: 'Total tokens (input + output, log scale)',
          axis: { format: '~s', tickCount: 5, grid: false },
        },
        y: { field: 'matchPct', type: 'quantitative', title: 'Match (%)', scale: { domain: [0, 100] } },
        color: { field: 'model', type: 'nominal', title: 'Model' },
        tooltip: [
          { field: 'model', title: 'Model' },
          { field: 'matchPct', title: 'Match %', format: '.1f' },
          { field: 'totalTokens', title: 'Tokens', format: ',' },
          { field: 'blocks', title: 'Blocks' },
          { field: 'runCount', title: 'Runs' },
        ],
      },
    },
    {
      mark: { type: 'text', align: 'left', dx: 8, dy: -6, color: theme.muted },
      encoding: {
        x: { field: 'totalTokens', type: 'quantitative', scale: { type: 'log' } },
        y: { field: 'matchPct', type: 'quantitative' },
        text: { field: 'model' },
      },
    },
  ];
  const fit = logFit(
    points.map((p) => p.totalTokens),
    points.map((p) => p.match * 100),
  );
  if (fit) {
    const xs = points.map((p) => p.totalTokens).filter((x) => x > 0);
    const lo = Math.min(...xs);
    const hi = Math.max(...xs);
    const line = Array.from({ length: 24 }, (_, i) => {
      const x = lo * Math.pow(hi / lo, i / 23);
      return { totalTokens: x, matchPct: fit.a * Math.log(x) + fit.b };
    });
    layers.unshift({
      data: { values: line },
      mark: { type: 'line', strokeDash: [4, 4], color: theme.muted, opacity: 0.8 },
      encoding: {
        x: { field: 'totalTokens', type: 'quantitative', scale: { type: 'log' } },
        y: { field: 'matchPct', type: 'quantitative' },
      },
    });
  }
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: 'container',
    height: 240,
    data: { values },
    layer: layers,
    config: baseConfig(theme),
  };
}

/** Least-squares fit y = a·ln(x) + b over points with x > 0; undefined with fewer than 3 distinct x. */
export function logFit(xs: number[], ys: number[]): { a: number; b: number } | undefined {
  const pts = xs.map((x, i) => [x, ys[i] as number] as const).filter(([x, y]) => x > 0 && Number.isFinite(y));
  if (new Set(pts.map(([x]) => x)).size < 3) return undefined;
  const lx = pts.map(([x]) => Math.log(x));
  const n = pts.length;
  const mx = lx.reduce((s, v) => s + v, 0) / n;
  const my = pts.reduce((s, [, y]) => s + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  pts.forEach(([, y], i) => {
    const dx = (lx[i] as number) - mx;
    sxy += dx * (y - my);
    sxx += dx * dx;
  });
  if (sxx === 0) return undefined;
  const a = sxy / sxx;
  return { a, b: my - a * mx };
}

/** Flattens a heatmap into Vega-Lite rows: one per tool × bin with share and count. */
export function heatmapValues(
  h: ToolHeatmapView,
): { tool: string; bin: number; binLabel: string; share: number; count: number }[] {
  const rows: { tool: string; bin: number; binLabel: string; share: number; count: number }[] = [];
  h.tools.forEach((tool, ti) => {
    for (let b = 0; b < h.bins; b++) {
      rows.push({
        tool,
        bin: b,
        binLabel: `${Math.round((b / h.bins) * 100)}–${Math.round(((b + 1) / h.bins) * 100)}%`,
        share: h.matrix[ti]?.[b] ?? 0,
        count: h.counts[ti]?.[b] ?? 0,
      });
    }
  });
  return rows;
}

/** LongDA Figure 8: tools × relative-position bins, colour = share of the bin's calls. */
export function heatmapSpec(h: ToolHeatmapView, theme: ChartTheme = DEFAULT_THEME): Record<string, unknown> {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: h.model, subtitle: `${h.nTrajectories} trajectories`, subtitleColor: theme.muted },
    width: 'container',
    height: Math.max(120, h.tools.length * 22),
    data: { values: heatmapValues(h) },
    mark: { type: 'rect', cursor: 'pointer' },
    encoding: {
      x: {
        field: 'bin',
        type: 'ordinal',
        title: `Position in the trajectory (${h.bins} bins, relative to the last tool call)`,
        axis: {
          labelExpr: `datum.value % ${Math.max(1, Math.round(h.bins / 4))} == 0 ? round(datum.value * ${100 / h.bins}) + '%' : ''`,
          labelAngle: 0,
        },
      },
      y: { field: 'tool', type: 'nominal', sort: h.tools, title: null },
      color: {
        field: 'share',
        type: 'quantitative',
        title: 'Share',
        scale: { range: [theme.heatLow, theme.heatHigh], domain: [0, 1], interpolate: 'rgb' },
        legend: { format: '.0%' },
      },
      tooltip: [
        { field: 'tool', title: 'Tool' },
        { field: 'binLabel', title: 'Position' },
        { field: 'share', title: 'Share', format: '.1%' },
        { field: 'count', title: 'Calls' },
      ],
    },
    config: baseConfig(theme),
  };
}

/** BLADE: F1 per decision type with its CI, one row per model (points and error bars). */
export function bladeSpec(rows: BladeDecisionRow[], theme: ChartTheme = DEFAULT_THEME): Record<string, unknown> {
  const values = rows
    .filter((r) => r.f1.value !== null)
    .map((r) => ({
      model: r.model,
      decisionType: r.decisionType,
      f1: r.f1.value,
      lo: r.f1.ci?.[0] ?? r.f1.value,
      hi: r.f1.ci?.[1] ?? r.f1.value,
      precision: r.precision.value,
      coverage: r.coverage.value,
    }));
  const y = { field: 'decisionType', type: 'nominal', title: null };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: 'container',
    height: { step: 18 },
    data: { values },
    encoding: { y, yOffset: { field: 'model' }, color: { field: 'model', type: 'nominal', title: 'Model' } },
    layer: [
      {
        mark: { type: 'rule', strokeWidth: 2 },
        encoding: {
          x: {
            field: 'lo',
            type: 'quantitative',
            title: 'F1 (95% bootstrap CI)',
            scale: { domain: [0, 1] },
            axis: { tickCount: 10, format: '.1f' },
          },
          x2: { field: 'hi' },
        },
      },
      {
        mark: { type: 'point', filled: true, size: 70, cursor: 'pointer' },
        encoding: {
          x: { field: 'f1', type: 'quantitative' },
          tooltip: [
            { field: 'model' },
            { field: 'decisionType', title: 'Decision type' },
            { field: 'f1', title: 'F1', format: '.3f' },
            { field: 'lo', title: 'CI low', format: '.3f' },
            { field: 'hi', title: 'CI high', format: '.3f' },
            { field: 'precision', title: 'Precision', format: '.3f' },
            { field: 'coverage', title: 'Coverage', format: '.3f' },
          ],
        },
      },
    ],
    config: baseConfig(theme),
  };
}

/** Distinct values in first-seen order. */
export function distinct<T>(xs: Iterable<T>): T[] {
  return [...new Set(xs)];
}
