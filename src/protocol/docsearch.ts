/**
 * Protocol of the Documentation Search panel: search a suite's (or one block's) documentation with the same
 * index the agent's tools use, read whole units, render PDF pages.
 *
 * Flow: the webview sends `WebviewReadyRequest` and receives a {@link DocSearchState}. While the index builds,
 * the host posts {@link DidChangeIndexNotification}. The webview then sends {@link SearchDocsRequest},
 * {@link ReadUnitRequest} and, for "Open page" on a PDF, {@link GetPdfRequest} (the host serves the bytes; the
 * webview never loads a file URL outside its resource roots).
 *
 * Hook for other panels (e.g. the run timeline replaying a run's own searches): the host command
 * `loupe.searchDocumentation` takes a {@link DocSearchOpenArgs}; an already open panel receives it as
 * {@link DidPrefillNotification}.
 */
import { IpcNotification, IpcRequest } from './ipc.ts';

/** `keyword`: exact, case-insensitive substring (the agent's search_doc). `bm25`: Loupe's ranking.
 * `longta`: LongTA's own retriever (whitespace tokens, case-sensitive, 500/100-char chunks). */
export type SearchMode = 'keyword' | 'bm25' | 'longta';

export const SEARCH_MODES: readonly { mode: SearchMode; label: string }[] = [
  { mode: 'bm25', label: 'BM25' },
  { mode: 'keyword', label: 'Keyword' },
  { mode: 'longta', label: 'LongTA' },
];

/** What the panel searches: a whole suite root or one block's documentation. */
export interface DocSearchTarget {
  /** Suite kind as in `loupe.suites` (`longda`, `blade`, ...), or `folder` for a plain folder. */
  suite: string;
  /** Absolute suite root (or folder). */
  root: string;
  /** Block id when the panel is scoped to one block. */
  blockId?: string;
  /** The suite's root as configured in `loupe.suites`, when `root` is a block's documentation root. */
  suiteRoot?: string;
  /** Shown in the panel header, e.g. "NHANES · NCHS Data Brief No. 508". */
  title: string;
}

/** A search the panel should show on open (a run's own search, a replay). */
export interface DocSearchPrefill {
  query: string;
  mode?: SearchMode;
  /** Restrict to these files (relative to the target root). */
  files?: string[];
  /** Select this hit once results arrive (matched by file and unit label). */
  select?: { file: string; unit: string };
  /** Searches to list under "Searches" so they can be replayed one by one (e.g. all searches of a run). */
  history?: DocSearchHistoryEntry[];
}

export interface DocSearchHistoryEntry {
  /** Short label, e.g. "step 4 · search_doc". */
  label: string;
  query: string;
  mode: SearchMode;
  files?: string[];
  /** What the agent was shown / opened, when known (file + unit label). */
  opened?: { file: string; unit: string }[];
}

/** Arguments of the command `loupe.searchDocumentation` (all optional: without a target the user picks one). */
export interface DocSearchOpenArgs extends Partial<DocSearchPrefill> {
  target?: DocSearchTarget;
  /** A run: the panel opens on its block's documentation and lists the run's own searches for replay. */
  runId?: string;
  /** Shorthand for `files: [file]` (a tool call's `doc_path`). */
  file?: string;
}

export interface DocFileInfo {
  /** Path relative to the target root, `/`-separated. */
  file: string;
  /** `pdf`, `text`, `json`, `csv`, `xlsx`, ... */
  kind: string;
  units: number;
}

export interface IndexStatus {
  state: 'idle' | 'building' | 'ready' | 'error';
  /** Files processed so far / in total while building. */
  done: number;
  total: number;
  /** File being processed, or the error message. */
  message?: string;
  /** Files the index could not read, with the reason (corrupt PDF, binary, too large, ...). */
  skipped: { file: string; reason: string }[];
}

export interface DocSearchState {
  target?: DocSearchTarget;
  files: DocFileInfo[];
  index: IndexStatus;
  prefill?: DocSearchPrefill;
}

export interface DocHit {
  /** Relative to the target root. */
  file: string;
  /** Unit label: "Page 3", "Line 120", "Row 7". */
  unit: string;
  /** Character offsets of the hit inside the unit's text. */
  start: number;
  end: number;
  score: number;
  /** Text around the hit, as the agent would see it. */
  snippet: string;
  /** Near-duplicate hits (same text in other files or units) collapsed into this one, best first. */
  alsoIn?: { file: string; unit: string; score: number }[];
}

export interface SearchParams {
  query: string;
  mode: SearchMode;
  /** Empty or absent: all files of the target. */
  files?: string[];
  top?: number;
}

export interface SearchResult {
  hits: DocHit[];
  /** Wall time of the search on the host, ms. */
  elapsedMs: number;
}

export interface UnitContent {
  file: string;
  unit: string;
  text: string;
  /** One-based PDF page number when the file is a PDF. */
  page?: number;
}

export const SearchDocsRequest = new IpcRequest<SearchParams, SearchResult>('docs/search');
export const ReadUnitRequest = new IpcRequest<{ file: string; unit: string }, UnitContent>('docs/readUnit');
/** The PDF's bytes (an ArrayBuffer travels efficiently through webview postMessage since VS Code 1.57). */
export const GetPdfRequest = new IpcRequest<{ file: string }, { file: string; data: ArrayBuffer }>('docs/getPdf');
/** Asks the host to (re)build the index, e.g. after files changed. */
export const RebuildIndexRequest = new IpcRequest<Record<string, never>, void>('docs/rebuild');
/** Opens the file in an editor (text files at the unit's line). */
export const RevealFileRequest = new IpcRequest<{ file: string; unit?: string }, void>('docs/reveal');

export const DidChangeIndexNotification = new IpcNotification<{ index: IndexStatus; files: DocFileInfo[] }>(
  'docs/didChangeIndex',
);
export const DidPrefillNotification = new IpcNotification<{ target?: DocSearchTarget; prefill: DocSearchPrefill }>(
  'docs/didPrefill',
);
