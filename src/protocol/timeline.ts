/**
 * Protocol of the Trajectory Timeline panel. Rows are compact ({@link TimelineStep}); the full message,
 * arguments and observations of a step are fetched on expand ({@link GetStepDetailRequest}) so that a
 * 10,000-step run opens quickly.
 */
import type { Taxonomy } from './failures.ts';
import type { FailureTagView, SeverityName } from './failures.ts';
import { IpcNotification, IpcRequest } from './ipc.ts';

export interface TimelineRun {
  id: string;
  suite: string;
  blockId: string;
  agent: string;
  model: string | null;
  status: string;
  statusReason: string | null;
  steps: number;
  /** null when unknown (a run of an external MCP client). */
  tokens: { input: number; output: number } | null;
  durationMs: number;
  startedAt: string | null;
}

/** One row of the timeline. */
export interface TimelineStep {
  /** 0-based step index. */
  index: number;
  /** Offset of the step start from the run start (ms). */
  startMs: number;
  /** Model latency + tool time (ms). */
  durationMs: number;
  latencyMs: number;
  toolMs: number;
  /** null when unknown (a step of an external MCP client). */
  tokensIn: number | null;
  tokensOut: number | null;
  /** Tool names called in this step, in order (empty: a message without tool calls). */
  tools: string[];
  /** Any tool call ended in an error observation. */
  error: boolean;
  /** One line: the first tool call with its main argument, or the start of the assistant message. */
  summary: string;
}

export interface TimelineHeatmap {
  tools: string[];
  bins: number;
  /** matrix[tool][bin], each non-empty column summing to 1. */
  matrix: number[][];
  counts: number[][];
}

/** The verdict of one scored item on the step that recorded its answer (issue 22). */
export interface AnswerMark {
  /** The item (query id, `item 3`, `criterion 2`). */
  ref: string;
  question: string;
  verdict: 'right' | 'wrong' | 'partial' | 'unanswered' | 'pending';
  /** Credit in [0, 1], null while pending. */
  credit: number | null;
  /** What the run gave, as text. */
  given: string;
  /** The ground truth as text ('' when the benchmark has none to show): the webview shows it only when asked. */
  expected: string;
  /** 0-based step that recorded the answer (absent: an item without an answer step). */
  stepIndex?: number;
}

/** Items by verdict. */
export interface OutcomeTally {
  right: number;
  partial: number;
  wrong: number;
  unanswered: number;
  pending: number;
  total: number;
}

/** A run's correctness as the timeline shows it: from its stored score, or scored live (judge-free benchmarks). */
export interface TimelineScoring {
  source: 'stored' | 'live';
  /** ISO time of the score. */
  scoredAt: string;
  tally: OutcomeTally;
  /** Step index → the items whose answer that step recorded. */
  byStep: Record<number, AnswerMark[]>;
  /** Items with no answer step (unanswered, judged on the whole report). */
  unplaced: AnswerMark[];
  /** Why the run could not be scored (then no marks). */
  error?: string;
}

/** Failure tagging in the timeline (issue 19): the same tags, taxonomies and store as the Failure Analysis panel. */
export interface TimelineFailures {
  /** Taxonomies offered (the benchmarks' and the workspace's). */
  taxonomies: Taxonomy[];
  /** The taxonomy preselected: the run's benchmark's. */
  taxonomy: string;
  /** Tags on this run (steps and spans; the timeline marks the step ones). */
  tags: FailureTagView[];
  annotator: string;
  /** Workspace taxonomy files that did not load, each naming file and line. */
  errors: string[];
  /** The failed item the timeline was opened for ("Tag failure" → Open in Timeline): tags made here are linked to it. */
  attached?: { ref: string; question: string; detail: string };
}

export interface TimelineState {
  run: TimelineRun;
  steps: TimelineStep[];
  heatmap: TimelineHeatmap;
  /** Step to scroll to and expand on open. */
  focusStep?: number;
  /** Open with the heatmap shown. */
  showHeatmap?: boolean;
  /** Right / wrong / partial per answer step, or null when the run has no per-item score (yet). */
  scoring?: TimelineScoring | null;
  /** Failure tags of the run and what tagging needs (absent: tagging unavailable, e.g. the store could not be read). */
  failures?: TimelineFailures;
}

export interface StepDetail {
  index: number;
  /** Assistant message (markdown), may be empty. */
  content: string;
  reasoning: string;
  toolCalls: {
    id: string;
    name: string;
    argumentsText: string;
    observation: string;
    isError: boolean;
    truncated: boolean;
    durationMs: number;
    /** The model calls the tool made (find_variables decomposing with the run's model), included in `usage`. */
    modelUse?: { calls: number; input: number; output: number; costUsd: number | null };
  }[];
  /** The step's model call plus its tools' model calls; null when unknown (a step of an external MCP client). */
  usage: { input: number; output: number; cached: number } | null;
  finishReason: string | null;
}

/** Full-text search over a run's steps (done by the host over the store, so rows stay small). */
export const SearchStepsRequest = new IpcRequest<{ runId: string; query: string }, { indices: number[] }>(
  'timeline/search',
);

export const GetStepDetailRequest = new IpcRequest<{ runId: string; index: number }, StepDetail>('timeline/stepDetail');

/** Webview → host: the user clicked a tool call: reveal its notebook cell or open the doc search at that query. */
export const RevealToolCallRequest = new IpcRequest<
  { runId: string; index: number; callId: string },
  { revealed: 'notebook' | 'docsearch' | 'none' }
>('timeline/revealToolCall');

/** Host → webview: select and show this step (e.g. "Open Trajectory Timeline" at a step on an open panel). */
export const FocusStepNotification = new IpcNotification<{ index: number }>('timeline/focusStep');

/** Host → webview: steps committed since the last update (live runs). */
export const DidAppendStepsNotification = new IpcNotification<{
  runId: string;
  steps: TimelineStep[];
  heatmap: TimelineHeatmap;
  run: TimelineRun;
  scoring?: TimelineScoring | null;
}>('timeline/didAppendSteps');

/** Webview → host: tag steps `from`–`to` (0-based, inclusive) as a failure (issue 19). @returns the run's tags afterwards and what was saved. */
export const TagStepsRequest = new IpcRequest<
  {
    runId: string;
    from: number;
    to: number;
    taxonomy: string;
    classes: string[];
    severity: SeverityName;
    note: string;
  },
  { failures: TimelineFailures; message: string }
>('timeline/tagSteps');

/** Host → webview: the run's failure tags changed (tagged here or in the Failure Analysis panel). */
export const DidChangeFailureTagsNotification = new IpcNotification<{ runId: string; failures: TimelineFailures }>(
  'timeline/didChangeFailureTags',
);
