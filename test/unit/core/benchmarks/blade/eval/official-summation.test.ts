/**
 * Issue 47 item 8: BLADE's aggregation under `--preset official` equals blade_bench's own `final_metrics.py`
 * (np.mean, graph term before value term) and `get_model_metrics.py` (bootstrap np.mean and np.quantile) bit for bit,
 * on runs and a fixed set of bootstrap resamples written for this test
 * (test/fixtures/official-parity/blade/summation/, see test/fixtures/official-parity/README.md).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  aggregateBlade,
  METRIC_TYPES,
  type BladeAggregateOptions,
  type BladeDatasetRuns,
} from '../../../../../../src/core/benchmarks/blade/eval/metrics.ts';
import { bladeAggregateOptions } from '../../../../../../src/core/benchmarks/blade/score.ts';
import { parseOptionsWithPreset } from '../../../../../../src/core/benchmarks/options.ts';
import { getBenchmark } from '../../../../../../src/core/benchmarks/registry.ts';

const DIR = join(import.meta.dirname, '../../../../../fixtures/official-parity/blade/summation');
const read = <T>(f: string): T => JSON.parse(readFileSync(join(DIR, f), 'utf8')) as T;
type Raw = {
  k: number;
  datasets: Array<{
    dataset: string;
    gt: BladeDatasetRuns['gt'];
    runs: Array<{
      status: 'ok' | 'generation_failed';
      precision?: Record<string, number>;
      items?: Record<string, string[]>;
    }>;
  }>;
};
const raw = read<Raw>('runs.json');
const resamples = read<number[][][]>('resamples.json');
const exp = read<{
  precision: Record<string, number>;
  coverage: Record<string, number>;
  mean_weighted: number;
  mean_unweighted: number;
  mean_bootstrapped_weighted: number;
  mean_bootstrapped_unweighted: number;
  ci_weighted: [number, number];
  ci_unweighted: [number, number];
}>('expected.json');
const datasets: BladeDatasetRuns[] = raw.datasets.map((d) => ({
  dataset: d.dataset,
  gt: d.gt,
  runs: d.runs.map((r) => ({
    status: r.status,
    metrics: Object.fromEntries(
      METRIC_TYPES.map((t) => [
        t,
        {
          gtItems: r.items?.[t] ?? [],
          gtNames: r.items?.[t] ?? [],
          precision: r.precision?.[t] ?? 0,
          matched: 0,
          denominator: 0,
        },
      ]),
    ) as BladeDatasetRuns['runs'][number]['metrics'],
  })),
}));
const options = (preset: 'official' | 'paper', extra: Record<string, string> = {}): Partial<BladeAggregateOptions> => ({
  ...bladeAggregateOptions(parseOptionsWithPreset(getBenchmark('blade').scoreOptions, preset, extra)),
  k: raw.k,
  samples: resamples.length,
});
const fixed = (it: number, ds: number) => resamples[it]![ds]!;
const results = (a: ReturnType<typeof aggregateBlade>) => ({
  ...Object.fromEntries(
    METRIC_TYPES.flatMap((t) => [
      [`precision.${t}`, a.point.perType[t].precision],
      [`coverage.${t}`, a.point.perType[t].coverage],
    ]),
  ),
  mean_weighted: a.point.weightedF1,
  mean_unweighted: a.point.unweightedF1,
  mean_bootstrapped_weighted: a.bootstrap.weightedF1.mean,
  mean_bootstrapped_unweighted: a.bootstrap.unweightedF1.mean,
  'ci_weighted.0': a.bootstrap.weightedF1.lo,
  'ci_weighted.1': a.bootstrap.weightedF1.hi,
  'ci_unweighted.0': a.bootstrap.unweightedF1.lo,
  'ci_unweighted.1': a.bootstrap.unweightedF1.hi,
});
const expected: Record<string, number> = {
  ...Object.fromEntries(
    METRIC_TYPES.flatMap((t) => [
      [`precision.${t}`, exp.precision[t]!],
      [`coverage.${t}`, exp.coverage[t]!],
    ]),
  ),
  mean_weighted: exp.mean_weighted,
  mean_unweighted: exp.mean_unweighted,
  mean_bootstrapped_weighted: exp.mean_bootstrapped_weighted,
  mean_bootstrapped_unweighted: exp.mean_bootstrapped_unweighted,
  'ci_weighted.0': exp.ci_weighted[0],
  'ci_weighted.1': exp.ci_weighted[1],
  'ci_unweighted.0': exp.ci_unweighted[0],
  'ci_unweighted.1': exp.ci_unweighted[1],
};

describe('BLADE aggregation equals final_metrics.py + get_model_metrics.py bit for bit (fixture blade/summation/)', () => {
  it("official preset: the 10 hit rates and coverages, both point scores, bootstrap means and CIs are === BLADE's", () => {
    const a = aggregateBlade(datasets, options('official'), fixed);
    assert.equal(a.options.summation, 'numpy', 'the score records the summation it used');
    const got = results(a);
    for (const [name, v] of Object.entries(expected)) {
      assert.ok(Object.is(got[name as keyof typeof got], v), `${name}: ${got[name as keyof typeof got]} vs ${v}`);
    }
    assert.equal(Object.keys(expected).length, 18);
  });

  it("left-to-right summation (paper preset's choice) differs from BLADE in the last bits here", () => {
    const a = aggregateBlade(datasets, options('official', { summation: 'left-to-right' }), fixed);
    const got = results(a);
    const differ = Object.entries(expected).filter(([name, v]) => !Object.is(got[name as keyof typeof got], v));
    assert.ok(differ.length >= 3, `only ${differ.map(([n]) => n).join(', ')} differ`);
    for (const [name, v] of differ) {
      assert.ok(Math.abs(got[name as keyof typeof got] - v) <= 1e-15, `${name} differs by more than rounding`);
    }
    assert.equal(aggregateBlade(datasets, options('paper'), fixed).options.summation, 'left-to-right');
  });

  it('a resample of the wrong size is named', () => {
    assert.throws(() => aggregateBlade(datasets, options('official'), () => [0]), /bootstrap resample/);
  });
});
