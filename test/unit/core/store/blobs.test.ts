import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BLOB_MIN_CHARS, openStore } from '../../../../src/core/store/run-store.ts';

test('store: tool arguments and observations over 1 MiB are kept whole in content-addressed files of the run folder, not in the row', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loupe-blobs-'));
  try {
    const ws = join(dir, 'runs', 'r1', 'workspace');
    mkdirSync(ws, { recursive: true });
    const file = join(dir, 'runs.sqlite');
    const s = openStore(file);
    await s.createRun({
      id: 'r1',
      suite: 'longda',
      blockId: 'b',
      agent: 'llm',
      model: 'm',
      params: {},
      promptHash: 'h',
      toolSet: 't',
      dataChecksums: {},
      loupeVersion: 'test',
      sandbox: 'bubblewrap',
      workspace: ws,
    });
    const code = `x = '${'A'.repeat(10 * 1024 * 1024)}'`;
    const obs = 'B'.repeat(3 * 1024 * 1024);
    const args = JSON.stringify({ code });
    for (const idx of [0, 1]) {
      await s.commitStep({
        runId: 'r1',
        index: idx,
        startedAt: new Date().toISOString(),
        endedAt: new Date().toISOString(),
        latencyMs: 1,
        toolMs: 1,
        assistant: {
          role: 'assistant',
          content: 'run it',
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'python', arguments: args } }],
        },
        toolCalls: [
          {
            id: 'c',
            name: 'python',
            argumentsText: args,
            observation: idx ? 'small' : obs,
            isError: false,
            truncated: false,
            durationMs: 1,
          },
        ],
        extraMessages: [],
        usage: { input: 1, output: 1, cached: 0 },
        costUsd: null,
        finishReason: 'tool_calls',
      });
    }
    const steps = await s.getSteps('r1');
    assert.equal(steps[0]!.toolCalls[0]!.argumentsText, args);
    assert.equal(steps[0]!.assistant.tool_calls![0]!.function.arguments, args);
    assert.equal(steps[0]!.toolCalls[0]!.observation, obs);
    assert.equal(steps[1]!.toolCalls[0]!.observation, 'small');
    assert.equal((await s.getStep('r1', 1))!.toolCalls[0]!.argumentsText, args);
    s.close();
    const blobs = readdirSync(join(dir, 'runs', 'r1', 'blobs'));
    assert.equal(blobs.length, 2, 'one file per distinct text (the 10 MB arguments stored once for four uses)');
    assert.ok(statSync(file).size < 2 * 1024 * 1024, `store file ${statSync(file).size} bytes`);
    assert.ok(BLOB_MIN_CHARS === 1 << 20);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
