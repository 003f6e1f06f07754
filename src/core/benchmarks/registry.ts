/**
 * The one list of benchmarks Loupe knows. The runner, the CLI, the views and `loupe score` look a benchmark
 * up here by the run's or block's `suite`; adding a benchmark = its folder plus one line in {@link BUILTIN}.
 * Test-only benchmarks are added at run time with {@link registerBenchmark} (never in a shipped bundle).
 * Source: issue 12.
 */
import { LoupeInputError } from '../util/errors.ts';
import { analystbench } from './analystbench/index.ts';
import { blade, bladeMcq } from './blade/index.ts';
import { ddr } from './ddr/index.ts';
import { longda } from './longda/index.ts';
import type { BenchmarkDefinition } from './types.ts';

/** The shipped benchmarks, in display order. */
const BUILTIN: readonly BenchmarkDefinition[] = [longda, blade, bladeMcq, ddr, analystbench];

// Kept on globalThis: a test bundle (out/test/*.js) has its own copy of this module, and its registrations must
// reach the extension's copy.
const KEY = Symbol.for('loupe.benchmarks.extra');
const extra: BenchmarkDefinition[] = ((globalThis as Record<symbol, unknown>)[KEY] as BenchmarkDefinition[] | undefined) ?? ((globalThis as Record<symbol, unknown>)[KEY] = []) as BenchmarkDefinition[];

/** Every registered benchmark, shipped ones first, in display order. */
export function benchmarks(): readonly BenchmarkDefinition[] {
  return [...BUILTIN, ...extra];
}

/** Every registered benchmark kind, in display order. */
export function benchmarkKinds(): string[] {
  return benchmarks().map((b) => b.kind);
}

/**
 * The benchmark of a kind, in any case (`LongDA`, `longda`).
 * @param subject what to name in the error (`--suite`, `run 2026…`, `the setting loupe.suites[0]`).
 * @throws LoupeInputError naming `subject` and the known kinds when there is no such benchmark.
 */
export function getBenchmark(kind: string, subject = '--suite'): BenchmarkDefinition {
  const k = kind.trim().toLowerCase();
  const b = benchmarks().find((x) => x.kind === k);
  if (!b) throw new LoupeInputError(subject, `unknown suite '${kind}' (expected one of ${benchmarkKinds().join(', ')})`);
  return b;
}

/** The benchmark of a kind, or undefined. */
export function findBenchmark(kind: string): BenchmarkDefinition | undefined {
  const k = kind.trim().toLowerCase();
  return benchmarks().find((x) => x.kind === k);
}

/**
 * Adds a benchmark (test fixtures and plug-ins; not used by the shipped benchmarks).
 * @throws Error when the kind is already registered.
 */
export function registerBenchmark(def: BenchmarkDefinition): void {
  if (findBenchmark(def.kind)) throw new Error(`benchmark '${def.kind}' is already registered`);
  extra.push(def);
}
