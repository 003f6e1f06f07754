/**
 * Entry point of the benchmark suites layer: {@link loadSuite} reads a benchmark in its native
 * layout and returns the common {@link Suite} model. Source: issue 3; spec §1.2, §2.2, §3.2, §4.1.
 */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Block, LoadSuiteOptions, Suite } from '../suites/types.ts';
import { publicItems, type PublicItem } from './workspace.ts';
import { benchmarks, getBenchmark } from './registry.ts';
import { docsFolderFiles } from '../docs/roots.ts';
import { LoupeInputError } from '../util/errors.ts';
import { visibleFiles } from '../suites/guard.ts';

export * from '../suites/types.ts';
// each benchmark's part of the block model (item types, resources, loader options: declaration merging)
export type * from './longda/items.ts';
export type * from './blade/items.ts';
export type * from './ddr/items.ts';
export type * from './analystbench/items.ts';
export {
  benchmarks,
  benchmarkKinds,
  findBenchmark,
  getBenchmark,
  registerBenchmark,
  FETCHABLE,
  getSource,
  itemTypeView,
  benchmarkOfFolder,
} from './registry.ts';
export type * from './manifest/items.ts';
export type { BenchmarkDefinition } from './types.ts';

/**
 * Loads a suite of the given kind from `root`.
 * @param kind a registered benchmark kind (`longda`, `blade`, `blade-mcq`, `ddr`, `analystbench`, ...), any case.
 * @param root absolute or relative path of the benchmark root (LongDA: folder with `benchmark.csv`;
 *   BLADE: `datasets/`; DDR: SQLite file or folder of CSV/CSV.gz tables; AnalystBench: folder of manifests).
 * @param opts see {@link LoadSuiteOptions}.
 * @returns the suite; per-block problems are reported in `block.problems`, file-level ones in `suite.problems`.
 * @throws LoupeInputError when the kind is unknown, or the root does not exist, is empty, or is not the named suite.
 */
export async function loadSuite(kind: string, root: string, opts: LoadSuiteOptions = {}): Promise<Suite> {
  return dropHiddenAliases(await getBenchmark(kind).load(root, opts));
}

/**
 * Leakage guard at load time: a visible file that is, or resolves through symlinks to, a hidden file
 * of ANY block of the suite (answers, annotations, publications, reference reports, checklists,
 * manifests) is removed from the visible set and reported. Catches a symlink in a data folder that
 * points at the reference report (the sandbox would mount its target), and an AnalystBench source
 * glob wide enough to take another task's checklist. A block left with no visible file is not runnable.
 * @returns the same suite, changed in place.
 */
export function dropHiddenAliases(suite: Suite): Suite {
  const cache = new Map<string, string>();
  const real = (p: string): string => {
    let r = cache.get(p);
    if (r === undefined) {
      try {
        r = realpathSync(p);
      } catch {
        r = resolve(p);
      }
      cache.set(p, r);
    }
    return r;
  };
  const hidden = new Set<string>();
  for (const b of suite.blocks) {
    const h = b.hidden;
    for (const f of [
      ...h.files,
      ...(h.publications ?? []),
      ...(h.publication ? [h.publication] : []),
      ...(h.referenceReport ? [h.referenceReport] : []),
    ]) {
      hidden.add(resolve(f));
      hidden.add(real(f));
    }
  }
  for (const b of suite.blocks) {
    let dropped = 0;
    for (const key of ['data', 'docs'] as const) {
      b.visible[key] = b.visible[key].filter((f) => {
        const r = real(f.path);
        if (!hidden.has(r) && !hidden.has(resolve(f.path))) return true;
        const how = r === resolve(f.path) ? 'is' : `resolves to ${r}, which is`;
        b.problems.push(
          `${f.path} ${how} a hidden file of this suite (answers, reference, checklist or manifest); not made visible`,
        );
        dropped++;
        return false;
      });
    }
    if (dropped && b.runnable && visibleFiles(b).length === 0) {
      b.runnable = false;
      b.problems.push('no visible file left; not runnable');
    }
  }
  return suite;
}

/**
 * Checks a string names a suite kind, in any case (`LongDA`, `longda`, `BLADE` all work: the UI prints `LongDA`).
 * @throws LoupeInputError naming `subject` otherwise.
 */
export function parseSuiteKind(s: string, subject = '--suite'): string {
  return getBenchmark(s, subject).kind;
}
export {
  createGuard,
  otherVisibleFiles,
  PathNotVisibleError,
  visibleFiles,
  type LeakageGuard,
} from '../suites/guard.ts';
export {
  createTaskWorkspace,
  publicItems,
  taskMarkdown,
  verifyNoHidden,
  readTaskMarker,
  TASK_MARKER,
  type PublicItem,
  type WorkspaceResult,
} from './workspace.ts';

/** One line of `loupe blocks --json` (issue 3 "CLI"). */
export interface BlockSummary {
  id: string;
  title: string;
  suite: string;
  /** The items as an agent may see them (LongDA ground truth and MCQ keys removed; see `publicItems`). */
  items: PublicItem[];
  /** `items.length`. */
  itemCount: number;
  runnable: boolean;
  problems: string[];
  /** LongDA only. */
  survey?: string;
  source?: string;
  /** BLADE / BLADE-MCQ only: ground-truth decision counts per type. */
  decisions?: import('./blade/items.ts').BladeDecisionCounts;
  /** DDR only: checklist item count. */
  checklistItems?: number;
  /** Other fields a benchmark lists (see `BenchmarkDefinition.listingFields`). */
  [field: string]: unknown;
}

/**
 * Summarises a block for listings (CLI `--json`, Benchmarks view): public items and counts, no hidden content.
 * @returns {@link BlockSummary}.
 */
export function summariseBlock(b: Block): BlockSummary {
  return {
    id: b.id,
    title: b.title,
    suite: b.suite,
    items: publicItems(b),
    itemCount: b.items.length,
    runnable: b.runnable,
    problems: b.problems,
    ...getBenchmark(b.suite).listingFields(b),
  };
}
export { saveChecklist, type ChecklistInput } from './ddr/checklist.ts';
export { importCsvFolder, findTableFiles, type ImportResult } from './ddr/import.ts';
export { fetchSuite, type FetchResult, type SuiteSourceDef } from '../suites/fetch.ts';

/**
 * The documentation files of a suite root, relative to the root, as its benchmark lays them out (LongDA:
 * `<SURVEY>/docs/**`); without a suite, a `survey` selects `<survey>/docs/**` and nothing selects every file.
 * @returns relative paths, or undefined for "every file under the root".
 * @throws LoupeInputError('--suite') for a benchmark without documentation; LoupeInputError for a root or survey without docs.
 */
export function suiteDocFiles(root: string, suite?: string, survey?: string): string[] | undefined {
  if (!suite) return survey ? docsFolderFiles(root, survey) : undefined;
  const def = getBenchmark(suite);
  if (!def.docFiles) {
    throw new LoupeInputError(
      '--suite',
      `${def.title} has no documentation to search (suites with documentation: ${benchmarks()
        .filter((b) => b.docFiles)
        .map((b) => b.kind)
        .join(', ')})`,
    );
  }
  return def.docFiles(root, survey);
}
