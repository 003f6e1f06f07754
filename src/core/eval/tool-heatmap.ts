/**
 * The tool-usage heatmap of LongDA's Figure 8 over any tools (issue 40: the timeline and the Results view use it for
 * every benchmark's own tools; LongDA's `toolUsageHeatmap` is it with LongDA's tools as the rows).
 * Source: spec §2.4 "Tool-usage heatmap" (`paper_figures/tool_usage_analysis.py`, bd03018).
 */
import { LoupeInputError } from '../util/errors.ts';

/** Tool-usage heatmap data: tools × step bins. */
export interface ToolHeatmap {
  tools: string[];
  bins: number;
  /** Raw counts per tool × bin. */
  counts: number[][];
  /** Column-normalised counts (columns with no calls stay 0). */
  matrix: number[][];
  nTrajectories: number;
  /** Calls to names not in `tools` (ignored in the matrix). */
  otherCalls: number;
}

/**
 * Builds the heatmap. Each trajectory is its list of steps after the task step (step i is 1-based), each step the
 * tool names it called. max_step = largest i calling one of `tools` (1 if none; other names do not count, as in the
 * figure script); bin = min(⌊(i / max_step)·bins⌋, bins−1); counts are summed over trajectories and each bin column
 * normalised to sum 1.
 * @param trajectories one entry per trajectory: `steps[i-1]` = tool names called in step i.
 * @param opts `tools` (row order), `bins` (default 20).
 * @returns counts and the normalised matrix.
 * @throws LoupeInputError when `bins` is not a positive integer.
 * Source: spec §2.4 "Tool-usage heatmap" (`paper_figures/tool_usage_analysis.py`, bd03018).
 */
export function binnedToolHeatmap(
  trajectories: ReadonlyArray<ReadonlyArray<readonly string[]>>,
  opts: { tools: readonly string[]; bins?: number },
): ToolHeatmap {
  const tools = [...opts.tools];
  const bins = opts.bins ?? 20;
  if (!Number.isInteger(bins) || bins < 1) {
    throw new LoupeInputError('option bins', `must be a positive integer, got ${bins}`);
  }
  const row = new Map(tools.map((t, i) => [t, i]));
  const counts = tools.map(() => new Array<number>(bins).fill(0));
  let other = 0;
  for (const steps of trajectories) {
    let maxStep = 0;
    steps.forEach((s, k) => {
      if (s.some((t) => row.has(t))) maxStep = k + 1;
    });
    if (maxStep === 0) maxStep = 1;
    steps.forEach((s, k) => {
      const i = k + 1;
      const bin = Math.min(Math.floor((i / maxStep) * bins), bins - 1);
      for (const t of s) {
        const r = row.get(t);
        if (r === undefined) other++;
        else counts[r]![bin]!++;
      }
    });
  }
  const matrix = counts.map((r) => [...r]);
  for (let b = 0; b < bins; b++) {
    let sum = 0;
    for (const r of counts) sum += r[b]!;
    if (sum > 0) for (const r of matrix) r[b] = r[b]! / sum;
  }
  return { tools, bins, counts, matrix, nTrajectories: trajectories.length, otherCalls: other };
}
