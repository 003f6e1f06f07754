/**
 * A human baseline on BLADE hurricane (issue 46): the expert's analysis goes through the BLADE tool set's
 * `submit_analysis` validation (a broken transform is refused, as for an agent), the valid one ends the run, and the
 * stored human run is scored by BLADE's scorer against the ground truth like any run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSuite } from '../../../../../src/core/benchmarks/index.ts';
import { HumanBaselineSession } from '../../../../../src/core/runs/human/session.ts';
import { scoreStoredRun } from '../../../../../src/core/runs/score-stored-run.ts';
import { ExactOnlyJudge } from '../../../../../src/core/eval/judges/judge.ts';
import { judgementStoreOf } from '../../../../../src/core/eval/store.ts';
import { openStore } from '../../../../../src/core/store/run-store.ts';
import { HURRICANE_SUBMISSION } from '../../../../helpers/fixtures.ts';
import { sharedData } from '../../../../helpers/shared.ts';

test(
  'human baseline on BLADE: the submission is validated by the BLADE tool set and the run is scored against the ground truth',
  { timeout: 300_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-human-blade-'));
    const store = openStore(join(dir, 'runs.sqlite'));
    let s: HumanBaselineSession | undefined;
    try {
      const suite = await loadSuite('blade', sharedData('blade', 'datasets'));
      const block = suite.blocks.find((b) => b.id === 'hurricane')!;
      s = new HumanBaselineSession({
        store,
        suite,
        block,
        annotator: 'grace',
        runsDir: join(dir, 'runs'),
        kernel: { sandbox: 'bubblewrap' },
      });
      const bad = await s.call('submit_analysis', {
        ...HURRICANE_SUBMISSION,
        transform_code: 'def transform(df):\n    return df[["no_such_column"]]',
      });
      assert.equal(bad.isError, true, bad.observation);
      assert.equal(bad.ended, undefined, 'a refused submission does not end the run');
      const ok = await s.call('submit_analysis', HURRICANE_SUBMISSION as unknown as Record<string, unknown>);
      assert.equal(ok.isError, false, ok.observation);
      const out = (await s.done)!;
      assert.equal(out.status, 'finished');
      const run = (await store.getRun(out.runId))!;
      assert.equal(run.agent, 'human:grace');
      const score = await scoreStoredRun(store, out.runId, {
        judge: new ExactOnlyJudge(judgementStoreOf(store)),
        runsRoot: join(dir, 'runs'),
        suites: new Map([[`${suite.kind}\u0000${suite.root}`, Promise.resolve(suite)]]),
      });
      assert.equal(score.error, undefined, score.error);
      // exact matching only (no LLM judge here): the model and the transform match the ground truth's
      assert.equal(score.summary.modelPrecision, 1);
      assert.equal(score.summary.transformValuePrecision, 1);
    } finally {
      await s?.close().catch(() => undefined);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
