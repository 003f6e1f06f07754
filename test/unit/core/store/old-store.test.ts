/**
 * A store written by main d84c5fa (before the stores moved onto Kysely, issue 41) opens with today's code on both
 * engines: the migrations it recorded (1..18) are not run again, its schema is the schema today's migrations create,
 * and every read (runs, steps, cells, answers, events, lease, judgements, scores, artefacts, annotations, checklist and
 * ground-truth versions, the trajectory export) returns what that code read (`test/fixtures/old-store/`, written by
 * its committed generator); it takes new writes (a score, an annotation, a checklist version).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { annotationStoreOf } from '../../../../src/core/annotations/index.ts';
import { checklistStoreOf } from '../../../../src/core/annotations/checklists.ts';
import { migrations } from '../../../../src/core/store/migrations.ts';
import { openStoreAt } from '../../../../src/core/store/open.ts';
import { sqliteHandleOf } from '../../../../src/core/store/run-store.ts';
import type { RunStore } from '../../../../src/core/store/types.ts';
import type { RunState } from '../../../../src/core/agent/types.ts';
import { LONGDA_RUN_STATE, longdaRunState } from '../../../../src/core/benchmarks/longda/run-state.ts';
import { oldStoreReads } from '../../../fixtures/old-store/reads.ts';
import { startPg, type PgServer } from '../../../helpers/pg.ts';
import { pgSchema, sqliteSchema, type SchemaShape } from '../../../helpers/schema.ts';

const FIXTURES = join(import.meta.dirname, '../../../fixtures/old-store');
let dir = '';
let srv: PgServer;
/** JSON-equal form; the export header's time (when the reads ran) is the one value that differs by design. */
const noExportTime = (k: string, v: unknown) => (k === 'exportedAt' ? '(time of export)' : v);
const json = (x: unknown) => JSON.parse(JSON.stringify(x), noExportTime) as unknown;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-oldstore-'));
  srv = await startPg({ fsync: 'off' });
});
after(() => {
  srv?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function pgClient(database: string): pg.Client {
  return new pg.Client({
    host: srv.host,
    port: srv.port,
    user: srv.user,
    password: process.env[srv.passwordEnv],
    database,
  });
}

async function pgSchemaOf(database: string): Promise<SchemaShape> {
  const c = pgClient(database);
  await c.connect();
  try {
    return await pgSchema(c);
  } finally {
    await c.end();
  }
}

/** The old store of an engine restored from its dump; its location. */
async function restore(engine: 'sqlite' | 'postgres', name: string): Promise<string> {
  const text = readFileSync(join(FIXTURES, `${engine}.sql`), 'utf8');
  if (engine === 'sqlite') {
    const file = join(dir, `${name}.sqlite`);
    const db = new Database(file);
    db.exec(text);
    db.close();
    return file;
  }
  const url = await srv.createDatabase(name);
  const c = pgClient(name);
  await c.connect();
  try {
    await c.query(text);
  } finally {
    await c.end();
  }
  return url;
}

async function checkWrites(s: RunStore): Promise<void> {
  await s.scores.save({
    runId: 'r2',
    benchmark: 'analystbench',
    judgeId: 'exact',
    options: {},
    summary: { score: 1 },
    detail: {},
    pending: 0,
    scoredAt: '2026-02-01T00:00:00Z',
  });
  assert.equal((await s.scores.list('r2')).length, 1);
  const ann = annotationStoreOf(s);
  const [item] = await ann.listItems();
  await ann.annotate({ itemId: item!.id, annotator: 'bo', verdict: { supported: false, reason: 'no' } });
  assert.equal((await ann.annotations(item!.id)).length, 2);
  const v = await checklistStoreOf(s).save(
    { suite: 'ddr', suiteId: 'ddr:x', blockId: 'p1' },
    {
      base: 1,
      items: [
        {
          id: 'c1',
          kind: 'fact',
          question: 'Gender?',
          answer: 'M',
          author: 'bo',
          updatedAt: '2026-02-01T00:00:00.000Z',
        },
      ],
      author: 'bo',
    },
  );
  assert.equal(v.version.version, 2);
}

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`a ${engine} store written by main d84c5fa`, () => {
    it("opens without re-running its migrations, with the schema today's migrations create", async () => {
      const loc = await restore(engine, `old_schema_${engine}`);
      const s = await openStoreAt(loc);
      assert.equal(await s.schemaVersion(), migrations.at(-1)!.id);
      const freshLoc = engine === 'sqlite' ? join(dir, 'fresh.sqlite') : await srv.createDatabase('fresh');
      const f = await openStoreAt(freshLoc);
      if (engine === 'sqlite') {
        const applied = sqliteHandleOf(s).prepare('SELECT id, applied_at FROM migrations ORDER BY id').all() as {
          id: number;
          applied_at: string;
        }[];
        // the fixture recorded ids 1..18; later migrations (19 on, issue 43) are applied now
        assert.ok(
          applied.filter((m) => m.id <= 18).every((m) => m.applied_at.startsWith('2026-11-28T04:11')),
          'no migration re-applied',
        );
        assert.deepEqual(sqliteSchema(sqliteHandleOf(s)), sqliteSchema(sqliteHandleOf(f)));
      }
      await s.close();
      await f.close();
      if (engine === 'postgres') assert.deepEqual(await pgSchemaOf('old_schema_postgres'), await pgSchemaOf('fresh'));
    });

    it('reads what main read, and takes new writes', async () => {
      const s = await openStoreAt(await restore(engine, `old_reads_${engine}`));
      try {
        const expected = JSON.parse(
          readFileSync(join(FIXTURES, `reads-${engine}.json`), 'utf8'),
          noExportTime,
        ) as unknown;
        assert.deepEqual(json(await oldStoreReads(s)), expected);
        await checkWrites(s);
      } finally {
        await s.close();
      }
    });

    it("gives a resumed run its answers, notes and saved code through the benchmark's own per-run state (issue 40)", async () => {
      const s = await openStoreAt(await restore(engine, `old_state_${engine}`));
      try {
        const expected = JSON.parse(readFileSync(join(FIXTURES, `reads-${engine}.json`), 'utf8')) as {
          runs: Record<
            string,
            {
              answers: Array<{ queryId: string; answer: unknown; raw: string; stepIndex: number }>;
              notes: string[];
              code: string | null;
            }
          >;
        };
        for (const [id, want] of Object.entries(expected.runs)) {
          const state: RunState = { extra: {}, benchmark: {} };
          LONGDA_RUN_STATE.init(state);
          assert.equal(await LONGDA_RUN_STATE.restore(state, s, id), `${want.answers.length} answers restored`);
          const got = longdaRunState(state);
          assert.deepEqual(
            json(
              [...got.answers].map(([queryId, a]) => ({
                queryId,
                answer: a.answer,
                raw: a.raw,
                stepIndex: a.stepIndex,
              })),
            ),
            json(
              want.answers.map((a) => ({ queryId: a.queryId, answer: a.answer, raw: a.raw, stepIndex: a.stepIndex })),
            ),
          );
          assert.deepEqual([got.notes, got.savedCode], [want.notes, want.code]);
          // nothing changed: the next step writes no row
          assert.deepEqual(LONGDA_RUN_STATE.effects(LONGDA_RUN_STATE.snapshot(state), state, id, 9), { answers: [] });
        }
      } finally {
        await s.close();
      }
    });
  });
}
