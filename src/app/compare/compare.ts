/**
 * Comparing two run profiles of a benchmark from the run store (issue 48): each profile's headline metric over items
 * with a clustered CI, and the paired difference over the items both ran. A profile is the Bradley–Terry player
 * (`playerOf`, `src/core/review/pairwise.ts`: agent + model + hash of behaviour parameters). Every figure names the
 * runs it rests on; scored and unscored runs are never mixed.
 */
import { getBenchmark } from '../../core/benchmarks/registry.ts';
import type { BenchmarkDefinition } from '../../core/benchmarks/types.ts';
import type { RunScore } from '../../core/eval/run-score.ts';
import { playerOf, type Player } from '../../core/review/pairwise.ts';
import {
  designOfPaired,
  designOfProfile,
  minimumDetectableDifference,
  pairedDifference,
  profileEstimate,
  requiredItems,
  requiredRepeats,
  type Observation,
  type PairedDesign,
  type PairedDifference,
  type ProfileEstimate,
} from '../../core/stats/index.ts';
import type { RunRecord, StoredScore } from '../../core/store/records.ts';
import type { RunStore } from '../../core/store/types.ts';
import { canonicalJson } from '../../core/eval/judges/canonical.ts';
import { LoupeInputError } from '../../core/util/errors.ts';

/** The runs of one profile in a suite, each with its newest score (null: not scored, or partly). */
export interface ProfileRuns {
  player: Player;
  runs: { run: RunRecord; score: StoredScore | null }[];
}

/** What a figure rests on: the metric, where items come from, the runs, and repeats per item. */
export interface Basis {
  metric: string;
  /** `items`: the score's per-item credits (LongDA queries, checklist items), clustered by block; `blocks`: one value per block from the run summary. */
  unit: 'items' | 'blocks';
  clusterUnit: string;
  runIds: string[];
  judgeId: string;
}

/** One profile's headline with its clustered CI. */
export interface ProfileFigure {
  profile: Player;
  basis: Basis;
  estimate: ProfileEstimate;
}

/** The comparison of two profiles. */
export interface Comparison {
  suite: string;
  a: ProfileFigure;
  b: ProfileFigure;
  paired: PairedDifference;
  /** Power of this comparison: the minimum detectable difference at 80% power, α = 0.05 (null without repeats). */
  minimumDetectable: number | null;
  design: PairedDesign | null;
}

/**
 * The runs of a suite grouped by profile, each with its newest stored score.
 * @param store an open run store; @param suite benchmark kind. @returns profiles in order of first run (oldest first).
 */
export async function profilesOf(store: RunStore, suite: string): Promise<ProfileRuns[]> {
  const runs = (await store.listRuns({ suite })).reverse();
  const scores = await store.scores.list();
  const newest = new Map<string, StoredScore>();
  for (const s of scores) if (!newest.has(s.runId)) newest.set(s.runId, s);
  const by = new Map<string, ProfileRuns>();
  for (const run of runs) {
    const player = playerOf(run);
    const e = by.get(player.player) ?? { player, runs: [] };
    const s = newest.get(run.id) ?? null;
    e.runs.push({ run, score: s && s.pending === 0 ? s : null });
    by.set(player.player, e);
  }
  return [...by.values()];
}

/**
 * Finds a profile by its id (`agent · model · hash`), its label, or a model name that names exactly one profile.
 * @throws LoupeInputError naming `subject` when none matches or a model names several profiles (they are listed).
 */
export function resolveProfile(profiles: readonly ProfileRuns[], name: string, subject: string): ProfileRuns {
  const exact = profiles.find((p) => p.player.player === name) ?? profiles.find((p) => p.player.label === name);
  if (exact) return exact;
  const byModel = profiles.filter((p) => p.player.model === name || p.player.paramsHash === name);
  if (byModel.length === 1) return byModel[0]!;
  if (byModel.length > 1) {
    throw new LoupeInputError(
      subject,
      `model '${name}' names ${byModel.length} profiles; give one of: ${byModel.map((p) => p.player.player).join('; ')}`,
    );
  }
  throw new LoupeInputError(
    subject,
    `no profile '${name}' among the runs (profiles: ${profiles.map((p) => p.player.player).join('; ') || 'none'})`,
  );
}

/**
 * The observations of a profile: per item (the score's item credits) or per block (a run-summary metric).
 * @throws LoupeInputError when a run is unscored or partly scored (all of them named), the runs were scored with
 *   different judges or options, or the metric is missing from a score.
 */
export function observationsOf(
  def: BenchmarkDefinition,
  p: ProfileRuns,
  metric?: string,
): { obs: Observation[]; basis: Basis } {
  const unscored = p.runs.filter((r) => !r.score).map((r) => r.run.id);
  if (unscored.length) {
    throw new LoupeInputError(
      `profile ${p.player.player}`,
      `${unscored.length} of its ${p.runs.length} runs are not scored (or have judgements pending): ${unscored.join(', ')}; score them first — scored and unscored runs are not mixed`,
    );
  }
  if (!p.runs.length) throw new LoupeInputError(`profile ${p.player.player}`, 'has no runs');
  const keys = new Set(p.runs.map((r) => `${r.score!.judgeId} ${canonicalJson(r.score!.options)}`));
  if (keys.size > 1) {
    throw new LoupeInputError(
      `profile ${p.player.player}`,
      `its runs were scored with different judges or options (${[...keys].join(' | ')}); rescore them alike`,
    );
  }
  const outcomes = def.presentation.itemOutcomes;
  const perItem = outcomes !== null && (metric === undefined || metric === 'credit');
  const key = perItem ? 'credit' : (metric ?? def.presentation.mainMetric?.key);
  if (!key) throw new LoupeInputError('metric', `${def.title} has no headline metric: name one`);
  const obs: Observation[] = [];
  for (const { run, score } of p.runs) {
    if (perItem) {
      const items = outcomes(score!.detail as RunScore);
      if (!items.length) {
        throw new LoupeInputError(
          `run ${run.id}`,
          'its score has no per-item detail; compare a run-summary metric instead, or rescore it',
        );
      }
      for (const o of items) {
        if (o.credit === null) throw new LoupeInputError(`run ${run.id}`, `item ${o.ref} has no credit yet (pending)`);
        obs.push({ item: `${run.blockId}/${o.ref}`, cluster: run.blockId, value: o.credit, runId: run.id });
      }
    } else {
      const v = score!.summary[key];
      if (typeof v !== 'number' || !Number.isFinite(v)) {
        throw new LoupeInputError(
          `run ${run.id}`,
          `its score has no numeric '${key}' (metrics: ${Object.keys(score!.summary).join(', ')})`,
        );
      }
      obs.push({ item: run.blockId, cluster: run.blockId, value: v, runId: run.id });
    }
  }
  return {
    obs,
    basis: {
      metric: key,
      unit: perItem ? 'items' : 'blocks',
      clusterUnit: def.clusterUnit,
      runIds: p.runs.map((r) => r.run.id),
      judgeId: p.runs[0]!.score!.judgeId,
    },
  };
}

/**
 * Compares profiles A and B of a suite: each one's clustered mean and the paired difference A − B over shared items.
 * @param o suite kind, profile names (see {@link resolveProfile}), metric (default: per-item credit when the benchmark
 *   has item outcomes, else its headline), seeded bootstrap/permutation counts.
 * @throws LoupeInputError for an unknown suite or profile, unscored runs, or too few shared items/clusters.
 */
export async function compareProfiles(store: RunStore, o: CompareOptions): Promise<Comparison> {
  return (await compareWithObservations(store, o)).comparison;
}

/** Options of {@link compareProfiles}. */
export interface CompareOptions {
  suite: string;
  a: string;
  b: string;
  metric?: string;
  bootstrap?: number;
  seed?: number;
}

/**
 * {@link compareProfiles} with the observations of A and B it rests on (each names its run), for views that link an
 * item to its runs. @throws as {@link compareProfiles}.
 */
export async function compareWithObservations(
  store: RunStore,
  o: CompareOptions,
): Promise<{ comparison: Comparison; obsA: Observation[]; obsB: Observation[] }> {
  const def = getBenchmark(o.suite, 'suite');
  const profiles = await profilesOf(store, def.kind);
  const pa = resolveProfile(profiles, o.a, 'profile A');
  const pb = resolveProfile(profiles, o.b, 'profile B');
  if (pa === pb) throw new LoupeInputError('profile B', `is the same profile as A (${pa.player.player})`);
  const a = observationsOf(def, pa, o.metric);
  const b = observationsOf(def, pb, o.metric);
  if (a.basis.judgeId !== b.basis.judgeId) {
    throw new LoupeInputError(
      'profiles',
      `A was scored by ${a.basis.judgeId} and B by ${b.basis.judgeId}: rescore them alike`,
    );
  }
  const paired = pairedDifference(a.obs, b.obs, {
    bootstrap: o.bootstrap ?? 2000,
    permutations: o.bootstrap ?? 2000,
    seed: o.seed ?? 0,
  });
  const shared = new Set(paired.items.map((i) => i.item));
  let design: PairedDesign | null = null;
  try {
    design = designOfPaired(paired);
  } catch (e) {
    if (!(e instanceof LoupeInputError)) throw e;
  }
  const comparison: Comparison = {
    suite: def.kind,
    a: { profile: pa.player, basis: a.basis, estimate: profileEstimate(a.obs.filter((x) => shared.has(x.item))) },
    b: { profile: pb.player, basis: b.basis, estimate: profileEstimate(b.obs.filter((x) => shared.has(x.item))) },
    paired,
    design,
    minimumDetectable: design ? minimumDetectableDifference(design) : null,
  };
  return { comparison, obsA: a.obs, obsB: b.obs };
}

/** Power of a future comparison of one profile with a similar one. */
export interface PowerFigure {
  profile: Player;
  basis: Basis;
  estimate: ProfileEstimate;
  design: PairedDesign;
  delta: number;
  /** Repeats per item needed with the current items (null: repeats alone cannot reach it). */
  repeatsNeeded: number | null;
  /** Items and clusters needed with the current repeats. */
  itemsNeeded: { items: number; clusters: number };
  /** Minimum detectable difference of the current design. */
  minimumDetectable: number;
  correlation: number;
}

/**
 * Power for comparing a profile with a second of the same variances (Miller 2024 §5 via `designOfProfile`).
 * @throws LoupeInputError for an unknown suite or profile, unscored runs, δ ≤ 0, or no repeats.
 */
export async function profilePower(
  store: RunStore,
  o: { suite: string; profile: string; delta: number; metric?: string; correlation?: number },
): Promise<PowerFigure> {
  const def = getBenchmark(o.suite, 'suite');
  const p = resolveProfile(await profilesOf(store, def.kind), o.profile, 'profile');
  const { obs, basis } = observationsOf(def, p, o.metric);
  const estimate = profileEstimate(obs);
  const correlation = o.correlation ?? 0;
  const design = designOfProfile(estimate, correlation);
  return {
    profile: p.player,
    basis,
    estimate,
    design,
    delta: o.delta,
    correlation,
    repeatsNeeded: requiredRepeats(design, o.delta),
    itemsNeeded: requiredItems(design, o.delta),
    minimumDetectable: minimumDetectableDifference(design),
  };
}
