/**
 * Protocol of the checklist editor: one block's expert-authored checklist (DDR fact items with entity and evidence
 * query; AnalystBench-style criteria with 1–5 rubric anchors), its versions and what changed between them.
 * Source: issue 15.
 */
import { IpcRequest } from './ipc.ts';

/** The result of an evidence query as attached to an item. */
export interface EvidenceResult {
  columns: string[];
  rows: unknown[][];
  rowCount: number;
  truncated: boolean;
}

/** One item as the editor shows and edits it. */
export interface EditorItem {
  id: string;
  kind: 'fact' | 'criterion';
  question: string;
  answer: string;
  sourceText?: string;
  entity?: string;
  evidence?: { sql?: string; result?: EvidenceResult; values?: string };
  rubric?: string[];
  retired?: boolean;
  /** Who last changed the item and when (ISO); `native` for the suite's own items. */
  author: string;
  updatedAt: string;
}

/** One stored version in the history list. */
export interface VersionInfo {
  version: number;
  parent: number | null;
  author: string;
  createdAt: string;
  note: string;
  hash: string;
  /** Items scored (retired excluded). */
  items: number;
  /** Changes from its parent (item ids). */
  changes: { added: string[]; changed: string[]; retired: string[]; restored: string[] };
}

/** The editor's state. */
export interface ChecklistEditorState {
  suite: string;
  suiteId: string;
  blockId: string;
  blockTitle: string;
  benchmarkTitle: string;
  kind: 'fact' | 'criterion';
  /** DDR: the block's entity (new fact items are about it). */
  entity: string | null;
  /** Whether evidence queries can run (the block has a database). */
  canQuery: boolean;
  /** Tables and columns of the block's database (for writing queries), empty when none. */
  tables: Array<{ name: string; columns: string[] }>;
  /** The version the items were loaded from (saves are edits of it); null: the suite's own checklist. */
  base: number | null;
  items: EditorItem[];
  versions: VersionInfo[];
  /** Items of the suite's own checklist (the start of a first version). */
  nativeCount: number;
  annotator: string;
  /** Runs of this block (newest first) that can be re-scored against a version. */
  runs: Array<{ id: string; model: string; status: string }>;
}

/** Webview → host: run an evidence query in the block's sandboxed database. */
export const RunEvidenceQueryRequest = new IpcRequest<{ sql: string }, EvidenceResult>('checklist/query');

/** Outcome of a save. */
export type SaveChecklistResult =
  | { ok: true; created: boolean; state: ChecklistEditorState }
  | { ok: false; conflict: { message: string; latest: number; theirs: Array<{ id: string; item: EditorItem | null }> } }
  | { ok: false; problems: string[] }
  /** Expected answers their evidence query's result contradicts (issue 42): saved only when the expert confirms. */
  | { ok: false; contradictions: Array<{ id: string; message: string }> };

/**
 * Webview → host: save the items as a new version edited from `base`; every evidence query is run again first (a
 * refused one is a problem, nothing saved); `confirmContradictions` saves despite contradictions the expert was shown.
 */
export const SaveChecklistRequest = new IpcRequest<
  { base: number | null; items: EditorItem[]; note: string; confirmContradictions?: boolean },
  SaveChecklistResult
>('checklist/save');

/** Webview → host: the items of a version (`native` for the suite's own) and what changed from its parent. */
export const LoadVersionRequest = new IpcRequest<
  { version: number | 'native' },
  { items: EditorItem[]; version: number | null }
>('checklist/version');

/** Webview → host: re-score a run of the block against a version (a scripted or configured judge is the user's). */
export const RescoreRequest = new IpcRequest<
  { runId: string; version: number | 'native' },
  {
    summary: string;
    checklist: string;
    failed?: Array<{ ref: string; question: string; detail: string }>;
    pending?: number;
  }
>('checklist/rescore');
