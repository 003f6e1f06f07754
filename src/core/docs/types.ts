/**
 * Public types of the documentation layer (issue 4). The agent runtime's `read_doc` / `search_doc` /
 * `retriever` tools and the VS Code "Documentation Search" panel both use these shapes, so an analyst
 * sees exactly what the agent could find. Source: spec §2.3 (LongTA `tools/common.py`, `tools/*.py`).
 */
import type { ParsedDoc } from './catalog.ts';
import type { PdfExtractor } from './pdf.ts';

/** How a file is split into units (spec §2.3 "Document units"). */
export type UnitKind = 'Page' | 'Line' | 'Row';

/** One document unit: a PDF page, a text line or a table row. `label` is e.g. "Page 3". */
export interface DocUnit {
  /** 0-based position of the unit in its file. */
  index: number;
  /** "Page n" / "Line n" / "Row n" (1-based n), exactly as LongTA labels it. */
  label: string;
  /** Whitespace-collapsed text of the unit (LongTA collapses whitespace). */
  text: string;
}

/**
 * Ranking mode.
 * - `bm25`: Loupe's default: Okapi BM25 over chunks with the codebook-aware tokenizer (case-insensitive,
 *   keeps variable names like `WTMEC2YR` whole), file-name/variable-name aware.
 * - `keyword`: exact case-insensitive substring over units (what `search_doc` does), all docs.
 * - `longta`: faithful to LongTA's `retriever`: whitespace tokens, no lowercasing, 500/100 char chunks
 *   (RecursiveCharacterTextSplitter), rank_bm25 `BM25Okapi` (k1 = 1.5, b = 0.75, epsilon = 0.25).
 */
export type SearchMode = 'bm25' | 'keyword' | 'longta';

/** One structured hit, for the UI and the run store. Offsets are character offsets into the unit text. */
export interface DocHit {
  /** Path relative to the index root, `/`-separated. */
  file: string;
  /** Unit label, e.g. "Page 12". */
  unit: string;
  /** 0-based unit index in the file. */
  unitIndex: number;
  /** Start offset (chars) of the match or chunk in the unit text. */
  start: number;
  /** End offset (exclusive) of the match or chunk in the unit text. */
  end: number;
  /** Ranking score (BM25 score; 1 for exact keyword hits, in order of appearance). */
  score: number;
  /** Short text shown for the hit (LongTA snippet rules in `longta` mode). */
  snippet: string;
  /** Chunk number within the unit (0-based) for chunk-based modes. */
  chunk?: number;
}

/** What an agent tool returns: the text the agent sees (LongTA format) and structured hits. */
export interface ToolResult {
  text: string;
  hits: DocHit[];
}

/** One indexed file in the report. */
export interface IndexedFile {
  file: string;
  kind: UnitKind;
  units: number;
  chunks: number;
  bytes: number;
  /** sha256 of the file content (hex). */
  hash: string;
  /** Something worth knowing (decoding fallback, empty text layer, extra sheets, HTML reduced to text). */
  note?: string;
}

/** A file that could not be indexed, with the reason (shown in the CLI report and the panel). */
export interface SkippedFile {
  file: string;
  reason: string;
}

/** Result of `build()` / `report()`. */
export interface IndexReport {
  root: string;
  /** Path of the SQLite cache file. */
  cachePath: string;
  files: IndexedFile[];
  skipped: SkippedFile[];
  units: number;
  chunks: number;
  /** Files whose units were extracted in this build (others were reused by content hash). */
  extracted: number;
  reused: number;
  /** Wall time of the last build in milliseconds (0 when only opened). */
  ms: number;
  /** Wall time per build phase (extractMs includes scanning and hashing; one entry per ranker). */
  phases?: Record<string, number>;
  /** The PDF text extractor whose text the index holds (`DocIndexOptions.pdfExtractor`). */
  pdfExtractor?: PdfExtractor;
}

/** Progress of a build: `done` of `total` files; `file` is the one being processed. */
export interface BuildProgress {
  phase: 'scan' | 'extract' | 'index' | 'done';
  done: number;
  total: number;
  file?: string;
}

/**
 * The order a build takes its files in and the moment each one is current (issue 23: the first search of a fresh run
 * waits only for what it reads). Called in the building thread, between files; none of them may throw.
 */
export interface BuildSchedule {
  /** Before each file is taken: a pending path (relative, posix) to take next, or undefined for the default order (the root's sorted listing). */
  next?(pending: ReadonlySet<string>): string | undefined;
  /** Once per file when its row is current for this build (reused, unsupported, extracted or failed): the read tools can read it. */
  fileReady?(rel: string): void;
  /** Once, when every file of the build is current (before the rankers and the catalog are built): keyword search over all files can run. */
  extracted?(): void;
}

/** Options of `openDocIndex`. */
export interface DocIndexOptions {
  /** Folder the docs live in; every `file` is relative to it. */
  root: string;
  /** Folder for the SQLite cache (one file per root). Default: the user's docs cache, `defaultDocsCacheDir()` (`$LOUPE_CACHE/docs`, else `$XDG_CACHE_HOME/loupe/docs`, else `~/.cache/loupe/docs`), where `loupe index` builds by default. */
  cacheDir?: string;
  /** Allowlist of files (relative to root). When given, nothing else is indexed or readable. */
  files?: string[];
  /**
   * Documents named one way and read from another path (issue 36): name (a relative path, as the agent sees it in its
   * workspace) → absolute path of the file actually read (the suite's own copy). When given, these names are the
   * allowlist (`files` is ignored), `root` is walked for nothing and only names the cache, and nothing under `root`
   * is read: an index never reads an agent-writable folder (a run or task workspace) through a link planted there.
   */
  sources?: Record<string, string>;
  /** Chunk size in characters for the default `bm25` mode (default 500). `longta` always uses 500/100. */
  chunkChars?: number;
  /** Chunk overlap in characters for the default mode (default 100). */
  overlap?: number;
  /**
   * Files extracted at once, each in its own worker thread (default 1: one worker, so extraction never runs on the
   * calling thread — in VS Code the extension host's); 0 extracts in the calling thread. Without the worker module
   * (see `extractWorkerPath`) extraction falls back to the calling thread.
   */
  extractWorkers?: number;
  /**
   * PDF text extractor (see `pdf.ts`): `pdfium` (default) or `pdfjs` (Loupe's extractor before issue 23). The index's
   * units, rankers and variable catalog are those of this extractor's text; switching re-extracts the PDFs.
   */
  pdfExtractor?: PdfExtractor;
  /** Cancels a running build; the index stays consistent (work done so far is kept). */
  signal?: AbortSignal;
  onProgress?: (p: BuildProgress) => void;
}

/** Options of `DocIndex.search`. */
export interface SearchOptions {
  mode?: SearchMode;
  /** Number of hits to return (default 10). */
  top?: number;
  /** Restrict to these files (relative paths); intersected with the index allowlist. */
  files?: string[];
  /** `bm25` mode: add survey-documentation synonyms to the query (default true). */
  expand?: boolean;
}

/** Per-call restriction of the agent tools to a block's visible files. */
export interface ToolScope {
  /** Allowed files (relative to root). Anything else is reported as not available. */
  files?: string[];
}

/** An open documentation index. */
export interface DocIndex {
  readonly root: string;
  /** Scans the root, extracts new/changed files (by content hash), rebuilds the rankers when needed. */
  build(opts?: {
    signal?: AbortSignal;
    onProgress?: (p: BuildProgress) => void;
    schedule?: BuildSchedule;
  }): Promise<IndexReport>;
  /** Ranked hits over all (allowed) docs. Call `build()` first. */
  search(query: string, opts?: SearchOptions): DocHit[];
  /** All units of one indexed file (for "show the whole unit"). Throws `LoupeInputError` if unknown. */
  units(file: string): DocUnit[];
  /** LongTA `read_doc`: preview (no range) or one-based ranges like "1-3,5". */
  readDoc(path: string, range?: string, scope?: ToolScope): ToolResult;
  /** LongTA `search_doc`: exact case-insensitive search; all allowed docs when `path` is omitted. */
  searchDoc(keyword: string, path?: string, maxMatches?: number, contextChars?: number, scope?: ToolScope): ToolResult;
  /** LongTA `retriever`: BM25 top-k chunks. `mode` defaults to `longta` (the agent's tool). */
  retrieve(
    query: string,
    path?: string,
    k?: number,
    opts?: ToolScope & { mode?: 'bm25' | 'longta'; contextChars?: number },
  ): ToolResult;
  /**
   * Variable definitions parsed from each indexed file (issue 25; parsed at `build()`, cached per
   * content hash). Files no parser recognises have no variables; codebooks that fail carry `error`.
   */
  catalog(): Array<ParsedDoc & { doc: string }>;
  /** Files, units and skipped files with reasons of the current index. */
  report(): IndexReport;
  close(): void;
}
