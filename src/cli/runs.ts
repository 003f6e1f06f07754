import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadSuite, parseSuiteKind, type Block } from '../core/benchmarks/index.ts';
import { isRunActive } from '../core/store/run-store.ts';
import { openExistingStore, storeFile as storeFileOf } from './store-arg.ts';
import { exportLongdaResults, exportTrajectoryJsonl } from '../core/store/export.ts';
import { UsageError, type CliCommand } from './types.ts';

const USAGE = `loupe runs [--store FILE] [--suite S] [--block ID] [--status S] [--limit N] [--json]
          [--trajectory DIR] [--results DIR] [--run RUN,RUN]
  Lists recorded runs (newest first). A run left 'running' by a killed process shows as 'running (stale)':
  continue it with loupe run --resume RUN.
  --trajectory DIR writes <runId>.jsonl for the selected runs; --results DIR writes the LongDA results folder
  (answers_progress.csv, run_summary.json, ...) for the selected LongDA runs (one run per block).`;

export const runsCommand: CliCommand = {
  name: 'runs',
  summary: 'list recorded runs (stale ones marked), export trajectories (JSONL) or the LongDA results folder',
  usage: USAGE,
  async run(argv, io) {
    const { values: v } = parseArgs({
      args: argv,
      options: {
        store: { type: 'string' }, suite: { type: 'string' }, block: { type: 'string' }, status: { type: 'string' }, limit: { type: 'string' },
        json: { type: 'boolean' }, trajectory: { type: 'string' }, results: { type: 'string' }, run: { type: 'string' },
      },
    });
    const limit = v.limit ? Number(v.limit) : undefined;
    if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) throw new UsageError(`--limit must be a positive integer, got '${v.limit}'`);
    const storeFile = storeFileOf(io, v.store);
    const store = openExistingStore(io, v.store);
    try {
      let runs = store.listRuns({ suite: v.suite, blockId: v.block, status: v.status as never, limit });
      if (v.run) {
        const ids = v.run.split(',').map((s) => s.trim()).filter(Boolean);
        for (const id of ids) if (!store.getRun(id)) throw new UsageError(`--run: no run '${id}' in ${storeFile}`);
        runs = ids.map((id) => store.getRun(id)!);
      }
      if (v.trajectory) {
        const dir = resolve(io.cwd, v.trajectory);
        mkdirSync(dir, { recursive: true });
        for (const r of runs) writeFileSync(join(dir, `${r.id}.jsonl`), exportTrajectoryJsonl(store, r.id));
        io.err(`trajectories: ${runs.length} file(s) in ${dir}\n`);
      }
      if (v.results) {
        const longda = runs.filter((r) => r.suite === 'longda');
        const byRoot = new Map<string, Block[]>();
        const pairs: { runId: string; block: Block }[] = [];
        for (const r of longda) {
          const root = r.params.suiteRoot as string | undefined;
          if (!root) throw new UsageError(`run ${r.id} does not record its suite root`);
          if (!byRoot.has(root)) byRoot.set(root, (await loadSuite(parseSuiteKind(r.suite), root)).blocks);
          const block = byRoot.get(root)!.find((b) => b.id === r.blockId);
          if (!block) throw new UsageError(`run ${r.id}: block ${r.blockId} not found under ${root}`);
          pairs.push({ runId: r.id, block });
        }
        const s = exportLongdaResults(store, pairs, resolve(io.cwd, v.results));
        io.err(`results: ${s.dir} (${s.blocks} blocks, ${s.answered}/${s.queries} answered)\n`);
      }
      if (v.json) {
        for (const r of runs) io.out(JSON.stringify({ ...r, active: isRunActive(r), answers: store.getAnswers(r.id).length }) + '\n');
      } else if (!v.trajectory && !v.results) {
        if (!runs.length) io.out(`no runs in ${storeFile}\n`);
        for (const r of runs) {
          const st = r.status === 'running' && !isRunActive(r) ? 'running (stale)' : r.status;
          io.out(`${r.id}  ${r.suite}  ${r.blockId}  ${r.agent}${r.model && r.agent === 'llm' ? `:${r.model}` : ''}  ${st}  steps=${r.steps}  answers=${store.getAnswers(r.id).length}  ${r.createdAt}\n`);
        }
      }
      return 0;
    } finally {
      store.close();
    }
  },
};
