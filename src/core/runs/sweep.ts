/**
 * Sweeps (issue 27): blocks × repeats × model profiles, one work unit each, run by any number of workers on any
 * number of machines through the PostgreSQL job queue (`queue.ts`, pg-boss). Each unit is a run recorded when the
 * sweep is enqueued (status `pending`, the sweep's id in `runs.sweep_id`), so a sweep's progress is read from the
 * run store alone: queued / running / done / failed per model. A worker drives a unit's run with `driveQueuedRun`
 * under the run lease; a unit whose worker died is retried by the queue and resumes after its last committed step.
 * Source: issue 27 "Scale-out runs: sweeps of blocks × repeats × models".
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { LoupeInputError } from '../util/errors.ts';
import type { Logger } from '../util/log.ts';
import type { Block, Suite } from '../suites/types.ts';
import type { RunStore } from '../store/types.ts';
import type { RunRecord } from '../store/records.ts';
import type { LlmConfig } from '../agent/llm.ts';
import type { AgentRunResult, Budget, RunControl } from '../agent/loop.ts';
import type { AgentEvent, RunParams } from '../agent/types.ts';
import { createQueuedRun, driveQueuedRun, type KernelSettings } from './runner.ts';
import { reopenRun } from './reopen.ts';

/** A model profile of a sweep: the model configuration without its key; the key is read by each worker from `apiKeyEnv`. */
export type SweepProfile = Omit<LlmConfig, 'apiKey'>;

/**
 * One unit of a sweep: everything a worker needs to drive its run, as JSON (the queue job's data). Never a key:
 * `apiKeyEnv` names the environment variable each worker reads it from.
 */
export interface SweepUnit {
  sweepId: string;
  /** The run recorded for the unit when the sweep was enqueued. */
  runId: string;
  suiteKind: string;
  /** The suite root where the sweep was enqueued (a worker may be given its own with `--root`). */
  suiteRoot: string;
  loadOptions?: RunParams['loadOptions'];
  blockId: string;
  /** 1-based. */
  repeat: number;
  agent: 'llm' | 'reference';
  /** LLM units: the model profile. */
  profile?: SweepProfile;
  apiKeyEnv?: string;
  budget?: Budget;
  maxObservationChars?: number;
  toolSetOptions?: Record<string, string>;
  kernel: Omit<KernelSettings, 'sandbox'>;
  referenceDir?: string;
}

/** What a sweep is made of (see {@link planSweep}). */
export interface SweepSpec {
  /** Given (letters, digits, `.`, `_`, `-`; 1–64 characters) or made by {@link newSweepId}. */
  sweepId: string;
  suite: Suite;
  blocks: Block[];
  repeats: number;
  agent: 'llm' | 'reference';
  /** LLM sweeps: one or more profiles (each unit of a block × repeat is run once per profile). */
  profiles: SweepProfile[];
  apiKeyEnv?: string;
  budget?: Budget;
  maxObservationChars?: number;
  toolSetOptions?: Record<string, string>;
  loadOptions?: RunParams['loadOptions'];
  kernel: Omit<KernelSettings, 'sandbox'>;
  referenceDir?: string;
}

const SWEEP_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** A new sweep id: `sweep-<UTC time>-<6 hex>`. */
export function newSweepId(now = new Date()): string {
  return `sweep-${now.toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${randomBytes(3).toString('hex')}`;
}

/**
 * The units of a sweep, blocks × repeats × profiles in that order, run ids `<sweep id>-u0001`, ...
 * @param s the sweep; `repeats` ≥ 1; LLM sweeps need ≥ 1 profile, reference sweeps none.
 * @returns the units (JSON-serialisable).
 * @throws LoupeInputError naming the sweep id, the repeats or the profiles when they are malformed.
 */
export function planSweep(s: SweepSpec): SweepUnit[] {
  if (!SWEEP_ID.test(s.sweepId)) {
    throw new LoupeInputError(`sweep ${s.sweepId}`, 'a sweep id is 1–64 letters, digits, ".", "_" or "-"');
  }
  if (!Number.isInteger(s.repeats) || s.repeats < 1) {
    throw new LoupeInputError('repeats', `must be a whole number ≥ 1, got ${s.repeats}`);
  }
  if (s.agent === 'llm' && !s.profiles.length) {
    throw new LoupeInputError('model profiles', 'an llm sweep needs at least one model');
  }
  if (!s.blocks.length) throw new LoupeInputError(`sweep ${s.sweepId}`, 'no block to run');
  const profiles: (SweepProfile | undefined)[] = s.agent === 'llm' ? s.profiles : [undefined];
  const units: SweepUnit[] = [];
  for (const block of s.blocks) {
    for (let repeat = 1; repeat <= s.repeats; repeat++) {
      for (const profile of profiles) {
        units.push({
          sweepId: s.sweepId,
          runId: `${s.sweepId}-u${String(units.length + 1).padStart(4, '0')}`,
          suiteKind: s.suite.kind,
          suiteRoot: s.suite.root,
          ...(s.loadOptions && Object.keys(s.loadOptions).length ? { loadOptions: s.loadOptions } : {}),
          blockId: block.id,
          repeat,
          agent: s.agent,
          ...(profile ? { profile, apiKeyEnv: s.apiKeyEnv ?? 'OPENAI_API_KEY' } : {}),
          ...(s.budget ? { budget: s.budget } : {}),
          ...(s.maxObservationChars != null ? { maxObservationChars: s.maxObservationChars } : {}),
          ...(s.toolSetOptions && Object.keys(s.toolSetOptions).length ? { toolSetOptions: s.toolSetOptions } : {}),
          kernel: s.kernel,
          ...(s.referenceDir ? { referenceDir: s.referenceDir } : {}),
        });
      }
    }
  }
  return units;
}

/**
 * Records the runs of a sweep's units (status `pending`, sandboxed: a worker always runs agent code in bubblewrap).
 * Call before the units are enqueued, so that a worker always finds its unit's run.
 * @param store the team store the workers will use; `suite` the loaded suite the units' blocks are from;
 *   `runsDir` a placeholder folder for the recorded workspace (the worker records its own).
 * @returns the stored runs, in the units' order.
 * @throws LoupeInputError when the store already holds a unit of this sweep (a sweep id is used once), or for an
 *   unrunnable block or bad model configuration (nothing is recorded then).
 */
export async function recordSweepRuns(
  store: RunStore,
  suite: Suite,
  units: SweepUnit[],
  runsDir: string,
): Promise<RunRecord[]> {
  if (!units.length) return [];
  const sweepId = units[0]!.sweepId;
  if ((await store.listRuns({ sweepId, limit: 1 })).length) {
    throw new LoupeInputError(`sweep ${sweepId}`, `already exists in ${store.location}: give another sweep id`);
  }
  const blocks = new Map(suite.blocks.map((b) => [b.id, b]));
  for (const u of units) {
    if (!blocks.get(u.blockId)?.runnable) {
      throw new LoupeInputError(u.blockId, `block is not runnable in ${suite.root}`);
    }
  }
  const out: RunRecord[] = [];
  try {
    for (const u of units) await record(u);
  } catch (e) {
    for (const r of out) await store.deleteRun(r.id).catch(() => undefined); // all or nothing
    throw e;
  }
  return out;

  async function record(u: SweepUnit): Promise<void> {
    out.push(
      await createQueuedRun({
        store,
        suite,
        block: blocks.get(u.blockId)!,
        agent: u.agent,
        ...(u.profile ? { llm: { ...u.profile, apiKey: '' } } : {}),
        runsDir,
        kernel: { ...u.kernel, sandbox: 'bubblewrap' },
        ...(u.budget ? { budget: u.budget } : {}),
        repeat: u.repeat,
        ...(u.maxObservationChars != null ? { maxObservationChars: u.maxObservationChars } : {}),
        ...(u.toolSetOptions ? { toolSetOptions: u.toolSetOptions } : {}),
        ...(u.loadOptions ? { loadOptions: u.loadOptions } : {}),
        ...(u.referenceDir ? { referenceDir: u.referenceDir } : {}),
        runId: u.runId,
        sweepId,
      }),
    );
  }
}

/**
 * Whether a unit's run has its outcome (the queue completes the unit) or must be tried again (the queue retries it):
 * finished, budget exhausted, or failed by the agent or the model's answers are outcomes; a run still pending or
 * running (its worker died), cancelled (a worker stopped) or failed by an internal error (the store was unreachable)
 * is not.
 * @param run the unit's run as stored.
 */
export function unitSettled(run: Pick<RunRecord, 'status' | 'statusReason'>): boolean {
  if (run.status === 'finished' || run.status === 'budget_exhausted') return true;
  if (run.status === 'failed') return !/^internal error/.test(run.statusReason ?? '');
  return false;
}

/** How a worker drives units (the same for every unit it takes). */
export interface UnitDriver {
  store: RunStore;
  /** Run folders on this machine. */
  runsDir: string;
  /** This machine's suite root (default: the unit's). */
  suiteRoot?: string;
  env: NodeJS.ProcessEnv;
  /** Sandbox settings of this worker (always bubblewrap; `python` overrides the unit's). */
  kernel: KernelSettings;
  log?: Logger;
  /** Suites loaded by this worker, by root (reused across units). */
  suites?: Map<string, Promise<Suite>>;
  onEvent?: (unit: SweepUnit, e: AgentEvent) => void;
  /** A control per unit (the worker stops them on shutdown). */
  control?: (unit: SweepUnit) => RunControl | undefined;
}

/**
 * Drives one unit's run on this machine: starts it, or resumes it after its last committed step, or does nothing when
 * it already has its outcome (a retry of a unit whose completion was lost).
 * @returns the run as stored afterwards and whether it is settled ({@link unitSettled}); `result` when it was driven.
 * @throws LoupeInputError when the unit's run is gone or its suite cannot be loaded here; RunLeaseError when another
 *   live process drives it; the store's errors (the queue retries the unit on any of them).
 */
export async function runSweepUnit(
  d: UnitDriver,
  unit: SweepUnit,
): Promise<{ run: RunRecord; settled: boolean; result?: AgentRunResult }> {
  const before = await d.store.getRun(unit.runId);
  if (!before) {
    throw new LoupeInputError(
      `run ${unit.runId}`,
      `the run of this unit of sweep ${unit.sweepId} is not in ${d.store.location} (deleted?)`,
    );
  }
  if (unitSettled(before)) return { run: before, settled: true };
  const driving = drivingOf(d);
  if (driving.has(unit.runId)) throw new Error(`run ${unit.runId} is already being driven by this worker`);
  // A lease this very process still holds for a run it no longer drives (its release failed while the database was
  // away) is given up here, so that the retry does not wait for it to lapse.
  const lease = await d.store.getRunLease(unit.runId);
  if (lease && lease.pid === process.pid && lease.host === hostname()) {
    await d.store.releaseRunLease(unit.runId, lease.owner);
    await d.store.addEvent(
      unit.runId,
      'lease',
      `gave up the lease ${lease.owner} left by an earlier attempt of this worker`,
    );
  }
  driving.add(unit.runId);
  try {
    return await driveUnit(d, unit, before);
  } finally {
    driving.delete(unit.runId);
  }
}

const drivingByDriver = new WeakMap<UnitDriver, Set<string>>();
function drivingOf(d: UnitDriver): Set<string> {
  let s = drivingByDriver.get(d);
  if (!s) drivingByDriver.set(d, (s = new Set()));
  return s;
}

async function driveUnit(
  d: UnitDriver,
  unit: SweepUnit,
  before: RunRecord,
): Promise<{ run: RunRecord; settled: boolean; result?: AgentRunResult }> {
  const { suite, block } = await reopenRun(before, {
    suiteRoot: d.suiteRoot ?? unit.suiteRoot,
    ...(unit.loadOptions ? { loadOptions: unit.loadOptions } : {}),
    ...(d.suites ? { suites: d.suites } : {}),
  });
  const llm: LlmConfig | undefined = unit.profile
    ? { ...unit.profile, apiKey: d.env[unit.apiKeyEnv ?? 'OPENAI_API_KEY'] ?? '' }
    : undefined;
  const control = d.control?.(unit);
  const result = await driveQueuedRun({
    store: d.store,
    suite,
    block,
    agent: unit.agent,
    ...(llm ? { llm } : {}),
    runsDir: d.runsDir,
    kernel: { ...unit.kernel, ...d.kernel },
    ...(unit.budget ? { budget: unit.budget } : {}),
    repeat: unit.repeat,
    ...(unit.maxObservationChars != null ? { maxObservationChars: unit.maxObservationChars } : {}),
    ...(unit.toolSetOptions ? { toolSetOptions: unit.toolSetOptions } : {}),
    ...(unit.loadOptions ? { loadOptions: unit.loadOptions } : {}),
    ...(unit.referenceDir ? { referenceDir: unit.referenceDir } : {}),
    ...(control ? { control } : {}),
    ...(d.log ? { log: d.log } : {}),
    ...(d.onEvent ? { onEvent: (e: AgentEvent) => d.onEvent!(unit, e) } : {}),
    runId: unit.runId,
  });
  const run = (await d.store.getRun(unit.runId))!;
  return { run, settled: unitSettled(run), result };
}

/** Progress of one model of a sweep (unit counts). */
export interface SweepModelProgress {
  /** The model (or `reference`). */
  model: string;
  total: number;
  /** Not started yet, or waiting for a retry. */
  queued: number;
  running: number;
  /** Finished or budget exhausted. */
  done: number;
  /** Failed by the agent or the model (settled). */
  failed: number;
}

/** Progress of a sweep: per model, in first-seen order, and the totals. */
export interface SweepProgress {
  sweepId: string;
  models: SweepModelProgress[];
  total: SweepModelProgress;
}

/** The progress column a unit's run falls in. */
export function unitState(run: Pick<RunRecord, 'status' | 'statusReason'>): 'queued' | 'running' | 'done' | 'failed' {
  if (run.status === 'finished' || run.status === 'budget_exhausted') return 'done';
  if (run.status === 'running') return 'running';
  if (unitSettled(run)) return 'failed';
  return 'queued';
}

/**
 * Counts a sweep's units by state and model, from the run store alone (engine-independent).
 * @param runs the sweep's runs (`store.listRuns({ sweepId })`).
 * @returns per-model counts (models in the order of their first unit) and the totals.
 */
export function sweepProgressOf(sweepId: string, runs: RunRecord[]): SweepProgress {
  const by = new Map<string, SweepModelProgress>();
  const total: SweepModelProgress = { model: 'all', total: 0, queued: 0, running: 0, done: 0, failed: 0 };
  for (const r of [...runs].sort((a, b) => a.id.localeCompare(b.id))) {
    const model = r.model ?? r.agent;
    let m = by.get(model);
    if (!m) by.set(model, (m = { model, total: 0, queued: 0, running: 0, done: 0, failed: 0 }));
    const st = unitState(r);
    m.total++;
    m[st]++;
    total.total++;
    total[st]++;
  }
  return { sweepId, models: [...by.values()], total };
}

/**
 * A sweep's progress as stored.
 * @throws LoupeInputError naming the sweep when the store holds none of its units.
 */
export async function sweepProgress(store: RunStore, sweepId: string): Promise<SweepProgress> {
  const runs = await store.listRuns({ sweepId });
  if (!runs.length) throw new LoupeInputError(`sweep ${sweepId}`, `no unit of this sweep in ${store.location}`);
  return sweepProgressOf(sweepId, runs);
}
