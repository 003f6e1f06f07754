/**
 * Scale-out sweeps (issue 27) against a real PostgreSQL (test/helpers/pg.ts): `loupe run --queue` enqueues 40 units
 * (5 blocks × 4 repeats × 2 model profiles of the count-rows fixture, 4 steps each with the scripted model) into
 * pg-boss; 4 `loupe worker` child processes drive them; two workers are killed with SIGKILL while a unit of theirs is
 * half done and the database is restarted once. Every unit finishes exactly once, with the step counts of a
 * single-process run of the same units and no step recorded twice; the queue is drained. Also: the Job manifest of
 * `loupe k8s-job` validates (and a broken one does not), and a worker without user namespaces refuses to start.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import '../../fixtures/benchmarks/register.ts';
import { main } from '../../../src/cli/main.ts';
import { openStoreAt } from '../../../src/core/store/open.ts';
import type { RunStore } from '../../../src/core/store/types.ts';
import { QUEUE_SCHEMA, UNIT_QUEUE } from '../../../src/core/runs/queue.ts';
import { SANDBOX_REFUSED_EXIT, validateJobManifest } from '../../../src/core/runs/k8s-job.ts';
import type { SweepProgress } from '../../../src/core/runs/sweep.ts';
import { call, startScriptedLlm, type ScriptedLlm, type Turn } from '../../helpers/scripted-llm.ts';
import { startPg, type PgServer } from '../../helpers/pg.ts';
import { repoRoot } from '../../helpers/shared.ts';

/** Rows of each block's CSV: the answer the scripted model submits at its 4th step. */
const BLOCKS: Record<string, number> = { b1: 3, b2: 5, b3: 7, b4: 2, b5: 9 };
const REPEATS = 4;
const MODELS = ['scripted-a', 'scripted-b'];
const UNITS = Object.keys(BLOCKS).length * REPEATS * MODELS.length;
const STEPS = 4;

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s), env: process.env, cwd: process.cwd() },
  };
}

/** Three rejected counts, then the right one: 4 steps whichever process asks (the turn is the number of assistant messages). */
function script(first: string): Turn[] {
  const block = /data\/(b\d)\.csv/.exec(first)?.[1] ?? '';
  const n = BLOCKS[block] ?? -2;
  return [
    { toolCalls: [call('submit_count', { count: -1 })] },
    { toolCalls: [call('submit_count', { count: -1 })] },
    { toolCalls: [call('submit_count', { count: -1 })] },
    { toolCalls: [call('submit_count', { count: n })] },
  ];
}

/** The parts of the Job manifest the test reads. */
interface Manifest {
  kind: string;
  spec: {
    parallelism: number;
    completions?: number;
    podFailurePolicy: { rules: { action: string; onExitCodes?: { values: number[] } }[] };
    template: {
      spec: {
        hostUsers: boolean;
        containers: {
          args: string[];
          image: unknown;
          securityContext: {
            procMount: string;
            seccompProfile: { type: string };
            privileged: boolean;
            capabilities: { drop: string[] };
          };
        }[];
      };
    };
  };
}

const waitFor = async (what: string, cond: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 100) => {
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
};

describe('sweeps over the PostgreSQL job queue', () => {
  let srv: PgServer;
  let dir = '';
  let root = '';
  let llm: ScriptedLlm;
  const register = pathToFileURL(join(repoRoot, 'test', 'fixtures', 'benchmarks', 'register.ts')).href;
  const worker = (url: string, env: NodeJS.ProcessEnv = {}) => {
    const c = spawn(
      process.execPath,
      [
        '--no-warnings',
        `--import=${register}`,
        join(repoRoot, 'src', 'cli.ts'),
        'worker',
        '--store',
        url,
        '--concurrency',
        '1',
        '--until-empty',
        '--supervise-s',
        '1',
        '--json',
      ],
      { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const out: string[] = [];
    const err: string[] = [];
    c.stdout!.on('data', (b: Buffer) => out.push(b.toString()));
    c.stderr!.on('data', (b: Buffer) => err.push(b.toString()));
    const exited = new Promise<number | null>((r) => c.on('exit', (code) => r(code)));
    return { c, out, err, exited };
  };

  before(async () => {
    srv = await startPg({ fsync: 'off' });
    dir = mkdtempSync(join(tmpdir(), 'loupe-sweep-'));
    root = join(dir, 'suite');
    mkdirSync(join(root, 'data'), { recursive: true });
    for (const [b, n] of Object.entries(BLOCKS)) {
      writeFileSync(
        join(root, 'data', `${b}.csv`),
        ['x', ...Array.from({ length: n }, (_, i) => String(i))].join('\n') + '\n',
      );
    }
    llm = await startScriptedLlm({ scriptFor: script, latencyMs: 150 });
  });
  after(async () => {
    await llm?.close();
    srv?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    '40 units over 4 workers: two SIGKILLed mid-unit and a database restart; every unit finishes once, steps as in one process',
    { timeout: 240_000 },
    async () => {
      const t0 = Date.now();
      // ---- the same units in one process (SQLite), for the step counts
      const single = io();
      const base = await startScriptedLlm({ scriptFor: script });
      try {
        assert.equal(
          await main(
            [
              'run',
              '--suite',
              'count-rows',
              '--root',
              root,
              '--blocks',
              'all',
              '--repeats',
              String(REPEATS),
              '--agent',
              'llm',
              '--model',
              MODELS[0]!,
              '--base-url',
              base.baseUrl,
              '--max-steps',
              '6',
              '--store',
              join(dir, 'single', 'runs.sqlite'),
              '--concurrency',
              '4',
              '--json',
            ],
            single.io,
          ),
          0,
          single.err.join(''),
        );
        assert.equal(
          await main(
            [
              'run',
              '--suite',
              'count-rows',
              '--root',
              root,
              '--blocks',
              'all',
              '--repeats',
              String(REPEATS),
              '--agent',
              'llm',
              '--model',
              MODELS[1]!,
              '--base-url',
              base.baseUrl,
              '--max-steps',
              '6',
              '--store',
              join(dir, 'single', 'runs.sqlite'),
              '--concurrency',
              '4',
              '--json',
            ],
            single.io,
          ),
          0,
          single.err.join(''),
        );
      } finally {
        await base.close();
      }
      const singleSteps = new Map<string, number>();
      for (const l of single.out.join('').trim().split('\n')) {
        const j = JSON.parse(l) as { blockId: string; steps: number; status: string; runId: string };
        assert.equal(j.status, 'finished');
        singleSteps.set(j.blockId, j.steps);
      }
      assert.equal(single.out.join('').trim().split('\n').length, UNITS);
      const tSingle = Date.now() - t0;

      // ---- enqueue the sweep
      const url = await srv.createDatabase('sweep');
      const enq = io();
      assert.equal(
        await main(
          [
            'run',
            '--suite',
            'count-rows',
            '--root',
            root,
            '--blocks',
            'all',
            '--repeats',
            String(REPEATS),
            '--agent',
            'llm',
            '--models',
            MODELS.join(','),
            '--base-url',
            llm.baseUrl,
            '--max-steps',
            '6',
            '--store',
            url,
            '--queue',
            '--unit-heartbeat-s',
            '10',
            '--sweep',
            'sweep27',
            '--json',
          ],
          enq.io,
        ),
        0,
        enq.err.join(''),
      );
      const queued = JSON.parse(enq.out.join('')) as { sweepId: string; units: number; runIds: string[] };
      assert.equal(queued.sweepId, 'sweep27');
      assert.equal(queued.units, UNITS);
      const store: RunStore = await openStoreAt(url);
      try {
        const pending = await store.listRuns({ sweepId: 'sweep27' });
        assert.equal(pending.length, UNITS);
        assert.ok(pending.every((r) => r.status === 'pending' && r.steps === 0));
        const p0 = io();
        assert.equal(await main(['runs', '--store', url, '--sweep', 'sweep27', '--json'], p0.io), 0);
        const prog0 = JSON.parse(p0.out.join('')) as SweepProgress;
        assert.deepEqual(
          prog0.models.map((m) => [m.model, m.total, m.queued, m.done]),
          MODELS.map((m) => [m, UNITS / 2, UNITS / 2, 0]),
        );

        // ---- 4 workers; kill two of them while a unit of theirs is half done; restart the database once
        const tSweep = Date.now();
        const workers = Array.from({ length: 4 }, () => worker(url));
        const killed: { pid: number; runId: string; steps: number }[] = [];
        let restarted = false;
        await waitFor(
          'two workers killed mid-unit and the database restarted',
          async () => {
            const runs = await store.listRuns({ sweepId: 'sweep27' });
            const done = runs.filter((r) => r.status === 'finished').length;
            const want = killed.length === 0 ? 4 : killed.length === 1 ? 12 : Infinity;
            if (done >= want) {
              const live = new Set(
                workers
                  .filter((w) => w.c.exitCode === null && !killed.some((k) => k.pid === w.c.pid))
                  .map((w) => w.c.pid!),
              );
              const mid = runs.find(
                (r) => r.status === 'running' && r.steps >= 1 && r.steps < STEPS && r.ownerPid && live.has(r.ownerPid),
              );
              if (mid) {
                process.kill(mid.ownerPid!, 'SIGKILL');
                killed.push({ pid: mid.ownerPid!, runId: mid.id, steps: mid.steps });
              }
            }
            if (killed.length === 2 && !restarted && done >= 20) {
              srv.restart();
              restarted = true;
            }
            return killed.length === 2 && restarted;
          },
          120_000,
          50,
        );
        const codes = await Promise.race([
          Promise.all(workers.map((w) => w.exited)),
          new Promise<never>((_, rej) =>
            setTimeout(() => rej(new Error('workers did not drain the queue in 150 s')), 150_000).unref(),
          ),
        ]);
        const sweepMs = Date.now() - tSweep;
        for (const [i, w] of workers.entries()) {
          if (killed.some((k) => k.pid === w.c.pid)) assert.equal(codes[i], null, 'a killed worker has no exit code');
          else assert.equal(codes[i], 0, w.err.join('').slice(-2000));
        }

        // ---- every unit finished exactly once, with the single-process step counts and no step twice
        const runs = await store.listRuns({ sweepId: 'sweep27' });
        assert.equal(runs.length, UNITS);
        for (const r of runs) {
          if (r.status !== 'finished') {
            // what the unit did, to tell a lost commit from a resumed conversation gone out of step
            const got = await store.getSteps(r.id);
            const events = await store.getEvents(r.id).catch(() => []);
            assert.fail(
              `${r.id}: ${r.status} ${r.statusReason}; killed ${JSON.stringify(killed)}; steps ${JSON.stringify(got.map((s) => [s.index, s.toolCalls.map((c) => `${c.name}${c.argumentsText}${c.isError ? '!' : ''}`), s.startedAt]))}; events ${JSON.stringify(events).slice(0, 3000)}`,
            );
          }
          assert.equal(r.steps, singleSteps.get(r.blockId), `${r.id} steps`);
          const steps = await store.getSteps(r.id);
          assert.deepEqual(
            steps.map((s) => s.index),
            Array.from({ length: r.steps }, (_, i) => i),
            `${r.id}: step indices`,
          );
          const finishing = steps.filter((s) => s.toolCalls.some((c) => c.name === 'submit_count' && !c.isError));
          assert.equal(finishing.length, 1, `${r.id}: one finishing step`);
          assert.deepEqual((await store.getExtraState(r.id)).countRows, { count: BLOCKS[r.blockId] });
        }
        // the killed units were retried by the queue and resumed after their committed steps
        for (const k of killed) {
          const ev = await store.getEvents(k.runId);
          assert.ok(
            ev.some((e) => e.kind === 'resume' && /resumed after step [1-9]/.test(e.message)),
            `${k.runId}: ${JSON.stringify(ev.map((e) => e.kind))}`,
          );
          assert.ok(
            ev.some((e) => e.kind === 'lease' && /took the run over/.test(e.message)),
            `${k.runId}: lease taken over`,
          );
        }
        // the queue: one completed job per unit, nothing left
        const c = new pg.Client({
          host: srv.host,
          port: srv.port,
          user: srv.user,
          password: process.env[srv.passwordEnv],
          database: 'sweep',
        });
        await c.connect();
        try {
          const states = (
            await c.query(`SELECT state, count(*)::int AS n FROM ${QUEUE_SCHEMA}.job WHERE name = $1 GROUP BY state`, [
              UNIT_QUEUE,
            ])
          ).rows as { state: string; n: number }[];
          assert.deepEqual(states, [{ state: 'completed', n: UNITS }]);
          // the server really restarted while the workers ran
          const started = Date.parse(String((await c.query('SELECT pg_postmaster_start_time() AS t')).rows[0].t));
          assert.ok(
            started > tSweep && started < tSweep + sweepMs,
            `postmaster started ${new Date(started).toISOString()}`,
          );
        } finally {
          await c.end();
        }
        const settledLines = workers.flatMap((w) =>
          w.out
            .join('')
            .trim()
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as { runId: string; status: string }),
        );
        assert.deepEqual([...new Set(settledLines.map((l) => l.runId))].sort(), [...queued.runIds].sort());
        const p1 = io();
        assert.equal(await main(['runs', '--store', url, '--sweep', 'sweep27'], p1.io), 0);
        assert.match(
          p1.out.join(''),
          new RegExp(`sweep sweep27: ${UNITS}/${UNITS} done, 0 running, 0 failed, 0 queued`),
        );
        assert.match(p1.out.join(''), /scripted-a\s+20\s+20\s+0\s+0\s+0/);
        const retried = settledLines.filter((l) => (l as { attempt?: number }).attempt! > 1).length;
        const notSettled =
          workers
            .map((w) => w.err.join(''))
            .join('')
            .match(/not settled: .*/g) ?? [];
        const sawRestart = workers.filter((w) =>
          /terminat|57P01|ECONNREFUSED|Connection terminated/i.test(w.err.join('')),
        ).length;
        console.log(
          `sweep: ${UNITS} units, single process ${tSingle} ms; 4 workers (2 killed at steps ${killed.map((k) => k.steps).join(', ')}, database restarted once): ${sweepMs} ms; ${llm.requests.length} model requests (${UNITS * STEPS} steps recorded); ${retried} unit(s) settled on a retry; ${sawRestart} worker(s) logged the restart; attempts not settled: ${notSettled.length}${notSettled.length ? ` (${[...new Set(notSettled.map((m) => m.slice(0, 160)))].join(' | ')})` : ''}`,
        );
      } finally {
        await store.close();
      }
    },
  );

  it(
    'SIGTERM: a worker stops its run after the current step, exits 0, and the unit goes back to the queue',
    { timeout: 120_000 },
    async () => {
      const url = await srv.createDatabase('sigterm');
      const enq = io();
      assert.equal(
        await main(
          [
            'run',
            '--suite',
            'count-rows',
            '--root',
            root,
            '--blocks',
            'b1',
            '--agent',
            'llm',
            '--model',
            'scripted-a',
            '--base-url',
            llm.baseUrl,
            '--max-steps',
            '6',
            '--store',
            url,
            '--queue',
            '--unit-heartbeat-s',
            '10',
            '--sweep',
            'term',
            '--json',
          ],
          enq.io,
        ),
        0,
        enq.err.join(''),
      );
      const store = await openStoreAt(url);
      try {
        const a = worker(url);
        await waitFor(
          'the unit half done',
          async () => ((await store.getRun('term-u0001'))?.steps ?? 0) >= 1,
          60_000,
          50,
        );
        a.c.kill('SIGTERM');
        const code = await Promise.race([
          a.exited,
          new Promise<never>((_, rej) => setTimeout(() => rej(new Error('worker did not stop')), 30_000).unref()),
        ]);
        assert.equal(code, 0, a.err.join(''));
        assert.match(a.err.join(''), /stopping \(SIGTERM\)/);
        const stopped = (await store.getRun('term-u0001'))!;
        assert.equal(stopped.status, 'cancelled');
        assert.ok(stopped.steps >= 1 && stopped.steps < STEPS, `steps ${stopped.steps}`);
        const b = worker(url);
        const codeB = await Promise.race([
          b.exited,
          new Promise<never>((_, rej) =>
            setTimeout(() => rej(new Error('second worker did not drain the queue')), 60_000).unref(),
          ),
        ]);
        assert.equal(codeB, 0, b.err.join(''));
        const run = (await store.getRun('term-u0001'))!;
        assert.equal(run.status, 'finished');
        assert.equal(run.steps, STEPS);
        assert.ok(
          (await store.getEvents(run.id)).some(
            (e) => e.kind === 'resume' && e.message.includes(`after step ${stopped.steps}`),
          ),
        );
      } finally {
        await store.close();
      }
    },
  );

  it(
    'a database outage longer than the store rides out: the units in hand are retried and resume, none is lost or doubled',
    { timeout: 150_000 },
    async () => {
      const url = await srv.createDatabase('outage');
      const enq = io();
      assert.equal(
        await main(
          [
            'run',
            '--suite',
            'count-rows',
            '--root',
            root,
            '--blocks',
            'b1,b2,b3,b4',
            '--agent',
            'llm',
            '--model',
            'scripted-a',
            '--base-url',
            llm.baseUrl,
            '--max-steps',
            '6',
            '--store',
            url,
            '--queue',
            '--unit-heartbeat-s',
            '10',
            '--sweep',
            'outage',
            '--json',
          ],
          enq.io,
        ),
        0,
        enq.err.join(''),
      );
      const store = await openStoreAt(url);
      try {
        const ws = [worker(url), worker(url)];
        await waitFor(
          'two units half done',
          async () =>
            (await store.listRuns({ sweepId: 'outage' })).filter((r) => r.status === 'running' && r.steps >= 1)
              .length >= 2,
          60_000,
          50,
        );
        const t = Date.now();
        await srv.outage(4000);
        const outageMs = Date.now() - t;
        const codes = await Promise.race([
          Promise.all(ws.map((w) => w.exited)),
          new Promise<never>((_, rej) =>
            setTimeout(() => rej(new Error('workers did not drain the queue')), 120_000).unref(),
          ),
        ]);
        assert.deepEqual(codes, [0, 0], ws.map((w) => w.err.join('').slice(-1500)).join('\n----\n'));
        const runs = await store.listRuns({ sweepId: 'outage' });
        for (const r of runs) {
          if (r.status !== 'finished') {
            // what the unit did, to tell a lost commit from a resumed conversation gone out of step
            const got = await store.getSteps(r.id);
            const events = await store.getEvents(r.id).catch(() => []);
            assert.fail(
              `${r.id}: ${r.status} ${r.statusReason}; steps ${JSON.stringify(got.map((s) => [s.index, s.toolCalls.map((c) => `${c.name}${c.argumentsText}${c.isError ? '!' : ''}`), s.startedAt]))}; events ${JSON.stringify(events).slice(0, 3000)}`,
            );
          }
          assert.deepEqual(
            (await store.getSteps(r.id)).map((s) => s.index),
            [0, 1, 2, 3],
          );
        }
        const retried = ws
          .flatMap((w) =>
            w.out
              .join('')
              .trim()
              .split('\n')
              .filter(Boolean)
              .map((l) => JSON.parse(l) as { attempt: number }),
          )
          .filter((l) => l.attempt > 1).length;
        console.log(`outage: database down ${outageMs} ms; ${runs.length} units finished, ${retried} on a retry`);
      } finally {
        await store.close();
      }
    },
  );

  it(
    'a worker that cannot create its sandbox (no user namespaces) refuses to start and takes no unit',
    { timeout: 60_000 },
    async () => {
      const url = await srv.createDatabase('nouserns');
      const w = worker(url, { LOUPE_SIMULATE_NO_USERNS: '1' });
      const code = await Promise.race([
        w.exited,
        new Promise<never>((_, rej) => setTimeout(() => rej(new Error('worker did not exit')), 50_000).unref()),
      ]);
      assert.equal(code, SANDBOX_REFUSED_EXIT);
      const err = w.err.join('');
      assert.match(err, /refusing to start/);
      assert.match(err, /user namespaces/);
      assert.match(err, /never runs agent code without the sandbox/);
      // it never connected to the queue: pg-boss's schema was not even created
      const c = new pg.Client({
        host: srv.host,
        port: srv.port,
        user: srv.user,
        password: process.env[srv.passwordEnv],
        database: 'nouserns',
      });
      await c.connect();
      try {
        assert.equal(
          (await c.query('SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = $1', [QUEUE_SCHEMA])).rows[0].n,
          0,
        );
      } finally {
        await c.end();
      }
    },
  );

  it('loupe k8s-job writes a Job manifest that kubernetes-models validates; a broken one does not', async () => {
    const t = io();
    const file = join(dir, 'k8s', 'job.json');
    assert.equal(
      await main(
        [
          'k8s-job',
          '--image',
          'registry.example/loupe-worker:1',
          '--workers',
          '8',
          '--store-secret',
          'loupe-store',
          '--concurrency',
          '2',
          '--root',
          '/data/longda',
          '--data-claim',
          'longda-data',
          '--sweep',
          'sweep27',
          '--out',
          file,
        ],
        t.io,
      ),
      0,
      t.err.join(''),
    );
    const m = JSON.parse(readFileSync(file, 'utf8')) as Manifest;
    validateJobManifest(m);
    assert.equal(m.kind, 'Job');
    assert.equal(m.spec.parallelism, 8);
    assert.equal(m.spec.completions, undefined, 'work-queue pattern: no completions');
    const pod = m.spec.template.spec;
    assert.equal(pod.hostUsers, false);
    const ctr = pod.containers[0]!;
    assert.deepEqual(ctr.args, [
      'worker',
      '--store',
      '$(LOUPE_STORE)',
      '--concurrency',
      '2',
      '--until-empty',
      '--root',
      '/data/longda',
    ]);
    assert.equal(ctr.securityContext.procMount, 'Unmasked');
    assert.equal(ctr.securityContext.seccompProfile.type, 'Unconfined');
    assert.equal(ctr.securityContext.privileged, false);
    assert.deepEqual(ctr.securityContext.capabilities.drop, ['ALL']);
    assert.ok(
      m.spec.podFailurePolicy.rules.some(
        (r) => r.action === 'FailJob' && r.onExitCodes?.values.includes(SANDBOX_REFUSED_EXIT),
      ),
    );
    // the validation can fail: a container without an image, a wrong procMount
    const broken = structuredClone(m);
    broken.spec.template.spec.containers[0]!.securityContext.procMount = 'Open';
    assert.throws(() => validateJobManifest(broken), /Job manifest: kubernetes-models rejects it/);
    const noImage = structuredClone(m);
    noImage.spec.template.spec.containers[0]!.image = 42;
    assert.throws(() => validateJobManifest(noImage), /image/);
    // bad input names the thing at fault
    const bad = io();
    assert.notEqual(
      await main(['k8s-job', '--image', 'x:1', '--workers', '0', '--store-secret', 'loupe-store'], bad.io),
      0,
    );
    assert.match(bad.err.join(''), /workers/);
    const bad2 = io();
    assert.notEqual(
      await main(['k8s-job', '--image', 'x:1', '--workers', '2', '--store-secret', 'Not_A_Secret'], bad2.io),
      0,
    );
    assert.match(bad2.err.join(''), /store secret 'Not_A_Secret'/);
  });
});
