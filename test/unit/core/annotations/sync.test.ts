/**
 * Issue 23 (first item of a 10,000-item queue): the incremental sync (migration 9's watermark kept by triggers,
 * items inserted in index order with their suite version) and the one-statement `items` queue fill must behave
 * exactly as the code they replace. The replaced code is kept here as the reference: seeded random histories —
 * several judges per input, judged_at out of rowid order, upserts, a deleted judgement whose rowid is reused, a run
 * that appears later, annotations that resolve items and a tie that makes one pending again — are applied to two
 * stores, synced and queued by the product on one and by the reference on the other, then compared row for row.
 */
import assert from 'node:assert/strict';
import type Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  ANNOTATABLE_TASKS,
  SqliteAnnotationStore,
  annotationStoreOf,
  resolveItem,
  schemaVersion,
  suiteVersionOf,
  type AnnotationStore,
  type QueueSpec,
} from '../../../../src/core/annotations/index.ts';
import { canonicalJson, sha256 } from '../../../../src/core/eval/judges/canonical.ts';
import { openStore, sqliteHandleOf, type RunStore } from '../../../../src/core/store/run-store.ts';
import { seededRandom } from '../../../../src/core/util/random.ts';

type Row = Record<string, unknown>;

/** The sync before issue 23: every judgement not itemised, NOT EXISTS per row, sorted, suite versions afterwards. */
function referenceSync(db: Database.Database): number {
  const tasks = ANNOTATABLE_TASKS.map((t) => `'${t}'`).join(',');
  const versionCase = `CASE j.task ${ANNOTATABLE_TASKS.map((t) => `WHEN '${t}' THEN '${schemaVersion(t)}'`).join(' ')} END`;
  return db.transaction(() => {
    const changes = db
      .prepare(
        `INSERT OR IGNORE INTO annotation_items (id, subject_kind, subject, task, schema_version, input, input_hash, criterion, suite, run_id, item_ref, suite_version, created_at)
      SELECT 'j:' || j.task || ':' || j.input_hash, 'judgement', json_object('kind', 'judgement', 'task', j.task, 'inputHash', j.input_hash), j.task, ${versionCase}, j.input, j.input_hash,
        CASE j.task WHEN 'checklist-score' THEN json_extract(j.input, '$.criterion') WHEN 'checklist-support' THEN json_extract(j.input, '$.question')
          WHEN 'trend-answer' THEN json_extract(j.input, '$.question') WHEN 'semantic-match' THEN json_extract(j.input, '$.kind') END,
        r.suite, j.run_id, j.item_ref, 'unknown', j.judged_at
      FROM judgements j LEFT JOIN runs r ON r.id = j.run_id
      WHERE j.task IN (${tasks}) AND j.judge_id NOT IN ('exact', 'none')
        AND NOT EXISTS (SELECT 1 FROM annotation_items i WHERE i.id = 'j:' || j.task || ':' || j.input_hash)
      ORDER BY j.judged_at, j.rowid`,
      )
      .run().changes;
    if (changes) {
      const runs = db
        .prepare(
          `SELECT DISTINCT r.id, r.data_checksums FROM annotation_items i JOIN runs r ON r.id = i.run_id WHERE i.suite_version = 'unknown'`,
        )
        .all() as Row[];
      const upd = db.prepare(
        `UPDATE annotation_items SET suite_version = ? WHERE run_id = ? AND suite_version = 'unknown'`,
      );
      for (const r of runs) {
        const v = suiteVersionOf(r.data_checksums as string | null);
        if (v !== 'unknown') upd.run(v, r.id);
      }
    }
    return changes;
  })();
}

/** The `items` queue fill before issue 23: every matching id through JS, INSERT OR IGNORE one by one. */
async function referenceOpenItemsQueue(
  db: Database.Database,
  store: AnnotationStore,
  id: string,
  spec: QueueSpec,
): Promise<void> {
  referenceSync(db);
  const w: string[] = [];
  const p: unknown[] = [];
  if (spec.task) {
    w.push('i.task = ?');
    p.push(spec.task);
  }
  if (spec.runIds?.length) {
    w.push(`i.run_id IN (${spec.runIds.map(() => '?').join(',')})`);
    p.push(...spec.runIds);
  }
  const and = w.length ? `WHERE ${w.join(' AND ')} AND` : 'WHERE';
  const rows = db
    .prepare(
      `SELECT i.id, i.task FROM annotation_items i ${and} EXISTS (SELECT 1 FROM judgements j WHERE j.input_hash = i.input_hash AND j.task = i.task AND j.judge_id = 'human')
    ORDER BY i.created_at, i.rowid`,
    )
    .all(...p) as Row[];
  const anns = await store.annotationsByItem({
    ...(spec.task ? { task: spec.task } : {}),
    ...(spec.runIds ? { runIds: spec.runIds } : {}),
  });
  const ids = spec.includeResolved
    ? rows.map((r) => r.id as string)
    : rows
        .filter((r) => {
          const a = anns.get(r.id as string);
          return !a || resolveItem({ id: r.id as string, task: r.task as string }, a).decidedBy === 'pending';
        })
        .map((r) => r.id as string);
  db.prepare(
    'INSERT OR IGNORE INTO annotation_queues (id, name, kind, spec, reviewers, reservation_ms, blind, created_at) VALUES (?,?,?,?,1,1,1,?)',
  ).run(id, 'reference', spec.kind, JSON.stringify(spec), '2026-01-01');
  db.transaction(() => {
    let pos = (
      db.prepare('SELECT COALESCE(MAX(pos), -1) AS m FROM annotation_queue_items WHERE queue_id = ?').get(id) as {
        m: number;
      }
    ).m;
    const ins = db.prepare('INSERT OR IGNORE INTO annotation_queue_items (queue_id, pos, item_id) VALUES (?,?,?)');
    for (const itemId of ids) if (ins.run(id, pos + 1, itemId).changes) pos++;
  })();
}

const TASK_INPUTS: Record<string, (k: number) => Record<string, unknown>> = {
  'claim-support': (k) => ({ claim: `Claim ${k}: the rate was ${k}%.`, sources: `Table ${k % 3}` }),
  'checklist-score': (k) => ({
    instruction: 'Write a report',
    response: `Response ${k}`,
    criterion: ['Clarity', 'Depth', 'Rigour'][k % 3],
  }),
  'semantic-match': (k) => ({ kind: ['variable', 'transform'][k % 2], a: `a${k}`, b: `b${k}` }),
  'not-annotatable': (k) => ({ x: k }),
};
const JUDGES = ['human', 'human', 'llm:m', 'exact', 'none'];

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function newStore(): RunStore {
  const d = mkdtempSync(join(tmpdir(), 'loupe-annot-sync-'));
  dirs.push(d);
  return openStore(join(d, 'runs.sqlite'));
}

async function createRun(rs: RunStore, id: string, checksums: Record<string, string>): Promise<void> {
  await rs.createRun({
    id,
    suite: 'analystbench',
    blockId: 'b',
    agent: 'llm',
    model: 'm',
    params: {},
    promptHash: 'h',
    toolSet: 't',
    dataChecksums: checksums,
    loupeVersion: 't',
    sandbox: 'off',
    workspace: '/tmp',
  });
}

const items = (db: Database.Database) => db.prepare('SELECT rowid AS r, * FROM annotation_items ORDER BY rowid').all();
const queued = (db: Database.Database, q: string) =>
  db.prepare('SELECT pos, item_id FROM annotation_queue_items WHERE queue_id = ? ORDER BY pos').all(q);

describe('annotation items and queues: incremental sync and one-statement queue fill (issue 23)', () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`seed ${seed}: items and queues are those of the replaced code, row for row`, async () => {
      const rnd = seededRandom(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
      const subject = newStore();
      const reference = newStore();
      const sdb = sqliteHandleOf(subject);
      const rdb = sqliteHandleOf(reference);
      const sStore = annotationStoreOf(subject);
      const rStore = new SqliteAnnotationStore(rdb);
      for (const rs of [subject, reference]) {
        await createRun(rs, 'r1', { 'a.csv': 'x' });
        await createRun(rs, 'r2', {});
      }
      const keys: string[] = [];
      const specs: Array<{ id: string; spec: QueueSpec }> = [
        { id: 'q-all', spec: { kind: 'items' } },
        { id: 'q-claims', spec: { kind: 'items', task: 'claim-support' } },
        { id: 'q-with-resolved', spec: { kind: 'items', includeResolved: true } },
        { id: 'q-r1', spec: { kind: 'items', runIds: ['r1', 'r3'] } },
      ];
      const subjectQueue = new Map<string, string>();
      for (let round = 0; round < 5; round++) {
        const write = (sql: string, ...args: unknown[]) => {
          sdb.prepare(sql).run(...args);
          rdb.prepare(sql).run(...args);
        };
        const n = 5 + Math.floor(rnd() * 25);
        for (let i = 0; i < n; i++) {
          const r = rnd();
          if (r < 0.15 && keys.length) {
            // an upsert as SqliteJudgementRows.put does it (the row keeps its rowid; no key column changes)
            write(
              `UPDATE judgements SET status = 'done', verdict = '{}', judged_at = ? WHERE cache_key = ?`,
              `2026-01-0${1 + Math.floor(rnd() * 9)}T00:00:00.000Z`,
              pick(keys),
            );
            continue;
          }
          if (r < 0.2 && keys.length) {
            // the newest judgement deleted: the next insert reuses its rowid
            const last = sdb.prepare('SELECT cache_key FROM judgements ORDER BY rowid DESC LIMIT 1').get() as {
              cache_key: string;
            };
            write('DELETE FROM judgements WHERE cache_key = ?', last.cache_key);
          }
          const task = pick(Object.keys(TASK_INPUTS));
          const input = TASK_INPUTS[task]!(Math.floor(rnd() * 12));
          const hash = sha256(`${task}\u0000${canonicalJson(input)}`);
          const judge = pick(JUDGES);
          const key = sha256(`${judge}\u0000${task}\u0000${hash}\u0000${keys.length}`);
          keys.push(key);
          // judged_at out of rowid order, with ties
          const at = `2026-01-0${1 + Math.floor(rnd() * 9)}T00:00:00.000Z`;
          write(
            `INSERT INTO judgements (cache_key, judge_id, task, input_hash, prompt_hash, input, raw_output, verdict, status, run_id, item_ref, judged_at) VALUES (?,?,?,?,NULL,?,NULL,NULL,'pending',?,?,?)`,
            key,
            judge,
            task,
            hash,
            JSON.stringify(input),
            pick(['r1', 'r2', 'r3', null]),
            `item ${i}`,
            at,
          );
        }
        if (round === 2) {
          // r3 appears: items of earlier syncs that named it get its suite version at the next sync that creates items
          await createRun(subject, 'r3', { 'b.csv': 'y' });
          await createRun(reference, 'r3', { 'b.csv': 'y' });
        }
        const created = await sStore.syncFromJudgements();
        assert.equal(created, referenceSync(rdb), `round ${round}: items created`);
        assert.equal(await sStore.syncFromJudgements(), 0, 'a second sync finds nothing new');
        assert.deepEqual(items(sdb), items(rdb), `round ${round}: annotation_items`);
        for (const { id, spec } of specs) {
          const q = await sStore.openQueue(spec);
          subjectQueue.set(id, q.id);
          await referenceOpenItemsQueue(rdb, rStore, id, spec);
          assert.deepEqual(queued(sdb, q.id), queued(rdb, id), `round ${round}: queue ${id}`);
        }
        // verdicts on some claims: one annotator resolves an item; a second, disagreeing one makes it a tie (pending)
        const claims = (
          sdb.prepare(`SELECT id FROM annotation_items WHERE task = 'claim-support' ORDER BY rowid`).all() as Array<{
            id: string;
          }>
        ).map((r) => r.id);
        for (let k = 0; k < 5 && claims.length; k++) {
          const itemId = pick(claims);
          const who = pick(['ann-a', 'ann-b']);
          const verdict = { supported: who === 'ann-a', reason: '' };
          await sStore.annotate({ itemId, annotator: who, verdict });
          await rStore.annotate({ itemId, annotator: who, verdict });
        }
      }
      assert.ok(
        (sdb.prepare('SELECT COUNT(*) AS n FROM annotation_items').get() as { n: number }).n > 10,
        'the history created items',
      );
      subject.close();
      reference.close();
    });
  }

  it('a first sync of thousands of judgements (checkpoint on a worker thread) creates the same items', async () => {
    const subject = newStore();
    const reference = newStore();
    const rnd = seededRandom(42);
    for (const rs of [subject, reference]) await createRun(rs, 'r1', { 'a.csv': 'x' });
    const ins = [subject, reference].map((rs) =>
      sqliteHandleOf(rs)
        .prepare(`INSERT INTO judgements (cache_key, judge_id, task, input_hash, prompt_hash, input, raw_output, verdict, status, run_id, item_ref, judged_at)
      VALUES (?,?,?,?,NULL,?,NULL,NULL,'pending',?,NULL,?)`),
    );
    for (let i = 0; i < 1500; i++) {
      const task = ['claim-support', 'checklist-score', 'semantic-match'][i % 3]!;
      const input = TASK_INPUTS[task]!(Math.floor(rnd() * 1000));
      const hash = sha256(`${task}\u0000${canonicalJson(input)}`);
      const judge = JUDGES[Math.floor(rnd() * JUDGES.length)]!;
      const at = new Date(Date.UTC(2026, 0, 1) + Math.floor(rnd() * 1e6)).toISOString();
      for (const s of ins) s.run(`k${i}`, judge, task, hash, JSON.stringify(input), i % 4 ? 'r1' : null, at);
    }
    const sdb = sqliteHandleOf(subject);
    const created = await annotationStoreOf(subject).syncFromJudgements();
    assert.ok(created > 500);
    assert.equal(created, referenceSync(sqliteHandleOf(reference)));
    assert.deepEqual(items(sdb), items(sqliteHandleOf(reference)));
    assert.equal(sdb.pragma('wal_autocheckpoint', { simple: true }), 0, 'the checkpoint was left to the worker');
    for (let t = 0; t < 200 && sdb.pragma('wal_autocheckpoint', { simple: true }) === 0; t++) {
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.equal(
      sdb.pragma('wal_autocheckpoint', { simple: true }),
      1000,
      'automatic checkpoints are back on after it',
    );
    subject.close();
    reference.close();
  });

  it('the watermark: nothing new reads one row; a judgement written by any means (raw SQL) is itemised next time', async () => {
    const rs = newStore();
    const db = sqliteHandleOf(rs);
    const store = annotationStoreOf(rs);
    const mark = () => (db.prepare('SELECT judgements_from AS f FROM annotation_sync').get() as { f: number | null }).f;
    assert.equal(mark(), null);
    assert.equal(await store.syncFromJudgements(), 0);
    const input = { claim: 'c', sources: 's' };
    const hash = sha256(`claim-support\u0000${canonicalJson(input)}`);
    db.prepare(
      `INSERT INTO judgements (cache_key, judge_id, task, input_hash, input, status, judged_at) VALUES ('k1', 'human', 'claim-support', ?, ?, 'pending', '2026-01-01')`,
    ).run(hash, JSON.stringify(input));
    assert.equal(
      mark(),
      (db.prepare(`SELECT rowid AS r FROM judgements WHERE cache_key = 'k1'`).get() as { r: number }).r,
    );
    assert.equal(await store.syncFromJudgements(), 1);
    assert.equal(mark(), null);
    assert.equal(await store.syncFromJudgements(), 0);
    // a change of task / judge / input hash counts as new (an upsert of verdict or status does not)
    db.prepare(`UPDATE judgements SET status = 'done' WHERE cache_key = 'k1'`).run();
    assert.equal(mark(), null);
    db.prepare(`UPDATE judgements SET judge_id = 'llm:x' WHERE cache_key = 'k1'`).run();
    assert.notEqual(mark(), null);
    rs.close();
  });

  it('migration 9 on a store with judgements: the first sync after the upgrade itemises them all', async () => {
    const rs = newStore();
    const db = sqliteHandleOf(rs);
    db.exec(`DELETE FROM annotation_sync; INSERT INTO annotation_sync (id, judgements_from) VALUES (1, NULL);`);
    for (let k = 0; k < 3; k++) {
      const input = { claim: `c${k}`, sources: 's' };
      db.prepare(
        `INSERT INTO judgements (cache_key, judge_id, task, input_hash, input, status, judged_at) VALUES (?, 'human', 'claim-support', ?, ?, 'pending', '2026-01-01')`,
      ).run(`k${k}`, sha256(`claim-support\u0000${canonicalJson(input)}`), JSON.stringify(input));
    }
    // as if the judgements predated the migration: its own statement sets the watermark
    db.exec(
      `UPDATE annotation_sync SET judgements_from = NULL; UPDATE annotation_sync SET judgements_from = (SELECT MIN(rowid) FROM judgements);`,
    );
    assert.equal(await annotationStoreOf(rs).syncFromJudgements(), 3);
    rs.close();
  });
});
