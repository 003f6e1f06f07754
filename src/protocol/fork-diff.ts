/**
 * Protocol of the fork diff (issue 43): a forked run and its parent (or two sibling forks) aligned from the fork step —
 * the hint, the steps after it, the code diff, answers and score. Shown by the "Compare Fork with Parent" panel and,
 * once the reviewer has voted, beside the vote in the review panel. Structural copy of `src/app/runs/fork-diff.ts`'s
 * `ForkDiffView` (checked equal in `src/app/protocol-conformance.ts`). Every string is agent or user text: data.
 *
 * Flow: the webview sends `WebviewReadyRequest` and receives a {@link ForkDiffState}; another fork comes as
 * `DidChangeStateNotification`; a step opens in the run's timeline through {@link OpenForkStepRequest}.
 */
import { IpcRequest } from './ipc.ts';

export interface ForkDiffRun {
  id: string;
  model: string | null;
  agent: string;
  status: string;
  steps: number;
}
export interface ForkDiffStep {
  index: number;
  text: string;
  tools: string[];
}
export interface ForkDiffLine {
  op: ' ' | '-' | '+';
  text: string;
}
export interface ForkDiffAnswer {
  queryId: string;
  parent: string | null;
  fork: string | null;
  same: boolean;
}
export interface ForkDiffMetric {
  key: string;
  label: string;
  parent: number | null;
  fork: number | null;
  delta: number | null;
}
type Hint = { who: string; kind: 'hint' | 'correction'; text: string };
type ScoreInfo = { judgeId: string; options: Record<string, unknown>; scoredAt: string } | null;

export interface ForkDiffView {
  relation: 'parent-fork' | 'sibling-forks';
  parent: ForkDiffRun;
  fork: ForkDiffRun;
  forkStep: number;
  hints: Hint[];
  parentHints: Hint[];
  steps: Array<{ parent: ForkDiffStep | null; fork: ForkDiffStep | null }>;
  code: ForkDiffLine[];
  codeStats: { added: number; removed: number; kept: number; parentCells: number; forkCells: number };
  answers: ForkDiffAnswer[];
  scores: { parent: ScoreInfo; fork: ScoreInfo };
  metrics: ForkDiffMetric[];
  notes: string[];
}

/** The panel's state: the diff, or why there is none. */
export interface ForkDiffState {
  view: ForkDiffView | null;
  message: string | null;
  runId: string | null;
}

/** Webview → host: open a step of one of the two runs in its timeline. */
export const OpenForkStepRequest = new IpcRequest<{ runId: string; step: number }, void>('forkDiff/openStep');
