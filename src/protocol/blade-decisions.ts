/**
 * Protocol of the BLADE decisions panel (issue 18): author a ground-truth decision in a spec form with its executed
 * check, review sampled agent decisions with BLADE's review fields, see agreement per decision type, and accept a
 * decision judged justifiable by consensus into a new ground-truth version. The data types are the core's.
 */
import type { CheckResult, DecisionForm } from '../core/benchmarks/blade/authoring.ts';
import type { ConsensusRule } from '../core/benchmarks/blade/decision-review.ts';
import type { AuthoringContext, DecisionAgreementView, DecisionReviewView } from '../core/benchmarks/blade/decision-workbench.ts';
import { IpcRequest } from './ipc.ts';

export type { CheckResult, DecisionForm, AuthoringContext, DecisionAgreementView, DecisionReviewView, ConsensusRule };

export type DecisionsMode = 'author' | 'review' | 'agreement';

/** The panel's state. */
export interface BladeDecisionsState {
  /** The panel's key (kept in the webview state so the panel comes back after a reload). */
  key: string;
  mode: DecisionsMode;
  annotator: string;
  context: AuthoringContext;
  /** The form being authored (prefilled when accepting a decision) and its last check. */
  form: DecisionForm;
  check: CheckResult | null;
  /** The review item whose acceptance the form completes. */
  acceptItemId: string | null;
  review: DecisionReviewView | null;
  agreement: DecisionAgreementView | null;
  message: string;
}

/** Webview → host: run the checks of a form. */
export const CheckFormRequest = new IpcRequest<{ form: DecisionForm }, CheckResult>('bladeDecisions/check');
/** Webview → host: save the checked form as a new version (accepting `acceptItemId` when set). */
export const SaveFormRequest = new IpcRequest<{ form: DecisionForm; check: CheckResult | null; note: string; acceptItemId: string | null }, { message: string; state: BladeDecisionsState }>('bladeDecisions/save');
/** Webview → host: switch mode (the host answers with fresh data for it). */
export const SetModeRequest = new IpcRequest<{ mode: DecisionsMode; rule?: ConsensusRule }, BladeDecisionsState>('bladeDecisions/mode');
/** Webview → host: the next review item after `afterPos`. */
export const NextDecisionRequest = new IpcRequest<{ afterPos: number }, BladeDecisionsState>('bladeDecisions/next');
/** Webview → host: submit a verdict. */
export const SubmitDecisionRequest = new IpcRequest<{ itemId: string; labels: Record<string, string>; explanation: string }, BladeDecisionsState>('bladeDecisions/submit');
/** Webview → host: start accepting a candidate (the form prefilled from it). */
export const AcceptDecisionRequest = new IpcRequest<{ itemId: string }, BladeDecisionsState>('bladeDecisions/accept');
/** Webview → host: a new empty form of a kind. */
export const NewFormRequest = new IpcRequest<{ kind: DecisionForm['kind'] }, BladeDecisionsState>('bladeDecisions/new');
