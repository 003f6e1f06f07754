/**
 * OpenTelemetry export (issue 45), end to end against an OTLP/HTTP receiver started here on 127.0.0.1 that decodes
 * each request with the OpenTelemetry proto definitions: a live `loupe run --otel-endpoint` with the scripted
 * OpenAI-compatible model on the real LongDA block (NHANES Data Brief 508, $LOUPE_SHARED), then `loupe export otel`
 * of the stored run with a stored score; span names, parent links, timestamps, gen_ai.* attributes, evaluation
 * events, bounded texts, headers, no API key; a dead endpoint neither fails nor stops the run (one warning).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../../src/cli/main.ts';
import { openStore } from '../../../src/core/store/run-store.ts';
import { OTEL_GENAI_SEMCONV_VERSION } from '../../../src/core/runs/otel.ts';
import { call, startScriptedLlm, type Turn } from '../../helpers/scripted-llm.ts';
import { startOtlpReceiver, type ReceivedSpan } from '../../helpers/otlp-receiver.ts';
import { sharedData } from '../../helpers/shared.ts';

const ROOT = sharedData('longda', 'benchmark');
const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const Q1 = 'NHANES_NCHS Data Brief No. 508_q1';
const KEY = 'sk-loupe-otel-secret-5d1e88a0c4';

const SCRIPT: Turn[] = [
  {
    content: 'Read q1, then look at the data.',
    reasoning: 'think first',
    toolCalls: [call('prompt', { q_id: Q1 }, 'call_prompt'), call('python', { code: "print('x' * 5000)" }, 'call_py')],
    usage: { prompt_tokens: 1000, completion_tokens: 50 },
  },
  {
    toolCalls: [call('answer', { action: 'add', q_id: Q1, answer: 40.3 }, 'call_ans'), call('nope', {}, 'call_bad')],
    usage: { prompt_tokens: 1200, completion_tokens: 30 },
  },
  {
    content: 'Done.',
    toolCalls: [call('final_answer', { summary: 'q1 answered' }, 'call_fin')],
    usage: { prompt_tokens: 1300, completion_tokens: 20 },
  },
];

function cliIo(env: NodeJS.ProcessEnv, cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s), env, cwd } };
}

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const ns = (iso: string) => BigInt(Date.parse(iso)) * 1_000_000n;

/** The checks both paths share: one trace, a root invoke_agent span, chat per step and execute_tool per tool call under it. */
function checkTrace(
  spans: ReceivedSpan[],
  runId: string,
  steps: { startedAt: string; latencyMs: number; toolCalls: { id: string; name: string; durationMs: number }[] }[],
) {
  const roots = spans.filter((s) => s.parentSpanId === '');
  assert.equal(roots.length, 1, `one root span, got ${spans.map((s) => `${s.name}<-${s.parentSpanId}`).join(', ')}`);
  const root = roots[0]!;
  assert.equal(root.name, 'invoke_agent loupe longda');
  assert.equal(root.kind, 1); // INTERNAL
  assert.ok(
    spans.every((s) => s.traceId === root.traceId),
    "every span in the run's trace",
  );
  assert.ok(
    spans.every((s) => s === root || s.parentSpanId === root.spanId),
    'every other span is a child of the root',
  );
  assert.equal(root.attributes['gen_ai.operation.name'], 'invoke_agent');
  assert.equal(root.attributes['gen_ai.agent.name'], 'loupe longda');
  assert.equal(root.attributes['gen_ai.conversation.id'], runId);
  assert.equal(root.attributes['gen_ai.request.model'], 'scripted');
  assert.equal(root.attributes['gen_ai.provider.name'], '127.0.0.1');
  assert.equal(root.attributes['gen_ai.system'], '127.0.0.1');
  assert.equal(root.attributes['server.address'], '127.0.0.1');
  assert.equal(root.attributes['loupe.run.status'], 'finished');
  assert.equal(root.attributes['gen_ai.usage.input_tokens'], 3500);
  assert.equal(root.attributes['gen_ai.usage.output_tokens'], 100);
  assert.equal(root.scope.schemaUrl, `https://opentelemetry.io/schemas/${OTEL_GENAI_SEMCONV_VERSION}`);
  assert.equal(root.resource['service.name'], 'loupe');

  const chats = spans
    .filter((s) => s.attributes['gen_ai.operation.name'] === 'chat')
    .sort((a, b) => Number(a.attributes['loupe.step.index']) - Number(b.attributes['loupe.step.index']));
  const tools = spans.filter((s) => s.attributes['gen_ai.operation.name'] === 'execute_tool');
  assert.equal(chats.length, steps.length);
  assert.equal(
    tools.length,
    steps.reduce((n, s) => n + s.toolCalls.length, 0),
  );
  assert.equal(spans.length, 1 + chats.length + tools.length);
  assert.deepEqual(
    chats.map((c) => c.name),
    steps.map(() => 'chat scripted'),
  );
  assert.deepEqual(
    chats.map((c) => [c.attributes['gen_ai.usage.input_tokens'], c.attributes['gen_ai.usage.output_tokens']]),
    [
      [1000, 50],
      [1200, 30],
      [1300, 20],
    ],
  );
  assert.ok(chats.every((c) => c.kind === 3)); // CLIENT
  assert.deepEqual(chats[0]!.attributes['gen_ai.response.finish_reasons'], ['tool_calls']);
  const out0 = JSON.parse(chats[0]!.attributes['gen_ai.output.messages'] as string) as {
    role: string;
    parts: { type: string; content?: string; name?: string; id?: string }[];
  }[];
  assert.equal(out0[0]!.role, 'assistant');
  assert.deepEqual(
    out0[0]!.parts.map((p) => p.type),
    ['reasoning', 'text', 'tool_call', 'tool_call'],
  );
  assert.equal(out0[0]!.parts[1]!.content, 'Read q1, then look at the data.');
  // timestamps from the stored steps: chat from the step's start for its latency, tools one after the other
  for (const [i, st] of steps.entries()) {
    const c = chats[i]!;
    assert.equal(c.startNs / 1_000_000n, ns(st.startedAt) / 1_000_000n, `chat ${i} starts when step ${i} started`);
    assert.ok(c.endNs >= c.startNs && c.startNs >= root.startNs && root.endNs >= c.endNs);
    let t = c.endNs;
    for (const tc of st.toolCalls) {
      const span = tools.find((x) => x.attributes['gen_ai.tool.call.id'] === tc.id)!;
      assert.ok(span, `execute_tool span of ${tc.id}`);
      assert.equal(span.name, `execute_tool ${tc.name}`);
      assert.equal(span.attributes['gen_ai.tool.name'], tc.name);
      assert.equal(span.attributes['gen_ai.tool.type'], 'function');
      assert.ok(
        span.startNs >= t - 1_000n && span.endNs <= root.endNs,
        `tool ${tc.id} after the chat and earlier tools, inside the run`,
      );
      t = span.endNs;
    }
  }
  const bad = tools.find((x) => x.attributes['gen_ai.tool.call.id'] === 'call_bad')!;
  assert.equal(bad.status.code, 2); // ERROR
  assert.equal(bad.attributes['error.type'], 'tool_error');
  const ans = tools.find((x) => x.attributes['gen_ai.tool.call.id'] === 'call_ans')!;
  assert.deepEqual(JSON.parse(ans.attributes['gen_ai.tool.call.arguments'] as string), {
    action: 'add',
    q_id: Q1,
    answer: 40.3,
  });
  return { root, chats, tools };
}

test(
  'loupe run --otel-endpoint sends the run live; loupe export otel sends the stored run with its scores',
  { timeout: 180_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-otel-'));
    const llm = await startScriptedLlm({ script: SCRIPT, requireKey: KEY });
    const live = await startOtlpReceiver();
    const later = await startOtlpReceiver();
    try {
      const store = join(dir, 'runs.sqlite');
      const t = cliIo(
        { ...process.env, LOUPE_OTEL_TEST_KEY: KEY, OTEL_EXPORTER_OTLP_HEADERS: 'x-from-env=a%20b' },
        dir,
      );
      const code = await main(
        [
          'run',
          '--suite',
          'longda',
          '--root',
          ROOT,
          '--block',
          BLOCK,
          '--agent',
          'llm',
          '--model',
          'scripted',
          '--base-url',
          llm.baseUrl,
          '--api-key-env',
          'LOUPE_OTEL_TEST_KEY',
          '--store',
          store,
          '--json',
          '--otel-endpoint',
          live.url,
          '--otel-header',
          'Authorization=Basic cGs6c2s=',
          '--otel-max-text',
          '200',
        ],
        t.io,
      );
      assert.equal(code, 0, t.err.join(''));
      const runId = (JSON.parse(t.out.join('').trim()) as { runId: string }).runId;
      const s = openStore(store);
      const steps = await s.getSteps(runId);
      assert.equal(steps.length, 3);

      // live: requests to /v1/traces with the given headers; decoded spans form the run's trace
      assert.ok(live.requests.length >= 1);
      for (const r of live.requests) {
        assert.equal(r.path, '/v1/traces');
        assert.equal(r.headers.authorization, 'Basic cGs6c2s=');
        assert.equal(r.headers['x-from-env'], 'a b');
        assert.ok(!r.body.includes(KEY), 'the model API key is never sent');
      }
      const { tools } = checkTrace(live.spans, runId, steps);
      // agent text is bounded: the 5000-character observation is cut at 200 with a marker
      const py = tools.find((x) => x.attributes['gen_ai.tool.call.id'] === 'call_py')!;
      const result = py.attributes['gen_ai.tool.call.result'] as string;
      assert.match(result, /…\[truncated \d+ chars\]$/);
      assert.ok(result.length < 260, `bounded result, got ${result.length} chars`);
      assert.ok(
        !(await s.getEvents(runId)).some((e) => /OpenTelemetry/.test(e.message)),
        'no export warning when the endpoint accepted',
      );

      // a stored score, then the stored run exported: same layout, scores as gen_ai.evaluation.result events
      await s.scores.save({
        runId,
        benchmark: 'longda',
        judgeId: 'none',
        options: { list_scoring: 'partial' },
        summary: { match: 1 / 9, coverage: 1 / 9, verdict: 'partial', detail: { nested: true } },
        detail: {},
        pending: 0,
        scoredAt: new Date().toISOString(),
      });
      await s.close();
      const t2 = cliIo({ ...process.env }, dir);
      assert.equal(
        await main(
          ['export', 'otel', '--run', runId, '--store', store, '--endpoint', `${later.url}/`, '--json'],
          t2.io,
        ),
        0,
        t2.err.join(''),
      );
      const rep = JSON.parse(t2.out.join('')) as {
        semconv: string;
        runs: { runId: string; spans: number; evaluations: number; error?: string }[];
      };
      assert.equal(rep.semconv, OTEL_GENAI_SEMCONV_VERSION);
      assert.equal(rep.runs[0]!.spans, later.spans.length);
      assert.equal(rep.runs[0]!.evaluations, 3);
      const { root } = checkTrace(later.spans, runId, steps);
      assert.notEqual(root.traceId, live.spans[0]!.traceId);
      const evals = root.events.filter((e) => e.name === 'gen_ai.evaluation.result');
      assert.deepEqual(evals.map((e) => e.attributes['gen_ai.evaluation.name']).sort(), [
        'longda.coverage',
        'longda.match',
        'longda.verdict',
      ]);
      assert.equal(
        evals.find((e) => e.attributes['gen_ai.evaluation.name'] === 'longda.match')!.attributes[
          'gen_ai.evaluation.score.value'
        ],
        1 / 9,
      );
      assert.equal(
        evals.find((e) => e.attributes['gen_ai.evaluation.name'] === 'longda.verdict')!.attributes[
          'gen_ai.evaluation.score.label'
        ],
        'partial',
      );
      // default bound (4096): the 5000-character observation is cut there
      const py2 = later.spans.find((x) => x.attributes['gen_ai.tool.call.id'] === 'call_py')!;
      assert.match(py2.attributes['gen_ai.tool.call.result'] as string, /^x{4096}…\[truncated \d+ chars\]$/m);
    } finally {
      await Promise.all([llm.close(), live.close(), later.close()]);
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'a dead OTLP endpoint: the live run finishes with one warning; loupe export otel exits 1 naming the failure',
  { timeout: 180_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-otel-dead-'));
    const llm = await startScriptedLlm({ script: SCRIPT });
    try {
      const store = join(dir, 'runs.sqlite');
      const dead = `http://127.0.0.1:${await closedPort()}`;
      const t = cliIo({ ...process.env }, dir);
      const code = await main(
        [
          'run',
          '--suite',
          'longda',
          '--root',
          ROOT,
          '--block',
          BLOCK,
          '--agent',
          'llm',
          '--model',
          'scripted',
          '--base-url',
          llm.baseUrl,
          '--store',
          store,
          '--json',
          '--otel-endpoint',
          dead,
        ],
        t.io,
      );
      assert.equal(code, 0, t.err.join(''));
      const line = JSON.parse(t.out.join('').trim()) as { runId: string; status: string; steps: number };
      assert.equal(line.status, 'finished');
      assert.equal(line.steps, 3);
      const s = openStore(store);
      const warnings = (await s.getEvents(line.runId)).filter((e) => /OpenTelemetry export/.test(e.message));
      await s.close();
      assert.equal(warnings.length, 1, JSON.stringify(warnings));
      assert.equal(warnings[0]!.kind, 'warning');
      assert.match(warnings[0]!.message, /^OpenTelemetry export to http:\/\/127\.0\.0\.1:\d+\/v1\/traces failed/);

      const t2 = cliIo({ ...process.env }, dir);
      assert.equal(await main(['export', 'otel', '--run', line.runId, '--store', store, '--endpoint', dead], t2.io), 1);
      assert.match(t2.out.join(''), /NOT sent/, t2.err.join(''));
    } finally {
      await llm.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('loupe export otel / run --otel-endpoint: bad flags are usage errors naming the flag', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loupe-otel-flags-'));
  try {
    const cases: [string[], RegExp][] = [
      [['export', 'otel', '--run', 'r1'], /give --endpoint URL/],
      [['export', 'otel', '--endpoint', 'http://127.0.0.1:1'], /give --run ID/],
      [['export', 'otel', '--run', 'r1', '--endpoint', 'ftp://x'], /--endpoint: 'ftp:' is not supported/],
      [
        ['export', 'otel', '--run', 'r1', '--endpoint', 'http://u:p@127.0.0.1:1'],
        /--endpoint: the URL holds a user name or password/,
      ],
      [
        ['export', 'otel', '--run', 'r1', '--endpoint', 'http://127.0.0.1:1', '--otel-header', 'novalue'],
        /--otel-header: 'novalue' is not NAME=VALUE/,
      ],
      [
        ['export', 'otel', '--run', 'r1', '--endpoint', 'http://127.0.0.1:1', '--otel-header', 'Authorization=a\nb'],
        /line break/,
      ],
      [['export', 'carrier-pigeon'], /unknown format 'carrier-pigeon' \(known: otel, inspect\)/],
      [
        [
          'run',
          '--suite',
          'longda',
          '--root',
          ROOT,
          '--block',
          BLOCK,
          '--agent',
          'llm',
          '--model',
          'm',
          '--otel-endpoint',
          'not a url',
          '--sandbox',
          'off',
        ],
        /--otel-endpoint: 'not a url' is not a URL/,
      ],
      [
        [
          'run',
          '--suite',
          'longda',
          '--root',
          ROOT,
          '--block',
          BLOCK,
          '--agent',
          'llm',
          '--model',
          'm',
          '--otel-header',
          'a=b',
          '--sandbox',
          'off',
        ],
        /go with --otel-endpoint/,
      ],
    ];
    for (const [argv, re] of cases) {
      const t = cliIo({ ...process.env }, dir);
      assert.equal(await main(argv, t.io), 2, argv.join(' '));
      assert.match(t.err.join(''), re);
    }
    await openStore(join(dir, 's.sqlite')).close();
    const t = cliIo({ ...process.env }, dir);
    assert.equal(
      await main(
        ['export', 'otel', '--run', 'nope', '--endpoint', 'http://127.0.0.1:1', '--store', join(dir, 's.sqlite')],
        t.io,
      ),
      2,
    );
    assert.match(t.err.join(''), /no run 'nope'/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
