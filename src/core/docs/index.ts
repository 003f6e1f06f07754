/**
 * Documentation index and search (issue 4): entry point. `openDocIndex` opens (or creates) the SQLite
 * cache for a docs root; `build()` extracts document units (spec §2.3) and builds the rankers.
 * The agent runtime wires `readDoc` / `searchDoc` / `retrieve` to LongTA's `read_doc` / `search_doc` /
 * `retriever`; the Documentation Search panel uses `search`, `units` and `report`.
 */
import { openDocIndexSync } from './doc-index.ts';
import type { DocIndex, DocIndexOptions } from './types.ts';

export { EXTRACTOR_VERSION, EXTRACTOR_VERSIONS, RANKER_VERSION, hasDocCache } from './doc-index.ts';
export { DEFAULT_PDF_EXTRACTOR, PDF_EXTRACTORS, parsePdfExtractor, type PdfExtractor } from './pdf.ts';
export { extractUnits, unitKindFor } from './units.ts';
export { codebookTokens, longtaTokens, splitChunks } from './text.ts';
export { parseRange } from './format.ts';
export { defaultDocsCacheDir, docsFolderFiles } from './roots.ts';

export type {
  BuildProgress,
  BuildSchedule,
  DocHit,
  DocIndex,
  DocIndexOptions,
  DocUnit,
  IndexedFile,
  IndexReport,
  SearchMode,
  SearchOptions,
  SkippedFile,
  ToolResult,
  ToolScope,
  UnitKind,
} from './types.ts';

/**
 * Opens the documentation index of `opts.root`, cached in `opts.cacheDir` (one SQLite file per root,
 * WAL mode, busy timeout, so the extension and the CLI can open it at once).
 * @param opts see {@link DocIndexOptions}.
 * @returns an open {@link DocIndex}; call `build()` before searching (cheap when nothing changed).
 * @throws LoupeInputError when `root` is not a folder.
 * Source: spec §2.3 (LongTA `tools/common.py` units, `tools/retriever.py`).
 */
export async function openDocIndex(opts: DocIndexOptions): Promise<DocIndex & { readonly cachePath: string }> {
  return openDocIndexSync(opts);
}
