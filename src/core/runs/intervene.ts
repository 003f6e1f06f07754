/**
 * Interventions and forks of recorded runs (issue 20), the parts that do not drive a run: who may intervene on a run,
 * adding a human step to a run no process drives (under its lease, refused while another process holds it), and
 * reading a fork point (the parent's steps, cells and human steps up to it). The live path — a paused run this process
 * drives — is {@link RunControl.intervene}; forks are run by `startBlockRun` with `forkOf`.
 * Source: issue 20 "Step into a run".
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { LoupeInputError } from '../util/errors.ts';
import { RUN_LEASE_TTL_MS, RunLeaseError, validateIntervention, type InterventionInput } from '../agent/loop.ts';
import type { RunStore } from '../store/types.ts';
import type { InterventionRecord, KernelCellRecord, RunRecord, StepRecord } from '../store/records.ts';

/** Whether an analyst can step into a run: only runs of Loupe's own agent read messages. */
export type InterventionSupport = { ok: true } | { ok: false; reason: string };

/**
 * Whether a run can take interventions. Loupe's LLM agent can; the reference agent follows a fixed script and reads no
 * messages; any other agent is an external client (e.g. over MCP) that Loupe does not drive.
 * @param run the stored run. @returns ok, or the reason in plain words (no CLI flags).
 */
export function interventionSupport(run: Pick<RunRecord, 'id' | 'agent'>): InterventionSupport {
  if (run.agent === 'llm') return { ok: true };
  if (run.agent === 'reference') {
    return {
      ok: false,
      reason: `run ${run.id} is the reference agent's: it follows a fixed script and reads no messages, so it cannot be intervened on (fork it with a model instead)`,
    };
  }
  if (run.agent.startsWith('mcp:')) {
    return {
      ok: false,
      reason: `run ${run.id} was made by an external MCP client (${run.agent.slice(4)}): Loupe only answers its tool calls and cannot send it a message, so MCP runs cannot be intervened on (give the hint to the client itself)`,
    };
  }
  if (run.agent.startsWith('human:')) {
    return {
      ok: false,
      reason: `run ${run.id} is a human baseline by ${run.agent.slice(6)}: its steps are the expert's own actions, so it takes no interventions (a hint would make it no longer a baseline)`,
    };
  }
  return {
    ok: false,
    reason: `run ${run.id} was made by an external client (${run.agent}) that Loupe does not drive: interventions apply to Loupe's own agent only`,
  };
}

/** A run's human steps summarised: how many, and whether it is a fork. */
export interface RunAssistance {
  interventions: number;
  /** An analyst ran code in the agent's kernel while the agent was running (run event `assisted`, issue 9). */
  analystCode?: boolean;
  /** Set for a fork: its parent and fork point (1-based step count replayed). */
  forkOf?: { runId: string; step: number };
}

/**
 * The label a run's scores are kept apart under: `assisted` (has human steps), `fork` (continues another run's steps),
 * `assisted fork`, or undefined for a plain unassisted run.
 */
export function assistanceLabel(a: RunAssistance | undefined): 'assisted' | 'fork' | 'assisted fork' | undefined {
  if (!a) return undefined;
  if (a.interventions > 0 || a.analystCode) return a.forkOf ? 'assisted fork' : 'assisted';
  return a.forkOf ? 'fork' : undefined;
}

/**
 * The assistance of several runs in one read.
 * @returns run id → {@link RunAssistance} (interventions 0 and no forkOf for a plain run).
 */
export async function assistanceOf(store: RunStore, runs: readonly RunRecord[]): Promise<Map<string, RunAssistance>> {
  const ids = runs.map((r) => r.id);
  const [all, code] = await Promise.all([store.getInterventionsOf(ids), store.getEventsOf(ids, 'assisted')]);
  return new Map(
    runs.map((r) => [
      r.id,
      {
        interventions: all.get(r.id)?.length ?? 0,
        ...((code.get(r.id)?.length ?? 0) > 0 ? { analystCode: true } : {}),
        ...(r.params.forkOf ? { forkOf: r.params.forkOf } : {}),
      },
    ]),
  );
}

/**
 * Adds a human step to a stored run that no live process drives (a paused-and-stopped, failed or budget-exhausted run),
 * taking the run's lease for the write; the next `resume` sends it with the first model request.
 * @param input who, kind (`hint` default) and text.
 * @returns the stored record (`beforeStep` = the run's committed steps).
 * @throws LoupeInputError for an unknown run, a run that cannot take interventions (reference agent, external client),
 *   a finished run, or invalid input; RunLeaseError naming the process that drives the run now.
 */
export async function interveneStoredRun(
  store: RunStore,
  runId: string,
  input: InterventionInput,
): Promise<InterventionRecord> {
  const v = validateIntervention(input);
  const run = await store.getRun(runId);
  if (!run) throw new LoupeInputError(`run ${runId}`, `not found in ${store.location}`);
  const sup = interventionSupport(run);
  if (!sup.ok) throw new LoupeInputError(`run ${runId}`, sup.reason);
  if (run.status === 'finished') {
    throw new LoupeInputError(`run ${runId}`, 'already finished: fork it from a step to continue it with a hint');
  }
  const owner = `${hostname()}:${process.pid}:intervene-${randomUUID().slice(0, 8)}`;
  const lease = await store.acquireRunLease(runId, { owner, host: hostname(), pid: process.pid }, RUN_LEASE_TTL_MS);
  if (!lease.ok) throw new RunLeaseError(runId, lease.holder);
  try {
    const rec = await store.addIntervention({ runId, ...v }, owner);
    if (!rec) {
      const holder = await store.getRunLease(runId);
      if (holder) throw new RunLeaseError(runId, holder);
      throw new LoupeInputError(
        `run ${runId}`,
        'its lease was taken while the intervention was being recorded; nothing was recorded',
      );
    }
    return rec;
  } finally {
    await store.releaseRunLease(runId, owner);
  }
}

/** What a fork replays: the parent's first `step` steps, their kernel cells and the human steps before the fork point. */
export interface ForkPoint {
  parent: RunRecord;
  step: number;
  steps: StepRecord[];
  cells: KernelCellRecord[];
  interventions: InterventionRecord[];
}

/**
 * Reads a fork point of a stored run.
 * @param step 1-based number of the parent's steps to replay (0 = start over from the task prompt).
 * @returns the parent's steps 1..step, their cells (not state-rebuild replays) and interventions placed before step+1.
 * @throws LoupeInputError for an unknown parent, a block other than `blockId`, or a fork point that is not a whole
 *   number in 0..(the parent's last step).
 */
export async function readForkPoint(
  store: RunStore,
  parentRunId: string,
  step: number,
  blockId?: string,
): Promise<ForkPoint> {
  const parent = await store.getRun(parentRunId);
  if (!parent) throw new LoupeInputError(`run ${parentRunId}`, `not found in ${store.location}`);
  if (blockId !== undefined && parent.blockId !== blockId) {
    throw new LoupeInputError(`run ${parentRunId}`, `is for block ${parent.blockId}, not ${blockId}`);
  }
  const all = await store.getSteps(parentRunId);
  if (!Number.isInteger(step) || step < 0) {
    throw new LoupeInputError(`fork point ${step}`, 'must be a step number (0 to start over)');
  }
  if (step > all.length) {
    throw new LoupeInputError(
      `fork point ${step}`,
      `is beyond the last step of run ${parentRunId} (it has ${all.length} step${all.length === 1 ? '' : 's'})`,
    );
  }
  const steps = all.slice(0, step);
  const cells = (await store.getCells(parentRunId, { includeReplays: false, withFigures: false })).filter(
    (c) => c.stepIndex >= 0 && c.stepIndex < step,
  );
  const interventions = (await store.getInterventions(parentRunId)).filter((i) => i.beforeStep <= step);
  return { parent, step, steps, cells, interventions };
}

/**
 * Parses `RUN@STEP` (the CLI's fork point).
 * @returns the run id and the 1-based step. @throws LoupeInputError naming the text when it is not of that form.
 */
export function parseForkSpec(spec: string): { runId: string; step: number } {
  const m = /^(.+)@(\d+)$/.exec(spec.trim());
  if (!m) throw new LoupeInputError(`fork point '${spec}'`, 'write it as RUN@STEP, e.g. 20261125T101500-1a2b3c4d@3');
  return { runId: m[1]!, step: Number(m[2]) };
}

/**
 * Copies the parent's human steps before the fork point into a new fork (and the fork's own hint, placed before its first
 * new step), under a lease the caller does not hold yet.
 * @returns the copies in order.
 */
export async function seedForkInterventions(
  store: RunStore,
  forkRunId: string,
  fork: ForkPoint,
  hint?: InterventionInput,
): Promise<InterventionRecord[]> {
  const items = fork.interventions.map((i) => ({
    who: i.who,
    kind: i.kind,
    text: i.text,
    at: i.at,
    beforeStep: i.beforeStep,
  }));
  if (hint) items.push({ ...validateIntervention(hint), at: new Date().toISOString(), beforeStep: fork.step });
  if (!items.length) return [];
  const owner = `${hostname()}:${process.pid}:fork-${randomUUID().slice(0, 8)}`;
  const lease = await store.acquireRunLease(forkRunId, { owner, host: hostname(), pid: process.pid }, RUN_LEASE_TTL_MS);
  if (!lease.ok) throw new RunLeaseError(forkRunId, lease.holder);
  try {
    const out: InterventionRecord[] = [];
    for (const i of items) {
      const rec = await store.addIntervention({ runId: forkRunId, ...i }, owner);
      if (rec) out.push(rec);
    }
    return out;
  } finally {
    await store.releaseRunLease(forkRunId, owner);
  }
}
