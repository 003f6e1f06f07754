/**
 * Replay of a recorded run: re-executes its code actions (the Python cells it ran, in order, and the calls of its
 * benchmark's replay tools, `BenchmarkDefinition.replayTools`: DDR's SQL queries) against the same data in a fresh sandbox, and reports per step whether the outputs
 * match the recording. The report is stored with the run (run event `replay`, JSON).
 * Source: issue 6 "Reference and replay agents".
 */
import { createHash } from 'node:crypto';
import type { RunStore } from '../store/run-store.ts';
import { errorMessage } from '../util/errors.ts';
import { truncateObservation } from '../agent/loop.ts';
import type { KernelCellRecord, KernelExecuteResult, KernelLike } from '../agent/types.ts';
import { findBenchmark } from '../benchmarks/registry.ts';
import type { ReplayContext } from '../benchmarks/types.ts';
import type { Block } from '../suites/types.ts';

/** One re-executed action. */
export interface ReplayAction {
  stepIndex: number;
  /** `python`, or the kind of the benchmark's replay tool (`sql`). */
  kind: string;
  /** The code / SQL (first 500 characters). */
  code: string;
  match: boolean;
  /** What differed (first differing field with both values, cut to 400 characters each). */
  difference?: string;
}

/** Per-step verdict. */
export interface ReplayStep {
  stepIndex: number;
  actions: number;
  match: boolean;
}

/** The replay report of one run. */
export interface ReplayReport {
  runId: string;
  at: string;
  actions: ReplayAction[];
  steps: ReplayStep[];
  total: number;
  matched: number;
  allMatch: boolean;
  /** Figures whose PNG bytes differ although the cell matched otherwise (not counted as a mismatch). */
  figureByteDifferences: number;
  durationMs: number;
}

/** Options of {@link replayRun}. */
export interface ReplayOptions {
  store: RunStore;
  runId: string;
  /** Starts a FRESH kernel for the run's block (same workspace layout, same sandbox settings). */
  startKernel?: () => Promise<KernelLike>;
  /** The run's block: the benchmark's replay tools find what they need in it (DDR: its database). */
  block?: Block;
  /** The database file the run queried, when given apart from the block (opened read-only). */
  database?: string;
  /** Per-call time limit of the replay tools the run used (default: the tool's). */
  queryTimeoutMs?: number;
  /** Sandbox of the query process (default `bubblewrap`; use the run's own mode). */
  sandbox?: 'bubblewrap' | 'off';
  /** Observation limit the run's loop used (default 20,000). */
  maxObservationChars?: number;
  /** Store the report as a `replay` event of the run (default true). */
  record?: boolean;
}

/**
 * Makes outputs comparable across processes: object addresses, the date and time statsmodels prints
 * in every summary table, and trailing spaces. Nothing else is masked.
 */
export function normalizeOutput(s: string | null | undefined): string {
  return (s ?? '')
    .replace(/ at 0x[0-9a-fA-F]+/g, ' at 0x?')
    .replace(/Date:(\s+)[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4}/g, 'Date:$1<date>')
    .replace(/Time:(\s+)\d{2}:\d{2}:\d{2}/g, 'Time:$1<time>')
    .replace(/[ \t]+$/gm, '')
    .replace(/\n+$/, '');
}

function cellView(c: {
  status: string;
  stdout: string;
  result: string | null | undefined;
  error: { ename: string; evalue: string } | null | undefined;
  tables: { text: string }[];
}): Record<string, string> {
  return {
    status: c.status,
    stdout: normalizeOutput(c.stdout),
    result: normalizeOutput(c.result ?? ''),
    error: c.error ? `${c.error.ename}: ${normalizeOutput(c.error.evalue)}` : '',
    tables: c.tables.map((t) => normalizeOutput(t.text)).join('\n---\n'),
  };
}

/** Where two texts first differ, with context: `recorded …x… vs replayed …y…` (400 characters each). */
export function describeDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const from = Math.max(0, i - 150);
  const cut = (t: string) => `${from > 0 ? '…' : ''}${t.slice(from, from + 400)}${t.length > from + 400 ? '…' : ''}`;
  return `at character ${i}: recorded ${JSON.stringify(cut(a))} vs replayed ${JSON.stringify(cut(b))}`;
}

function firstDifference(a: Record<string, string>, b: Record<string, string>): string | undefined {
  for (const k of Object.keys(a)) {
    if (a[k] !== b[k]) return `${k} ${describeDifference(a[k]!, b[k] ?? '')}`;
  }
  return undefined;
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * Replays a recorded run (see the module comment).
 * @returns the report (also stored as a `replay` run event unless `record` is false).
 * @throws Error when the run does not exist, or when it has Python cells but no `startKernel` was
 *   given, or calls of its benchmark's replay tools without what they need (SQL queries without `database`).
 */
export async function replayRun(o: ReplayOptions): Promise<ReplayReport> {
  const t0 = performance.now();
  const run = await o.store.getRun(o.runId);
  if (!run) throw new Error(`run ${o.runId} not found in ${o.store.location}`);
  const cells: KernelCellRecord[] = await o.store.getCells(o.runId, { includeReplays: false, withFigures: true });
  const steps = await o.store.getSteps(o.runId);
  if (cells.length && !o.startKernel) {
    throw new Error(`run ${o.runId} has ${cells.length} Python cells: a kernel is needed to replay it`);
  }
  // the benchmark's own tools re-run outside the kernel (DDR's SQL queries)
  const ctx: ReplayContext = {
    sandbox: o.sandbox ?? 'bubblewrap',
    ...(o.block ? { block: o.block } : {}),
    ...(o.database ? { database: o.database } : {}),
    ...(o.queryTimeoutMs !== undefined ? { timeoutMs: o.queryTimeoutMs } : {}),
  };
  const toolCalls = (findBenchmark(run.suite)?.replayTools ?? []).map((tool) => ({
    tool,
    calls: steps.flatMap((s) =>
      s.toolCalls.filter((c) => c.name === tool.tool).map((c) => ({ stepIndex: s.index, call: c })),
    ),
  }));
  for (const { tool, calls } of toolCalls) {
    const missing = calls.length ? tool.missing(ctx) : null;
    if (missing) {
      throw new Error(`run ${o.runId} has ${calls.length} ${tool.actions}: ${missing} is needed to replay it`);
    }
  }

  const actions: ReplayAction[] = [];
  let figureByteDifferences = 0;
  if (cells.length) {
    const kernel = await o.startKernel!();
    try {
      for (const c of cells) {
        let r: KernelExecuteResult;
        try {
          r = await kernel.execute(c.code);
        } catch (e) {
          actions.push({
            stepIndex: c.stepIndex,
            kind: 'python',
            code: c.code.slice(0, 500),
            match: false,
            difference: `replay failed: ${errorMessage(e)}`,
          });
          continue;
        }
        const rec = cellView(c);
        const rep = cellView({
          status: r.status,
          stdout: r.stdout,
          result: r.result,
          error: r.error,
          tables: r.tables ?? [],
        });
        rec.figures = String(c.figures.length);
        rep.figures = String(r.figures?.length ?? 0);
        const difference = firstDifference(rec, rep);
        if (!difference) {
          const a = c.figures.map(sha);
          const b = (r.figures ?? []).map((f) => sha(f.png));
          figureByteDifferences += a.filter((h, i) => h !== b[i]).length;
        }
        actions.push({
          stepIndex: c.stepIndex,
          kind: 'python',
          code: c.code.slice(0, 500),
          match: !difference,
          ...(difference ? { difference } : {}),
        });
      }
    } finally {
      await kernel.close().catch(() => undefined);
    }
  }
  for (const { tool, calls } of toolCalls) {
    if (!calls.length) continue;
    const session = tool.open(ctx);
    try {
      for (const q of calls) {
        const r = await session.call(q.call.argumentsText);
        if (!r) continue; // malformed arguments never reached the tool
        const obs = q.call.truncated
          ? truncateObservation(r.observation, o.maxObservationChars ?? 20_000).text
          : r.observation;
        const match = normalizeOutput(obs) === normalizeOutput(q.call.observation);
        actions.push({
          stepIndex: q.stepIndex,
          kind: tool.kind,
          code: r.code.slice(0, 500),
          match,
          ...(match ? {} : { difference: describeDifference(q.call.observation, obs) }),
        });
      }
    } finally {
      session.close();
    }
  }
  actions.sort((a, b) => a.stepIndex - b.stepIndex);
  const byStep = new Map<number, ReplayStep>();
  for (const a of actions) {
    const s = byStep.get(a.stepIndex) ?? { stepIndex: a.stepIndex, actions: 0, match: true };
    s.actions++;
    s.match &&= a.match;
    byStep.set(a.stepIndex, s);
  }
  const matched = actions.filter((a) => a.match).length;
  const report: ReplayReport = {
    runId: o.runId,
    at: new Date().toISOString(),
    actions,
    steps: [...byStep.values()],
    total: actions.length,
    matched,
    allMatch: matched === actions.length,
    figureByteDifferences,
    durationMs: Math.round(performance.now() - t0),
  };
  if (o.record !== false) await o.store.addEvent(o.runId, 'replay', JSON.stringify(report));
  return report;
}

/** The replay reports stored with a run, oldest first. */
export async function readReplayReports(store: Pick<RunStore, 'getEvents'>, runId: string): Promise<ReplayReport[]> {
  return (await store.getEvents(runId))
    .filter((e) => e.kind === 'replay')
    .map((e) => JSON.parse(e.message) as ReplayReport);
}
