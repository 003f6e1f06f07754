/**
 * The one model every benchmark loader produces: a {@link Suite} lists {@link Block}s; a block holds
 * its items (queries / research question / MCQs / entity / report task), what the agent may see
 * ({@link VisibleResources}) and what it is scored against ({@link HiddenResources}).
 * Source: issue 3 "One model for four benchmarks"; spec §5.1 (common abstractions).
 *
 * Stability: other layers (agent runtime, docs index, evaluators, VS Code views) depend on these
 * names. Add fields; do not rename or remove them.
 */
import type { Logger } from '../util/log.ts';

/**
 * A benchmark kind: the key of a registered benchmark (src/core/benchmarks/registry.ts). The shipped ones are
 * `longda`, `blade`, `blade-mcq` (BLADE's Task 1, MCQs), `ddr`, `analystbench`.
 */
export type SuiteKind = string;


/** Where a suite came from. */
export interface SuiteSource {
  /** `local`: a folder the user pointed at; `fetched`: downloaded by `loupe fetch` (has a `.loupe-fetch.json`). */
  kind: 'local' | 'fetched';
  /** Absolute root folder (or database file for DDR) as given. */
  root: string;
  /** Official upstream (repository / dataset URL) when known. */
  upstream?: string;
  /** Upstream revision when known (git commit, HF revision). */
  revision?: string;
}

/** A loaded benchmark. */
export interface Suite {
  /** Stable id: `<kind>:<basename of root>` (filesystem-safe variant in {@link Block.id}). */
  id: string;
  kind: SuiteKind;
  title: string;
  /** Benchmark version string (e.g. `bd03018c` for LongDA first commit) or `unknown`. */
  version: string;
  /** Absolute path of the root that was loaded. */
  root: string;
  source: SuiteSource;
  blocks: Block[];
  /** Suite-level problems (files that failed to parse, referenced-but-absent files, ...). Each names the file (and row/column). */
  problems: string[];
}

/** One file an agent may see. */
export interface VisibleFile {
  /** Absolute real path on disk. */
  path: string;
  /** Path relative to the task workspace root (POSIX separators), e.g. `data/Examination/BMX_L.xpt`. */
  rel: string;
  /** Size in bytes (0 if unknown). */
  size: number;
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

/** DDR database description (table and column comments, when metadata is available). */
export interface DatabaseInfo {
  /** Absolute path of the SQLite file. Open it read-only. */
  path: string;
  /** Workspace-relative name, e.g. `database.sqlite`. */
  rel: string;
  tables: { name: string; comment?: string; rows?: number; columns: { name: string; type: string; comment?: string }[] }[];
}

/** What the agent is allowed to see for a block. */
export interface VisibleResources {
  /** Data files (CSV, XPT, XLSX, ...). */
  data: VisibleFile[];
  /** Documentation files (PDF, TXT, MD, XLSX codebooks, ...). */
  docs: VisibleFile[];
  /** DDR: the database (read-only). */
  database?: DatabaseInfo;
  /** BLADE: dataset description (info.json `data_desc.dataset_description`). */
  datasetDescription?: string;
  /** BLADE: column descriptions from info.json. */
  columns?: ColumnInfo[];
  /** BLADE: research question(s) shown to the agent. */
  researchQuestions?: string[];
  /** AnalystBench: the task instruction. */
  instruction?: string;
  /** AnalystBench: the table of contents (visible in the default input configuration). */
  tableOfContents?: string;
  /** Files that the block references but that are absent on disk (reported, not fatal). */
  missing: string[];
}

/** One checklist item (DDR `qa.json` pair; AnalystBench checklist entry). */
export interface ChecklistItem {
  id: string;
  question: string;
  answer: string;
  sourceText?: string;
}

/** What the block is scored against. Never shown to an agent, never copied into a workspace. */
export interface HiddenResources {
  /** Every hidden file backing this block (absolute paths): the leakage guard refuses all of them. */
  files: string[];
  /** LongDA: ground truth by query id (same values as {@link LongdaQuery.groundTruth}). */
  answers?: Record<string, number | number[] | null>;
  /** LongDA: publication files of this block's survey (absolute paths). */
  publications?: string[];
  /** LongDA: the publication this block was extracted from, when it could be identified. */
  publication?: string;
  /** BLADE: parsed `annotations.csv`. */
  annotations?: BladeAnnotations;
  /** BLADE: parsed `mcq_dataset.json`. */
  mcqs?: BladeMcqSet;
  /** DDR / AnalystBench: checklist items (empty array when the block has none yet). */
  checklist?: ChecklistItem[];
  /** AnalystBench: reference report file (absolute path). */
  referenceReport?: string;
  /** AnalystBench: excluded sections / claims of the reference report not derivable from sources. */
  excluded?: string[];
}

// ---------------------------------------------------------------------------------------------
// Items
// ---------------------------------------------------------------------------------------------

/** LongDA answer structure: a single number, or a list of labelled numbers (spec §2.2). */
export type AnswerStructure = { kind: 'single_number' } | { kind: 'list'; labels: string[]; length: number };

/** LongDA query (one row of `benchmark.csv`). */
export interface LongdaQuery {
  type: 'longda-query';
  /** `q1`, `q2`, ... position in the block (LongTA `main.py`); unique within the block. */
  id: string;
  /** Globally unique: `<blockId>/q<n>`. */
  uid: string;
  /** The LongTA-style q_id `"{survey}_{source}_q{i}"` (spec §2.2). */
  longdaId: string;
  /** `internal_id` column as given. */
  internalId: number;
  question: string;
  answerStructure: AnswerStructure;
  /** `additional_info` ('' when empty; LongTA shows empty as "NA."). */
  additionalInfo: string;
  /** HIDDEN. Ground truth: number, list of numbers, or null when the CSV cell is empty. */
  groundTruth: number | number[] | null;
  /** Raw `answer` cell. HIDDEN. */
  answerText: string;
  /** 1-based row in benchmark.csv (header = row 1). */
  row: number;
}

/** BLADE Task 2: the research question of a dataset. */
export interface BladeQuestion {
  type: 'blade-question';
  id: string;
  question: string;
}

/** BLADE Task 1: one MCQ (spec §1.2.4). The correct answer is HIDDEN (see {@link HiddenResources.mcqs}). */
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

/** DDR entity task: "Analyze patient 10502319". */
export interface DdrEntityItem {
  type: 'ddr-entity';
  id: string;
  entityId: string;
  /** Start prompt given to the agent (spec §3.3). */
  prompt: string;
}

/** AnalystBench report task. */
export interface AnalystTaskItem {
  type: 'analyst-task';
  id: string;
  instruction: string;
}

/** An item of a benchmark outside the four (a registered plug-in or test benchmark): its id and the text the agent sees. */
export interface TaskItem {
  type: 'task';
  id: string;
  text: string;
}

export type BlockItem = LongdaQuery | BladeQuestion | BladeMcqItem | DdrEntityItem | AnalystTaskItem | TaskItem;

/** The codicon each kind of block item shows in the Benchmarks view (one entry per item type; the compiler checks it). */
export const BLOCK_ITEM_ICONS: { readonly [K in BlockItem['type']]: string } = {
  'longda-query': 'question', 'blade-question': 'question', 'blade-mcq': 'checklist', 'ddr-entity': 'person', 'analyst-task': 'question', 'task': 'question',
};

/** A block of work: what one agent run gets. */
export interface Block {
  /** Stable, filesystem-safe id (`[A-Za-z0-9._-]+`), unique within the suite. */
  id: string;
  /** Suite kind this block belongs to. */
  suite: SuiteKind;
  /** Id of the {@link Suite}. */
  suiteId: string;
  title: string;
  items: BlockItem[];
  visible: VisibleResources;
  hidden: HiddenResources;
  /** False when the agent cannot work on it (no data, data.csv missing, ...). Reasons in `problems`. */
  runnable: boolean;
  problems: string[];
  /** LongDA: survey acronym and publication title (`source` column). */
  longda?: { survey: string; source: string };
  /** BLADE / BLADE-MCQ: dataset name and ground-truth decision counts. */
  blade?: { dataset: string; counts: BladeDecisionCounts };
  /** DDR: scenario, entity and checklist size. */
  ddr?: { entityId: string; entityColumn?: string; checklistCount: number };
  /** AnalystBench: manifest file and variant. */
  analyst?: { manifest: string; task: string; variant?: string };
}

// ---------------------------------------------------------------------------------------------
// BLADE annotations (spec §1.2.3)
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------

/** Progress report for long operations (import, download). `total` 0 = unknown. */
export interface Progress {
  phase: string;
  done: number;
  total: number;
  message?: string;
}

export interface LoadSuiteOptions {
  log?: Logger;
  onProgress?: (p: Progress) => void;
  /** LongDA: publications folder (default `<root>/../publications` when it exists). */
  publications?: string;
  /** DDR: `TABLE.COLUMN` naming where entities come from when the root has no `entity_ids.json`. */
  entities?: string;
  /** DDR: where a CSV folder is imported to (default: a cache file under the OS temp dir keyed by root). */
  database?: string;
  /** DDR: checklist file (default `<root>/qa.json`). */
  checklist?: string;
  /** DDR: folder with `entity_ids.json` / `qa.json` / metadata when the root itself is a database file. */
  metadataDir?: string;
  /** DDR: at most this many tables are imported (tests); default all. */
  tableFilter?: (table: string) => boolean;
  /** AnalystBench: environment for `${VAR}` in manifests (default `process.env`). */
  env?: Record<string, string | undefined>;
}

