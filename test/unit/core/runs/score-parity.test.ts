/**
 * Score parity (issue 12): the scores of a fixed set of runs — reference runs (LongDA NHANES Data Brief 508,
 * BLADE affairs / hurricane / amtl), scripted imperfect LongDA and BLADE runs, and DDR / AnalystBench runs
 * scored with a scripted LLM judge — printed by `loupe score --json`, equal the ones recorded before the
 * benchmark registry restructuring (test/fixtures/score-parity/expected.json, written by this test at b3be16e
 * with LOUPE_UPDATE_PARITY=1). Run ids, temporary paths and times are replaced by stable labels; option
 * names are compared in snake_case (the spelling the user types). The BLADE amtl reference run and the BLADE
 * aggregate were re-recorded on Debian's Python stack (pandas 1.5.3), on which the first annotated model's path
 * validates; the Python stack is recorded beside the scores (`pythonStack`) and named when they differ.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { main } from '../../../../src/cli/main.ts';
import { parseAnswerArg } from '../../../../src/core/benchmarks/longda/toolset.ts';
import type { StepRecord } from '../../../../src/core/agent/types.ts';
import { openStore } from '../../../../src/core/store/run-store.ts';
import { DEMO_REPORT, HURRICANE_SUBMISSION, writeAnalystbenchDemo } from '../../../helpers/fixtures.ts';
import { call, startScriptedLlm, type ChatRequestBody, type ScriptedLlm } from '../../../helpers/scripted-llm.ts';
import { repoRoot, sharedData } from '../../../helpers/shared.ts';
import { mimicSubsetDb } from '../../../helpers/toolsets.ts';
import { parseOptions } from '../../../../src/core/benchmarks/options.ts';
import { getBenchmark } from '../../../../src/core/benchmarks/registry.ts';
import { findPython } from '../../../../src/core/env/doctor.ts';
import { execFileSync } from 'node:child_process';

const EXPECTED = join(repoRoot, 'test', 'fixtures', 'score-parity', 'expected.json');
const LONGDA = sharedData('longda', 'benchmark');
const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const Q = (i: number) => `NHANES_NCHS Data Brief No. 508_q${i}`;
const PERTURBED: Record<number, string> = {
  1: '40.3%',
  2: '[39.2, 45.0]',
  3: '[35.5, 46.4]',
  5: '10.3',
  7: '[8.0, 12.1]',
  9: '13.0, 14.7, 8.4',
};

let dir = '';
let store = '';
let ddrDb = '';
let ddrChecklist = '';
let judgeSrv: ScriptedLlm;
const labels = new Map<string, string>();

const io = (env: NodeJS.ProcessEnv = process.env) => {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: {
      out: (s: string) => out.push(s),
      err: (s: string) => err.push(s),
      env: { ...env, OPENAI_API_KEY: 'sk-test', JUDGE_KEY: 'sk-test' },
      cwd: dir,
    },
  };
};

async function run(label: string, args: string[]): Promise<void> {
  const t = io();
  const rc = await main(['run', ...args, '--store', store, '--json'], t.io);
  assert.equal(rc, 0, `${label}: ${t.err.join('')}`);
  const lines = t.out
    .join('')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { runId: string });
  lines.forEach((l, i) => labels.set(l.runId, lines.length > 1 ? `${label}-${i + 1}` : label));
}

function step(runId: string, index: number, tools: string[]): StepRecord {
  const now = '2026-01-01T00:00:00.000Z';
  return {
    runId,
    index,
    startedAt: now,
    endedAt: now,
    latencyMs: 1,
    toolMs: 1,
    assistant: { role: 'assistant', content: `step ${index}` },
    toolCalls: tools.map((name) => ({
      id: `c-${name}`,
      name,
      argumentsText: '{}',
      observation: 'ok',
      isError: false,
      truncated: false,
      durationMs: 1,
    })),
    extraMessages: [],
    usage: { input: 1000, output: 100, cached: 0 },
    costUsd: null,
    finishReason: 'tool_calls',
  } as StepRecord;
}

/** A scripted LLM judge: the verdict depends only on the task (system prompt) and the text judged. */
function judgeReply(req: ChatRequestBody): { content: string } {
  const sys = req.messages.find((m) => m.role === 'system')?.content ?? '';
  const user = req.messages.find((m) => m.role === 'user')?.content ?? '';
  if (/grade a written analysis/.test(sys)) {
    return {
      content: JSON.stringify({ score: /40\.3/.test(user) && /overall obesity/.test(user) ? 5 : 2, reason: 'r' }),
    };
  }
  if (/atomic factual claims/.test(sys)) {
    return {
      content: JSON.stringify({
        claims: [
          { claim: 'Obesity was 40.3% overall', quote: 'Obesity was 40.3% overall.' },
          { claim: 'Obesity doubled since 1990', quote: 'It doubled since 1990.' },
        ],
      }),
    };
  }
  if (/verify one factual claim/.test(sys)) {
    return { content: JSON.stringify({ supported: /Claim: .*40\.3/.test(user), reason: 'r' }) };
  }
  if (/rate a figure/.test(sys)) {
    return {
      content: JSON.stringify({ readability: 5, groundedness: 4, task_utility: 3, reproducibility: 2, reason: 'r' }),
    };
  }
  if (/contain a known fact/.test(sys)) {
    const female = /gender/i.test(user) && /\bF\b|woman|female/i.test(user);
    return {
      content: JSON.stringify(
        female
          ? { label: 'CORRECT_INFO', supporting: [1], contradicting: [], evidence: 'e', reasoning: 'r' }
          : { label: 'INSUFFICIENT_INFO', supporting: [], contradicting: [], evidence: '', reasoning: 'r' },
      ),
    };
  }
  if (/audit one finding/.test(sys)) {
    return { content: JSON.stringify({ hallucinated: /two admissions/.test(user) ? false : true, reason: 'r' }) };
  }
  return { content: JSON.stringify({ match: false, reason: 'unexpected task' }) };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-parity-'));
  store = join(dir, 'runs.sqlite');
  judgeSrv = await startScriptedLlm({ script: [(req) => judgeReply(req)] });
  // LongDA: the reference analysis of Data Brief 508 (real Python on NHANES), and two imperfect recorded runs
  await run('longda-reference', ['--suite', 'longda', '--root', LONGDA, '--block', BLOCK, '--agent', 'reference']);
  const s = openStore(store);
  const base = {
    suite: 'longda',
    blockId: BLOCK,
    agent: 'llm',
    params: { suiteRoot: LONGDA },
    promptHash: 'h',
    toolSet: 'longda',
    dataChecksums: {},
    loupeVersion: 't',
    sandbox: 'off',
    workspace: dir,
  };
  await s.createRun({ ...base, id: 'longda-perturbed', model: 'model-b' });
  await s.commitStep(step('longda-perturbed', 0, ['search_doc', 'python']));
  await s.commitStep(step('longda-perturbed', 1, ['answer']), {
    answers: Object.entries(PERTURBED)
      .filter(([, raw]) => parseAnswerArg(raw).ok)
      .map(([i, raw]) => ({
        runId: 'longda-perturbed',
        queryId: Q(Number(i)),
        answer: (parseAnswerArg(raw) as { value: number | number[] }).value,
        raw,
        stepIndex: 1,
      })),
  });
  await s.createRun({ ...base, id: 'longda-empty', model: 'model-c' });
  await s.commitStep(step('longda-empty', 0, ['read_doc']));
  // AnalystBench: a small task whose report the judge partly supports
  const suite = writeAnalystbenchDemo(join(dir, 'ab'));
  const ws = join(dir, 'runs', 'analystbench-writer', 'workspace'); // in the runs folder of the store (issue 36)
  mkdirSync(ws, { recursive: true });
  writeFileSync(join(ws, 'report.md'), DEMO_REPORT);
  await s.createRun({
    id: 'analystbench-writer',
    suite: 'analystbench',
    blockId: 'demo',
    agent: 'llm',
    model: 'writer',
    params: { suiteRoot: suite },
    promptHash: 'h',
    toolSet: 'analystbench-toc',
    dataChecksums: {},
    loupeVersion: 't',
    sandbox: 'off',
    workspace: ws,
  });
  await s.createRun({
    id: 'analystbench-noreport',
    suite: 'analystbench',
    blockId: 'demo',
    agent: 'llm',
    model: 'writer',
    params: { suiteRoot: suite },
    promptHash: 'h',
    toolSet: 'analystbench-toc',
    dataChecksums: {},
    loupeVersion: 't',
    sandbox: 'off',
    workspace: join(dir, 'nowhere'),
  });
  s.close();
  // BLADE: reference runs on three datasets, and a scripted imperfect analysis of hurricane
  await run('blade-reference', [
    '--suite',
    'blade',
    '--root',
    sharedData('blade', 'datasets'),
    '--blocks',
    'affairs,hurricane,amtl',
    '--agent',
    'reference',
  ]);
  const llm = await startScriptedLlm({
    script: [{ content: 'Submit.', toolCalls: [call('submit_analysis', HURRICANE_SUBMISSION)] }, { content: 'done' }],
  });
  try {
    await run('blade-scripted', [
      '--suite',
      'blade',
      '--root',
      sharedData('blade', 'datasets'),
      '--block',
      'hurricane',
      '--agent',
      'llm',
      '--model',
      'scripted',
      '--base-url',
      llm.baseUrl,
    ]);
  } finally {
    await llm.close();
  }
  // DDR: a scripted exploration of one MIMIC-IV demo patient, with a three-item checklist
  ddrDb = mimicSubsetDb(['hosp/patients', 'hosp/admissions']);
  ddrChecklist = join(dir, 'qa.json');
  writeFileSync(
    ddrChecklist,
    JSON.stringify({
      results: [
        {
          entity_id: '10001217',
          qa_pairs: [
            { question: 'What is the gender of the patient?', answer: 'F' },
            { question: 'How many admissions does the patient have?', answer: '2' },
            { question: 'What insurance does the patient have?', answer: 'Other' },
          ],
        },
      ],
    }),
  );
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
    { content: 'FINISH: Patient 10001217 is a woman (gender F) with two admissions.' },
  ];
  const ddrLlm = await startScriptedLlm({
    scriptFor: (first) =>
      first.startsWith('Task:') ? [{ content: 'The patient is a woman with two admissions.' }] : agent,
  });
  try {
    await run('ddr-scripted', [
      '--suite',
      'ddr',
      '--root',
      ddrDb,
      '--entities',
      'patients.subject_id',
      '--block',
      'patient_10001217',
      '--agent',
      'llm',
      '--model',
      'scripted',
      '--base-url',
      ddrLlm.baseUrl,
      '--tool-option',
      'python=false',
    ]);
  } finally {
    await ddrLlm.close();
  }
  for (const id of ['longda-perturbed', 'longda-empty', 'analystbench-writer', 'analystbench-noreport']) {
    labels.set(id, id);
  }
});
after(async () => {
  await judgeSrv?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The versions of the Python stack the kernel runs (the interpreter `findPython` picks). Which BLADE reference path
 * validates depends on it: with pandas >= 2 `get_dummies` makes bool columns, which patsy treats as categorical, so the
 * amtl path of model 4fb3f76c (two chained get_dummies of pop_class: duplicate columns) is rejected and the next
 * path is scored; with Debian's pandas 1.5.3 (uint8 columns) it validates. Recorded beside the scores and named in
 * the failure message, so a changed stack is told apart from a changed scorer.
 */
async function pythonStack(): Promise<Record<string, string>> {
  const py = await findPython();
  const code =
    'import json, sys, importlib\nout = {"python": sys.version.split()[0]}\nfor m in ("pandas", "numpy", "scipy", "statsmodels", "patsy", "sklearn"):\n    out[m] = importlib.import_module(m).__version__\nprint(json.dumps(out))';
  return JSON.parse(execFileSync(py.path, ['-c', code], { encoding: 'utf8', timeout: 60_000 })) as Record<
    string,
    string
  >;
}

const VOLATILE = /^(wallSeconds|wallHours|durationMs|scoredAt|at|startedAt|endedAt|latencyMs|toolMs|elapsedMs)$/;
// Issue 21 (after the recording) added presets: every score records its preset and the items official-code options
// changed, and new options are echoed. The recording is compared under the options it was made with (OLD_DEFAULTS).
// Issue 47 added BLADE's `summation` (official: numpy's pairwise means, recorded left to right), DDR's `percent` /
// `reading`, and LongDA's literals / summation / by_source / answers_csv options and `officialErrors`; the recorded
// LongDA scores are equal under their official values. Issue 42 made DDR's hallucination items atomic facts (`unit`,
// `unchecked`: facts with nothing checkable, kept apart). Issue 43 added the atomic-claims options `claims` (official and
// paper: whole, today's scoring) and `fact_split`, echoed in every DDR and AnalystBench score, and DDR detail
// `atomic` (null under whole).
const ADDED =
  /^(preset|changedBy|infinite_mae|literals|summation|by_source|answers_csv|officialErrors|unparsed_reply|label_case|generation_failures|unweighted_formula|unweightedF1|value_hashing|unitOutputs|percent|reading|unchecked|unit|claims|fact_split|atomic)$/;
/** The value without the keys issue 21 added (both sides of the comparison; DDR aggregates gained `extra.topK`). */
function withoutAdded(v: unknown, parent = ''): unknown {
  if (Array.isArray(v)) return v.map((x) => withoutAdded(x, parent));
  if (v && typeof v === 'object') {
    const kept = Object.entries(v as Record<string, unknown>).filter(
      ([k]) => !ADDED.test(k) && !(parent === 'extra' && k === 'topK'),
    );
    return Object.fromEntries(
      kept
        .map(([k, x]) => [k, withoutAdded(x, k)])
        .filter(([k, x]) => !(k === 'extra' && x && typeof x === 'object' && !Object.keys(x).length)),
    );
  }
  return v;
}
const OLD_DEFAULTS: Record<string, string[]> = {
  blade: [
    'model_cvar_check=strict',
    'failed_runs=zero',
    'generation_failures=in-place',
    'f1_zero=zero',
    'unweighted_formula=paper',
    'coverage_key=id',
    'whole_table_verbs=fixed',
    'graph_hash_collisions=keep-all',
    'value_hashing=vectorised',
    'unit_outputs=all',
    'summation=left-to-right',
  ],
  ddr: ['empty_insights=zero', 'failed_judgements=exclude', 'unparsed_reply=error', 'label_case=any'],
};
const old = (suite: string) => (OLD_DEFAULTS[suite] ?? []).flatMap((o) => ['--option', o]);
const snake = (k: string) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Stable form: run ids → labels, temp paths → `<dir>`, times dropped, option names in snake_case, runs sorted by label. */
function normalise(v: unknown, key = ''): unknown {
  if (typeof v === 'string') {
    let s = v.split(dir).join('<dir>').split(ddrDb).join('<ddr.sqlite>');
    for (const [id, l] of labels) s = s.split(id).join(l);
    return s;
  }
  if (Array.isArray(v)) return v.map((x) => normalise(x, key));
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (VOLATILE.test(k)) continue;
      const nk = key === 'options' ? snake(k) : k;
      out[nk] = normalise(x, k);
    }
    return out;
  }
  return v;
}

async function scoreJson(args: string[]): Promise<{ runs: Array<Record<string, unknown>>; aggregates: unknown[] }> {
  const t = io();
  const rc = await main(['score', '--store', store, ...args, '--json', '--no-save'], t.io);
  if (!t.out.join('').trim()) throw new Error('no JSON; stderr: ' + t.err.join(''));
  const j = JSON.parse(t.out.join('')) as { runs: Array<Record<string, unknown>>; aggregates: unknown[] };
  assert.ok(rc === 0 || j.runs.some((r) => r.error), t.err.join(''));
  return j;
}

test(
  'scores of reference, scripted and judged runs equal the ones recorded before the registry restructuring',
  { timeout: 600_000 },
  async () => {
    const got: Record<string, unknown> = {};
    const longda = await scoreJson(['--suite', 'longda', '--all']);
    const blade = await scoreJson(['--suite', 'blade', '--all', ...old('blade')]);
    const judged = [
      '--judge',
      'llm',
      '--judge-model',
      'judge-m',
      '--judge-base-url',
      judgeSrv.baseUrl,
      '--judge-api-key-env',
      'JUDGE_KEY',
    ];
    const ab = await scoreJson(['--suite', 'analystbench', '--all', ...judged]);
    const ddr = await scoreJson([
      '--suite',
      'ddr',
      '--all',
      ...old('ddr'),
      '--entities',
      'patients.subject_id',
      '--checklist',
      ddrChecklist,
      ...judged,
    ]);
    // Scores record the checklist they used since issue 15 (after the recording): the suite's own here, checked apart.
    for (const r of [...ab.runs, ...ddr.runs]) {
      assert.equal(
        (r.checklist as { source?: string } | undefined)?.source,
        'native',
        `run ${String(r.runId)} records its checklist`,
      );
      delete r.checklist;
    }
    for (const r of [...longda.runs, ...blade.runs]) {
      assert.equal(r.checklist, undefined, 'benchmarks without checklists record none');
    }
    // BLADE scores record their ground truth since issue 17 (after the recording): the shipped file here, checked apart.
    for (const r of blade.runs as Array<Record<string, unknown>>) {
      const g = r.groundTruth as { source?: string; version?: number } | undefined;
      if (r.error) continue;
      assert.equal(g?.source, 'shipped', `run ${String(r.runId)} records its ground truth`);
      assert.equal(g?.version, 0);
      delete r.groundTruth;
    }
    for (const r of [...longda.runs, ...ab.runs, ...ddr.runs] as Array<Record<string, unknown>>) {
      assert.equal(r.groundTruth, undefined, 'benchmarks without versioned ground truth record none');
    }
    // Scores record the analyst's interventions since issue 20 (after the recording): none in these runs, checked apart.
    for (const r of [...longda.runs, ...blade.runs, ...ab.runs, ...ddr.runs] as Array<Record<string, unknown>>) {
      if (r.assistance === undefined) continue;
      assert.deepEqual(r.assistance, { interventions: 0 }, `run ${String(r.runId)} is unassisted`);
      delete r.assistance;
    }
    // Scores record the run's tool options with defaults filled in since issue 25 (after the recording): the
    // registry's defaults and what the runs above set, checked apart.
    for (const [name, j] of Object.entries({ longda, blade, analystbench: ab, ddr })) {
      for (const r of [...j.runs, ...j.aggregates] as Array<Record<string, unknown>>) {
        if (r.toolOptions === undefined) continue;
        const set: Record<string, Record<string, string>> = { ddr: { python: 'false' } }; // as the runs above were made
        assert.deepEqual(
          r.toolOptions,
          parseOptions(getBenchmark(name).toolOptions, set[name] ?? {}),
          `${name}: ${String(r.runId ?? 'aggregate')} records its tool options`,
        );
        delete r.toolOptions;
      }
    }
    for (const [name, j] of Object.entries({ longda, blade, analystbench: ab, ddr })) {
      const runs = (normalise(j.runs) as Array<{ runId: string }>).sort((a, b) => a.runId.localeCompare(b.runId));
      got[name] = { runs, aggregates: normalise(j.aggregates) };
    }
    // Every group scored something real: a parity of empty results proves nothing.
    assert.equal((got.longda as { runs: unknown[] }).runs.length, 3);
    assert.equal((got.blade as { runs: unknown[] }).runs.length, 4);
    assert.equal((got.ddr as { runs: unknown[] }).runs.length, 1);
    assert.equal((got.analystbench as { runs: unknown[] }).runs.length, 2);
    const stack = await pythonStack();
    if (process.env.LOUPE_UPDATE_PARITY === '1') {
      writeFileSync(EXPECTED, JSON.stringify({ ...got, pythonStack: stack }, null, 1) + '\n');
      return;
    }
    const expected = JSON.parse(readFileSync(EXPECTED, 'utf8')) as Record<string, unknown>;
    const recordedStack = expected.pythonStack as Record<string, string> | undefined;
    delete expected.pythonStack;
    const stackNote = !recordedStack
      ? `\n(the recording does not name its Python stack; this machine has ${JSON.stringify(stack)})`
      : JSON.stringify(recordedStack) !== JSON.stringify(stack)
        ? `\n(recorded with the Python stack ${JSON.stringify(recordedStack)}; this machine has ${JSON.stringify(stack)})`
        : '';
    for (const k of Object.keys(expected)) {
      assert.deepEqual(withoutAdded(got[k]), withoutAdded(expected[k]), `scores of the ${k} runs changed${stackNote}`);
    }
  },
);
