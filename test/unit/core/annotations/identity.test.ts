/**
 * Issue 26 "Identity": each annotation records the database role that wrote it beside the display name. PostgreSQL:
 * the server's current_user (two login roles annotate the same queue; a client cannot claim another role).
 * SQLite: null (no roles). Shown in progress, agreement and the CLI as "name (role r)".
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import pg from 'pg';
import { agreementReport, annotationStoreOf, annotatorLabel } from '../../../../src/core/annotations/index.ts';
import { main } from '../../../../src/cli/main.ts';
import type { RunStore } from '../../../../src/core/store/types.ts';
import { forEachEngine } from '../../../helpers/store-engines.ts';

async function seed(rs: RunStore, n: number): Promise<void> {
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
  for (let i = 0; i < n; i++) {
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
}

function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  return main(argv, {
    out: (s: string) => {
      out += s;
    },
    err: (s: string) => {
      err += s;
    },
    env: { ...process.env },
    cwd: process.cwd(),
  } as never).then((code) => ({ code: code as number, out, err }));
}

forEachEngine((e) => {
  it(
    'two annotators, each annotation records the database role that wrote it (server-filled on PostgreSQL, null on SQLite)',
    { timeout: 60_000 },
    async () => {
      const loc = await e.fresh();
      const owner = await e.open(loc);
      await seed(owner, 3);
      const q = await annotationStoreOf(owner).openQueue({ kind: 'items' }, { reviewers: 2 });
      // PostgreSQL: two login roles of their own (not the tables' owner), as two experts' editors would connect
      const srv = e.server();
      const db = srv ? new URL(loc).pathname.slice(1) : '';
      const tag = `${process.pid}_${Date.now() % 100000}`;
      const [anaLoc, boLoc] = srv
        ? [await srv.createRole(`ana_pg_${tag}`, db), await srv.createRole(`bo_pg_${tag}`, db)]
        : [loc, loc];
      const [anaRole, boRole] = srv ? [`ana_pg_${tag}`, `bo_pg_${tag}`] : [null, null];
      const anaStore = await e.open(anaLoc);
      const boStore = await e.open(boLoc);
      const ana = annotationStoreOf(anaStore);
      const bo = annotationStoreOf(boStore);
      const written = [];
      for (const [store, who] of [
        [ana, 'Ana'],
        [bo, 'Bo'],
      ] as const) {
        for (;;) {
          const next = await store.nextItem(q.id, who);
          if (!next) break;
          written.push(
            await store.annotate({
              itemId: next.item.id,
              annotator: who,
              verdict: { supported: true, reason: who },
              queueId: q.id,
              origin: 'panel',
            }),
          );
        }
      }
      assert.equal(written.length, 6);
      for (const a of written) {
        assert.equal(a.dbRole, a.annotator === 'Ana' ? anaRole : boRole, `returned by annotate: ${a.annotator}`);
      }
      // as read back by a third connection (the owner's)
      const all = [...(await annotationStoreOf(owner).annotationsByItem()).values()].flat();
      assert.equal(all.length, 6);
      for (const a of all) {
        assert.equal(a.dbRole, a.annotator === 'Ana' ? anaRole : boRole, `stored: ${a.annotator} ${a.id}`);
      }
      const p = await annotationStoreOf(owner).progress(q.id);
      assert.deepEqual(p.byAnnotator, { Ana: 3, Bo: 3 });
      assert.deepEqual(p.roles, srv ? { Ana: [anaRole!], Bo: [boRole!] } : { Ana: [], Bo: [] });
      const g = (await agreementReport(annotationStoreOf(owner), {}, { resamples: 20, seed: 1 })).groups.find(
        (x) => x.task === 'claim-support',
      )!;
      assert.deepEqual(g.annotators, ['Ana', 'Bo']);
      assert.deepEqual(g.roles, p.roles);
      assert.equal(annotatorLabel('Ana', p.roles.Ana), srv ? `Ana (role ${anaRole})` : 'Ana');
      // the CLI lists annotators with their roles
      const cliOut = await cli(['agreement', '--store', loc]);
      assert.equal(cliOut.code, 0, cliOut.err);
      assert.match(cliOut.out, srv ? new RegExp(`Ana \\(role ${anaRole}\\), Bo \\(role ${boRole}\\)`) : /Ana, Bo\)/);
      const qOut = await cli(['annotations', 'queue', '--store', loc, '--annotator', 'Ana']);
      assert.equal(qOut.code, 0, qOut.err);
      assert.match(
        qOut.out,
        srv ? new RegExp(`Ana \\(role ${anaRole}\\): 3, Bo \\(role ${boRole}\\): 3`) : /Ana: 3, Bo: 3/,
      );
      const listOut = await cli(['annotations', 'list', '--store', loc]);
      assert.equal(listOut.code, 0, listOut.err);
      assert.match(
        listOut.out,
        srv ? new RegExp(`Ana \\(role ${anaRole}\\)=true Bo \\(role ${boRole}\\)=true`) : /Ana=true Bo=true/,
      );
      if (srv) {
        // a client logged in as Ana cannot record another role, neither on insert nor by editing the row
        const url = new URL(anaLoc);
        const c = new pg.Client({
          host: url.hostname,
          port: Number(url.port),
          user: anaRole!,
          password: process.env[srv.passwordEnv],
          database: db,
        });
        await c.connect();
        try {
          const item = written[0]!.itemId;
          const r = await c.query(
            `INSERT INTO annotations (id, item_id, annotator, role, verdict, evidence, note, supersedes, final, origin, created_at, db_role)
          VALUES ('forged', $1, 'Bo', 'annotator', '{"supported":false}', '[]', NULL, NULL, 0, 'cli', '2026-01-02T00:00:00Z', $2) RETURNING db_role`,
            [item, boRole],
          );
          assert.equal(r.rows[0].db_role, anaRole);
          // editing is refused outright (issue 39: append-only for every role but the owner, whatever it was granted)
          await assert.rejects(
            c.query(`UPDATE annotations SET db_role = $1 WHERE id = $2`, [
              anaRole,
              written.find((a) => a.annotator === 'Bo')!.id,
            ]),
            /annotations are append-only/,
          );
        } finally {
          await c.end();
        }
        const bos = all.filter((a) => a.annotator === 'Bo').map((a) => a.id);
        const after = [...(await annotationStoreOf(owner).annotationsByItem()).values()].flat();
        for (const a of after.filter((x) => bos.includes(x.id))) assert.equal(a.dbRole, boRole);
      }
      await anaStore.close();
      await boStore.close();
      await owner.close();
    },
  );
});
