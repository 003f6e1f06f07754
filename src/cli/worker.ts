import { resolve } from 'node:path';
import { hostname } from 'node:os';
import { parseStoreLocation, type PostgresLocation } from '../core/store/location.ts';
import { openStoreAt } from '../core/store/open.ts';
import { probeSandbox, SANDBOX_REFUSED_EXIT } from '../core/kernel/sandbox-probe.ts';
import { RunControl } from '../core/agent/loop.ts';
import { openUnitQueue } from '../core/runs/queue.ts';
import { runSweepUnit, unitSettled, type SweepUnit, type UnitDriver } from '../core/runs/sweep.ts';
import type { Suite } from '../core/benchmarks/index.ts';
import type { KernelSettings } from '../core/runs/runner.ts';
import { streamLogger } from '../core/util/log.ts';
import { progressPrinter } from './run.ts';
import { STORE_OPTIONS, storeLocation } from './store-arg.ts';
import { UsageError } from './types.ts';
import { JSON_OPTIONS, VERBOSE_OPTIONS } from './option-groups.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';

const DECL = declareCommand({
  synopsis: 'worker',
  groups: [
    optionGroup('worker', {
      queue: {
        type: 'string',
        value: 'postgres://...',
        help: "the queue's database when it is not the store's (as given to loupe run --queue)",
      },
      concurrency: { type: 'string', value: 'N', help: 'units driven at a time (default 1)' },
      root: {
        type: 'string',
        value: 'DIR',
        help: 'where the suite is on this machine (default: the root recorded when the sweep was enqueued)',
      },
      'runs-dir': {
        type: 'string',
        value: 'DIR',
        help: 'run folders (workspaces) on this machine (default ./.loupe/runs)',
      },
      python: { type: 'string', value: 'PATH', help: 'the Python interpreter (default $LOUPE_PYTHON, else found)' },
      'until-empty': {
        type: 'boolean',
        help: "exit 0 once no unit is queued, waiting for a retry or held by any worker (a Kubernetes Job's pods)",
      },
      'supervise-s': {
        type: 'string',
        value: 'N',
        help: 'how often this worker looks for units whose worker stopped sending heartbeats (default 5)',
      },
    }),
    STORE_OPTIONS,
    VERBOSE_OPTIONS,
    JSON_OPTIONS,
  ],
  notes: `  --store is required and is the team store (postgres://USER@HOST:PORT/DB?passwordEnv=VAR).
  Takes units of sweeps (loupe run ... --queue) from the PostgreSQL job queue and drives their runs here, N at a time
  (default 1), on as many machines as you like. A unit whose worker died is retried by the queue and resumes after
  its last committed step (kernel state rebuilt by replay) under the run lease: no step is recorded twice or lost.
  Agent code always runs in the bubblewrap sandbox: a worker that cannot create it refuses to start (exit ${SANDBOX_REFUSED_EXIT}).
  SIGTERM / Ctrl-C: the runs in hand stop after their current step and go back to the queue.
  Model keys: each unit names the environment variable its key is read from (loupe run --api-key-env, default OPENAI_API_KEY).`,
});

function posInt(v: string | undefined, name: string, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a whole number ≥ 1, got '${v}'`);
  return n;
}

export const workerCommand = defineCommand({
  name: 'worker',
  summary: 'drive units of sweeps from the PostgreSQL job queue (any number of workers, on any number of machines)',
  declarations: [DECL],
  async run(argv, io) {
    const { values: v } = parseCommand(DECL, argv);
    if (!v.store) throw new UsageError('--store postgres://... is required: workers share the team store');
    const loc = storeLocation(io, v.store);
    if (loc.engine !== 'postgres') {
      throw new UsageError(
        `--store ${loc.file}: a worker needs the team store (postgres://...): workers on other machines cannot reach a SQLite file`,
      );
    }
    let queueLoc: PostgresLocation = loc;
    if (v.queue) {
      let q;
      try {
        q = parseStoreLocation(v.queue, io.cwd, io.env);
      } catch (e) {
        throw new UsageError(`--queue ${(e as Error).message}`);
      }
      if (q.engine !== 'postgres') {
        throw new UsageError(`--queue ${v.queue}: the queue is a PostgreSQL database (postgres://...)`);
      }
      queueLoc = q;
    }
    const concurrency = posInt(v.concurrency, 'concurrency', 1);
    const superviseSeconds = posInt(v['supervise-s'], 'supervise-s', 5);
    // Never unsandboxed: a worker that cannot create the sandbox takes no unit.
    const probe = await probeSandbox(io.env);
    if (!probe.ok) {
      io.err(
        `loupe worker: refusing to start on ${hostname()}: ${probe.reason}. A worker never runs agent code without the sandbox.\n`,
      );
      return SANDBOX_REFUSED_EXIT;
    }
    const log = streamLogger({ write: (s: string) => io.err(s) }, v.verbose ? 'debug' : 'warn');
    const store = await openStoreAt(loc, { env: io.env });
    let queue;
    try {
      queue = await openUnitQueue(queueLoc, { env: io.env, supervise: true, superviseSeconds, log });
    } catch (e) {
      await store.close();
      throw e;
    }
    const controls = new Map<string, RunControl>();
    const kernel: KernelSettings = {
      sandbox: 'bubblewrap',
      ...((v.python ?? io.env.LOUPE_PYTHON) ? { python: v.python ?? io.env.LOUPE_PYTHON } : {}),
    };
    const suites = new Map<string, Promise<Suite>>();
    const driver: UnitDriver = {
      store,
      runsDir: resolve(io.cwd, v['runs-dir'] ?? resolve('.loupe', 'runs')),
      ...(v.root ? { suiteRoot: resolve(io.cwd, v.root) } : {}),
      env: io.env,
      kernel,
      log,
      suites,
      ...(v.verbose
        ? {
            onEvent: (u: SweepUnit, e: Parameters<ReturnType<typeof progressPrinter>>[0]) =>
              progressPrinter(io, u.runId)(e),
          }
        : {}),
      control: (u) => {
        const c = new RunControl();
        controls.set(u.runId, c);
        return c;
      },
    };
    let inFlight = 0;
    let stopping = false;
    let done = 0;
    const line = (u: SweepUnit, status: string, steps: number, attempt: number) => {
      if (v.json) {
        io.out(
          JSON.stringify({
            runId: u.runId,
            sweepId: u.sweepId,
            blockId: u.blockId,
            repeat: u.repeat,
            model: u.profile?.model ?? u.agent,
            status,
            steps,
            attempt,
          }) + '\n',
        );
      } else {
        io.out(
          `${u.runId}  ${u.blockId}#${u.repeat}  ${u.profile?.model ?? u.agent}  ${status}  steps=${steps}  attempt=${attempt}\n`,
        );
      }
    };
    let finish: (code: number) => void = () => undefined;
    const finished = new Promise<number>((r) => {
      finish = r;
    });
    const shutdown = (why: string) => {
      if (stopping) return;
      stopping = true;
      io.err(
        `loupe worker: stopping (${why}); ${inFlight} unit(s) in hand go back to the queue after their current step\n`,
      );
      for (const c of controls.values()) c.stop(`worker stopping (${why})`);
      finish(0);
    };
    const onSignal = (sig: NodeJS.Signals) => shutdown(sig);
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    try {
      io.err(
        `loupe worker: ${hostname()} pid ${process.pid}, ${concurrency} at a time, store ${loc.url}, queue ${queueLoc.url}, sandbox ${probe.bwrap}\n`,
      );
      await queue.work(concurrency, async (unit, attempt) => {
        if (stopping) throw new Error('worker stopping: unit not started');
        inFlight++;
        const n = attempt.retryCount + 1;
        const last = attempt.retryCount >= attempt.retryLimit;
        try {
          io.err(
            `[${unit.runId}] attempt ${n}: ${unit.suiteKind} block ${unit.blockId} #${unit.repeat} ${unit.profile?.model ?? unit.agent}\n`,
          );
          const { run, settled } = await runSweepUnit(driver, unit);
          if (settled) {
            done++;
            line(unit, run.status, run.steps, n);
            return;
          }
          const why = `run ${run.id} ended ${run.status}${run.statusReason ? ` (${run.statusReason})` : ''}`;
          if (last) await giveUp(unit, n, why);
          throw new Error(`${why}: the queue retries the unit`);
        } catch (e) {
          if (last && !(e instanceof Error && /the queue retries the unit$/.test(e.message))) {
            await giveUp(unit, n, (e as Error).message);
          }
          io.err(`[${unit.runId}] attempt ${n} not settled: ${(e as Error).message}\n`);
          throw e;
        } finally {
          controls.delete(unit.runId);
          inFlight--;
        }
      });
      if (v['until-empty']) {
        let emptyChecks = 0;
        void (async () => {
          while (!stopping) {
            await new Promise((r) => setTimeout(r, 1000));
            if (stopping || inFlight) {
              emptyChecks = 0;
              continue;
            }
            try {
              const b = await queue.backlog();
              emptyChecks = b.queued + b.active === 0 ? emptyChecks + 1 : 0;
            } catch {
              emptyChecks = 0; // the database is away (restart): ask again
            }
            if (emptyChecks >= 2) {
              io.err(`loupe worker: the queue is empty; ${done} unit(s) settled here\n`);
              stopping = true;
              finish(0);
            }
          }
        })();
      }
      return await finished;
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      await queue
        .stop({ graceful: true, timeoutMs: 60_000 })
        .catch((e: unknown) => io.err(`loupe worker: queue stop: ${(e as Error).message}\n`));
      await store.close();
    }

    /** The unit's last attempt did not settle it: its run is marked failed with the reason (best effort). */
    async function giveUp(unit: SweepUnit, attempts: number, why: string): Promise<void> {
      try {
        const run = await store.getRun(unit.runId);
        if (run && !unitSettled(run)) {
          await store.updateRun(unit.runId, {
            status: 'failed',
            statusReason: `the queue gave up after ${attempts} attempt(s): ${why}`,
            endedAt: new Date().toISOString(),
            ownerPid: null,
          });
        }
      } catch (e) {
        io.err(`[${unit.runId}] could not record the failure: ${(e as Error).message}\n`);
      }
    }
  },
});
