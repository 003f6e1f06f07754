/**
 * Issue 39, the interplay of append-only expert judgements (migration 18) and `loupe store copy`: a target that already
 * holds an annotation with the same id but other content keeps its own, the copy names that row (table and id,
 * "refused: annotations are append-only") and copies everything else, exit code 1 — in both directions between SQLite
 * and each engine. Before, SQLite's trigger message did not say "refused" and a PostgreSQL target copied by its owner
 * had the annotation silently overwritten (the source won).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { main } from '../../../../src/cli/main.ts';
import { annotationStoreOf } from '../../../../src/core/annotations/index.ts';
import { canonicalJson, sha256 } from '../../../../src/core/eval/judges/index.ts';
import { APPEND_ONLY_TABLES } from '../../../../src/core/store/copy.ts';
import { pgPoolOf } from '../../../../src/core/store/pg-run-store.ts';
import { openStore, sqliteHandleOf } from '../../../../src/core/store/run-store.ts';
import type { RunStore } from '../../../../src/core/store/types.ts';
import { forEachEngine } from '../../../helpers/store-engines.ts';

let dir = '';
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-copy-ao-'));
});
after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function cli(args: string[]): Promise<{ code: number; err: string }> {
  const err: string[] = [];
  const code = await main(args, { out: () => undefined, err: (s) => err.push(s), env: process.env, cwd: dir });
  return { code, err: err.join('') };
}

async function addRun(s: RunStore, id: string): Promise<void> {
  await s.createRun({
    id,
    suite: 's',
    blockId: `b-${id}`,
    agent: 'llm',
    model: 'm',
    params: {} as never,
    promptHash: 'h',
    toolSet: 't',
    dataChecksums: {},
    loupeVersion: 't',
    sandbox: 'off',
    workspace: '',
  });
}

/** Changes an annotation's verdict behind the store's back (SQLite: with its trigger dropped; PostgreSQL: as the owner). */
async function editVerdict(s: RunStore, id: string): Promise<void> {
  const verdict = JSON.stringify({ supported: false, reason: 'edited in the target' });
  if (s.engine === 'sqlite') {
    const db = sqliteHandleOf(s);
    const trig = db.prepare("SELECT sql FROM sqlite_master WHERE name = 'annotations_append_only_update'").get() as {
      sql: string;
    };
    db.exec('DROP TRIGGER annotations_append_only_update');
    db.prepare('UPDATE annotations SET verdict = ? WHERE id = ?').run(verdict, id);
    db.exec(trig.sql);
  } else {
    await pgPoolOf(s).query('UPDATE annotations SET verdict = $1 WHERE id = $2', [verdict, id]);
  }
}

it('every table the database keeps append-only is one a copy never overwrites (a new one must be added to APPEND_ONLY_TABLES)', async () => {
  const s = openStore(join(dir, 'triggers.sqlite'));
  const guarded = (
    sqliteHandleOf(s)
      .prepare(
        "SELECT DISTINCT tbl_name AS t FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%append_only%' ORDER BY 1",
      )
      .all() as { t: string }[]
  ).map((r) => r.t);
  await s.close();
  assert.deepEqual(guarded, [...APPEND_ONLY_TABLES].sort());
});

forEachEngine((e) => {
  it(
    'a target holding an annotation with the same id and other content keeps it; the copy names it and copies the rest, both ways',
    { timeout: 120_000 },
    async () => {
      const file = join(dir, `${e.name}-a.sqlite`);
      const a = openStore(file);
      await addRun(a, 'r1');
      const input = { claim: 'GDP grew.', sources: 'Report.' };
      const inputHash = sha256(`claim-support\u0000${canonicalJson(input)}`);
      await a.judgements.put(
        {
          key: 'k-llm',
          task: 'claim-support',
          judgeId: 'llm:m',
          inputHash,
          promptHash: 'p',
          input,
          raw: '{"supported":true}',
          verdict: { supported: true, reason: 'ok' },
          status: 'done',
          at: '2026-01-01T00:00:01Z',
        },
        { runId: 'r1' },
      );
      const annA = annotationStoreOf(a);
      assert.equal(await annA.syncFromJudgements(), 1);
      const item = (await annA.listItems())[0]!;
      const ann1 = await annA.annotate({
        itemId: item.id,
        annotator: 'ana',
        verdict: { supported: true, reason: 'page 2' },
      });
      await annA.annotate({ itemId: item.id, annotator: 'bo', verdict: { supported: true, reason: 'page 3' } });
      await a.close();

      const url = await e.fresh();
      assert.equal((await cli(['store', 'copy', '--from', file, '--to', url])).code, 0);
      let x = await e.open(url);
      await editVerdict(x, ann1.id);
      const edited = (await annotationStoreOf(x).annotations(item.id)).find((n) => n.id === ann1.id)!;
      assert.equal((edited.verdict as { reason: string }).reason, 'edited in the target');
      await addRun(x, 'r-only-in-x');
      await x.close();

      // more in the source since the first copy
      const a2 = openStore(file);
      await addRun(a2, 'r2');
      const ann3 = await annotationStoreOf(a2).annotate({
        itemId: item.id,
        annotator: 'cy',
        verdict: { supported: false, reason: 'no' },
      });
      await a2.close();

      // SQLite → target: the target's annotation is kept, named, and everything else arrives
      const there = await cli(['store', 'copy', '--from', file, '--to', url]);
      assert.equal(there.code, 1, there.err);
      assert.match(there.err, new RegExp(`annotations id=${ann1.id}: refused: annotations are append-only`), there.err);
      assert.equal(there.err.trim().split('\n').length, 1, there.err);
      x = await e.open(url);
      let got = await annotationStoreOf(x).annotations(item.id);
      assert.equal(
        (got.find((n) => n.id === ann1.id)!.verdict as { reason: string }).reason,
        'edited in the target',
        "the target's row is never overwritten",
      );
      assert.ok(
        got.some((n) => n.id === ann3.id),
        'the rest is copied',
      );
      assert.ok(await x.getRun('r2'));
      await x.close();

      // target → SQLite: the other direction refuses the same row and copies the run only the target had
      const back = await cli(['store', 'copy', '--from', url, '--to', file]);
      assert.equal(back.code, 1, back.err);
      assert.match(back.err, new RegExp(`annotations id=${ann1.id}: refused: annotations are append-only`), back.err);
      assert.equal(back.err.trim().split('\n').length, 1, back.err);
      const a3 = openStore(file);
      got = await annotationStoreOf(a3).annotations(item.id);
      assert.equal((got.find((n) => n.id === ann1.id)!.verdict as { reason: string }).reason, 'page 2');
      assert.ok(await a3.getRun('r-only-in-x'), 'the rest is copied');
      await a3.close();
    },
  );
});
