/**
 * Issue 22: the Results view's tool-usage heatmaps show each benchmark's own tools (python, final_answer, BLADE's
 * submit_analysis) next to LongDA's paper view (its Figure 8 tool list), per model.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { StepRecord } from '../../../../src/core/store/records.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';
import { buildResultsState } from '../../../../src/app/results/results-data.ts';
import { ownToolsHeatmap } from '../../../../src/app/timeline/timeline.ts';
import { LONGDA_TOOLS } from '../../../../src/core/benchmarks/longda/eval.ts';

const base = {
  agent: 'llm',
  params: {},
  promptHash: 'h',
  toolSet: 't',
  dataChecksums: {},
  loupeVersion: 't',
  sandbox: 'off',
  workspace: '/tmp/w',
};
function step(runId: string, index: number, names: string[]): StepRecord {
  const now = new Date().toISOString();
  return {
    runId,
    index,
    startedAt: now,
    endedAt: now,
    latencyMs: 1,
    toolMs: 1,
    assistant: { role: 'assistant', content: '' },
    toolCalls: names.map((n, i) => ({
      id: `c${index}-${i}`,
      name: n,
      argumentsText: n === 'python' ? JSON.stringify({ code: 'search_doc("x")' }) : '{}',
      observation: '',
      isError: false,
      truncated: false,
      durationMs: 1,
    })),
    extraMessages: [],
    usage: { input: 1, output: 1, cached: 0 },
    costUsd: null,
    finishReason: 'tool_calls',
  };
}

describe('own-tools heatmaps (issue 22)', () => {
  it('ownToolsHeatmap: rows are the tools called, most used first; null without calls', () => {
    const h = ownToolsHeatmap([[['python'], ['python', 'final_answer'], []]])!;
    assert.deepEqual(h.tools, ['python', 'final_answer']);
    assert.equal(
      h.counts[0]!.reduce((a, b) => a + b, 0),
      2,
    );
    assert.equal(ownToolsHeatmap([[[], []]]), null);
  });

  it('Results: LongDA keeps its paper view and gets its own tools; BLADE gets its own tools', async () => {
    assert.ok(!(LONGDA_TOOLS as readonly string[]).includes('final_answer'), 'the paper list has no final_answer');
    const store = openStore(':memory:');
    await store.createRun({ ...base, id: 'l1', suite: 'longda', blockId: 'b', model: 'm' });
    await store.commitStep(step('l1', 0, ['python']));
    await store.commitStep(step('l1', 1, ['final_answer']));
    await store.createRun({ ...base, id: 'b1', suite: 'blade', blockId: 'hurricane', model: 'm' });
    await store.commitStep(step('b1', 0, ['python']));
    await store.commitStep(step('b1', 1, ['submit_analysis']));
    const s = await buildResultsState(store, 'mem');
    const views = s.heatmaps.map((x) => [x.benchmark, x.view, x.tools.join(',')]);
    assert.deepEqual(
      views.find((v) => v[1] === 'own' && v[0] === 'LongDA'),
      ['LongDA', 'own', 'final_answer,python'],
    );
    assert.deepEqual(
      views.find((v) => v[1] === 'own' && v[0] === 'BLADE per run'),
      ['BLADE per run', 'own', 'python,submit_analysis'],
    );
    const paper = s.heatmaps.find((x) => x.view === 'paper')!;
    assert.ok(!paper.tools.includes('final_answer'));
    assert.ok(paper.tools.includes('search_doc'), 'the paper view counts helpers called inside python code');
    await store.close();
  });
});
