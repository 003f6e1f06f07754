/**
 * Issue 42 defect 8: the Failure Analysis view of a failure case about q2 (as served by a queue, or attached by "Tag
 * failure") opens the report pane on q2's answer and selects the step that answered q2; the step list names the
 * answered item whole, even when the agent wrote a long answer before the q_id.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { annotationStoreOf } from '../../../../src/core/annotations/index.ts';
import { ensureFailureCase } from '../../../../src/core/failures/index.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';
import type { StepRecord } from '../../../../src/core/store/records.ts';
import type { RunStore } from '../../../../src/core/store/types.ts';
import { failureRunView, failureStepSummary, shortItemRefs } from '../../../../src/app/failures/run-view.ts';

const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const Q = (i: number) => `NHANES_NCHS Data Brief No. 508_q${i}`;
let dir = '';
let store: RunStore;

function answerStep(index: number, q: string, value: number[]): StepRecord {
  const now = new Date().toISOString();
  // the model wrote the long answer first, the q_id last (key order is the model's)
  const args = JSON.stringify({ answer: value, action: 'add', q_id: q });
  return {
    runId: 'r',
    index,
    startedAt: now,
    endedAt: now,
    latencyMs: 1,
    toolMs: 1,
    assistant: { role: 'assistant', content: '' },
    toolCalls: [
      {
        id: `c${index}`,
        name: 'answer',
        argumentsText: args,
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
  };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-fa-view-'));
  store = openStore(join(dir, 'runs.sqlite'));
  await store.createRun({
    id: 'r',
    suite: 'longda',
    blockId: BLOCK,
    agent: 'llm',
    model: 'm',
    params: {},
    promptHash: 'h',
    toolSet: 'longda',
    dataChecksums: {},
    loupeVersion: 't',
    sandbox: 'off',
    workspace: join(dir, 'ws'),
  });
  const long = Array.from({ length: 30 }, (_, i) => 10.25 + i);
  await store.commitStep(answerStep(0, Q(1), long), {
    answers: [{ runId: 'r', queryId: Q(1), answer: long, raw: JSON.stringify(long), stepIndex: 0 }],
  });
  await store.commitStep(answerStep(1, Q(2), long), {
    answers: [{ runId: 'r', queryId: Q(2), answer: long, raw: '[2, 3]', stepIndex: 1 }],
  });
  await store.commitStep(answerStep(2, Q(3), long), {
    answers: [{ runId: 'r', queryId: Q(3), answer: long, raw: JSON.stringify(long), stepIndex: 2 }],
  });
  await store.updateRun('r', { status: 'finished' });
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('failure analysis run view (issue 42 defect 8)', () => {
  it('a case about q2 opens the report pane on q2 and selects the step that answered q2', async () => {
    const ann = annotationStoreOf(store);
    const run = (await store.getRun('r'))!;
    const item = await ensureFailureCase(ann, run, 3, {
      benchmark: 'longda',
      runId: 'r',
      blockId: BLOCK,
      model: 'm',
      scenario: 's',
      ref: Q(2),
      question: 'q2?',
      detail: 'judged wrong',
      taxonomy: 'longda',
    });
    const v = await failureRunView(store, ann, 'r', { caseItemId: item.id, runsRoot: null, taxonomy: 'x' });
    assert.deepEqual(v.attached?.ref, Q(2));
    assert.equal(v.artefacts[v.focusArtefact ?? 0]?.name, `query:${Q(2)}`, 'the report pane shows q2, not q1');
    assert.equal(v.artefacts[v.focusArtefact ?? 0]?.text, '[2, 3]');
    assert.equal(v.focusStep, 1, 'the step that answered q2 is selected');
    // the step list names the item each step answered, whole
    assert.deepEqual(
      v.steps.map((s) => s.answers),
      [[Q(1)], [Q(2)], [Q(3)]],
    );
    assert.ok(
      v.steps[1]!.summary.startsWith('answers q2 · '),
      `a narrow step list shows what tells q2 apart first: ${v.steps[1]!.summary}`,
    );
    assert.equal(v.attached?.note, undefined);
    // a case about a query the run never answered says so instead of showing q1 as if it were it
    const q4 = await ensureFailureCase(ann, run, 3, {
      benchmark: 'longda',
      runId: 'r',
      blockId: BLOCK,
      model: 'm',
      scenario: 's',
      ref: Q(4),
      question: 'q4?',
      detail: 'no answer',
      taxonomy: 'longda',
    });
    const v4 = await failureRunView(store, ann, 'r', { caseItemId: q4.id, runsRoot: null, taxonomy: 'x' });
    assert.equal(v4.focusArtefact, undefined);
    assert.equal(v4.attached?.note, `The run recorded no answer to ${Q(4)}.`);
    // an explicit step wins
    assert.equal(
      (await failureRunView(store, ann, 'r', { caseItemId: item.id, focusStep: 0, runsRoot: null, taxonomy: 'x' }))
        .focusStep,
      0,
    );
  });

  it('short item refs: the shared prefix dropped at a boundary; a lone id stays whole', () => {
    assert.deepEqual([...shortItemRefs([Q(1), Q(2), Q(12)]).values()], ['q1', 'q2', 'q12']);
    assert.deepEqual([...shortItemRefs([Q(1)]).values()], [Q(1)]);
    assert.deepEqual([...shortItemRefs(['item 1', 'item 2']).values()], ['1', '2']);
    assert.deepEqual([...shortItemRefs(['a_x', 'a_x_y']).values()], ['x', 'x_y']);
  });

  it('step summaries: answered items first, then the first call', () => {
    assert.equal(
      failureStepSummary({ toolNames: ['answer'], firstArguments: '{"x": 1}', content: '' }, ['a_q2']),
      'answers a_q2 · answer {"x": 1}',
    );
    assert.equal(failureStepSummary({ toolNames: [], firstArguments: null, content: '' }), '(message)');
  });
});
