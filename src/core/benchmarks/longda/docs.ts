/**
 * The documentation index a LongDA run's doc tools search: one per (docs root, file set, cache folder) in this
 * process, so concurrent runs of blocks sharing a survey's documentation (e.g. the NHANES briefs) build and
 * search it once. Source: issue 4 (documentation layer), issue 23 (extraction workers).
 */
import type { LongdaDocs } from './toolset.ts';

const docIndexCache = new Map<string, Promise<LongdaDocs>>();

/**
 * The shared documentation index of a docs root and file set (built on first use; a failed build is retried next time).
 * @param root folder the `files` are relative to; `cacheDir` the index cache folder (default: the docs layer's).
 * @returns the index as the LongDA tools use it.
 */
export function sharedDocIndex(root: string, files: string[], cacheDir: string | undefined): Promise<LongdaDocs> {
  const key = JSON.stringify([root, [...files].sort(), cacheDir ?? '']);
  let p = docIndexCache.get(key);
  if (!p) {
    p = (async () => {
      const { openDocIndex } = await import('../../docs/index.ts');
      // Two extraction workers: the PDFs of a fresh run are read off the calling thread (the VS Code extension host's).
      const idx = await openDocIndex({ root, files, extractWorkers: 2, ...(cacheDir ? { cacheDir } : {}) });
      await idx.build();
      return idx;
    })();
    docIndexCache.set(key, p);
    p.catch(() => docIndexCache.delete(key));
  }
  return p;
}
