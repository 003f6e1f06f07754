/**
 * `RunStore.getToolErrorCountsOf` (issue 43, the matrix's "tool errors"): failed tool calls per run counted in one
 * read, on both engines, equal to counting the calls of `getSteps` (a run with none is absent; a run id unknown to
 * the store too).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { StepRecord } from '../../../../src/core/store/records.ts';
import { forEachEngine } from '../../../helpers/store-engines.ts';

forEachEngine((e) => {
  it('counts the failed tool calls of several runs in one read, as getSteps does', async () => {
    const s = await e.open(await e.fresh());
    try {
      const errors: Record<string, boolean[][]> = {
        r1: [[false, true], [true], []],
        r2: [[false], [false, false]],
        r3: [],
      };
      for (const [id, steps] of Object.entries(errors)) {
        await s.createRun({
          id,
          suite: 'longda',
          blockId: 'b',
          agent: 'llm',
          model: 'm',
          params: {},
          promptHash: 'h',
          toolSet: 't',
          dataChecksums: {},
          loupeVersion: 't',
          sandbox: 'off',
          workspace: '/tmp',
        });
        for (const [index, calls] of steps.entries()) {
          const step: StepRecord = {
            runId: id,
            index,
            startedAt: '2026-01-01T00:00:00Z',
            endedAt: '2026-01-01T00:00:01Z',
            latencyMs: 1,
            toolMs: 1,
            usage: null,
            costUsd: null,
            finishReason: null,
            extraMessages: [],
            assistant: { role: 'assistant', content: 'x' } as StepRecord['assistant'],
            toolCalls: calls.map((isError, k) => ({
              id: `c${k}`,
              name: 'python',
              argumentsText: '{}',
              observation: isError ? 'Traceback\u0000' : 'ok',
              isError,
              truncated: false,
              durationMs: 1,
            })),
          };
          await s.commitStep(step);
        }
      }
      const got = await s.getToolErrorCountsOf(['r1', 'r2', 'r3', 'nope']);
      assert.deepEqual([...got.entries()].sort(), [['r1', 2]]);
      for (const id of ['r1', 'r2', 'r3']) {
        assert.equal(
          got.get(id) ?? 0,
          (await s.getSteps(id)).flatMap((x) => x.toolCalls).filter((c) => c.isError).length,
        );
      }
      assert.equal((await s.getToolErrorCountsOf([])).size, 0);
    } finally {
      await s.close();
    }
  });
});
