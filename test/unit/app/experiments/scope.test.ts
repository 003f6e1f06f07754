/**
 * Issue 43: the host-neutral run scope of an experiment, the built-in and saved run filters, and Results scoped to one
 * experiment (real LongDA ground truth).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { applyRunFilter, filterChoices, labelledRun } from '../../../../src/app/experiments/filters.ts';
import { ALL_RUNS, runScope, scopeCaption, scopeRuns } from '../../../../src/app/experiments/scope.ts';
import { buildResultsState } from '../../../../src/app/results/results-data.ts';
import { queueAssignmentStoreOf } from '../../../../src/core/annotations/queues.ts';
import { annotationStoreOf } from '../../../../src/core/annotations/index.ts';
import { loadLongdaGroundTruth, scoreLongda } from '../../../../src/core/benchmarks/longda/eval.ts';
import { experimentStoreOf } from '../../../../src/core/store/experiments.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';
import type { StepRecord } from '../../../../src/core/store/records.ts';
import { sharedData } from '../../../helpers/shared.ts';

const base = {
  suite: 'longda',
  agent: 'llm',
  params: {},
  promptHash: 'h',
  toolSet: 'longda',
  dataChecksums: {},
  loupeVersion: 't',
  sandbox: 'off',
  workspace: '/tmp/x',
};

function step(runId: string, index: number, isError: boolean): StepRecord {
  const now = new Date().toISOString();
  return {
    runId,
    index,
    startedAt: now,
    endedAt: now,
    latencyMs: 5,
    toolMs: 1,
    assistant: { role: 'assistant', content: '' },
    toolCalls: [
      {
        id: `c${index}`,
        name: 'python',
        argumentsText: '{}',
        observation: isError ? 'Traceback' : 'ok',
        isError,
        truncated: false,
        durationMs: 1,
      },
    ],
    extraMessages: [],
    usage: { input: 10, output: 1, cached: 0 },
    costUsd: null,
    finishReason: 'tool_calls',
  } as StepRecord;
}

describe('experiments: run scope and filters', () => {
  const gt = loadLongdaGroundTruth(join(sharedData('longda', 'benchmark'), 'benchmark.csv'));
  const block = gt.filter((q) => q.source === 'NCHS Data Brief No. 508');
  const blockId = `${block[0]!.survey}_${block[0]!.source}`;

  async function seeded() {
    const store = openStore(':memory:');
    const right = Object.fromEntries(block.map((q) => [q.longdaId, q.answerText]));
    for (const [id, model, scored, err] of [
      ['ra', 'model-a', true, false],
      ['rb', 'model-b', true, true],
      ['rc', 'model-c', false, false],
    ] as const) {
      await store.createRun({ ...base, id, blockId, model });
      await store.commitStep(step(id, 0, err));
      await store.updateRun(id, { status: 'finished' });
      if (scored) {
        const score = scoreLongda(block, right);
        await store.scores.save({
          runId: id,
          benchmark: 'longda',
          judgeId: 'none',
          options: {},
          summary: { queries: score.n, coverage: score.coverage, match: score.match },
          detail: score,
          pending: 0,
          scoredAt: new Date().toISOString(),
        });
      }
    }
    const x = experimentStoreOf(store);
    await x.tag('rb', 'exp-1', 'ana');
    await x.tag('rc', 'exp-1', 'ana');
    await x.rename('rb', 'B with errors', 'ana');
    return store;
  }

  it('the scope of an experiment is the runs tagged with it; no experiment is every run', async () => {
    const store = await seeded();
    const runs = await store.listRuns();
    assert.equal(await runScope(store, null), ALL_RUNS);
    assert.equal(scopeRuns(runs, ALL_RUNS).length, 3);
    const s = await runScope(store, 'exp-1');
    assert.deepEqual(
      scopeRuns(runs, s)
        .map((r) => r.id)
        .sort(),
      ['rb', 'rc'],
    );
    assert.equal(scopeCaption(s), 'experiment exp-1 (2 runs)');
    assert.equal(scopeRuns(runs, await runScope(store, 'none')).length, 0);
    store.close();
  });

  it("Results show only the experiment's runs", async () => {
    const store = await seeded();
    const all = await buildResultsState(store, 'mem');
    assert.deepEqual(
      all.tables
        .find((t) => t.id === 'longda')!
        .rows.map((r) => r.model)
        .sort(),
      ['model-a', 'model-b', 'model-c'],
    );
    const scoped = await buildResultsState(store, 'mem', await runScope(store, 'exp-1'));
    assert.deepEqual(
      scoped.tables
        .find((t) => t.id === 'longda')!
        .rows.map((r) => r.model)
        .sort(),
      ['model-b', 'model-c'],
    );
    assert.equal(scoped.experiment, 'experiment exp-1 (2 runs)');
    const none = await buildResultsState(store, 'mem', await runScope(store, 'nope'));
    assert.match(none.message ?? '', /No run of experiment nope/);
    store.close();
  });

  it('built-in filters: tool error, unscored, pending items for me; saved filters by tag and text', async () => {
    const store = await seeded();
    const runs = await store.listRuns();
    const ids = async (spec: Parameters<typeof applyRunFilter>[2], who = 'ana') =>
      (await applyRunFilter(store, runs, spec, { annotator: who })).map((r) => r.id).sort();
    assert.deepEqual(await ids({ builtin: 'tool-error' }), ['rb']);
    assert.deepEqual(await ids({ builtin: 'unscored' }), ['rc']);
    assert.deepEqual(await ids({ builtin: 'pending-for-me' }), []);
    const ann = annotationStoreOf(store);
    await ann.putItem({
      id: 'it-1',
      subject: { kind: 'step', runId: 'ra', from: 0, to: 0 },
      task: 'claim-support',
      input: { claim: 'c', evidence: 'e' },
      inputHash: null,
      criterion: null,
      suite: 'longda',
      runId: 'ra',
      itemRef: '1',
      suiteVersion: 'v',
    } as never);
    const q = await ann.openQueue({ kind: 'sampled', itemIds: ['it-1'] });
    await queueAssignmentStoreOf(store).assign(q.id, 'all', 'ana', 'lead');
    assert.deepEqual(await ids({ builtin: 'pending-for-me' }), ['ra']);
    assert.deepEqual(await ids({ builtin: 'pending-for-me' }, 'bo'), []);
    assert.deepEqual(await ids({ tag: 'exp-1', text: 'errors' }), ['rb']);
    assert.deepEqual(await ids({ text: 'MODEL-C' }), ['rc']);
    await assert.rejects(
      applyRunFilter(store, runs, { builtin: 'future' }, { annotator: 'ana' }),
      /filter future is not known/,
    );
    await experimentStoreOf(store).saveFilter('exp-1 only', { tag: 'exp-1' }, 'ana');
    assert.deepEqual(
      (await filterChoices(store)).map((c) => [c.name, c.builtin]),
      [
        ['Runs with a tool error', true],
        ['Unscored runs', true],
        ['Pending items for me', true],
        ['exp-1 only', false],
      ],
    );
    assert.deepEqual(labelledRun({ tags: ['a', 'b'], name: 'N' }, 'fallback'), { label: 'N', tags: '#a #b' });
    assert.deepEqual(labelledRun(undefined, 'fallback'), { label: 'fallback', tags: '' });
    store.close();
  });
});
