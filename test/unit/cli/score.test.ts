import { parseAnswerArg } from '../../../src/core/benchmarks/longda/toolset.ts';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../../src/cli/main.ts';
import { answerStructureText } from '../../../src/core/benchmarks/longda/parse.ts';
import { openStore } from '../../../src/core/store/run-store.ts';
import type { StepRecord, ToolCallRecord } from '../../../src/core/agent/types.ts';
import { loadLongdaGroundTruth } from '../../../src/core/benchmarks/longda/eval.ts';
import { scoreStoredRun } from '../../../src/core/runs/score-stored-run.ts';
import { CallbackJudge, type JudgeInput } from '../../../src/core/eval/judges/index.ts';
import type { Suite } from '../../../src/core/suites/types.ts';
import { sharedData } from '../../helpers/shared.ts';

const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const Q = (i: number) => `NHANES_NCHS Data Brief No. 508_q${i}`;
const PUBLISHED = [
  '40.3',
  '[39.2, 41.3]',
  '[35.5, 46.4, 38.9]',
  '[44.6, 45.0, 31.6]',
  '9.4',
  '[9.5, 12.0, 6.6]',
  '[6.7, 12.1]',
  '[6.1, 9.2, 4.3]',
  '[13.0, 14.7, 8.4]',
];
const PERTURBED: Record<number, string> = {
  1: '40.3%',
  2: '[39.2, 45.0]',
  3: '[35.5, 46.4]',
  4: 'hs: 44.6, some: 45.0, ba: 31.6',
  5: '10.3',
  6: '[9.5, None, 6.6]',
  7: '[8.0, 12.1]',
  9: '13.0, 14.7, 8.4',
};

/** What the answer tool records for a raw answer: its parsed value, or nothing when the tool refuses it (a dict, `None`). */
const recordable = (raw: string) => parseAnswerArg(raw).ok;
const recorded = (raw: string) => (parseAnswerArg(raw) as { value: number | number[] }).value;

let dir = '';
let file = '';

function call(name: string): ToolCallRecord {
  return {
    id: `c-${name}`,
    name,
    argumentsText: '{}',
    observation: 'ok',
    isError: false,
    truncated: false,
    durationMs: 1,
  };
}
function step(runId: string, index: number, tools: string[]): StepRecord {
  const now = new Date().toISOString();
  return {
    runId,
    index,
    startedAt: now,
    endedAt: now,
    latencyMs: 1,
    toolMs: 1,
    assistant: { role: 'assistant', content: `step ${index}` },
    toolCalls: tools.map(call),
    extraMessages: [],
    usage: { input: 1000, output: 100, cached: 0 },
    costUsd: null,
    finishReason: 'tool_calls',
  } as StepRecord;
}
const io = () => {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s), env: process.env, cwd: process.cwd() },
  };
};

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-score-'));
  file = join(dir, 'runs.sqlite');
  const s = openStore(file);
  const base = {
    suite: 'longda',
    blockId: BLOCK,
    agent: 'llm',
    params: { suiteRoot: sharedData('longda', 'benchmark') },
    promptHash: 'h',
    toolSet: 'longda',
    dataChecksums: {},
    loupeVersion: 't',
    sandbox: 'off',
    workspace: dir,
  };
  await s.createRun({ ...base, id: 'r-good', model: 'model-a' });
  await s.createRun({ ...base, id: 'r-perturbed', model: 'model-b' });
  await s.commitStep(step('r-good', 0, ['prompt']));
  await s.commitStep(step('r-good', 1, ['read_doc', 'python']));
  await s.commitStep(step('r-good', 2, ['answer', 'answer']), {
    answers: PUBLISHED.map((raw, i) => ({
      runId: 'r-good',
      queryId: Q(i + 1),
      answer: recorded(raw),
      raw,
      stepIndex: 2,
    })),
  });
  await s.commitStep(step('r-perturbed', 0, ['search_doc']), {
    answers: Object.entries(PERTURBED)
      .filter(([, raw]) => recordable(raw))
      .map(([i, raw]) => ({ runId: 'r-perturbed', queryId: Q(Number(i)), answer: recorded(raw), raw, stepIndex: 0 })),
  });
  // issue 21 item 1: "[40.3]" for a single-number question, recorded by the answer tool as 40.3
  await s.createRun({ ...base, id: 'r-onelist', model: 'model-c' });
  await s.commitStep(step('r-onelist', 0, ['answer']), {
    answers: [{ runId: 'r-onelist', queryId: Q(1), answer: 40.3, raw: '[40.3]', stepIndex: 0 }],
  });
  s.close();
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('cli score / report (LongDA)', () => {
  it('scores the value the answer tool recorded (and the export writes), not its raw text: "[40.3]" → 40.3 for a single-number question', async () => {
    const t = io();
    assert.equal(
      await main(['score', '--store', file, '--run', 'r-onelist', '--json', '--no-save'], t.io),
      0,
      t.err.join(''),
    );
    const r = (JSON.parse(t.out.join('')) as { runs: Array<Record<string, unknown>> }).runs[0]!;
    assert.equal(r.match, 1 / 9);
    assert.equal(r.coverage, 1 / 9);
  });

  it('scores every run: coverage and match as fractions, per-query results, options used', async () => {
    const t = io();
    const code = await main(['score', '--store', file, '--all', '--json'], t.io);
    assert.equal(code, 0, t.err.join(''));
    const j = JSON.parse(t.out.join('')) as {
      judge: string;
      runs: Array<Record<string, unknown>>;
      aggregates: Array<{ model: string; metrics: Record<string, number> }>;
    };
    assert.equal(j.judge, 'none');
    const good = j.runs.find((r) => r.runId === 'r-good')!;
    const bad = j.runs.find((r) => r.runId === 'r-perturbed')!;
    assert.equal(good.match, 1);
    assert.equal(good.coverage, 1);
    assert.equal((good.queries as unknown[]).length, 9);
    assert.deepEqual(good.options, {
      tolerance: 0.05,
      tolerance_floor: 1,
      list_scoring: 'partial',
      coverage: 'comparable',
      infinite_mae: 'inf',
      literals: 'cpython',
      summation: 'numpy',
      by_source: 'source',
      answers_csv: 'pandas',
    });
    // recorded by the answer tool: q2 [39.2, 45.0] (half), q3 [35.5, 46.4] (wrong length), q5 10.3 (within ±1),
    // q7 [8.0, 12.1] (half), q9 (13.0, 14.7, 8.4) (all); '40.3%', the dict and the list with None are refused by the tool
    assert.equal(bad.match, 3 / 9);
    assert.equal(bad.coverage, 4 / 9);
    assert.equal((bad.summary as Record<string, number>).coverageStructural, 4 / 9);
    assert.deepEqual((good.efficiency as { toolCalls: Record<string, number> }).toolCalls, {
      prompt: 1,
      read_doc: 1,
      python: 1,
      answer: 2,
    });
    assert.equal((good.efficiency as { avgStepsPerBlock: number }).avgStepsPerBlock, 3);
    const aggB = j.aggregates.find((a) => a.model === 'model-b')!;
    assert.equal(aggB.metrics.match, 3 / 9);
    const s = openStore(file);
    assert.equal((await s.scores.list()).length, 3, 'scores saved in the store');
    s.close();
  });

  it('applies --option list_scoring=strict and records it; rejects unknown options', async () => {
    const t = io();
    assert.equal(
      await main(
        [
          'score',
          '--store',
          file,
          '--run',
          'r-perturbed',
          '--option',
          'list_scoring=strict',
          '--option',
          'coverage=structural',
          '--json',
          '--no-save',
        ],
        t.io,
      ),
      0,
    );
    const r = (JSON.parse(t.out.join('')) as { runs: Array<Record<string, unknown>> }).runs[0]!;
    assert.equal(r.match, 2 / 9);
    assert.equal(r.coverage, 4 / 9);
    assert.equal((r.options as Record<string, string>).list_scoring, 'strict');
    const t2 = io();
    assert.equal(await main(['score', '--store', file, '--all', '--option', 'bogus=1'], t2.io), 1);
    assert.match(t2.err.join(''), /option bogus/);
    const t3 = io();
    assert.equal(await main(['score', '--store', file], t3.io), 2);
  });

  it('prints a readable summary with the options used', async () => {
    const t = io();
    assert.equal(await main(['score', '--store', file, '--all', '--no-save'], t.io), 0);
    const text = t.out.join('');
    assert.match(text, /r-good .* match 100\.00% {2}coverage 100\.00%/);
    assert.match(
      text,
      /options used \(longda\): tolerance=0\.05 tolerance_floor=1 list_scoring=partial coverage=comparable/,
    );
  });

  it('writes Markdown and HTML reports with tables and Vega-Lite plots', async () => {
    const md = io();
    assert.equal(await main(['report', '--store', file], md.io), 0);
    const text = md.out.join('');
    assert.match(text, /## longda/);
    assert.match(text, /\| model-a \| 100\.00 \| 100\.00 \|/);
    assert.match(text, /```vega-lite/);
    // figures the LongDA presentation asks for (src/core/benchmarks/longda/presentation.ts)
    assert.match(text, /LongDA match vs total tokens/);
    assert.match(text, /Tool usage — model-a/);
    const out = join(dir, 'r.html');
    const h = io();
    assert.equal(await main(['report', '--store', file, '--format', 'html', '--out', out], h.io), 0);
    const html = readFileSync(out, 'utf8');
    assert.match(html, /<svg/);
    assert.match(html, /application\/vnd\.vega-lite\+json/);
    assert.match(html, /data-runs="r-perturbed"/);
  });
});

describe('eval/score-run (DDR run from the store)', () => {
  it('scores a DDR run from its ddr-result event with the block checklist', async () => {
    const qa = JSON.parse(readFileSync(sharedData('ddr', 'mimic', 'qa.json'), 'utf8')) as {
      results: Array<{ entity_id: string; qa_pairs: Array<{ question: string; answer: string }> }>;
    };
    const e = qa.results[0]!;
    const block = {
      id: `patient_${e.entity_id}`,
      suite: 'ddr',
      suiteId: 'ddr:mimic',
      title: e.entity_id,
      items: [],
      runnable: true,
      problems: [],
      visible: {
        data: [],
        docs: [],
        missing: [],
        database: {
          path: '/x.sqlite',
          rel: 'db.sqlite',
          tables: [
            {
              name: 'hosp_patients',
              columns: [
                { name: 'gender', type: 'TEXT' },
                { name: 'anchor_age', type: 'INT' },
                { name: 'subject_id', type: 'INT' },
              ],
            },
          ],
        },
      },
      hidden: {
        files: [],
        checklist: e.qa_pairs.map((q, i) => ({ id: String(i), question: q.question, answer: q.answer })),
      },
      ddr: { entityId: e.entity_id, checklistCount: e.qa_pairs.length },
    };
    const suite = {
      id: 'ddr:mimic',
      kind: 'ddr',
      title: 'mimic',
      version: 't',
      root: '/data/mimic',
      source: { kind: 'local', root: '/data/mimic' },
      blocks: [block],
      problems: [],
    } as unknown as Suite;
    const s = openStore(':memory:');
    await s.createRun({
      id: 'd1',
      suite: 'ddr',
      blockId: block.id,
      agent: 'llm',
      model: 'm',
      params: { suiteRoot: '/data/mimic' },
      promptHash: 'h',
      toolSet: 'ddr',
      dataChecksums: {},
      loupeVersion: 't',
      sandbox: 'off',
      workspace: '/tmp',
    });
    await s.applyEffects('d1', 0, {
      extra: {
        ddr: {
          options: { finishRule: 'paper', emptyInsights: 'zero' },
          queries: [
            {
              stepIndex: 0,
              sql: 'x',
              ok: true,
              rows: 1,
              truncated: false,
              tables: ['hosp_patients'],
              columns: ['hosp_patients.gender', 'hosp_patients.subject_id'],
              method: 'parser',
            },
            {
              stepIndex: 1,
              sql: 'y',
              ok: true,
              rows: 1,
              truncated: false,
              tables: ['hosp_patients'],
              columns: ['hosp_patients.gender'],
              method: 'parser',
            },
          ],
        },
      },
    });
    await s.addEvent(
      'd1',
      'ddr-result',
      JSON.stringify({
        options: {},
        finalReport: 'FINISH: Female patient on the MEDICINE service.',
        finalReportSource: 'finish',
        insights: [
          { stepIndex: 0, tool: 'execute_query', insight: 'The patient is Female.' },
          { stepIndex: 1, tool: 'execute_query', insight: 'NO INSIGHT' },
        ],
        touched: { tables: [], columns: [], queries: 2 },
      }),
    );
    const judge = new CallbackJudge('scripted', ((task: string, i: JudgeInput<'checklist-support'>) => {
      if (task === 'hallucination') return { hallucinated: false, reason: '' };
      const text = (i.insights ?? [i.report ?? '']).join(' ').toLowerCase();
      return {
        label: text.includes(i.answer.toLowerCase()) ? 'CORRECT_INFO' : 'INSUFFICIENT_INFO',
        supporting: i.insights ? [0] : [],
        contradicting: [],
        evidence: '',
        reasoning: '',
      };
    }) as never);
    const r = await scoreStoredRun(s, 'd1', {
      judge,
      suites: new Map([['ddr\u0000/data/mimic', Promise.resolve(suite)]]),
    });
    assert.equal(r.error, undefined);
    assert.equal(r.summary.messageWiseAccuracy, 1 / 10, 'only "Female" is in the insights');
    assert.equal(r.summary.trajectoryWiseAccuracy, 2 / 10, 'Female and MEDICINE in the report');
    assert.equal(r.summary.coverage, 2 / 3);
    assert.equal(r.summary.validInsights, 1);
    assert.equal(r.summary.hallucinationRate, 0);
    assert.equal((r.options as Record<string, unknown>).scenario, 'mimic');
    s.close();
  });
});

describe('eval/score-run longdaJsonScore (for loupe run --json)', () => {
  it('gives coverage and match fractions for a run without loading the suite', async () => {
    const { longdaJsonScore } = await import('../../../src/core/runs/score-stored-run.ts');
    const { loadSuite } = await import('../../../src/core/benchmarks/index.ts');
    const suite = await loadSuite('longda', sharedData('longda', 'benchmark'));
    const block = suite.blocks.find((b) => b.id === BLOCK)!;
    const s = openStore(file);
    try {
      const j = await longdaJsonScore(s, 'r-perturbed', block);
      assert.equal(j.match, 3 / 9);
      assert.equal(j.coverage, 4 / 9);
      assert.equal((j.options as Record<string, unknown>).list_scoring, 'partial');
    } finally {
      s.close();
    }
  });
});

describe('eval/score-run BLADE MCQ runs', () => {
  it('MCQ accuracy with unparsed answers counted wrong, split by family', async () => {
    const { loadSuite } = await import('../../../src/core/benchmarks/index.ts');
    const root = sharedData('blade', 'datasets');
    const suite = await loadSuite('blade-mcq', root);
    const block = suite.blocks.find((b) => b.id === 'hurricane')!;
    const key = new Map(block.hidden.mcqs!.mcqs.map((m) => [m.id, m.correctLabel]));
    const ids = block.items.map((i) => i.id);
    // first answer correct, second wrong, third unparsed, the rest correct
    const wrongOf = (l: string) => (l === 'A' ? 'B' : 'A');
    const answers = ids.map((id, k) => ({
      itemId: id,
      answer: k === 1 ? wrongOf(key.get(id)!) : k === 2 ? null : key.get(id)!,
      raw: 'x',
      stepIndex: k,
    }));
    const s = openStore(':memory:');
    await s.createRun({
      id: 'm1',
      suite: 'blade-mcq',
      blockId: 'hurricane',
      agent: 'llm',
      model: 'm',
      params: { suiteRoot: root },
      promptHash: 'h',
      toolSet: 'blade-mcq',
      dataChecksums: {},
      loupeVersion: 't',
      sandbox: 'off',
      workspace: '/tmp',
    });
    await s.applyEffects('m1', 0, { extra: { bladeMcq: { answers } } });
    const judge = new CallbackJudge('unused', (() => undefined) as never);
    const r = await scoreStoredRun(s, 'm1', {
      judge,
      options: { mcq_parsing: 'strict' },
      suites: new Map([[`blade-mcq\u0000${root}`, Promise.resolve(suite)]]),
    });
    // the official preset re-reads each reply as blade_bench does: 'x' holds none of A-D, so every answer is unparsed
    const official = await scoreStoredRun(s, 'm1', {
      judge,
      suites: new Map([[`blade-mcq\u0000${root}`, Promise.resolve(suite)]]),
    });
    s.close();
    assert.equal(official.preset, 'official');
    assert.equal(official.summary.correct, 0);
    assert.deepEqual(official.changedBy, { mcq_parsing: ids.length - 1 });
    assert.equal(r.error, undefined);
    assert.equal(r.summary.total, ids.length);
    assert.equal(r.summary.correct, ids.length - 2);
    assert.equal(r.summary.unparsed, 1);
    assert.equal(r.summary.mcqAccuracy, (ids.length - 2) / ids.length);
    const fam = block.items.map((i) => (i as { family: string }).family);
    const cv = fam.filter((f) => f === 'cvar').length;
    const cvWrong = [1, 2].filter((k) => fam[k] === 'cvar').length;
    assert.equal(r.summary.cvarAccuracy, (cv - cvWrong) / cv);
  });
});

describe('cli score --longda-answers (a LongTA results file)', () => {
  const q = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  function writeAnswers(name: string, qidOf: (i: number) => string): string {
    const gt = loadLongdaGroundTruth(sharedData('longda', 'benchmark', 'benchmark.csv')).filter((x) =>
      x.longdaId.startsWith('NHANES_NCHS Data Brief No. 508_'),
    );
    const lines = ['survey,source,internal_id,query,answer_structure,additional_info,answer,my_answer,q_id'];
    gt.forEach((x, i) =>
      lines.push(
        [
          x.survey,
          x.source,
          String(x.internalId),
          x.question,
          answerStructureText(x.answerStructure),
          x.additionalInfo,
          x.answerText,
          PERTURBED[i + 1] ?? '',
          qidOf(i),
        ]
          .map(q)
          .join(','),
      ),
    );
    const f = join(dir, name);
    writeFileSync(f, lines.join('\n') + '\n');
    return f;
  }
  it('scores the file against its own answer column and against benchmark.csv, with the hand-computed fractions', async () => {
    const f = writeAnswers('answers_progress.csv', (i) => Q(i + 1));
    for (const extra of [[], ['--ground-truth', sharedData('longda', 'benchmark', 'benchmark.csv')]]) {
      const t = io();
      assert.equal(await main(['score', '--longda-answers', f, ...extra, '--json'], t.io), 0, t.err.join(''));
      const j = JSON.parse(t.out.join('')) as {
        n: number;
        match: number;
        coverage: number;
        matchStrict: number;
        options: Record<string, unknown>;
        queries: unknown[];
      };
      assert.equal(j.n, 9);
      assert.equal(j.match, 5 / 9);
      assert.equal(j.coverage, 6 / 9);
      assert.equal(j.matchStrict, 3 / 9);
      assert.equal(j.options.list_scoring, 'partial');
      assert.equal(j.queries.length, 9);
    }
    const t = io();
    assert.equal(await main(['score', '--longda-answers', f, '--option', 'list_scoring=strict'], t.io), 0);
    assert.match(t.out.join(''), /match 33\.33%/);
  });
  it('names the row whose q_id is not in the ground truth', async () => {
    const f = writeAnswers('bad.csv', (i) => (i === 3 ? 'NHANES_nope_q4' : Q(i + 1)));
    const t = io();
    assert.equal(
      await main(
        ['score', '--longda-answers', f, '--ground-truth', sharedData('longda', 'benchmark', 'benchmark.csv')],
        t.io,
      ),
      1,
    );
    assert.match(t.err.join(''), /bad\.csv:5: q_id 'NHANES_nope_q4' is not in the ground truth/);
  });
});
