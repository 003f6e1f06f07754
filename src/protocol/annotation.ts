/**
 * Protocol of the expert annotation panel (one queue per panel) and of the agreement view.
 * The host serves one item at a time ({@link AnnotationItemView}); the webview submits a verdict built from the
 * task's controls ({@link VerdictControl}) — the same schema the LLM judge fills. Source: issue 14.
 */
import { IpcNotification, IpcRequest } from './ipc.ts';

/** One choice of a verdict control, with its keyboard key. */
export interface VerdictOption {
  value: string | number | boolean;
  label: string;
  /** The key that picks it (`y`, `n`, `1` … `5`). */
  key: string;
  /** Rubric anchor text for 1–5 scores, when the item has one. */
  hint?: string;
}

/** The controls of a task's verdict: one choice per field (figure quality has four 1–5 fields). */
export interface VerdictControl {
  /** The verdict field the choice fills (`supported`, `score`, `label`, `readability`, …). */
  field: string;
  label: string;
  options: VerdictOption[];
}

/** A trajectory step offered as evidence. */
export interface StepEvidence {
  step: number;
  tools: string[];
  text: string;
  error: boolean;
}

/** A notebook cell offered as evidence; `matches` lists numbers and words of the item found in its code or output. */
export interface CellEvidence {
  seq: number;
  step: number;
  code: string;
  output: string;
  matches: string[];
}

/** A documentation page the agent searched or read. */
export interface DocEvidence {
  path: string;
  page?: number;
  query?: string;
  step: number;
}

/** A cited evidence reference (the store's shape). */
export type CitedEvidence =
  | { kind: 'step'; runId: string; step: number }
  | { kind: 'cell'; runId: string; seq: number }
  | { kind: 'doc'; path: string; page?: number; query?: string }
  | { kind: 'span'; runId: string; artefact: string; start: number; end: number; quote?: string };

/** A piece of what is judged: text (markdown when the agent wrote it), split in paragraphs for long reports. */
export interface ItemField {
  label: string;
  text: string;
  markdown: boolean;
  /** Long agent output: each paragraph is addressable (report at the paragraph). */
  paragraphs?: boolean;
}

/** Another verdict on the item (shown after submitting, unless the queue is not blind). */
export interface OtherVerdict {
  who: string;
  /** `llm:<model>`, an annotator, or `adjudicator`. */
  kind: 'llm' | 'human' | 'adjudicator';
  label: string;
  note: string | null;
  at: string;
  superseded: boolean;
}

/** One served item. */
export interface AnnotationItemView {
  queueId: string;
  /** 0-based position in the queue and the queue's size. */
  pos: number;
  size: number;
  itemId: string;
  task: string;
  taskTitle: string;
  criterion: string | null;
  suite: string | null;
  runId: string | null;
  /** The run was deleted after annotation: evidence links are gone, verdicts remain. */
  orphaned: boolean;
  fields: ItemField[];
  controls: VerdictControl[];
  /** `hiddenCells`: cells of the run that mention nothing of the item (not listed). */
  evidence: { steps: StepEvidence[]; cells: CellEvidence[]; docs: DocEvidence[]; hiddenCells?: number };
  /** The annotator's current verdict on this item (editing it supersedes). */
  mine: {
    annotationId: string;
    choice: Record<string, string | number | boolean>;
    note: string | null;
    evidence: CitedEvidence[];
    at: string;
  } | null;
  /** The annotator's unsubmitted choice on this item, kept in the store (it survives a window reload). */
  draft: { choice: Record<string, string | number | boolean>; note: string; evidence: CitedEvidence[] } | null;
  /** Adjudication (disagreement queue): the verdict is final. */
  role: 'annotator' | 'adjudicator';
  /** Who the item is assigned to (issue 43), or null. */
  assignedTo?: string | null;
  /** Other verdicts and the resolution; null while blind and not yet submitted. */
  revealed: { others: OtherVerdict[]; resolution: { decidedBy: string; label: string | null } } | null;
  /** The claims of the item split into atomic facts (issue 43): an expert splits, merges or edits them; [] when the item has none. */
  claims: ClaimFactsView[];
}

/** One claim (a report claim, an insight) of an item and its atomic facts as they stand. */
export interface ClaimFactsView {
  /** 0-based position of the claim in the item. */
  index: number;
  source: 'insight' | 'claim';
  text: string;
  facts: string[];
  /** `expert` (the newest split of any expert, named in `by`) or `rule` (the list-marker rule's proposal). */
  from: 'expert' | 'rule';
  by: string | null;
  /** Per fact: 0-based steps of the run whose calls or results mention its values (the queries / cells that support it). */
  steps: number[][];
}

/** Queue header: name, progress, who is annotating. */
export interface QueueView {
  queueId: string;
  name: string;
  kind: 'items' | 'audit' | 'disagreement' | 'pairs' | 'blade-decisions' | 'sampled';
  reviewers: number;
  blind: boolean;
  annotator: string;
  total: number;
  done: number;
  byAnnotator: Record<string, number>;
  /** How each annotator of `byAnnotator` is shown: the display name with the database role(s) that wrote their annotations, e.g. `ana (role ana_pg)` (team store). */
  labels: Record<string, string>;
  /** The queue's labelling instructions (issue 43): Markdown a colleague wrote, shown sanitised beside the item; null when none. */
  instructions?: { text: string; version: number; author: string; createdAt: string } | null;
  /** Items assigned to named annotators and how many each has done (issue 43), counted within {@link experiment}. */
  assignment?: {
    total: number;
    unassigned: number;
    annotators: Array<{ annotator: string; assigned: number; done: number; extra: number }>;
  } | null;
  /** The experiment (run tag) the queue is scoped to: only items of its runs are served; null for every run. */
  experiment?: string | null;
}

/** Initial state of the panel. */
export interface AnnotationState {
  queue: QueueView;
  /** The item to show (restored position, else the next for this annotator); null when nothing is left. */
  item: AnnotationItemView | null;
}

/** Webview → host: the next item for this annotator after `afterPos` (skip = next without submitting). */
export const NextItemRequest = new IpcRequest<{ afterPos: number }, AnnotationState>('annotation/next');
/** Webview → host: the item at a position (browse with j/k). */
export const ItemAtRequest = new IpcRequest<{ pos: number }, AnnotationState>('annotation/itemAt');
/** Webview → host: submit a verdict; returns the same item, now revealed, and fresh progress. */
export const SubmitVerdictRequest = new IpcRequest<
  {
    pos: number;
    itemId: string;
    choice: Record<string, string | number | boolean>;
    note: string;
    evidence: CitedEvidence[];
    supersedes: string | null;
  },
  AnnotationState
>('annotation/submit');
/** Webview → host: keep the unsubmitted choice, note and citations of an item (replaces the previous draft). */
export const SaveDraftRequest = new IpcRequest<
  { itemId: string; choice: Record<string, string | number | boolean>; note: string; evidence: CitedEvidence[] },
  void
>('annotation/saveDraft');
/** Webview → host: open a piece of evidence where it lives (timeline step, notebook cell, documentation page). */
/** Webview → host: record an expert's split of claim `index` of the item (split, merge, edit: the whole new list). */
export const SaveFactSplitRequest = new IpcRequest<
  { pos: number; itemId: string; index: number; facts: string[] },
  AnnotationState
>('annotation/saveFactSplit');

export const OpenEvidenceRequest = new IpcRequest<{ evidence: CitedEvidence }, void>('annotation/openEvidence');
/** Host → webview: progress changed (another annotator, an import). */
export const QueueProgressNotification = new IpcNotification<{ queue: QueueView }>('annotation/progress');

/** The agreement view's state (the report of `loupe agreement --json`, typed loosely here). */
export interface AgreementState {
  title: string;
  /** How each annotator of the report is shown: the name with the database role(s) that wrote their annotations, e.g. `Ana (role ana_pg)` (team store; the name alone on SQLite). */
  labels: Record<string, string>;
  report: {
    groups: Array<{
      task: string;
      criterion: string | null;
      level: string;
      annotators: string[];
      roles: Record<string, string[]>;
      items: number;
      pairableItems: number;
      percentAgreement: number | null;
      pairwiseAgreement: number | null;
      cohensKappa: { value: number | null; ci: { low: number | null; high: number | null } | null } | null;
      alphaNominal: { value: number | null; ci: { low: number | null; high: number | null } | null };
      alphaInterval: { value: number | null; ci: { low: number | null; high: number | null } | null } | null;
      alphaOrdinal: { value: number | null; ci: { low: number | null; high: number | null } | null } | null;
      gwet: { value: number | null; ci: { low: number | null; high: number | null } | null; weights: string };
      judgeHuman: Array<{ against: string; items: number; agreement: number | null; kappa: number | null }>;
      confusion: { labels: string[]; counts: number[][] } | null;
    }>;
    bootstrap: { resamples: number; seed: number; level: number };
    totals: { items: number; adjudicated: number; majority: number; single: number; tied: number };
  };
}

/** Webview → host: recompute the report. */
export const RefreshAgreementRequest = new IpcRequest<Record<string, never>, AgreementState>('agreement/refresh');
/** Host → webview: the report recomputed because annotations changed (a colleague's, on a team store). */
export const AgreementChangedNotification = new IpcNotification<AgreementState>('agreement/changed');
