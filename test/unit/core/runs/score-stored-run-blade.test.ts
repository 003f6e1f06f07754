/**
 * `loupe score` BLADE aggregate and the option failed_runs (spec §1.7 #12): a run whose scoring failed
 * is scored 0 and counted (zero, default) or dropped (drop); a run without a submission is an LM
 * generation failure, padded as 0 in both modes (BLADE code and paper agree there).
 * Expected values computed by hand below from the decision weights and P/C/F1 per type.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aggregateScores, scoreStoredRun, type RunScore } from '../../../../src/core/runs/score-stored-run.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';
import { loadSuite } from '../../../../src/core/benchmarks/index.ts';
import type { Suite } from '../../../../src/core/suites/types.ts';
import { ExactOnlyJudge } from '../../../../src/core/eval/judges/index.ts';
import { sharedData } from '../../../helpers/shared.ts';
import {
  zeroRun,
  type BladeAggregate,
  type BladeGtCounts,
  type BladeRunMetrics,
} from '../../../../src/core/benchmarks/blade/eval/metrics.ts';

// one dataset: 2 cvars, 1 model spec (1 unique), 2 transform specs → T=2 V=2 M=1 U=1 S=6;
// weights cvar 2/6, model 1/6, modelCvar 1/6, transformValue 1/6, transformGraph 1/6
const gt: BladeGtCounts = { numCvars: 2, numMspecs: 1, numMspecsUnique: 1, numTspecs: 2 };
const m = (precision: number, gtItems: string[]) => ({
  gtItems,
  gtNames: gtItems,
  precision,
  matched: 0,
  denominator: 0,
});
const valid: BladeRunMetrics = {
  runId: 'ok1',
  status: 'ok',
  metrics: {
    cvar: m(1, ['a', 'b']),
    model: m(1, ['m']),
    modelCvar: m(1, ['m']),
    transformValue: m(0.5, ['t1']),
    transformGraph: m(0.5, ['t1', 't2']),
  },
};

function score(runId: string, detail: unknown, error?: string): RunScore {
  return {
    runId,
    suite: 'blade',
    blockId: 'ds',
    model: 'M',
    agent: 'llm',
    status: 'completed',
    benchmark: 'blade',
    judgeId: 'none',
    options: {},
    summary: error ? {} : { cvarPrecision: 0 },
    pending: 0,
    unjudged: 0,
    detail,
    ...(error ? { error } : {}),
  };
}
const okRun = score('ok1', { score: valid, gtCounts: gt, dataset: 'ds' });
// scoring failed (e.g. the submission could not be converted): the error result names its dataset
const failedRun = score('bad1', { dataset: 'ds' }, 'conversion failed');
// no submit_analysis: scored as an LM generation failure (all zeros), no error
const noSubmission = score('none1', { score: zeroRun('generation_failed', 'none1'), gtCounts: gt, dataset: 'ds' });

// Only the valid run (n=1): P = (1,1,1,.5,.5), C = (1,1,1,.5,1), F1 = (1,1,1,.5,2/3)
//   weighted = (2·1 + 1 + 1 + .5 + 2/3)/6 = 31/36
// With a zero run (n=2): P halves = (.5,.5,.5,.25,.25), C unchanged, F1 = (2/3,2/3,2/3,1/3,.4)
//   weighted = (2·2/3 + 2/3 + 2/3 + 1/3 + .4)/6 = 17/30
const ONLY_VALID = 31 / 36;
const WITH_ZERO = 17 / 30;

async function weighted(scores: RunScore[], failedRuns?: string) {
  const raw: Record<string, string> = { samples: '20', ...(failedRuns ? { failed_runs: failedRuns } : {}) };
  const [agg] = await aggregateScores(scores, undefined, raw);
  assert.ok(agg);
  const extra = agg.extra as BladeAggregate & { error?: string };
  assert.equal(extra.error, undefined);
  return { agg, extra, w: extra.point.weightedF1 };
}

describe('score-run BLADE aggregate: failed_runs', () => {
  it('a run whose scoring failed scores 0 and counts with zero, and is dropped with drop and by default (official preset: BLADE drops it)', async () => {
    const dflt = await weighted([okRun, failedRun]);
    const zero = await weighted([okRun, failedRun], 'zero');
    const drop = await weighted([okRun, failedRun], 'drop');
    assert.ok(Math.abs(dflt.w - ONLY_VALID) < 1e-12, `default ${dflt.w}`);
    assert.ok(Math.abs(zero.w - WITH_ZERO) < 1e-12, `zero ${zero.w}`);
    assert.ok(Math.abs(drop.w - ONLY_VALID) < 1e-12, `drop ${drop.w}`);
    assert.equal(zero.extra.datasets[0]!.runsUsed, 2);
    assert.equal(drop.extra.datasets[0]!.runsUsed, 1);
    assert.equal(drop.extra.datasets[0]!.runsDropped, 1);
    // the option is recorded in the output
    assert.deepEqual(dflt.agg.options, { failed_runs: 'drop' });
    assert.equal(dflt.agg.preset, 'official');
    assert.deepEqual(drop.agg.options, { failed_runs: 'drop' });
    assert.match(drop.agg.method, /failed_runs=drop/);
    assert.equal(drop.extra.options.failedRuns, 'drop');
    assert.equal(zero.agg.failed, 1);
    assert.equal(zero.agg.runs, 2);
  });

  it('a run without a submission is padded as 0 in both modes', async () => {
    const zero = await weighted([okRun, noSubmission], 'zero');
    const drop = await weighted([okRun, noSubmission], 'drop');
    assert.ok(Math.abs(zero.w - WITH_ZERO) < 1e-12, `zero ${zero.w}`);
    assert.ok(Math.abs(drop.w - WITH_ZERO) < 1e-12, `drop ${drop.w}`);
  });

  it('a failed run of a dataset with no scored run is left out with a warning', async () => {
    const other = { ...failedRun, runId: 'bad2', blockId: 'other', detail: { dataset: 'other' } };
    const zero = await weighted([okRun, other], 'zero');
    assert.ok(Math.abs(zero.w - ONLY_VALID) < 1e-12);
    assert.ok(
      zero.extra.warnings.some((w) => w.includes('bad2 (other)')),
      zero.extra.warnings.join('; '),
    );
  });

  it('an invalid failed_runs value is an error naming the option (parsed once, before aggregating)', async () => {
    await assert.rejects(
      aggregateScores([okRun, failedRun], undefined, { failed_runs: 'skip' }),
      /option failed_runs: must be one of zero, drop, got 'skip'/,
    );
  });

  it('scoreStoredRun: a BLADE run whose scoring fails keeps its dataset for the aggregate', async () => {
    const root = sharedData('blade', 'datasets');
    const suite = await loadSuite('blade', root);
    const block = suite.blocks.find((b) => b.id === 'hurricane')!;
    // the scorer cannot run without the annotations: a scoring failure of this run
    const broken: Suite = {
      ...suite,
      blocks: [{ ...block, hidden: { ...block.hidden, annotations: undefined } }],
    } as Suite;
    const s = openStore(':memory:');
    try {
      await s.createRun({
        id: 'b1',
        suite: 'blade',
        blockId: 'hurricane',
        agent: 'llm',
        model: 'm',
        params: { suiteRoot: root },
        promptHash: 'h',
        toolSet: 'blade',
        dataChecksums: {},
        loupeVersion: 't',
        sandbox: 'off',
        workspace: '/tmp',
      });
      const r = await scoreStoredRun(s, 'b1', {
        judge: new ExactOnlyJudge({ get: async () => undefined, put: async () => {}, listPending: async () => [] }),
        suites: new Map([[`blade\u0000${root}`, Promise.resolve(broken)]]),
      });
      assert.match(r.error ?? '', /annotations/);
      assert.equal(r.benchmark, 'blade');
      assert.deepEqual(r.detail, { dataset: block.blade?.dataset ?? block.id });
    } finally {
      s.close();
    }
  });
});
