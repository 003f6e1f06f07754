/**
 * Protocol of the ground-truth view (issue 17): a benchmark's expert ground truth of one block (BLADE: conceptual
 * variables, the transform DAG, models, review rows) at a version, behind an explicit reveal so a reviewer watching
 * runs is not spoiled by accident.
 */
import type { GroundTruthView } from '../core/benchmarks/types.ts';
import { IpcRequest } from './ipc.ts';

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
export const ShowGroundTruthRequest = new IpcRequest<{ version: number | 'latest' }, GroundTruthState>('groundTruth/show');
