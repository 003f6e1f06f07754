/**
 * Protocol of the model × question matrix (issue 43): the items of one benchmark (rows: LongDA queries, checklist
 * items, decision types — whatever its `presentation.itemOutcomes` yields) against its run profiles (columns: the
 * Bradley–Terry player, agent + model + hash of behaviour parameters), each repeat a dot coloured by its outcome.
 * Built by `src/app/matrix/matrix.ts`; the same object is `loupe results --matrix --json`.
 *
 * Flow: the webview sends `WebviewReadyRequest` and receives a {@link MatrixViewState}; `MatrixFilterRequest` narrows
 * rows and columns; `MatrixExpectedRequest` reveals one item's expected value (refused in blind mode);
 * `MatrixOpenDotRequest` opens a dot's run at its answer step (Timeline).
 */
import { IpcRequest } from './ipc.ts';

/** A dot's outcome: an item verdict of a scored run, `unscored` (the run has no complete score: never mixed in), `missing` (the run's score has no such item). */
export type MatrixVerdict = 'right' | 'partial' | 'wrong' | 'unanswered' | 'pending' | 'unscored' | 'missing';

/** Row filters: every row, items wrong in every scored repeat of the shown profiles, items whose profiles' mean credits differ, items with an unscored repeat, items with a repeat whose run had a tool error. */
export type MatrixRowFilter = 'all' | 'wrong-every-repeat' | 'disagree' | 'unscored' | 'tool-errors';

/** One repeat of a profile on an item. */
export interface MatrixDot {
  runId: string;
  /** 1-based repeat index of the run among its profile's runs on the block. */
  repeat: number;
  verdict: MatrixVerdict;
  /** Credit in [0, 1]; null when pending, unscored or missing. */
  credit: number | null;
  /** What the run answered (one line, '' when nothing or unscored). */
  given: string;
  /** 0-based step that recorded the answer (the Timeline opens there); null when no answer record. */
  stepIndex: number | null;
  /** Tool calls of the run that returned an error (0 when none). */
  toolErrors: number;
}

/** A column: one run profile. */
export interface MatrixColumn {
  player: string;
  label: string;
  agent: string;
  model: string | null;
  paramsHash: string;
  /** Runs of the profile in the matrix; `unscored` are shown as grey dots and never counted. */
  runIds: string[];
  unscored: string[];
  /** Mean credit over this profile's scored dots of the rows shown (null: none). */
  mean: number | null;
}

/** A row: one item of one block. */
export interface MatrixRow {
  /** `block/ref`, unique in the matrix. */
  key: string;
  block: string;
  ref: string;
  question: string;
  /** Dots per column (same order as `columns`), repeats in order. */
  cells: MatrixDot[][];
  flags: { wrongEveryRepeat: boolean; disagree: boolean; unscored: boolean; toolErrors: boolean };
  /** The expected value: present only when asked for and not blind. */
  expected?: string;
}

/** The matrix as a view shows it. */
export interface MatrixView {
  suite: string;
  title: string;
  /** Blind mode (setting `loupe.annotation.blind`): expected values are never sent. */
  blind: boolean;
  filter: MatrixRowFilter;
  /** Players shown (all when the matrix is not narrowed to some profiles). */
  profiles: string[] | null;
  columns: MatrixColumn[];
  rows: MatrixRow[];
  /** Rows before the filter, and how many each filter would keep. */
  counts: Record<MatrixRowFilter, number>;
  /** The judges (and options) the dots' scores come from; more than one is a warning. */
  judges: string[];
  /** Blocks whose runs are all unscored: their items are unknown until one is scored. */
  unscoredBlocks: Array<{ block: string; runIds: string[] }>;
}

export interface MatrixViewState {
  matrix?: MatrixView;
  /** Why there is no matrix, in the panel's words. */
  message?: string;
  /** Suites with runs in the store (the panel's picker). */
  suites: string[];
  source?: string;
}

/** Webview → host: narrow the matrix (rows by filter, columns to some profiles; null = all). */
export const MatrixFilterRequest = new IpcRequest<
  { filter: MatrixRowFilter; profiles: string[] | null; suite?: string },
  MatrixViewState
>('matrix/filter');
/** Webview → host: the expected value of one row (refused in blind mode). */
export const MatrixExpectedRequest = new IpcRequest<{ key: string }, { key: string; expected: string }>(
  'matrix/expected',
);
/** Webview → host: open a dot's run in the Timeline at its answer step. */
export const MatrixOpenDotRequest = new IpcRequest<{ runId: string; stepIndex: number | null }, void>('matrix/openDot');
