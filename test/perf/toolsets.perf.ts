/**
 * Tool-set performance (issue 6, gates per issue 23), on the MIMIC-IV demo (patients, admissions, labevents imported
 * here). Gates (verdict lines; a FAIL exits 1):
 * 1. `execute_query` through the killable query process (SqlRunner) ≤ 1.5× the same query in process (baseline):
 *    per query the two alternate (then the touched-field parse), medians over 200 queries.
 * 2. Replay of a recorded BLADE reference run (hurricane) ≤ 1.5× the run itself (baseline): ROUNDS rounds after an
 *    untimed warm-up round, each a fresh run in a fresh workspace then its replay; medians. Every replay must match.
 * Also printed (information, no goal): touched-field extraction with node-sql-parser, median per query and its ratio
 * to executing the query. Then one JSON report (kept for tooling).
 */
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  SqlRunner,
  executeQuery,
  openReadOnlyDatabase,
  readSchema,
  touchedFields,
} from '../../src/core/benchmarks/ddr/sql-tool.ts';
import { BladeReferenceModel } from '../../src/core/benchmarks/blade/reference.ts';
import { createBladeToolSet } from '../../src/core/benchmarks/blade/toolset.ts';
import { replayRun } from '../../src/core/runs/replay-run.ts';
import { promptHash, runAgent } from '../../src/core/agent/loop.ts';
import type { KernelLike, ToolSet } from '../../src/core/agent/types.ts';
import { PythonKernel } from '../../src/core/kernel/index.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import { loadSuite } from '../../src/core/benchmarks/index.ts';
import { sharedData } from '../helpers/shared.ts';
import { mimicSubsetDb } from '../helpers/toolsets.ts';
import { verdict } from './verdict.ts';

const QUERY_GOAL_RATIO = 1.5;
const REPLAY_GOAL_RATIO = 1.5;
const ROUNDS = 3;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const r2 = (x: number) => Math.round(x * 100) / 100;

const dbPath = mimicSubsetDb(['hosp/patients', 'hosp/admissions', 'hosp/labevents']);
const db = openReadOnlyDatabase(dbPath);
const schema = readSchema(db);
const ids = (db.prepare('SELECT subject_id FROM patients ORDER BY subject_id').all() as { subject_id: number }[]).map(
  (r) => r.subject_id,
);
const queries = ids.flatMap((id) => [
  `SELECT a.admission_type, count(*) AS n FROM admissions a JOIN patients p ON p.subject_id = a.subject_id WHERE p.subject_id = ${id} GROUP BY a.admission_type`,
  `SELECT itemid, count(*) AS n, avg(valuenum) AS mean FROM labevents WHERE subject_id = ${id} GROUP BY itemid ORDER BY n DESC LIMIT 20`,
]);

const runner = new SqlRunner(dbPath);
await runner.query('SELECT 1'); // start the process outside the timing
const inProc: number[] = [];
const viaProc: number[] = [];
const parse: number[] = [];
for (const q of queries) {
  let t = performance.now();
  executeQuery(db, q);
  inProc.push(performance.now() - t);
  t = performance.now();
  await runner.query(q);
  viaProc.push(performance.now() - t);
  t = performance.now();
  touchedFields(q, schema);
  parse.push(performance.now() - t);
}
runner.close();

const qIn = median(inProc);
const qVia = median(viaProc);
verdict(
  `execute_query through the query process vs in process, MIMIC-IV demo (median over ${queries.length} queries, alternating per query; overhead ${r2(qVia - qIn)} ms)`,
  `≤ ${QUERY_GOAL_RATIO}× in process`,
  `${qVia.toFixed(2)} ms`,
  `in process ${qIn.toFixed(2)} ms`,
  qVia / qIn,
  qVia / qIn <= QUERY_GOAL_RATIO,
);
console.log(
  `  touched-field extraction (node-sql-parser): median ${median(parse).toFixed(2)} ms per query, ${(median(parse) / qIn).toFixed(2)}× executing it in process (information)`,
);

// Replay of a BLADE reference run: run (baseline) then its replay (subject), alternating; round 0 is an untimed warm-up.
const suite = await loadSuite('blade', sharedData('blade', 'datasets'));
const block = suite.blocks.find((b) => b.id === 'hurricane')!;
const store = openStore(':memory:');
const toolSet = createBladeToolSet() as ToolSet;
const runMsAll: number[] = [];
const replayMsAll: number[] = [];
const rounds: { status: string; replayedCells: number; allMatch: boolean }[] = [];
const workspaces: string[] = [];
try {
  for (let r = 0; r <= ROUNDS; r++) {
    const ws = mkdtempSync(join(tmpdir(), 'loupe-perf-blade-'));
    workspaces.push(ws);
    symlinkSync(block.visible.data[0]!.path, join(ws, 'data.csv'));
    const start = async (): Promise<KernelLike> =>
      PythonKernel.start({
        cwd: ws,
        sandbox: 'bubblewrap',
        readOnlyPaths: [sharedData('blade', 'datasets', 'hurricane')],
        writablePaths: [ws],
      });
    const runId = `r${r}`;
    await store.createRun({
      id: runId,
      suite: 'blade',
      blockId: block.id,
      agent: 'reference',
      model: 'reference',
      params: {},
      promptHash: promptHash(toolSet.systemPrompt, toolSet.buildBlockPrompt(block), []),
      toolSet: toolSet.id,
      dataChecksums: {},
      loupeVersion: 'perf',
      sandbox: 'bubblewrap',
      workspace: ws,
    });
    let t0 = performance.now();
    const res = await runAgent({
      store,
      runId,
      model: new BladeReferenceModel(block),
      toolSet,
      block,
      workspace: ws,
      startKernel: start,
    });
    const runMs = performance.now() - t0;
    t0 = performance.now();
    const rep = await replayRun({ store, runId, startKernel: start });
    const replayMs = performance.now() - t0;
    if (res.status !== 'finished' || !rep.allMatch) {
      throw new Error(`BLADE reference round ${r}: run ${res.status}, replay ${rep.allMatch ? 'matches' : 'differs'}`);
    }
    if (r === 0) continue; // warm-up
    runMsAll.push(runMs);
    replayMsAll.push(replayMs);
    rounds.push({ status: res.status, replayedCells: rep.total, allMatch: rep.allMatch });
  }
} finally {
  store.close();
  for (const ws of workspaces) rmSync(ws, { recursive: true, force: true });
}
const runMs = median(runMsAll);
const replayMs = median(replayMsAll);
verdict(
  `replay of a recorded BLADE reference run (hurricane, ${rounds[0]!.replayedCells} cells, all match) vs the run itself (median of ${ROUNDS} alternating pairs after a warm-up)`,
  `≤ ${REPLAY_GOAL_RATIO}× the run`,
  `${Math.round(replayMs)} ms`,
  `run ${Math.round(runMs)} ms`,
  replayMs / runMs,
  replayMs / runMs <= REPLAY_GOAL_RATIO,
);

console.log(
  JSON.stringify(
    {
      queries: queries.length,
      executeQuery: {
        inProcessMedianMs: r2(qIn),
        queryProcessMedianMs: r2(qVia),
        overheadMedianMs: r2(qVia - qIn),
        ratio: r2(qVia / qIn),
      },
      touchedFields: { medianMs: r2(median(parse)), ratioToInProcessQuery: r2(median(parse) / qIn) },
      bladeReference: {
        status: rounds[0]!.status,
        runMs: Math.round(runMs),
        replayMs: Math.round(replayMs),
        replayedCells: rounds[0]!.replayedCells,
        allMatch: rounds.every((x) => x.allMatch),
        replayToRunRatio: r2(replayMs / runMs),
        rounds: ROUNDS,
        runMsAll: runMsAll.map(Math.round),
        replayMsAll: replayMsAll.map(Math.round),
      },
    },
    null,
    2,
  ),
);
