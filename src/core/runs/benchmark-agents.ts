/**
 * Wiring of the BLADE, BLADE-MCQ, DDR and AnalystBench tool sets and agents into the block runner
 * (`runner.ts`) and `loupe run`: tool set per suite with named options, the BLADE reference model,
 * the DDR insight wrapper and run completion, and replay of a stored run in a fresh workspace.
 * Source: issue 6.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { containedPath, readContainedFile } from '../util/contained.ts';
import { dirname, join } from 'node:path';
import type { Block } from '../suites/types.ts';
import type { RunStore } from '../store/run-store.ts';
import { LoupeInputError } from '../util/errors.ts';
import type { ModelClient } from '../agent/loop.ts';
import { messagesFromSteps } from '../agent/loop.ts';
import type { KernelLike, ToolSet } from '../agent/types.ts';
import { BladeReferenceModel } from '../benchmarks/blade/reference.ts';
import { bladeDatasetSubmission, bladeMultiRunResults, bladeState, createBladeToolSet } from '../benchmarks/blade/toolset.ts';
import { bladeMcqAccuracy, type BladeMcqState } from '../benchmarks/blade/mcq.ts';
import { closeDdrRun, createDdrToolSet, finishDdrRun, readDdrResult, withDdrInsights, type DdrEmptyInsights, type DdrFinishRule, type DdrInsightMode } from '../benchmarks/ddr/toolset.ts';
import { ANALYST_INPUT_SETTINGS, analystState, createAnalystToolSet, type AnalystInputSetting } from '../benchmarks/analystbench/toolset.ts';
import { replayRun, type ReplayReport } from '../agent/replay.ts';

/** Step budget of the BLADE reference agent (one step per candidate ground-truth path). */
export const BLADE_REFERENCE_MAX_STEPS = 40;

/** Suites whose tool sets live here (LongDA's is `toolsets/longda.ts`). */
export const BENCHMARK_SUITES = ['blade', 'blade-mcq', 'ddr', 'analystbench'] as const;

/** Named tool-set options (`--tool-option key=value`), recorded in the run's params as `toolSetOptions`. */
export type ToolSetOptions = Record<string, string>;

const ALLOWED: Record<string, Record<string, readonly string[] | 'path' | 'bool' | 'number'>> = {
  blade: { useDataDescription: 'bool' },
  'blade-mcq': {},
  ddr: { finishRule: ['paper', 'code'], emptyInsights: ['zero', 'drop'], insights: ['separate-call', 'reasoning'], python: 'bool', forcedSummary: 'bool', queryTimeoutMs: 'number' },
  analystbench: { input: ANALYST_INPUT_SETTINGS, template: 'path' },
};

/**
 * Parses `key=value` pairs and checks them against the suite's named options.
 * @throws LoupeInputError('--tool-option') naming the bad key or value and the allowed ones.
 */
export function parseToolSetOptions(suite: string, pairs: string[]): ToolSetOptions {
  const allowed = ALLOWED[suite] ?? {};
  const out: ToolSetOptions = {};
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i <= 0) throw new LoupeInputError('--tool-option', `expected key=value, got '${p}'`);
    const k = p.slice(0, i);
    const v = p.slice(i + 1);
    const spec = allowed[k];
    if (!spec) throw new LoupeInputError('--tool-option', `unknown option '${k}' for suite ${suite} (options: ${Object.keys(allowed).join(', ') || 'none'})`);
    if (spec === 'bool' && v !== 'true' && v !== 'false') throw new LoupeInputError('--tool-option', `${k} must be true or false, got '${v}'`);
    if (spec === 'number' && !(Number(v) > 0)) throw new LoupeInputError('--tool-option', `${k} must be a positive number, got '${v}'`);
    if (Array.isArray(spec) && !spec.includes(v)) throw new LoupeInputError('--tool-option', `${k} must be one of ${spec.join(', ')}, got '${v}'`);
    out[k] = v;
  }
  return out;
}

/**
 * The tool set of a BLADE / BLADE-MCQ / DDR / AnalystBench block.
 * @param o.maxSteps budget override; `options` named options (see {@link parseToolSetOptions});
 *   `agent` the agent kind (the BLADE `reference` agent gets {@link BLADE_REFERENCE_MAX_STEPS}).
 * @throws LoupeInputError for another suite or a bad option.
 */
export function benchmarkToolSet(block: Block, o: { maxSteps?: number; options?: ToolSetOptions; agent?: string } = {}): ToolSet {
  const opt = o.options ?? {};
  switch (block.suite) {
    case 'blade':
      // The reference agent tries ground-truth paths until one validates: it gets one step per candidate.
      return createBladeToolSet({ maxSteps: o.maxSteps ?? (o.agent === 'reference' ? BLADE_REFERENCE_MAX_STEPS : undefined), useDataDescription: opt.useDataDescription !== 'false' }) as ToolSet;
    case 'blade-mcq':
      // One call per question, no tools (runBladeMcqBlock); the tool set only names the prompt.
      return { id: 'blade-mcq', tools: [], systemPrompt: 'blade-mcq: one call per question', buildBlockPrompt: (b) => (b as Block).items.map((i) => i.id).join(','), defaultMaxSteps: block.items.length };
    case 'ddr':
      return createDdrToolSet({ maxSteps: o.maxSteps, finishRule: opt.finishRule as DdrFinishRule | undefined, emptyInsights: opt.emptyInsights as DdrEmptyInsights | undefined, python: opt.python !== 'false', ...(opt.queryTimeoutMs ? { queryTimeoutMs: Number(opt.queryTimeoutMs) } : {}) }) as ToolSet;
    case 'analystbench':
      return createAnalystToolSet({
        maxSteps: o.maxSteps,
        input: (opt.input as AnalystInputSetting | undefined) ?? (block.visible.tableOfContents ? 'toc' : 'sources'),
        ...(opt.template ? { templateReport: readFileSync(opt.template, 'utf8') } : {}),
      }) as ToolSet;
    default:
      throw new LoupeInputError('--suite', `no tool set for suite '${block.suite}' here`);
  }
}

/**
 * The `reference` agent for a non-LongDA block: BLADE submits a ground-truth path.
 * @throws LoupeInputError for suites without a reference agent (DDR, AnalystBench, BLADE-MCQ).
 */
export function benchmarkReferenceModel(block: Block): ModelClient {
  if (block.suite === 'blade') return new BladeReferenceModel(block);
  throw new LoupeInputError('--agent', `there is no reference agent for suite '${block.suite}' (BLADE and LongDA have one)`);
}

/** Wraps the model for the suite's per-step extras (DDR: message-wise insight calls). */
export function prepareBenchmarkModel(block: Block, model: ModelClient, store: RunStore, runId: string, toolSet: ToolSet, options: ToolSetOptions = {}): ModelClient {
  if (block.suite === 'ddr' && options.insights !== 'reasoning' && model.model !== 'reference') {
    return withDdrInsights(model as ModelClient & { complete: ModelClient['complete'] }, store, runId, toolSet.buildBlockPrompt(block)) as ModelClient;
  }
  return model;
}

/**
 * After the loop: DDR records its result (I_t — with DDR's forced summary when the budget ended the
 * run, unless `forcedSummary=false` —, I_m, touched fields) as the `ddr-result` run event.
 * @param status the loop's final status.
 */
export async function completeBenchmarkRun(block: Block, store: RunStore, runId: string, model: ModelClient, toolSet: ToolSet, options: ToolSetOptions = {}, status = 'finished'): Promise<void> {
  if (block.suite !== 'ddr') return;
  closeDdrRun(runId);
  const messages = messagesFromSteps(toolSet.systemPrompt, toolSet.buildBlockPrompt(block), store.getSteps(runId));
  const flush = (model as { flushInsights?: (m: typeof messages) => Promise<void> }).flushInsights;
  if (flush) await flush(messages);
  await finishDdrRun(store, runId, {
    finishRule: (options.finishRule as DdrFinishRule | undefined) ?? 'paper',
    emptyInsights: options.emptyInsights as DdrEmptyInsights | undefined,
    insights: (options.insights as DdrInsightMode | undefined) ?? 'separate-call',
    ...(options.forcedSummary !== 'false' && status === 'budget_exhausted' ? { model, messages } : {}),
  });
}

/**
 * Replays a stored run in a fresh workspace and kernel (see {@link replayRun}); the report is stored
 * with the run as a `replay` event.
 * @param o.prepare makes the fresh workspace and returns its folder, the read-only paths and a kernel starter.
 */
export async function replayStoredRun(o: { store: RunStore; runId: string; block: Block; runDir: string; prepare: (runDir: string, block: Block) => { workspace: string; startKernel: () => Promise<KernelLike> } }): Promise<ReplayReport> {
  const dir = join(o.runDir, `replay-${new Date().toISOString().replace(/[-:.]/g, '')}`);
  const { startKernel } = o.prepare(dir, o.block);
  const run = o.store.getRun(o.runId);
  const sandbox = run?.sandbox === 'off' ? 'off' : 'bubblewrap';
  return replayRun({ store: o.store, runId: o.runId, startKernel, sandbox, ...(o.block.visible.database ? { database: o.block.visible.database.path } : {}) });
}

/**
 * Writes the results folder of BLADE / BLADE-MCQ / DDR / AnalystBench runs (`loupe run --results DIR`):
 * - BLADE: `<dataset>/multirun_analyses.json` (BLADE `MultiRunResults`, one entry per run in repeat
 *   order; runs without a valid submission → `[LM_GENERATION_FAILED, reason]`) and
 *   `<dataset>/submission.json` (BLADE `DatasetSubmission` of the valid analyses), spec §1.2.5;
 * - BLADE-MCQ: `mcq_results.json` (answers, raw replies, accuracy per dataset);
 * - DDR: `ddr_results.jsonl` (one `ddr-result` per run with its run and entity ids);
 * - AnalystBench: `<block>/report.md` and its figures, copied from the run folder.
 * @returns the files written (absolute paths).
 */
export function exportBenchmarkResults(store: RunStore, runs: { runId: string; block: Block; repeat: number }[], dir: string): { files: string[] } {
  const files: string[] = [];
  const write = (rel: string, text: string) => {
    const p = join(dir, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, text);
    files.push(p);
  };
  const bySuite = (s: string) => runs.filter((r) => r.block.suite === s).sort((a, b) => a.repeat - b.repeat);
  const blade = bySuite('blade');
  for (const ds of [...new Set(blade.map((r) => r.block.blade?.dataset ?? r.block.id))]) {
    const rs = blade.filter((r) => (r.block.blade?.dataset ?? r.block.id) === ds);
    const finals = rs.map((r) => ({ final: bladeState(store.getExtraState(r.runId)).final, message: store.getRun(r.runId)?.statusReason ?? 'no valid submission' }));
    write(join(ds, 'multirun_analyses.json'), JSON.stringify(bladeMultiRunResults(ds, finals), null, 2));
    write(join(ds, 'submission.json'), JSON.stringify(bladeDatasetSubmission(ds, finals.flatMap((f) => (f.final ? [f.final] : []))), null, 2));
  }
  const mcq = bySuite('blade-mcq');
  if (mcq.length) {
    const out = mcq.map((r) => {
      const answers = (store.getExtraState(r.runId).bladeMcq as BladeMcqState | undefined)?.answers ?? [];
      return { runId: r.runId, dataset: r.block.blade?.dataset ?? r.block.id, repeat: r.repeat, ...bladeMcqAccuracy(r.block, answers), answers };
    });
    write('mcq_results.json', JSON.stringify(out, null, 2));
  }
  const ddr = bySuite('ddr');
  if (ddr.length) write('ddr_results.jsonl', ddr.map((r) => JSON.stringify({ runId: r.runId, entityId: r.block.ddr?.entityId ?? r.block.id, repeat: r.repeat, ...(readDdrResult(store, r.runId) ?? {}) })).join('\n') + '\n');
  for (const r of bySuite('analystbench')) {
    const ws = store.getRun(r.runId)?.workspace;
    const st = analystState(store.getExtraState(r.runId));
    if (!ws || !st.report) continue;
    const sub = runs.filter((x) => x.block.id === r.block.id).length > 1 ? join(r.block.id, `repeat-${r.repeat}`) : r.block.id;
    let report: string;
    try {
      report = readContainedFile(ws, st.report.path, 'utf8');
    } catch {
      continue; // a planted link or a report outside the workspace is never exported
    }
    write(join(sub, 'report.md'), report);
    for (const f of st.report.figures) {
      let src: string;
      try {
        src = containedPath(ws, f);
      } catch {
        continue;
      }
      mkdirSync(dirname(join(dir, sub, f)), { recursive: true });
      copyFileSync(src, join(dir, sub, f));
      files.push(join(dir, sub, f));
    }
  }
  return { files };
}
