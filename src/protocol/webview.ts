/**
 * Messages every Loupe webview shares: the ready handshake and theme/state plumbing.
 * A webview sends `WebviewReadyRequest` once its listeners exist; the host answers with the initial state,
 * so nothing posted before the webview was listening is lost.
 */
import { IpcNotification, IpcRequest } from './ipc.ts';

/** Which Loupe panel a webview bundle implements. */
export type PanelKind =
  | 'welcome'
  | 'docsearch'
  | 'timeline'
  | 'results'
  | 'annotation'
  | 'agreement'
  | 'review'
  | 'ranking'
  | 'checklist'
  | 'groundtruth'
  | 'bladedecisions'
  | 'failures'
  | 'item'
  | 'variables'
  | 'compare'
  | 'forkdiff'
  | 'matrix';

export interface ReadyParams {
  /** The panel kind the bundle believes it is. */
  panel: PanelKind;
}

export interface ReadyResult<S = unknown> {
  /** Panel-specific initial state. */
  state: S;
}

export const WebviewReadyRequest = new IpcRequest<ReadyParams, ReadyResult>('webview/ready');

/** Host → webview: replace the state (e.g. after a reload or when data changed). */
export const DidChangeStateNotification = new IpcNotification<{ state: unknown }>('state/didChange');

/** Webview → host: run a contributed command (only `loupe.*` commands are honoured). */
export const ExecuteCommandRequest = new IpcRequest<{ command: string; args?: unknown[] }, void>('command/execute');
