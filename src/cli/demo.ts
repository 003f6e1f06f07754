import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadSuite, type LongdaQuery } from '../core/benchmarks/index.ts';
import { runsDirOf, STORE_OPTIONS, storeLocation } from './store-arg.ts';
import { describeStoreLocation } from '../core/store/location.ts';
import { openStoreAt } from '../core/store/open.ts';
import { startBlockRun } from '../core/runs/runner.ts';
import { compareLongdaValues } from '../core/benchmarks/longda/eval.ts';
import type { LlmConfig } from '../core/agent/llm.ts';
import { streamLogger } from '../core/util/log.ts';
import { UsageError } from './types.ts';
import { SANDBOX_OPTIONS } from './option-groups.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';

const DEFAULT_BLOCK = 'NHANES_NCHS_Data_Brief_No._508';

const DECL = declareCommand({
  synopsis: 'demo',
  groups: [
    optionGroup('demo', {
      root: {
        type: 'string',
        value: 'DIR',
        help: 'the LongDA benchmark folder (default $LOUPE_SHARED/data/longda/benchmark; LOUPE_SHARED default ../shared)',
      },
      block: { type: 'string', value: 'ID', help: `the block (default ${DEFAULT_BLOCK})` },
    }),
    STORE_OPTIONS,
    SANDBOX_OPTIONS,
  ],
  notes:
    '  With LOUPE_MODEL (+ LOUPE_BASE_URL, key in OPENAI_API_KEY) set, the llm agent runs instead of the reference agent.',
});

export const demoCommand = defineCommand({
  name: 'demo',
  summary:
    'main job: run a real LongDA NHANES block end to end (reference agent, or the LLM agent when LOUPE_MODEL is set) and print answers vs ground truth',
  declarations: [DECL],
  async run(argv, io) {
    const { values: v } = parseCommand(DECL, argv);
    const shared = resolve(io.cwd, io.env.LOUPE_SHARED ?? join('..', 'shared'));
    const root = resolve(io.cwd, v.root ?? join(shared, 'data', 'longda', 'benchmark'));
    if (!existsSync(root)) throw new UsageError(`LongDA data not found at ${root}: set LOUPE_SHARED or pass --root`);
    const sandbox = (v.sandbox ?? io.env.LOUPE_SANDBOX ?? 'bubblewrap') as 'bubblewrap' | 'off';
    const suite = await loadSuite('longda', root);
    const blockId = v.block ?? DEFAULT_BLOCK;
    const block = suite.blocks.find((b) => b.id === blockId);
    if (!block) throw new UsageError(`block ${blockId} not found under ${root}`);
    const model = io.env.LOUPE_MODEL;
    const llm: LlmConfig | undefined = model
      ? {
          model,
          baseUrl: io.env.LOUPE_BASE_URL ?? io.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
          apiKey: io.env.OPENAI_API_KEY ?? '',
          temperature: 0,
        }
      : undefined;
    const loc = storeLocation(io, v.store);
    const storeFile = describeStoreLocation(loc);
    const store = await openStoreAt(loc, { env: io.env });
    try {
      io.err(
        `loupe demo: ${llm ? `llm agent (${llm.model})` : 'reference agent'} on ${block.id} (${block.items.length} queries), sandbox ${sandbox}\n`,
      );
      let runId = '';
      const res = await startBlockRun({
        store,
        suite,
        block,
        agent: llm ? 'llm' : 'reference',
        llm,
        runsDir: runsDirOf(io, loc),
        kernel: { sandbox, python: v.python ?? io.env.LOUPE_PYTHON },
        log: streamLogger({ write: (s: string) => io.err(s) }, 'warn'),
        onRunCreated: (id) => {
          runId = id;
        },
        onEvent: (e) => {
          if (e.type === 'tool-call') io.err(`  step ${e.step + 1}: ${e.call.name}\n`);
          // an unreachable or slow model shows its retries as they happen (as \`loupe run\` does)
          else if (e.type === 'retry') {
            io.err(`  model retry ${e.attempt} in ${Math.round(e.delayMs)} ms: ${e.reason.slice(0, 160)}\n`);
          }
        },
      });
      const answers = new Map((await store.getAnswers(runId)).map((a) => [a.queryId, a.answer]));
      const rows: string[][] = [['query', 'answer', 'ground truth', 'match']];
      let matched = 0;
      const qs = block.items as LongdaQuery[]; // a block of the LongDA suite loaded above: its items are queries
      for (const q of qs) {
        const a = answers.get(q.longdaId);
        const cmp = a === undefined ? undefined : compareLongdaValues(a, q.groundTruth);
        matched += cmp?.matchPartial ?? 0;
        const f = (x: unknown) =>
          x === undefined || x === null ? '—' : Array.isArray(x) ? `[${x.join(', ')}]` : String(x);
        rows.push([
          q.id,
          f(a),
          f(q.groundTruth),
          cmp
            ? cmp.matchStrict
              ? 'yes'
              : cmp.matchPartial > 0
                ? `partial ${cmp.matchPartial.toFixed(2)}`
                : 'no'
            : 'unanswered',
        ]);
      }
      const w = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
      for (const r of rows) io.out(r.map((cell, c) => cell.padEnd(w[c]!)).join('  ') + '\n');
      io.out(
        `\nrun ${runId}: ${res.status} (${res.reason}); ${answers.size}/${qs.length} answered, match ${((100 * matched) / qs.length).toFixed(1)}%  (store: ${storeFile})\n`,
      );
      return res.status === 'finished' ? 0 : 1;
    } finally {
      await store.close();
    }
  },
});
