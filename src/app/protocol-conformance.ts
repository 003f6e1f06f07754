/**
 * `src/protocol` imports nothing outside itself (issue 40), so the domain types a panel shows are copied there as
 * protocol types. This file is where the copies cannot drift: each pair must be the same type both ways (a core value
 * goes to a webview as the protocol type; a form or rule the webview sends back goes to the core function as the core
 * type). `npm run typecheck` fails on any difference, naming the pair. Types only: nothing here runs.
 */
import type * as bladeAuthoring from '../core/benchmarks/blade/authoring.ts';
import type * as bladeReview from '../core/benchmarks/blade/decision-review.ts';
import type * as bladeWorkbench from '../core/benchmarks/blade/decision-workbench.ts';
import type * as benchmarks from '../core/benchmarks/types.ts';
import type * as taxonomy from '../core/failures/taxonomy.ts';
import type * as bladeProtocol from '../protocol/blade-decisions.ts';
import type * as failuresProtocol from '../protocol/failures.ts';
import type * as groundTruthProtocol from '../protocol/ground-truth.ts';
import type * as forkDiffProtocol from '../protocol/fork-diff.ts';
import type * as forkDiff from './runs/fork-diff.ts';

/** `true` when A and B are assignable to each other; otherwise a type naming the failed direction. */
type Same<A, B> = [A] extends [B]
  ? [B] extends [A]
    ? true
    : 'protocol type is not assignable to the core type'
  : 'core type is not assignable to the protocol type';

/** Each entry fails to compile when its core and protocol types differ. */
export type ProtocolConformance = {
  forkDiffView: Same<forkDiff.ForkDiffView, forkDiffProtocol.ForkDiffView>;
  taxonomy: Same<taxonomy.Taxonomy, failuresProtocol.Taxonomy>;
  failureClass: Same<taxonomy.FailureClass, failuresProtocol.FailureClass>;
  groundTruthView: Same<benchmarks.GroundTruthView, groundTruthProtocol.GroundTruthView>;
  groundTruthDecision: Same<benchmarks.GroundTruthDecision, groundTruthProtocol.GroundTruthDecision>;
  decisionForm: Same<bladeAuthoring.DecisionForm, bladeProtocol.DecisionForm>;
  checkResult: Same<bladeAuthoring.CheckResult, bladeProtocol.CheckResult>;
  consensusRule: Same<bladeReview.ConsensusRule, bladeProtocol.ConsensusRule>;
  decisionInput: Same<bladeReview.DecisionInput, bladeProtocol.DecisionInput>;
  decisionVerdict: Same<bladeReview.DecisionVerdict, bladeProtocol.DecisionVerdict>;
  reviewField: Same<bladeReview.ReviewField, bladeProtocol.ReviewField>;
  decisionAgreementRow: Same<bladeReview.DecisionAgreementRow, bladeProtocol.DecisionAgreementRow>;
  authoringContext: Same<bladeWorkbench.AuthoringContext, bladeProtocol.AuthoringContext>;
  decisionReviewView: Same<bladeWorkbench.DecisionReviewView, bladeProtocol.DecisionReviewView>;
  decisionAgreementView: Same<bladeWorkbench.DecisionAgreementView, bladeProtocol.DecisionAgreementView>;
  acceptanceCandidate: Same<bladeWorkbench.AcceptanceCandidate, bladeProtocol.AcceptanceCandidate>;
};

/** Compiles only when every entry of {@link ProtocolConformance} is `true`. */
export const PROTOCOL_CONFORMANCE: ProtocolConformance = {
  taxonomy: true,
  failureClass: true,
  groundTruthView: true,
  groundTruthDecision: true,
  decisionForm: true,
  checkResult: true,
  consensusRule: true,
  decisionInput: true,
  decisionVerdict: true,
  reviewField: true,
  decisionAgreementRow: true,
  authoringContext: true,
  decisionReviewView: true,
  decisionAgreementView: true,
  acceptanceCandidate: true,
  forkDiffView: true,
};
