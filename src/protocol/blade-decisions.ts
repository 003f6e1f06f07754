/**
 * Protocol of the BLADE decisions panel (issue 18): author a ground-truth decision in a spec form with its executed
 * check, review sampled agent decisions with BLADE's review fields, see agreement per decision type, and accept a
 * decision judged justifiable by consensus into a new ground-truth version. The data types are structural copies of
 * the core's (checked in src/app/protocol-conformance.ts).
 */
import { IpcRequest } from './ipc.ts';

// The data types below are the protocol's copies of the BLADE workbench's types (src/core/benchmarks/blade/
// authoring.ts, decision-review.ts, decision-workbench.ts); src/app/protocol-conformance.ts checks that each pair stays
// the same, so the webview never imports core.

/** `ConceptualVarSpec`: a conceptual variable and the columns that operationalise it. */
export interface CvarForm {
  kind: 'cvar';
  /** Set when editing an existing spec; a new spec gets a uuid hex like BLADE's. */
  specId?: string;
  /** BLADE's `variable_type` (a moderator is a Control with `interaction` and `on`). */
  variableType: 'IV' | 'DV' | 'Control';
  concept: string;
  /** `final_columns_orig`: columns of data.csv (without BLADE's 🟨 prefix). */
  columnsOrig: string[];
  /** `final_columns_derived`: columns produced by transforms of this ground truth (without the 🟩 prefix). */
  columnsDerived: string[];
  interaction: boolean;
  on: string;
  rationale: string;
}

/** `TransformSpec`: one transform unit with its alternative branches (`Branch`: dependencies + condition). */
export interface TransformForm {
  kind: 'transform';
  specId?: string;
  specName: string;
  specification: string;
  /** `trans_verb` (first one is the verb the evaluator uses). */
  transVerb: string[];
  code: string;
  rationale: string;
  /** `input_cols_to_output_col_mapping`: output '' = the whole table (filter, deduplicate). */
  mapping: Array<{ inputs: string[]; output: string }>;
  branches: Array<{ dependencies: string[]; condition: string }>;
}

/** `ModelSpec`: a statistical model with its code and the columns it uses. */
export interface ModelForm {
  kind: 'model';
  specId?: string;
  specification: string;
  specName: string;
  code: string;
  rationale: string;
  columnsOrig: string[];
  columnsDerived: string[];
  /** The transform specs whose output the model is fitted on (`associated_columns_leaf_spec_ids`); [] = data.csv as loaded. */
  onSpecIds: string[];
}

export type DecisionForm = CvarForm | TransformForm | ModelForm;

/** A problem of a form, with the field at fault (`code`, `branches[1]`, `mapping[0].inputs`, `columnsOrig`, …). */
export interface CheckProblem {
  field: string;
  message: string;
}

/** One executed step of a path. */
export interface StepRun {
  specId: string;
  name: string;
  columns?: string[];
  rows?: number;
  error?: string;
  skipped?: boolean;
}

/** The transform (or the model's table) executed along one branch. */
export interface BranchRun {
  /** Index of the branch (0 for a model's table). */
  branch: number;
  dependencies: string[];
  steps: StepRun[];
  /** Columns and rows after the authored step (or the table a model is fitted on). */
  columns?: string[];
  rows?: number;
  /** Columns the authored step added / removed relative to its input table. */
  added?: string[];
  removed?: string[];
  error?: string;
}

/** What a check found. `ok` only when there are no problems and every executed part ran. */
export interface CheckResult {
  ok: boolean;
  /** Hash of the form checked (a save refuses a form changed since its check). */
  formHash: string;
  problems: CheckProblem[];
  branches: BranchRun[];
  model?: { ok: boolean; type?: string; nobs?: number; params?: string[]; error?: string };
  data: { columns: string[]; rows: number };
  /** Wall time of the executed part, ms (measured). */
  durationMs: number;
}

/** The consensus rule: `all-yes` (every annotator answers Yes to every field; the paper's rule) or `majority` (more than half of the annotators judge it justifiable). */
export interface ConsensusRule {
  kind: 'all-yes' | 'majority';
  /** Annotators needed before a consensus is reached (default 2). */
  minAnnotators: number;
}

/** What the authoring form needs to offer: the ground truth's transforms (for branches), columns, the version. */
export interface AuthoringContext {
  dataset: string;
  researchQuestion: string;
  version: number;
  dataColumns: string[];
  /** Transforms of the ground truth: id, name, output columns (ROOT first). */
  transforms: Array<{ id: string; name: string; outputs: string[] }>;
  derivedColumns: string[];
}

export type DecisionType = 'cvar' | 'transform' | 'model';
export type ReviewAnswer = 'Yes' | 'No' | 'Unsure';

/** A review field: BLADE's name, the question shown, and whether it is Loupe's own (not in BLADE). */
export interface ReviewField {
  name: string;
  question: string;
  loupeExtension: boolean;
}

/** A decision as shown to a reviewer (no agent, no model). */
export type ReviewDecision =
  | {
      type: 'cvar';
      variableType: 'IV' | 'DV' | 'Control' | 'Moderator';
      description: string;
      columns: string[];
      moderatorOn?: string;
    }
  | {
      type: 'transform';
      verb: string;
      code: string;
      mapping: Array<[string[], string]>;
      groupbyCols: string[];
      rationale: string;
    }
  | { type: 'model'; specification: string; code: string; columns: string[] };

/** What a review item holds. */
export interface DecisionInput {
  dataset: string;
  researchQuestion: string;
  /** `agent`: taken from a recorded run (which one is hidden); `expert`: a ground-truth spec. */
  source: 'agent' | 'expert';
  decision: ReviewDecision;
  /** The run's whole transform code (context for a transform unit, and the table a model runs on). */
  transformCode?: string;
  /** Columns of data.csv (to tell original from derived columns). */
  dataColumns: string[];
}

/** A reviewer's verdict: one answer per field of the decision type, and an explanation. */
export interface DecisionVerdict {
  decisionType: DecisionType;
  labels: Record<string, ReviewAnswer>;
  explanation: string;
}

/** One review item as an annotator sees it (no agent, no model, no other verdicts before submitting when blind). */
export interface DecisionReviewView {
  queueId: string;
  queueName: string;
  annotator: string;
  total: number;
  done: number;
  byAnnotator: Record<string, number>;
  /** How each annotator of `byAnnotator` and of `item.others` is shown: the name with the database role(s) that wrote their verdicts, e.g. `Ana (role ana_pg)` (team store; the bare name on SQLite). */
  labels: Record<string, string>;
  item: null | {
    id: string;
    pos: number;
    input: DecisionInput;
    fields: ReviewField[];
    /** This annotator's current verdict, if any. */
    mine: DecisionVerdict | null;
    /** Other annotators' verdicts: shown after this annotator submitted. */
    others: Array<{ annotator: string; verdict: DecisionVerdict }> | null;
  };
}

/** Agreement of one decision type and source (the agreement figure's row). */
export interface DecisionAgreementRow {
  type: DecisionType;
  source: 'agent' | 'expert';
  /** Decisions with at least one verdict / with at least two. */
  items: number;
  pairable: number;
  annotators: string[];
  /** Per annotator: the database roles that wrote their verdicts on these decisions (sorted, [] when none is recorded, as on SQLite). */
  roles: Record<string, string[]>;
  /** Share of decisions with ≥ 2 verdicts judged justifiable by the consensus rule (the paper's "agreement"). */
  justifiable: number | null;
  /** Share of those whose annotators gave the same judgement (justifiable / unjustifiable / unsure). */
  percentAgreement: number | null;
  /** Cohen's κ on the judgement when exactly two annotators rated; Krippendorff's α (nominal) otherwise too. */
  cohensKappa: number | null;
  alpha: number | null;
  /** Per review field: share of Yes among the answers. */
  fieldYes: Record<string, number | null>;
}

/** A decision offered for acceptance: its consensus is justifiable and it is not in the ground truth yet. */
export interface AcceptanceCandidate {
  itemId: string;
  dataset: string;
  type: DecisionType;
  summary: string;
  annotators: string[];
  /** Set once accepted: the version it went into. */
  acceptedIn: number | null;
}

/** The agreement figure's data and the decisions offered for acceptance. */
export interface DecisionAgreementView {
  rule: ConsensusRule;
  rows: DecisionAgreementRow[];
  candidates: AcceptanceCandidate[];
  /** How each annotator of the rows and candidates is shown (`Ana (role ana_pg)` on a team store, the bare name on SQLite). */
  labels: Record<string, string>;
}

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
export const SaveFormRequest = new IpcRequest<
  { form: DecisionForm; check: CheckResult | null; note: string; acceptItemId: string | null },
  { message: string; state: BladeDecisionsState }
>('bladeDecisions/save');
/** Webview → host: switch mode (the host answers with fresh data for it). */
export const SetModeRequest = new IpcRequest<{ mode: DecisionsMode; rule?: ConsensusRule }, BladeDecisionsState>(
  'bladeDecisions/mode',
);
/** Webview → host: the next review item after `afterPos`. */
export const NextDecisionRequest = new IpcRequest<{ afterPos: number }, BladeDecisionsState>('bladeDecisions/next');
/** Webview → host: submit a verdict. */
export const SubmitDecisionRequest = new IpcRequest<
  { itemId: string; labels: Record<string, string>; explanation: string },
  BladeDecisionsState
>('bladeDecisions/submit');
/** Webview → host: start accepting a candidate (the form prefilled from it). */
export const AcceptDecisionRequest = new IpcRequest<{ itemId: string }, BladeDecisionsState>('bladeDecisions/accept');
/** Webview → host: a new empty form of a kind. */
export const NewFormRequest = new IpcRequest<{ kind: DecisionForm['kind'] }, BladeDecisionsState>('bladeDecisions/new');
