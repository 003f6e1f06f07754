/**
 * Entry point of the benchmark suites layer: {@link loadSuite} reads a benchmark in its native
 * layout and returns the common {@link Suite} model. Source: issue 3; spec §1.2, §2.2, §3.2, §4.1.
 */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { LoupeInputError } from '../util/errors.ts';
import type { BladeDecisionCounts, Block, LoadSuiteOptions, Suite, SuiteKind } from './types.ts';
import { SUITE_KINDS } from './types.ts';
import { loadLongda } from '../benchmarks/longda/load.ts';
import { loadBlade } from '../benchmarks/blade/load.ts';
import { loadDdr } from '../benchmarks/ddr/load.ts';
import { loadAnalystBench } from '../benchmarks/analystbench/load.ts';
import { publicItems, type PublicItem } from './workspace.ts';

export * from './types.ts';

/**
 * Loads a suite of the given kind from `root`.
 * @param kind which benchmark (`longda` | `blade` | `blade-mcq` | `ddr` | `analystbench`).
 * @param root absolute or relative path of the benchmark root (LongDA: folder with `benchmark.csv`;
 *   BLADE: `datasets/`; DDR: SQLite file or folder of CSV/CSV.gz tables; AnalystBench: folder of manifests).
 * @param opts see {@link LoadSuiteOptions}.
 * @returns the suite; per-block problems are reported in `block.problems`, file-level ones in `suite.problems`.
 * @throws LoupeInputError when the root does not exist, is empty, or is not the named suite.
 */
export async function loadSuite(kind: SuiteKind, root: string, opts: LoadSuiteOptions = {}): Promise<Suite> {
  switch (kind) {
    case 'longda':
      return dropHiddenAliases(loadLongda(root, opts));
    case 'blade':
      return dropHiddenAliases(loadBlade(root, opts, 'blade'));
    case 'blade-mcq':
      return dropHiddenAliases(loadBlade(root, opts, 'blade-mcq'));
    case 'ddr':
      return dropHiddenAliases(await loadDdr(root, opts));
    case 'analystbench':
      return dropHiddenAliases(loadAnalystBench(root, opts));
    default:
      throw new LoupeInputError('--suite', `unknown suite '${String(kind)}' (expected one of ${SUITE_KINDS.join(', ')})`);
  }
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
    for (const f of [...h.files, ...(h.publications ?? []), ...(h.publication ? [h.publication] : []), ...(h.referenceReport ? [h.referenceReport] : [])]) {
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
        b.problems.push(`${f.path} ${how} a hidden file of this suite (answers, reference, checklist or manifest); not made visible`);
        dropped++;
        return false;
      });
    }
    if (dropped && b.runnable && b.visible.data.length + b.visible.docs.length === 0 && !b.visible.database) {
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
export function parseSuiteKind(s: string, subject = '--suite'): SuiteKind {
  const k = s.trim().toLowerCase();
  if ((SUITE_KINDS as readonly string[]).includes(k)) return k as SuiteKind;
  throw new LoupeInputError(subject, `unknown suite '${s}' (expected one of ${SUITE_KINDS.join(', ')})`);
}
export { createGuard, PathNotVisibleError, visibleFiles, type LeakageGuard } from './guard.ts';
export { createTaskWorkspace, publicItems, taskMarkdown, verifyNoHidden, readTaskMarker, TASK_MARKER, type PublicItem, type WorkspaceResult } from './workspace.ts';

/** One line of `loupe blocks --json` (issue 3 "CLI"). */
export interface BlockSummary {
  id: string;
  title: string;
  suite: SuiteKind;
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
  decisions?: BladeDecisionCounts;
  /** DDR only: checklist item count. */
  checklistItems?: number;
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
    ...(b.longda ? { survey: b.longda.survey, source: b.longda.source } : {}),
    ...(b.blade ? { decisions: b.blade.counts } : {}),
    ...(b.ddr ? { checklistItems: b.ddr.checklistCount } : {}),
  };
}
export { saveChecklist, type ChecklistInput } from '../benchmarks/ddr/checklist.ts';
export { importCsvFolder, findTableFiles, type ImportResult } from '../benchmarks/ddr/import.ts';
export { fetchSuite, getSource, FETCHABLE, type FetchResult, type SuiteSourceDef } from './fetch.ts';
