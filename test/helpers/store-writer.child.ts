/**
 * Child process of `test/unit/core/store/store-locks.test.ts`: the CLI's way of using a run store, many times — open the SQLite file,
 * write (a run and a step), close — `n` cycles (argv: file, n). Prints one line per cycle.
 */
import { openStore } from '../../src/core/store/run-store.ts';

const [file, n] = [process.argv[2]!, Number(process.argv[3] ?? 50)];
for (let i = 0; i < n; i++) {
  const s = openStore(file);
  const id = `child-${process.pid}-${i}`;
  await s.createRun({
    id,
    suite: 's',
    blockId: 'b',
    agent: 'llm',
    model: 'm',
    params: {} as never,
    promptHash: 'h',
    toolSet: 't',
    dataChecksums: {},
    loupeVersion: 't',
    sandbox: 'off',
    workspace: '',
  });
  const now = new Date().toISOString();
  await s.commitStep({
    runId: id,
    index: 0,
    startedAt: now,
    endedAt: now,
    latencyMs: 1,
    toolMs: 0,
    assistant: { role: 'assistant', content: `step of ${id}` },
    toolCalls: [],
    extraMessages: [],
    usage: { input: 1, output: 1, cached: 0 },
    costUsd: null,
    finishReason: 'stop',
  });
  await s.close();
  process.stdout.write(`cycle ${i}\n`);
}
