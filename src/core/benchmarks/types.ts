/**
 * One benchmark = one {@link BenchmarkDefinition}: its loader, task text, tool set, reference agent, options,
 * scorer and aggregator in one typed object, listed in one registry (`registry.ts`). The runner, the CLI,
 * the views and `loupe score` iterate the registry; nothing outside a benchmark's folder compares a suite
 * name (an ESLint rule enforces it). Every member is required: a part a benchmark does not have is written
 * as `null`, so a forgotten part is a compile error, not a silent `default:` branch.
 * Source: issue 12.
 */
import type { AgentRunResult, ModelClient } from '../agent/loop.ts';
import type { ToolSet } from '../agent/types.ts';
import type { Judge } from '../eval/judges/types.ts';
import type { RunScore, ScoreAggregate, ScoringSession } from '../eval/run-score.ts';
import type { RunStore } from '../store/types.ts';
import type { InterventionRecord, RunRecord, Usage } from '../store/records.ts';
import type { RunFolder } from '../store/run-folder.ts';
import type { Block, BlockItem, BlockItemBase, LoadSuiteOptions, Suite } from '../suites/types.ts';
import type { SuiteSourceDef } from '../suites/fetch.ts';
import type { Logger } from '../util/log.ts';
import type { LoadOptionSpec, OptionSpec, OptionValues, ScorePreset } from './options.ts';
import type { ChecklistItemKind } from '../annotations/checklists.ts';
import type { ChecklistItem } from '../suites/types.ts';
import type { Taxonomy } from '../failures/taxonomy.ts';

/**
 * A benchmark scored against a per-block checklist (DDR facts, AnalystBench criteria): what its items are and how
 * its native file is written, so experts can author versions in Loupe (issue 15).
 */
export interface BenchmarkChecklist {
  /** What an item checks. */
  readonly kind: ChecklistItemKind;
  /** The entity an item is about (DDR: the block's entity id), or undefined. */
  entityOf(block: Block): string | undefined;
  /**
   * Writes items in the benchmark's native checklist format so its loader reads them back (DDR `qa.json`;
   * AnalystBench's checklist JSON list). @returns the file written.
   */
  exportNative(block: Block, items: readonly ChecklistItem[], file: string): string;
  /** The block's own checklist, as its files give it (`[]` when the block has none yet). */
  nativeItems(block: Block): readonly ChecklistItem[];
  /** The block scored against `items` instead of its own checklist (an authored version): a copy, `block` unchanged. */
  withItems(block: Block, items: readonly ChecklistItem[]): Block;
  /**
   * The tables and columns an expert's evidence query may read (DDR: the block's database), or null when the block
   * has nothing to query (then the editor offers no query).
   */
  evidenceTables(block: Block): Array<{ name: string; columns: string[] }> | null;
  /** How a suite is loaded with an exported file as its checklist (loader options), or null when the manifest names it. */
  loadWith: ((file: string) => Partial<LoadSuiteOptions>) | null;
  /**
   * Runs an expert's evidence query in the block's database, contained like the agent's SQL tool (read-only, in the
   * sandbox), capped at 100 rows; or null when the benchmark has no database.
   * @throws Error with the database's message (the caller names the item).
   */
  readonly evidenceQuery:
    | ((
        block: Block,
        sql: string,
        o: { sandbox: 'bubblewrap' | 'off' },
      ) => Promise<{ columns: string[]; rows: unknown[][]; rowCount: number; truncated: boolean }>)
    | null;
  /**
   * Problems of items against the block (DDR: a `table.column` source that the database lacks), each naming the
   * item; empty when all is well.
   */
  checkItems(
    block: Block,
    items: ReadonlyArray<{ id: string; question: string; sourceText?: string; evidence?: { sql?: string } }>,
  ): string[];
}

/** Tool-usage heatmap data (LongDA Figure 8): tools × step bins. */
export type { ToolHeatmap } from '../eval/tool-heatmap.ts';
import type { ToolHeatmap } from '../eval/tool-heatmap.ts';

/** A bootstrap mean with its 95% interval (NaN when unknown). */
export interface IntervalEstimate {
  mean: number;
  lo: number;
  hi: number;
}

/** Interval estimates of one model for one category (BLADE: a decision type, or `weighted`). */
export interface CategoryCiRow {
  model: string;
  /** The category (BLADE decision type). */
  type: string;
  precision: IntervalEstimate;
  coverage: IntervalEstimate;
  f1: IntervalEstimate;
  runIds: string[];
}

/**
 * One scored item of a run (a LongDA query, a DDR checklist fact, an AnalystBench criterion) as the timeline and the
 * Results drill-down show it: right / wrong / partial, what the run gave and what was expected (issue 22).
 */
export interface ItemOutcome {
  /** The item's id: for items answered through the answer tool, the `queryId` of the run's answer records. */
  ref: string;
  /** What was asked, one line. */
  question: string;
  /** `right` full credit, `wrong` none, `partial` some, `unanswered` no answer, `pending` not judged yet. */
  verdict: 'right' | 'wrong' | 'partial' | 'unanswered' | 'pending';
  /** Credit in [0, 1] (LongDA match, 1 for a supported fact, criterion score / 5), null while pending. */
  credit: number | null;
  /** What the run gave, as text ('' when nothing). */
  given: string;
  /** What was expected (ground truth), as text: shown only on demand. */
  expected: string;
}

/**
 * How the Results view and `loupe report` present a benchmark's scores. Each part a benchmark does not have is
 * null; the surfaces build every table and figure from these, never from the benchmark's name (issue 12).
 */
export interface BenchmarkPresentation {
  /** Title of the benchmark's table in the Results view (e.g. `LongDA`, `BLADE per run`). */
  readonly tableTitle: string;
  /** The headline metric (a key of the run summary) of the report's model × block table and bar chart, or null. */
  readonly mainMetric: { key: string; label: string; percent: boolean } | null;
  /**
   * Fixed Results-view columns: rates from the run summary, weighted per run by the first of `weightKeys` the
   * summary has (LongDA: its query count), then the runs' steps, tokens and time, and one row per model over all
   * blocks; null for a column per numeric summary metric, averaged per model × block.
   */
  readonly resultsColumns: {
    rates: ReadonlyArray<{ key: string; label: string; description: string }>;
    weightKeys: readonly string[];
  } | null;
  /**
   * The rate plotted against total tokens (Results-view scatter from `rate` of the table above; report figure with
   * its log fit from `point`), or null. Source: LongDA paper Figure 4.
   */
  readonly tokenEfficiency: {
    rate: string;
    title: string;
    /** The run's point, or null when its token use is unknown (an external MCP client, issue 24): left out of the figure. */
    point(
      s: RunScore,
    ): { inputTokens: number; outputTokens: number; matchSum: number; coverageSum: number; queries: number } | null;
  } | null;
  /** Tool-usage heatmaps (LongDA Figure 8): per step from stored steps (Results view) or from a run score (report), or null. */
  readonly toolUsage: {
    /** The tools one step called, as the heatmap counts them (LongDA counts its helpers called inside python code). */
    stepTools(calls: ReadonlyArray<{ name: string; argumentsText: string }>): string[];
    /** The heatmap of trajectories (each a list of steps' tools) over `tools` (default: the benchmark's tools). */
    heatmap(
      trajectories: ReadonlyArray<ReadonlyArray<readonly string[]>>,
      opts?: { tools?: readonly string[]; bins?: number },
    ): ToolHeatmap;
    /** A scored run's steps' tool names and the tools its report heatmap shows. */
    fromScore(s: RunScore): { steps: string[][]; tools: readonly string[] };
  } | null;
  /** Per-category interval estimates from the models' aggregates (BLADE decision types with bootstrap CIs), or null. */
  readonly categoryCis: {
    /** Heading of the Results view's section (e.g. `BLADE: precision, coverage and F1 per decision type`). */
    heading: string;
    caption: string;
    figureTitle: string;
    rows(aggs: readonly ScoreAggregate[]): CategoryCiRow[];
  } | null;
  /**
   * The scored items of a run score with their verdicts (timeline answer marks, Results per-question drill-down), or
   * null when the benchmark scores a run as a whole (BLADE). An empty list for a score without per-item detail.
   */
  readonly itemOutcomes: ((s: RunScore) => ItemOutcome[]) | null;
}

/** What a tool set is built from. */
export interface ToolSetContext {
  block: Block;
  /** Parsed tool-set options (see {@link BenchmarkDefinition.toolOptions}). */
  options: OptionValues;
  agent: 'llm' | 'reference';
  /** Step budget override (undefined: the tool set's default). */
  maxSteps?: number;
  /** Documentation index cache folder. */
  docsCacheDir?: string;
  /** Overrides the documentation provider (tests): the benchmark casts it to its own docs interface. */
  docs?: () => Promise<unknown>;
  /**
   * The run's own model as a plain completion (`complete(system, user, { signal })` → the reply text with the call's
   * tokens and cost at the run's prices; no tools), for tools that ask it (LongDA `find_variables` with
   * `findVariablesDecompose=run-model`). A tool that calls it returns what the calls used as
   * `ToolResult.modelUse` (`addModelUse`), so the step, the run's totals and its budget count them. Absent when the
   * run has no model of Loupe's: the reference agent, an MCP client.
   */
  complete?: (system: string, user: string, opts?: { signal?: AbortSignal }) => Promise<ToolCompletion>;
}

/** One completion a tool asked the run's model for: the reply text, its tokens, and its cost in USD (null: no price set). */
export interface ToolCompletion {
  text: string;
  usage: Usage;
  costUsd: number | null;
}

/** What a run's hooks see. */
export interface RunHookContext {
  store: RunStore;
  runId: string;
  block: Block;
  toolSet: ToolSet;
  /** Parsed tool-set options. */
  options: OptionValues;
}

/** Inputs of a benchmark's scorer for one stored run. */
export interface ScoreContext {
  store: RunStore;
  run: RunRecord;
  /** The run's folder checked against the runs folder this user configured (issue 36): read files only through it (`readRunFile`). */
  folder: RunFolder;
  suite: Suite;
  block: Block;
  judge: Judge;
  /** Scoring options parsed once against {@link BenchmarkDefinition.scoreOptions} (defaults filled in). */
  options: OptionValues;
  /** The raw `name=value` strings as the user gave them (before defaults). */
  raw: Readonly<Record<string, string>>;
  /** Shared resources across the runs of one scoring session (BLADE's Python driver and ground truth). */
  session: ScoringSession;
  /** Caption embedder and other extras of a surface (AnalystBench figures); benchmark-specific. */
  extras: Readonly<Record<string, unknown>>;
  log: Logger;
}

/**
 * Issue 20: after how many human steps an assisted run solved its block (LongDA: every answer within tolerance).
 * `metric` names the aggregate metric (mean over the runs that got there), `label` says it in words.
 */
export interface SolvedAfterInterventions {
  readonly metric: string;
  readonly label: string;
  /** @returns the number of interventions placed before the first step after which the block counted as solved, or null. */
  count(ctx: ScoreContext, interventions: readonly InterventionRecord[]): Promise<number | null>;
}

/** The runs of one model on one benchmark, for {@link BenchmarkDefinition.aggregate}. */
export interface ScoreGroup {
  model: string;
  scores: RunScore[];
}

/** One run of a block as given to {@link BenchmarkDefinition.exportResults}. */
export interface ExportedRun {
  runId: string;
  block: Block;
  repeat: number;
}

/** One decision of a ground truth as the ground-truth view lists it. */
export interface GroundTruthDecision {
  id: string;
  /** Short name (spec name, variable concept). */
  label: string;
  /** Kind within its group (IV / DV / Control / Moderator, a transform verb, a model name). */
  kind: string;
  /** Named fields shown when the decision is selected (code, rationale, conditions, columns, ...). */
  fields: Array<{ name: string; value: string; code?: boolean }>;
}

/** A benchmark's expert ground truth of one block, as the ground-truth view shows it (issue 17). */
export interface GroundTruthView {
  title: string;
  /** The version shown (0 = the shipped file) and every version there is. */
  version: number;
  versions: Array<{ version: number; author: string; createdAt: string; note: string; hash: string; changes: string }>;
  groups: Array<{ title: string; decisions: GroundTruthDecision[] }>;
  /** The decision graph (transforms and their dependencies): node ids are decision ids; `layer` places them left to right. */
  graph: {
    nodes: Array<{ id: string; label: string; layer: number; row: number }>;
    edges: Array<{ from: string; to: string; alternative: boolean }>;
  } | null;
  /** Review rows kept apart from the decisions (candidates and annotators' labels). */
  reviews: Array<{ id: string; kind: string; label: string; verdict: string }>;
  problems: string[];
}

/** Ground truth a benchmark keeps versioned in the store (BLADE's annotations.csv). */
export interface BenchmarkGroundTruth {
  /** The block carries ground truth to show (BLADE: its `annotations.csv` was read). */
  available(block: Block): boolean;
  /** One line about the block's ground truth for the Benchmarks view's tooltip (BLADE: its decision counts), or '' for none. */
  summary(block: Block): string;
  /** The view of a block's ground truth at a version (`latest`: the newest, 0 the shipped file). @throws LoupeInputError for a version that does not exist. */
  view(store: RunStore, block: Block, version: number | 'latest'): Promise<GroundTruthView>;
}

/** A run's output as side-by-side review shows it: a Markdown report, or sections aligned by key (decision type, query, insight list). */
export type ReviewSource = { markdown: string } | { sections: Array<{ key: string; title: string; markdown: string }> };

/** Side-by-side review of a benchmark's runs (issue 16). */
export interface BenchmarkReview {
  /** The run's output to compare, read from the store (answers, tool-set state, events) or its workspace; null when the run produced nothing to review ("no report"). */
  sectionsOf(store: RunStore, run: RunRecord, folder: RunFolder): Promise<ReviewSource | null>;
  /** Criteria voted on pairs of this block's runs when the user sets no rubric (AnalystBench: the block's checklist), or null for the default rubric. */
  criteria(block: Block): string[] | null;
}

/** An item a run's score judged incorrect: what failure analysis samples and experts tag (issue 19). */
export interface FailedItem {
  /** Stable reference within the run (`item 3`, a query id, `criterion 7`). */
  ref: string;
  /** What was asked (checklist question, query, criterion). */
  question: string;
  /** How it failed, in one line (`I_m INCORRECT_INFO, I_t INSUFFICIENT_INFO`, `expected 12.4, got 9.1`, `score 2/5`). */
  detail: string;
}

/** An insight of a run, for the hallucination audit (DDR §7). */
export interface RunInsight {
  /** 0-based position among the run's insights. */
  index: number;
  text: string;
  /** The step it was written after (what the agent saw is that step and those before), or null for the final report. */
  stepIndex: number | null;
}

/** Expert failure-mode analysis of a benchmark's runs (issue 19). */
export interface BenchmarkFailureAnalysis {
  /** The benchmark's failure taxonomy (paper's, or Loupe's own and marked so). */
  readonly taxonomy: Taxonomy;
  /** The scenario or domain of a scored run (DDR: mimic / globem / 10k): the strata of samples and the columns of Fig. 8 and Table 6. */
  scenario(score: RunScore): string;
  /** Items the score judged incorrect, each with a stable ref; empty when none (or the score has no per-item detail). */
  failedItems(score: RunScore): FailedItem[];
  /** The run's insights for the hallucination audit (DDR), or null when the benchmark has none. */
  readonly insights: ((store: RunStore, run: RunRecord) => Promise<RunInsight[]>) | null;
}

/** What a replay has of a run's block (issue 6 replay; issue 40: what a benchmark's replay tools need). */
export interface ReplayContext {
  /** The run's block, when known (a benchmark's replay tool reads its own resources from it: DDR's database). */
  block?: Block;
  /** A database file given apart from the block (tests, tools), which a replay tool prefers to the block's. */
  database?: string;
  /** Sandbox of the replayed calls (the run's own mode). */
  sandbox: 'bubblewrap' | 'off';
  /** Per-call time limit the run used (ms), when known. */
  timeoutMs?: number;
}

/** One open replay of a tool's recorded calls. */
export interface ReplaySession {
  /**
   * Re-runs one recorded call from its arguments text: the code the report shows and the observation to compare with
   * the recorded one; null when the arguments are malformed (they never reached the tool). A failure of the call is
   * part of the observation, never thrown.
   */
  call(argumentsText: string): Promise<{ code: string; observation: string } | null>;
  close(): void;
}

/** A tool of a benchmark whose recorded calls replay re-runs outside the kernel (DDR's SQL queries). */
export interface ReplayTool {
  /** The tool's name in recorded steps (`execute_query`). */
  readonly tool: string;
  /** The replay report's action kind (`sql`). */
  readonly kind: string;
  /** Its calls in words, plural (`SQL queries`). */
  readonly actions: string;
  /** What the replay lacks to re-run them (`the database`), or null when it has all it needs. */
  missing(ctx: ReplayContext): string | null;
  /** Opens the tool for a replay. @throws Error (e.g. LoupeInputError('loupe.sandbox') when bubblewrap is missing). */
  open(ctx: ReplayContext): ReplaySession;
}

/** One named field of an item as the item view shows it (`code`: shown as code). */
export interface ItemField {
  name: string;
  value: string;
  code?: boolean;
}

/**
 * How the surfaces show one item type of a benchmark (issue 40): the Benchmarks view's icon, label and tooltip, the
 * item view's question and — on a reviewer's request only — its ground truth. The surfaces never switch on item types.
 */
export interface ItemTypeView<I extends BlockItemBase = BlockItem> {
  /** Codicon id in the Benchmarks view (`question`, `person`, `checklist`, ...). */
  readonly icon: string;
  /** Label and tooltip text of the item in the Benchmarks view; never a hidden value. */
  describe(item: I): { label: string; detail: string };
  /** The item as the agent sees it: title, text and named fields; never a hidden value. */
  view(item: I): { title: string; text: string; fields: ItemField[] };
  /** The hidden ground truth of the item as named fields (empty when the block holds none for it). @param block the item's block. */
  groundTruth(block: Block, item: I): ItemField[];
  /** Fields of the item that are hidden (ground truth): removed before the item is shown to an agent (LongDA: `groundTruth`, `answerText`). */
  readonly hiddenFields: readonly string[];
}

/** One {@link ItemTypeView} per item type of a benchmark's item union `I` (the compiler checks that none is missing). */
export type ItemTypeViews<I extends BlockItemBase> = {
  readonly [K in I['type']]: ItemTypeView<Extract<I, { type: K }>>;
};

/**
 * A benchmark as Loupe runs and scores it: one per folder `src/core/benchmarks/<kind>/` (its `index.ts`), listed once in
 * `BUILTIN` of `registry.ts`. Every member is required; a part the benchmark does not have is `null`. See CONTRIBUTING.md
 * "Adding a benchmark".
 * Its item types, resources and loader options are declared in its folder (`items.ts`, declaration merging into
 * `suites/types.ts`); the surfaces reach them only through these members (issue 40).
 */
export interface BenchmarkDefinition {
  /** Registry key and the run's `suite` (`longda`, `blade`, ...): lower case, as typed in `--suite`. */
  readonly kind: string;
  /** Display name (`LongDA`, `DDR-Bench`). */
  readonly title: string;
  /** One line: what an agent does and how it is scored. */
  readonly description: string;
  /** Reads the benchmark in its native layout from `root`. @throws LoupeInputError for a root that is missing, empty or not this benchmark. */
  load(root: string, opts: LoadSuiteOptions): Promise<Suite>;
  /** The benchmark-specific part of the agent's task text (TASK.md and the first prompt): instructions and items, never answers. */
  taskText(block: Block): string[];
  /** The documentation files of a suite root (relative paths) for documentation search, or null when the benchmark has no documentation corpus. @throws LoupeInputError for a root or survey without documentation. */
  readonly docFiles: ((root: string, survey?: string) => string[]) | null;
  /** How the surfaces show each item type its loader produces (Benchmarks view icon and label, item view). */
  readonly itemTypes: { readonly [type: string]: ItemTypeView<BlockItemBase> };
  /**
   * Its official download sources by the name `loupe fetch` takes (`benchmarks/<kind>/source.json`; DDR also offers
   * the MIMIC-IV demo), in display order; `{}` when it has none.
   */
  readonly downloadSources: Readonly<Record<string, SuiteSourceDef>>;
  /** Tools whose recorded calls replay re-runs outside the kernel (DDR: `execute_query`), `[]` when none. */
  readonly replayTools: readonly ReplayTool[];
  /** Loader options this benchmark reads (DDR `entities`, `database`, ...), declared once: the CLI builds their flags and help from these (issue 40). */
  readonly loadOptions: readonly LoadOptionSpec[];
  /** Its scores need no judge (tolerance or exact matching): surfaces may score its runs on their own. */
  readonly judgeFree: boolean;
  /**
   * The benchmark's natural cluster unit, what one block is (`publication`, `dataset`, `entity`, `task`): the items of a
   * block (its queries, checklist items) are not independent, so clustered standard errors (issue 48,
   * `src/core/stats`) cluster on the block and name it this way.
   */
  readonly clusterUnit: string;
  /** Extra fields of a block in listings (`loupe blocks --json`, Benchmarks view). */
  listingFields(block: Block): Record<string, unknown>;
  /**
   * How a block is summarised and named beyond its id (issue 40: generic surfaces never read a benchmark's block
   * fields): `text`, one line of what the block holds (`loupe blocks`; BLADE: `12 cvars/3 transforms/4 models`), ''
   * for none; `names`, the other names a block is found by (BLADE: its dataset), `[]` for none. Null when the
   * benchmark has neither.
   */
  readonly blockSummary: ((block: Block) => { text: string; names: readonly string[] }) | null;
  /** Named tool-set options (`--tool-option`), recorded with each run. */
  readonly toolOptions: readonly OptionSpec[];
  /** Named scoring options (`--option`), echoed in every score. */
  readonly scoreOptions: readonly OptionSpec[];
  /** The agent's tools, system prompt and block prompt. @throws LoupeInputError for a bad option value. */
  toolSet(ctx: ToolSetContext): ToolSet;
  /** The `reference` agent (a model client that submits a known-good solution), or null when the benchmark has none. */
  readonly referenceAgent: ((block: Block, o: { referenceDir?: string }) => ModelClient) | null;
  /** Python modules the kernel may import (an allowlist, e.g. LongTA's), or null for any installed module. */
  readonly kernelImportAllowlist: readonly string[] | null;
  /** The block as its workspace presents it under these tool options (AnalystBench's "instruction only" hides the sources), or null to use it as it is. */
  readonly workspaceBlock: ((block: Block, options: OptionValues) => Block) | null;
  /** Wraps the model for per-step extras (DDR's message-wise insight calls), or null. */
  readonly prepareModel: ((model: ModelClient, ctx: RunHookContext) => ModelClient) | null;
  /** Runs after the agent loop (DDR records its insights and final report), or null. */
  readonly completeRun: ((model: ModelClient, ctx: RunHookContext, status: string) => Promise<void>) | null;
  /** Runs the block without the agent loop (BLADE MCQ asks one question per call), or null to use the loop. */
  readonly runWithoutLoop:
    | ((o: {
        store: RunStore;
        runId: string;
        block: Block;
        model: ModelClient;
        signal?: AbortSignal;
      }) => Promise<AgentRunResult>)
    | null;
  /** Scores one stored run. Throw only for bad options (LoupeInputError); a failure of the run is `error` in the result. */
  score(ctx: ScoreContext): Promise<RunScore>;
  /** Combines the scored runs of this benchmark, one group per model, the way the benchmark's paper or code does. */
  aggregate(
    groups: ScoreGroup[],
    ctx: { judge?: Judge; options: OptionValues; raw: Readonly<Record<string, string>> },
  ): Promise<ScoreAggregate[]>;
  /** One text line of a run's score (`loupe score` without `--json`), after the run's id, block and model. */
  scoreLine(s: RunScore): string;
  /** Fields added to a run's `loupe score --json` line (LongDA's per-query rows), or null to print `detail`. */
  readonly scoreJson: ((s: RunScore) => Record<string, unknown>) | null;
  /** A score that needs no judge, put on each `loupe run --json` line (LongDA's match and coverage), or null. */
  readonly runLineScore: ((store: RunStore, runId: string, block: Block) => Promise<Record<string, unknown>>) | null;
  /** The block checklist experts can author and version, or null when the benchmark has none. */
  readonly checklist: BenchmarkChecklist | null;
  /** How the Results view and the report show its scores. */
  readonly presentation: BenchmarkPresentation;
  /** What side-by-side review shows of a run and the criteria it votes on. */
  readonly review: BenchmarkReview;
  /**
   * The files of a run's workspace that its score, side-by-side review, failure tagging or results export read as
   * evidence (AnalystBench: `report.md` and its figures), paths relative to the workspace, most important first; or
   * null when they read nothing from the workspace (answers and tool-set state are rows of the store). Issue 26: these
   * are kept in the store before anything else the agent wrote, so a flood of other files cannot push them out of the
   * per-run bounds (`captureRunArtefacts`).
   */
  readonly evidenceFiles: ((store: RunStore, run: RunRecord) => Promise<string[]>) | null;
  /** The expert ground truth experts can see and version (BLADE), or null. */
  readonly groundTruth: BenchmarkGroundTruth | null;
  /**
   * Writes the benchmark's own results files for runs (`loupe run --results DIR`), or null when it has none. `runsRoot`
   * the runs folder this user configured (issue 36: a run's files are read from its folder only when it lies inside,
   * else from the store's copy; null: the store's copy only). @returns files written.
   */
  readonly exportResults:
    ((store: RunStore, runs: ExportedRun[], dir: string, runsRoot: string | null) => Promise<string[]>) | null;
  /** Issue 20: when an assisted run counts as having solved its block, or absent/null when the benchmark has no such rule. */
  readonly solvedAfterInterventions?: SolvedAfterInterventions | null;
  /** Failure-mode analysis: taxonomy, failed items, insights (issue 19), or null. */
  readonly failureAnalysis: BenchmarkFailureAnalysis | null;
  /** Scores the benchmark's own output files (its harness's results), without a store (`loupe score --native-outputs`), or null when it has none. */
  readonly importNativeOutputs: NativeOutputs | null;
}

/**
 * A benchmark's own output files scored without a store (issue 40: `loupe score --native-outputs PATH --suite S`):
 * what PATH is, the further inputs it needs, and the scorer.
 */
export interface NativeOutputs {
  /** What PATH is, one line for help (`LongTA's answers_progress.csv`). */
  readonly help: string;
  /** Whether several PATHs may be given (BLADE: files or dataset folders). */
  readonly multiple: boolean;
  /** The flag this format had before `--native-outputs` (`longda-answers`), kept as an alias, or null. */
  readonly alias: string | null;
  /** Further inputs by name (DDR's `qa`, LongDA's `ground-truth`): given as `--NAME VALUE`; `path` ones resolved against the working folder. */
  readonly inputs: ReadonlyArray<{
    readonly name: string;
    readonly value: string;
    readonly help: string;
    readonly path: boolean;
    readonly required: boolean;
    readonly default?: string;
  }>;
  /** What the suite root (`--root`) is to this format when it is needed (BLADE: the datasets with their ground truth), or null. */
  readonly root: string | null;
  /**
   * Scores the files. @returns `json` (printed with `--json`), `lines` (the text report), `failed` (exit code 1).
   * @throws LoupeInputError naming the file, row or option at fault.
   */
  score(o: NativeOutputsContext): Promise<{ json: Record<string, unknown>; lines: string[]; failed: boolean }>;
}

/** What {@link NativeOutputs.score} is given. */
export interface NativeOutputsContext {
  /** The PATHs given, absolute. */
  paths: string[];
  /** The suite root, absolute, when given. */
  root: string | undefined;
  /** The further inputs given, by name (paths absolute). */
  inputs: Readonly<Record<string, string>>;
  /** The judge chosen (built on first use: a benchmark that needs none never builds it). */
  judge: () => Judge;
  /** Scoring options as typed (`name=value`), and the preset. */
  raw: Readonly<Record<string, string>>;
  preset: ScorePreset;
}
