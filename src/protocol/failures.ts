/**
 * Protocol of the Failure Analysis panel (issue 19): a run's trajectory and report with the failure tags on them,
 * the failure case or hallucination check being worked from a sampled queue, and the figures (Fig. 8 / Table 6).
 */
import { IpcRequest } from './ipc.ts';

/** One failure class of a taxonomy (the protocol's copy of `FailureClass`, src/core/failures/taxonomy.ts). */
export interface FailureClass {
  /** Stable id (lower-case words joined by `-`), what tags store. */
  id: string;
  /** Display name. */
  label: string;
  /** Group the class belongs to (DDR: "Failure in exploration"), if the taxonomy groups its classes. */
  group?: string;
  /** What the class means, as its source defines it. */
  definition: string;
  /** Where the definition comes from (`DDR-Bench paper §6, Fig. 8`), when it differs from the taxonomy's source. */
  source?: string;
}

/** Where a taxonomy comes from: a paper, Loupe's own design, or the user's workspace. */
export type TaxonomyOrigin = 'paper' | 'loupe' | 'workspace';

/**
 * A failure taxonomy as panels show it (the protocol's copy of `Taxonomy`, src/core/failures/taxonomy.ts;
 * src/app/protocol-conformance.ts checks that the two stay the same).
 */
export interface Taxonomy {
  /** Unique id (`ddr`, `analystbench-report`, or a workspace file's own id). */
  id: string;
  title: string;
  origin: TaxonomyOrigin;
  /** The paper section (or "Loupe, issue 19") the classes come from; the file path for workspace taxonomies. */
  source: string;
  /** What is tagged: trajectory steps, report text, or both. */
  unit: 'step' | 'sentence' | 'both';
  classes: FailureClass[];
}

export type SeverityName = 'minor' | 'major' | 'critical';

/** One step of the trajectory list. */
export interface FailureStep {
  index: number;
  summary: string;
  tools: string[];
  error: boolean;
  /** Items (query ids) whose answer this step recorded, whole (issue 42: the answer step of q2 can be found). */
  answers?: string[];
}

/** A text artefact of the run spans can be tagged on (report, insights), shown as plain text so offsets hold. */
export interface FailureArtefact {
  name: string;
  title: string;
  text: string;
  /** [start, end) of each sentence (the agreement units). */
  sentences: Array<[number, number]>;
}

/** A failure tag on the run, as listed. */
export interface FailureTagView {
  itemId: string;
  kind: 'step' | 'span';
  /** Steps (0-based, inclusive) or characters [from, to) of `artefact`. */
  from: number;
  to: number;
  artefact?: string;
  quote?: string;
  taxonomy: string;
  classes: string[];
  severity: SeverityName;
  note: string | null;
  annotator: string;
  /** How the annotator is shown: the name with the database role that wrote the tag, e.g. `Ana (role ana_pg)` (team store; the name alone on SQLite). */
  annotatorLabel: string;
}

/** The run shown. */
export interface FailureRunView {
  runId: string;
  suite: string;
  blockId: string;
  model: string;
  steps: FailureStep[];
  artefacts: FailureArtefact[];
  tags: FailureTagView[];
  /** The taxonomy preselected (the benchmark's). */
  taxonomy: string;
  /** Step to select on open. */
  focusStep?: number;
  /** The failed item this run was opened for ("Tag failure" on it): tags made here are linked to it. */
  attached?: {
    ref: string;
    question: string;
    detail: string;
    /** Why the report pane is not on the item's own text (none of the run's texts is it). */ note?: string;
  };
  /** Position in `artefacts` of the text the attached item belongs to (a LongDA query's answer): the report pane opens on it. */
  focusArtefact?: number;
}

/** The queue item being worked. */
export interface FailureCaseView {
  kind: 'failure-case' | 'hallucination-check';
  itemId: string;
  queueId: string;
  queueName: string;
  pos: number;
  total: number;
  done: number;
  model: string;
  scenario: string;
  /** failure-case: the item's ref, question and how it failed; hallucination-check: the insight. */
  ref: string;
  question: string;
  detail: string;
  taxonomy: string;
  /** This annotator's current verdict, if any. */
  mine: {
    classes?: string[];
    severity?: SeverityName;
    judgeWrong?: boolean;
    correct?: boolean;
    derivable?: boolean;
    note?: string | null;
  } | null;
}

/** Figures of the expert failure analysis (Vega-Lite specs and counts). */
export interface FailureFiguresView {
  fig8: unknown;
  table6: unknown;
  fig8Rows: number;
  table6Rows: number;
  counts: {
    cases: number;
    casesResolved: number;
    checks: number;
    checksResolved: number;
    tags: number;
    tagsResolved: number;
  };
}

export interface FailuresState {
  annotator: string;
  taxonomies: Taxonomy[];
  /** Workspace taxonomy files that did not load, each naming file and line. */
  taxonomyErrors: string[];
  run: FailureRunView | null;
  case: FailureCaseView | null;
  /** The queue has nothing left for this annotator. */
  queueDone?: { queueName: string; total: number; done: number };
  figures: FailureFiguresView | null;
  /** One line to show (saved, errors). */
  message?: string;
}

/** Full text of a step (message, calls, observations) for the detail pane. */
export const GetFailureStepRequest = new IpcRequest<{ runId: string; index: number }, { text: string }>(
  'failures/step',
);

/** Tags steps or a span of the shown run. @returns the refreshed state (message says what was saved). */
export const TagFailureRequest = new IpcRequest<
  {
    target:
      { kind: 'steps'; from: number; to: number } | { kind: 'span'; artefact: string; start: number; end: number };
    taxonomy: string;
    classes: string[];
    severity: SeverityName;
    note: string;
  },
  FailuresState
>('failures/tag');

/** Submits the verdict on the current queue item and serves the next. */
export const SubmitCaseRequest = new IpcRequest<
  {
    itemId: string;
    classes: string[];
    severity: SeverityName;
    judgeWrong: boolean;
    correct: boolean;
    derivable: boolean;
    note: string;
  },
  FailuresState
>('failures/submit');

/** Skips the current queue item (released) and serves the next. */
export const SkipCaseRequest = new IpcRequest<{ itemId: string }, FailuresState>('failures/skip');

/** Shows the figures (Fig. 8 / Table 6) from resolved annotations. */
export const ShowFailureFiguresRequest = new IpcRequest<Record<string, never>, FailuresState>('failures/figures');

/** Opens the shown run's Trajectory Timeline at `step` (0-based) to tag there, the attached failed item carried along. */
export const OpenInTimelineRequest = new IpcRequest<{ step: number }, void>('failures/openTimeline');
