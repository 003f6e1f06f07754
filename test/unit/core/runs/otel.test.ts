/**
 * `src/core/runs/otel.ts` (issue 45): endpoint and header parsing, text bounds, the provider and host taken from a
 * model URL (never its credentials or query), and a 2,100-step stored run exported whole (more spans than the
 * processor's queue holds at once) to an OTLP receiver that decodes with the OpenTelemetry proto definitions; a
 * failed run's root span carries an error status and the run's params are not sent.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  boundedText,
  exportRunToOtel,
  parseOtelEndpoint,
  parseOtelHeaders,
  providerOf,
} from '../../../../src/core/runs/otel.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';
import type { StepRecord } from '../../../../src/core/store/records.ts';
import { startOtlpReceiver } from '../../../helpers/otlp-receiver.ts';

test('parseOtelEndpoint: a base gets /v1/traces; non-HTTP, malformed and credential-bearing URLs are refused naming the subject', () => {
  assert.equal(parseOtelEndpoint('http://127.0.0.1:4318', 'E'), 'http://127.0.0.1:4318/v1/traces');
  assert.equal(
    parseOtelEndpoint('https://cloud.langfuse.com/api/public/otel/', 'E'),
    'https://cloud.langfuse.com/api/public/otel/v1/traces',
  );
  assert.equal(parseOtelEndpoint('http://h:6006/v1/traces', 'E'), 'http://h:6006/v1/traces');
  assert.throws(
    () => parseOtelEndpoint('localhost:4318', 'the setting loupe.otel.endpoint'),
    /^LoupeInputError: the setting loupe.otel.endpoint: 'localhost:' is not supported/,
  );
  assert.throws(() => parseOtelEndpoint('', 'E'), /E: '' is not a URL/);
  assert.throws(
    () => parseOtelEndpoint('https://pk:sk@cloud.langfuse.com/api/public/otel', 'E'),
    /E: the URL holds a user name or password/,
  );
});

test('parseOtelHeaders: OTEL_EXPORTER_OTLP_HEADERS (percent-encoded) and NAME=VALUE pairs, pairs win; bad ones named', () => {
  assert.deepEqual(parseOtelHeaders(['x-b=2=3'], 'Authorization=Basic%20cGs6c2s=,x-b=1', 'F'), {
    Authorization: 'Basic cGs6c2s=',
    'x-b': '2=3',
  });
  assert.throws(
    () => parseOtelHeaders(['bad header=1'], undefined, '--otel-header'),
    /--otel-header: 'bad header' is not a valid header name/,
  );
  assert.throws(
    () => parseOtelHeaders([], 'a=%E0%A4%A', 'F'),
    /OTEL_EXPORTER_OTLP_HEADERS: the value of header a is not percent-encoded/,
  );
  assert.throws(
    () => parseOtelHeaders(['a=x\r\nInjected: 1'], undefined, 'F'),
    /F: the value of header a holds a line break/,
  );
});

test('boundedText and providerOf', () => {
  assert.equal(boundedText('abc', 3), 'abc');
  assert.equal(boundedText('abcdef', 3), 'abc…[truncated 3 chars]');
  assert.deepEqual(providerOf('https://api.openai.com/v1'), { name: 'openai', host: 'api.openai.com', port: 443 });
  assert.deepEqual(providerOf('https://user:pw@llm.internal:8443/v1?key=SECRET'), {
    name: 'llm.internal',
    host: 'llm.internal',
    port: 8443,
  });
  assert.equal(providerOf(undefined).name, 'openai');
});

test(
  'exportRunToOtel: a 2,100-step run arrives whole; a failed run is an error span; params beyond the model are not sent',
  { timeout: 120_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-otel-core-'));
    const rx = await startOtlpReceiver();
    const s = openStore(join(dir, 's.sqlite'));
    try {
      await s.createRun({
        id: 'long',
        suite: 'longda',
        blockId: 'b',
        agent: 'llm',
        model: 'm1',
        params: { baseUrl: 'https://u:p@llm.internal/v1?key=PARAMSECRET', temperature: 0.2, suiteRoot: '/secret/root' },
        promptHash: 'h',
        toolSet: 'longda',
        dataChecksums: {},
        loupeVersion: 't',
        sandbox: 'off',
        workspace: dir,
      });
      const t0 = Date.parse('2026-01-01T00:00:00Z');
      const N = 2100;
      for (let i = 0; i < N; i++) {
        const step: StepRecord = {
          runId: 'long',
          index: i,
          startedAt: new Date(t0 + i * 1000).toISOString(),
          endedAt: new Date(t0 + i * 1000 + 900).toISOString(),
          latencyMs: 500,
          toolMs: 300,
          assistant: {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'python', arguments: '{"code":"1"}' } }],
          },
          toolCalls: [
            {
              id: `c${i}`,
              name: 'python',
              argumentsText: '{"code":"1"}',
              observation: '1',
              isError: false,
              truncated: false,
              durationMs: 300,
            },
          ],
          extraMessages: [],
          usage: { input: 10, output: 2, cached: 0 },
          costUsd: null,
          finishReason: 'tool_calls',
        };
        await s.commitStep(step);
      }
      await s.updateRun('long', {
        status: 'failed',
        statusReason: 'model call failed: boom',
        endedAt: new Date(t0 + N * 1000).toISOString(),
      });
      const rep = await exportRunToOtel(s, 'long', { endpoint: parseOtelEndpoint(rx.url, 'E') });
      assert.equal(rep.error, undefined);
      assert.equal(rep.spans, 1 + 2 * N);
      assert.equal(rx.spans.length, 1 + 2 * N, 'every span arrives (none dropped by the queue)');
      const root = rx.spans.find((x) => x.parentSpanId === '')!;
      assert.equal(root.status.code, 2);
      assert.match(root.status.message, /model call failed: boom/);
      assert.equal(root.attributes['error.type'], 'failed');
      assert.equal(root.startNs, BigInt(t0) * 1_000_000n);
      assert.equal(root.endNs, BigInt(t0 + N * 1000) * 1_000_000n);
      assert.equal(root.attributes['gen_ai.provider.name'], 'llm.internal');
      assert.equal(root.attributes['gen_ai.request.temperature'], 0.2);
      const body = Buffer.concat(rx.requests.map((r) => r.body));
      for (const secret of ['PARAMSECRET', '/secret/root', 'u:p@']) {
        assert.ok(!body.includes(secret), `${secret} is not sent`);
      }
      const last = rx.spans.find((x) => x.attributes['gen_ai.tool.call.id'] === `c${N - 1}`)!;
      assert.equal(last.startNs, BigInt(t0 + (N - 1) * 1000 + 500) * 1_000_000n);
      assert.equal(last.endNs, BigInt(t0 + (N - 1) * 1000 + 800) * 1_000_000n);
    } finally {
      await s.close();
      await rx.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
