/**
 * Where a benchmark's own files of this checkout or package live (`benchmarks/<kind>/` at the repository or
 * package root: reference solutions, download sources). Source: issue 5 (reference agent).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Default folder of reference scripts for a benchmark (works from source and from dist/).
 * @param kind the benchmark kind. @returns `benchmarks/<kind>/reference` (the first candidate when none exists).
 */
export function defaultReferenceDir(kind: string): string {
  const here = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
  const candidates = [
    join(here, '..', '..', '..', 'benchmarks', kind, 'reference'),
    join(here, '..', 'benchmarks', kind, 'reference'),
  ];
  return candidates.find((c) => existsSync(c)) ?? candidates[0]!;
}

/**
 * The folder of a benchmark shipped as a manifest (`benchmarks/<kind>/` holding `loupe-benchmark.yaml`), from source
 * and from dist/. @param kind the folder name. @returns its absolute path (the first candidate when none exists).
 * Source: issue 44.
 */
export function shippedBenchmarkDir(kind: string): string {
  const here = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, '..', '..', '..', 'benchmarks', kind), join(here, '..', 'benchmarks', kind)];
  return candidates.find((c) => existsSync(join(c, 'loupe-benchmark.yaml'))) ?? candidates[0]!;
}
