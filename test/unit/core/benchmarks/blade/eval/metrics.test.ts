import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  aggregateBlade,
  bladeMetricBars,
  f1,
  parseMcqAnswer,
  quantile,
  scoreBladeMcqs,
  seededRandom,
  zeroRun,
  type BladeDatasetRuns,
  type McqAnswer,
  type BladeRunMetrics,
} from '../../../../../../src/core/benchmarks/blade/eval/metrics.ts';
import { parseBladeMcqs } from '../../../../../../src/core/benchmarks/blade/annotations.ts';
import { sharedData } from '../../../../../helpers/shared.ts';

function run(
  p: {
    cvar: [string[], number];
    model: [string[], number];
    mc: [string[], number];
    tv: [string[], number];
    tg: [string[], number];
  },
  status: BladeRunMetrics['status'] = 'ok',
): BladeRunMetrics {
  const m = ([items, precision]: [string[], number]) => ({
    gtItems: items,
    gtNames: items,
    precision,
    matched: 0,
    denominator: 0,
  });
  return {
    status,
    metrics: {
      cvar: m(p.cvar),
      model: m(p.model),
      modelCvar: m(p.mc),
      transformValue: m(p.tv),
      transformGraph: m(p.tg),
    },
  };
}

const gt = { numCvars: 4, numMspecs: 3, numMspecsUnique: 2, numTspecs: 5 };
const runs = [
  run({ cvar: [['c1', 'c2'], 0.5], model: [['m1'], 1], mc: [[], 0], tv: [['t1', 't2'], 1], tg: [['t1'], 0.5] }),
  run({ cvar: [['c2', 'c3'], 1], model: [[], 0], mc: [[], 0], tv: [['t3'], 0.5], tg: [[], 0] }),
  run({
    cvar: [['c4'], 1],
    model: [['m2'], 1],
    mc: [['x'], 1],
    tv: [['t1', 't2', 't3', 't4', 't5'], 1],
    tg: [['t1', 't2', 't3', 't4', 't5'], 1],
  }),
];
const DS: BladeDatasetRuns[] = [{ dataset: 'A', gt, runs }];
const close = (a: number, b: number, eps = 1e-12) => assert.ok(Math.abs(a - b) < eps, `${a} ≠ ${b}`);

describe('BLADE aggregation (spec §1.4.8)', () => {
  it('point precision, coverage@k, F1, weights and weighted F1 by hand', () => {
    const r = aggregateBlade(DS, { k: 2, samples: 10 });
    const P = { cvar: 2.5 / 3, model: 2 / 3, modelCvar: 1 / 3, transformValue: 2.5 / 3, transformGraph: 0.5 };
    // first k=2 runs: cvar {c1,c2,c3}/4; model {m1}/min(2,2); mc {}/min(3,2); tv {t1,t2,t3}/5; tg {t1}/5
    const C = { cvar: 0.75, model: 0.5, modelCvar: 0, transformValue: 0.6, transformGraph: 0.2 };
    for (const t of Object.keys(P) as (keyof typeof P)[]) {
      close(r.point.perType[t].precision, P[t]);
      close(r.point.perType[t].coverage, C[t]);
      close(r.point.perType[t].f1, P[t] + C[t] === 0 ? 0 : (2 * P[t] * C[t]) / (P[t] + C[t]));
    }
    // T=5, V=4, M=min(3,2)=2, U=min(2,2)=2, S=13
    assert.deepEqual(r.totals, { T: 5, V: 4, M: 2, U: 2, S: 13 });
    close(r.weights.cvar, 4 / 13);
    close(r.weights.model, 2 / 13);
    close(r.weights.modelCvar, 2 / 13);
    close(r.weights.transformValue, 2.5 / 13);
    const F = r.point.perType;
    close(
      r.point.weightedF1,
      (4 * F.cvar.f1 + 2 * F.model.f1 + 2 * F.modelCvar.f1 + 2.5 * F.transformValue.f1 + 2.5 * F.transformGraph.f1) /
        13,
    );
    assert.equal(r.options.k, 2);
    assert.deepEqual(r.warnings, []);
    assert.ok(
      aggregateBlade(DS, { k: 10, samples: 2 }).warnings.some((w) => /k=10/.test(w)),
      'warns that BLADE needs more than k runs',
    );
  });

  it('§1.7 #4: the unweighted score is (cvar + model + model_cvar + ½ graph + ½ value)/4, not "+ 0.5 +"', () => {
    const r = aggregateBlade(DS, { k: 2, samples: 5 });
    const F = r.point.perType;
    const fixed = (F.cvar.f1 + F.model.f1 + F.modelCvar.f1 + 0.5 * F.transformGraph.f1 + 0.5 * F.transformValue.f1) / 4;
    const buggy = (F.cvar.f1 + F.model.f1 + F.modelCvar.f1 + 0.5 * F.transformGraph.f1 + 0.5 + F.transformValue.f1) / 4;
    close(r.point.unweightedF1, fixed);
    assert.notEqual(r.point.unweightedF1, buggy);
    assert.equal(r.options.unweightedFormula, 'paper');
  });

  it('bootstrap is seeded and reproducible; CI brackets the mean; §1.7 #5 weighted CI comes from weighted samples', () => {
    const a = aggregateBlade(DS, { k: 2, samples: 1000, seed: 7 });
    const b = aggregateBlade(DS, { k: 2, samples: 1000, seed: 7 });
    const c = aggregateBlade(DS, { k: 2, samples: 1000, seed: 8 });
    assert.deepEqual(a.bootstrap, b.bootstrap);
    assert.notDeepEqual(a.bootstrap.weightedF1, c.bootstrap.weightedF1);
    const w = a.bootstrap.weightedF1;
    assert.ok(w.lo <= w.mean && w.mean <= w.hi && w.lo < w.hi);
    // one sample: the interval collapses onto that sample's weighted value, never the unweighted one
    const one = aggregateBlade(DS, { k: 2, samples: 1, seed: 3 });
    assert.equal(one.bootstrap.weightedF1.hi, one.bootstrap.weightedF1.mean);
    assert.equal(one.bootstrap.weightedF1.lo, one.bootstrap.weightedF1.mean);
    assert.notEqual(one.bootstrap.weightedF1.hi, one.bootstrap.unweightedF1.hi);
  });

  it('identical runs give a zero-width CI equal to the point value', () => {
    const same = [0, 1, 2, 3, 4].map(() => runs[2]!);
    const r = aggregateBlade([{ dataset: 'B', gt, runs: same }], { k: 2, samples: 200 });
    close(r.bootstrap.weightedF1.lo, r.point.weightedF1);
    close(r.bootstrap.weightedF1.hi, r.point.weightedF1);
  });

  it('§1.7 #8: coverage keyed by expanded spec id reaches 100%; keyed by name (BLADE) collapses colliding names', () => {
    const m = (ids: string[], names: string[]) => ({
      gtItems: ids,
      gtNames: names,
      precision: 1,
      matched: 1,
      denominator: 1,
    });
    const r1 = zeroRun('ok');
    r1.metrics.transformValue = m(
      ['s1__derive_pop_class_0', 's2__derive_pop_class_0'],
      ['derive_pop_class_0', 'derive_pop_class_0'],
    );
    const d: BladeDatasetRuns[] = [
      { dataset: 'amtl-like', gt: { numCvars: 1, numMspecs: 1, numMspecsUnique: 1, numTspecs: 2 }, runs: [r1] },
    ];
    assert.equal(aggregateBlade(d, { k: 10, samples: 2 }).point.perType.transformValue.coverage, 1);
    assert.equal(
      aggregateBlade(d, { k: 10, samples: 2, coverageKey: 'name' }).point.perType.transformValue.coverage,
      0.5,
    );
  });

  it('§1.7 #12 / §5.3 #3: failed runs score 0 and count (paper, default) or are dropped (code); generation failures are always padded', () => {
    const ok = runs[2]!;
    const d: BladeDatasetRuns[] = [
      { dataset: 'A', gt, runs: [ok, { ...zeroRun('failed') }, zeroRun('generation_failed')] },
    ];
    const paper = aggregateBlade(d, { k: 10, samples: 2 });
    const code = aggregateBlade(d, { k: 10, samples: 2, failedRuns: 'drop' });
    close(paper.point.perType.cvar.precision, 1 / 3);
    close(code.point.perType.cvar.precision, 1 / 2);
    assert.equal(code.datasets[0]!.runsDropped, 1);
    // a failed run cannot contribute coverage items even if it carried some
    const bad = run(
      { cvar: [['c1', 'c2', 'c3', 'c4'], 1], model: [[], 0], mc: [[], 0], tv: [[], 0], tg: [[], 0] },
      'failed',
    );
    assert.equal(aggregateBlade([{ dataset: 'A', gt, runs: [bad] }], { samples: 2 }).point.perType.cvar.coverage, 0);
  });

  it('§1.7 #13: a negative transform denominator (BLADE leaves −1 when no run converted) never gives negative coverage', () => {
    const r1 = zeroRun('ok');
    r1.metrics.transformValue = { gtItems: ['a'], gtNames: ['a'], precision: 1, matched: 1, denominator: 1 };
    const r = aggregateBlade([{ dataset: 'N', gt: { ...gt, numTspecs: -1 }, runs: [r1] }], { samples: 2 });
    assert.equal(r.point.perType.transformValue.coverage, 0);
    assert.ok(r.warnings.some((w) => /negative transform denominator/.test(w)));
    assert.equal(r.totals.T, 0);
  });

  it('§1.7 #13: F1 has a zero guard (NaN in BLADE when P = C = 0)', () => {
    assert.equal(f1(0, 0, true), 0);
    assert.ok(Number.isNaN(f1(0, 0, false)));
    const r = aggregateBlade([{ dataset: 'Z', gt, runs: [zeroRun('ok'), zeroRun('ok')] }], { samples: 3 });
    assert.equal(r.point.weightedF1, 0);
    assert.ok(
      Number.isNaN(
        aggregateBlade([{ dataset: 'Z', gt, runs: [zeroRun('ok')] }], { samples: 3, f1ZeroGuard: false }).point
          .weightedF1,
      ),
    );
  });

  it('rejects invalid options naming them', () => {
    assert.throws(
      () => aggregateBlade(DS, { failedRuns: 'ignore' as never }),
      /option failed_runs: must be one of zero, drop/,
    );
    assert.throws(() => aggregateBlade(DS, { k: 0 }), /option k/);
    assert.throws(() => aggregateBlade(DS, { samples: 1.5 }), /option samples/);
    assert.throws(() => aggregateBlade([{ dataset: 'E', gt, runs: [] }]), /dataset E: has no runs/);
  });

  it('per-metric bars (Fig. 4): precision series over runs, coverage over random k-subsets, bootstrapped means; seeded', () => {
    const a = bladeMetricBars(DS, { k: 2, samples: 300, seed: 5, combinations: 200 });
    const b = bladeMetricBars(DS, { k: 2, samples: 300, seed: 5, combinations: 200 });
    assert.deepEqual(a, b);
    // precision: mean of the 3 run precisions; bootstrap mean close to it
    assert.ok(Math.abs(a.perType.cvar.precision.mean - 2.5 / 3) < 0.05);
    // cvar coverage of every 2-subset of the 3 runs is 3/4
    assert.equal(a.perType.cvar.coverage.lo, 0.75);
    assert.equal(a.perType.cvar.coverage.hi, 0.75);
    // transform-value coverage: {r1,r2} → 3/5, {r1,r3} → 1, {r2,r3} → 1 ⇒ mean 13/15
    assert.ok(
      Math.abs(a.perType.transformValue.coverage.mean - 13 / 15) < 0.03,
      String(a.perType.transformValue.coverage.mean),
    );
    assert.ok(a.perType.transformValue.coverage.lo < a.perType.transformValue.coverage.hi);
    // all subsets of one run's item only: identical runs → zero-width interval
    const same = bladeMetricBars([{ dataset: 'S', gt, runs: [runs[2]!, runs[2]!, runs[2]!] }], {
      k: 2,
      samples: 50,
      combinations: 20,
    });
    assert.equal(same.perType.transformValue.coverage.lo, same.perType.transformValue.coverage.hi);
  });

  it('quantile matches numpy linear interpolation; PRNG is deterministic', () => {
    assert.equal(quantile([1, 2, 3, 4], 0.5), 2.5);
    close(quantile([10, 0, 5], 0.975), 9.75);
    const a = seededRandom(1);
    const b = seededRandom(1);
    assert.deepEqual([a(), a(), a()], [b(), b(), b()]);
  });
});

describe('BLADE MCQ accuracy (spec §1.4.8, §1.7 #11)', () => {
  it('strict letter parsing; BLADE fallback reads "Answer: B" as A', () => {
    assert.equal(parseMcqAnswer('B', 4), 'B');
    assert.equal(parseMcqAnswer('(C)', 4), 'C');
    assert.equal(parseMcqAnswer('{"answer": "D", "rationale": "because"}', 4), 'D');
    assert.equal(parseMcqAnswer('Answer: B\nRationale: ...', 4), 'B');
    assert.equal(parseMcqAnswer('I think the answer is c.', 4), 'C');
    assert.equal(parseMcqAnswer('Answer', 4), null);
    assert.equal(parseMcqAnswer('A or B', 4), null);
    assert.equal(parseMcqAnswer('D', 3), null, 'letter beyond the options');
    assert.equal(parseMcqAnswer('Answer: B', 4, 'blade'), 'A', 'BLADE bug reproduced in blade mode');
  });

  it('scores real hurricane and caschools MCQs: per dataset, averages and pooled CI', () => {
    const answers: McqAnswer[] = [];
    let expectedCorrect = 0;
    for (const ds of ['hurricane', 'caschools']) {
      const { mcqs } = parseBladeMcqs(sharedData('blade', 'datasets', ds, 'mcq_dataset.json'));
      expectedCorrect += Math.ceil(mcqs.mcqs.length / 2);
      mcqs.mcqs.forEach((q, i) =>
        answers.push({ dataset: ds, mcq: q, reply: i % 2 === 0 ? `Answer: ${q.correctLabel}` : 'no idea' }),
      );
    }
    const s = scoreBladeMcqs(answers, { seed: 1 });
    const h = s.perDataset.find((d) => d.dataset === 'hurricane')!;
    assert.equal(h.cvar.total, 2); // spec §1.2 table: hurricane 2 cvar / 3 transform MCQs
    assert.equal(h.transform.total, 3);
    assert.equal(s.pooled.total, answers.length);
    assert.equal(s.pooled.correct, expectedCorrect);
    assert.equal(s.unparsed, answers.length - s.pooled.correct);
    assert.ok(s.pooled.ci.lo <= s.pooled.accuracy && s.pooled.accuracy <= s.pooled.ci.hi);
    assert.equal(s.avgTotalAccuracy, (s.perDataset[0]!.total.accuracy + s.perDataset[1]!.total.accuracy) / 2);
    assert.ok(s.expectedCorrectByChance > 0 && s.expectedCorrectByChance < answers.length);
  });
});
