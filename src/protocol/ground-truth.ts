/**
 * Protocol of the ground-truth view (issue 17): a benchmark's expert ground truth of one block (BLADE: conceptual
 * variables, the transform DAG, models, review rows) at a version, behind an explicit reveal so a reviewer watching
 * runs is not spoiled by accident.
 */
import { IpcRequest } from './ipc.ts';

/**
 * One decision of a ground truth as the ground-truth view lists it (the protocol's copy of `GroundTruthDecision`,
 * src/core/benchmarks/types.ts; src/app/protocol-conformance.ts checks that the two stay the same).
 */
export interface GroundTruthDecision {
  id: string;
  /** Short name (spec name, variable concept). */
  label: string;
  /** Kind within its group (IV / DV / Control / Moderator, a transform verb, a model name). */
  kind: string;
  /** Named fields shown when the decision is selected (code, rationale, conditions, columns, ...). */
  fields: Array<{ name: string; value: string; code?: boolean }>;
}

/** A benchmark's expert ground truth of one block, as the ground-truth view shows it (copy of core's `GroundTruthView`). */
export interface GroundTruthView {
  title: string;
  /** The version shown (0 = the shipped file) and every version there is. */
  version: number;
  versions: Array<{ version: number; author: string; createdAt: string; note: string; hash: string; changes: string }>;
  groups: Array<{ title: string; decisions: GroundTruthDecision[] }>;
  /** The decision graph (transforms and their dependencies): node ids are decision ids; `layer` places them left to right. */
  graph: {
    nodes: Array<{ id: string; label: string; layer: number; row: number }>;
    edges: Array<{ from: string; to: string; alternative: boolean }>;
  } | null;
  /** Review rows kept apart from the decisions (candidates and annotators' labels). */
  reviews: Array<{ id: string; kind: string; label: string; verdict: string }>;
  problems: string[];
}

/** The view's state: hidden until revealed. */
export interface GroundTruthState {
  /** The panel's key (kept in the webview state so the panel comes back after a reload). */
  key: string;
  /** `BLADE · affairs` — shown before the reveal. */
  subject: string;
  revealed: boolean;
  view: GroundTruthView | null;
}

/** Webview → host: reveal (or show another version of) the ground truth. */
export const ShowGroundTruthRequest = new IpcRequest<{ version: number | 'latest' }, GroundTruthState>(
  'groundTruth/show',
);
