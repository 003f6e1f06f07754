/**
 * Protocol of the Benchmark Item panel (issue 22): one block item as the agent sees it, and its ground truth only
 * after the reviewer's explicit "Show ground truth" ({@link ShowItemGroundTruthRequest}).
 */
import { IpcRequest } from './ipc.ts';

/** Which item the panel shows. */
export interface ItemTarget {
  kind: string;
  root: string;
  blockId: string;
  itemId: string;
}

export interface ItemViewState {
  suite: string;
  blockId: string;
  blockTitle: string;
  itemId: string;
  title: string;
  /** The question / task text as the agent sees it. */
  text: string;
  fields: Array<{ name: string; value: string; code?: boolean }>;
  /** The block holds a ground truth for this item (the reveal button is offered). */
  hasGroundTruth: boolean;
  /** Null until the reviewer asks for it. */
  groundTruth: Array<{ name: string; value: string; code?: boolean }> | null;
  /** The benchmark keeps the block's ground-truth decisions (BLADE): offer to open the ground-truth view. */
  groundTruthView: boolean;
  /** Set by the host: which item this is (saved by the webview to come back after a reload). */
  target?: ItemTarget;
}

/** Webview → host: reveal the ground truth of the shown item (the state with `groundTruth`). */
export const ShowItemGroundTruthRequest = new IpcRequest<Record<string, never>, ItemViewState>('item/showGroundTruth');
/** Webview → host: open the block's ground-truth view (BLADE decisions). */
export const OpenGroundTruthViewRequest = new IpcRequest<Record<string, never>, void>('item/openGroundTruthView');
