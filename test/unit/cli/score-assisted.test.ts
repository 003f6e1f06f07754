/** Issue 20: scores of assisted and forked runs are reported apart (loupe score, loupe report, Results). */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../../src/cli/main.ts';
import { openStore } from '../../../src/core/store/run-store.ts';
import { parseAnswerArg } from '../../../src/core/benchmarks/longda/toolset.ts';
import { buildResultsState } from '../../../src/app/results/results-data.ts';
import type { StepRecord } from '../../../src/core/agent/types.ts';
import { sharedData } from '../../helpers/shared.ts';

const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const Q = (i: number) => `NHANES_NCHS Data Brief No. 508_q${i}`;
const PUBLISHED = [
  '40.3',
  '[39.2, 41.3]',
  '[35.5, 46.4, 38.9]',
  '[44.6, 45.0, 31.6]',
  '9.4',
  '[9.5, 12.0, 6.6]',
  '[6.7, 12.1]',
  '[6.1, 9.2, 4.3]',
  '[13.0, 14.7, 8.4]',
];
const value = (raw: string) => (parseAnswerArg(raw) as { value: number | number[] }).value;

let dir = '';
let file = '';

function answerStep(
  runId: string,
  index: number,
  answers: Array<[number, number | number[]]>,
  action = 'add',
): StepRecord {
  const now = new Date().toISOString();
  return {
    runId,
    index,
    startedAt: now,
    endedAt: now,
    latencyMs: 1,
    toolMs: 1,
    assistant: { role: 'assistant', content: `step ${index}` },
    toolCalls: answers.map(([q, v], k) => ({
      id: `c${index}-${k}`,
      name: 'answer',
      argumentsText: JSON.stringify({ action, q_id: Q(q), answer: v }),
      observation: 'ok',
      isError: false,
      truncated: false,
      durationMs: 1,
    })),
    extraMessages: [],
    usage: { input: 1000, output: 100, cached: 0 },
    costUsd: null,
    finishReason: 'tool_calls',
  };
}
const io = () => {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s), env: process.env, cwd: process.cwd() },
  };
};

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-assisted-'));
  file = join(dir, 'runs.sqlite');
  const s = openStore(file);
  const base = {
    suite: 'longda',
    blockId: BLOCK,
    agent: 'llm',
    params: { suiteRoot: sharedData('longda', 'benchmark') },
    promptHash: 'h',
    toolSet: 'longda',
    dataChecksums: {},
    loupeVersion: 't',
    sandbox: 'off',
    workspace: dir,
  };
  const all = PUBLISHED.map((raw, i) => [i + 1, value(raw)] as [number, number | number[]]);
  const recordAll = (runId: string, idx: number, list: Array<[number, number | number[]]>) =>
    list.map(([q, v]) => ({ runId, queryId: Q(q), answer: v, raw: JSON.stringify(v), stepIndex: idx }));
  // Unassisted: every answer right at step 1.
  await s.createRun({ ...base, id: 'r-plain', model: 'model-a' });
  await s.commitStep(answerStep('r-plain', 0, all), { answers: recordAll('r-plain', 0, all) });
  // Assisted: q1 wrong at step 1; a correction; q1 updated at step 2 → solved after 1 intervention (and a 2nd one after).
  await s.createRun({ ...base, id: 'r-assisted', model: 'model-a' });
  const wrong: Array<[number, number | number[]]> = all.map(([q, v]) => [q, q === 1 ? 47.0 : v]);
  await s.commitStep(answerStep('r-assisted', 0, wrong), { answers: recordAll('r-assisted', 0, wrong) });
  await s.acquireRunLease('r-assisted', { owner: 'test', host: 'h', pid: process.pid }, 60_000);
  assert.ok(
    await s.addIntervention(
      { runId: 'r-assisted', who: 'ana', kind: 'correction', text: 'q1 is for adults 20 and over' },
      'test',
    ),
  );
  await s.commitStep(answerStep('r-assisted', 1, [[1, 40.3]], 'update'), {
    answers: recordAll('r-assisted', 1, [[1, 40.3]]),
  });
  assert.ok(
    await s.addIntervention({ runId: 'r-assisted', who: 'ana', kind: 'hint', text: 'now save your code' }, 'test'),
  );
  await s.releaseRunLease('r-assisted', 'test');
  // A fork of the plain run with another model (no human step).
  await s.createRun({
    ...base,
    id: 'r-fork',
    model: 'model-b',
    params: { ...base.params, forkOf: { runId: 'r-plain', step: 1 } },
  });
  await s.commitStep(answerStep('r-fork', 0, all), { answers: recordAll('r-fork', 0, all) });
  s.close();
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('scores of assisted and forked runs apart (issue 20)', () => {
  it('loupe score: per-run assistance, aggregates per model × assistance with interventions per run and the LongDA solved-after count', async () => {
    const t = io();
    assert.equal(await main(['score', '--store', file, '--all', '--json'], t.io), 0, t.err.join(''));
    const j = JSON.parse(t.out.join('')) as {
      runs: Array<Record<string, unknown>>;
      aggregates: Array<{
        model: string;
        runs: number;
        runIds: string[];
        assistance?: string;
        metrics: Record<string, number | null>;
      }>;
    };
    const assisted = j.runs.find((r) => r.runId === 'r-assisted')!;
    assert.deepEqual(assisted.assistance, { interventions: 2, label: 'assisted', untilSolved: 1 });
    assert.deepEqual(j.runs.find((r) => r.runId === 'r-fork')!.assistance, {
      interventions: 0,
      forkOf: { runId: 'r-plain', step: 1 },
      label: 'fork',
    });
    assert.deepEqual(j.runs.find((r) => r.runId === 'r-plain')!.assistance, { interventions: 0 });
    assert.deepEqual(
      j.aggregates.map((a) => [a.model, a.runIds, a.assistance ?? null]),
      [
        ['model-a', ['r-plain'], null],
        ['model-a (assisted)', ['r-assisted'], 'assisted'],
        ['model-b (fork)', ['r-fork'], 'fork'],
      ],
    );
    const a = j.aggregates[1]!;
    assert.equal(a.metrics.match, 1);
    assert.equal(a.metrics.interventionsPerRun, 2);
    assert.equal(a.metrics.interventionsUntilWithinTolerance, 1);
    assert.equal(j.aggregates[0]!.metrics.interventionsPerRun, undefined, 'unassisted aggregates are unchanged');
    const text = io();
    assert.equal(await main(['score', '--store', file, '--all', '--no-save'], text.io), 0);
    assert.match(
      text.out.join(''),
      /r-assisted {2}longda\/NHANES_NCHS_Data_Brief_No\._508 {2}model-a \(assisted\) {2}\[assisted: 2 interventions, solved after 1\]/,
    );
    assert.match(text.out.join(''), /r-fork .* model-b \(fork\) {2}\[fork: 0 interventions, forked from r-plain@1\]/);
  });

  it('loupe report and the Results state keep them apart too', async () => {
    const t = io();
    assert.equal(await main(['report', '--store', file], t.io), 0, t.err.join(''));
    const md = t.out.join('');
    assert.match(md, /\| model-a \| 1 \|/);
    assert.match(md, /\| model-a \(assisted\) \| 1 \|/);
    assert.match(md, /\| model-b \(fork\) \| 1 \|/);
    assert.match(md, /interventionsPerRun/);
    const store = openStore(file);
    try {
      const st = await buildResultsState(store);
      const table = st.tables.find((x) => x.suite === 'longda')!;
      assert.ok(table.columns.some((c) => c.key === 'interventions'));
      const rows = table.rows.map((r) => [
        r.model,
        r.cells.interventions?.value ?? null,
        r.cells.interventions?.runIds,
      ]);
      assert.deepEqual(rows, [
        ['model-a', 0, ['r-plain']],
        ['model-a (assisted)', 2, ['r-assisted']],
        ['model-b (fork)', 0, ['r-fork']],
      ]);
    } finally {
      await store.close();
    }
  });
});
