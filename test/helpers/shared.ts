/** Where tests and perf find the real benchmark data: $LOUPE_SHARED, default ../shared beside the repo. */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

export function sharedDir(): string {
  return resolve(process.env.LOUPE_SHARED ?? join(repoRoot, '..', 'shared'));
}

/** Absolute path of a file under shared/data; throws a clear error when the data is not there. */
export function sharedData(...parts: string[]): string {
  const p = join(sharedDir(), 'data', ...parts);
  if (!existsSync(p)) throw new Error(`Test data not found: ${p} (set LOUPE_SHARED to the folder holding data/)`);
  return p;
}
