/**
 * Tool-set performance (issue 6), on the MIMIC-IV demo (patients, admissions, labevents imported here):
 * 1. `execute_query` through the killable query process (SqlRunner) vs the same query in process
 *    (baseline, same run): per-query overhead of the process boundary, median over 200 queries.
 * 2. Touched-field extraction with node-sql-parser: median per query, ratio to executing the query.
 * 3. Replay of a recorded BLADE reference run (hurricane): wall time vs the original run's tool time.
 * Prints one JSON report. No goals were set in the issue; the numbers are for the report.
 */
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqlRunner, executeQuery, openReadOnlyDatabase, readSchema, touchedFields } from '../../src/core/benchmarks/ddr/sql-tool.ts';
import { BladeReferenceModel } from '../../src/core/benchmarks/blade/reference.ts';
import { createBladeToolSet } from '../../src/core/benchmarks/blade/toolset.ts';
import { replayRun } from '../../src/core/runs/replay-run.ts';
import { promptHash, runAgent } from '../../src/core/agent/loop.ts';
import type { KernelLike, ToolSet } from '../../src/core/agent/types.ts';
import { PythonKernel } from '../../src/core/kernel/index.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import { loadSuite } from '../../src/core/benchmarks/index.ts';
import { sharedData } from '../helpers/shared.ts';
import { mimicSubsetDb } from '../unit/core/agent/toolsets/fixtures.ts';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const r2 = (x: number) => Math.round(x * 100) / 100;

const dbPath = mimicSubsetDb(['hosp/patients', 'hosp/admissions', 'hosp/labevents']);
const db = openReadOnlyDatabase(dbPath);
const schema = readSchema(db);
const ids = (db.prepare('SELECT subject_id FROM patients ORDER BY subject_id').all() as { subject_id: number }[]).map((r) => r.subject_id);
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

// Replay of a BLADE reference run.
const suite = await loadSuite('blade', sharedData('blade', 'datasets'));
const block = suite.blocks.find((b) => b.id === 'hurricane')!;
const ws = mkdtempSync(join(tmpdir(), 'loupe-perf-blade-'));
symlinkSync(block.visible.data[0]!.path, join(ws, 'data.csv'));
const start = async (): Promise<KernelLike> => PythonKernel.start({ cwd: ws, sandbox: 'bubblewrap', readOnlyPaths: [sharedData('blade', 'datasets', 'hurricane')], writablePaths: [ws] });
const store = openStore(':memory:');
const toolSet = createBladeToolSet() as ToolSet;
await store.createRun({ id: 'r', suite: 'blade', blockId: block.id, agent: 'reference', model: 'reference', params: {}, promptHash: promptHash(toolSet.systemPrompt, toolSet.buildBlockPrompt(block), []), toolSet: toolSet.id, dataChecksums: {}, loupeVersion: 'perf', sandbox: 'bubblewrap', workspace: ws });
let t0 = performance.now();
const res = await runAgent({ store, runId: 'r', model: new BladeReferenceModel(block), toolSet, block, workspace: ws, startKernel: start });
const runMs = performance.now() - t0;
t0 = performance.now();
const rep = await replayRun({ store, runId: 'r', startKernel: start });
const replayMs = performance.now() - t0;
store.close();

console.log(JSON.stringify({
  queries: queries.length,
  executeQuery: { inProcessMedianMs: r2(median(inProc)), queryProcessMedianMs: r2(median(viaProc)), overheadMedianMs: r2(median(viaProc) - median(inProc)), ratio: r2(median(viaProc) / median(inProc)) },
  touchedFields: { medianMs: r2(median(parse)), ratioToInProcessQuery: r2(median(parse) / median(inProc)) },
  bladeReference: { status: res.status, runMs: Math.round(runMs), replayMs: Math.round(replayMs), replayedCells: rep.total, allMatch: rep.allMatch, replayToRunRatio: r2(replayMs / runMs) },
}, null, 2));
