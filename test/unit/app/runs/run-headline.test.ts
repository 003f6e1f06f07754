/**
 * Issue 22: the Runs view's headline metric per run, from the benchmark's presentation: a stored score, a judge-free
 * run scored live (real LongDA ground truth), a run still going and a run that needs a judge ("not scored").
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadLongdaGroundTruth } from '../../../../src/core/benchmarks/longda/eval.ts';
import { parseAnswerArg } from '../../../../src/core/benchmarks/longda/toolset.ts';
import { findBenchmark } from '../../../../src/core/benchmarks/registry.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';
import type { RunStore } from '../../../../src/core/store/types.ts';
import { headlineFrom, runHeadlines } from '../../../../src/app/runs/run-headline.ts';
import { buildResultsState } from '../../../../src/app/results/results-data.ts';
import { sharedData } from '../../../helpers/shared.ts';

const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const gt = loadLongdaGroundTruth(join(sharedData('longda', 'benchmark'), 'benchmark.csv')).filter(
  (q) => q.source === 'NCHS Data Brief No. 508',
);
let dir = '';
let store: RunStore;
const base = () => ({
  suite: 'longda',
  blockId: BLOCK,
  agent: 'llm',
  model: 'm',
  params: { suiteRoot: sharedData('longda', 'benchmark') },
  promptHash: 'h',
  toolSet: 'longda',
  dataChecksums: {},
  loupeVersion: 't',
  sandbox: 'off',
  workspace: dir,
});

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-headline-'));
  store = openStore(join(dir, 'runs.sqlite'));
  const now = new Date().toISOString();
  for (const id of ['done', 'going']) {
    await store.createRun({ ...base(), id });
    const v = (parseAnswerArg(gt[0]!.answerText) as { value: number | number[] }).value;
    await store.commitStep(
      {
        runId: id,
        index: 0,
        startedAt: now,
        endedAt: now,
        latencyMs: 1,
        toolMs: 1,
        assistant: { role: 'assistant', content: '' },
        toolCalls: [
          {
            id: 'c',
            name: 'answer',
            argumentsText: JSON.stringify({ action: 'add', q_id: gt[0]!.longdaId, answer: v }),
            observation: 'ok',
            isError: false,
            truncated: false,
            durationMs: 1,
          },
        ],
        extraMessages: [],
        usage: { input: 1, output: 1, cached: 0 },
        costUsd: null,
        finishReason: 'tool_calls',
      },
      { answers: [{ runId: id, queryId: gt[0]!.longdaId, answer: v, raw: gt[0]!.answerText, stepIndex: 0 }] },
    );
  }
  await store.updateRun('done', { status: 'finished' });
  await store.updateRun('going', { status: 'running' });
  await store.createRun({ ...base(), suite: 'blade', blockId: 'hurricane', id: 'blade-1' });
  await store.updateRun('blade-1', { status: 'finished' });
  await store.createRun({ ...base(), suite: 'blade', blockId: 'hurricane', id: 'blade-2' });
  await store.updateRun('blade-2', { status: 'finished' });
  await store.scores.save({
    runId: 'blade-2',
    benchmark: 'blade',
    judgeId: 'llm:x',
    options: {},
    summary: { transformValuePrecision: 0.5 },
    detail: null,
    pending: 2,
    scoredAt: now,
  });
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('run headline metric (issue 22)', () => {
  it('formats the presentation main metric: percent metrics as %, others as numbers, pending counted', () => {
    const longda = findBenchmark('longda')!;
    const m = longda.presentation.mainMetric!;
    assert.equal(headlineFrom(longda, { [m.key]: 0.25 }, 's')?.text, `${m.label} 25.0%`);
    assert.equal(headlineFrom(longda, {}, 's')?.value, null);
    const ab = findBenchmark('analystbench')!;
    const k = ab.presentation.mainMetric!;
    assert.equal(k.percent, false);
    assert.equal(headlineFrom(ab, { [k.key]: 62.5 }, 's', 3)?.text, `${k.label} 62.5 (3 pending)`);
  });

  it('stored score, live score of an ended judge-free run, not scored while running or without a judge', async () => {
    const runs = await store.listRuns();
    const h = await runHeadlines(store, runs);
    const label = findBenchmark('longda')!.presentation.mainMetric!.label;
    assert.equal(
      h.get('done')?.text,
      `${label} ${(100 / gt.length).toFixed(1)}%`,
      "one of the block's queries right, scored live",
    );
    assert.match(h.get('done')!.source, /live/);
    assert.equal(h.get('going')?.text, 'not scored');
    assert.equal(h.get('blade-1')?.text, 'not scored');
    assert.match(h.get('blade-1')!.source, /needs a judge/);
    assert.equal(h.get('blade-2')?.text, `${findBenchmark('blade')!.presentation.mainMetric!.label} 50.0% (2 pending)`);
    // issue 42 defect 2: the live score is saved, so Results rests on the same score and shows the same number
    const off = await runHeadlines(store, runs, { live: false });
    assert.equal(off.get('done')?.text, h.get('done')?.text, 'read back from the store, no live scoring');
    assert.match(off.get('done')!.source, /stored score/);
    const results = await buildResultsState(store, 'mem');
    const row = results.tables.find((t) => t.id === 'longda')!.rows.find((r) => r.block === BLOCK)!;
    assert.deepEqual(row.runs, { total: 2, scored: ['done'], unscored: ['going'] });
    assert.equal(row.cells.match?.value, h.get('done')!.value, 'Results and the Runs view agree');
    assert.deepEqual(row.cells.match?.runIds, ['done']);
  });
});
