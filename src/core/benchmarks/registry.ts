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
import { manifestBenchmarkAt, manifestFileOf } from './manifest/define.ts';
import { manifestFileIn } from './manifest/manifest.ts';
import { resolve } from 'node:path';
import { shippedBenchmarkDir } from './paths.ts';
import type { BenchmarkDefinition, ItemTypeView } from './types.ts';
import type { SuiteSourceDef } from '../suites/fetch.ts';
import type { BlockItemBase } from '../suites/types.ts';

/** The shipped benchmarks, in display order. */
const BUILTIN: readonly BenchmarkDefinition[] = [
  longda,
  blade,
  bladeMcq,
  ddr,
  analystbench,
  manifestBenchmarkAt(shippedBenchmarkDir('dabench')),
];

// Kept on globalThis: a test bundle (out/test/*.js) has its own copy of this module, and its registrations must
// reach the extension's copy.
const KEY = Symbol.for('loupe.benchmarks.extra');
const extra: BenchmarkDefinition[] =
  ((globalThis as Record<symbol, unknown>)[KEY] as BenchmarkDefinition[] | undefined) ??
  (((globalThis as Record<symbol, unknown>)[KEY] = []) as BenchmarkDefinition[]);

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
  if (!b) {
    throw new LoupeInputError(subject, `unknown suite '${kind}' (expected one of ${benchmarkKinds().join(', ')})`);
  }
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

/** The download sources of the given benchmarks by the name `loupe fetch` takes, in display order. */
function sourcesOf(defs: readonly BenchmarkDefinition[]): Map<string, SuiteSourceDef> {
  return new Map(defs.flatMap((d) => Object.entries(d.downloadSources)));
}

/**
 * The benchmark declared by the manifest of a folder (`loupe-benchmark.yaml` / `.json`, issue 44), registered on first
 * use so runs, scores and views find it by its kind like a built-in; the folder is also its data root.
 * @param root a folder. @returns the benchmark, or undefined when the folder holds no manifest.
 * @throws LoupeInputError naming the manifest's file, line and field when it is invalid, or naming both files when
 *   another benchmark (built-in or another manifest) already has its kind.
 */
export function benchmarkOfFolder(root: string): BenchmarkDefinition | undefined {
  const file = manifestFileIn(resolve(root));
  if (!file) return undefined;
  const def = manifestBenchmarkAt(root);
  const known = findBenchmark(def.kind);
  if (!known) {
    registerBenchmark(def);
    return def;
  }
  if (manifestFileOf(known) === resolve(file)) return known;
  throw new LoupeInputError(
    file,
    `kind '${def.kind}' is already a benchmark (${manifestFileOf(known) ?? 'built into Loupe'}); give this manifest another kind`,
  );
}

/** Names `loupe fetch` takes: the shipped benchmarks' download sources (`downloadSources`), in display order. */
export const FETCHABLE: readonly string[] = [...sourcesOf(BUILTIN).keys()];

/**
 * The download source of a name `loupe fetch` takes (any registered benchmark's `downloadSources`).
 * @throws LoupeInputError('suite') for a name no benchmark offers.
 * Source: issue 3 "Download"; issue 40 (each benchmark's sources in its definition).
 */
export function getSource(name: string): SuiteSourceDef {
  const all = sourcesOf(benchmarks());
  const s = all.get(name);
  if (!s) throw new LoupeInputError('suite', `no download source for '${name}' (known: ${[...all.keys()].join(', ')})`);
  return s;
}

/**
 * How the surfaces show an item of a block of benchmark `kind` (its definition's `itemTypes`), or undefined when the
 * benchmark is not registered or declares no view for the item's type. Source: issue 40 (no switch on item types).
 */
export function itemTypeView(kind: string, item: BlockItemBase): ItemTypeView<BlockItemBase> | undefined {
  const views = findBenchmark(kind)?.itemTypes;
  return views && Object.hasOwn(views, item.type) ? views[item.type] : undefined;
}
