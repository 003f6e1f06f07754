/**
 * What side-by-side review reads of a run through its benchmark (issue 16): the output to compare
 * (`BenchmarkDefinition.review.sectionsOf`), the criteria of a pair (a rubric the user sets, else the benchmark's,
 * else {@link DEFAULT_RUBRIC}) and the task text the LLM pairwise judge is given.
 */
import { getBenchmark } from '../../core/benchmarks/registry.ts';
import type { ReviewSource } from '../../core/benchmarks/types.ts';
import { reopenRun } from '../../core/runs/reopen.ts';
import type { RunRecord } from '../../core/store/records.ts';
import { runFolderOf } from '../../core/store/run-folder.ts';
import type { RunStore } from '../../core/store/types.ts';
import type { Suite } from '../../core/suites/types.ts';
import { LoupeInputError } from '../../core/util/errors.ts';
import { DEFAULT_RUBRIC, type PairInput } from '../../core/review/pairwise.ts';

/**
 * A run's output for review, through its benchmark.
 * @param runsRoot the runs folder this user configured: the run's files are read from its folder only when it lies
 *   inside (issue 36), else from the store's copy; null: the store's copy only.
 * @returns the run, and its source (null: "no report").
 * @throws LoupeInputError for an unknown run or benchmark.
 */
export async function reviewSourceOf(
  runs: RunStore,
  runId: string,
  runsRoot: string | null,
): Promise<{ run: RunRecord; source: ReviewSource | null }> {
  const run = await runs.getRun(runId);
  if (!run) throw new LoupeInputError(`run ${runId}`, 'is not in the store');
  const b = getBenchmark(run.suite, `run ${run.id}`);
  return { run, source: await b.review.sectionsOf(runs, run, await runFolderOf(runs, run, runsRoot)) };
}

/** The source as one Markdown text (sections under their titles), '' for none. */
export function reviewMarkdown(source: ReviewSource | null): string {
  if (!source) return '';
  if ('markdown' in source) return source.markdown;
  return source.sections.map((s) => `## ${s.title}\n\n${s.markdown}`).join('\n\n');
}

/**
 * The criteria of a pair of runs of `run`'s block: the rubric when it names any, else the benchmark's criteria of
 * the block (the suite is reopened; a suite that cannot be reopened falls back), else {@link DEFAULT_RUBRIC}.
 * @returns criteria and where they came from.
 */
export async function pairCriteria(
  run: RunRecord,
  o: { rubric?: readonly string[]; suites?: Map<string, Promise<Suite>> } = {},
): Promise<{ criteria: string[]; from: 'rubric' | 'benchmark' | 'default' }> {
  const rubric = (o.rubric ?? []).map((c) => c.trim()).filter(Boolean);
  if (rubric.length) return { criteria: [...new Set(rubric)], from: 'rubric' };
  try {
    const r = await reopenRun(run, o.suites ? { suites: o.suites } : {});
    const c = r.benchmark.review.criteria(r.block);
    if (c?.length) return { criteria: [...new Set(c)], from: 'benchmark' };
  } catch {
    // the suite moved or is gone: the default rubric still lets the pair be reviewed
  }
  return { criteria: [...DEFAULT_RUBRIC], from: 'default' };
}

/**
 * {@link pairCriteria} for many runs, asked once per benchmark and block: the function returned resolves a run to its
 * block's criteria (same rules and fallbacks as pairCriteria; `suites` is shared so each suite is reopened once).
 * Used where a queue of pairs is opened (CLI `loupe review pairs`, the VS Code review commands).
 */
export function criteriaByBlock(
  o: { rubric?: readonly string[]; suites?: Map<string, Promise<Suite>> } = {},
): (run: RunRecord) => Promise<string[]> {
  const suites = o.suites ?? new Map<string, Promise<Suite>>();
  const byBlock = new Map<string, Promise<string[]>>();
  return (run) => {
    const k = `${run.suite}\u0000${run.blockId}`;
    let c = byBlock.get(k);
    if (!c) {
      c = pairCriteria(run, { ...(o.rubric ? { rubric: o.rubric } : {}), suites }).then((r) => r.criteria);
      byBlock.set(k, c);
    }
    return c;
  };
}

/**
 * The task text of a pair's block for the LLM pairwise judge (the benchmark's task text; `block <id>` when the suite
 * cannot be reopened).
 */
export async function pairInstruction(
  runs: RunStore,
  pair: PairInput,
  suites?: Map<string, Promise<Suite>>,
): Promise<string> {
  const run = await runs.getRun(pair.runA);
  if (!run) return `block ${pair.blockId}`;
  try {
    const r = await reopenRun(run, suites ? { suites } : {});
    return r.benchmark.taskText(r.block).join('\n\n');
  } catch {
    return `block ${pair.blockId} of ${pair.suite}`;
  }
}
