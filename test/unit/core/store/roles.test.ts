/**
 * Issue 39: the store keeps its promises in the database. On a real PostgreSQL server with login roles granted through
 * `loupe store grant`: annotations (and checklist / ground-truth versions) are append-only for every role but the owner
 * (UPDATE / DELETE / TRUNCATE refused, of another's rows and of one's own, even for a role granted everything by hand);
 * a blind annotator reads no expected answer (scores, judge verdicts, checklists) and no other verdict of an item before
 * answering it (direct SQL as that role); it still annotates through Loupe's annotation store and panel view model.
 * SQLite: triggers refuse UPDATE / DELETE of annotations and versions; a file store has no roles to grant.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { main } from '../../../../src/cli/main.ts';
import { annotationStoreOf, currentAnnotations } from '../../../../src/core/annotations/index.ts';
import { copyStore } from '../../../../src/core/store/copy.ts';
import { openStoreAt } from '../../../../src/core/store/open.ts';
import { sqliteHandleOf } from '../../../../src/core/store/run-store.ts';
import type { RunStore } from '../../../../src/core/store/types.ts';
import { annotationState } from '../../../../src/app/annotation/annotation.ts';
import { startPg, type PgServer } from '../../../helpers/pg.ts';

const N = 3;

/** A run, an LLM judgement and a pending human judgement per item (so an `items` queue holds them), a score. */
async function seed(rs: RunStore): Promise<void> {
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
  for (let i = 0; i < N; i++) {
    await rs.judgements.put(
      {
        key: `llm${i}`,
        task: 'claim-support',
        judgeId: 'llm:m',
        inputHash: `h${i}`,
        promptHash: 'p',
        input: { claim: `claim ${i}`, sources: 'S' },
        raw: 'r',
        verdict: { supported: i % 2 === 0, reason: `EXPECTED-${i}` },
        status: 'done',
        at: `2026-01-01T00:00:0${i}Z`,
      },
      { runId: 'run-1' },
    );
    await rs.judgements.put(
      {
        key: `hum${i}`,
        task: 'claim-support',
        judgeId: 'human',
        inputHash: `h${i}`,
        promptHash: null,
        input: { claim: `claim ${i}`, sources: 'S' },
        raw: null,
        verdict: null,
        status: 'pending',
        at: `2026-01-01T00:00:1${i}Z`,
      },
      { runId: 'run-1' },
    );
  }
  await rs.scores.save({
    runId: 'run-1',
    benchmark: 'analystbench',
    judgeId: 'llm:m',
    options: {},
    summary: { score: 0.5 },
    detail: { expected: 'EXPECTED-SCORE' },
    pending: 0,
    scoredAt: '2026-01-01T00:01:00Z',
  });
}

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, {
    out: (s: string) => {
      out += s;
    },
    err: (s: string) => {
      err += s;
    },
    env: { ...process.env },
    cwd: process.cwd(),
  });
  return { code, out, err };
}

describe('postgres', () => {
  let srv: PgServer;
  let ownerUrl = '';
  let owner: RunStore;
  const db = `roles_${process.pid}`;
  const password = () => process.env[srv.passwordEnv]!;
  /** A login of its own, with no privileges until granted. */
  const login = async (name: string): Promise<string> => {
    const c = new pg.Client({ host: srv.host, port: srv.port, user: srv.user, password: password(), database: db });
    await c.connect();
    try {
      await c.query(`CREATE ROLE "${name}" LOGIN PASSWORD ${pg.escapeLiteral(password())}`);
    } finally {
      await c.end();
    }
    return `postgres://${name}@${srv.host}:${srv.port}/${db}?passwordEnv=${srv.passwordEnv}`;
  };
  /** Runs `fn` on a plain client logged in as `name` (direct SQL, as a colleague with psql would). */
  const as = async <T>(name: string, fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const c = new pg.Client({ host: srv.host, port: srv.port, user: name, password: password(), database: db });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  let anaUrl = '';
  let boUrl = '';
  let revUrl = '';
  let queueId = '';

  before(async () => {
    srv = await startPg({ fsync: 'off' });
    ownerUrl = await srv.createDatabase(db);
    owner = await openStoreAt(ownerUrl);
    await seed(owner);
    queueId = (await annotationStoreOf(owner).openQueue({ kind: 'items' }, { reviewers: 2, blind: true })).id;
    [anaUrl, boUrl, revUrl] = [await login('ana'), await login('bo'), await login('rev')];
    for (const [role, access] of [
      ['ana', 'annotator'],
      ['bo', 'annotator'],
      ['rev', 'reviewer'],
    ]) {
      const r = await cli(['store', 'grant', '--store', ownerUrl, '--role', role!, '--as', access!]);
      assert.equal(r.code, 0, r.err);
    }
  });
  after(async () => {
    await owner?.close();
    srv?.stop();
  });

  it(
    'grants exactly and idempotently; refuses unknown roles, superusers and non-owners; says what was granted',
    { timeout: 60_000 },
    async () => {
      const again = await cli(['store', 'grant', '--store', ownerUrl, '--role', 'ana', '--as', 'annotator']);
      assert.equal(again.code, 0, again.err);
      assert.match(again.out, /role ana is now an annotator/);
      assert.match(again.out, /annotations\s+SELECT, INSERT/);
      const privs = (role: string) =>
        as(srv.user, async (c) =>
          (
            await c.query(
              `SELECT table_name || ':' || privilege_type AS p FROM information_schema.role_table_grants WHERE grantee = $1 ORDER BY 1`,
              [role],
            )
          ).rows.map((r) => r.p as string),
        );
      const before = await privs('ana');
      assert.ok(!before.some((p) => /^(scores|checklist_versions|blade_gt_versions):/.test(p)), before.join(' '));
      assert.ok(!before.some((p) => /^annotations:(UPDATE|DELETE|TRUNCATE)/.test(p)), before.join(' '));
      // a reviewer downgraded to annotator keeps nothing of the reviewer's rights
      await login('temp');
      assert.equal((await cli(['store', 'grant', '--store', ownerUrl, '--role', 'temp', '--as', 'reviewer'])).code, 0);
      assert.ok((await privs('temp')).includes('scores:SELECT'));
      assert.equal((await cli(['store', 'grant', '--store', ownerUrl, '--role', 'temp', '--as', 'annotator'])).code, 0);
      assert.deepEqual(await privs('temp'), before);
      const missing = await cli(['store', 'grant', '--store', ownerUrl, '--role', 'nobody', '--as', 'annotator']);
      assert.notEqual(missing.code, 0);
      assert.match(missing.err, /role nobody: does not exist/);
      const superuser = await cli(['store', 'grant', '--store', ownerUrl, '--role', srv.user, '--as', 'annotator']);
      assert.notEqual(superuser.code, 0);
      assert.match(superuser.err, /owns the store's tables|superuser/);
      const byAnnotator = await cli(['store', 'grant', '--store', anaUrl, '--role', 'bo', '--as', 'reviewer']);
      assert.notEqual(byAnnotator.code, 0);
      assert.match(byAnnotator.err, /role ana: may not grant/);
      const bad = await cli(['store', 'grant', '--store', ownerUrl, '--role', 'bo', '--as', 'admin']);
      assert.equal(bad.code, 2);
      assert.match(bad.err, /--as must be annotator, reviewer, owner/);
    },
  );

  it(
    'a blind annotator annotates through the annotation store and the panel view, and sees other verdicts only after answering',
    { timeout: 60_000 },
    async () => {
      const [anaRs, boRs] = [await openStoreAt(anaUrl), await openStoreAt(boUrl)];
      try {
        const [ana, bo] = [annotationStoreOf(anaRs), annotationStoreOf(boRs)];
        // the annotator opens the queue the owner opened (unchanged) and is served its items
        const q = await ana.openQueue({ kind: 'items' }, { reviewers: 1, blind: false });
        assert.equal(q.id, queueId);
        assert.equal(q.reviewers, 2, 'an annotator opening a queue does not change its rules');
        assert.equal(q.blind, true);
        await assert.rejects(
          ana.openQueue({ kind: 'items', task: 'claim-support' }),
          /may answer queues but not open new ones/,
        );
        // Bo answers the first item
        const first = (await bo.nextItem(q.id, 'Bo'))!;
        const boAnn = await bo.annotate({
          itemId: first.item.id,
          annotator: 'Bo',
          verdict: { supported: false, reason: 'BO-SECRET' },
          queueId: q.id,
          origin: 'panel',
        });
        assert.equal(boAnn.dbRole, 'bo');
        // Ana has not answered it: the store and the panel view show her neither Bo's verdict nor the LLM's
        const entry = (await ana.itemAt(q.id, first.pos))!;
        assert.deepEqual(await ana.annotations(first.item.id), []);
        assert.equal(await ana.llmVerdict(first.item.id), undefined);
        const view = await annotationState(ana, anaRs, q, 'Ana', entry);
        assert.equal(view.item?.revealed, null);
        assert.doesNotMatch(JSON.stringify(view), /BO-SECRET|EXPECTED-/);
        // the queue still counts Bo (two reviewers wanted: the item is served to Ana, and progress shows Bo's work)
        assert.deepEqual((await ana.progress(q.id)).byAnnotator, { Bo: 1 });
        const served = (await ana.nextItem(q.id, 'Ana'))!;
        assert.equal(served.item.id, first.item.id);
        const mine = await ana.annotate({
          itemId: served.item.id,
          annotator: 'Ana',
          verdict: { supported: true, reason: 'ana' },
          queueId: q.id,
          origin: 'panel',
        });
        assert.equal(mine.dbRole, 'ana');
        // answered: now she sees Bo's verdict and the LLM's
        const after = await annotationState(ana, anaRs, q, 'Ana', entry);
        const others = after.item!.revealed!.others.map((o) => `${o.kind}:${o.who}:${o.label}`).sort();
        assert.deepEqual(others, ['human:Ana (role ana):true', 'human:Bo (role bo):false', 'llm:llm:m:true']);
        assert.equal((await ana.llmVerdict(first.item.id))?.judgeId, 'llm:m');
        // a correction supersedes (append-only): a new row, the old one kept
        const fixed = await ana.annotate({
          itemId: first.item.id,
          annotator: 'Ana',
          verdict: { supported: false, reason: 'on reflection' },
          supersedes: mine.id,
          origin: 'panel',
        });
        const all = await annotationStoreOf(owner).annotations(first.item.id);
        assert.deepEqual(all.map((a) => a.id).sort(), [boAnn.id, mine.id, fixed.id].sort());
        assert.equal(currentAnnotations(all).byAnnotator.get('Ana')!.id, fixed.id);
        // the queue is done for this item (two reviewers), so Ana is served the next one
        assert.notEqual((await ana.nextItem(q.id, 'Ana'))?.item.id, first.item.id);
      } finally {
        await anaRs.close();
        await boRs.close();
      }
    },
  );

  it(
    'direct SQL as a blind annotator: no expected answers, no other verdict of an unanswered item',
    { timeout: 60_000 },
    async () => {
      const store = annotationStoreOf(owner);
      const items = (await store.listItems()).map((i) => i.id);
      // Bo answers every item; the one Ana has not answered must stay hidden from her
      const bo = await openStoreAt(boUrl);
      try {
        for (const id of items) {
          const mineAlready = (await annotationStoreOf(bo).annotations(id)).some((a) => a.dbRole === 'bo');
          if (!mineAlready) {
            await annotationStoreOf(bo).annotate({
              itemId: id,
              annotator: 'Bo',
              verdict: { supported: false, reason: 'BO-SECRET' },
              origin: 'cli',
            });
          }
        }
      } finally {
        await bo.close();
      }
      const all = [...(await store.annotationsByItem()).values()].flat();
      const answeredByAna = new Set(all.filter((a) => a.dbRole === 'ana').map((a) => a.itemId));
      const hidden = items.find((id) => !answeredByAna.has(id))!;
      const answered = [...answeredByAna][0]!;
      assert.ok(hidden && answered);
      await as('ana', async (c) => {
        for (const sql of [
          'SELECT detail FROM scores',
          'SELECT * FROM scores',
          'SELECT verdict FROM judgements',
          'SELECT raw_output FROM judgements',
          'SELECT * FROM judgements',
          'SELECT items FROM checklist_versions',
          'SELECT csv FROM blade_gt_versions',
        ]) {
          await assert.rejects(c.query(sql), /permission denied/, sql);
        }
        // what the role reads of judgements: the inputs to itemise, never a verdict
        assert.ok((await c.query('SELECT input_hash, task, input FROM judgements')).rows.length > 0);
        const rows = (await c.query('SELECT annotator, verdict, db_role FROM annotations WHERE item_id = $1', [hidden]))
          .rows;
        assert.deepEqual(rows, [], "Bo's verdict of an item Ana has not answered");
        assert.deepEqual(
          (await c.query('SELECT verdict FROM judge_verdicts_revealed WHERE item_id = $1', [hidden])).rows,
          [],
        );
        // who annotated is visible (queues count reviewers), what they said is not
        const meta = (await c.query('SELECT * FROM annotation_meta WHERE item_id = $1', [hidden])).rows;
        assert.equal(meta.length, 1);
        assert.ok(!('verdict' in meta[0]) && !('note' in meta[0]) && !('evidence' in meta[0]));
        // answered: the item's other verdicts and the LLM's are readable
        assert.ok(
          (await c.query('SELECT 1 FROM annotations WHERE item_id = $1 AND db_role = $2', [answered, 'bo'])).rows
            .length === 1,
        );
        assert.equal(
          (await c.query('SELECT 1 FROM judge_verdicts_revealed WHERE item_id = $1', [answered])).rows.length,
          1,
        );
      });
      // a reviewer reads the expected answers and every verdict, opens queues and scores
      await as('rev', async (c) => {
        assert.equal((await c.query('SELECT detail FROM scores')).rows.length, 1);
        assert.equal((await c.query('SELECT 1 FROM annotations WHERE item_id = $1', [hidden])).rows.length, 1);
      });
      const rev = await openStoreAt(revUrl);
      try {
        const audit = await annotationStoreOf(rev).openQueue({ kind: 'audit', perCriterion: 5 }, { reviewers: 1 });
        assert.equal((await annotationStoreOf(rev).progress(audit.id)).total, N);
        assert.equal((await annotationStoreOf(rev).llmVerdict(hidden))?.judgeId, 'llm:m');
        await rev.scores.save({
          runId: 'run-1',
          benchmark: 'analystbench',
          judgeId: 'human',
          options: {},
          summary: { score: 1 },
          detail: {},
          pending: 0,
          scoredAt: '2026-01-01T00:02:00Z',
        });
        await rev.judgements.put(
          {
            key: 'rev1',
            task: 'claim-support',
            judgeId: 'llm:m2',
            inputHash: 'h9',
            promptHash: 'p',
            input: { claim: 'c', sources: 'S' },
            raw: 'r',
            verdict: { supported: true, reason: '' },
            status: 'done',
            at: '2026-01-01T00:03:00Z',
          },
          { runId: 'run-1' },
        );
        await assert.rejects(rev.deleteRun('run-1'), /permission denied/);
      } finally {
        await rev.close();
      }
    },
  );

  it(
    "UPDATE, DELETE and TRUNCATE of annotations are refused for annotators (own and others'), reviewers and roles granted everything; the owner may",
    { timeout: 60_000 },
    async () => {
      const all = [...(await annotationStoreOf(owner).annotationsByItem()).values()].flat();
      const bos = all.find((a) => a.dbRole === 'bo')!;
      const anas = all.find((a) => a.dbRole === 'ana')!;
      // a role granted SELECT/INSERT/UPDATE/DELETE on every table by hand (the test helper's grant): the trigger refuses
      const greedyUrl = await srv.createRole('greedy', db);
      assert.ok(greedyUrl);
      for (const [who, refused] of [
        ['ana', /permission denied/],
        ['rev', /permission denied/],
        ['greedy', /append-only/],
      ] as const) {
        await as(who, async (c) => {
          for (const target of [bos, anas]) {
            await assert.rejects(
              c.query(`UPDATE annotations SET verdict = '{"supported":true}' WHERE id = $1`, [target.id]),
              refused,
              `${who} UPDATE ${target.dbRole}'s`,
            );
            await assert.rejects(
              c.query('DELETE FROM annotations WHERE id = $1', [target.id]),
              refused,
              `${who} DELETE ${target.dbRole}'s`,
            );
          }
          await assert.rejects(c.query('TRUNCATE annotations'), /permission denied|append-only/, `${who} TRUNCATE`);
        });
      }
      await as(srv.user, async (c) => {
        await c.query(
          `INSERT INTO checklist_versions (suite_id, block_id, suite, version, parent, hash, items, author, created_at) VALUES ('s','b','k',1,NULL,'h','[]','g','t')`,
        );
        await c.query(
          `INSERT INTO blade_gt_versions (dataset, version, parent, hash, csv, author, created_at) VALUES ('d',1,0,'h','x','g','t')`,
        );
      });
      await as('greedy', async (c) => {
        await assert.rejects(
          c.query(`UPDATE checklist_versions SET items = '[1]'`),
          /checklist_versions are append-only/,
        );
        await assert.rejects(c.query('DELETE FROM checklist_versions'), /append-only/);
        await assert.rejects(c.query(`UPDATE blade_gt_versions SET csv = 'y'`), /blade_gt_versions are append-only/);
        await assert.rejects(c.query('DELETE FROM blade_gt_versions'), /append-only/);
      });
      const after = [...(await annotationStoreOf(owner).annotationsByItem()).values()].flat();
      assert.deepEqual(
        after.find((a) => a.id === bos.id),
        bos,
        "Bo's annotation unchanged",
      );
      // the owner (and a role granted owner) may: deleting a whole run still works, and so does deleting annotations
      await login('boss');
      assert.equal((await cli(['store', 'grant', '--store', ownerUrl, '--role', 'boss', '--as', 'owner'])).code, 0);
      await as('boss', async (c) => {
        assert.equal((await c.query('DELETE FROM annotations WHERE id = $1', [bos.id])).rowCount, 1);
      });
      assert.equal(await owner.deleteRun('run-1'), true);
    },
  );
});

describe('sqlite', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'loupe-roles-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('triggers refuse UPDATE and DELETE of annotations and versions; the store API, supersede, run deletion and a repeated copy still work', async () => {
    const file = join(dir, 'runs.sqlite');
    const rs = await openStoreAt(file);
    try {
      await seed(rs);
      const store = annotationStoreOf(rs);
      await store.syncFromJudgements();
      const [item] = await store.listItems();
      const a = await store.annotate({ itemId: item!.id, annotator: 'Ana', verdict: { supported: true, reason: 'x' } });
      const b = await store.annotate({
        itemId: item!.id,
        annotator: 'Ana',
        verdict: { supported: false, reason: 'y' },
        supersedes: a.id,
      });
      assert.equal(currentAnnotations(await store.annotations(item!.id)).byAnnotator.get('Ana')!.id, b.id);
      const db = sqliteHandleOf(rs);
      assert.throws(
        () => db.prepare(`UPDATE annotations SET verdict = '{"supported":false}' WHERE id = ?`).run(a.id),
        /annotations are append-only/,
      );
      assert.throws(
        () => db.prepare('UPDATE annotations SET annotator = ? WHERE id = ?').run('Bo', a.id),
        /append-only/,
      );
      assert.throws(() => db.prepare('DELETE FROM annotations WHERE id = ?').run(a.id), /annotations are append-only/);
      assert.throws(() => db.prepare('DELETE FROM annotations').run(), /append-only/);
      db.prepare(
        `INSERT INTO checklist_versions (suite_id, block_id, suite, version, parent, hash, items, author, created_at) VALUES ('s','b','k',1,NULL,'h','[]','g','t')`,
      ).run();
      db.prepare(
        `INSERT INTO blade_gt_versions (dataset, version, parent, hash, csv, author, created_at) VALUES ('d',1,0,'h','x','g','t')`,
      ).run();
      assert.throws(
        () => db.prepare(`UPDATE checklist_versions SET items = '[1]'`).run(),
        /checklist versions are append-only/,
      );
      assert.throws(() => db.prepare('DELETE FROM checklist_versions').run(), /append-only/);
      assert.throws(
        () => db.prepare(`UPDATE blade_gt_versions SET csv = 'y'`).run(),
        /ground-truth versions are append-only/,
      );
      assert.throws(() => db.prepare('DELETE FROM blade_gt_versions').run(), /append-only/);
      assert.equal((await store.annotations(item!.id)).length, 2);
      // copying into this file twice: the second copy upserts identical rows, which the triggers let through
      const src = join(dir, 'copy-src.sqlite');
      const from = await openStoreAt(src);
      try {
        await copyStore(rs, from);
        await copyStore(from, rs);
        await copyStore(from, rs);
      } finally {
        await from.close();
      }
      assert.equal((await store.annotations(item!.id)).length, 2);
      assert.equal(await rs.deleteRun('run-1'), true);
    } finally {
      await rs.close();
    }
  });

  it('loupe store grant on a file store says it has no roles', async () => {
    const file = join(dir, 'g.sqlite');
    await (await openStoreAt(file)).close();
    const r = await cli(['store', 'grant', '--store', file, '--role', 'ana', '--as', 'annotator']);
    assert.notEqual(r.code, 0);
    assert.match(r.err, /a SQLite store file has no database roles/);
  });
});
