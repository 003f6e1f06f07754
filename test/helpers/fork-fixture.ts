/** A parent run and a fork of it from step 1 with a hint, cells, answers and scores (fork diff tests, issue 43). */
import { join } from 'node:path';
import type { KernelCellRecord, StepRecord } from '../../src/core/store/records.ts';
import type { RunStore } from '../../src/core/store/types.ts';

export const PARENT = '20261128T050001-aaaa0001';
export const FORK = '20261128T051001-ffff0002';

const step = (runId: string, index: number, content: string, code: string): StepRecord => {
  const now = new Date().toISOString();
  return {
    runId,
    index,
    startedAt: now,
    endedAt: now,
    latencyMs: 1,
    toolMs: 1,
    assistant: { role: 'assistant', content },
    toolCalls: [
      {
        id: `c${index}`,
        name: 'execute_python',
        argumentsText: JSON.stringify({ code }),
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
};
const cell = (runId: string, stepIndex: number, seq: number, code: string, replay = false): KernelCellRecord => ({
  runId,
  stepIndex,
  seq,
  code,
  status: 'ok',
  stdout: '',
  stderr: '',
  result: null,
  error: null,
  tables: [],
  figures: [],
  durationMs: 1,
  replay,
});

/** Writes the pair into `store`; run folders under `dir`. */
export async function seedForkPair(store: RunStore, dir: string): Promise<void> {
  const base = (id: string, over: Record<string, unknown> = {}) => ({
    id,
    suite: 'longda',
    blockId: 'doc-1',
    agent: 'llm',
    model: 'scripted-1',
    params: {},
    promptHash: 'h',
    toolSet: 'longda',
    dataChecksums: {},
    loupeVersion: 't',
    sandbox: 'off',
    workspace: join(dir, id),
    ...over,
  });
  await store.createRun(base(PARENT));
  const p = [
    ['Load the table.', "df = pd.read_csv('a.csv')"],
    ['<b>Mean</b> of income.', "x = df['income'].mean()\nanswer(1, x)"],
    ['Done.', 'print(x)'],
  ];
  for (let i = 0; i < p.length; i++) {
    await store.commitStep(step(PARENT, i, p[i]![0]!, p[i]![1]!), {
      cells: [cell(PARENT, i, i + 1, p[i]![1]!)],
      ...(i === 1
        ? {
            answers: [
              { runId: PARENT, queryId: 'q1', answer: 41.5, raw: '41.5', stepIndex: 1 },
              { runId: PARENT, queryId: 'q2', answer: 3, raw: '3', stepIndex: 1 },
            ],
          }
        : {}),
    });
  }
  await store.updateRun(PARENT, { status: 'finished' });
  await store.createRun(base(FORK, { params: { forkOf: { runId: PARENT, step: 1 } } }));
  const lease = await store.acquireRunLease(FORK, { owner: 'test', host: 'h', pid: 1 }, 60_000);
  if (!lease.ok) throw new Error('lease');
  await store.addIntervention(
    {
      runId: FORK,
      who: 'ana',
      kind: 'hint',
      text: 'Use the <i>median</i>, incomes are skewed',
      at: new Date().toISOString(),
      beforeStep: 1,
    },
    'test',
  );
  await store.commitStep(step(FORK, 0, 'Load the table.', "df = pd.read_csv('a.csv')"), {
    cells: [cell(FORK, 0, 1, "df = pd.read_csv('a.csv')", true)],
  });
  const f = [
    ['Median of income.', "x = df['income'].median()\nanswer(1, x)"],
    ['Done.', 'print(x)'],
    ['Check.', 'print(len(df))'],
  ];
  for (let i = 0; i < f.length; i++) {
    await store.commitStep(step(FORK, i + 1, f[i]![0]!, f[i]![1]!), {
      cells: [cell(FORK, i + 1, i + 2, f[i]![1]!)],
      ...(i === 0
        ? {
            answers: [
              { runId: FORK, queryId: 'q1', answer: 38, raw: '38', stepIndex: 1 },
              { runId: FORK, queryId: 'q2', answer: 3, raw: '3', stepIndex: 1 },
            ],
          }
        : {}),
    });
  }
  await store.releaseRunLease(FORK, 'test');
  await store.updateRun(FORK, { status: 'finished' });
  const score = (runId: string, match: number) => ({
    runId,
    benchmark: 'longda',
    judgeId: 'none',
    options: { summation: 'official' },
    summary: { match, answered: 2 },
    detail: {},
    pending: 0,
    scoredAt: new Date().toISOString(),
  });
  await store.scores.save(score(PARENT, 0.5));
  await store.scores.save(score(FORK, 1));
}
