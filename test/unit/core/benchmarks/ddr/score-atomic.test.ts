/**
 * Issue 43: DDR `claims=atomic` — the checklist judge reads the insights' atomic facts (an expert's split first), each
 * fact carries the checklist items it supports and the queries that mention it, and the score records the option;
 * `official` keeps whole insights. The expert's split is an append-only annotation.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore } from '../../../../../src/core/store/run-store.ts';
import type { StepRecord } from '../../../../../src/core/store/records.ts';
import type { RunStore } from '../../../../../src/core/store/types.ts';
import { scoreDdrRun } from '../../../../../src/core/benchmarks/ddr/score.ts';
import { ddr } from '../../../../../src/core/benchmarks/ddr/index.ts';
import { parseOptionsWithPreset } from '../../../../../src/core/benchmarks/options.ts';
import { CallbackJudge } from '../../../../../src/core/eval/judges/judge.ts';
import type { JudgeInput } from '../../../../../src/core/eval/judges/types.ts';
import {
  annotationStoreOf,
  expertFactSplit,
  FACT_SPLIT_TASK,
  factSplitItemId,
  recordFactSplit,
} from '../../../../../src/core/annotations/index.ts';

const RUN = '20261128T060001-dddd0001';
const INSIGHT = 'Findings: 1. the patient is female 2. aged 61 3. had 3 admissions';
let dir = '';
let store: RunStore;
const step = (index: number, content: string, sql: string | null, obs = ''): StepRecord => {
  const now = new Date().toISOString();
  return {
    runId: RUN,
    index,
    startedAt: now,
    endedAt: now,
    latencyMs: 1,
    toolMs: 1,
    assistant: { role: 'assistant', content },
    toolCalls: sql
      ? [
          {
            id: `c${index}`,
            name: 'execute_query',
            argumentsText: JSON.stringify({ sql }),
            observation: obs,
            isError: false,
            truncated: false,
            durationMs: 1,
          },
        ]
      : [],
    extraMessages: [],
    usage: { input: 1, output: 1, cached: 0 },
    costUsd: null,
    finishReason: 'tool_calls',
  };
};
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-ddr-atomic-'));
  store = openStore(join(dir, 'runs.sqlite'));
  await store.createRun({
    id: RUN,
    suite: 'ddr',
    blockId: 'mimic-1',
    agent: 'llm',
    model: 'm',
    params: {},
    promptHash: 'h',
    toolSet: 'ddr',
    dataChecksums: {},
    loupeVersion: 't',
    sandbox: 'off',
    workspace: join(dir, RUN),
  });
  await store.commitStep(
    step(0, 'Look at the patient.', 'SELECT gender, anchor_age FROM patients', 'gender F, anchor_age 61'),
  );
  await store.commitStep(step(1, INSIGHT, 'SELECT count(*) FROM admissions', '3'));
  await store.commitStep(step(2, 'FINISH: a 61-year-old woman, 3 admissions.', null));
  await store.updateRun(RUN, { status: 'finished' });
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const block = {
  id: 'mimic-1',
  ddr: { entityId: '1' },
  hidden: {
    checklist: [
      { question: 'What is the sex?', answer: 'female' },
      { question: 'How many admissions?', answer: '3' },
    ],
  },
  visible: {},
} as never;
const suite = { root: join('/x', 'mimic') } as never;
const seen: string[][] = [];
const judge = () =>
  new CallbackJudge('scripted', ((task: string, i: JudgeInput<'checklist-support'>) => {
    if (task !== 'checklist-support') return undefined;
    if (i.insights) seen.push([...i.insights]);
    const list = i.insights ?? [i.report ?? ''];
    const hit = list
      .map((t, k) => (t.includes(i.answer === '3' ? 'admission' : 'female') ? k : -1))
      .filter((k) => k >= 0);
    return {
      label: hit.length ? 'CORRECT_INFO' : 'INSUFFICIENT_INFO',
      supporting: hit,
      contradicting: [],
      evidence: '',
      reasoning: '',
    };
  }) as never);
const opts = (preset: 'official' | 'paper', raw: Record<string, string>) =>
  parseOptionsWithPreset(ddr.scoreOptions, preset, raw);

describe('DDR claims=atomic (issue 43)', () => {
  it('official keeps whole insights and records claims=whole', async () => {
    seen.length = 0;
    const s = await scoreDdrRun({
      store,
      run: (await store.getRun(RUN))!,
      block,
      suite,
      judge: judge(),
      options: opts('official', { hallucination: 'off' }),
    });
    assert.equal(s.options.claims, 'whole');
    assert.equal(seen[0]!.length, 2, 'two message-wise insights judged as written');
    assert.equal(seen[0]![0], INSIGHT);
    assert.equal((s.detail as { atomic: unknown }).atomic, null);
    assert.equal(s.summary.atomicFacts, undefined);
  });

  it('atomic: the judge reads facts, each fact has its checklist verdicts and the queries that mention it', async () => {
    seen.length = 0;
    const s = await scoreDdrRun({
      store,
      run: (await store.getRun(RUN))!,
      block,
      suite,
      judge: judge(),
      options: opts('official', { hallucination: 'off', claims: 'atomic', fact_split: 'rule' }),
    });
    assert.equal(s.options.claims, 'atomic');
    assert.equal(s.options.fact_split, 'rule');
    assert.deepEqual(seen[0], [
      'Findings: the patient is female',
      'Findings: aged 61',
      'Findings: had 3 admissions',
      'a 61-year-old woman, 3 admissions.',
    ]);
    assert.equal(s.summary.atomicFacts, 4);
    const facts = (s.detail as { atomic: { facts: Array<{ text: string; supports: number[]; steps: number[] }> } })
      .atomic.facts;
    assert.deepEqual(facts[0]!.supports, [0], 'the "female" fact supports checklist item 1');
    assert.deepEqual(facts[2]!.supports, [1]);
    assert.deepEqual(facts[1]!.steps, [0], '"aged 61" is linked to the query that returned anchor_age 61');
    assert.equal(s.summary.messageWiseAccuracy, 1);
  });

  it("an expert's split (append-only annotation, newest wins) replaces the rule's", async () => {
    const ann = annotationStoreOf(store);
    const input = { benchmark: 'ddr', runId: RUN, source: 'insight' as const, index: 0, text: INSIGHT, proposed: [] };
    await recordFactSplit(ann, input, ['the patient is female and aged 61'], 'ana');
    const second = await recordFactSplit(
      ann,
      input,
      ['the patient is female', 'the patient is aged 61', ' ', 'the patient had 3 admissions'],
      'ana',
    );
    assert.ok(second.annotation.supersedes, 'the edit supersedes the first split');
    assert.equal((await ann.annotations(factSplitItemId(RUN, INSIGHT))).length, 2, 'both kept (append-only)');
    assert.equal(second.item.task, FACT_SPLIT_TASK);
    assert.deepEqual((await expertFactSplit(ann, RUN, INSIGHT))!.facts, [
      'the patient is female',
      'the patient is aged 61',
      'the patient had 3 admissions',
    ]);
    seen.length = 0;
    const s = await scoreDdrRun({
      store,
      run: (await store.getRun(RUN))!,
      block,
      suite,
      judge: judge(),
      options: opts('official', { hallucination: 'off', claims: 'atomic', fact_split: 'rule' }),
    });
    assert.deepEqual(seen[0]!.slice(0, 3), [
      'the patient is female',
      'the patient is aged 61',
      'the patient had 3 admissions',
    ]);
    assert.equal((s.detail as { atomic: { claims: Array<{ source: string }> } }).atomic.claims[0]!.source, 'expert');
    await assert.rejects(
      recordFactSplit(ann, input, ['  '], 'ana'),
      /claim 1 of run .*: a split needs at least one fact/,
    );
  });
});
