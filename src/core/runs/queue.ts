/**
 * The job queue of sweeps (issue 27): pg-boss (https://github.com/timgit/pg-boss), a maintained PostgreSQL job queue,
 * in its own schema (`loupe_queue`) of the team store's database or of a database of its own. Loupe schedules nothing
 * itself: pg-boss hands each unit to one worker (`SELECT ... FOR UPDATE SKIP LOCKED`), watches the job's heartbeat,
 * and retries a unit whose worker died (no heartbeat for `heartbeatSeconds`) or failed, up to `retryLimit` times.
 * A retried unit's run resumes from its last committed step under the run lease (`driveQueuedRun`).
 * Why pg-boss and not graphile-worker: a job of a killed graphile-worker process stays locked for 4 hours by default,
 * while pg-boss fails and retries it once its heartbeat stops (seconds), which is what a SIGKILLed pod needs.
 * Source: issue 27 "Scale-out runs".
 */
import { PgBoss } from 'pg-boss';
import { LoupeInputError } from '../util/errors.ts';
import { nullLogger, type Logger } from '../util/log.ts';
import { redactStoreUrls, storePassword, type PostgresLocation } from '../store/location.ts';
import { decodePgJson, encodePgJson } from '../store/pg-text.ts';
import type { SweepUnit } from './sweep.ts';

/** The pg-boss queue every sweep's units go to. */
export const UNIT_QUEUE = 'loupe-sweep-units';
/** The PostgreSQL schema pg-boss keeps its tables in (never the run store's tables). */
export const QUEUE_SCHEMA = 'loupe_queue';

/** How units are retried (set per job when enqueued). */
export interface UnitRetryPolicy {
  /** A unit whose worker sent no heartbeat for this long is failed and retried (seconds, ≥ 10; default 30). */
  heartbeatSeconds?: number;
  /** Retries after the first attempt (default 10). */
  retryLimit?: number;
  /** Delay before a retry (seconds, default 2; doubled on each retry up to 60). */
  retryDelaySeconds?: number;
}

/** What a worker's handler learns about the attempt. */
export interface UnitAttempt {
  /** pg-boss job id. */
  jobId: string;
  /** 0 on the first attempt. */
  retryCount: number;
  retryLimit: number;
}

/** Counts of a queue's units that are not settled. */
export interface QueueBacklog {
  /** Waiting (created, or failed and waiting for a retry). */
  queued: number;
  /** Held by a worker (alive or not yet noticed dead). */
  active: number;
}

/** The sweep queue of one database. Open with {@link openUnitQueue}. */
export class UnitQueue {
  readonly #boss: PgBoss;
  readonly location: string;
  #stopped = false;

  /** Use {@link openUnitQueue}. */
  constructor(boss: PgBoss, location: string) {
    this.#boss = boss;
    this.location = location;
  }

  /**
   * Enqueues units (one job each, the unit as its data; texts holding NUL are escaped with `encodePgJson` and
   * handed to {@link work}'s handler as sent, issue 39).
   * @param units the sweep's units; `policy` their heartbeat and retry settings.
   * @returns the job ids, in order.
   * @throws LoupeInputError for a heartbeat under 10 s or a negative retry limit.
   */
  async send(units: SweepUnit[], policy: UnitRetryPolicy = {}): Promise<string[]> {
    const heartbeatSeconds = policy.heartbeatSeconds ?? 30;
    if (!Number.isInteger(heartbeatSeconds) || heartbeatSeconds < 10) {
      throw new LoupeInputError(
        'unit heartbeat',
        `must be a whole number of seconds ≥ 10 (pg-boss), got ${heartbeatSeconds}`,
      );
    }
    const retryLimit = policy.retryLimit ?? 10;
    if (!Number.isInteger(retryLimit) || retryLimit < 0) {
      throw new LoupeInputError('unit retry limit', `must be a whole number ≥ 0, got ${retryLimit}`);
    }
    const ids: string[] = [];
    for (const u of units) {
      // pg-boss keeps the data as jsonb, which refuses NUL: its texts are escaped as the run store's are (issue 39)
      const id = await this.#boss.send(UNIT_QUEUE, encodePgJson(u) as unknown as object, {
        heartbeatSeconds,
        retryLimit,
        retryDelay: policy.retryDelaySeconds ?? 2,
        retryBackoff: true,
        retryDelayMax: 60,
        // a unit may run for hours (heartbeats tell whether its worker lives): no timeout of its own below a day
        expireInSeconds: 24 * 3600,
      });
      if (id) ids.push(id);
    }
    return ids;
  }

  /**
   * Processes units until {@link stop}: `concurrency` at a time in this process. A handler that returns completes its
   * unit; one that throws fails the attempt, and pg-boss retries it (with its backoff) until the retry limit.
   * @param handler called once per attempt; its error message is kept with the job.
   */
  async work(concurrency: number, handler: (unit: SweepUnit, attempt: UnitAttempt) => Promise<void>): Promise<void> {
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new LoupeInputError('worker concurrency', `must be a whole number ≥ 1, got ${concurrency}`);
    }
    await this.#boss.work<
      SweepUnit,
      unknown,
      { localConcurrency: number; batchSize: 1; includeMetadata: true; pollingIntervalSeconds: number }
    >(
      UNIT_QUEUE,
      { localConcurrency: concurrency, batchSize: 1, includeMetadata: true, pollingIntervalSeconds: 1 },
      async (jobs) => {
        for (const job of jobs) {
          await handler(decodePgJson(job.data), {
            jobId: job.id,
            retryCount: job.retryCount,
            retryLimit: job.retryLimit,
          });
        }
      },
    );
  }

  /**
   * Units not settled yet (every state before completed / failed / cancelled), read from the queue's job table
   * through pg-boss, 1,000 jobs a page.
   */
  async backlog(): Promise<QueueBacklog> {
    let queued = 0;
    let active = 0;
    let after: string | undefined;
    for (let page = 0; page < 10_000; page++) {
      const jobs = await this.#boss.findJobs(UNIT_QUEUE, { limit: 1000, ...(after ? { after } : {}) });
      for (const j of jobs) {
        if (j.state === 'created' || j.state === 'retry') queued++;
        else if (j.state === 'active') active++;
      }
      if (jobs.length < 1000) break;
      after = jobs.at(-1)!.id;
    }
    return { queued, active };
  }

  /**
   * Stops taking units and closes the connections (idempotent). `graceful`: waits up to `timeoutMs` for handlers
   * that are running (a worker told to stop first stops its runs, which end `cancelled` and are retried elsewhere).
   */
  async stop(o: { graceful?: boolean; timeoutMs?: number } = {}): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    await this.#boss.stop({ graceful: o.graceful ?? true, timeout: o.timeoutMs ?? 30_000, close: true });
  }
}

/**
 * Connects to the queue's database and installs or upgrades pg-boss's schema ({@link QUEUE_SCHEMA}) when needed.
 * @param loc a PostgreSQL location (the team store's, or `--queue`'s); its password as for the run store
 *   (`passwordEnv`, `PGPASSWORD`). @param o `supervise`: this instance also fails units whose heartbeat stopped and
 *   schedules their retries (workers do; `loupe run --queue` does not); `superviseSeconds` how often (default 5);
 *   `log` where pg-boss's errors go (a server restart shows up there and is retried by pg-boss).
 * @returns the open queue.
 * @throws LoupeInputError naming the location when the server cannot be reached or refuses the role.
 */
export async function openUnitQueue(
  loc: PostgresLocation,
  o: { env?: NodeJS.ProcessEnv; password?: string; supervise?: boolean; superviseSeconds?: number; log?: Logger } = {},
): Promise<UnitQueue> {
  const log = o.log ?? nullLogger;
  const every = o.superviseSeconds ?? 5;
  if (!Number.isInteger(every) || every < 1) {
    throw new LoupeInputError('queue supervision interval', `must be a whole number of seconds ≥ 1, got ${every}`);
  }
  const boss = new PgBoss({
    host: loc.host,
    port: loc.port,
    database: loc.database,
    user: loc.user,
    password: storePassword(loc, o.password, o.env) ?? '',
    ssl: loc.ssl ? { rejectUnauthorized: true } : false,
    schema: QUEUE_SCHEMA,
    application_name: 'loupe-queue',
    max: 4,
    connectionTimeoutMillis: 10_000,
    supervise: o.supervise ?? false,
    superviseIntervalSeconds: every,
    monitorIntervalSeconds: every,
    schedule: false,
    migrate: true,
  });
  boss.on('error', (e: Error) => log.warn(`queue ${loc.url}: ${redactStoreUrls(e.message)}`));
  try {
    await boss.start();
    await boss.createQueue(UNIT_QUEUE).catch((e: Error) => {
      if (!/exist/i.test(e.message)) throw e;
    });
  } catch (e) {
    await boss.stop({ graceful: false, close: true }).catch(() => undefined);
    const err = e as Error & { code?: string };
    throw new LoupeInputError(
      loc.url,
      `cannot open the sweep queue on PostgreSQL at ${loc.host}:${loc.port} (${err.code ?? redactStoreUrls(err.message)})`,
      { cause: e },
    );
  }
  return new UnitQueue(boss, loc.url);
}
