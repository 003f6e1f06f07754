/**
 * BLADE's part of the common block model (`suites/types.ts`): its item types (Task 2's research question, Task 1's
 * MCQs), its visible resources (dataset description, columns), its hidden payload (`annotations.csv`,
 * `mcq_dataset.json`) and its block fields, added by declaration merging so the generic model names no benchmark
 * (issue 40). Source: spec §1.2.3–1.2.4.
 */

/** BLADE Task 2: the research question of a dataset. */
export interface BladeQuestion {
  type: 'blade-question';
  id: string;
  question: string;
}

/** BLADE Task 1: one MCQ (spec §1.2.4). The correct answer is HIDDEN (see `HiddenResources.mcqs`). */
export interface BladeMcqItem {
  type: 'blade-mcq';
  /** `cvar-<n>` or `transform-<n>` (n 1-based across the dataset). */
  id: string;
  family: 'cvar' | 'transform';
  mcType: 'select_pos' | 'select_neg';
  /** The conceptual variable the transform question is about ('' for cvar questions). */
  conceptualVariable: string;
  /** Options in order, labelled A, B, C, D. */
  options: { label: string; text: string; rationale: string; isLlmGenerated: boolean }[];
}

/** One column of a tabular dataset as described by the benchmark (BLADE `info.json` fields). */
export interface ColumnInfo {
  name: string;
  description: string;
  dtype?: string;
  semanticType?: string;
  /** Remaining LIDA-style properties (std, min, max, samples, num_unique_values) as given. */
  properties?: Record<string, unknown>;
}

export interface BladeBranch {
  dependencies: string[];
  condition: string;
}

export interface BladeTransformSpec {
  specId: string;
  specName: string;
  specification: string;
  /** First element of `trans_verb` (derive / filter / groupby / ...); '' for ROOT. */
  verb: string;
  transVerb: string[];
  code: string;
  rationale: string;
  /** `[[input cols], output col]`; output '' = whole table. */
  columnMappings: { inputs: string[]; output: string }[];
  branches: BladeBranch[];
  isRoot: boolean;
  raw: Record<string, unknown>;
}

export type BladeVariableType = 'IV' | 'DV' | 'Control' | 'Moderator';

export interface BladeConceptualVarSpec {
  specId: string;
  /** As annotated: IV / DV / Control. */
  variableType: string;
  /** Control with interaction=true counts as Moderator (spec §1.2.3). */
  effectiveType: BladeVariableType;
  concept: string;
  interaction: boolean;
  on: string;
  /** Without the 🟨 / 🟩 prefixes. */
  columnsOrig: string[];
  columnsDerived: string[];
  derivedSpecIds: string[];
  leafSpecIds: string[];
  rationale: string;
  raw: Record<string, unknown>;
}

export interface BladeModelSpec {
  specId: string;
  /** Model name, e.g. "Linear Regression". */
  specification: string;
  specName: string;
  code: string;
  rationale: string;
  columnsOrig: string[];
  columnsDerived: string[];
  derivedSpecIds: string[];
  leafSpecIds: string[];
  specifiedSpecIds: string[];
  raw: Record<string, unknown>;
}

export type ReviewLabel = 'Yes' | 'No' | 'Unsure' | '';

/** `annotate_transform_spec_json`: LM-generated candidate transform reviewed by annotators. */
export interface BladeTransformReview {
  specId: string;
  code: string;
  outputCol: string;
  rationale: string;
  associatedCvarSpecId: string;
  isSuitedToCv: ReviewLabel;
  isStepsReasonable: ReviewLabel;
  isRationaleReasonable: ReviewLabel;
  explanation: string;
  /** justifiable: all labels Yes; unjustifiable: majority No; otherwise unsure. */
  judgement: 'justifiable' | 'unjustifiable' | 'unsure';
  raw: Record<string, unknown>;
}

/** `annotate_cvar_spec_json`: candidate conceptual variable reviewed by annotators. */
export interface BladeCvarReview {
  specId: string;
  concept: string;
  variableType: string;
  columns: string[];
  interaction: boolean;
  on: string;
  canDeriveFromData: ReviewLabel;
  isReasonable: ReviewLabel;
  judgement: 'justifiable' | 'unjustifiable' | 'unsure';
  raw: Record<string, unknown>;
}

export interface BladeAnnotations {
  file: string;
  transforms: BladeTransformSpec[];
  conceptualVars: BladeConceptualVarSpec[];
  models: BladeModelSpec[];
  transformReviews: BladeTransformReview[];
  cvarReviews: BladeCvarReview[];
  /** networkx node-link JSON of the spec DAG, as given (unused by the evaluator). */
  dependencyGraph?: unknown;
}

export interface BladeDecisionCounts {
  /** Conceptual variables per effective type. */
  cvars: { IV: number; DV: number; Control: number; Moderator: number; total: number };
  /** GT transform specs excluding ROOT. */
  transforms: number;
  models: number;
  /** Distinct model names (lower-cased, trimmed). */
  uniqueModelNames: number;
  transformReviews: number;
  cvarReviews: number;
  mcqCvar: number;
  mcqTransform: number;
}

export interface BladeMcq {
  id: string;
  family: 'cvar' | 'transform';
  mcType: 'select_pos' | 'select_neg';
  conceptualVariable: string;
  options: { label: string; text: string; rationale: string; isLlmGenerated: boolean }[];
  /** HIDDEN: label of the correct option (A–D). */
  correctLabel: string;
}

export interface BladeMcqSet {
  file: string;
  mcqs: BladeMcq[];
}

declare module '../../suites/types.ts' {
  interface BlockItemTypes {
    'blade-question': BladeQuestion;
    'blade-mcq': BladeMcqItem;
  }
  interface VisibleResources {
    /** BLADE: dataset description (info.json `data_desc.dataset_description`). */
    datasetDescription?: string;
    /** BLADE: column descriptions from info.json. */
    columns?: ColumnInfo[];
    /** BLADE: research question(s) shown to the agent. */
    researchQuestions?: string[];
  }
  interface HiddenResources {
    /** BLADE: parsed `annotations.csv`. */
    annotations?: BladeAnnotations;
    /** BLADE: parsed `mcq_dataset.json`. */
    mcqs?: BladeMcqSet;
  }
  interface BlockExtensions {
    /** BLADE / BLADE-MCQ: dataset name and ground-truth decision counts. */
    blade?: { dataset: string; counts: BladeDecisionCounts };
  }
}
