import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { dirname } from 'node:path';
import type { Block } from '../../../../../src/core/suites/types.ts';
import type { StepRecord } from '../../../../../src/core/agent/types.ts';
import {
  SqlRunner,
  executeQuery,
  openReadOnlyDatabase,
  readSchema,
  touchedFields,
} from '../../../../../src/core/benchmarks/ddr/sql-tool.ts';
import {
  closeDdrDatabases,
  closeDdrRun,
  createDdrToolSet,
  ddrFinalReport,
  ddrInsightsFromReasoning,
  ddrState,
  ddrTouchedSummary,
  isDdrFinish,
  parseDdrInsight,
  sqlInPython,
} from '../../../../../src/core/benchmarks/ddr/toolset.ts';
import { mimicSubsetDb, toolContext } from '../../../../helpers/toolsets.ts';

function ddrBlock(dbPath: string, entity: string): Block {
  return {
    id: `patient_${entity}`,
    suite: 'ddr',
    suiteId: 'ddr:mimic',
    title: `patient ${entity}`,
    items: [
      { type: 'ddr-entity', id: entity, entityId: entity, prompt: `Analyze the patient with subject_id=${entity}` },
    ],
    visible: { data: [], docs: [], database: { path: dbPath, rel: 'mimic-subset.sqlite', tables: [] }, missing: [] },
    hidden: { files: [], checklist: [] },
    runnable: true,
    problems: [],
    ddr: { entityId: entity, entityColumn: 'subject_id', checklistCount: 0 },
  };
}

describe('DDR SQL tools on the MIMIC-IV demo (patients, admissions, diagnoses_icd)', () => {
  let dbPath = '';
  before(() => {
    dbPath = mimicSubsetDb(['hosp/patients', 'hosp/admissions', 'hosp/diagnoses_icd']);
  });
  after(() => closeDdrDatabases());

  it('refuses every write inside SQLite, but accepts queries the original keyword filter rejected', () => {
    const db = openReadOnlyDatabase(dbPath);
    for (const sql of [
      'DELETE FROM patients',
      'CREATE TABLE x (a)',
      'UPDATE patients SET gender = 1',
      'INSERT INTO patients (subject_id) VALUES (1)',
      'DROP TABLE patients',
    ]) {
      assert.throws(() => executeQuery(db, sql), /readonly|read-only|query_only/i, sql);
    }
    // 'created_at' / REPLACE() / 'deleted' were substring-rejected by DDR's filter (spec §3.7 item 6).
    const r = executeQuery(
      db,
      "SELECT replace(gender, 'F', 'female') AS g, count(*) AS n_created_at FROM patients GROUP BY g ORDER BY g",
    );
    assert.deepEqual(r.cols, ['g', 'n_created_at']);
    assert.deepEqual(r.data, [
      ['M', '57'],
      ['female', '43'],
    ]);
    assert.equal((db.prepare('SELECT count(*) AS n FROM patients').get() as { n: number }).n, 100);
    db.close();
  });

  it('caps rows and characters with a note, without rewriting the SQL', () => {
    const db = openReadOnlyDatabase(dbPath);
    const r = executeQuery(db, 'SELECT * FROM diagnoses_icd', { maxRows: 7, maxValueChars: 1000, maxChars: 100_000 });
    assert.equal(r.count, 7);
    assert.equal(r.truncated, true);
    assert.match(r.note!, /first 7 rows/);
    const small = executeQuery(db, 'SELECT * FROM admissions', { maxRows: 100, maxValueChars: 5, maxChars: 2_000 });
    assert.ok(JSON.stringify({ cols: small.cols, data: small.data }).length <= 2_000);
    assert.ok(small.count < 100 && small.count > 0);
    assert.match(small.note!, /under 2000 characters/);
    assert.ok(small.data.flat().every((v) => v.length <= 5));
    db.close();
  });

  it('records touched tables and columns with a real SQL parser (aliases, *, CTE, unqualified)', () => {
    const db = openReadOnlyDatabase(dbPath);
    const schema = readSchema(db);
    const t1 = touchedFields(
      'SELECT a.admittime, p.gender, race FROM admissions a JOIN patients p ON a.subject_id = p.subject_id WHERE p.subject_id = 10000032',
      schema,
    );
    assert.equal(t1.method, 'parser');
    assert.deepEqual(t1.tables, ['admissions', 'patients']);
    assert.deepEqual(t1.columns, [
      'admissions.admittime',
      'admissions.race',
      'admissions.subject_id',
      'patients.gender',
      'patients.subject_id',
    ]);
    const t2 = touchedFields('SELECT * FROM patients WHERE subject_id = 1', schema);
    assert.deepEqual(
      t2.columns,
      schema
        .get('patients')!
        .map((c) => `patients.${c}`)
        .sort(),
    );
    const t3 = touchedFields(
      'WITH d AS (SELECT hadm_id, count(*) AS n FROM diagnoses_icd GROUP BY hadm_id) SELECT d.n, admissions.insurance FROM d JOIN admissions USING (hadm_id)',
      schema,
    );
    assert.deepEqual(t3.tables, ['admissions', 'diagnoses_icd']);
    assert.ok(t3.columns.includes('admissions.insurance'));
    assert.ok(t3.columns.includes('diagnoses_icd.hadm_id'));
    assert.ok(!t3.columns.some((c) => c.endsWith('.n')));
    const t4 = touchedFields('PRAGMA table_info(admissions)', schema);
    assert.equal(t4.method, 'fallback');
    assert.deepEqual(t4.tables, ['admissions']);
    db.close();
  });

  it('a runaway query is killed after the time limit; the next query runs in a fresh process', async () => {
    const r = new SqlRunner(dbPath, 600);
    try {
      const t0 = performance.now();
      await assert.rejects(
        r.query('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c'),
        /timed out after 0\.6 s and was cancelled/,
      );
      assert.ok(performance.now() - t0 < 5_000);
      await assert.rejects(r.query('DELETE FROM patients'), /readonly|read-only/i);
      assert.deepEqual((await r.query('SELECT count(*) AS n FROM patients')).data, [['100']]);
    } finally {
      r.close();
    }
    const block = ddrBlock(dbPath, '10000032');
    const ts = createDdrToolSet({ python: false, queryTimeoutMs: 600 });
    const ctx = toolContext(block, dirname(dbPath));
    const res = await ts.tools
      .find((t) => t.name === 'execute_query')!
      .run(
        {
          sql: 'SELECT count(*) FROM hosp_x, (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c)',
        },
        ctx,
      );
    assert.equal(res.isError, true);
    const res2 = await ts.tools
      .find((t) => t.name === 'execute_query')!
      .run(
        {
          sql: 'SELECT count(*) FROM patients p, (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c)',
        },
        ctx,
      );
    assert.equal(res2.isError, true);
    assert.match(res2.observation, /timed out/);
    assert.deepEqual(
      ddrState(ctx.state.extra).queries.map((q) => [q.ok, q.tables]),
      [
        [false, []],
        [false, ['patients']],
      ],
    );
  });

  it('runs have their own query process: a killed runaway query in one run does not hit another', async () => {
    const block = ddrBlock(dbPath, '10000032');
    const ts = createDdrToolSet({ python: false, queryTimeoutMs: 800 });
    const q = ts.tools.find((t) => t.name === 'execute_query')!;
    const a = toolContext(block, dirname(dbPath));
    const b = toolContext(block, dirname(dbPath));
    a.runId = 'run-a';
    b.runId = 'run-b';
    const [ra, rb] = await Promise.all([
      q.run({ sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c' }, a),
      (async () => {
        await new Promise((r) => setTimeout(r, 100));
        return q.run({ sql: 'SELECT count(*) AS n FROM admissions' }, b);
      })(),
    ]);
    assert.match(ra.observation, /timed out/);
    assert.equal(rb.isError, undefined, rb.observation);
    assert.deepEqual(JSON.parse(rb.observation).data, [['275']]);
    closeDdrRun('run-a');
    closeDdrRun('run-b');
  });

  it('tools: database info, describe_table, execute_query record touched fields in run state', async () => {
    const block = ddrBlock(dbPath, '10000032');
    const ts = createDdrToolSet({ python: false });
    assert.equal(ts.buildBlockPrompt(block), 'Analyze the patient with subject_id=10000032');
    const ctx = toolContext(block, dirname(dbPath));
    const tool = (n: string) => ts.tools.find((t) => t.name === n)!;
    const info = JSON.parse((await tool('get_database_info').run({}, ctx)).observation);
    assert.deepEqual(info.tables, ['admissions', 'diagnoses_icd', 'patients']);
    const desc = JSON.parse((await tool('describe_table').run({ table: 'patients' }, ctx)).observation);
    assert.equal(desc.row_count, 100);
    assert.deepEqual(
      desc.columns.map((c: { name: string }) => c.name),
      ['subject_id', 'gender', 'anchor_age', 'anchor_year', 'anchor_year_group', 'dod'],
    );
    const bad = await tool('describe_table').run({ table: 'nope' }, ctx);
    assert.equal(bad.isError, true);
    assert.match(bad.observation, /Available tables: admissions, diagnoses_icd, patients/);
    ctx.stepIndex = 3;
    const q = await tool('execute_query').run(
      { sql: 'SELECT gender, anchor_age FROM patients WHERE subject_id = 10000032' },
      ctx,
    );
    assert.deepEqual(JSON.parse(q.observation).data, [['F', '52']]);
    const err = await tool('execute_query').run({ sql: 'SELECT foo FROM admissions' }, ctx);
    assert.equal(err.isError, true);
    assert.match(err.observation, /no such column: foo.*Columns of admissions: subject_id, hadm_id/s);
    const st = ddrState(ctx.state.extra);
    assert.equal(st.queries.length, 2);
    assert.deepEqual(st.queries[0]!.columns, ['patients.anchor_age', 'patients.gender', 'patients.subject_id']);
    assert.equal(st.queries[0]!.stepIndex, 3);
    assert.equal(st.queries[1]!.ok, false);
    assert.deepEqual(ddrTouchedSummary(st.queries).tables, ['admissions', 'patients']);
  });
});

describe('DDR termination and insights', () => {
  it('FINISH rule: paper (starts with FINISH:) vs code (substring, case-insensitive)', () => {
    assert.equal(isDdrFinish('FINISH: the patient is 52', 'paper'), true);
    assert.equal(isDdrFinish('  FINISH: x', 'paper'), true);
    assert.equal(isDdrFinish('I have not finished yet', 'paper'), false);
    assert.equal(isDdrFinish('I have not finished yet', 'code'), true);
    assert.equal(isDdrFinish('Summary. FINISH: x', 'paper'), false);
    const ts = createDdrToolSet({ finishRule: 'code', python: false });
    assert.equal(ts.isTerminal!({ role: 'assistant', content: 'finishing touches' }), true);
    assert.equal(
      createDdrToolSet({ python: false }).isTerminal!({ role: 'assistant', content: 'finishing touches' }),
      false,
    );
  });

  it('finds SQL written as string literals in python code', () => {
    const code = [
      'a = pd.read_sql("SELECT gender FROM patients WHERE subject_id = 1", con)',
      "b = con.execute('''",
      "  WITH x AS (SELECT 1) SELECT * FROM x''').fetchall()",
      'print(\'selected rows\', f"select {col} from admissions")',
      "c = 'INSERT INTO t VALUES (1)'",
    ].join('\n');
    assert.deepEqual(sqlInPython(code), [
      'SELECT gender FROM patients WHERE subject_id = 1',
      'WITH x AS (SELECT 1) SELECT * FROM x',
      'select {col} from admissions',
    ]);
  });

  it('insights: NO INSIGHT parsing, reasoning-derived I_m, final report I_t', () => {
    assert.equal(parseDdrInsight(' NO INSIGHT. '), null);
    assert.equal(parseDdrInsight('Patient is female.'), 'Patient is female.');
    const step = (index: number, content: string, tool?: string, isError = false): StepRecord => ({
      runId: 'r',
      index,
      startedAt: '',
      endedAt: '',
      latencyMs: 0,
      toolMs: 0,
      assistant: { role: 'assistant', content },
      toolCalls: tool
        ? [
            {
              id: `c${index}`,
              name: tool,
              argumentsText: '{}',
              observation: '',
              isError,
              truncated: false,
              durationMs: 0,
            },
          ]
        : [],
      extraMessages: [],
      usage: { input: 0, output: 0, cached: 0 },
      costUsd: null,
      finishReason: null,
    });
    const steps = [
      step(0, 'Look at tables.', 'get_database_info'),
      step(1, 'Query sex.', 'execute_query'),
      step(2, 'She is female (F). Next: age.', 'execute_query', true),
      step(3, 'FINISH: female patient.'),
    ];
    const ins = ddrInsightsFromReasoning(steps);
    assert.deepEqual(
      ins.map((i) => i.insight),
      [null, 'She is female (F). Next: age.', null],
    );
    assert.equal(ddrFinalReport(steps), 'FINISH: female patient.');
  });
});
