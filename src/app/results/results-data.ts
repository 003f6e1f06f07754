/**
 * Shapes the run store into the Results panel's state (no `vscode`, so it is tested on a real store in Node):
 * stored scores (table `scores`, written by `loupe score` / the run UI) per model × block, a rate against total
 * tokens, tool-usage heatmaps from the recorded steps, per-category metrics with CIs — each as the benchmark's
 * `presentation` (src/core/benchmarks/types.ts) asks, never by its name. Every number keeps the ids of the runs it
 * came from. Source: issue 8 (Results webview); issue 12 (presentation behind the registry).
 */
import { ALL_RUNS, scopeRuns, scopeCaption, type RunScope } from '../experiments/scope.ts';
import { presetOf } from '../../core/eval/run-score.ts';
import { benchmarks } from '../../core/benchmarks/registry.ts';
import type { BenchmarkDefinition } from '../../core/benchmarks/types.ts';
import { aggregateScores, assistedModel, type RunScore } from '../../core/runs/score-stored-run.ts';
import { assistanceLabel, assistanceOf } from '../../core/runs/intervene.ts';
import type { AnswerRecord, StoredScore } from '../../core/store/records.ts';
import { isRunScore, itemTexts, questionDrilldown, spreadOf } from './outcomes.ts';
import { ownToolsHeatmap } from '../timeline/timeline.ts';
import type { RunRecord } from '../../core/store/records.ts';
import type { RunStore } from '../../core/store/run-store.ts';
import { reopenRun } from '../../core/runs/reopen.ts';
import type { Suite } from '../../core/suites/types.ts';
import type {
  BladeDecisionRow,
  MetricCell,
  MetricColumn,
  MetricsRow,
  MetricsTable,
  ResultsState,
  ScatterPoint,
  ToolHeatmapView,
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

/** The spread of one metric over the repeats of a model × block (issue 22): only where there are 2 or more values. */
function repeatSpread(values: Num[]): Pick<MetricCell, 'spread'> {
  const xs = values.filter((v): v is number => v !== null);
  const sp = xs.length > 1 ? spreadOf(xs) : null;
  return sp ? { spread: sp } : {};
}

const RUN_COLUMNS: MetricColumn[] = [
  { key: 'steps', label: 'Steps', format: 'number', description: 'Agent steps per block' },
  { key: 'inputTokens', label: 'Input tokens', format: 'tokens' },
  { key: 'outputTokens', label: 'Output tokens', format: 'tokens' },
  { key: 'time', label: 'Time', format: 'seconds', description: 'Active wall time' },
];

/** Which runs a row rests on: the scored ones, and those left out for want of a stored score (issue 42). */
function rowRuns(rs: readonly RunRecord[], scores: Map<string, StoredScore>): NonNullable<MetricsRow['runs']> {
  return {
    total: rs.length,
    scored: rs.filter((r) => scores.has(r.id)).map((r) => r.id),
    unscored: rs.filter((r) => !scores.has(r.id)).map((r) => r.id),
  };
}

/**
 * A benchmark's table with fixed columns (`presentation.resultsColumns`): summary rates weighted per run, the runs'
 * steps, tokens and time, a row per model over all blocks; and, when the presentation asks, the rate-vs-tokens
 * scatter and the tool-usage heatmaps from the stored steps.
 */
async function fixedSection(
  def: BenchmarkDefinition,
  runs: RunRecord[],
  scores: Map<string, StoredScore>,
  store: RunStore,
  interventions = new Map<string, number>(),
): Promise<{ table?: MetricsTable; scatter: ScatterPoint[]; heatmaps: ToolHeatmapView[] }> {
  const p = def.presentation;
  const spec = p.resultsColumns!;
  const scored = runs.filter((r) => r.suite === def.kind);
  if (!scored.length) return { scatter: [], heatmaps: [] };
  const byKey = new Map<string, RunRecord[]>();
  for (const r of scored) {
    const k = `${modelOf(r)}\u0000${r.blockId}`;
    byKey.set(k, [...(byKey.get(k) ?? []), r]);
  }
  const rows: MetricsRow[] = [];
  const models = [...new Set(scored.map(modelOf))].sort();
  let options: Record<string, string | number | boolean> | undefined;
  const weight = (x: { s?: StoredScore }) => {
    for (const k of spec.weightKeys) {
      const v = num(x.s?.summary[k]);
      if (v !== null) return v;
    }
    return undefined;
  };
  const cellsFor = (all: RunRecord[], aggregate: boolean): Record<string, MetricCell> => {
    const withScore = all.map((r) => ({ r, s: scores.get(r.id) })).filter((x) => x.s);
    // Issue 42: every figure of a row over the same runs — the scored ones (all of them while none is scored).
    const rs = withScore.length ? withScore.map((x) => x.r) : all;
    const ids = rs.map((r) => r.id);
    const n = withScore.reduce((k, x) => k + (weight(x) ?? 0), 0);
    const pending = withScore.reduce((k, x) => k + (x.s?.pending ?? 0), 0);
    const rate = (key: string): MetricCell => ({
      value: wmean(withScore.map((x) => ({ v: num(x.s?.summary[key]), w: weight(x) }))),
      n: n || undefined,
      runIds: withScore.map((x) => x.r.id),
      pending: pending || undefined,
      ...(aggregate ? {} : repeatSpread(withScore.map((x) => num(x.s?.summary[key])))),
    });
    const blocks = new Set(rs.map((r) => r.blockId)).size || 1;
    const sum = (f: (r: RunRecord) => number) => rs.reduce((k, r) => k + f(r), 0);
    // Token use is unknown for external MCP clients (issue 24): summed over the runs that know it, null when none does.
    const known = rs.filter((r) => r.tokens !== null);
    const tokenSum = (f: (t: NonNullable<RunRecord['tokens']>) => number) =>
      known.length ? known.reduce((k, r) => k + f(r.tokens!), 0) : null;
    const perRun = aggregate ? blocks : rs.length || 1;
    return {
      ...Object.fromEntries(spec.rates.map((c) => [c.key, rate(c.key)])),
      steps: { value: sum((r) => r.steps) / perRun, runIds: ids },
      inputTokens: { value: tokenSum((t) => t.input), runIds: known.map((r) => r.id) },
      outputTokens: { value: tokenSum((t) => t.output), runIds: known.map((r) => r.id) },
      time: { value: sum((r) => r.durationMs) / 1000, runIds: ids },
      ...(assisted
        ? { interventions: { value: sum((r) => interventions.get(r.id) ?? 0) / (rs.length || 1), runIds: ids } }
        : {}),
    };
  };
  const assisted = scored.some((r) => (interventions.get(r.id) ?? 0) > 0);
  const scatter: ScatterPoint[] = [];
  const heatmaps: ToolHeatmapView[] = [];
  for (const model of models) {
    const mine = scored.filter((r) => modelOf(r) === model);
    const blocks = [...new Set(mine.map((r) => r.blockId))].sort();
    for (const b of blocks) {
      const rs = byKey.get(`${model}\u0000${b}`) ?? [];
      rows.push({ model, block: b, blockTitle: blockTitle(b), cells: cellsFor(rs, false), runs: rowRuns(rs, scores) });
    }
    const agg = cellsFor(mine, true);
    if (blocks.length > 1) rows.push({ model, block: '*', cells: agg, runs: rowRuns(mine, scores) });
    const plottedRuns = mine.some((r) => scores.has(r.id)) ? mine.filter((r) => scores.has(r.id)) : mine;
    for (const r of mine) {
      const o = scores.get(r.id)?.options;
      // the preset the score was made with; `legacy` for a score saved before presets existed (issue 21)
      if (o && !options) {
        options = {
          ...(Object.fromEntries(
            Object.entries(o).filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v)),
          ) as Record<string, string | number | boolean>),
          preset: presetOf({ options: o }),
        };
      }
    }
    const plotted = p.tokenEfficiency ? agg[p.tokenEfficiency.rate]?.value : null;
    // A model whose runs' token use is unknown (an external MCP client) has no point on the rate-vs-tokens figure.
    if (plotted !== null && plotted !== undefined && plottedRuns.every((r) => r.tokens !== null)) {
      scatter.push({
        model,
        match: plotted,
        blocks: new Set(plottedRuns.map((r) => r.blockId)).size,
        runIds: plottedRuns.map((r) => r.id),
        totalTokens: plottedRuns.reduce((k, r) => k + r.tokens!.input + r.tokens!.output, 0),
      });
    }
    // Tool usage: one trajectory per run (one block), its steps' tools.
    const usage = p.toolUsage;
    if (usage) {
      const trajectories: string[][][] = [];
      for (const r of mine) trajectories.push((await store.getSteps(r.id)).map((st) => usage.stepTools(st.toolCalls)));
      const withCalls = trajectories.filter((t) => t.some((x) => x.length));
      if (withCalls.length) {
        const hm = usage.heatmap(withCalls);
        heatmaps.push({
          model,
          view: 'paper',
          benchmark: p.tableTitle,
          tools: hm.tools,
          bins: hm.bins,
          matrix: hm.matrix,
          counts: hm.counts,
          nTrajectories: hm.nTrajectories,
          runIds: mine.map((r) => r.id),
        });
      }
    }
  }
  const columns: MetricColumn[] = [
    ...spec.rates.map((c) => ({ key: c.key, label: c.label, format: 'percent' as const, description: c.description })),
    ...RUN_COLUMNS,
    ...(assisted
      ? [
          {
            key: 'interventions',
            label: 'Interventions',
            format: 'number' as const,
            description: 'Human interventions (hints, corrections) per run; assisted runs are rows of their own',
          },
        ]
      : []),
  ];
  return { table: { id: def.kind, title: p.tableTitle, suite: def.kind, columns, rows, options }, scatter, heatmaps };
}

/**
 * Issue 22: per model, the heatmap of the tools its runs of this benchmark actually called (every benchmark, the
 * paper's tool list aside), from the step summaries (no observation texts read).
 */
async function ownHeatmaps(def: BenchmarkDefinition, runs: RunRecord[], store: RunStore): Promise<ToolHeatmapView[]> {
  const mine = runs.filter((r) => r.suite === def.kind && r.steps > 0);
  const out: ToolHeatmapView[] = [];
  for (const model of [...new Set(mine.map(modelOf))].sort()) {
    const rs = mine.filter((r) => modelOf(r) === model);
    const trajectories = await Promise.all(
      rs.map(async (r) => (await store.getStepSummaries(r.id)).map((s) => s.toolNames)),
    );
    const hm = ownToolsHeatmap(trajectories.filter((t) => t.some((x) => x.length)));
    if (hm) {
      out.push({
        model,
        view: 'own',
        benchmark: def.presentation.tableTitle,
        tools: hm.tools,
        bins: hm.bins,
        matrix: hm.matrix,
        counts: hm.counts,
        nTrajectories: hm.nTrajectories,
        runIds: rs.map((r) => r.id),
      });
    }
  }
  return out;
}

/** A table of every numeric summary metric, for benchmarks without fixed columns (`presentation.resultsColumns` null). */
function genericTable(
  def: BenchmarkDefinition,
  runs: RunRecord[],
  scores: Map<string, StoredScore>,
): MetricsTable | undefined {
  const suite = def.kind;
  const rs = runs.filter((r) => r.suite === suite && scores.has(r.id));
  if (!rs.length) return undefined;
  const keys = new Set<string>();
  for (const r of rs) {
    for (const [k, v] of Object.entries(scores.get(r.id)?.summary ?? {})) if (typeof v === 'number') keys.add(k);
  }
  const columns: MetricColumn[] = [...keys]
    .filter((k) => k !== 'n')
    .map((k) => {
      const vals = rs.map((r) => num(scores.get(r.id)?.summary[k])).filter((v): v is number => v !== null);
      const fraction =
        /rate|accuracy|coverage|precision|recall|f1|match|share|hallucination/i.test(k) &&
        vals.every((v) => v >= 0 && v <= 1);
      return {
        key: k,
        label: k,
        format: fraction ? (/precision|recall|f1/i.test(k) ? 'fraction' : 'percent') : 'number',
      };
    });
  const groups = new Map<string, RunRecord[]>();
  for (const r of rs) {
    groups.set(`${modelOf(r)}\u0000${r.blockId}`, [...(groups.get(`${modelOf(r)}\u0000${r.blockId}`) ?? []), r]);
  }
  const everyRun = runs.filter((r) => r.suite === suite);
  const rows: MetricsRow[] = [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, g]) => ({
      model: modelOf(g[0] as RunRecord),
      block: (g[0] as RunRecord).blockId,
      runs: rowRuns(
        everyRun.filter((r) => modelOf(r) === modelOf(g[0] as RunRecord) && r.blockId === (g[0] as RunRecord).blockId),
        scores,
      ),
      cells: Object.fromEntries(
        columns.map((c) => [
          c.key,
          {
            value: wmean(g.map((r) => ({ v: num(scores.get(r.id)?.summary[c.key]) }))),
            runIds: g.map((r) => r.id),
            pending: g.reduce((k, r) => k + (scores.get(r.id)?.pending ?? 0), 0) || undefined,
            ...repeatSpread(g.map((r) => num(scores.get(r.id)?.summary[c.key]))),
          } satisfies MetricCell,
        ]),
      ),
    }));
  const first = scores.get((rs[0] as RunRecord).id);
  const options = first
    ? (Object.fromEntries(
        Object.entries(first.options).filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v)),
      ) as Record<string, string | number | boolean>)
    : undefined;
  return { id: suite, title: def.presentation.tableTitle, suite, columns, rows, options };
}

const cellOf = (iv: { mean: number; lo: number; hi: number }, runIds: string[], pending: number): MetricCell => {
  const ok = Number.isFinite(iv.mean);
  return {
    value: ok ? iv.mean : null,
    ci: ok && Number.isFinite(iv.lo) && Number.isFinite(iv.hi) ? [iv.lo, iv.hi] : undefined,
    runIds,
    pending: pending || undefined,
  };
};

/**
 * Per-category rows with 95% bootstrap CIs (BLADE decision types): the stored run scores (`loupe score` keeps the
 * whole RunScore as the score's detail) of each benchmark with `presentation.categoryCis` are aggregated per model
 * by the core (`aggregateScores`: BLADE's k, samples, seed) and flattened by the benchmark.
 */
async function categoryRows(
  scores: Map<string, StoredScore>,
): Promise<{ rows: BladeDecisionRow[]; heading?: string; options?: Record<string, string | number | boolean> }> {
  const out: BladeDecisionRow[] = [];
  let options: Record<string, string | number | boolean> | undefined;
  let heading: string | undefined;
  for (const def of benchmarks()) {
    const cis = def.presentation.categoryCis;
    if (!cis) continue;
    const runScores = [...scores.values()]
      .map((s) => s.detail)
      .filter(isRunScore)
      .filter((r) => r.benchmark === def.kind && !r.error);
    if (!runScores.length) continue;
    const aggs = (await aggregateScores(runScores)).filter((a) => a.benchmark === def.kind);
    const pendingOf = (model: string) => aggs.find((a) => a.model === model)?.pending ?? 0;
    heading ??= cis.heading;
    for (const r of cis.rows(aggs)) {
      out.push({
        model: r.model,
        decisionType: r.type,
        precision: cellOf(r.precision, r.runIds, 0),
        coverage: cellOf(r.coverage, r.runIds, 0),
        f1: cellOf(r.f1, r.runIds, pendingOf(r.model)),
      });
    }
    const first = aggs.find((a) => (a.extra as { bootstrap?: unknown } | undefined)?.bootstrap)?.extra as
      { options?: Record<string, unknown> } | undefined;
    if (first?.options && !options) {
      options = Object.fromEntries(
        Object.entries(first.options).filter(([, v]) => ['string', 'number', 'boolean'].includes(typeof v)),
      ) as Record<string, string | number | boolean>;
    }
  }
  return { rows: out, ...(heading ? { heading } : {}), options };
}

/**
 * Question texts of the blocks of `runs` for the drill-down, by `<suite>\0<block>\0<ref>`: each block's suite is
 * reopened once (shared cache); a block whose suite cannot be reopened keeps the item outcomes' own labels.
 */
async function questionTextsOf(runs: readonly RunRecord[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const suites = new Map<string, Promise<Suite>>();
  const seen = new Set<string>();
  for (const r of runs) {
    const k = `${r.suite}\u0000${r.blockId}`;
    if (seen.has(k)) continue;
    seen.add(k);
    try {
      const { block } = await reopenRun(r, { suites });
      for (const [ref, text] of itemTexts(block)) out.set(`${k}\u0000${ref}`, text);
    } catch {
      // the suite moved or is gone: the outcomes' labels stand
    }
  }
  return out;
}

/**
 * Builds the Results state from a run store.
 * @param scope the runs shown (issue 43: the selected experiment's); every run by default.
 */
export async function buildResultsState(
  store: RunStore,
  source = store.location,
  scope: RunScope = ALL_RUNS,
): Promise<ResultsState> {
  // Issue 20: assisted and forked runs are shown under their own model label (`m (assisted)`), apart from unassisted ones.
  const listed = scopeRuns(await store.listRuns(), scope);
  const help = await assistanceOf(store, listed);
  const runs = listed.map((r) => {
    const label = assistanceLabel(help.get(r.id));
    return label ? { ...r, model: assistedModel(r.model ?? r.agent, label) } : r;
  });
  const interventions = new Map([...help].map(([id, a]) => [id, a.interventions]));
  let scoreList: StoredScore[];
  try {
    scoreList = await store.scores.list();
  } catch {
    scoreList = []; // a store without the scores table (never scored)
  }
  const scores = latestScores(scoreList.filter((sc) => scope.includes(sc.runId)));
  const tables: MetricsTable[] = [];
  const scatter: ScatterPoint[] = [];
  const heatmaps: ToolHeatmapView[] = [];
  for (const def of benchmarks()) {
    if (def.presentation.resultsColumns) {
      const f = await fixedSection(def, runs, scores, store, interventions);
      if (f.table) tables.push(f.table);
      scatter.push(...f.scatter);
      heatmaps.push(...f.heatmaps);
    } else {
      const t = genericTable(def, runs, scores);
      if (t) tables.push(t);
    }
    heatmaps.push(...(await ownHeatmaps(def, runs, store)));
  }
  const blade = await categoryRows(scores);
  // Issue 22: block → question → each repeat's answer against the truth, for benchmarks that score items.
  const itemRuns = runs.filter((r) => isRunScore(scores.get(r.id)?.detail));
  const answers: Map<string, AnswerRecord[]> = itemRuns.length
    ? await store.getAnswersOf(itemRuns.map((r) => r.id))
    : new Map();
  const drilldown = questionDrilldown(
    itemRuns,
    new Map(itemRuns.map((r) => [r.id, scores.get(r.id)!.detail as RunScore])),
    answers,
    await questionTextsOf(itemRuns),
  );
  const pendingJudgements = [...scores.values()].reduce((k, s) => k + s.pending, 0);
  let message: string | undefined;
  if (!runs.length && scope.experiment) {
    message = `No run of experiment ${scope.experiment} in ${source}: tag runs in the Runs view (Tag Run…) or choose another experiment.`;
  } else if (!runs.length) {
    message = `No runs in ${source} yet. Run a benchmark block, then score it (loupe score --store … --all).`;
  } else if (!scores.size) {
    message = `${runs.length} run${runs.length === 1 ? '' : 's'} in the store, none scored yet: run \`loupe score --store ${source} --all\`.`;
  }
  return {
    source,
    generatedAt: new Date().toISOString(),
    tables,
    scatter,
    heatmaps,
    blade: blade.rows,
    ...(blade.heading ? { categoryHeading: blade.heading } : {}),
    bladeOptions: blade.options,
    pendingJudgements,
    message,
    ...(drilldown.length ? { drilldown } : {}),
    ...(scope.experiment ? { experiment: scopeCaption(scope) } : {}),
  };
}
