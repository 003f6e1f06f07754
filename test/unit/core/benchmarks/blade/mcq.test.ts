/** BLADE Task 1 through the block runner: one call per MCQ, strict letter parsing, accuracy. */
import { strict as assert } from 'node:assert';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { LlmClient } from '../../../../../src/core/agent/llm.ts';
import { startBlockRun } from '../../../../../src/core/runs/runner.ts';
import { bladeMcqAccuracy, type BladeMcqState } from '../../../../../src/core/benchmarks/blade/mcq.ts';
import { openStore } from '../../../../../src/core/store/run-store.ts';
import { loadSuite } from '../../../../../src/core/benchmarks/index.ts';
import { startScriptedLlm, type ChatRequestBody } from '../../../../helpers/scripted-llm.ts';
import { sharedData } from '../../../../helpers/shared.ts';

test('blade-mcq: every question asked once, answers parsed strictly, accuracy against the hidden key', async () => {
  const suite = await loadSuite('blade-mcq', sharedData('blade', 'datasets'));
  const block = suite.blocks.find((b) => b.id === 'hurricane')!;
  assert.equal(block.items.length, 5);
  const key = new Map(block.hidden.mcqs!.mcqs.map((m) => [m.id, m.correctLabel]));
  const prompts: string[] = [];
  // Replies: right answer as JSON, right answer as a bare letter, a wrong letter, two letters (unparsed), a letter outside the options.
  const srv = await startScriptedLlm({
    scriptFor: () => [
      (req: ChatRequestBody) => {
        const user = String(req.messages[1]!.content);
        prompts.push(user);
        const i = prompts.length - 1;
        const item = block.items[i]!; // asked in block order
        assert.ok(item.type === 'blade-mcq' && user.includes(item.options[0]!.text));
        const right = key.get(item.id)!;
        const wrong = item.type === 'blade-mcq' ? item.options.find((o) => o.label !== right)!.label : 'A';
        return { content: [`{"answer": "${right}", "rationale": "x"}`, `${right}\nbecause`, wrong, 'A or B', 'Z'][i]! };
      },
    ],
  });
  const store = openStore(':memory:');
  try {
    const res = await startBlockRun({
      store,
      suite,
      block,
      agent: 'llm',
      modelClient: new LlmClient({ baseUrl: srv.baseUrl, model: 'scripted' }),
      runsDir: mkdtempSync(join(tmpdir(), 'loupe-mcq-')),
      kernel: { sandbox: 'off' },
    });
    assert.equal(res.status, 'finished', res.reason);
    assert.equal(res.steps, 5);
    assert.equal(prompts.length, 5);
    assert.match(prompts[0]!, /The valid answers are: A, B(, C)?(, D)?\.\nAnswer:$/);
    const st = (await store.getExtraState(res.runId)).bladeMcq as BladeMcqState;
    assert.deepEqual(
      st.answers.map((a) => a.answer === null),
      [false, false, false, true, true],
    );
    assert.deepEqual(bladeMcqAccuracy(block, st.answers), { correct: 2, total: 5, accuracy: 0.4 });
    assert.equal((await store.getRun(res.runId))!.toolSet, 'blade-mcq');
  } finally {
    store.close();
    await srv.close();
  }
});
