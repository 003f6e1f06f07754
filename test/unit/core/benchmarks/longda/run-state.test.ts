/**
 * Issue 40: LongDA's answers, notes and saved code are its own per-run state (`run-state.ts`), declared in its folder
 * and kept by its tool set's `runState` hook; the generic `RunState` the agent loop gives every tool set holds only
 * `extra` and the benchmark slots. A LongDA run still writes and restores the same store rows.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LlmClient } from '../../../../../src/core/agent/llm.ts';
import { runAgent } from '../../../../../src/core/agent/loop.ts';
import type { RunState, ToolSet } from '../../../../../src/core/agent/types.ts';
import { LONGDA_RUN_STATE, longdaRunState } from '../../../../../src/core/benchmarks/longda/run-state.ts';
import { openStore, type RunStore } from '../../../../../src/core/store/run-store.ts';
import { call, startScriptedLlm } from '../../../../helpers/scripted-llm.ts';

function toolSet(seen: RunState[], runState?: ToolSet['runState']): ToolSet {
  return {
    id: 't',
    systemPrompt: 'sys',
    buildBlockPrompt: () => 'task',
    defaultMaxSteps: 10,
    hostPaths: [],
    ...(runState ? { runState } : {}),
    tools: [
      {
        name: 'look',
        description: 'records the state',
        parameters: { type: 'object', properties: {} },
        run: async (_a, ctx) => {
          seen.push(ctx.state);
          return { observation: 'ok' };
        },
      },
      {
        name: 'answer',
        description: 'answers',
        parameters: { type: 'object', properties: { n: { type: 'number' } } },
        run: async (a, ctx) => {
          const s = longdaRunState(ctx.state);
          s.answers.set(`q${a.n as number}`, { answer: a.n as number, raw: String(a.n), stepIndex: ctx.stepIndex });
          s.notes.push(`note ${a.n as number}`);
          s.savedCode = `x = ${a.n as number}`;
          return { observation: 'ok' };
        },
      },
      {
        name: 'done',
        description: 'finish',
        parameters: { type: 'object', properties: {} },
        run: async () => ({ observation: 'bye', finish: true }),
      },
    ],
  };
}

async function run(
  store: RunStore,
  id: string,
  ts: ToolSet,
  script: Array<{ toolCalls: ReturnType<typeof call>[] }>,
  resume = false,
) {
  if (!resume) {
    await store.createRun({
      id,
      suite: 't',
      blockId: 'b',
      agent: 'llm',
      model: 'm',
      params: {},
      promptHash: 'h',
      toolSet: 't',
      dataChecksums: {},
      loupeVersion: '0',
      sandbox: 'off',
      workspace: '/tmp',
    });
  }
  const srv = await startScriptedLlm({ script });
  try {
    return await runAgent({
      store,
      runId: id,
      model: new LlmClient({ baseUrl: srv.baseUrl, model: 'm', retryBaseMs: 1 }),
      toolSet: ts,
      block: 'B',
      workspace: '/tmp',
      ...(resume ? { resume: true } : {}),
    });
  } finally {
    await srv.close();
  }
}

test('the generic run state names no benchmark: a tool set without a runState hook gets only extra and empty benchmark slots', async () => {
  const store = openStore(':memory:');
  const seen: RunState[] = [];
  await run(store, 'g', toolSet(seen), [{ toolCalls: [call('look', {})] }, { toolCalls: [call('done', {})] }]);
  assert.deepEqual(Object.keys(seen[0]!).sort(), ['benchmark', 'extra']);
  assert.deepEqual(seen[0]!.benchmark, {});
  assert.deepEqual(await store.getAnswers('g'), []);
  await store.close();
});

test("LongDA's state is created, written as answer / notes / saved-code rows with each step, and restored on resume", async () => {
  const store = openStore(':memory:');
  const seen: RunState[] = [];
  const ts = toolSet(seen, LONGDA_RUN_STATE);
  await run(store, 'l', ts, [
    { toolCalls: [call('answer', { n: 1 })] },
    { toolCalls: [call('answer', { n: 2 })] },
    { toolCalls: [call('done', {})] },
  ]);
  assert.deepEqual(
    (await store.getAnswers('l')).map((a) => [a.queryId, a.answer, a.stepIndex]),
    [
      ['q1', 1, 0],
      ['q2', 2, 1],
    ],
  );
  assert.deepEqual(await store.getNotes('l'), ['note 1', 'note 2']);
  assert.equal(await store.getSavedCode('l'), 'x = 2');
  await store.updateRun('l', { status: 'cancelled' });
  // the scripted model answers by position in the conversation: the three recorded steps come first
  const r2 = await run(
    store,
    'l',
    ts,
    [
      { toolCalls: [] },
      { toolCalls: [] },
      { toolCalls: [] },
      { toolCalls: [call('look', {})] },
      { toolCalls: [call('done', {})] },
    ],
    true,
  );
  assert.equal(r2.status, 'finished', JSON.stringify(r2));
  const s = longdaRunState(seen.at(-1)!);
  assert.deepEqual([...s.answers.keys()], ['q1', 'q2']);
  assert.deepEqual(s.notes, ['note 1', 'note 2']);
  assert.equal(s.savedCode, 'x = 2');
  assert.ok((await store.getEvents('l')).some((e) => e.kind === 'resume' && /2 answers restored/.test(e.message)));
  await store.close();
});
