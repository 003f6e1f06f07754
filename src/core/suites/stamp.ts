/**
 * The `.loupe-fetch.json` stamp `loupe fetch` writes at the top of a downloaded suite: where it
 * came from and which revision. Loaders read it to fill `Suite.source` / `Suite.version`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const FETCH_STAMP = '.loupe-fetch.json';

export interface FetchStamp {
  suite: string;
  upstream: string;
  revision?: string;
  fetchedAt: string;
  files: { path: string; size: number; sha256?: string }[];
}

/**
 * Reads `<dir>/.loupe-fetch.json`.
 * @returns the stamp, or undefined when absent or unreadable (never throws).
 */
export function readFetchStamp(dir: string): FetchStamp | undefined {
  try {
    const j = JSON.parse(readFileSync(join(dir, FETCH_STAMP), 'utf8')) as FetchStamp;
    return typeof j === 'object' && j && typeof j.upstream === 'string' ? j : undefined;
  } catch {
    return undefined;
  }
}
