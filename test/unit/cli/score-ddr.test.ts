/**
 * `loupe score` on a DDR run recorded by `loupe run` (scripted agent exploring a MIMIC-IV demo
 * subset), judged by an LLM judge on a second scripted endpoint.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { ddrState } from '../../../src/core/benchmarks/ddr/toolset.ts';
import { openStore } from '../../../src/core/store/run-store.ts';
import { call, startScriptedLlm, type ChatRequestBody } from '../../helpers/scripted-llm.ts';
import { repoRoot } from '../../helpers/shared.ts';
import { mimicSubsetDb } from '../../helpers/toolsets.ts';

function cli(
  dir: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['--no-warnings', join(repoRoot, 'src', 'cli.ts'), ...args], {
    cwd: dir,
    env: { ...process.env, OPENAI_API_KEY: 'sk-test', ...env },
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

/** Judge: a fact is supported when a finding mentions its key word; hallucination never. */
function judge(req: ChatRequestBody): { content: string } {
  const sys = req.messages.find((m) => m.role === 'system')?.content ?? '';
  const user = req.messages.find((m) => m.role === 'user')?.content ?? '';
  if (/audit one finding/.test(sys)) return { content: '{"hallucinated": false, "reason": "from the query result"}' };
  const [findings, question = ''] = user.split('\n\nQuestion:') as [string, string?];
  const key = /sex/.test(question) ? 'woman' : /admissions/.test(question) ? 'two admissions' : 'insurance';
  const idx = [...findings.matchAll(/\[Message (\d+)\]: ([^\n]*)/g)]
    .filter((m) => m[2]!.includes(key))
    .map((m) => Number(m[1]));
  const found = findings.includes(key);
  return {
    content: JSON.stringify({
      label: found ? 'CORRECT_INFO' : 'INSUFFICIENT_INFO',
      supporting: idx,
      contradicting: [],
      evidence: '',
      reasoning: '',
    }),
  };
}

test('loupe score: DDR run from loupe run (MIMIC-IV demo subset) with an LLM judge', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loupe-score-ddr-'));
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
      content: 'Admission types.',
      toolCalls: [
        call('execute_query', {
          sql: 'SELECT admission_type, admittime FROM admissions WHERE subject_id = 10001217 ORDER BY admittime',
        }),
      ],
    },
    { content: 'FINISH: Patient 10001217 is a woman.' },
  ];
  const insight = (first: string) =>
    /Demographics/.test(first) ? 'The patient is a woman with two admissions.' : 'Both admissions were urgent.';
  const srv = await startScriptedLlm({
    scriptFor: (first) => (first.startsWith('Task:') ? [{ content: insight(first) }] : agent),
  });
  const judgeSrv = await startScriptedLlm({ script: [(req) => judge(req)] });
  try {
    const meta = join(dir, 'meta');
    mkdirSync(meta);
    writeFileSync(
      join(meta, 'qa.json'),
      JSON.stringify({
        metadata: {},
        results: [
          {
            entity_id: '10001217',
            qa_pairs: [
              { question: "What is the patient's sex?", answer: 'Female', source_text: '' },
              { question: 'How many admissions does the patient have?', answer: 'Two', source_text: '' },
              { question: 'What insurance does the patient have?', answer: 'Medicare', source_text: '' },
            ],
          },
        ],
      }),
    );
    const store = join(dir, 'runs.sqlite');
    const common = ['--root', db, '--entities', 'patients.subject_id', '--metadata', meta, '--store', store];
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
      '--json',
    ]);
    assert.equal(r.code, 0, r.err);
    const runId = (JSON.parse(r.out.trim()) as { runId: string }).runId;

    const sc = await cli(dir, [
      'score',
      ...common,
      '--all',
      '--judge',
      'llm',
      '--judge-model',
      'judge-m',
      '--judge-base-url',
      judgeSrv.baseUrl,
      '--json',
    ]);
    assert.equal(sc.code, 0, sc.err + sc.out);
    const res = JSON.parse(sc.out) as {
      runs: Array<{
        runId: string;
        judge: string;
        summary: Record<string, number | null>;
        options: Record<string, unknown>;
      }>;
      aggregates: Array<{ metrics: Record<string, number | null> }>;
    };
    const s = res.runs[0]!;
    assert.equal(s.runId, runId);
    assert.equal(s.judge, 'llm:judge-m');
    // I_m: "woman" (sex) and "two admissions" found; insurance not → 2/3. I_t: only "woman" → 1/3.
    assert.equal(s.summary.messageWiseAccuracy, 2 / 3);
    assert.equal(s.summary.trajectoryWiseAccuracy, 1 / 3);
    assert.equal(s.summary.validInsights, 2);
    assert.equal(s.summary.hallucinationRate, 0);
    // coverage = distinct touched fields / all fields of the two tables
    const st = openStore(store);
    const touched = new Set(ddrState(await st.getExtraState(runId)).queries.flatMap((q) => q.columns));
    st.close();
    const d = new Database(db, { readonly: true });
    const total = ['patients', 'admissions'].reduce(
      (n, t) => n + (d.prepare(`PRAGMA table_info("${t}")`).all() as unknown[]).length,
      0,
    );
    d.close();
    assert.equal(s.summary.coverage, touched.size / total);
    assert.ok(touched.has('admissions.admission_type') && touched.has('patients.gender'));
    assert.equal(s.options.scenario, 'mimic');
    assert.equal(
      s.options.empty_insights,
      'drop',
      'the official preset (default): DDR code drops entities without insights',
    );
    assert.equal(res.aggregates[0]!.metrics.messageWiseItemAveraged, 2 / 3);
    // judge calls: 3 items × (I_m + I_t) + 2 hallucination labels; a second scoring is free
    const calls = judgeSrv.requests.length;
    assert.equal(calls, 8);
    const again = await cli(dir, [
      'score',
      ...common,
      '--all',
      '--judge',
      'llm',
      '--judge-model',
      'judge-m',
      '--judge-base-url',
      judgeSrv.baseUrl,
      '--json',
      '--no-save',
    ]);
    assert.equal(again.code, 0, again.err);
    assert.equal(judgeSrv.requests.length, calls);
  } finally {
    await srv.close();
    await judgeSrv.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
