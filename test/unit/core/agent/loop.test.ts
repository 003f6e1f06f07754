import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addModelUse, computeCost, LlmClient } from '../../../../src/core/agent/llm.ts';
import { RunControl, runAgent, truncateObservation, type AgentRunOptions } from '../../../../src/core/agent/loop.ts';
import type { AgentEvent, KernelExecuteResult, KernelLike, ToolSet } from '../../../../src/core/agent/types.ts';
import { isRunActive, openStore, sqliteHandleOf, type RunStore } from '../../../../src/core/store/run-store.ts';
import { LONGDA_RUN_STATE, longdaRunState } from '../../../../src/core/benchmarks/longda/run-state.ts';
import { call, rawToolCall, startScriptedLlm, type Turn } from '../../../helpers/scripted-llm.ts';

const echoSet = (extra: Partial<ToolSet> = {}): ToolSet => ({
  id: 'echo',
  systemPrompt: 'sys',
  buildBlockPrompt: (b) => `task ${String(b)}`,
  defaultMaxSteps: 100,
  hostPaths: [],
  runState: LONGDA_RUN_STATE, // answers and notes are rows of the store (LongDA's per-run state)
  tools: [
    {
      name: 'echo',
      description: 'echo',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      run: async (a) => ({ observation: `echo:${a.text as string}` }),
    },
    {
      name: 'big',
      description: 'big',
      parameters: { type: 'object', properties: {} },
      run: async () => ({ observation: 'H'.repeat(30_000) + 'TAIL' }),
    },
    {
      name: 'boom',
      description: 'throws',
      parameters: { type: 'object', properties: {} },
      run: async () => {
        throw new Error('kaput');
      },
    },
    {
      name: 'note',
      description: 'adds a note and an answer',
      parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      run: async (a, ctx) => {
        longdaRunState(ctx.state).notes.push(`n${a.n as number}`);
        longdaRunState(ctx.state).answers.set(`q${a.n as number}`, {
          answer: a.n as number,
          raw: String(a.n),
          stepIndex: ctx.stepIndex,
        });
        return { observation: 'ok' };
      },
    },
    {
      name: 'py',
      description: 'python',
      parameters: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
      run: async (a, ctx) => {
        const r = await ctx.execute(a.code as string);
        return { observation: r.stdout || (r.result ?? '') };
      },
    },
    {
      name: 'done',
      description: 'finish',
      parameters: { type: 'object', properties: {} },
      run: async () => ({ observation: 'bye', finish: true }),
    },
  ],
  ...extra,
});

/** A fake kernel: `x = N` assigns, `print(x)` prints; records what it executed. */
function fakeKernelFactory(log: string[]) {
  return async (): Promise<KernelLike> => {
    const vars = new Map<string, string>();
    return {
      info: { python: 'fake', sandbox: 'off', pid: 1 },
      interrupt() {},
      async restart() {
        vars.clear();
      },
      async close() {},
      async execute(code: string): Promise<KernelExecuteResult> {
        log.push(code);
        const m = /^(\w+) = (\d+)$/.exec(code);
        if (m) {
          vars.set(m[1]!, m[2]!);
          return { status: 'ok', stdout: '', stderr: '', durationMs: 1 };
        }
        if (code === 'crash') {
          vars.clear();
          return { status: 'crashed', stdout: '', stderr: '', durationMs: 1, restarted: true };
        }
        const p = /^print\((\w+)\)$/.exec(code);
        if (p) {
          return vars.has(p[1]!)
            ? { status: 'ok', stdout: vars.get(p[1]!)!, stderr: '', durationMs: 1 }
            : {
                status: 'error',
                stdout: '',
                stderr: '',
                error: { ename: 'NameError', evalue: p[1]!, traceback: [] },
                durationMs: 1,
              };
        }
        return { status: 'ok', stdout: '', stderr: '', durationMs: 1 };
      },
    };
  };
}

async function newRun(store: RunStore, id = 'r1'): Promise<string> {
  await store.createRun({
    id,
    suite: 't',
    blockId: 'b',
    agent: 'llm',
    model: 'm',
    params: {},
    promptHash: 'h',
    toolSet: 'echo',
    dataChecksums: {},
    loupeVersion: '0',
    sandbox: 'off',
    workspace: '/tmp',
  });
  return id;
}

async function withServer<T>(
  script: Turn[],
  fn: (baseUrl: string, srv: Awaited<ReturnType<typeof startScriptedLlm>>) => Promise<T>,
  latencyMs = 0,
): Promise<T> {
  const srv = await startScriptedLlm({ script, latencyMs });
  try {
    return await fn(srv.baseUrl, srv);
  } finally {
    await srv.close();
  }
}

function opts(store: RunStore, baseUrl: string, o: Partial<AgentRunOptions> = {}): AgentRunOptions {
  return {
    store,
    runId: 'r1',
    model: new LlmClient({ baseUrl, model: 'm', retryBaseMs: 1 }),
    toolSet: echoSet(),
    block: 'B',
    workspace: '/tmp',
    ...o,
  };
}

test('loop: tool errors become observations, long observations are cut, finishing tool ends the run', async () => {
  const store = openStore(':memory:');
  newRun(store);
  const events: AgentEvent[] = [];
  await withServer(
    [
      {
        toolCalls: [
          rawToolCall('echo', '{"text": "unterminated'),
          call('nope', {}),
          call('echo', { text: 5 }),
          call('echo', {}),
        ],
      },
      { toolCalls: [call('boom', {}), call('big', {}), call('echo', { text: 'hi' })] },
      { content: 'I am done', toolCalls: [call('done', {})] },
    ],
    async (url, srv) => {
      const r = await runAgent(opts(store, url, { onEvent: (e) => events.push(e) }));
      assert.equal(r.status, 'finished');
      assert.equal(r.steps, 3);
      const steps = await store.getSteps('r1');
      const obs0 = steps[0]!.toolCalls.map((t) => t.observation);
      assert.match(obs0[0]!, /tool call format error for 'echo': invalid JSON/);
      assert.match(obs0[1]!, /unknown tool 'nope'. Available tools: echo, big, boom, note, py, done/);
      assert.match(obs0[2]!, /wrong arguments for 'echo': text: expected string, got integer/);
      assert.match(obs0[3]!, /missing required argument 'text'/);
      assert.ok(steps[0]!.toolCalls.every((t) => t.isError));
      const obs1 = steps[1]!.toolCalls;
      assert.match(obs1[0]!.observation, /tool 'boom' failed: kaput/);
      assert.equal(obs1[1]!.truncated, true);
      assert.ok(obs1[1]!.observation.length < 20_200 && obs1[1]!.observation.endsWith('TAIL'));
      assert.match(obs1[1]!.observation, /observation truncated: 10004 characters removed/);
      assert.equal(obs1[2]!.observation, 'echo:hi');
      // the model saw the tool results of step 1 in its second request
      const req2 = srv.requests[1]!.body.messages;
      assert.equal(req2.filter((m) => m.role === 'tool').length, 4);
      assert.deepEqual(
        events
          .map((e) => e.type)
          .filter((t) => t !== 'model-delta')
          .slice(0, 3),
        ['step-start', 'tool-call', 'observation'],
      );
      assert.equal(events.at(-1)!.type, 'run-end');
      const run = (await store.getRun('r1'))!;
      assert.equal(run.status, 'finished');
      assert.equal(run.steps, 3);
      assert.ok(run.tokens!.input > 0 && run.tokens!.output > 0);
    },
  );
  store.close();
});

test('loop: step budget, token budget, and no-tool-call streak', async () => {
  const store = openStore(':memory:');
  newRun(store, 'r1');
  newRun(store, 'r2');
  newRun(store, 'r3');
  const loopTurns: Turn[] = Array.from({ length: 10 }, () => ({
    toolCalls: [call('echo', { text: 'x' })],
    usage: { prompt_tokens: 100, completion_tokens: 10 },
  }));
  await withServer(loopTurns, async (url) => {
    const r = await runAgent(opts(store, url, { budget: { maxSteps: 3 } }));
    assert.equal(r.status, 'budget_exhausted');
    assert.match(r.reason, /max steps \(3\)/);
    assert.equal((await store.getSteps('r1')).length, 3);
    const r2 = await runAgent(opts(store, url, { runId: 'r2', budget: { maxTotalTokens: 250 } }));
    assert.equal(r2.status, 'budget_exhausted');
    assert.match(r2.reason, /token budget/);
    assert.equal(r2.steps, 3);
  });
  await withServer([{ content: 'hmm' }, { content: 'still thinking' }, { content: 'x' }], async (url, srv) => {
    const r = await runAgent(opts(store, url, { runId: 'r3', maxNoToolCallReplies: 3 }));
    assert.equal(r.status, 'failed');
    assert.match(r.reason, /3 times in a row without a tool call/);
    assert.match(srv.requests[1]!.body.messages.at(-1)!.content!, /no tool call/);
  });
  store.close();
});

test('loop: cost and wall-clock budgets', async () => {
  const store = openStore(':memory:');
  newRun(store, 'r1');
  newRun(store, 'r2');
  const turns: Turn[] = Array.from({ length: 10 }, () => ({
    toolCalls: [call('echo', { text: 'x' })],
    usage: { prompt_tokens: 1000, completion_tokens: 100 },
  }));
  await withServer(turns, async (url) => {
    // each call costs (1000·1 + 100·10)/1e6 = $0.002
    const priced = new LlmClient({ baseUrl: url, model: 'm', pricePerMillionInput: 1, pricePerMillionOutput: 10 });
    const r = await runAgent(opts(store, url, { model: priced, budget: { maxCostUsd: 0.005 } }));
    assert.equal(r.status, 'budget_exhausted');
    assert.match(r.reason, /cost budget/);
    assert.equal(r.steps, 3);
    assert.ok(Math.abs((await store.getRun('r1'))!.costUsd! - 0.006) < 1e-9);
  });
  await withServer(
    turns,
    async (url) => {
      const r = await runAgent(opts(store, url, { runId: 'r2', budget: { maxWallMs: 120 } }));
      assert.equal(r.status, 'budget_exhausted');
      assert.match(r.reason, /wall clock budget/);
      assert.ok(r.steps >= 1 && r.steps < 10, String(r.steps));
    },
    50,
  );
  store.close();
});

test('loop: a termination rule (DDR-style FINISH:) ends the run as finished', async () => {
  const store = openStore(':memory:');
  newRun(store);
  await withServer([{ toolCalls: [call('echo', { text: 'a' })] }, { content: 'FINISH: all insights' }], async (url) => {
    const r = await runAgent(
      opts(store, url, { toolSet: echoSet({ isTerminal: (m) => (m.content ?? '').trim().startsWith('FINISH:') }) }),
    );
    assert.equal(r.status, 'finished');
    assert.equal(r.steps, 2);
  });
  store.close();
});

test('loop: model failures end as failed with the reason and no key in the store; cancel during a hang ends as cancelled', async () => {
  const store = openStore(':memory:');
  newRun(store);
  const key = 'sk-loop-secret-0123456789';
  await withServer(
    [{ faults: [{ type: 'status', status: 401, message: `bad key ${key}` }], content: 'x' }],
    async (url) => {
      const r = await runAgent(opts(store, url, { model: new LlmClient({ baseUrl: url, model: 'm', apiKey: key }) }));
      assert.equal(r.status, 'failed');
      assert.match(r.reason, /401/);
    },
  );
  const dump =
    JSON.stringify(sqliteHandleOf(store).prepare('SELECT * FROM runs').all()) +
    JSON.stringify(sqliteHandleOf(store).prepare('SELECT * FROM run_events').all());
  assert.ok(!dump.includes(key), 'key leaked into the store');
  newRun(store, 'r2');
  await withServer(
    [{ toolCalls: [call('echo', { text: 'a' })] }, { faults: [{ type: 'hang' }], content: 'x' }],
    async (url) => {
      const control = new RunControl();
      const p = runAgent(
        opts(store, url, {
          runId: 'r2',
          control,
          onEvent: (e) => {
            if (e.type === 'step-start' && e.step === 1) setTimeout(() => control.stop(), 30);
          },
        }),
      );
      const r = await p;
      assert.equal(r.status, 'cancelled');
      assert.equal((await store.getRun('r2'))!.status, 'cancelled');
      assert.equal((await store.getSteps('r2')).length, 1);
    },
  );
  store.close();
});

test('loop: pause holds the next model call until resume', async () => {
  const store = openStore(':memory:');
  newRun(store);
  await withServer(
    [{ toolCalls: [call('echo', { text: 'a' })] }, { toolCalls: [call('done', {})] }],
    async (url, srv) => {
      const control = new RunControl();
      let pausedAt = -1;
      const kinds: string[] = [];
      let activeWhilePaused = false;
      const p = runAgent(
        opts(store, url, {
          control,
          onEvent: (e) => {
            kinds.push(e.type);
            if (e.type === 'step-end' && e.step === 0) {
              control.pause();
              pausedAt = srv.requests.length;
              void store.getRun('r1').then((r) => {
                activeWhilePaused = isRunActive(r!);
              });
              setTimeout(() => {
                assert.equal(srv.requests.length, pausedAt);
                control.resume();
              }, 100);
            }
          },
        }),
      );
      const r = await p;
      assert.equal(r.status, 'finished');
      assert.equal(pausedAt, 1);
      assert.deepEqual(
        kinds.filter((k) => k === 'paused' || k === 'resumed'),
        ['paused', 'resumed'],
      );
      assert.equal(activeWhilePaused, true);
      assert.equal(isRunActive((await store.getRun('r1'))!), false);
      assert.equal((await store.getRun('r1'))!.ownerPid, null);
      assert.equal(srv.requests.length, 2);
    },
  );
  store.close();
});

test('loop: resume continues after the last committed step, restores state and replays kernel cells', async () => {
  const store = openStore(':memory:');
  newRun(store);
  const executed: string[] = [];
  const script: Turn[] = [
    { toolCalls: [call('py', { code: 'x = 41' }), call('note', { n: 1 })] },
    { toolCalls: [call('note', { n: 2 })] },
    { toolCalls: [call('py', { code: 'print(x)' })] },
    (req) => ({ toolCalls: [call('done', {})], content: `saw ${req.messages.at(-1)!.content}` }),
  ];
  await withServer(script, async (url, srv) => {
    const r1 = await runAgent(opts(store, url, { budget: { maxSteps: 2 }, startKernel: fakeKernelFactory(executed) }));
    assert.equal(r1.status, 'budget_exhausted');
    assert.deepEqual(await store.getNotes('r1'), ['n1', 'n2']);
    const executedBefore = executed.length;
    const r2 = await runAgent(opts(store, url, { resume: true, startKernel: fakeKernelFactory(executed) }));
    assert.equal(r2.status, 'finished');
    assert.equal(r2.steps, 4);
    // x = 41 replayed before print(x); print saw 41
    assert.deepEqual(executed.slice(executedBefore), ['x = 41', 'print(x)']);
    const steps = await store.getSteps('r1');
    assert.deepEqual(
      steps.map((s) => s.index),
      [0, 1, 2, 3],
    );
    assert.equal(steps[2]!.toolCalls[0]!.observation, '41');
    assert.deepEqual(
      (await store.getAnswers('r1')).map((a) => a.queryId),
      ['q1', 'q2'],
    );
    const events = (await store.getEvents('r1')).map((e) => e.kind);
    assert.ok(events.includes('resume') && events.includes('kernel-replay'), events.join(','));
    const cells = await store.getCells('r1');
    assert.deepEqual(
      cells.map((c) => [c.code, c.replay]),
      [
        ['x = 41', false],
        ['x = 41', true],
        ['print(x)', false],
      ],
    );
    // the resumed request carried the full conversation: system, user, 2 assistant turns and their tool messages
    const first = srv.requests[2]!.body.messages;
    assert.deepEqual(
      first.map((m) => m.role),
      ['system', 'user', 'assistant', 'tool', 'tool', 'assistant', 'tool'],
    );
    assert.equal((await store.getRun('r1'))!.steps, 4);
  });
  store.close();
});

test('loop: resume replays only the cells run since the kernel last lost its state', async () => {
  const store = openStore(':memory:');
  newRun(store);
  const executed: string[] = [];
  const script: Turn[] = [
    { toolCalls: [call('py', { code: 'x = 1' })] },
    { toolCalls: [call('py', { code: 'crash' })] },
    { toolCalls: [call('py', { code: 'y = 2' })] },
    { toolCalls: [call('py', { code: 'print(y)' }), call('py', { code: 'print(x)' })] },
    { toolCalls: [call('done', {})] },
  ];
  await withServer(script, async (url) => {
    await runAgent(opts(store, url, { budget: { maxSteps: 3 }, startKernel: fakeKernelFactory(executed) }));
    assert.deepEqual(
      (await store.getCells('r1')).map((c) => [c.code, c.restarted]),
      [
        ['x = 1', false],
        ['crash', true],
        ['y = 2', false],
      ],
    );
    const before = executed.length;
    const r = await runAgent(opts(store, url, { resume: true, startKernel: fakeKernelFactory(executed) }));
    assert.equal(r.status, 'finished');
    assert.deepEqual(executed.slice(before), ['y = 2', 'print(y)', 'print(x)']);
    const obs = (await store.getSteps('r1'))[3]!.toolCalls;
    assert.equal(obs[0]!.observation, '2');
    assert.equal(obs[1]!.observation, '');
  });
  store.close();
});

test('loop: truncateObservation keeps head and tail', () => {
  assert.deepEqual(truncateObservation('abc', 10), { text: 'abc', truncated: false });
  const t = truncateObservation('a'.repeat(50) + 'b'.repeat(50), 20);
  assert.ok(
    t.truncated &&
      t.text.startsWith('a'.repeat(10)) &&
      t.text.endsWith('b'.repeat(10)) &&
      /80 characters removed/.test(t.text),
  );
});

test('loop: the tool set prepares when the run starts, before the first model reply, and is released when the run ends or is cancelled (issue 23)', async () => {
  const store = openStore(':memory:');
  newRun(store);
  newRun(store, 'r2');
  const log: string[] = [];
  const prepare = ({ signal }: { signal: AbortSignal }) => {
    log.push('prepare');
    signal.addEventListener('abort', () => log.push('aborted'));
    return () => log.push('release');
  };
  await withServer([{ toolCalls: [call('echo', { text: 'a' })] }, { toolCalls: [call('done', {})] }], async (url) => {
    const r = await runAgent(
      opts(store, url, {
        toolSet: echoSet({ prepare }),
        onEvent: (e) => {
          if (e.type === 'observation') log.push('tool');
        },
      }),
    );
    assert.equal(r.status, 'finished');
    assert.deepEqual(log, ['prepare', 'tool', 'tool', 'release']);
  });
  log.length = 0;
  await withServer(
    [{ toolCalls: [call('echo', { text: 'a' })] }, { faults: [{ type: 'hang' }], content: 'x' }],
    async (url) => {
      const control = new RunControl();
      const r = await runAgent(
        opts(store, url, {
          runId: 'r2',
          control,
          toolSet: echoSet({ prepare }),
          onEvent: (e) => {
            if (e.type === 'step-start' && e.step === 1) setTimeout(() => control.stop(), 30);
          },
        }),
      );
      assert.equal(r.status, 'cancelled');
      assert.deepEqual(log, ['prepare', 'aborted', 'release']);
    },
  );
  store.close();
});

test("loop: a tool's own model calls (ToolResult.modelUse) count in the step, the run's totals and the token and cost budgets, also when the tool then fails", async () => {
  const store = openStore(':memory:');
  for (const id of ['r1', 'r2', 'r3']) await newRun(store, id);
  const own = { prompt_tokens: 100, completion_tokens: 10 };
  const toolUse = addModelUse(undefined, { input: 700, output: 50, cached: 0 }, 0.0019);
  const asking = echoSet({
    tools: [
      {
        name: 'ask',
        description: 'asks the model',
        parameters: { type: 'object', properties: { fail: { type: 'boolean' } } },
        run: async (a) =>
          a.fail
            ? { observation: 'Error: the reply did not parse', isError: true, modelUse: toolUse }
            : { observation: 'asked', modelUse: toolUse },
      },
      {
        name: 'done',
        description: 'finish',
        parameters: { type: 'object', properties: {} },
        run: async () => ({ observation: 'bye', finish: true }),
      },
    ],
  });
  const prices = { pricePerMillionInput: 1, pricePerMillionOutput: 10 };
  const ownCost = computeCost({ input: own.prompt_tokens, output: own.completion_tokens, cached: 0 }, prices)!;
  const turns: Turn[] = [
    { toolCalls: [call('ask', {}), call('ask', { fail: true })], usage: own },
    { toolCalls: [call('done', {})], usage: own },
  ];
  await withServer(turns, async (url) => {
    const priced = new LlmClient({ baseUrl: url, model: 'm', ...prices });
    const r = await runAgent(opts(store, url, { model: priced, toolSet: asking }));
    assert.equal(r.status, 'finished');
    const [s0, s1] = await store.getSteps('r1');
    assert.deepEqual(
      s0!.toolCalls.map((c) => c.modelUse),
      [toolUse, toolUse],
    );
    assert.deepEqual(s0!.usage, {
      input: own.prompt_tokens + 2 * toolUse.usage.input,
      output: own.completion_tokens + 2 * toolUse.usage.output,
      cached: 0,
    });
    assert.ok(Math.abs(s0!.costUsd! - (ownCost + 2 * toolUse.costUsd!)) < 1e-12);
    assert.equal(s1!.toolCalls[0]!.modelUse, undefined);
    const run = (await store.getRun('r1'))!;
    assert.deepEqual(run.tokens && [run.tokens.input, run.tokens.output], [
      2 * own.prompt_tokens + 2 * toolUse.usage.input,
      2 * own.completion_tokens + 2 * toolUse.usage.output,
    ]);
  });
  // budgets the agent's own first call stays under, crossed by its tools' calls: the run stops before the next model call
  const firstWithTools = own.prompt_tokens + own.completion_tokens + 2 * (toolUse.usage.input + toolUse.usage.output);
  await withServer(turns, async (url, srv) => {
    const r = await runAgent(
      opts(store, url, { runId: 'r2', toolSet: asking, budget: { maxTotalTokens: firstWithTools - 1 } }),
    );
    assert.equal(r.status, 'budget_exhausted');
    assert.match(r.reason, /token budget/);
    assert.equal(r.steps, 1);
    assert.equal(srv.requests.length, 1);
  });
  await withServer(turns, async (url) => {
    const priced = new LlmClient({ baseUrl: url, model: 'm', ...prices });
    const r = await runAgent(
      opts(store, url, {
        runId: 'r3',
        model: priced,
        toolSet: asking,
        budget: { maxCostUsd: ownCost + toolUse.costUsd! },
      }),
    );
    assert.equal(r.status, 'budget_exhausted');
    assert.match(r.reason, /cost budget/);
    assert.equal(r.steps, 1);
  });
  await store.close();
});
