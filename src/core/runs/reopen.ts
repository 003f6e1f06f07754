/**
 * Reopens what a stored run was made from: its suite (loaded again from the root recorded with the run, or an
 * override), its block, and its typed parameters. The one place the CLI (`run --resume`, `run --agent replay`,
 * `score`), the extension (resume, notebook, scoring) and the scorers reload a run's suite and block.
 * Source: issue 12 "One core function that reopens a stored run".
 */
import type { RunParams, RunRecord } from '../store/records.ts';
import type { Block, LoadSuiteOptions, Suite } from '../suites/types.ts';
import { LoupeInputError } from '../util/errors.ts';
import { nullLogger, type Logger } from '../util/log.ts';
import { loadSuite } from '../benchmarks/index.ts';
import { getBenchmark } from '../benchmarks/registry.ts';
import type { BenchmarkDefinition } from '../benchmarks/types.ts';

/** A stored run with what it was made from. */
export interface ReopenedRun {
  run: RunRecord;
  benchmark: BenchmarkDefinition;
  suite: Suite;
  block: Block;
  params: RunParams;
  /** The suite root used (the recorded one unless overridden). */
  root: string;
}

/** Options of {@link reopenRun}. */
export interface ReopenOptions {
  /** Use this root instead of the one recorded with the run (the data moved). */
  suiteRoot?: string;
  /** Loader options (DDR `entities`, `database`, ...) overriding those recorded with the run. */
  loadOptions?: Omit<LoadSuiteOptions, 'log' | 'onProgress'>;
  /** Suite cache shared across runs: key `<kind>\0<root>`, plus `\0<loader options JSON>` when there are any. */
  suites?: Map<string, Promise<Suite>>;
  log?: Logger;
}

/**
 * Loads the suite and finds the block of a stored run.
 * @param run the stored run; `o` see {@link ReopenOptions}.
 * @returns the run, its benchmark definition, suite, block, typed params and the root used.
 * @throws LoupeInputError naming the run when it records no suite root (and none is given), its benchmark is
 *   unknown, the suite cannot be loaded, or the block is no longer in the suite.
 */
export async function reopenRun(run: RunRecord, o: ReopenOptions = {}): Promise<ReopenedRun> {
  const benchmark = getBenchmark(run.suite, `run ${run.id}`);
  const root = o.suiteRoot ?? run.params.suiteRoot;
  if (!root) throw new LoupeInputError(`run ${run.id}`, 'records no suite root; give the folder the suite is in now');
  const loadOptions = { ...(run.params.loadOptions ?? {}), ...(o.loadOptions ?? {}) };
  const key = `${benchmark.kind}\u0000${root}${Object.keys(loadOptions).length ? `\u0000${JSON.stringify(loadOptions)}` : ''}`;
  const cache = o.suites ?? new Map<string, Promise<Suite>>();
  let p = cache.get(key);
  if (!p) {
    p = loadSuite(benchmark.kind, root, { ...loadOptions, log: o.log ?? nullLogger });
    cache.set(key, p);
    p.catch(() => cache.delete(key));
  }
  const suite = await p;
  const block = suite.blocks.find((x) => x.id === run.blockId);
  if (!block) throw new LoupeInputError(`run ${run.id}`, `block '${run.blockId}' is not in suite ${suite.root}`);
  return { run, benchmark, suite, block, params: run.params, root };
}
