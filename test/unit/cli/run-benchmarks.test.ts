/**
 * `loupe run` for BLADE and DDR (issue 6): the BLADE reference agent through the CLI on real
 * datasets with a replay of each run, and an independent scripted model exploring a MIMIC-IV demo
 * database through execute_query, with touched fields and insights recorded, then replayed.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openStore } from '../../../src/core/store/run-store.ts';
import { ddrState, readDdrInsights, readDdrResult } from '../../../src/core/benchmarks/ddr/toolset.ts';
import { bladeState } from '../../../src/core/benchmarks/blade/toolset.ts';
import { readReplayReports } from '../../../src/core/runs/replay-run.ts';
import { call, startScriptedLlm } from '../../helpers/scripted-llm.ts';
import { repoRoot, sharedData } from '../../helpers/shared.ts';
import { mimicSubsetDb } from '../../helpers/toolsets.ts';

function cli(dir: string, args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['--no-warnings', join(repoRoot, 'src', 'cli.ts'), ...args], {
    cwd: dir,
    env: { ...process.env, OPENAI_API_KEY: 'sk-test' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  return new Promise((r) => child.on('exit', (code) => r({ code, out, err })));
}

test(
  'loupe run --agent reference on BLADE datasets validates; --agent replay reports no differences',
  { timeout: 120_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-cli-blade-'));
    const store = join(dir, 'runs.sqlite');
    const r = await cli(dir, [
      'run',
      '--suite',
      'blade',
      '--root',
      sharedData('blade', 'datasets'),
      '--blocks',
      'caschools,affairs',
      '--concurrency',
      '2',
      '--agent',
      'reference',
      '--store',
      store,
      '--results',
      join(dir, 'results'),
      '--json',
    ]);
    assert.equal(r.code, 0, r.err);
    const lines = r.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => [l.blockId, l.agent, l.status]).sort(), [
      ['affairs', 'reference', 'finished'],
      ['caschools', 'reference', 'finished'],
    ]);
    const s = openStore(store);
    for (const l of lines) {
      assert.ok(bladeState(await s.getExtraState(l.runId)).final, `${l.blockId}: no valid submission`);
    }
    s.close();
    // BLADE submission JSON (spec §1.2.5) in the results folder
    const multi = JSON.parse(readFileSync(join(dir, 'results', 'caschools', 'multirun_analyses.json'), 'utf8'));
    assert.equal(multi.dataset_name, 'caschools');
    assert.equal(multi.n, 1);
    assert.match(multi.analyses['0'].transform_code, /^def transform\(df\b/);
    assert.equal(multi.analyses['0'].cvars.dv.columns.length >= 1, true);
    const sub = JSON.parse(readFileSync(join(dir, 'results', 'affairs', 'submission.json'), 'utf8'));
    assert.equal(sub.dataset_name, 'affairs');
    assert.equal(sub.analyses.length, 1);
    assert.match(sub.analyses[0].m_code, /^def model\(df\b/);
    const rep = await cli(dir, ['run', '--agent', 'replay', '--run', lines[0].runId, '--store', store, '--json']);
    assert.equal(rep.code, 0, rep.err + rep.out);
    const line = JSON.parse(rep.out.trim());
    assert.equal(line.status, 'match');
    assert.ok(line.total >= 2 && line.total === line.matched);
    const s2 = openStore(store);
    assert.equal((await readReplayReports(s2, lines[0].runId)).length, 1);
    s2.close();
  },
);

test(
  'loupe run on a MIMIC-IV demo database: a scripted model explores with execute_query; touched fields recorded; replay matches',
  { timeout: 120_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-cli-ddr-'));
    const db = mimicSubsetDb(['hosp/patients', 'hosp/admissions']);
    const agent = [
      { content: 'What is in the database?', toolCalls: [call('get_database_info', {})] },
      {
        content: 'Demographics.',
        toolCalls: [
          call('execute_query', {
            sql: 'SELECT p.gender, p.anchor_age, count(a.hadm_id) AS admissions FROM patients p LEFT JOIN admissions a ON a.subject_id = p.subject_id WHERE p.subject_id = 10001217 GROUP BY p.subject_id',
          }),
        ],
      },
      {
        content: 'Insurance and admission types.',
        toolCalls: [
          call('execute_query', {
            sql: "SELECT insurance, admission_type, admittime FROM admissions WHERE subject_id = 10001217 AND insurance <> 'created_at' ORDER BY admittime",
          }),
        ],
      },
      { content: 'FINISH: Patient 10001217: see the queries above.' },
    ];
    const srv = await startScriptedLlm({
      scriptFor: (first) =>
        first.startsWith('Task:') ? [{ content: 'The patient is a woman with two admissions.' }] : agent,
    });
    try {
      const store = join(dir, 'runs.sqlite');
      const common = ['--root', db, '--entities', 'patients.subject_id', '--store', store];
      const r = await cli(dir, [
        'run',
        '--suite',
        'ddr',
        ...common,
        '--block',
        'patient_10001217',
        '--agent',
        'llm',
        '--model',
        'scripted',
        '--base-url',
        srv.baseUrl,
        '--tool-option',
        'python=false',
        '--results',
        join(dir, 'results'),
        '--json',
      ]);
      assert.equal(r.code, 0, r.err);
      const line = JSON.parse(r.out.trim());
      assert.equal(line.status, 'finished');
      assert.equal(line.steps, 4);
      const s = openStore(store);
      const q = ddrState(await s.getExtraState(line.runId)).queries;
      assert.deepEqual(
        q.map((x) => x.tables),
        [['admissions', 'patients'], ['admissions']],
      );
      assert.deepEqual(q[1]!.columns, [
        'admissions.admission_type',
        'admissions.admittime',
        'admissions.insurance',
        'admissions.subject_id',
      ]);
      assert.deepEqual(
        (await readDdrInsights(s, line.runId)).map((i) => [i.stepIndex, i.insight]),
        [
          [0, null],
          [1, 'The patient is a woman with two admissions.'],
          [2, 'The patient is a woman with two admissions.'],
        ],
      );
      const res = (await readDdrResult(s, line.runId))!;
      assert.equal(res.finalReport, 'FINISH: Patient 10001217: see the queries above.');
      assert.deepEqual(res.options, { finishRule: 'paper', emptyInsights: 'zero', insights: 'separate-call' });
      assert.equal((await s.getRun(line.runId))!.toolSet, 'ddr-sql');
      assert.deepEqual((await s.getRun(line.runId))!.params.toolSetOptions, { python: 'false' });
      assert.equal(
        (await s.getRun(line.runId))!.params.docsText,
        undefined,
        'a tool set without documentation records no docs text source',
      );
      const exported = JSON.parse(readFileSync(join(dir, 'results', 'ddr_results.jsonl'), 'utf8').trim());
      assert.equal(exported.entityId, '10001217');
      assert.equal(exported.finalReport, res.finalReport);
      assert.deepEqual(exported.touched.tables, ['admissions', 'patients']);
      s.close();
      const rep = await cli(dir, ['run', '--agent', 'replay', '--run', line.runId, ...common, '--json']);
      assert.equal(rep.code, 0, rep.err + rep.out);
      assert.deepEqual(JSON.parse(rep.out.trim()), {
        ...JSON.parse(rep.out.trim()),
        status: 'match',
        total: 2,
        matched: 2,
      });
      const bad = await cli(dir, [
        'run',
        '--suite',
        'ddr',
        ...common,
        '--block',
        'patient_10001217',
        '--agent',
        'llm',
        '--model',
        'x',
        '--tool-option',
        'finishRule=maybe',
      ]);
      assert.equal(bad.code, 1);
      assert.match(bad.err, /tool option finishRule: must be one of paper, code, got 'maybe'/);
    } finally {
      await srv.close();
    }
  },
);
