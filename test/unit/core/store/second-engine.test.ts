/**
 * A second run-store engine needs no change in callers (issue 12): the test-only in-memory engine
 * (test/helpers/memory-run-store.ts, built from the `RunStore` interface alone) takes a scripted run of the count-rows
 * benchmark through the real runner, is scored by the core scorer, and feeds the Results view — with the same scores
 * as the SQLite store.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import '../../../fixtures/benchmarks/register.ts';
import { loadSuite } from '../../../../src/core/benchmarks/index.ts';
import { ExactOnlyJudge, MemoryJudgementStore } from '../../../../src/core/eval/judges/index.ts';
import { startBlockRun } from '../../../../src/core/runs/runner.ts';
import { saveRunScore, scoreStoredRun } from '../../../../src/core/runs/score-stored-run.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';
import type { RunStore } from '../../../../src/core/store/types.ts';
import { buildResultsState } from '../../../../src/app/results/results-data.ts';
import { MemoryRunStore } from '../../../helpers/memory-run-store.ts';
import { startPg } from '../../../helpers/pg.ts';
import { openStoreAt } from '../../../../src/core/store/open.ts';
import { call, startScriptedLlm } from '../../../helpers/scripted-llm.ts';
import { repoRoot } from '../../../helpers/shared.ts';

const ROOT = join(repoRoot, 'test', 'fixtures', 'benchmarks', 'count-rows');

test(
  'the in-memory and PostgreSQL engines run, score and show a benchmark through the same callers as SQLite, with the same scores',
  { timeout: 90_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-engine-'));
    const srv = await startScriptedLlm({
      scriptFor: (first) => [
        { content: 'Counting.', toolCalls: [call('submit_count', { count: first.includes('seven.csv') ? 7 : 2 })] },
      ],
    });
    const suite = await loadSuite('count-rows', ROOT);
    const outcome = async (store: RunStore, name: string) => {
      const scores: Array<[string, number | null]> = [];
      for (const block of suite.blocks) {
        const r = await startBlockRun({
          store,
          suite,
          block,
          agent: 'llm',
          llm: { baseUrl: srv.baseUrl, model: 'scripted', apiKey: 'k' },
          runsDir: join(dir, name),
          kernel: { sandbox: 'off' },
        });
        assert.equal(r.status, 'finished', r.reason);
        const s = await scoreStoredRun(store, r.runId, { judge: new ExactOnlyJudge(new MemoryJudgementStore()) });
        assert.equal(s.error, undefined);
        await saveRunScore(store, s);
        scores.push([block.id, s.summary.correct ?? null]);
      }
      const results = await buildResultsState(store, name);
      const table = results.tables.find((t) => t.suite === 'count-rows');
      return {
        scores,
        table: table?.rows.map((r) => [r.block, r.cells.correct?.value]),
        steps: (await store.listRuns()).map((r) => r.steps),
        events: (await store.getEventsOf((await store.listRuns()).map((r) => r.id))).size,
      };
    };
    try {
      const memory = new MemoryRunStore();
      const sqlite = openStore(join(dir, 'runs.sqlite'));
      const a = await outcome(memory, 'memory');
      const b = await outcome(sqlite, 'sqlite');
      await sqlite.close();
      assert.deepEqual(a.scores, [
        ['seven', 1],
        ['small', 0],
      ]);
      assert.deepEqual(a, b, 'same runs, scores and Results table on both engines');
      assert.equal(memory.engine, 'memory');
      const srv = await startPg({ fsync: 'off' });
      try {
        const pg = await openStoreAt(await srv.createDatabase('engine'));
        const c = await outcome(pg, 'postgres');
        await pg.close();
        assert.equal(pg.engine, 'postgres');
        assert.deepEqual(c, b, 'same runs, scores and Results table on PostgreSQL');
      } finally {
        srv.stop();
      }
    } finally {
      await srv.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
