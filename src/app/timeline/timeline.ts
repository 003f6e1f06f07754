/**
 * Shapes stored steps into timeline rows and the tool-usage heatmap for the Trajectory Timeline.
 * Pure functions over {@link StepRecord}; used by the VS Code timeline panel and the perf benchmark.
 * Source: issue 7 "Trajectory timeline"; heatmap = LongDA Figure 8 (spec §2.4, via eval/tool-heatmap.ts).
 */
import type { TimelineHeatmap, TimelineRun, TimelineStep } from '../../protocol/timeline.ts';
import type { RunRecord, StepRecord } from '../../core/agent/types.ts';
import type { RunStore, StepSummaryRecord } from '../../core/store/run-store.ts';
import { binnedToolHeatmap } from '../../core/eval/tool-heatmap.ts';

/**
 * How a live timeline picks up steps (ms): the store polling interval, and the least time between two messages to the
 * webview (rows read sooner after a message wait for the end of that window and go together; see {@link followTimeline}).
 */
export const TIMELINE_POLL_MS = 100;
export const TIMELINE_BATCH_MS = 30;

const MAIN_ARG = [
  'code',
  'keyword',
  'query',
  'doc_path',
  'sql',
  'q_id',
  'action',
  'table',
  'glob',
  'summary',
  'content',
];

/** First meaningful argument of a tool call, one line, at most `max` characters. */
function mainArgument(argumentsText: string, max = 80): string {
  let args: unknown;
  try {
    args = JSON.parse(argumentsText);
  } catch {
    return oneLine(argumentsText, max);
  }
  if (typeof args !== 'object' || args === null) return oneLine(String(args), max);
  const rec = args as Record<string, unknown>;
  const key = MAIN_ARG.find((k) => rec[k] !== undefined) ?? Object.keys(rec)[0];
  if (key === undefined) return '';
  const v = rec[key];
  return `${key}=${oneLine(typeof v === 'string' ? v : JSON.stringify(v), max)}`;
}

function oneLine(s: string, max: number): string {
  const t = s.replace(/\s+/g, ' ').trim();
  return t.length > max ? t.slice(0, max - 1) + '…' : t;
}

/**
 * One timeline row from a stored step.
 * @param step the stored step; `runStartMs` epoch ms of the run start (for the offset column).
 * @returns a compact {@link TimelineStep} (about 200 bytes: full text stays in the store, see {@link searchSteps}).
 */
export function toTimelineStep(step: StepRecord, runStartMs: number): TimelineStep {
  return summaryToTimelineStep(
    {
      runId: step.runId,
      index: step.index,
      startedAt: step.startedAt,
      latencyMs: step.latencyMs,
      toolMs: step.toolMs,
      usage: step.usage ? { input: step.usage.input, output: step.usage.output } : null,
      content: step.assistant.content ?? '',
      toolNames: step.toolCalls.map((c) => c.name),
      anyError: step.toolCalls.some((c) => c.isError),
      firstArguments: step.toolCalls[0]?.argumentsText ?? null,
    },
    runStartMs,
  );
}

/**
 * One timeline row from a step summary (no texts loaded): the same row {@link toTimelineStep} makes.
 * @param s from `store.getStepSummaries`; `runStartMs` epoch ms of the run start.
 */
export function summaryToTimelineStep(s: Omit<StepSummaryRecord, 'seq'>, runStartMs: number): TimelineStep {
  const first = s.toolNames[0];
  const summary = first
    ? `${first}(${s.firstArguments === null ? '…' : mainArgument(s.firstArguments)})${s.toolNames.length > 1 ? ` +${s.toolNames.length - 1}` : ''}`
    : oneLine(s.content, 100) || '(empty message)';
  const start = Date.parse(s.startedAt);
  return {
    index: s.index,
    startMs: Number.isFinite(start) ? Math.max(0, start - runStartMs) : 0,
    durationMs: s.latencyMs + s.toolMs,
    latencyMs: s.latencyMs,
    toolMs: s.toolMs,
    tokensIn: s.usage?.input ?? null,
    tokensOut: s.usage?.output ?? null,
    tools: s.toolNames,
    error: s.anyError,
    summary,
  };
}

/**
 * Full-text search over steps: message, reasoning, tool names, arguments and observations, case-insensitive;
 * a step matches when it contains every whitespace-separated word of `query`.
 * @returns the matching step indices in order (all steps for an empty query).
 */
export function searchSteps(steps: readonly StepRecord[], query: string): number[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return steps.map((s) => s.index);
  const out: number[] = [];
  for (const s of steps) {
    const text = [
      s.assistant.content ?? '',
      s.assistant.reasoning ?? '',
      ...s.toolCalls.flatMap((c) => [c.name, c.argumentsText, c.observation]),
    ]
      .join('\n')
      .toLowerCase();
    if (words.every((w) => text.includes(w))) out.push(s.index);
  }
  return out;
}

/** What a timeline shows when it opens (see {@link openTimeline}). */
export interface OpenedTimeline {
  run: RunRecord;
  /** Epoch ms the step offsets are counted from (the run's start, else its creation). */
  runStartMs: number;
  /** One row per stored step, in order. */
  steps: TimelineStep[];
  heatmap: TimelineHeatmap;
  /** The largest `seq` of the steps read (0 when none): {@link followTimeline} continues after it. */
  lastSeq: number;
}

/**
 * Opens a run's timeline from the store (issue 23): the run and one row per step built from the step summaries —
 * observations, reasoning and full arguments stay in the store until a step's detail is asked for (`store.getStep`)
 * and a search runs in the store (`store.searchSteps`). A SQLite store reads the summaries on a worker thread.
 * @param store any run store; `runId` the run to show.
 * @returns the run, rows, heatmap and the `seq` watermark to follow the run from.
 * @throws Error naming the run when it is not in the store.
 */
export async function openTimeline(store: RunStore, runId: string): Promise<OpenedTimeline> {
  const run = await store.getRun(runId);
  if (!run) throw new Error(`Run ${runId} is not in the store ${store.location}`);
  const runStartMs = Date.parse(run.startedAt ?? run.createdAt) || 0;
  const summaries = await store.getStepSummaries(runId);
  let lastSeq = 0;
  const steps = summaries.map((s) => {
    if (s.seq > lastSeq) lastSeq = s.seq;
    return summaryToTimelineStep(s, runStartMs);
  });
  return { run, runStartMs, steps, heatmap: timelineHeatmap(steps), lastSeq };
}

/** A followed timeline (see {@link followTimeline}): call it to stop following. */
export interface TimelineFollow {
  (): void;
  /**
   * Reads the steps committed since the last read now, through the same read and watermark as the poll (a writer in
   * this process has just committed one: a run in the same VS Code window), instead of waiting for the next poll.
   */
  poll(): void;
}

/**
 * Follows an opened timeline: every step committed after it was opened (by any process), as rows, polled every
 * `intervalMs` (default {@link TIMELINE_POLL_MS}); `poll()` on the result reads at once. The rows of one read go out
 * together at once; rows read within {@link TIMELINE_BATCH_MS} of the last batch wait for the end of that window, so a
 * burst (a resumed or forked run replaying its steps) makes few messages. No step already shown is read again; rows
 * come in commit order.
 * @param opened from {@link openTimeline}; `known` the indices already shown (the opened rows', added to as rows come).
 * @param onRows called with the new rows of one batch, in commit order.
 * @param opts `intervalMs`: the polling interval in ms (steps written by other processes arrive within it).
 * @returns the follow: call it to stop; `poll()` to read now.
 */
export function followTimeline(
  store: RunStore,
  opened: Pick<OpenedTimeline, 'run' | 'runStartMs' | 'lastSeq'>,
  known: Set<number>,
  onRows: (rows: TimelineStep[]) => void,
  opts: { intervalMs?: number } = {},
): TimelineFollow {
  let pending: TimelineStep[] = [];
  let flush: ReturnType<typeof setTimeout> | undefined;
  let lastFlush = -Infinity;
  const sub = store.subscribeSteps(
    (s) => {
      if (known.has(s.index)) return;
      known.add(s.index);
      pending.push(toTimelineStep(s, opened.runStartMs));
      // After the read (a timer, even of 0 ms, fires after the read's rows are all in), or at the end of the batching
      // window of the last message: bursts (a resumed run may commit many steps at once) go in few messages.
      flush ??= setTimeout(
        () => {
          flush = undefined;
          lastFlush = performance.now();
          const rows = pending;
          pending = [];
          onRows(rows);
        },
        Math.max(0, lastFlush + TIMELINE_BATCH_MS - performance.now()),
      );
    },
    { runId: opened.run.id, intervalMs: opts.intervalMs ?? TIMELINE_POLL_MS, afterSeq: opened.lastSeq },
  );
  const stop = () => {
    sub();
    if (flush) clearTimeout(flush);
    flush = undefined;
  };
  return Object.assign(stop, { poll: () => sub.poll() });
}

/** The run header of the timeline. */
export function toTimelineRun(r: RunRecord): TimelineRun {
  return {
    id: r.id,
    suite: r.suite,
    blockId: r.blockId,
    agent: r.agent,
    model: r.model,
    status: r.status,
    statusReason: r.statusReason,
    steps: r.steps,
    tokens: r.tokens ? { input: r.tokens.input, output: r.tokens.output } : null,
    durationMs: r.durationMs,
    startedAt: r.startedAt,
  };
}

/**
 * Tool-usage heatmap of one run: tools (rows, those the run used, most used first) × `bins` bins of
 * normalised progress, as LongDA Figure 8.
 * @param steps timeline rows in order; `bins` default 20.
 */
export function timelineHeatmap(steps: readonly TimelineStep[], bins = 20): TimelineHeatmap {
  const freq = new Map<string, number>();
  for (const s of steps) for (const t of s.tools) freq.set(t, (freq.get(t) ?? 0) + 1);
  const tools = [...freq.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([t]) => t);
  const h = binnedToolHeatmap([steps.map((s) => s.tools)], { tools, bins });
  return { tools: h.tools, bins: h.bins, matrix: h.matrix, counts: h.counts };
}

/**
 * Tool-usage heatmap over the tools the runs actually called (issue 22: every benchmark's own tools, `python` and
 * `final_answer` included), rows most used first; same binning as LongDA Figure 8 (`binnedToolHeatmap`).
 * @param trajectories one entry per run: each step's tool names. `bins` default 20.
 * @returns the heatmap, or null when no step called a tool.
 */
export function ownToolsHeatmap(
  trajectories: ReadonlyArray<ReadonlyArray<readonly string[]>>,
  bins = 20,
): ReturnType<typeof binnedToolHeatmap> | null {
  const freq = new Map<string, number>();
  for (const t of trajectories) for (const s of t) for (const x of s) freq.set(x, (freq.get(x) ?? 0) + 1);
  if (!freq.size) return null;
  const tools = [...freq.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([t]) => t);
  return binnedToolHeatmap(trajectories, { tools, bins });
}
