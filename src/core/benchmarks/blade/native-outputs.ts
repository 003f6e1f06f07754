/**
 * BLADE's own outputs scored without a store (`loupe score --native-outputs FILE|DIR ... --suite blade --root
 * BLADE_DATASETS`, alias `--blade-outputs`): `multirun_analyses.json` as its harness writes it per dataset, or a
 * submission file, against the ground truth in `BLADE_DATASETS/<dataset>` (`native.ts`). Source: BLADE
 * `baselines/multirun.py`; issue 40 moved the CLI branch here from `cli/score.ts`.
 */
import { RecordedJudge } from '../../eval/judges/recorded.ts';
import { formatOptionEcho, parseOptionsWithPreset, type OptionSpec } from '../options.ts';
import type { NativeOutputs } from '../types.ts';

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : (100 * x).toFixed(2));
const num = (x: number | null | undefined, d = 2) => (x === null || x === undefined ? '—' : x.toFixed(d));

/**
 * The BLADE native-output format for {@link NativeOutputs}.
 * @param scoreOptions BLADE's scoring options (its definition's `scoreOptions`).
 * @returns the format: FILE|DIR (repeatable) and the datasets root; `failed` when an analysis failed.
 */
export function bladeNativeOutputs(scoreOptions: readonly OptionSpec[]): NativeOutputs {
  return {
    help: 'BLADE\'s own outputs (multirun_analyses.json per dataset, or a submission file with dataset_name + analyses), scored against --root; recorded verdicts keyed {"dataset", "run", "kind" (conceptual-variable | model), "truth", "submitted"}; without --judge only identical texts match',
    multiple: true,
    alias: 'blade-outputs',
    inputs: [],
    root: 'the BLADE datasets folder with <dataset>/annotations.csv',
    async score(o) {
      const judge = o.judge();
      const options = parseOptionsWithPreset(scoreOptions, o.preset, o.raw);
      const { scoreBladeOutputs } = await import('./native.ts');
      const s = await scoreBladeOutputs({ files: o.paths, datasetsRoot: o.root!, judge, options });
      const notRecorded = judge instanceof RecordedJudge ? judge.missing.length : 0;
      const a = s.aggregate;
      const json = {
        files: o.paths,
        root: o.root,
        judge: judge.id,
        preset: o.preset,
        options: s.options,
        datasets: s.datasets,
        judged: s.judged,
        notRecorded,
        missingVerdicts: judge instanceof RecordedJudge ? judge.missing : [],
        runs: s.runs.map(({ score: _s, ...r }) => r),
        aggregate: a
          ? { point: a.point, bootstrap: a.bootstrap, options: a.options, changedBy: a.changedBy, warnings: a.warnings }
          : null,
      };
      const lines = [
        `${s.runs.length} BLADE analyses in ${s.datasets.length} datasets   judge: ${judge.id}   preset: ${o.preset}`,
      ];
      for (const d of s.datasets.filter((x) => x.error)) lines.push(`  ${d.dataset}: not scored (${d.error})`);
      for (const r of s.runs) {
        lines.push(
          `  ${r.dataset} #${r.run}: ${r.status}${r.error ? ` (${r.error})` : ''}${r.status === 'ok' ? `  cvar ${pct(r.precision.cvar)}%  model ${pct(r.precision.model)}%  transform value ${pct(r.precision.transformValue)}%  graph ${pct(r.precision.transformGraph)}%` : ''}`,
        );
      }
      if (a) {
        lines.push(
          `weighted F1 ${num(a.point.weightedF1, 4)} (bootstrap ${num(a.bootstrap.weightedF1.mean, 4)}, 95% CI ${num(a.bootstrap.weightedF1.lo, 4)}–${num(a.bootstrap.weightedF1.hi, 4)})  unweighted F1 ${num(a.point.unweightedF1, 4)}`,
        );
      }
      lines.push(`options used (blade): ${formatOptionEcho(s.options)}`);
      if (notRecorded) lines.push(`${notRecorded} semantic matches had no recorded verdict (counted as no match)`);
      return { json, lines, failed: s.runs.some((r) => r.status === 'failed') };
    },
  };
}
