import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { searchSteps, timelineHeatmap, toTimelineStep } from '../../../../src/app/timeline/timeline.ts';
import { formatAgentEvent } from '../../../../src/core/agent/transcript.ts';
import type { StepRecord } from '../../../../src/core/agent/types.ts';

function step(
  index: number,
  calls: { name: string; args: string; obs?: string; err?: boolean }[],
  content = '',
): StepRecord {
  return {
    runId: 'r1',
    index,
    startedAt: new Date(1_000_000 + index * 1000).toISOString(),
    endedAt: new Date(1_000_500 + index * 1000).toISOString(),
    latencyMs: 300,
    toolMs: 200,
    assistant: { role: 'assistant', content, tool_calls: [] },
    toolCalls: calls.map((c, i) => ({
      id: `c${index}-${i}`,
      name: c.name,
      argumentsText: c.args,
      observation: c.obs ?? 'ok',
      isError: c.err ?? false,
      truncated: false,
      durationMs: 200,
    })),
    extraMessages: [],
    usage: { input: 100, output: 20, cached: 0 },
    costUsd: null,
    finishReason: 'tool_calls',
  };
}

describe('core/agent/timeline', () => {
  it('summarises a step by its first tool call and main argument', () => {
    const row = toTimelineStep(
      step(2, [
        { name: 'search_doc', args: '{"keyword":"WTMEC2YR","max_matches":5}' },
        { name: 'python', args: '{"code":"1+1"}' },
      ]),
      1_000_000,
    );
    assert.equal(row.summary, 'search_doc(keyword=WTMEC2YR) +1');
    assert.deepEqual(row.tools, ['search_doc', 'python']);
    assert.equal(row.startMs, 2000);
    assert.equal(row.durationMs, 500);
    assert.equal(row.error, false);
  });

  it('marks failed tool calls and survives malformed argument JSON', () => {
    const row = toTimelineStep(step(0, [{ name: 'python', args: '{"code": "x', err: true }]), 1_000_000);
    assert.equal(row.error, true);
    assert.match(row.summary, /^python\(\{"code": "x\)$/);
  });

  it('searches full text of messages, arguments and observations, every word', () => {
    const steps = [
      step(0, [
        { name: 'search_doc', args: '{"keyword":"WTMEC2YR"}', obs: 'Page 29: Full sample 2 year MEC exam weight' },
      ]),
      step(1, [{ name: 'python', args: '{"code":"d.BMXBMI >= 30"}', obs: 'overall 40.3' }], 'Computing obesity'),
      step(2, [], 'FINISH: obesity 40.3 overall'),
    ];
    assert.deepEqual(searchSteps(steps, 'mec exam'), [0]);
    assert.deepEqual(searchSteps(steps, '40.3 OBESITY'), [1, 2]);
    assert.deepEqual(searchSteps(steps, 'bmxbmi'), [1]);
    assert.deepEqual(searchSteps(steps, '  '), [0, 1, 2]);
  });

  it('uses the message text when there is no tool call', () => {
    assert.equal(toTimelineStep(step(0, [], 'FINISH: done\nmore'), 0).summary, 'FINISH: done more');
  });

  it('bins tool usage over normalised progress, each non-empty column summing to 1', () => {
    const rows = [0, 1, 2, 3].map((i) =>
      toTimelineStep(
        step(
          i,
          i < 2
            ? [{ name: 'read_doc', args: '{}' }]
            : [
                { name: 'python', args: '{}' },
                { name: 'answer', args: '{}' },
              ],
        ),
        0,
      ),
    );
    const h = timelineHeatmap(rows, 4);
    assert.deepEqual(h.tools.slice().sort(), ['answer', 'python', 'read_doc']);
    for (let b = 0; b < 4; b++) {
      const sum = h.matrix.reduce((acc, r) => acc + (r[b] ?? 0), 0);
      const calls = h.counts.reduce((acc, r) => acc + (r[b] ?? 0), 0);
      assert.ok(calls === 0 ? sum === 0 : Math.abs(sum - 1) < 1e-9);
    }
    assert.equal(
      h.counts.flat().reduce((a, b) => a + b, 0),
      6,
    );
  });
});

describe('core/agent/transcript', () => {
  it('shows tool calls with their code and observations with a status mark', () => {
    const call = formatAgentEvent(
      {
        type: 'tool-call',
        runId: 'r',
        step: 0,
        call: { id: 'a', name: 'python', argumentsText: '{"code":"print(1)\\nprint(2)"}' },
      },
      { color: false },
    );
    assert.equal(call, '\r\n▶ python print(1)\r\nprint(2)\r\n');
    const obs = formatAgentEvent(
      {
        type: 'observation',
        runId: 'r',
        step: 0,
        callId: 'a',
        name: 'python',
        observation: 'Traceback',
        isError: true,
      },
      { color: true },
    );
    assert.ok(obs.startsWith('\u001b[31m  ✘ \u001b[0m'), JSON.stringify(obs));
  });

  it("says which part of a step's tokens its tools' own model calls used", () => {
    const record = step(0, [
      { name: 'find_variables', args: '{"question":"q"}' },
      { name: 'read_doc', args: '{}' },
    ]);
    const plain = formatAgentEvent({ type: 'step-end', runId: 'r', step: 0, record }, { color: false });
    assert.match(plain, /tokens 100 in \/ 20 out · model/);
    const dec = { input: 70, output: 5, cached: 0 };
    record.toolCalls[0]!.modelUse = { calls: 1, usage: dec, costUsd: null };
    const s = formatAgentEvent({ type: 'step-end', runId: 'r', step: 0, record }, { color: false });
    assert.ok(
      s.includes(`tokens 100 in / 20 out (incl. ${dec.input} in / ${dec.output} out by find_variables) · model`),
      s,
    );
  });

  it('prints elapsed time and the end status', () => {
    const s = formatAgentEvent(
      { type: 'run-end', runId: 'r', status: 'budget_exhausted', reason: 'max steps (3)', steps: 3 },
      { color: false, startMs: 0, now: () => 12_345 },
    );
    assert.equal(s, '\r\n[12.3s] ■ run budget_exhausted after 3 steps: max steps (3)\r\n');
  });
});
