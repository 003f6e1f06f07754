/**
 * BLADE's own output formats scored without a Loupe run (issue 21 "score the benchmarks' own outputs"): the
 * `multirun_analyses.json` that BLADE's harness writes per dataset (`baselines/multirun.py`: `MultiRunResults` —
 * `dataset_name`, `n`, `analyses: {i: EntireAnalysis | [RunResultModes, message]}`) and the submission file of
 * `example/submission_analyses.json` (`DatasetSubmission` — `dataset_name`, `analyses: [EntireAnalysis]`).
 * Each analysis is scored against its dataset's ground truth as a stored run is, and the runs are aggregated with
 * BLADE's bootstrap (`aggregateBlade`) under the same options and preset.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Judge } from '../../eval/judges/types.ts';
import { LoupeInputError, errorMessage } from '../../util/errors.ts';
import { nullLogger, type Logger } from '../../util/log.ts';
import type { OptionValues } from '../options.ts';
import { bladeAggregateOptions, bladeDataflowOptions } from './score.ts';
import type { BladeRunInput, BladeRunScore } from './eval/score.ts';
import type { BladeAggregate, BladeGtCounts, BladeRunMetrics } from './eval/metrics.ts';
import type { ValueHashing } from './eval/python.ts';

/** BLADE `RunResultModes` (`eval/datamodel/run.py`): the names of the failure codes a multirun file records. */
const RUN_RESULT_MODES = [
  'LM_SUBMISSION_EXECUTION_FAILED',
  'LM_SUBMISSION_CONVERSION_FAILED',
  'LM_GENERATION_FAILED',
  'LOAD_GND_TRUTH_FAILED',
  'LM_SUBMISSION_TRANSFORM_CODE_EMPTY',
  'FINISHED_SUCCESSFULLY',
  'MATCHING_FAILED',
  'GETTING_METRICS_FAILED',
];

/** One analysis of a BLADE output file: its dataset, its index in the file (`run`) and what to score. */
export interface BladeNativeRun {
  dataset: string;
  /** The key of `analyses` (multirun) or the list index (submission), as text. */
  run: string;
  file: string;
  input: BladeRunInput;
}

/**
 * Reads BLADE output files into runs, in file order (a multirun file's keys in numeric order).
 * @param paths files, or folders holding `multirun_analyses.json`.
 * @returns the runs; a failure entry `[mode, message]` becomes a generation failure naming the mode.
 * @throws LoupeInputError naming the file (missing, not JSON, no `dataset_name`, `analyses` neither a list nor an
 *   object) or the analysis (`file: analyses[3]: cvars.dv` ...) that is malformed.
 */
export async function readBladeOutputs(paths: readonly string[]): Promise<BladeNativeRun[]> {
  const { parseBladeAnalysis } = await import('./eval/score.ts');
  const out: BladeNativeRun[] = [];
  for (const p of paths) {
    const file = existsSync(p) && statSync(p).isDirectory() ? join(p, 'multirun_analyses.json') : p;
    if (!existsSync(file)) {
      throw new LoupeInputError(
        file,
        existsSync(p)
          ? 'the folder has no multirun_analyses.json (BLADE baselines/multirun.py writes one per dataset)'
          : 'not found',
      );
    }
    let doc: { dataset_name?: unknown; analyses?: unknown };
    try {
      doc = JSON.parse(readFileSync(file, 'utf8')) as typeof doc;
    } catch (e) {
      throw new LoupeInputError(file, `not JSON: ${errorMessage(e)}`, { cause: e });
    }
    if (!doc || typeof doc !== 'object' || typeof doc.dataset_name !== 'string' || !doc.dataset_name) {
      throw new LoupeInputError(file, 'needs "dataset_name" (a BLADE MultiRunResults or DatasetSubmission file)');
    }
    const dataset = doc.dataset_name;
    const entries: [string, unknown][] = Array.isArray(doc.analyses)
      ? doc.analyses.map((a, i) => [String(i), a])
      : doc.analyses && typeof doc.analyses === 'object'
        ? Object.entries(doc.analyses as Record<string, unknown>).sort(
            ([a], [b]) => Number(a) - Number(b) || a.localeCompare(b),
          )
        : (() => {
            throw new LoupeInputError(
              `${file}: analyses`,
              'must be a list (submission) or an object of runs (multirun)',
            );
          })();
    for (const [run, a] of entries) {
      if (Array.isArray(a)) {
        const mode = typeof a[0] === 'number' ? (RUN_RESULT_MODES[a[0]] ?? `mode ${a[0]}`) : String(a[0]);
        out.push({
          dataset,
          run,
          file,
          input: {
            runId: `${dataset}#${run}`,
            generationFailed: `${mode}${a[1] ? `: ${String(a[1]).slice(0, 300)}` : ''}`,
          },
        });
      } else {
        out.push({
          dataset,
          run,
          file,
          input: { runId: `${dataset}#${run}`, analysis: parseBladeAnalysis(a, `${file}: analyses[${run}]`) },
        });
      }
    }
  }
  return out;
}

/** The result of {@link scoreBladeOutputs}. */
export interface BladeNativeScore {
  runs: Array<{
    dataset: string;
    run: string;
    file: string;
    status: BladeRunMetrics['status'];
    precision: Record<string, number>;
    error?: string;
    score?: BladeRunScore;
  }>;
  /** Per dataset: its ground-truth folder and counts; `error` when its ground truth could not be loaded. */
  datasets: Array<{ dataset: string; dir: string; gt?: BladeGtCounts; error?: string }>;
  aggregate: BladeAggregate | null;
  /** Semantic matches answered by the judge vs by identical text; questions the judge could not answer. */
  judged: { done: number; exact: number; errors: number };
  options: Record<string, unknown>;
}

/**
 * Scores BLADE output files against the ground truth in `datasetsRoot` (`<root>/<dataset>` or
 * `<root>/datasets/<dataset>`, each with `data.csv` and `annotations.csv`).
 * @param o.options parsed BLADE scoring options (preset applied): dataflow, `value_hashing`, model matching, aggregation.
 * @param o.judge answers semantic matches; a recorded-verdicts judge looks them up by `{dataset, run, kind, truth,
 *   submitted}` (`run` = the analysis key in the file).
 * @returns per-run precisions and the bootstrap aggregate (null when no dataset could be scored).
 * @throws LoupeInputError for malformed files (see {@link readBladeOutputs}); a dataset whose ground truth is missing is
 *   reported in `datasets[].error` and its runs as failed, the rest is scored.
 */
export async function scoreBladeOutputs(o: {
  files: readonly string[];
  datasetsRoot: string;
  judge: Judge;
  options: OptionValues;
  log?: Logger;
  python?: string;
}): Promise<BladeNativeScore> {
  const log = o.log ?? nullLogger;
  const runs = await readBladeOutputs(o.files);
  const { startBladePython } = await import('./eval/python.ts');
  const { loadBladeGroundTruth, scoreBladeRun } = await import('./eval/score.ts');
  const { semanticJudgeFrom } = await import('./eval/semantic.ts');
  const { aggregateBlade, zeroRun } = await import('./eval/metrics.ts');
  const py = (await startBladePython(o.python ? { python: o.python } : {})).withValueHashing(
    (o.options.value_hashing ?? 'blade') as ValueHashing,
  );
  const dataflow = bladeDataflowOptions(o.options);
  const out: BladeNativeScore = {
    runs: [],
    datasets: [],
    aggregate: null,
    judged: { done: 0, exact: 0, errors: 0 },
    options: { ...o.options },
  };
  try {
    const byDs = new Map<string, { dataset: string; gt: BladeGtCounts; runs: BladeRunMetrics[] }>();
    for (const dataset of [...new Set(runs.map((r) => r.dataset))]) {
      const dir =
        [join(o.datasetsRoot, dataset), join(o.datasetsRoot, 'datasets', dataset)].find((d) =>
          existsSync(join(d, 'annotations.csv')),
        ) ?? join(o.datasetsRoot, dataset);
      let gt: Awaited<ReturnType<typeof loadBladeGroundTruth>>;
      try {
        gt = await loadBladeGroundTruth(dir, py, { dataflow, log });
      } catch (e) {
        out.datasets.push({ dataset, dir, error: errorMessage(e) });
        for (const r of runs.filter((x) => x.dataset === dataset)) {
          out.runs.push({
            dataset,
            run: r.run,
            file: r.file,
            status: 'failed',
            precision: {},
            error: `ground truth: ${errorMessage(e)}`,
          });
        }
        continue;
      }
      out.datasets.push({ dataset, dir, gt: gt.counts });
      const entry = { dataset, gt: gt.counts, runs: [] as BladeRunMetrics[] };
      byDs.set(dataset, entry);
      for (const r of runs.filter((x) => x.dataset === dataset)) {
        try {
          const s = await scoreBladeRun(r.input, gt, {
            python: py,
            judge: semanticJudgeFrom(o.judge, { runId: r.input.runId, dataset, run: r.run }),
            modelCvarAlternatives: o.options.model_cvar_alternatives as 'all-specs' | 'representative',
            modelCvarCheck: o.options.model_cvar_check as 'strict' | 'blade',
            log,
          });
          entry.runs.push(s);
          out.judged.done += s.judges.done;
          out.judged.exact += s.judges.exact;
          out.judged.errors += s.judges.errors;
          const m = s.metrics;
          out.runs.push({
            dataset,
            run: r.run,
            file: r.file,
            status: s.status,
            precision: {
              cvar: m.cvar.precision,
              model: m.model.precision,
              modelCvar: m.modelCvar.precision,
              transformValue: m.transformValue.precision,
              transformGraph: m.transformGraph.precision,
            },
            score: s,
          });
        } catch (e) {
          entry.runs.push(zeroRun('failed', r.input.runId));
          out.runs.push({ dataset, run: r.run, file: r.file, status: 'failed', precision: {}, error: errorMessage(e) });
        }
      }
    }
    if (byDs.size) {
      out.aggregate = aggregateBlade(
        [...byDs.values()].filter((d) => d.runs.length),
        bladeAggregateOptions(o.options),
      );
    }
  } finally {
    await py.close();
  }
  return out;
}
