/**
 * Shapes the run store into the Results panel's state (no `vscode`, so it is tested on a real store in Node):
 * stored scores (table `scores`, written by `loupe score` / the run UI) per model × block, LongDA match vs tokens,
 * LongDA tool-usage heatmaps from the recorded steps, BLADE per-decision-type metrics with CIs.
 * Every number keeps the ids of the runs it came from.
 */
import { countToolCallsInCode, LONGDA_TOOLS, toolUsageHeatmap } from '../benchmarks/longda/eval.ts';
import { bladeCiRows } from './results.ts';
import { aggregateScores, type RunScore } from '../runs/score-run.ts';
import type { StoredScore } from '../store/records.ts';
import type { RunRecord } from '../store/records.ts';
import type { RunStore } from '../store/run-store.ts';
import type {
  BladeDecisionRow, MetricCell, MetricColumn, MetricsRow, MetricsTable, ResultsState, ScatterPoint, ToolHeatmapView,
} from '../../protocol/results.ts';

type Num = number | null;

const num = (v: unknown): Num => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The newest score of each run (scores are listed newest first). */
function latestScores(scores: StoredScore[]): Map<string, StoredScore> {
  const m = new Map<string, StoredScore>();
  for (const s of scores) if (!m.has(s.runId)) m.set(s.runId, s);
  return m;
}

const modelOf = (r: RunRecord) => r.model ?? r.agent;

/** A readable block label from its filesystem-safe id (`NHANES_NCHS_Data_Brief_No._508` → `NHANES NCHS Data Brief No. 508`). */
export function blockTitle(id: string): string {
  return id.replace(/_/g, ' ').replace(/\s+/g, ' ').trim();
}

/** Mean of values weighted by `w` (equal weights when absent); null when nothing is known. */
function wmean(pairs: { v: Num; w?: number }[]): Num {
  let s = 0;
  let n = 0;
  for (const { v, w } of pairs) {
    if (v === null) continue;
    const k = w && w > 0 ? w : 1;
    s += v * k;
    n += k;
  }
  return n ? s / n : null;
}

const LONGDA_COLUMNS: MetricColumn[] = [
  { key: 'coverage', label: 'Coverage', format: 'percent', description: 'Share of queries with a comparable answer (option coverage)' },
  { key: 'match', label: 'Match', format: 'percent', description: 'Share of queries within tolerance max(eps·|a|, 1) (option list_scoring)' },
  { key: 'steps', label: 'Steps', format: 'number', description: 'Agent steps per block' },
  { key: 'inputTokens', label: 'Input tokens', format: 'tokens' },
  { key: 'outputTokens', label: 'Output tokens', format: 'tokens' },
  { key: 'time', label: 'Time', format: 'seconds', description: 'Active wall time' },
];

/** Tool names a step called: function-call names, plus LongTA tool calls inside submitted code (code actions). */
export function stepTools(toolCalls: { name: string; argumentsText: string }[]): string[] {
  const out: string[] = [];
  for (const c of toolCalls) {
    if ((LONGDA_TOOLS as readonly string[]).includes(c.name)) {
      out.push(c.name);
      continue;
    }
    let code = '';
    try {
      const a = JSON.parse(c.argumentsText) as { code?: unknown };
      if (typeof a.code === 'string') code = a.code;
    } catch {
      code = '';
    }
    if (code) out.push(...countToolCallsInCode(code));
  }
  return out;
}

async function longdaSection(runs: RunRecord[], scores: Map<string, StoredScore>, store: RunStore): Promise<{ table?: MetricsTable; scatter: ScatterPoint[]; heatmaps: ToolHeatmapView[] }> {
  const scored = runs.filter((r) => r.suite === 'longda');
  if (!scored.length) return { scatter: [], heatmaps: [] };
  const byKey = new Map<string, RunRecord[]>();
  for (const r of scored) {
    const k = `${modelOf(r)}\u0000${r.blockId}`;
    byKey.set(k, [...(byKey.get(k) ?? []), r]);
  }
  const rows: MetricsRow[] = [];
  const models = [...new Set(scored.map(modelOf))].sort();
  let options: Record<string, string | number | boolean> | undefined;
  const cellsFor = (rs: RunRecord[], aggregate: boolean): Record<string, MetricCell> => {
    const ids = rs.map((r) => r.id);
    const sc = rs.map((r) => ({ r, s: scores.get(r.id) }));
    const withScore = sc.filter((x) => x.s);
    const queries = (x: { s?: StoredScore }) => num(x.s?.summary.queries) ?? num(x.s?.summary.n) ?? undefined;
    const n = withScore.reduce((k, x) => k + (queries(x) ?? 0), 0);
    const pending = withScore.reduce((k, x) => k + (x.s?.pending ?? 0), 0);
    const rate = (key: string): MetricCell => ({
      value: wmean(withScore.map((x) => ({ v: num(x.s?.summary[key]), w: queries(x) }))),
      n: n || undefined, runIds: withScore.map((x) => x.r.id), pending: pending || undefined,
    });
    const blocks = new Set(rs.map((r) => r.blockId)).size || 1;
    const sum = (f: (r: RunRecord) => number) => rs.reduce((k, r) => k + f(r), 0);
    const perRun = aggregate ? blocks : rs.length || 1;
    return {
      coverage: rate('coverage'),
      match: rate('match'),
      steps: { value: sum((r) => r.steps) / perRun, runIds: ids },
      inputTokens: { value: sum((r) => r.tokens.input), runIds: ids },
      outputTokens: { value: sum((r) => r.tokens.output), runIds: ids },
      time: { value: sum((r) => r.durationMs) / 1000, runIds: ids },
    };
  };
  const scatter: ScatterPoint[] = [];
  const heatmaps: ToolHeatmapView[] = [];
  for (const model of models) {
    const mine = scored.filter((r) => modelOf(r) === model);
    const blocks = [...new Set(mine.map((r) => r.blockId))].sort();
    for (const b of blocks) {
      const rs = byKey.get(`${model}\u0000${b}`) ?? [];
      rows.push({ model, block: b, blockTitle: blockTitle(b), cells: cellsFor(rs, false) });
    }
    const agg = cellsFor(mine, true);
    if (blocks.length > 1) rows.push({ model, block: '*', cells: agg });
    for (const r of mine) {
      const o = scores.get(r.id)?.options;
      if (o && !options) options = Object.fromEntries(Object.entries(o).filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v))) as Record<string, string | number | boolean>;
    }
    if (agg.match?.value !== null && agg.match?.value !== undefined) {
      scatter.push({
        model, match: agg.match.value, blocks: blocks.length, runIds: mine.map((r) => r.id),
        totalTokens: mine.reduce((k, r) => k + r.tokens.input + r.tokens.output, 0),
      });
    }
    // Tool usage: one trajectory per run (a LongDA run is one block), steps after the task.
    const trajectories: string[][][] = [];
    for (const r of mine) trajectories.push((await store.getSteps(r.id)).map((s) => stepTools(s.toolCalls)));
    const withCalls = trajectories.filter((t) => t.some((s) => s.length));
    if (withCalls.length) {
      const hm = toolUsageHeatmap(withCalls);
      heatmaps.push({ model, tools: hm.tools, bins: hm.bins, matrix: hm.matrix, counts: hm.counts, nTrajectories: hm.nTrajectories, runIds: mine.map((r) => r.id) });
    }
  }
  return {
    table: { id: 'longda', title: 'LongDA', suite: 'longda', columns: LONGDA_COLUMNS, rows, options },
    scatter,
    heatmaps,
  };
}

/** A table of every numeric summary metric for suites without a dedicated layout (DDR, AnalystBench, BLADE MCQ). */
function genericTable(suite: string, runs: RunRecord[], scores: Map<string, StoredScore>): MetricsTable | undefined {
  const rs = runs.filter((r) => r.suite === suite && scores.has(r.id));
  if (!rs.length) return undefined;
  const keys = new Set<string>();
  for (const r of rs) for (const [k, v] of Object.entries(scores.get(r.id)?.summary ?? {})) if (typeof v === 'number') keys.add(k);
  const columns: MetricColumn[] = [...keys].filter((k) => k !== 'n').map((k) => {
    const vals = rs.map((r) => num(scores.get(r.id)?.summary[k])).filter((v): v is number => v !== null);
    const fraction = /rate|accuracy|coverage|precision|recall|f1|match|share|hallucination/i.test(k) && vals.every((v) => v >= 0 && v <= 1);
    return { key: k, label: k, format: fraction ? (/precision|recall|f1/i.test(k) ? 'fraction' : 'percent') : 'number' };
  });
  const groups = new Map<string, RunRecord[]>();
  for (const r of rs) groups.set(`${modelOf(r)}\u0000${r.blockId}`, [...(groups.get(`${modelOf(r)}\u0000${r.blockId}`) ?? []), r]);
  const rows: MetricsRow[] = [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, g]) => ({
    model: modelOf(g[0] as RunRecord), block: (g[0] as RunRecord).blockId,
    cells: Object.fromEntries(columns.map((c) => [c.key, {
      value: wmean(g.map((r) => ({ v: num(scores.get(r.id)?.summary[c.key]) }))), runIds: g.map((r) => r.id),
      pending: g.reduce((k, r) => k + (scores.get(r.id)?.pending ?? 0), 0) || undefined,
    } satisfies MetricCell])),
  }));
  const first = scores.get((rs[0] as RunRecord).id);
  const options = first ? Object.fromEntries(Object.entries(first.options).filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v))) as Record<string, string | number | boolean> : undefined;
  const titles: Record<string, string> = { ddr: 'DDR-Bench', analystbench: 'AnalystBench', 'blade-mcq': 'BLADE MCQ', blade: 'BLADE per run' };
  return { id: suite, title: titles[suite] ?? suite, suite, columns, rows, options };
}

const isRunScore = (d: unknown): d is RunScore =>
  typeof d === 'object' && d !== null && typeof (d as RunScore).runId === 'string' && typeof (d as RunScore).benchmark === 'string' &&
  typeof (d as RunScore).summary === 'object' && 'detail' in d;

const cellOf = (iv: { mean: number; lo: number; hi: number }, runIds: string[], pending: number): MetricCell => {
  const ok = Number.isFinite(iv.mean);
  return { value: ok ? iv.mean : null, ci: ok && Number.isFinite(iv.lo) && Number.isFinite(iv.hi) ? [iv.lo, iv.hi] : undefined, runIds, pending: pending || undefined };
};

/**
 * BLADE per decision type with 95% bootstrap CIs: the stored run scores (`loupe score` keeps the whole RunScore as
 * the score's detail) are aggregated per model by the core (`aggregateScores` → `aggregateBlade`, k, samples, seed)
 * and flattened with `bladeCiRows`.
 */
async function bladeRows(scores: Map<string, StoredScore>): Promise<{ rows: BladeDecisionRow[]; options?: Record<string, string | number | boolean> }> {
  const runScores = [...scores.values()].map((s) => s.detail).filter(isRunScore).filter((r) => r.benchmark === 'blade' && !r.error);
  if (!runScores.length) return { rows: [] };
  const aggs = (await aggregateScores(runScores)).filter((a) => a.benchmark === 'blade');
  const usable = aggs.filter((a) => (a.extra as { bootstrap?: unknown } | undefined)?.bootstrap);
  const flat = bladeCiRows(usable.map((a) => ({ model: a.model, runIds: a.runIds, aggregate: a.extra as Parameters<typeof bladeCiRows>[0][number]['aggregate'] })));
  const pendingOf = (model: string) => aggs.find((a) => a.model === model)?.pending ?? 0;
  const rows = flat.map((r) => ({
    model: r.model, decisionType: r.type,
    precision: cellOf(r.precision, r.runIds, 0), coverage: cellOf(r.coverage, r.runIds, 0), f1: cellOf(r.f1, r.runIds, pendingOf(r.model)),
  }));
  const first = usable[0]?.extra as { options?: Record<string, unknown> } | undefined;
  const options = first?.options ? Object.fromEntries(Object.entries(first.options).filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v))) as Record<string, string | number | boolean> : undefined;
  return { rows, options };
}

/** Builds the Results state from a run store. */
export async function buildResultsState(store: RunStore, source = store.location): Promise<ResultsState> {
  const runs = await store.listRuns();
  let scoreList: StoredScore[];
  try {
    scoreList = await store.scores.list();
  } catch {
    scoreList = []; // a store without the scores table (never scored)
  }
  const scores = latestScores(scoreList);
  const tables: MetricsTable[] = [];
  const longda = await longdaSection(runs, scores, store);
  if (longda.table) tables.push(longda.table);
  for (const suite of ['blade', 'ddr', 'analystbench', 'blade-mcq']) {
    const t = genericTable(suite, runs, scores);
    if (t) tables.push(t);
  }
  const blade = await bladeRows(scores);
  const pendingJudgements = [...scores.values()].reduce((k, s) => k + s.pending, 0);
  let message: string | undefined;
  if (!runs.length) message = `No runs in ${source} yet. Run a benchmark block, then score it (loupe score --store … --all).`;
  else if (!scores.size) message = `${runs.length} run${runs.length === 1 ? '' : 's'} in the store, none scored yet: run \`loupe score --store ${source} --all\`.`;
  return {
    source, generatedAt: new Date().toISOString(), tables, scatter: longda.scatter, heatmaps: longda.heatmaps, blade: blade.rows,
    bladeOptions: blade.options, pendingJudgements, message,
  };
}
