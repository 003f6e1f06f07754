/**
 * VS Code notifications with agent-derived text made inert (issue 38): the same signatures as
 * `vscode.window.show{Information,Warning,Error}Message`, with the message (and a modal's `detail`) passed through
 * `forMessage` — controls shown escaped, `[label](command:…)` links broken apart. Every notification of the
 * extension goes through these (ESLint forbids the `vscode.window` ones elsewhere in src/vscode).
 */
import * as vscode from 'vscode';
import { forMessage } from '../core/util/text-safety.ts';

const safeRest = (rest: unknown[]): unknown[] =>
  rest.map((r) => {
    if (r && typeof r === 'object' && !('title' in r) && typeof (r as vscode.MessageOptions).detail === 'string') {
      return { ...(r as vscode.MessageOptions), detail: forMessage((r as vscode.MessageOptions).detail!) };
    }
    return r;
  });

type Show = typeof vscode.window.showInformationMessage;
const wrap = (show: () => Show): Show =>
  ((message: string, ...rest: unknown[]) =>
    (show() as (m: string, ...r: unknown[]) => Thenable<unknown>)(forMessage(message), ...safeRest(rest))) as Show;

/** `vscode.window.showInformationMessage` with the message made inert (see module comment). */
export const showInformationMessage: Show = wrap(() => vscode.window.showInformationMessage);
/** `vscode.window.showWarningMessage` with the message made inert. */
export const showWarningMessage: typeof vscode.window.showWarningMessage = wrap(() => vscode.window.showWarningMessage);
/** `vscode.window.showErrorMessage` with the message made inert. */
export const showErrorMessage: typeof vscode.window.showErrorMessage = wrap(() => vscode.window.showErrorMessage);
