/**
 * Scores runs recorded in the run store, whatever their benchmark: reopens the run's suite and block
 * (`reopen.ts`), parses the scoring options once against the benchmark's declaration, calls the benchmark's
 * scorer with the chosen judge, and aggregates per (benchmark, model) with the benchmark's own aggregator.
 * Used by `loupe score`, `loupe report`, `loupe run --json` and the Results view.
 * Source: issue 8 "CLI and UI"; issue 12 (registry).
 */
import type { RunStore } from '../store/run-store.ts';
import type { Block, LoadSuiteOptions, Suite } from '../suites/types.ts';
import {
  activeChecklistItems,
  authoredFromNative,
  checklistHash,
  checklistStoreOf,
} from '../annotations/checklists.ts';
import { LoupeInputError, errorMessage } from '../util/errors.ts';
import { nullLogger, type Logger } from '../util/log.ts';
import type { Judge } from '../eval/judges/types.ts';
import { countingJudge } from '../eval/judges/judge.ts';
import {
  aggregateBase,
  meanSummaries,
  scoreBase,
  scoringSession,
  type ChecklistUsed,
  type RunScore,
  type ScoreAggregate,
  type ScoringSession,
} from '../eval/run-score.ts';
import { benchmarks, findBenchmark } from '../benchmarks/registry.ts';
import {
  DEFAULT_SCORE_PRESET,
  parseOptions,
  parseOptionsWithPreset,
  type OptionValues,
  type ScorePreset,
} from '../benchmarks/options.ts';
import type { BenchmarkDefinition, ScoreGroup } from '../benchmarks/types.ts';
import type { CaptionEmbedder } from '../benchmarks/analystbench/eval.ts';
import { captureRunEvidence } from './evidence.ts';
import { runFolderOf } from '../store/run-folder.ts';
import { reopenRun } from './reopen.ts';
import { assistanceLabel, assistanceOf, type RunAssistance } from './intervene.ts';
import type { ScoreAssistance } from '../eval/run-score.ts';

export type { RunScore, ScoreAggregate, ScoringSession } from '../eval/run-score.ts';
export { scoringSession } from '../eval/run-score.ts';
export { longdaJsonScore, longdaQueriesOf, stepToolNames, type LongdaRunDetail } from '../benchmarks/longda/score.ts';
export { guessDdrScenario } from '../benchmarks/ddr/score.ts';
export { criteriaFromChecklist } from '../benchmarks/analystbench/score.ts';

/**
 * Scoring option names by benchmark (for `--option name=value` validation and help), from each benchmark's declaration.
 * @returns benchmark kind → option names as typed.
 */
export function optionNames(): Record<string, readonly string[]> {
  return Object.fromEntries(benchmarks().map((b) => [b.kind, b.scoreOptions.map((o) => o.name)]));
}

/**
 * Checks every option names a scoring option of some benchmark, and its value is valid for every benchmark that
 * declares it (an option shared by several benchmarks, e.g. `concurrency`, must suit each).
 * @param raw options by name. @throws LoupeInputError naming an unknown option or a bad value.
 */
export function validateOptionNames(raw: Readonly<Record<string, string>>): void {
  const all = benchmarks();
  for (const [k, v] of Object.entries(raw)) {
    const declaring = all.filter((b) => b.scoreOptions.some((o) => o.name === k));
    if (!declaring.length) {
      throw new LoupeInputError(
        `option ${k}`,
        `unknown; known options: ${[...new Set(all.flatMap((b) => b.scoreOptions.map((o) => o.name)))].sort().join(', ')}`,
      );
    }
    for (const b of declaring) {
      parseOptions(
        b.scoreOptions.filter((o) => o.name === k),
        { [k]: v },
      );
    }
  }
}

/**
 * The options of `raw` that a benchmark declares, parsed: its defaults, then the preset's values, then `raw`.
 * @param preset `official` (default: the benchmark's own code) or `paper`.
 * @throws LoupeInputError for a bad value.
 */
export function benchmarkOptions(
  def: BenchmarkDefinition,
  raw: Readonly<Record<string, string>>,
  preset: ScorePreset = DEFAULT_SCORE_PRESET,
): OptionValues {
  const mine: Record<string, string> = {};
  for (const o of def.scoreOptions) if (raw[o.name] !== undefined) mine[o.name] = raw[o.name]!;
  return parseOptionsWithPreset(def.scoreOptions, preset, mine, (n) => `option ${n}`, def.title);
}

/** Inputs of {@link scoreStoredRun}. */
export interface ScoreRunOptions {
  judge: Judge;
  /** Raw `--option name=value` values. */
  options?: Record<string, string>;
  /** The preset the options are resolved from (default `official`, issue 21); `options` override it. */
  preset?: ScorePreset;
  /** Override the suite root recorded with the run. */
  suiteRoot?: string;
  /** Caption embedder for AnalystBench figures (default: the lexical fallback). */
  embedder?: CaptionEmbedder;
  /** Suite cache shared across runs. */
  suites?: Map<string, Promise<Suite>>;
  /**
   * Which checklist to score against, for benchmarks with checklists: `latest` (default) the newest authored version
   * when there is one, else the suite's own; `native` the suite's own; a number, that authored version.
   */
  checklist?: 'latest' | 'native' | number;
  /**
   * Which ground truth to score against, for benchmarks with versioned ground truth (BLADE): `latest` (default) the
   * newest version saved in Loupe, else the shipped file; `shipped` the shipped file (version 0); a number, that version.
   */
  groundTruth?: 'latest' | 'shipped' | number;
  /** Loader options the run was made with (DDR `entities`, `database`, `metadataDir`, `checklist`), when not recorded with it. */
  loadOptions?: Omit<LoadSuiteOptions, 'log' | 'onProgress'>;
  /**
   * The runs folder this user configured (CLI: `runs/` next to the `--store` file, or `./.loupe/runs` for a team store;
   * VS Code: `loupe.runsDirectory`). Issue 36: the run's recorded workspace is read (and captured) only when it lies
   * inside, else its files come from the store's copy and an event on the run says why. Null or absent: the store's
   * copy only (safe by default).
   */
  runsRoot?: string | null;
  log?: Logger;
}

/**
 * Scores one stored run. Never throws for a scoring failure of the run itself: the result carries `error`.
 * @param store the run store; `runId` the run; `o` judge, options, suite cache; `session` resources shared
 *   with other runs scored together (made and closed here when omitted).
 * @returns the run's score, with `decided`: how many judgements experts, the LLM, identical-text shortcuts decided
 *   and how many are pending or unjudged.
 * @throws LoupeInputError for an unknown run id or invalid options.
 */
export async function scoreStoredRun(
  store: RunStore,
  runId: string,
  o: ScoreRunOptions,
  session?: ScoringSession,
): Promise<RunScore> {
  const run = await store.getRun(runId);
  if (!run) throw new LoupeInputError(`run ${runId}`, `not found in ${store.location}`);
  const raw = o.options ?? {};
  validateOptionNames(raw);
  const def = findBenchmark(run.suite);
  if (!def) {
    return {
      ...scoreBase(run, run.suite, o.judge.id, {}),
      summary: {},
      detail: null,
      error: `scoring of suite '${run.suite}' runs is not supported by this version of Loupe`,
    };
  }
  const preset = o.preset ?? DEFAULT_SCORE_PRESET;
  const options = benchmarkOptions(def, raw, preset);
  const own = session ?? scoringSession();
  // Issue 36: the recorded workspace is used only inside the runs folder this user configured.
  const folder = await runFolderOf(store, run, o.runsRoot, o.log ?? nullLogger);
  // The evidence the score reads (issue 26): kept in the store once, for runs that ended before the store kept it.
  if (run.status !== 'running' && !(await store.artefacts.list(run.id)).length) {
    await captureRunEvidence(store, run, folder, o.log ?? nullLogger);
  }
  try {
    const { suite, block } = await reopenRun(run, {
      ...(o.suiteRoot ? { suiteRoot: o.suiteRoot } : {}),
      ...(o.loadOptions ? { loadOptions: o.loadOptions } : {}),
      ...(o.suites ? { suites: o.suites } : {}),
      log: o.log ?? nullLogger,
    });
    const picked = def.checklist ? await checklistFor(store, def, suite, block, o.checklist ?? 'latest') : undefined;
    const counted = countingJudge(o.judge);
    const ctx = {
      store,
      run,
      folder,
      suite,
      block: picked?.block ?? block,
      judge: counted.judge,
      options,
      raw,
      session: own,
      extras: { ...(o.embedder ? { embedder: o.embedder } : {}), groundTruthVersion: o.groundTruth ?? 'latest' },
      log: o.log ?? nullLogger,
    };
    const score = await def.score(ctx);
    // Issue 20: the human help the run had, and (where the benchmark defines it) after how many interventions it was solved.
    const interventions = await store.getInterventions(run.id);
    const assistance = scoreAssistance((await assistanceOf(store, [run])).get(run.id)!);
    if (interventions.length && def.solvedAfterInterventions) {
      assistance.untilSolved = await def.solvedAfterInterventions.count(ctx, interventions);
    }
    const toolOptions = runToolOptions(def, run.params.toolSetOptions);
    return {
      ...score,
      preset,
      decided: counted.counts(),
      ...(picked ? { checklist: picked.used } : {}),
      assistance,
      ...(toolOptions ? { toolOptions } : {}),
    };
  } catch (e) {
    if (e instanceof LoupeInputError && /^(option |checklist version|ground-truth version)/.test(e.subject)) throw e;
    return { ...scoreBase(run, run.suite, o.judge.id, {}), summary: {}, detail: null, error: errorMessage(e) };
  } finally {
    if (!session) await own.close();
  }
}

/**
 * The tool-set options a run was made with, defaults filled in (what its score says about the agent's tools and
 * retrieval); the recorded values as they are when they no longer parse (an option of an older Loupe).
 */
function runToolOptions(
  def: BenchmarkDefinition,
  recorded: Record<string, string> | undefined,
): Record<string, unknown> | undefined {
  if (!def.toolOptions.length && !recorded) return undefined;
  try {
    return parseOptions(def.toolOptions, recorded ?? {}, (n) => `tool option ${n}`, def.title);
  } catch {
    return { ...recorded };
  }
}

function scoreAssistance(r: RunAssistance): ScoreAssistance {
  const a: ScoreAssistance = { ...r };
  const label = assistanceLabel(a);
  if (label) a.label = label;
  return a;
}

/**
 * Brings the assistance of scores (saved ones may predate an intervention) up to date from the store (issue 20): the
 * interventions and fork point now recorded; a solved-after count is kept only while the intervention count is unchanged.
 * @param scores run scores (changed in place). @returns the same array.
 */
export async function refreshAssistance(store: RunStore, scores: RunScore[]): Promise<RunScore[]> {
  const ids = new Set(scores.map((s) => s.runId));
  const help = await assistanceOf(
    store,
    (await store.listRuns()).filter((r) => ids.has(r.id)),
  );
  for (const s of scores) {
    const h = help.get(s.runId);
    if (!h) continue;
    const a = scoreAssistance(h);
    if (s.assistance?.interventions === h.interventions && s.assistance.untilSolved !== undefined) {
      a.untilSolved = s.assistance.untilSolved;
    }
    s.assistance = a;
  }
  return scores;
}

/**
 * Saves a run's score in the store (replacing the one of the same run × judge × options); a score against a
 * checklist keys on the checklist used too (`checklist: native | vN` among the options), a BLADE score on its
 * ground truth (`ground_truth: shipped | vN`), so scores against two versions are both kept. Nothing is saved for a score with an error.
 * @returns whether it was saved.
 */
export async function saveRunScore(store: RunStore, s: RunScore): Promise<boolean> {
  if (s.error) return false;
  let options = s.checklist
    ? { ...s.options, checklist: s.checklist.source === 'authored' ? `v${s.checklist.version}` : 'native' }
    : s.options;
  if (s.groundTruth) {
    options = {
      ...options,
      ground_truth: s.groundTruth.source === 'authored' ? `v${s.groundTruth.version}` : 'shipped',
    };
  }
  if (s.preset) options = { ...options, preset: s.preset };
  await store.scores.save({
    runId: s.runId,
    benchmark: s.benchmark,
    judgeId: s.judgeId,
    options,
    summary: s.summary,
    detail: s,
    pending: s.pending,
    scoredAt: new Date().toISOString(),
  });
  return true;
}

/**
 * The checklist a run is scored against: an authored version (issue 15) or the suite's own items.
 * @param choice `latest` (authored when any, else native), `native`, or an authored version number.
 * @returns the block with that checklist as its hidden checklist, and what was used.
 * @throws LoupeInputError (subject `checklist version N`) when that version does not exist.
 */
export async function checklistFor(
  store: RunStore,
  def: BenchmarkDefinition,
  suite: Suite,
  block: Block,
  choice: 'latest' | 'native' | number,
): Promise<{ block: Block; used: ChecklistUsed }> {
  const spec = def.checklist!;
  const key = { suite: def.kind, suiteId: suite.id, blockId: block.id };
  const versions = choice === 'native' ? undefined : checklistStoreOf(store);
  const v = versions
    ? typeof choice === 'number'
      ? await versions.get(key, choice)
      : await versions.latest(key)
    : undefined;
  if (typeof choice === 'number' && !v) {
    const have = versions ? (await versions.versions(key)).map((x) => x.version) : [];
    throw new LoupeInputError(
      `checklist version ${choice}`,
      `block ${block.id} has ${have.length ? `versions ${have.join(', ')}` : 'no authored checklist'}`,
    );
  }
  if (v) {
    const items = activeChecklistItems(v.items);
    return {
      block: spec.withItems(block, items),
      used: { source: 'authored', version: v.version, hash: v.hash, items: items.length },
    };
  }
  const native = spec.nativeItems(block);
  const entity = spec.entityOf(block);
  return {
    block,
    used: {
      source: 'native',
      hash: checklistHash(authoredFromNative(native, spec.kind, entity)),
      items: native.length,
    },
  };
}

/**
 * The model name an assisted or forked run's scores are grouped and shown under: `gpt-x (assisted)`, `gpt-x (fork)`,
 * `gpt-x (assisted fork)`; the model itself for an unassisted run.
 */
export function assistedModel(model: string, label: string | undefined): string {
  return label ? `${model} (${label})` : model;
}

/** Adds `interventionsPerRun` (and the benchmark's solved-after metric) to an assisted / forked group's aggregate. */
function addAssistanceMetrics(a: ScoreAggregate, scores: readonly RunScore[]): void {
  const ids = new Set(a.runIds);
  const mine = scores.filter((s) => ids.has(s.runId) && s.benchmark === a.benchmark);
  const label = mine.find((s) => s.assistance?.label)?.assistance?.label;
  if (!label || !mine.length) return;
  a.assistance = label;
  a.metrics.interventionsPerRun = mine.reduce((n, s) => n + (s.assistance?.interventions ?? 0), 0) / mine.length;
  const solved = findBenchmark(a.benchmark)?.solvedAfterInterventions;
  if (solved) {
    const counts = mine.map((s) => s.assistance?.untilSolved).filter((x): x is number => typeof x === 'number');
    a.metrics[solved.metric] = counts.length ? counts.reduce((x, y) => x + y, 0) / counts.length : null;
    a.metrics[`${solved.metric}Runs`] = counts.length;
  }
}

/**
 * Aggregates run scores per (benchmark, model) with each benchmark's own aggregator (LongDA pools queries; DDR
 * averages over entities and fits Bradley–Terry novelty across models; BLADE bootstraps over datasets; the others
 * average per-run metrics). Runs of a benchmark this version does not know are averaged.
 * @param scores per-run scores; `judge` for judged aggregates (DDR novelty; omit to skip); `raw` the `--option` values;
 *   `preset` the preset they override (default `official`), recorded in every aggregate.
 * @returns one aggregate per group, sorted by benchmark then model.
 * @throws LoupeInputError for invalid options.
 */
export async function aggregateScores(
  scores: readonly RunScore[],
  judge?: Judge,
  raw: Record<string, string> = {},
  preset: ScorePreset = DEFAULT_SCORE_PRESET,
): Promise<ScoreAggregate[]> {
  const byBenchmark = new Map<string, Map<string, RunScore[]>>();
  for (const s of scores) {
    let m = byBenchmark.get(s.benchmark);
    if (!m) byBenchmark.set(s.benchmark, (m = new Map()));
    // Issue 20: assisted and forked runs are a group of their own, never pooled with unassisted runs of the model.
    const key = assistedModel(s.model, s.assistance?.label);
    let g = m.get(key);
    if (!g) m.set(key, (g = []));
    g.push(s);
  }
  const out: ScoreAggregate[] = [];
  for (const [kind, models] of byBenchmark) {
    const groups: ScoreGroup[] = [...models].map(([model, g]) => ({ model, scores: g }));
    const def = findBenchmark(kind);
    if (!def) {
      out.push(
        ...groups.map(({ model, scores: g }) => ({ ...aggregateBase(kind, model, g), metrics: meanSummaries(g) })),
      );
      continue;
    }
    const aggs = await def.aggregate(groups, {
      ...(judge ? { judge } : {}),
      options: benchmarkOptions(def, raw, preset),
      raw,
    });
    out.push(...aggs.map((a) => ({ ...a, preset })));
  }
  for (const a of out) addAssistanceMetrics(a, scores);
  return out.sort((a, b) => a.benchmark.localeCompare(b.benchmark) || a.model.localeCompare(b.model));
}
