/**
 * How run listings (the Runs view) tell runs apart (issue 42 defect 6), host-neutral: each run's profile (the
 * Bradley–Terry player, `runProfiles`) and its repeat index within that profile, a short id and its start time; forks
 * under the run they were forked from; and a run that ended "finished" although every tool call it made failed is
 * flagged, not shown like a good run.
 */
import { runProfiles, type RunProfile } from '../../core/review/pairwise.ts';
import type { RunRecord } from '../../core/store/records.ts';
import type { RunStore } from '../../core/store/types.ts';

/** A run as a listing shows it. */
export interface RunListing {
  /** `<profile> #<repeat>` (`gpt-x · T=0.2 #2`), `reference #1` for the reference agent. */
  label: string;
  /** The short id (the random tail of a run id) and the start time, `ab12cd34 · 11-28 04:06Z`. */
  ident: string;
  /** The status as shown: the stored status, or `finished, every tool call failed`. */
  status: string;
  /** Why the run is flagged (every tool call failed), or null. */
  flag: string | null;
  profile: RunProfile;
}

/** The short id of a run: the random tail of a generated id (`20261128T040625-ab12cd34` → `ab12cd34`), else the id cut to 12. */
export function shortRunId(id: string): string {
  const tail = id.slice(id.lastIndexOf('-') + 1);
  return tail.length >= 6 && tail.length < id.length ? tail : id.length > 12 ? `${id.slice(0, 11)}…` : id;
}

/** A start time as `MM-DD HH:MM` UTC with a `Z`; '' when unknown. */
function shortTime(iso: string | null): string {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(t) ? `${new Date(t).toISOString().slice(5, 16).replace('T', ' ')}Z` : '';
}

/**
 * Runs whose every tool call failed, with how many calls they made: the step summaries single out candidates (every
 * step with a call has an error), whose full steps are then read to count exactly. Runs with no tool call are not in it.
 * @returns run id → number of failed calls (all of them).
 */
export async function runsWithEveryCallFailed(
  store: RunStore,
  runs: readonly RunRecord[],
): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const r of runs) {
    if (r.steps <= 0 || r.status === 'running' || r.status === 'pending') continue;
    const sums = await store.getStepSummaries(r.id);
    const withCalls = sums.filter((s) => s.toolNames.length);
    if (!withCalls.length || !withCalls.every((s) => s.anyError)) continue;
    const calls = (await store.getSteps(r.id)).flatMap((s) => s.toolCalls);
    if (calls.length && calls.every((c) => c.isError)) out.set(r.id, calls.length);
  }
  return out;
}

/**
 * Labels of runs listed together: profile and repeat index (repeats of one profile on one block numbered by creation
 * time), short id, start time, status with a flag for a run whose every tool call failed.
 * @param runs the runs listed (give every run of the blocks shown, so repeat indices count them all);
 *   `failedCalls` from {@link runsWithEveryCallFailed}.
 * @returns run id → listing.
 */
export function runListings(
  runs: readonly RunRecord[],
  failedCalls: ReadonlyMap<string, number> = new Map(),
): Map<string, RunListing> {
  const profiles = runProfiles(runs);
  const out = new Map<string, RunListing>();
  for (const r of runs) {
    const p = profiles.get(r.id)!;
    const n = failedCalls.get(r.id);
    const flag = n !== undefined ? `every tool call failed (${n} call${n === 1 ? '' : 's'})` : null;
    out.set(r.id, {
      label: `${r.agent === 'reference' ? 'reference' : p.label} #${p.repeat}`,
      ident: [shortRunId(r.id), shortTime(r.startedAt ?? r.createdAt)].filter(Boolean).join(' · '),
      status: flag ? `${r.status}, ${flag}` : r.status,
      flag,
      profile: p,
    });
  }
  return out;
}

/**
 * Forks under the run they were forked from (`params.forkOf.runId`), at any depth; a fork whose parent is not among
 * `runs` stays at the top.
 * @returns the top-level runs and, per run id, its forks (both in the order given).
 */
export function forkTree<R extends Pick<RunRecord, 'id' | 'params'>>(
  runs: readonly R[],
): { roots: R[]; forks: Map<string, R[]> } {
  const byId = new Map(runs.map((r) => [r.id, r]));
  const parentOf = (r: R) => {
    const p = r.params.forkOf?.runId;
    return p && byId.has(p) ? p : undefined;
  };
  // a chain of forks that loops back (a hand-edited store) is cut where it loops: that run stays at the top
  const inCycle = (r: R) => {
    const seen = new Set<string>([r.id]);
    for (let p = parentOf(r); p !== undefined; p = parentOf(byId.get(p)!)) {
      if (seen.has(p)) return true;
      seen.add(p);
    }
    return false;
  };
  const forks = new Map<string, R[]>();
  const roots: R[] = [];
  for (const r of runs) {
    const parent = parentOf(r);
    if (parent && !inCycle(r)) forks.set(parent, [...(forks.get(parent) ?? []), r]);
    else roots.push(r);
  }
  return { roots, forks };
}
