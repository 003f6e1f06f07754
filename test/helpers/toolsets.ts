/**
 * Test helpers for the tool-set tests: a small SQLite database imported from a few real MIMIC-IV demo
 * tables (only the tables a test needs, to stay fast), and a minimal ToolContext without a loop.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import { nullLogger } from '../../src/core/util/log.ts';
import type { KernelExecuteResult, KernelLike, RunState, ToolContext, ToolSet } from '../../src/core/agent/types.ts';
import type { Block } from '../../src/core/suites/types.ts';
import { PythonKernel } from '../../src/core/kernel/index.ts';
import { promptHash, runAgent, type ModelClient } from '../../src/core/agent/loop.ts';
import type { RunStore } from '../../src/core/store/run-store.ts';
import { sharedData } from './shared.ts';

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
  return { extra: {}, benchmark: {} };
}

/**
 * A ToolContext for calling tools directly. `kernel` may be a real PythonKernel; `execute` records
 * the code of every cell in `cells`.
 */
export function toolContext(
  block: unknown,
  workspace: string,
  kernel?: KernelLike,
  state: RunState = freshState(),
): ToolContext & { cells: string[] } {
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

/**
 * A task workspace for a block: a temp folder with each visible file (and the DDR database) linked at
 * its workspace-relative path. Returns the folder and the real folders the sandbox must mount read-only.
 */
export function linkWorkspace(block: Block): { ws: string; readOnly: string[] } {
  const ws = mkdtempSync(join(tmpdir(), `loupe-ws-${block.id}-`));
  const ro = new Set<string>();
  const files = [
    ...block.visible.data,
    ...block.visible.docs,
    ...(block.visible.database ? [block.visible.database] : []),
  ];
  for (const f of files) {
    const target = join(ws, f.rel);
    mkdirSync(dirname(target), { recursive: true });
    // Link to the real path, which is what the sandbox mounts (the data folder may be reached through a symlink).
    const real = realpathSync(f.path);
    if (!existsSync(target)) symlinkSync(real, target);
    ro.add(dirname(real));
  }
  return { ws, readOnly: [...ro] };
}

/** Starts a sandboxed kernel for a workspace made by {@link linkWorkspace}. */
export function kernelFactory(w: { ws: string; readOnly: string[] }): () => Promise<KernelLike> {
  return async () =>
    (await PythonKernel.start({
      cwd: w.ws,
      sandbox: 'bubblewrap',
      readOnlyPaths: w.readOnly,
      writablePaths: [w.ws],
    })) as unknown as KernelLike;
}

/**
 * Runs a tool set on a block through the real loop, a scripted OpenAI-compatible server and an
 * in-memory store. Returns the loop result and the store.
 */
export async function runWithModel(o: {
  store: RunStore;
  runId: string;
  toolSet: ToolSet<Block>;
  block: Block;
  ws: string;
  model: ModelClient;
  startKernel?: () => Promise<KernelLike>;
  agent?: string;
}) {
  await o.store.createRun({
    id: o.runId,
    suite: o.block.suite,
    blockId: o.block.id,
    agent: o.agent ?? 'llm',
    model: o.model.model,
    params: {},
    promptHash: promptHash(o.toolSet.systemPrompt, o.toolSet.buildBlockPrompt(o.block), []),
    toolSet: o.toolSet.id,
    dataChecksums: {},
    loupeVersion: 'test',
    sandbox: 'bubblewrap',
    workspace: o.ws,
  });
  return runAgent({
    store: o.store,
    runId: o.runId,
    model: o.model,
    toolSet: o.toolSet as ToolSet,
    block: o.block,
    workspace: o.ws,
    startKernel: o.startKernel,
  });
}
