/**
 * The documentation index a LongDA run's doc tools search: one per (docs root, file set, cache folder) in this
 * process, so concurrent runs of blocks sharing a survey's documentation (e.g. the NHANES briefs) build and
 * search it once. The build is the docs layer's shared build (`src/core/docs/shared-build.ts`): a run takes a lease
 * when it starts, and its tools wait only for the stage they read.
 * Source: issue 4 (documentation layer), issue 23 (extraction workers; the first search of a fresh run).
 */
import { acquireDocIndex, type DocIndexLease } from '../../docs/shared-build.ts';
import type { LongdaDocs } from './toolset.ts';

/**
 * A lease on the shared documentation index build of a docs root and file set (started now when none is running or
 * done; see {@link acquireDocIndex}). Release it when the run ends: the last release of an unfinished build aborts it.
 * @param root folder the `files` are relative to; `cacheDir` the index cache folder (default: the docs layer's).
 */
export function docIndexLease(root: string, files: string[], cacheDir: string | undefined): DocIndexLease {
  return acquireDocIndex(root, files, cacheDir);
}

/**
 * The shared documentation index of a docs root and file set, complete (built on first use; a failed build is retried
 * next time). Its lease is never released: the build, once started here, runs to its end (the MCP server's resources).
 * @param root folder the `files` are relative to; `cacheDir` the index cache folder (default: the docs layer's).
 * @returns the index as the LongDA tools use it (a full `DocIndex`).
 */
export function sharedDocIndex(root: string, files: string[], cacheDir: string | undefined): Promise<LongdaDocs> {
  return acquireDocIndex(root, files, cacheDir).built();
}
