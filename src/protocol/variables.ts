/**
 * Protocol of the Variables panel (issue 25): a survey's variable catalog as a searchable table, a variable's
 * detail (value codes, universe, question text), a link to its codebook page in the Documentation Search panel,
 * "copy as pandas" into the run notebook, and question mode (the variables and files a question needs).
 *
 * Flow: the webview sends `WebviewReadyRequest` and receives a {@link VariablesState}; while the catalog is
 * built the host posts `DidChangeStateNotification` with the new state. Filtering by words happens in the
 * webview; {@link AskQuestionRequest} runs question-level retrieval on the host.
 */
import { IpcRequest } from './ipc.ts';

/** The survey the panel shows. */
export interface VariablesTarget {
  /** Suite kind of the configured suite the root belongs to (`longda`), or `folder`. */
  suite: string;
  /** Absolute documentation root (the LongDA benchmark folder). */
  root: string;
  /** Survey folder under the root (`NHANES`). */
  survey: string;
  /** Shown in the header. */
  title: string;
}

export interface VariableValue {
  code: string;
  label: string;
}

/** One catalog entry as the table shows it. */
export interface VariableRow {
  name: string;
  label: string | null;
  /** Data file (table) stem, e.g. `DEMO_L`. */
  file: string;
  /** Documentation file relative to the root; null when undocumented. */
  doc: string | null;
  /** "Page 9" / "Row 12"; null when undocumented. */
  page: string | null;
  universe: string | null;
  text: string | null;
  values: VariableValue[];
  documented: boolean;
  /** Label stored in the data file (undocumented columns). */
  dataLabel?: string;
  /** Data file relative to the root, when the survey's data folder has it. */
  dataPath?: string;
}

export interface VariablesState {
  target?: VariablesTarget;
  status: 'idle' | 'building' | 'ready' | 'error';
  /** Progress or the error. */
  message?: string;
  variables: VariableRow[];
  /** Codebooks that could not be parsed and data files that could not be read. */
  problems: { file: string; reason: string }[];
  coverage: { columns: number; documented: number };
  /**
   * The model profile that can break a question into concepts (question mode's "Let the model break the question
   * into concepts"), or why none can (no model profile configured: the toggle is then disabled).
   */
  decomposer?: { profile: string; model: string } | { unavailable: string };
}

/** A question-mode answer: candidate variables (best first) and the documentation files to read. */
export interface QuestionAnswer {
  concepts: { family: string | null; groupings: string[]; measures: string[] };
  variables: Array<{ name: string; file: string; why: string; score: number }>;
  files: Array<{ file: string; from: string[] }>;
  elapsedMs: number;
  /**
   * When a model broke the question into concepts: the model (profile name), its phrases, and the sub-queries
   * matched besides the question's own words (its measures, then its population).
   */
  decomposition?: {
    model: string;
    population: string[];
    measures: string[];
    groupings: string[];
    design: string[];
    subQueries: string[];
  };
}

/** Question mode; `useModel`: let the configured model profile break the question into concepts first. */
export const AskQuestionRequest = new IpcRequest<{ question: string; useModel?: boolean }, QuestionAnswer>(
  'variables/ask',
);
/** Opens the variable's codebook page in the Documentation Search panel. */
export const OpenCodebookRequest = new IpcRequest<{ name: string; file: string }, void>('variables/openCodebook');
/** Inserts a pandas snippet reading the variable into the run notebook (or copies it when no notebook is open). */
export const CopyAsPandasRequest = new IpcRequest<
  { name: string; file: string },
  { where: 'notebook' | 'clipboard'; snippet: string }
>('variables/copyAsPandas');
