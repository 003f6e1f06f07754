/** Issue 45: runs exported as Inspect logs validate against Inspect's published schema and re-import unchanged. */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Ajv from 'ajv';
import { annotationStoreOf } from '../../../../../src/core/annotations/index.ts';
import { registerItemSchema } from '../../../../../src/core/annotations/model.ts';
import { main } from '../../../../../src/cli/main.ts';
import { importInspectLog } from '../../../../../src/core/runs/inspect/import.ts';
import { readInspectLog } from '../../../../../src/core/runs/inspect/read-log.ts';
import { writeInspectLog } from '../../../../../src/core/runs/inspect/write-log.ts';
import { openStore } from '../../../../../src/core/store/run-store.ts';
import type { RunStore } from '../../../../../src/core/store/types.ts';
import { sharedData, sharedDir } from '../../../../helpers/shared.ts';

const DIR = sharedData('inspect-logs');
const LOGS = readdirSync(DIR)
  .filter((f) => /\.(eval|json)$/.test(f))
  .sort();
const SCHEMA = JSON.parse(readFileSync(join(sharedDir(), 'spec', 'inspect-log-schema.json'), 'utf8'));

function validator() {
  const ajv = new Ajv({ strict: false, allErrors: true, logger: false });
  return ajv.compile(SCHEMA);
}

/** Reads a written log back whole (small test logs): the .json, or the .eval's header + samples. */
async function logValue(file: string): Promise<Record<string, unknown>> {
  if (file.endsWith('.json')) return JSON.parse(readFileSync(file, 'utf8'));
  let head: Record<string, unknown> = {};
  const samples: unknown[] = [];
  await readInspectLog(
    file,
    async (h) => {
      head = h;
    },
    async (s) => {
      samples.push(s);
    },
  );
  // the reader resolves attachments and drops the (empty) map; the schema requires it
  return { ...head, samples: samples.map((s) => ({ ...(s as object), attachments: {} })) };
}

const stepView = (steps: Awaited<ReturnType<RunStore['getSteps']>>) =>
  steps.map((s) => ({
    a: s.assistant.content,
    r: s.assistant.reasoning ?? null,
    calls: s.toolCalls.map((c) => [
      c.id,
      c.name,
      c.argumentsText && JSON.parse(c.argumentsText),
      c.observation,
      c.isError,
    ]),
    extra: s.extraMessages,
    usage: s.usage,
  }));

describe('Inspect log export', () => {
  let tmp: string;
  let store: RunStore;
  const validate = validator();
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'loupe-inspect-x-'));
    store = openStore(join(tmp, 'a.sqlite'));
  });
  after(async () => {
    await store.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  for (const name of LOGS) {
    for (const ext of ['json', 'eval']) {
      it(`${name} imported, exported as .${ext}: valid EvalLog, re-imports to the same steps and scores`, async () => {
        const r = await importInspectLog(store, join(DIR, name), { runsRoot: tmp });
        const ids = [...r.imported, ...r.skipped];
        const out = join(tmp, `${name}.${ext}`);
        await writeInspectLog(store, ids, out);
        const log = await logValue(out);
        assert.ok(validate(log), JSON.stringify(validate.errors?.slice(0, 5), null, 1));
        const back = openStore(join(tmp, `${name}.${ext}.sqlite`));
        try {
          const r2 = await importInspectLog(back, out, { runsRoot: tmp });
          assert.equal(r2.imported.length, ids.length);
          for (const [i, id] of ids.entries()) {
            assert.deepEqual(stepView(await back.getSteps(r2.imported[i]!)), stepView(await store.getSteps(id)));
            const sc = (x: Awaited<ReturnType<RunStore['scores']['list']>>) =>
              x.map((s) => [s.judgeId, s.summary.value, s.summary.score]).sort();
            assert.deepEqual(sc(await back.scores.list(r2.imported[i]!)), sc(await store.scores.list(id)));
            const [a, b] = [(await store.getRun(id))!, (await back.getRun(r2.imported[i]!))!];
            assert.equal(b.blockId, a.blockId);
            assert.equal(b.status, a.status);
            assert.deepEqual(
              (b.params.inspect as { prompt: unknown }).prompt,
              (a.params.inspect as { prompt: unknown }).prompt,
            );
          }
        } finally {
          await back.close();
        }
      });
    }
  }

  it('a Loupe run (reasoning, malformed arguments, tool error, extra message, failed) exports valid and re-imports', async () => {
    await store.createRun({
      id: 'native-1',
      suite: 'count-rows',
      blockId: 'b/1',
      agent: 'loupe',
      model: 'openai/gpt-x',
      params: { repeat: 1 },
      promptHash: 'h',
      toolSet: 't',
      dataChecksums: {},
      loupeVersion: '0',
      sandbox: 'bwrap',
      workspace: join(tmp, 'ws'),
    });
    const base = {
      runId: 'native-1',
      startedAt: '2026-01-01T00:00:00Z',
      endedAt: '2026-01-01T00:00:01Z',
      latencyMs: 5,
      toolMs: 1,
      costUsd: null,
      finishReason: 'tool_calls',
    };
    await store.commitStep({
      ...base,
      index: 0,
      assistant: {
        role: 'assistant',
        content: 'look',
        reasoning: 'think first',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'python', arguments: '{"code":"1+1"}' } }],
      },
      toolCalls: [
        {
          id: 'c1',
          name: 'python',
          argumentsText: '{"code":"1+1"}',
          observation: 'boom',
          isError: true,
          truncated: false,
          durationMs: 1,
        },
      ],
      extraMessages: [{ role: 'user', content: 'call a tool' }],
      usage: { input: 10, output: 3, cached: 0 },
    });
    await store.commitStep({
      ...base,
      index: 1,
      assistant: {
        role: 'assistant',
        content: 'done',
        tool_calls: [{ id: 'c2', type: 'function', function: { name: 'python', arguments: '{bad' } }],
      },
      toolCalls: [
        {
          id: 'c2',
          name: 'python',
          argumentsText: '{bad',
          observation: 'x',
          isError: false,
          truncated: false,
          durationMs: 1,
        },
      ],
      extraMessages: [],
      usage: { input: 20, output: 4, cached: 0 },
    });
    await store.updateRun('native-1', { status: 'failed', statusReason: 'kernel died' });
    await store.scores.save({
      runId: 'native-1',
      benchmark: 'count-rows',
      judgeId: 'exact',
      options: {},
      summary: { accuracy: 0.5, n: 2, note: 'x', nested: { a: 1 } },
      detail: {},
      pending: 0,
      scoredAt: '2026-01-01T00:00:02Z',
    });
    const out = join(tmp, 'native.eval');
    const io = { out: () => {}, err: () => {}, env: process.env, cwd: tmp };
    assert.equal(
      await main(['export', 'inspect', '--run', 'native-1', '--out', out, '--store', join(tmp, 'a.sqlite')], io),
      0,
    );
    const log = await logValue(out);
    assert.ok(validate(log), JSON.stringify(validate.errors?.slice(0, 5), null, 1));
    const sample = (log.samples as Array<Record<string, unknown>>)[0] as {
      scores: Record<string, { value: unknown }>;
      error: { message: string };
      messages: Array<{
        role: string;
        content: Array<{ reasoning?: string }>;
        metadata: { loupe_kind?: string } | null;
      }>;
    };
    assert.deepEqual(sample.scores.exact!.value, { accuracy: 0.5, n: 2, note: 'x' });
    assert.equal(sample.error.message, 'kernel died');
    assert.equal(sample.messages[0]!.content[0]!.reasoning, 'think first');
    assert.equal(sample.messages.find((m) => m.role === 'user')!.metadata!.loupe_kind, 'extra');
    const back = openStore(join(tmp, 'native.sqlite'));
    try {
      const r2 = await importInspectLog(back, out, { runsRoot: tmp });
      const steps = await back.getSteps(r2.imported[0]!);
      assert.equal(steps.length, 2);
      assert.equal(steps[0]!.assistant.reasoning, 'think first');
      assert.equal(steps[0]!.toolCalls[0]!.isError, true);
      assert.deepEqual(steps[0]!.extraMessages, [{ role: 'user', content: 'call a tool' }]);
      assert.equal((await back.getRun(r2.imported[0]!))!.status, 'failed');
    } finally {
      await back.close();
    }
  });

  it('expert verdicts on an imported run are written as ScoreEdit history (who, when, why) beside the original score', async () => {
    registerItemSchema(
      'test-inspect-verdict',
      { type: 'object', required: ['ok'], properties: { ok: { type: 'boolean' } } },
      (v) => (v as { ok: boolean }).ok,
    );
    const r = await importInspectLog(store, join(DIR, 'log_read_sample.eval'), { runsRoot: tmp });
    const runId = [...r.imported, ...r.skipped][0]!;
    const ann = annotationStoreOf(store);
    for (const [id, criterion] of [
      ['v-match', 'match'],
      ['v-other', null],
    ] as const) {
      await ann.putItem({
        id,
        subject: { kind: 'step', runId, from: 1, to: 1 },
        task: 'test-inspect-verdict',
        input: { id },
        inputHash: null,
        criterion,
        suite: 'inspect:x',
        runId,
        itemRef: id,
        suiteVersion: 'unknown',
      });
    }
    await ann.annotate({ itemId: 'v-match', annotator: 'alice', verdict: { ok: false }, note: 'the answer is wrong' });
    await ann.annotate({ itemId: 'v-other', annotator: 'bob', verdict: { ok: true } });
    const out = join(tmp, 'verdicts.json');
    await writeInspectLog(store, [runId], out);
    const log = await logValue(out);
    assert.ok(validate(log), JSON.stringify(validate.errors?.slice(0, 5), null, 1));
    const scores = (
      log.samples as Array<{
        scores: Record<
          string,
          {
            value: unknown;
            history: Array<{
              value: unknown;
              provenance: { author: string; reason: string | null; timestamp: string };
            }>;
          }
        >;
      }>
    )[0]!.scores;
    assert.equal(scores.match!.value, 'C', 'the original Inspect score is kept');
    assert.equal(scores.match!.history.length, 1);
    assert.equal(scores.match!.history[0]!.provenance.author, 'alice');
    assert.match(scores.match!.history[0]!.provenance.reason!, /the answer is wrong/);
    assert.equal(scores.loupe_expert!.history[0]!.provenance.author, 'bob');
  });
});
