/**
 * Red team: DDR's `execute_query` tool attacked as an adversarial agent would (issue 11), through the real
 * agent loop and a scripted model. The block's database sits next to a run store holding a held-out answer
 * (as `.loupe/runs.sqlite` does in a CLI working folder) and the suite's checklist; the agent tries to read
 * them (`ATTACH`), to write on the host (`VACUUM INTO`), `PRAGMA`, stacked statements and extension loading.
 * Every observation is checked for the secret; the host folder is checked for new files.
 * Below the statement check, the sandbox itself is tested: with the check switched off (test-only option)
 * an `ATTACH` of the store cannot see the file and `VACUUM INTO` a host path cannot reach the host.
 */
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { LlmClient } from '../../../src/core/agent/llm.ts';
import { openStore, type RunStore } from '../../../src/core/store/run-store.ts';
import type { Block } from '../../../src/core/suites/types.ts';
import { closeDdrDatabases, createDdrToolSet } from '../../../src/core/benchmarks/ddr/toolset.ts';
import { SqlRunner, checkReadStatement } from '../../../src/core/benchmarks/ddr/sql-tool.ts';
import { call, startScriptedLlm, type ChatRequestBody, type ScriptedLlm } from '../../helpers/scripted-llm.ts';
import { runWithModel } from '../../helpers/toolsets.ts';

const SECRET = '39.8123456789';

function makeHost(): { dir: string; dbPath: string; storePath: string } {
  const dir = mkdtempSync(join(tmpdir(), 'loupe-redteam-sql-'));
  const dbPath = join(dir, 'entities.sqlite');
  const db = new Database(dbPath);
  db.exec(
    "CREATE TABLE patients (subject_id INTEGER, gender TEXT, anchor_age INTEGER); INSERT INTO patients VALUES (1, 'F', 52), (2, 'M', 61);",
  );
  db.close();
  mkdirSync(join(dir, '.loupe'));
  const storePath = join(dir, '.loupe', 'runs.sqlite');
  const st = new Database(storePath);
  st.exec(`CREATE TABLE scores (run_id TEXT, json TEXT); INSERT INTO scores VALUES ('r1', '{"expected":${SECRET}}');`);
  st.close();
  writeFileSync(join(dir, 'qa.json'), JSON.stringify([{ question: 'q', answer: SECRET }]));
  return { dir, dbPath, storePath };
}

function block(dbPath: string): Block {
  return {
    id: 'patient_1',
    suite: 'ddr',
    suiteId: 'ddr:redteam',
    title: 'patient 1',
    items: [{ type: 'ddr-entity', id: '1', entityId: '1', prompt: 'Analyze the patient with subject_id=1' }],
    visible: { data: [], docs: [], database: { path: dbPath, rel: 'entities.sqlite', tables: [] }, missing: [] },
    hidden: { files: [], checklist: [] },
    runnable: true,
    problems: [],
    ddr: { entityId: '1', entityColumn: 'subject_id', checklistCount: 0 },
  } as unknown as Block;
}

describe('red team: the DDR SQL tool gives an agent no path to the answers or the host', () => {
  let host: ReturnType<typeof makeHost>;
  let store: RunStore;
  let srv: ScriptedLlm;
  const attacks = (h: ReturnType<typeof makeHost>): string[] => [
    `ATTACH DATABASE '${h.storePath}' AS st`,
    "ATTACH DATABASE '.loupe/runs.sqlite' AS st",
    `ATTACH '${h.storePath}' AS st; SELECT json FROM st.scores`,
    `SELECT 1; ATTACH DATABASE '${h.storePath}' AS st`,
    `VACUUM INTO '${join(h.dir, 'copied.sqlite')}'`,
    `vacuum   into '${join(h.dir, 'copied2.sqlite')}'`,
    'PRAGMA database_list',
    'PRAGMA writable_schema = ON',
    `SELECT load_extension('${join(h.dir, 'evil.so')}')`,
    "/* comment */ ATTACH DATABASE 'file:" + h.storePath + "?mode=ro' AS st",
    `WITH x AS (SELECT 1) SELECT * FROM x; DETACH st`,
    'DELETE FROM patients',
    `CREATE TABLE leak AS SELECT 1`,
  ];
  const observations: string[] = [];

  before(async () => {
    host = makeHost();
    store = openStore(':memory:');
    const list = attacks(host);
    const script = [
      ...list.map((sql, i) => (req: ChatRequestBody) => {
        if (i > 0) observations.push(String([...req.messages].reverse().find((m) => m.role === 'tool')?.content ?? ''));
        return { content: `attempt ${i + 1}`, toolCalls: [call('execute_query', { sql })] };
      }),
      (req: ChatRequestBody) => {
        observations.push(String([...req.messages].reverse().find((m) => m.role === 'tool')?.content ?? ''));
        return {
          content: 'Legit query.',
          toolCalls: [
            call('execute_query', {
              sql: "SELECT gender, anchor_age FROM patients WHERE subject_id = 1 AND gender <> 'attach'",
            }),
          ],
        };
      },
      (req: ChatRequestBody) => {
        observations.push(String([...req.messages].reverse().find((m) => m.role === 'tool')?.content ?? ''));
        return { content: 'FINISH: done.' };
      },
    ];
    srv = await startScriptedLlm({ scriptFor: () => script });
  });
  after(async () => {
    await srv?.close();
    closeDdrDatabases();
    store?.close();
  });

  it('every attack is refused with a clear reason, no observation holds the secret, the host folder is unchanged', async () => {
    const before = readdirSync(host.dir).sort();
    const toolSet = createDdrToolSet({ python: false });
    const b = block(host.dbPath);
    const model = new LlmClient({ baseUrl: srv.baseUrl, model: 'scripted' });
    const res = await runWithModel({ store, runId: 'redteam-sql', toolSet, block: b, ws: host.dir, model });
    assert.equal(res.status, 'finished', res.reason);
    const n = attacks(host).length;
    assert.equal(observations.length, n + 1);
    for (let i = 0; i < n; i++) {
      const o = observations[i]!;
      assert.ok(!o.includes(SECRET), `attack ${i + 1} leaked: ${o}`);
      assert.match(
        o,
        /query refused: .*(not allowed|only one statement|only SELECT)/,
        `attack ${i + 1}: ${attacks(host)[i]} → ${o}`,
      );
    }
    assert.deepEqual(JSON.parse(observations[n]!).data, [['F', '52']]);
    assert.deepEqual(readdirSync(host.dir).sort(), before);
    console.log(`SQL red team: ${n} attempts, ${n} contained`);
  });

  it('below the statement check, the sandbox contains ATTACH and VACUUM INTO by itself', async () => {
    const r = new SqlRunner(host.dbPath, { timeoutMs: 10_000, sandbox: 'bubblewrap', uncheckedForTests: true });
    try {
      // The store file does not exist inside the sandbox: ATTACH creates an empty database in memory-less read-only mode or fails.
      let leaked = '';
      try {
        await r.query(`ATTACH DATABASE '${host.storePath}' AS st`);
        leaked = JSON.stringify(await r.query('SELECT json FROM st.scores'));
      } catch (e) {
        leaked = String(e);
      }
      assert.ok(!leaked.includes(SECRET), leaked);
      try {
        await r.query(`VACUUM INTO '${join(host.dir, 'vacuumed.sqlite')}'`);
      } catch {
        /* refused inside the sandbox: fine */
      }
      assert.equal(existsSync(join(host.dir, 'vacuumed.sqlite')), false, 'VACUUM INTO reached the host');
      // Other host files are not visible either.
      const files = await r.query('SELECT 1 AS ok').catch((e) => e);
      assert.deepEqual((files as { data: string[][] }).data, [['1']]);
    } finally {
      r.close();
    }
  });

  it('the statement check accepts reads that merely mention the words and refuses statements that do', () => {
    for (const ok of [
      "SELECT replace(gender, 'F', 'female') AS g, count(*) AS n_created_at FROM patients GROUP BY g",
      "SELECT * FROM patients WHERE gender = 'ATTACH DATABASE x'",
      'SELECT "update", "delete" FROM t',
      'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5) SELECT * FROM c',
      "SELECT name FROM pragma_table_info('patients')",
      'SELECT 1;',
    ]) {
      assert.equal(checkReadStatement(ok).ok, true, ok);
    }
    for (const bad of [
      'ATTACH x AS y',
      'select 1; select 2',
      'VACUUM',
      'PRAGMA query_only = OFF',
      'INSERT INTO t VALUES (1)',
      'WITH a AS (SELECT 1) DELETE FROM t',
      'DROP TABLE t',
      'REPLACE INTO t VALUES (1)',
      'BEGIN',
      '',
    ]) {
      const c = checkReadStatement(bad);
      assert.equal(c.ok, false, bad);
      assert.ok(c.reason && c.reason.length > 10, bad);
    }
  });
});
