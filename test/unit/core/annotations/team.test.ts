/**
 * Issue 26, team store: two annotator identities in two processes annotate the same queue on a real PostgreSQL
 * server, each logged in as a database role of their own; each sees the other's progress within 1 s of the annotation;
 * agreement is computed over both; every annotation records the role that wrote it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { agreementReport, annotationStoreOf } from '../../../../src/core/annotations/index.ts';
import { openStoreAt } from '../../../../src/core/store/open.ts';
import { startPg, type PgServer } from '../../../helpers/pg.ts';
import { repoRoot } from '../../../helpers/shared.ts';

let srv: PgServer;
before(async () => {
  srv = await startPg({ fsync: 'off' });
});
after(() => srv?.stop());

type Ev = { event: string; count?: number; at?: number; mine?: number; seen?: number };

function annotator(
  url: string,
  queueId: string,
  me: string,
  other: string,
  pauseMs: number,
  total: number,
): Promise<Ev[]> {
  return new Promise((resolve, reject) => {
    const p = spawn(
      process.execPath,
      [
        '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
        join(repoRoot, 'test', 'helpers', 'annotator.child.ts'),
        url,
        queueId,
        me,
        other,
        String(pauseMs),
        String(total),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: process.env },
    );
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    p.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    p.on('error', reject);
    p.on('exit', (code) =>
      code === 0
        ? resolve(
            out
              .trim()
              .split('\n')
              .map((l) => JSON.parse(l) as Ev),
          )
        : reject(new Error(`${me} exited ${code}: ${err}`)),
    );
  });
}

it(
  'two annotators in two processes share one queue on PostgreSQL: each sees the other within 1 s; agreement over both',
  { timeout: 60_000 },
  async () => {
    const url = await srv.createDatabase('team');
    const rs = await openStoreAt(url);
    await rs.createRun({
      id: 'run-1',
      suite: 'analystbench',
      blockId: 'b1',
      agent: 'llm',
      model: 'm',
      params: {},
      promptHash: 'h',
      toolSet: 't',
      dataChecksums: { 'a.csv': 'x' },
      loupeVersion: 't',
      sandbox: 'off',
      workspace: '/nonexistent/w',
    });
    const N = 6;
    for (let i = 0; i < N; i++) {
      await rs.judgements.put(
        {
          key: `k${i}`,
          task: 'claim-support',
          judgeId: 'human',
          inputHash: `h${i}`,
          promptHash: null,
          input: { claim: `claim ${i}`, sources: 'S' },
          raw: null,
          verdict: null,
          status: 'pending',
          at: `2026-01-01T00:00:0${i}Z`,
        },
        { runId: 'run-1' },
      );
    }
    const store = annotationStoreOf(rs);
    const q = await store.openQueue({ kind: 'items' }, { reviewers: 2 });
    assert.equal((await store.progress(q.id)).total, N);
    const [anaUrl, boUrl] = [await srv.createRole('ana_team', 'team'), await srv.createRole('bo_team', 'team')];
    const [ana, bo] = await Promise.all([
      annotator(anaUrl, q.id, 'ana', 'bo', 150, N),
      annotator(boUrl, q.id, 'bo', 'ana', 200, N),
    ]);
    const lag = (writer: Ev[], reader: Ev[]) =>
      writer
        .filter((e) => e.event === 'annotated')
        .map((w) => {
          const s = reader.find((r) => r.event === 'seen' && (r.count ?? 0) >= (w.count ?? 0));
          assert.ok(s, `annotation ${w.count} was never seen by the other process`);
          return s.at! - w.at!;
        });
    const lags = [...lag(ana, bo), ...lag(bo, ana)];
    assert.equal(lags.length, 2 * N, 'each annotated every item (two reviewers per item)');
    assert.ok(Math.max(...lags) < 1000, `progress seen after ${lags.join(', ')} ms`);
    const p = await store.progress(q.id);
    assert.deepEqual([p.done, p.byAnnotator], [N, { ana: N, bo: N }]);
    const rep = await agreementReport(store, {}, { resamples: 50, seed: 1 });
    const g = rep.groups.find((x) => x.task === 'claim-support')!;
    assert.ok(g, JSON.stringify(rep.groups));
    assert.equal(g.items, N);
    assert.deepEqual(g.annotators, ['ana', 'bo']);
    assert.deepEqual(
      g.roles,
      { ana: ['ana_team'], bo: ['bo_team'] },
      'each annotation records the database role of the process that wrote it',
    );
    assert.deepEqual(p.roles, g.roles);
    await rs.close();
    console.log(
      `cross-process progress lag (ms): max ${Math.max(...lags)}, median ${[...lags].sort((a, b) => a - b)[lags.length >> 1]}`,
    );
  },
);
