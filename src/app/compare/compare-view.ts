/**
 * The host-neutral view model of the "Compare two profiles" panel (issue 48): what the pickers offer (suites and the
 * profiles whose runs are all scored) and the comparison as the panel shows it — the same numbers as
 * `loupe compare --json` (`compareProfiles`), with the runs behind each disagreeing item.
 */
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import type { Observation } from '../../core/stats/index.ts';
import type { RunStore } from '../../core/store/types.ts';
import type { CompareDisagreement, CompareFigure, CompareResult } from '../../protocol/compare.ts';
import {
  compareWithObservations,
  profilesOf,
  type CompareOptions,
  type Comparison,
  type ProfileFigure,
} from './compare.ts';

/** A profile a picker offers: every one of its runs of the suite is scored. */
export interface ProfileChoice {
  player: string;
  label: string;
  model: string | null;
  runs: number;
  blocks: number;
}

/** A suite the picker offers: its comparable profiles, and the profiles left out (some run unscored). */
export interface SuiteChoice {
  suite: string;
  title: string;
  profiles: ProfileChoice[];
  leftOut: { player: string; unscored: number; runs: number }[];
}

/**
 * What the pickers offer: every suite of the store's runs with the profiles whose runs are all scored (a profile with
 * an unscored run would be refused by the comparison, so it is listed apart, with its count, never offered).
 * @param store an open run store. @returns suites in order of kind; a suite with fewer than two comparable profiles is
 *   kept (the panel says why it cannot compare), an unregistered suite kind is skipped.
 */
export async function compareChoices(store: RunStore): Promise<SuiteChoice[]> {
  const kinds = [...new Set((await store.listRuns()).map((r) => r.suite))].sort();
  const out: SuiteChoice[] = [];
  for (const kind of kinds) {
    const def = findBenchmark(kind);
    if (!def) continue;
    const profiles: ProfileChoice[] = [];
    const leftOut: SuiteChoice['leftOut'] = [];
    for (const p of await profilesOf(store, def.kind)) {
      const unscored = p.runs.filter((r) => !r.score).length;
      if (unscored) leftOut.push({ player: p.player.player, unscored, runs: p.runs.length });
      else if (p.runs.length) {
        profiles.push({
          player: p.player.player,
          label: p.player.label,
          model: p.player.model,
          runs: p.runs.length,
          blocks: new Set(p.runs.map((r) => r.run.blockId)).size,
        });
      }
    }
    out.push({ suite: def.kind, title: def.title, profiles, leftOut });
  }
  return out;
}

function figure(f: ProfileFigure): CompareFigure {
  const e = f.estimate;
  return {
    profile: { player: f.profile.player, label: f.profile.label, agent: f.profile.agent, model: f.profile.model },
    metric: f.basis.metric,
    unit: f.basis.unit,
    clusterUnit: f.basis.clusterUnit,
    judgeId: f.basis.judgeId,
    mean: e.mean,
    se: e.se,
    ci: [e.ci[0], e.ci[1]],
    n: e.n,
    clusters: e.clusters,
    repeats: { ...e.repeats },
    withinItemVariance: e.withinItemVariance,
    runIds: [...f.basis.runIds],
  };
}

function runsByItem(obs: readonly Observation[]): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const o of obs) {
    if (!o.runId) continue;
    const l = m.get(o.item) ?? [];
    if (!l.includes(o.runId)) l.push(o.runId);
    m.set(o.item, l);
  }
  return m;
}

/**
 * The panel's view of a comparison: the numbers of `loupe compare --json` copied as they are (no rounding; the
 * webview formats them), every disagreement with the runs of A and of B on that item.
 * @param c the comparison; @param obsA / obsB the observations it rests on (runs per item; empty lists when unknown).
 */
export function compareResultOf(
  c: Comparison,
  obsA: readonly Observation[] = [],
  obsB: readonly Observation[] = [],
): CompareResult {
  const p = c.paired;
  const d = p.difference;
  const ra = runsByItem(obsA);
  const rb = runsByItem(obsB);
  const disagreements: CompareDisagreement[] = p.disagreements.map((i) => ({
    item: i.item,
    cluster: i.cluster,
    a: i.a,
    b: i.b,
    diff: i.diff,
    repeatsA: i.repeatsA,
    repeatsB: i.repeatsB,
    runIdsA: ra.get(i.item) ?? [],
    runIdsB: rb.get(i.item) ?? [],
  }));
  return {
    suite: c.suite,
    a: figure(c.a),
    b: figure(c.b),
    difference: {
      mean: d.mean,
      se: d.se,
      seMillerUncorrected: d.seMillerUncorrected,
      seIid: d.seIid,
      ci: [d.ci[0], d.ci[1]],
      level: d.level,
      n: d.n,
      clusters: d.clusters,
      noVariation: d.noVariation,
    },
    pairedT: {
      t: p.pairedT.t,
      df: p.pairedT.df,
      p: p.pairedT.p,
      ci: [p.pairedT.ci[0], p.pairedT.ci[1]],
      ...(p.pairedT.degenerate ? { degenerate: p.pairedT.degenerate } : {}),
    },
    bootstrap: p.bootstrap ? { ...p.bootstrap, ci: [p.bootstrap.ci[0], p.bootstrap.ci[1]] } : null,
    permutation: p.permutation ? { ...p.permutation } : null,
    minimumDetectable: c.minimumDetectable,
    onlyA: p.onlyA.length,
    onlyB: p.onlyB.length,
    disagreements,
  };
}

/**
 * Compares two profiles of a suite from the store as the panel shows it (the same computation as `loupe compare`).
 * @throws LoupeInputError as `compareProfiles` (unknown suite or profile, unscored runs, too few shared items).
 */
export async function compareView(store: RunStore, o: CompareOptions): Promise<CompareResult> {
  const { comparison, obsA, obsB } = await compareWithObservations(store, o);
  return compareResultOf(comparison, obsA, obsB);
}
