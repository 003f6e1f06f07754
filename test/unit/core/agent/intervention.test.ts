/** Interventions (human steps) and forks of runs: issue 20. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LlmClient } from '../../../../src/core/agent/llm.ts';
import {
  messagesFromSteps,
  RunControl,
  RunLeaseError,
  runAgent,
  type AgentRunOptions,
} from '../../../../src/core/agent/loop.ts';
import type {
  AgentEvent,
  KernelExecuteResult,
  KernelLike,
  StepRecord,
  ToolSet,
} from '../../../../src/core/agent/types.ts';
import { openStore, type RunStore } from '../../../../src/core/store/run-store.ts';
import {
  assistanceLabel,
  assistanceOf,
  interveneStoredRun,
  interventionSupport,
  parseForkSpec,
  readForkPoint,
  seedForkInterventions,
} from '../../../../src/core/runs/intervene.ts';
import { MemoryRunStore } from '../../../helpers/memory-run-store.ts';
import { LONGDA_RUN_STATE, longdaRunState } from '../../../../src/core/benchmarks/longda/run-state.ts';
import { call, startScriptedLlm, type ChatRequestBody, type Turn } from '../../../helpers/scripted-llm.ts';

const toolSet: ToolSet = {
  id: 'echo',
  systemPrompt: 'sys',
  buildBlockPrompt: (b) => `task ${String(b)}`,
  defaultMaxSteps: 100,
  hostPaths: [],
  runState: LONGDA_RUN_STATE, // answers are rows of the store (LongDA's per-run state)
  tools: [
    {
      name: 'echo',
      description: 'echo',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      run: async (a) => ({ observation: `echo:${a.text as string}` }),
    },
    {
      name: 'note',
      description: 'answer',
      parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      run: async (a, ctx) => {
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
        return {
          observation: r.status === 'ok' ? r.stdout || 'ok' : `error ${r.error?.ename ?? ''}`,
          isError: r.status !== 'ok',
        };
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

/** `x = N` assigns, `print(x)` prints; `broken` makes every cell fail (a data file that changed since). */
function kernel(log: string[], broken = false) {
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
        if (broken) {
          return {
            status: 'error',
            stdout: '',
            stderr: '',
            error: { ename: 'FileNotFoundError', evalue: 'data.csv', traceback: [] },
            durationMs: 1,
          };
        }
        const m = /^(\w+) = (\d+)$/.exec(code);
        if (m) {
          vars.set(m[1]!, m[2]!);
          return { status: 'ok', stdout: '', stderr: '', durationMs: 1 };
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

async function newRun(
  store: RunStore,
  id: string,
  extra: { agent?: string; forkOf?: { runId: string; step: number } } = {},
): Promise<string> {
  await store.createRun({
    id,
    suite: 't',
    blockId: 'b',
    agent: extra.agent ?? 'llm',
    model: 'm',
    params: extra.forkOf ? { forkOf: extra.forkOf } : {},
    promptHash: 'h',
    toolSet: 'echo',
    dataChecksums: {},
    loupeVersion: '0',
    sandbox: 'off',
    workspace: '/tmp',
  });
  return id;
}

const userTexts = (req: ChatRequestBody) => req.messages.filter((m) => m.role === 'user').map((m) => String(m.content));

async function withServer<T>(
  script: Turn[],
  fn: (srv: Awaited<ReturnType<typeof startScriptedLlm>>) => Promise<T>,
): Promise<T> {
  const srv = await startScriptedLlm({ script });
  try {
    return await fn(srv);
  } finally {
    await srv.close();
  }
}

const opts = (store: RunStore, baseUrl: string, o: Partial<AgentRunOptions> = {}): AgentRunOptions => ({
  store,
  runId: 'r1',
  model: new LlmClient({ baseUrl, model: 'm', retryBaseMs: 1 }),
  toolSet,
  block: 'B',
  workspace: '/tmp',
  ...o,
});

for (const engine of ['sqlite', 'memory'] as const) {
  test(`intervention (${engine}): a hint added while paused is recorded as a human step and sent with the next request`, async () => {
    const store: RunStore = engine === 'sqlite' ? openStore(':memory:') : new MemoryRunStore();
    await newRun(store, 'r1');
    const control = new RunControl();
    const events: AgentEvent[] = [];
    await withServer(
      [
        { toolCalls: [call('echo', { text: 'a' })] },
        { toolCalls: [call('echo', { text: 'b' })] },
        { toolCalls: [call('done', {})] },
      ],
      async (srv) => {
        const onEvent = (e: AgentEvent) => {
          events.push(e);
          if (e.type === 'step-start' && e.step === 0) control.pause(); // takes effect after step 1
        };
        const running = runAgent(opts(store, srv.baseUrl, { control, onEvent }));
        // Added before the pause took effect: it waits for the step boundary, then is recorded.
        while (!control.isPaused) await new Promise((r) => setTimeout(r, 5));
        const added = control.intervene({ who: 'ana', text: '  The weight column is WTMEC2YR.  ' });
        const rec = (await added) as { seq: number; beforeStep: number; text: string };
        assert.equal(control.isParked, true);
        assert.deepEqual([rec.seq, rec.beforeStep, rec.text], [1, 1, 'The weight column is WTMEC2YR.']);
        // Nothing was sent to the model while paused.
        assert.equal(srv.requests.length, 1);
        await assert.rejects(control.intervene({ who: 'ana', text: '   ' }), /intervention: the message is empty/);
        control.resume();
        const r = await running;
        assert.equal(r.status, 'finished');
        assert.equal(srv.requests.length, 3);
        const second = srv.requests[1]!.body;
        assert.deepEqual(userTexts(second), [
          'task B',
          'Hint from the analyst supervising this run: The weight column is WTMEC2YR.',
        ]);
        assert.equal(second.messages.at(-1)!.role, 'user', 'the hint comes after the tool results of step 1');
        assert.ok(!userTexts(srv.requests[0]!.body).some((t) => t.includes('WTMEC2YR')));
        const stored = await store.getInterventions('r1');
        assert.equal(stored.length, 1);
        assert.equal(stored[0]!.who, 'ana');
        assert.equal(stored[0]!.kind, 'hint');
        assert.ok(events.some((e) => e.type === 'intervention' && e.record.text.includes('WTMEC2YR')));
        const a = (await assistanceOf(store, [(await store.getRun('r1'))!])).get('r1');
        assert.deepEqual(a, { interventions: 1 });
        assert.equal(assistanceLabel(a), 'assisted');
        // Not paused any more: refused, nothing recorded.
        await assert.rejects(control.intervene({ who: 'ana', text: 'late' }), /pause the run first/);
        assert.equal((await store.getInterventions('r1')).length, 1);
      },
    );
    await store.close();
  });
}

test('intervention: a stopped run takes a hint under its lease; refused while another process drives it, naming it; the resume sends it', async () => {
  const store = openStore(':memory:');
  await newRun(store, 'r1');
  const control = new RunControl();
  await withServer([{ toolCalls: [call('echo', { text: 'a' })] }, { toolCalls: [call('done', {})] }], async (srv) => {
    const r1 = await runAgent(
      opts(store, srv.baseUrl, {
        control,
        onEvent: (e) => {
          if (e.type === 'step-end') control.stop('analyst stopped it');
        },
      }),
    );
    assert.equal(r1.status, 'cancelled');
    // Another live process holds the lease: refused, naming it, nothing recorded.
    await store.acquireRunLease('r1', { owner: 'other-host:4242:abcd', host: 'other-host', pid: 4242 }, 60_000);
    await assert.rejects(
      interveneStoredRun(store, 'r1', { who: 'ana', text: 'use WTMEC2YR' }),
      (e: unknown) =>
        e instanceof RunLeaseError && /other-host:4242:abcd/.test(e.message) && /pid 4242/.test(e.message),
    );
    assert.equal((await store.getInterventions('r1')).length, 0);
    await store.releaseRunLease('r1', 'other-host:4242:abcd');
    // A caller that does not hold the lease cannot write through the store either.
    assert.equal(
      await store.addIntervention({ runId: 'r1', who: 'x', kind: 'hint', text: 't' }, 'not-the-holder'),
      undefined,
    );
    const rec = await interveneStoredRun(store, 'r1', { who: 'ana', kind: 'correction', text: 'use WTMEC2YR' });
    assert.equal(rec.beforeStep, 1);
    assert.equal(await store.getRunLease('r1'), undefined, 'the lease is released after recording');
    const r2 = await runAgent(opts(store, srv.baseUrl, { resume: true }));
    assert.equal(r2.status, 'finished');
    assert.deepEqual(userTexts(srv.requests[1]!.body), [
      'task B',
      'Correction from the analyst supervising this run: use WTMEC2YR',
    ]);
    await assert.rejects(interveneStoredRun(store, 'r1', { who: 'ana', text: 'more' }), /already finished: fork it/);
    await assert.rejects(interveneStoredRun(store, 'nope', { who: 'ana', text: 'x' }), /run nope: not found/);
  });
  // An analyst who ran code in the agent's kernel during the run (issue 9's `assisted` event) also makes it assisted.
  await newRun(store, 'coded');
  await store.addEvent('coded', 'assisted', 'an analyst ran code in the kernel while the agent was running');
  const coded = (await assistanceOf(store, [(await store.getRun('coded'))!])).get('coded');
  assert.deepEqual(coded, { interventions: 0, analystCode: true });
  assert.equal(assistanceLabel(coded), 'assisted');
  await newRun(store, 'ref', { agent: 'reference' });
  await assert.rejects(
    interveneStoredRun(store, 'ref', { who: 'ana', text: 'x' }),
    /reference agent's: it follows a fixed script/,
  );
  assert.match(
    (interventionSupport({ id: 'e1', agent: 'mcp:claude-desktop' }) as { reason: string }).reason,
    /external MCP client \(claude-desktop\).*cannot send it a message, so MCP runs cannot be intervened on/,
  );
  assert.match(
    (interventionSupport({ id: 'e2', agent: 'remote-worker' }) as { reason: string }).reason,
    /external client \(remote-worker\).*Loupe's own agent only/,
  );
  assert.match(
    (interventionSupport({ id: 'h1', agent: 'human:ada' }) as { reason: string }).reason,
    /human baseline by ada.*takes no interventions/,
  );
  await store.close();
});

test('messagesFromSteps: human steps go before their step, those after the last step at the end', () => {
  const step = (index: number): StepRecord => ({
    runId: 'r',
    index,
    startedAt: '',
    endedAt: '',
    latencyMs: 0,
    toolMs: 0,
    assistant: { role: 'assistant', content: `s${index}` },
    toolCalls: [],
    extraMessages: [],
    usage: { input: 0, output: 0, cached: 0 },
    costUsd: null,
    finishReason: null,
  });
  const h = (seq: number, beforeStep: number) => ({
    runId: 'r',
    seq,
    beforeStep,
    at: '',
    who: 'a',
    kind: 'hint' as const,
    text: `h${seq}`,
  });
  const m = messagesFromSteps('sys', 'task', [step(0), step(1)], [h(3, 2), h(1, 1), h(2, 1)]);
  assert.deepEqual(
    m.map((x) => String(x.content).replace('Hint from the analyst supervising this run: ', '')),
    ['sys', 'task', 's0', 'h1', 'h2', 's1', 'h3'],
  );
});

test('fork: replays the parent up to a step without model calls (cells re-run), carries its hints, continues with another model', async () => {
  const store = openStore(':memory:');
  await newRun(store, 'p');
  const parentKernel: string[] = [];
  const control = new RunControl();
  await withServer(
    [
      { toolCalls: [call('py', { code: 'x = 7' })] },
      { toolCalls: [call('py', { code: 'print(x)' }), call('note', { n: 1 })] },
      { toolCalls: [call('echo', { text: 'step 3' })] },
      { toolCalls: [call('done', {})] },
    ],
    async (srv) => {
      const onEvent = (e: AgentEvent) => {
        if (e.type === 'step-start' && e.step === 0) control.pause();
        if (e.type === 'paused') {
          void control.intervene({ who: 'ana', text: 'x is the sample size' }).then(() => control.resume());
        }
      };
      assert.equal(
        (await runAgent(opts(store, srv.baseUrl, { runId: 'p', control, onEvent, startKernel: kernel(parentKernel) })))
          .status,
        'finished',
      );
    },
  );
  await assert.rejects(
    readForkPoint(store, 'p', 5),
    /fork point 5: is beyond the last step of run p \(it has 4 steps\)/,
  );
  await assert.rejects(readForkPoint(store, 'p', 2, 'other-block'), /is for block b, not other-block/);
  assert.deepEqual(parseForkSpec('20261125T1-ab@3'), { runId: '20261125T1-ab', step: 3 });
  assert.throws(() => parseForkSpec('p:3'), /write it as RUN@STEP/);

  const fp = await readForkPoint(store, 'p', 3);
  assert.equal(fp.steps.length, 3);
  assert.equal(fp.interventions.length, 1);
  await newRun(store, 'f', { forkOf: { runId: 'p', step: 3 } });
  await seedForkInterventions(store, 'f', fp, { who: 'ben', text: 'now check the answer' });
  const forkKernel: string[] = [];
  // The scripted server answers by the number of assistant messages in the request: turns 1–3 must never be served.
  const never = (): never => {
    throw new Error('a replayed step called the model');
  };
  await withServer(
    [
      never,
      never,
      never,
      { content: 'fork plan', toolCalls: [call('note', { n: 2 })] },
      { toolCalls: [call('done', {})] },
    ],
    async (srv) => {
      const r = await runAgent(
        opts(store, srv.baseUrl, {
          runId: 'f',
          model: new LlmClient({ baseUrl: srv.baseUrl, model: 'other', retryBaseMs: 1 }),
          startKernel: kernel(forkKernel),
          replay: { parentRunId: 'p', steps: fp.steps, cells: fp.cells },
        }),
      );
      assert.equal(r.status, 'finished', r.reason);
      assert.equal(r.steps, 5);
      // Steps 1–3 made no model call: the server saw only the fork's own two requests.
      assert.equal(srv.requests.length, 2);
      const first = srv.requests[0]!.body;
      assert.deepEqual(userTexts(first), [
        'task B',
        'Hint from the analyst supervising this run: x is the sample size',
        'Hint from the analyst supervising this run: now check the answer',
      ]);
      assert.equal(
        first.messages.filter((m) => m.role === 'assistant').length,
        3,
        'the replayed steps are in the conversation',
      );
      assert.ok(
        first.messages.some((m) => m.role === 'tool' && m.content === '7'),
        "print(x) ran again in the fork's kernel and printed 7",
      );
    },
  );
  assert.deepEqual(forkKernel, ['x = 7', 'print(x)'], "the fork's fresh kernel re-ran the recorded cells");
  const steps = await store.getSteps('f');
  assert.deepEqual(
    steps.slice(0, 3).map((s) => s.finishReason),
    ['replayed', 'replayed', 'replayed'],
  );
  assert.ok(
    steps.slice(3).every((s) => s.finishReason !== 'replayed' && s.usage!.input > 0),
    'steps 4–5 came from the model',
  );
  assert.ok(steps.slice(0, 3).every((s) => s.usage!.input === 0 && s.latencyMs === 0));
  assert.deepEqual((await store.getAnswers('f')).map((a) => a.queryId).sort(), ['q1', 'q2']);
  assert.match(
    (await store.getEvents('f')).map((e) => e.message).join('\n'),
    /replayed 3 recorded steps of run p without model calls; continuing with other/,
  );
  const a = (await assistanceOf(store, [(await store.getRun('f'))!])).get('f');
  assert.equal(assistanceLabel(a), 'assisted fork');
  assert.equal(assistanceLabel({ interventions: 0, forkOf: { runId: 'p', step: 3 } }), 'fork');
  assert.equal(assistanceLabel({ interventions: 0 }), undefined);

  // A fork whose replay diverges (a recorded cell now errors) stops and says which, before any model call.
  await newRun(store, 'g', { forkOf: { runId: 'p', step: 3 } });
  await withServer([{ toolCalls: [call('done', {})] }], async (srv) => {
    const r = await runAgent(
      opts(store, srv.baseUrl, {
        runId: 'g',
        startKernel: kernel([], true),
        replay: { parentRunId: 'p', steps: fp.steps, cells: fp.cells },
      }),
    );
    assert.equal(r.status, 'failed');
    assert.match(
      r.reason,
      /fork replay diverged at step 1: cell 1 of that step \(kernel cell #0 of run p, "x = 7"\) ran without error in the parent but now errors: FileNotFoundError: data.csv/,
    );
    assert.equal(r.steps, 1);
    assert.equal(srv.requests.length, 0);
  });
  await store.close();
});
