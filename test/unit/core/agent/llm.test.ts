import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LlmClient, LlmError, computeCost, parseRetryAfter, scrubSecret } from '../../../../src/core/agent/llm.ts';
import { call, rawToolCall, startScriptedLlm } from '../../../helpers/scripted-llm.ts';

const msgs = [
  { role: 'system' as const, content: 'sys' },
  { role: 'user' as const, content: 'task' },
];
const tools = [
  {
    name: 'python',
    description: 'run',
    parameters: { type: 'object' as const, properties: { code: { type: 'string' as const } } },
  },
];

for (const stream of [false, true]) {
  test(`llm: ${stream ? 'streaming' : 'non-streaming'} reply with tool calls, usage and cost`, async () => {
    const srv = await startScriptedLlm({
      script: [
        {
          content: 'thinking aloud',
          reasoning: 'hmm',
          toolCalls: [call('python', { code: 'print(1)' }), rawToolCall('python', '{bad json')],
          usage: { prompt_tokens: 1000, completion_tokens: 200, cached_tokens: 400 },
        },
      ],
    });
    try {
      const deltas: string[] = [];
      const c = new LlmClient({
        baseUrl: srv.baseUrl,
        model: 'm',
        apiKey: 'sk-test-SECRET',
        stream,
        temperature: 0.2,
        maxTokens: 99,
        reasoningEffort: 'low',
        pricePerMillionInput: 2,
        pricePerMillionOutput: 10,
        pricePerMillionCachedInput: 1,
      });
      const r = await c.complete(msgs, tools, { onDelta: (d) => d.content && deltas.push(d.content) });
      assert.equal(r.message.content, 'thinking aloud');
      assert.equal(r.message.reasoning, 'hmm');
      assert.equal(r.message.tool_calls?.length, 2);
      assert.equal(r.message.tool_calls?.[0]?.function.name, 'python');
      assert.deepEqual(JSON.parse(r.message.tool_calls![0]!.function.arguments), { code: 'print(1)' });
      assert.equal(r.message.tool_calls?.[1]?.function.arguments, '{bad json');
      assert.deepEqual(r.usage, { input: 1000, output: 200, cached: 400 });
      assert.ok(Math.abs(r.costUsd! - (600 * 2 + 400 * 1 + 200 * 10) / 1e6) < 1e-12);
      assert.equal(r.finishReason, 'tool_calls');
      if (stream) assert.equal(deltas.join(''), 'thinking aloud');
      const body = srv.requests[0]!.body;
      assert.equal(body.temperature, 0.2);
      assert.equal(body.max_tokens, 99);
      assert.equal(body.reasoning_effort, 'low');
      assert.equal(body.tools?.[0]?.function.name, 'python');
      assert.equal(srv.requests[0]!.authorization, 'Bearer sk-test-SECRET');
    } finally {
      await srv.close();
    }
  });
}

test('llm: 429 honours Retry-After, 500 and truncated streams are retried with backoff', async () => {
  const srv = await startScriptedLlm({
    script: [
      {
        faults: [{ type: 'rate-limit', retryAfterSeconds: 7 }, { type: 'server-error' }, { type: 'truncate' }],
        content: 'ok',
      },
    ],
  });
  try {
    const sleeps: number[] = [];
    const c = new LlmClient({ baseUrl: srv.baseUrl, model: 'm', stream: true, retryBaseMs: 100, retryMaxMs: 1000 });
    const r = await c.complete(msgs, [], {
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    });
    assert.equal(r.message.content, 'ok');
    assert.equal(r.attempts, 4);
    assert.equal(sleeps[0], 7000);
    assert.ok(sleeps[1]! >= 0 && sleeps[1]! <= 200, `2nd backoff ${sleeps[1]}`);
    assert.ok(sleeps[2]! >= 0 && sleeps[2]! <= 400, `3rd backoff ${sleeps[2]}`);
    assert.deepEqual(
      srv.requests.map((q) => q.served),
      ['rate-limit', 'server-error', 'truncate', 'reply'],
    );
  } finally {
    await srv.close();
  }
});

test('llm: idle timeout — a streamed reply that keeps sending finishes past it; a silent server is cut at it and retried', async () => {
  const srv = await startScriptedLlm({
    script: [{ content: 'slow but steady reasoning', reasoning: 'thinking...', chunkDelayMs: 150 }],
  });
  const srv2 = await startScriptedLlm({ script: [{ faults: [{ type: 'hang' }], content: 'after hang' }] });
  try {
    const c = new LlmClient({ baseUrl: srv.baseUrl, model: 'm', stream: true, idleTimeoutMs: 400, retryBaseMs: 1 });
    const t0 = performance.now();
    const r = await c.complete(msgs, []);
    assert.equal(r.message.content, 'slow but steady reasoning');
    assert.equal(r.attempts, 1);
    assert.ok(performance.now() - t0 > 400, 'the whole reply took longer than the idle timeout');
    const c2 = new LlmClient({ baseUrl: srv2.baseUrl, model: 'm', idleTimeoutMs: 300, retryBaseMs: 1 });
    const t1 = performance.now();
    const h = await c2.complete(msgs, []);
    assert.equal(h.message.content, 'after hang');
    assert.equal(h.attempts, 2);
    assert.ok(performance.now() - t1 < 5_000);
  } finally {
    await srv.close();
    await srv2.close();
  }
});

test('llm: a hanging server hits the per-request timeout, then the retry succeeds; retries are bounded', async () => {
  const srv = await startScriptedLlm({ script: [{ faults: [{ type: 'hang' }], content: 'after hang' }] });
  try {
    const c = new LlmClient({ baseUrl: srv.baseUrl, model: 'm', timeoutMs: 200, retryBaseMs: 1 });
    const r = await c.complete(msgs, []);
    assert.equal(r.message.content, 'after hang');
    assert.equal(r.attempts, 2);
  } finally {
    await srv.close();
  }
  const srv2 = await startScriptedLlm({
    script: [
      { faults: [{ type: 'server-error' }, { type: 'server-error' }, { type: 'server-error' }], content: 'never' },
    ],
  });
  try {
    const c = new LlmClient({ baseUrl: srv2.baseUrl, model: 'm', maxRetries: 1, retryBaseMs: 1 });
    await assert.rejects(
      c.complete(msgs, []),
      (e: unknown) => e instanceof LlmError && e.kind === 'server' && e.status === 500,
    );
    assert.equal(srv2.requests.length, 2);
  } finally {
    await srv2.close();
  }
});

test('llm: 401/404/400 give clear non-retried errors that never contain the key', async () => {
  const key = 'sk-very-secret-key-123456';
  const srv = await startScriptedLlm({ requireKey: 'other', script: [] });
  try {
    const c = new LlmClient({ baseUrl: srv.baseUrl, model: 'm', apiKey: key });
    await assert.rejects(c.complete(msgs, []), (e: unknown) => {
      assert.ok(e instanceof LlmError);
      assert.equal(e.kind, 'auth');
      assert.match(e.message, /401.*API key/);
      assert.ok(!e.message.includes(key));
      assert.ok(!String(e.stack).includes(key));
      return true;
    });
    assert.equal(srv.requests.length, 1);
  } finally {
    await srv.close();
  }
  const srv2 = await startScriptedLlm({
    script: [
      { faults: [{ type: 'status', status: 404, message: `model not found for key ${key}` }], content: 'x' },
      { faults: [{ type: 'status', status: 400, message: 'bad tool schema' }], content: 'x' },
    ],
  });
  try {
    const c = new LlmClient({ baseUrl: srv2.baseUrl, model: 'nope', apiKey: key });
    await assert.rejects(
      c.complete(msgs, []),
      (e: unknown) =>
        e instanceof LlmError && e.kind === 'not_found' && /base URL/.test(e.message) && !e.message.includes(key),
    );
    await assert.rejects(
      c.complete([...msgs, { role: 'assistant', content: 'a' }], []),
      (e: unknown) => e instanceof LlmError && e.kind === 'bad_request' && /bad tool schema/.test(e.message),
    );
  } finally {
    await srv2.close();
  }
});

test('llm: abort signal cancels a hanging call promptly', async () => {
  const srv = await startScriptedLlm({ script: [{ faults: [{ type: 'hang' }], content: 'x' }] });
  try {
    const c = new LlmClient({ baseUrl: srv.baseUrl, model: 'm' });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    await assert.rejects(
      c.complete(msgs, [], { signal: ac.signal }),
      (e: unknown) => e instanceof LlmError && e.kind === 'aborted',
    );
  } finally {
    await srv.close();
  }
});

test('llm: helpers — cost, Retry-After parsing, scrubbing', () => {
  assert.equal(computeCost({ input: 10, output: 10, cached: 0 }, {}), null);
  assert.equal(
    computeCost({ input: 1e6, output: 1e6, cached: 0 }, { pricePerMillionInput: 1, pricePerMillionOutput: 3 }),
    4,
  );
  const h = (o: Record<string, string>) => ({ get: (n: string) => o[n] ?? null });
  assert.equal(parseRetryAfter(h({ 'retry-after': '3' })), 3000);
  assert.equal(parseRetryAfter(h({ 'retry-after-ms': '250' })), 250);
  assert.equal(parseRetryAfter(h({ 'retry-after': new Date(10_000).toUTCString() }), 5_000), 5000);
  assert.equal(parseRetryAfter(h({})), undefined);
  assert.equal(scrubSecret('a sk-abcdef b sk-abcdef', 'sk-abcdef'), 'a *** b ***');
});

test('llm: listModels reads /v1/models; a bad key gives a clear error', async () => {
  const srv = await startScriptedLlm({ script: [], models: ['a', 'b'] });
  try {
    assert.deepEqual(await new LlmClient({ baseUrl: srv.baseUrl, model: 'a' }).listModels(), ['a', 'b']);
    await assert.rejects(
      new LlmClient({ baseUrl: srv.baseUrl.replace(/\/v1$/, '/nope'), model: 'a' }).listModels(),
      (e: unknown) => e instanceof LlmError && e.kind === 'not_found',
    );
  } finally {
    await srv.close();
  }
});
