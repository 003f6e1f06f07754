/** The timeline opens from step summaries read by SQLite (issue 23): same rows as from full steps; search in the store. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../../../../src/core/store/run-store.ts';
import { searchSteps, summaryToTimelineStep, toTimelineStep } from '../../../../src/app/timeline/timeline.ts';
import type { StepRecord } from '../../../../src/core/agent/types.ts';

function step(i: number): StepRecord {
  const t = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
  const calls =
    i % 3 === 2
      ? []
      : [
          {
            id: `a${i}`,
            name: i % 2 ? 'python' : 'search_doc',
            argumentsText:
              i % 2
                ? JSON.stringify({ code: `x = ${i}\nprint("Öl café ${i}")` })
                : JSON.stringify({ keyword: `BMXBMI ${i}` }),
            observation: `obs ${i} ${'z'.repeat(50)} "quoted" ÄÖ`,
            isError: i % 5 === 0,
            truncated: false,
            durationMs: 3,
          },
          ...(i % 4 === 0
            ? [
                {
                  id: `b${i}`,
                  name: 'answer',
                  argumentsText: '{"q_id":"q1","answer":40.3}',
                  observation: 'recorded',
                  isError: false,
                  truncated: false,
                  durationMs: 1,
                },
              ]
            : []),
        ];
  return {
    runId: 'r',
    index: i,
    startedAt: t,
    endedAt: t,
    latencyMs: 10 + i,
    toolMs: 2 * i,
    assistant: {
      role: 'assistant',
      content: i % 3 === 2 ? `Thinking about step ${i}\nsecond line` : null,
      ...(calls.length
        ? {
            tool_calls: calls.map((c) => ({
              id: c.id,
              type: 'function' as const,
              function: { name: c.name, arguments: c.argumentsText },
            })),
          }
        : {}),
    },
    toolCalls: calls,
    extraMessages: [],
    usage: { input: 100 + i, output: 10 + i, cached: 0 },
    costUsd: null,
    finishReason: 'tool_calls',
  } as StepRecord;
}

test('timeline rows from summaries equal rows from full steps; store search equals in-memory search', async () => {
  const s = openStore(':memory:');
  try {
    await s.createRun({
      id: 'r',
      suite: 'longda',
      blockId: 'b',
      agent: 'llm',
      model: 'm',
      params: {},
      promptHash: 'h',
      toolSet: 't',
      dataChecksums: {},
      loupeVersion: 'test',
      sandbox: 'bubblewrap',
      workspace: '/nonexistent/ws',
    });
    for (let i = 0; i < 30; i++) await s.commitStep(step(i));
    const t0 = Date.UTC(2026, 0, 1);
    const full = await s.getSteps('r');
    assert.deepEqual(
      (await s.getStepSummaries('r')).map((x) => summaryToTimelineStep(x, t0)),
      full.map((x) => toTimelineStep(x, t0)),
    );
    for (const q of [
      '',
      'python',
      'BMXBMI 4',
      'obs 7',
      'second line',
      'answer 40.3',
      'nothing-like-this',
      'PYTHON x = 9',
    ]) {
      assert.deepEqual(await s.searchSteps('r', q), searchSteps(full, q), q);
    }
  } finally {
    s.close();
  }
});
