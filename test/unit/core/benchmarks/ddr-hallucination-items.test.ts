import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ddrHallucinationItems } from '../../../../src/core/benchmarks/ddr/hallucination-items.ts';
import type { StepRecord } from '../../../../src/core/store/records.ts';

function step(index: number, query: string, observation: string, content = ''): StepRecord {
  const t = new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString();
  return {
    runId: 'r',
    index,
    startedAt: t,
    endedAt: t,
    latencyMs: 1,
    toolMs: 1,
    assistant: { role: 'assistant', content },
    toolCalls: [
      {
        id: `c${index}`,
        name: 'execute_sql',
        argumentsText: JSON.stringify({ query }),
        observation,
        isError: false,
        truncated: false,
        durationMs: 1,
      },
    ],
    extraMessages: [],
    usage: { input: 1, output: 1, cached: 0 },
    costUsd: null,
    finishReason: 'tool_calls',
  };
}

describe('ddr hallucination items (issue 42 defect 4)', () => {
  const steps = [
    step(0, 'SELECT hadm_id FROM admissions WHERE subject_id = 7', '3 rows: 101, 102, 103'),
    step(1, 'SELECT icd_code, long_title FROM diagnoses_icd', 'I10 Essential (primary) hypertension'),
    step(2, 'SELECT itemid FROM labevents LIMIT 3', '50912, 50971, 51006'),
  ];
  it('judges each fact of a compound insight apart, each with the steps relevant to it', () => {
    const { items, unchecked } = ddrHallucinationItems(
      [{ stepIndex: 2, insight: '1. multiple admissions 2. hypertension 3. female, aged 61' }],
      steps,
    );
    assert.equal(unchecked.length, 0);
    assert.deepEqual(
      items.map((i) => i.insight),
      ['multiple admissions', 'hypertension', 'female, aged 61'],
    );
    assert.deepEqual(items[0]!.steps, [0, 2]);
    assert.deepEqual(items[1]!.steps, [1, 2]);
    // fact 3 was never queried: only the step the insight follows, and its terms are named as unseen
    assert.deepEqual(items[2]!.steps, [2]);
    assert.ok(items[2]!.unseen.includes('61') && items[2]!.unseen.includes('female'));
    assert.match(items[1]!.evidence, /\[step 2\][\s\S]*hypertension/);
    assert.doesNotMatch(items[1]!.evidence, /subject_id = 7/);
  });
  it('keeps filler apart with the reason, and never shows steps after the insight', () => {
    const { items, unchecked } = ddrHallucinationItems(
      [
        { stepIndex: 0, insight: 'Diagnoses.' },
        { stepIndex: 0, insight: 'hypertension noted' },
        { stepIndex: 1, insight: null },
      ],
      steps,
    );
    assert.deepEqual(
      unchecked.map((u) => [u.insightIndex, u.text]),
      [[0, 'Diagnoses.']],
    );
    assert.match(unchecked[0]!.reason, /label or filler/);
    assert.deepEqual(
      items.map((i) => [i.insightIndex, i.steps]),
      [[1, [0]]],
    );
  });
  it('bounds the evidence, keeping the step the insight follows', () => {
    const big = [
      step(0, 'SELECT hypertension', 'x'.repeat(5000)),
      step(1, 'SELECT hypertension again', 'y'.repeat(5000)),
      step(2, 'SELECT 1', 'hypertension'),
    ];
    const { items } = ddrHallucinationItems([{ stepIndex: 2, insight: 'hypertension' }], big, 6000);
    assert.ok(items[0]!.evidence.length <= 6000);
    assert.ok(items[0]!.steps.includes(2));
  });
});
