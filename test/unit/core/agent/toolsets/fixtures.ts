/**
 * Test helpers for the tool-set tests: a small SQLite database imported from a few real MIMIC-IV demo
 * tables (only the tables a test needs, to stay fast), and a minimal ToolContext without a loop.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import { nullLogger } from '../../../../../src/core/util/log.ts';
import type { KernelExecuteResult, KernelLike, RunState, ToolContext } from '../../../../../src/core/agent/types.ts';
import { sharedData } from '../../../../helpers/shared.ts';

/**
 * Imports `tables` (e.g. `hosp/patients`) from the MIMIC-IV demo into a fresh SQLite file.
 * Table names are the file names (`patients`); numbers stay numbers, empty cells become NULL.
 * @returns the database path.
 */
export function mimicSubsetDb(tables: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'loupe-ddr-test-'));
  const path = join(dir, 'mimic-subset.sqlite');
  const db = new Database(path);
  for (const t of tables) {
    const name = t.split('/').pop()!;
    const text = gunzipSync(readFileSync(sharedData('mimic-iv-demo', `${t}.csv.gz`))).toString('utf8');
    const rows = parse(text, { columns: false, skip_empty_lines: true }) as string[][];
    const header = rows.shift()!;
    const isNum = header.map((_, j) => rows.every((r) => r[j] === '' || /^-?\d+(\.\d+)?$/.test(r[j]!)));
    db.exec(`CREATE TABLE "${name}" (${header.map((h, j) => `"${h}" ${isNum[j] ? 'NUMERIC' : 'TEXT'}`).join(', ')})`);
    const ins = db.prepare(`INSERT INTO "${name}" VALUES (${header.map(() => '?').join(', ')})`);
    db.transaction(() => {
      for (const r of rows) ins.run(r.map((v, j) => (v === '' ? null : isNum[j] ? Number(v) : v)));
    })();
  }
  db.close();
  return path;
}

/** A fresh RunState. */
export function freshState(): RunState {
  return { answers: new Map(), notes: [], savedCode: null, extra: {} };
}

/**
 * A ToolContext for calling tools directly. `kernel` may be a real PythonKernel; `execute` records
 * the code of every cell in `cells`.
 */
export function toolContext(block: unknown, workspace: string, kernel?: KernelLike, state: RunState = freshState()): ToolContext & { cells: string[] } {
  const cells: string[] = [];
  let step = 0;
  return {
    runId: 'test-run',
    get stepIndex() {
      return step;
    },
    set stepIndex(v: number) {
      step = v;
    },
    workspace,
    block,
    taskPrompt: '',
    state,
    cells,
    kernel: async () => {
      if (!kernel) throw new Error('no kernel in this test');
      return kernel;
    },
    execute: async (code: string): Promise<KernelExecuteResult> => {
      if (!kernel) throw new Error('no kernel in this test');
      cells.push(code);
      return kernel.execute(code);
    },
    signal: new AbortController().signal,
    log: nullLogger,
  };
}
