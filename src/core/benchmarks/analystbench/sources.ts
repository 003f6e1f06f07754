/**
 * The block's own files AnalystBench scoring reads: its source documents and data (text ones) and the hidden
 * reference report. These are suite files (the originals the block's manifest names, read-only inputs), never the
 * run's workspace: what the agent wrote is read through `readRunFile` (`store/artefacts.ts`) in `score.ts`. This file
 * is one of the few exceptions of the contained-file lint rule (eslint.config.mjs) for that reason.
 * Source: AnalystBench paper §4 (claims checked against the sources); issue 36 (contained file API).
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname } from 'node:path';
import type { Block } from '../../suites/types.ts';

const TEXT_EXT = new Set(['.md', '.txt', '.csv', '.json', '.tsv', '.html', '.htm']);

/**
 * The text of the block's text sources (`.md .txt .csv .json .tsv .html`), each prefixed with `[rel]`, up to
 * `maxBytes` in total (bytes).
 * @returns the texts and the relative paths skipped (not text, too many bytes, unreadable). Never throws.
 */
export function readSourcesText(block: Block, maxBytes = 20_000_000): { texts: string[]; skipped: string[] } {
  const texts: string[] = [];
  const skipped: string[] = [];
  let used = 0;
  for (const f of [...block.visible.docs, ...block.visible.data]) {
    if (!TEXT_EXT.has(extname(f.path).toLowerCase())) {
      skipped.push(f.rel);
      continue;
    }
    try {
      const size = statSync(f.path).size;
      if (used + size > maxBytes) {
        skipped.push(f.rel);
        continue;
      }
      texts.push(`[${f.rel}]\n${readFileSync(f.path, 'utf8')}`);
      used += size;
    } catch {
      skipped.push(f.rel);
    }
  }
  return { texts, skipped };
}

/**
 * The bytes of a block's reference report (a suite file), or null when it does not exist.
 * @param path the report's absolute path (`block.hidden.referenceReport`).
 * @throws Error from the file system for an unreadable file.
 */
export function readReferenceReport(path: string): Buffer | null {
  return existsSync(path) ? readFileSync(path) : null;
}
