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

/** DDR database description (table and column comments, when metadata is available). */
export interface DatabaseInfo {
  /** Absolute path of the SQLite file. Open it read-only. */
  path: string;
  /** Workspace-relative name, e.g. `database.sqlite`. */
  rel: string;
  tables: {
    name: string;
    comment?: string;
    rows?: number;
    columns: { name: string; type: string; comment?: string }[];
  }[];
}

/**
 * What the agent is allowed to see for a block. A benchmark adds its own optional resources (BLADE's dataset
 * description, AnalystBench's instruction, ...) in its folder by declaration merging (`declare module`), so this
 * file names no benchmark.
 */
export interface VisibleResources {
  // A benchmark adds its own visible resources by declaration merging (DDR's `database`); a resource that is a file
  // (`{ path, rel }`) or a list of files is placed in the workspace and listed by the guard (`otherVisibleFiles`).
  /** Data files (CSV, XPT, XLSX, ...). */
  data: VisibleFile[];
  /** Documentation files (PDF, TXT, MD, XLSX codebooks, ...). */
  docs: VisibleFile[];
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

/**
 * What the block is scored against. Never shown to an agent, never copied into a workspace. A benchmark adds its own
 * hidden payload (LongDA's answers, BLADE's annotations, ...) in its folder by declaration merging.
 */
export interface HiddenResources {
  /** Every hidden file backing this block (absolute paths): the leakage guard refuses all of them. */
  files: string[];
}

// ---------------------------------------------------------------------------------------------
// Items
// ---------------------------------------------------------------------------------------------

/** What every block item has: its type (a key of {@link BlockItemTypes}) and an id unique within its block. */
export interface BlockItemBase {
  type: string;
  id: string;
}

/**
 * The item types of the registered benchmarks, by type name. Each benchmark declares its own in its folder
 * (`src/core/benchmarks/<kind>/items.ts`: `declare module '../../suites/types.ts' { interface BlockItemTypes { ... } }`);
 * surfaces show an item through its benchmark's `BenchmarkDefinition.itemTypes`, never by switching on its type.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging in benchmark folders
export interface BlockItemTypes {}

/** Any item of any registered benchmark. */
export type BlockItem = BlockItemTypes[keyof BlockItemTypes];

/** The benchmark-specific fields of a block (LongDA's survey, BLADE's counts, ...), added by declaration merging in each benchmark's folder. */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging in benchmark folders
export interface BlockExtensions {}

/**
 * A block of work: what one agent run gets. Generic over its item type `I` and its hidden payload `H`: a benchmark
 * names its own (`Block<LongdaQuery>`); the default is any registered benchmark's.
 */
export interface Block<
  I extends BlockItemBase = BlockItem,
  H extends HiddenResources = HiddenResources,
> extends BlockExtensions {
  /** Stable, filesystem-safe id (`[A-Za-z0-9._-]+`), unique within the suite. */
  id: string;
  /** Suite kind this block belongs to. */
  suite: SuiteKind;
  /** Id of the {@link Suite}. */
  suiteId: string;
  title: string;
  items: I[];
  visible: VisibleResources;
  hidden: H;
  /** False when the agent cannot work on it (no data, data.csv missing, ...). Reasons in `problems`. */
  runnable: boolean;
  problems: string[];
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

/** Options of a suite loader. A benchmark adds its own (LongDA's `publications`, DDR's `database`, ...) in its folder by declaration merging. */
export interface LoadSuiteOptions {
  log?: Logger;
  onProgress?: (p: Progress) => void;
}
