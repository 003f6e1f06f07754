/**
 * One event for "a run's failure tags changed" (issue 19): the Failure Analysis panel and the Trajectory Timeline tag
 * the same store and refresh each other through it (the run id is the payload).
 */
import * as vscode from 'vscode';

const emitter = new vscode.EventEmitter<string>();

/** Fires with the run id after a failure tag was saved on it. */
export const onDidChangeFailureTags = emitter.event;

/** Announces that the failure tags of `runId` changed. */
export function fireFailureTagsChanged(runId: string): void {
  emitter.fire(runId);
}
