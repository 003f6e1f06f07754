/**
 * The Results panel's data shaping on a real run store: LongDA scores computed by the core scorer on the real
 * ground truth (NCHS Data Brief 508 from $LOUPE_SHARED), recorded steps, BLADE per-type summaries.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { join } from 'node:path';
import { loadLongdaGroundTruth, scoreLongda, toolUsageHeatmap } from '../../../../src/core/benchmarks/longda/eval.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';
import type { StepRecord } from '../../../../src/core/agent/types.ts';
import { buildResultsState } from '../../../../src/app/results/results-data.ts';
import { longdaStepTools as stepTools } from '../../../../src/core/benchmarks/longda/presentation.ts';
import { sharedData } from '../../../helpers/shared.ts';

const base = {
  suite: 'longda',
  agent: 'llm',
  params: { temperature: 0 },
  promptHash: 'h',
  toolSet: 'longda',
  dataChecksums: {},
  loupeVersion: '0.1.0',
  sandbox: 'off',
  workspace: '/tmp/w',
};

function step(
  runId: string,
  index: number,
  calls: { name: string; args?: unknown }[],
  input = 1000,
  output = 100,
): StepRecord {
  const now = new Date().toISOString();
  return {
    runId,
    index,
    startedAt: now,
    endedAt: now,
    latencyMs: 5,
    toolMs: 1,
    assistant: { role: 'assistant', content: '', tool_calls: [] },
    toolCalls: calls.map((c, i) => ({
      id: `c${index}-${i}`,
      name: c.name,
      argumentsText: JSON.stringify(c.args ?? {}),
      observation: '',
      isError: false,
      truncated: false,
      durationMs: 1,
    })),
    extraMessages: [],
    usage: { input, output, cached: 0 },
    costUsd: null,
    finishReason: 'tool_calls',
  };
}

describe('results data', () => {
  const gt = loadLongdaGroundTruth(join(sharedData('longda', 'benchmark'), 'benchmark.csv'));
  const block = gt.filter((q) => q.source === 'NCHS Data Brief No. 508');
  const blockId = block[0] ? `${block[0].survey}_${block[0].source}` : '';

  it('counts LongTA tool calls from function calls and from code actions', () => {
    assert.deepEqual(
      stepTools([
        { name: 'search_doc', argumentsText: '{}' },
        { name: 'python', argumentsText: JSON.stringify({ code: 'x = retriever("a")\nanswer(1, 2)' }) },
      ]),
      ['search_doc', 'retriever', 'answer'],
    );
  });

  it('builds LongDA rows per model × block, scatter points and heatmaps whose numbers link to their runs', async () => {
    assert.equal(block.length, 9, 'Data Brief 508 has 9 queries');
    const store = openStore(':memory:');
    // model-a: every answer right (the ground truth itself). model-b: only the first three.
    const right = Object.fromEntries(block.map((q) => [q.longdaId, q.answerText]));
    const partly = Object.fromEntries(block.slice(0, 3).map((q) => [q.longdaId, q.answerText]));
    // mcp:x: an external MCP client whose token use is unknown (issue 24): its tokens are null, never 0, and it has no
    // point on the match-vs-tokens figure
    const runs: [string, string, Record<string, string>][] = [
      ['ra', 'model-a', right],
      ['rb', 'model-b', partly],
      ['rm', 'mcp:x/1', partly],
    ];
    for (const [id, model, answers] of runs) {
      const mcp = model.startsWith('mcp:');
      await store.createRun({ ...base, id, blockId, model, ...(mcp ? { agent: model, tokensKnown: false } : {}) });
      const usage = (s: StepRecord): StepRecord => (mcp ? { ...s, usage: null } : s);
      await store.commitStep(usage(step(id, 0, [{ name: 'search_doc' }, { name: 'read_doc' }])));
      await store.commitStep(usage(step(id, 1, [{ name: 'python', args: { code: 'answer("q1", 1)' } }])));
      const score = scoreLongda(block, answers);
      await store.scores.save({
        runId: id,
        benchmark: 'longda',
        judgeId: 'none',
        options: { tolerance: 0.05, list_scoring: 'partial' },
        summary: { queries: score.n, coverage: score.coverage, match: score.match },
        detail: score,
        pending: 0,
        scoredAt: new Date().toISOString(),
      });
    }
    const s = await buildResultsState(store, 'mem');
    const t = s.tables.find((x) => x.id === 'longda');
    assert.ok(t);
    assert.deepEqual(
      t.options,
      { tolerance: 0.05, list_scoring: 'partial', preset: 'legacy' },
      'a score stored without a preset reads as legacy (issue 21)',
    );
    const a = t.rows.find((r) => r.model === 'model-a');
    const b = t.rows.find((r) => r.model === 'model-b');
    assert.equal(a?.cells.match?.value, 1);
    assert.deepEqual(a?.cells.match?.runIds, ['ra']);
    assert.ok(Math.abs((b?.cells.match?.value ?? 0) - 3 / 9) < 1e-9);
    assert.equal(a?.cells.inputTokens?.value, 2000);
    assert.equal(a?.cells.steps?.value, 2);
    const m = t.rows.find((r) => r.model === 'mcp:x/1');
    assert.ok(Math.abs((m?.cells.match?.value ?? 0) - 3 / 9) < 1e-9);
    assert.equal(m?.cells.inputTokens?.value, null, 'unknown token use is null, not 0');
    assert.equal(m?.cells.outputTokens?.value, null);
    assert.equal(m?.cells.steps?.value, 2);
    assert.equal((await store.getRun('rm'))?.tokens, null);
    assert.ok((await store.getSteps('rm')).every((x) => x.usage === null));
    assert.ok((await store.getStepSummaries('rm')).every((x) => x.usage === null));
    assert.equal(s.scatter.length, 2, 'no match-vs-tokens point for the MCP client');
    assert.deepEqual(s.scatter.find((p) => p.model === 'model-b')?.runIds, ['rb']);
    assert.equal(s.scatter.find((p) => p.model === 'model-a')?.totalTokens, 2200);
    const hm = s.heatmaps.find((x) => x.model === 'model-a');
    const expected = toolUsageHeatmap([[['search_doc', 'read_doc'], ['answer']]]);
    assert.deepEqual(hm?.matrix, expected.matrix);
    assert.equal(s.message, undefined);
    store.close();
  });

  it('issue 42 defect 2: a row mixing scored and unscored runs computes every figure over the scored runs and names the others', async () => {
    const store = openStore(':memory:');
    const right = Object.fromEntries(block.map((q) => [q.longdaId, q.answerText]));
    // three repeats of one model on one block; the third (more steps, more tokens, longer) has no stored score
    for (const [id, scored, steps] of [
      ['s1', true, 2],
      ['s2', true, 2],
      ['u3', false, 5],
    ] as const) {
      await store.createRun({ ...base, id, blockId, model: 'model-a' });
      for (let i = 0; i < steps; i++) await store.commitStep(step(id, i, [{ name: 'search_doc' }], 1000, 100));
      await store.updateRun(id, { status: 'finished', addDurationMs: steps * 1000 });
      if (!scored) continue;
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
    const s = await buildResultsState(store, 'mem');
    const row = s.tables
      .find((x) => x.id === 'longda')!
      .rows.find((r) => r.model === 'model-a' && r.block === blockId)!;
    assert.deepEqual(
      { ...row.runs, scored: [...row.runs!.scored].sort() },
      { total: 3, scored: ['s1', 's2'], unscored: ['u3'] },
    );
    for (const [k, c] of Object.entries(row.cells)) {
      assert.deepEqual([...c.runIds].sort(), ['s1', 's2'], `column ${k} rests on the scored runs only`);
    }
    assert.equal(row.cells.inputTokens?.value, 4000, "2 scored runs × 2 steps × 1000, not the unscored run's 5000 too");
    assert.equal(row.cells.time?.value, 4);
    assert.equal(row.cells.steps?.value, 2);
    assert.deepEqual([...s.scatter.find((p) => p.model === 'model-a')!.runIds].sort(), ['s1', 's2']);
    store.close();
  });

  it('aggregates BLADE run scores with the core bootstrap into per-type rows with CIs', async () => {
    const store = openStore(':memory:');
    const metric = (precision: number, gtItems: string[]) => ({
      gtItems,
      precision,
      matched: precision * 4,
      denominator: 4,
    });
    const runScore = (id: string, p: number) => ({
      runId: id,
      suite: 'blade',
      blockId: 'fish',
      model: 'm',
      agent: 'llm',
      status: 'done',
      benchmark: 'blade',
      judgeId: 'llm',
      options: {},
      summary: { cvarPrecision: p },
      pending: id === 'b1' ? 2 : 0,
      unjudged: 0,
      detail: {
        dataset: 'fish',
        gtCounts: { numCvars: 4, numMspecs: 2, numMspecsUnique: 2, numTspecs: 6 },
        score: {
          runId: id,
          status: 'ok',
          metrics: {
            cvar: metric(p, ['c1', id === 'b1' ? 'c2' : 'c3']),
            model: metric(1, ['m1']),
            modelCvar: metric(0.5, ['m1']),
            transformValue: metric(p, ['t1']),
            transformGraph: metric(p, ['t1', 't2']),
          },
        },
      },
    });
    for (const [id, p] of [
      ['b1', 0.5],
      ['b2', 1],
    ] as const) {
      await store.createRun({ ...base, suite: 'blade', id, blockId: 'fish', model: 'm' });
      const rs = runScore(id, p);
      await store.scores.save({
        runId: id,
        benchmark: 'blade',
        judgeId: 'llm',
        options: {},
        summary: rs.summary,
        detail: rs,
        pending: rs.pending,
        scoredAt: new Date().toISOString(),
      });
    }
    const s = await buildResultsState(store, 'mem');
    const cvar = s.blade.find((r) => r.decisionType === 'cvar');
    assert.ok(cvar, JSON.stringify(s.blade.map((r) => r.decisionType)));
    assert.ok(
      cvar.precision.value !== null && cvar.precision.value > 0.5 && cvar.precision.value < 1,
      String(cvar.precision.value),
    );
    assert.ok(
      cvar.f1.ci && cvar.f1.ci[0] <= (cvar.f1.value ?? 0) && (cvar.f1.value ?? 0) <= cvar.f1.ci[1],
      'F1 inside its CI',
    );
    assert.deepEqual([...cvar.f1.runIds].sort(), ['b1', 'b2']);
    assert.equal(cvar.f1.pending, 2);
    assert.ok(s.blade.some((r) => r.decisionType === 'weighted' && r.f1.value !== null));
    assert.equal(s.bladeOptions?.k, 10);
    assert.ok(
      s.tables.some((t) => t.id === 'blade'),
      'per-run BLADE precisions as a table',
    );
    store.close();
  });

  it('says what to do when the store has runs but no scores', async () => {
    const store = openStore(':memory:');
    await store.createRun({ ...base, id: 'x', blockId: 'B', model: 'm' });
    const s = await buildResultsState(store, 'runs.sqlite');
    assert.match(s.message ?? '', /none scored yet.*loupe score/);
    store.close();
  });
});
