/**
 * DDR end to end on the MIMIC-IV demo (imported by the DDR loader, only the tables this test needs):
 * a scripted model explores patient 10000032 with the SQL tools and python, a separate insight call
 * per tool step records message-wise insights, the run ends on "FINISH:", touched fields are
 * recorded, and a replay of the SQL queries and python cells shows no differences.
 */
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LlmClient } from '../../../../../src/core/agent/llm.ts';
import { messagesFromSteps } from '../../../../../src/core/agent/loop.ts';
import { openStore, type RunStore } from '../../../../../src/core/store/run-store.ts';
import { loadSuite } from '../../../../../src/core/benchmarks/index.ts';
import type { Block } from '../../../../../src/core/suites/types.ts';
import {
  closeDdrDatabases,
  createDdrToolSet,
  ddrState,
  finishDdrRun,
  readDdrInsights,
  readDdrResult,
  withDdrInsights,
} from '../../../../../src/core/benchmarks/ddr/toolset.ts';
import { replayRun } from '../../../../../src/core/runs/replay-run.ts';
import { call, startScriptedLlm, type ChatRequestBody, type ScriptedLlm } from '../../../../helpers/scripted-llm.ts';
import { sharedData } from '../../../../helpers/shared.ts';
import { kernelFactory, linkWorkspace, runWithModel } from '../../../../helpers/toolsets.ts';

const FEW = new Set(['hosp_patients', 'hosp_admissions', 'hosp_diagnoses_icd']);
const lastTool = (req: ChatRequestBody) =>
  String([...req.messages].reverse().find((m) => m.role === 'tool')?.content ?? '');

describe('DDR agent end to end on the MIMIC-IV demo (scripted model)', () => {
  let store: RunStore;
  let block: Block;
  let srv: ScriptedLlm;
  const insightRequests: string[] = [];
  before(async () => {
    store = openStore(':memory:');
    const dir = mkdtempSync(join(tmpdir(), 'loupe-ddr-e2e-'));
    const suite = await loadSuite('ddr', sharedData('mimic-iv-demo'), {
      entities: 'patients.subject_id',
      database: join(dir, 'demo.sqlite'),
      metadataDir: sharedData('ddr', 'mimic'),
      tableFilter: (t) => FEW.has(t),
    });
    block = suite.blocks.find((b) => b.ddr?.entityId === '10000032')!;
    const agent = [
      { content: 'First, what data is there?', toolCalls: [call('get_database_info', {})] },
      {
        content: 'There are patients, admissions and diagnoses. Look at patients.',
        toolCalls: [call('describe_table', { table: 'hosp_patients' })],
      },
      {
        content: 'Get the demographics of the patient.',
        toolCalls: [
          call('execute_query', {
            sql: 'SELECT gender, anchor_age, dod FROM hosp_patients WHERE subject_id = 10000032',
          }),
        ],
      },
      (req: ChatRequestBody) => {
        assert.match(lastTool(req), /"F",\s*"52"/);
        return {
          content: 'The patient is a 52-year-old woman who died on 2180-09-09. How many admissions?',
          toolCalls: [
            call('execute_query', {
              sql: 'SELECT a.admission_type, count(*) AS n, min(a.admittime) AS first FROM hosp_admissions a JOIN hosp_patients p ON p.subject_id = a.subject_id WHERE p.subject_id = 10000032 GROUP BY a.admission_type ORDER BY n DESC',
            }),
          ],
        };
      },
      {
        content: 'Check the same with python, and that the database cannot be changed.',
        toolCalls: [
          call('python', {
            code: "n = pd.read_sql('SELECT count(*) AS n FROM hosp_admissions WHERE subject_id = 10000032', con)['n'][0]\ntry:\n    con.execute('CREATE TABLE x (a)')\n    w = 'write ok'\nexcept Exception as e:\n    w = type(e).__name__\nprint(n, w)",
          }),
        ],
      },
      (req: ChatRequestBody) => {
        const obs = lastTool(req);
        const m = /^(\d+) (\w+)/m.exec(obs)!;
        return {
          content: `FINISH: Patient 10000032 is a 52-year-old woman (died 2180-09-09) with ${m[1]} admissions; the database refused writes (${m[2]}).`,
        };
      },
    ];
    srv = await startScriptedLlm({
      scriptFor: (first) => {
        if (first.startsWith('Task:')) {
          return [
            (req: ChatRequestBody) => {
              const u = String(req.messages[1]!.content);
              insightRequests.push(u);
              const result = u.slice(u.indexOf('Tool result:'));
              return {
                content: /"error"/.test(result)
                  ? 'NO INSIGHT'
                  : `Insight: ${result.replace(/\s+/g, ' ').slice(13, 120)}`,
              };
            },
          ];
        }
        return agent;
      },
    });
  });
  after(async () => {
    await srv?.close();
    closeDdrDatabases();
    store?.close();
  });

  it('explores with SQL, records insights, touched fields and FINISH; replay matches', async () => {
    assert.equal(block.items[0]!.type, 'ddr-entity');
    const toolSet = createDdrToolSet();
    const task = toolSet.buildBlockPrompt(block);
    assert.equal(task, 'Analyze patient 10000032');
    const w = linkWorkspace(block);
    const model = withDdrInsights(new LlmClient({ baseUrl: srv.baseUrl, model: 'scripted' }), store, 'ddr-1', task);
    const res = await runWithModel({
      store,
      runId: 'ddr-1',
      toolSet,
      block,
      ws: w.ws,
      model,
      startKernel: kernelFactory(w),
    });
    assert.equal(res.status, 'finished', res.reason);
    assert.equal(res.steps, 6);
    const steps = await store.getSteps('ddr-1');
    // Loupe's import bookkeeping is hidden; descriptions come from DDR's MIMIC metadata.
    const info = JSON.parse(steps[0]!.toolCalls[0]!.observation);
    assert.deepEqual(info.tables, ['hosp_admissions', 'hosp_diagnoses_icd', 'hosp_patients']);
    assert.match(info.tables_info[0].comment, /^Hospital admissions for each patient/);
    const desc = JSON.parse(steps[1]!.toolCalls[0]!.observation);
    assert.equal(desc.row_count, 100);
    assert.match(desc.comment, /^Patient demographics/);
    assert.match(desc.columns[0].comment, /^Unique patient identifier/);
    assert.match(steps[4]!.toolCalls[0]!.observation, /^\d+ OperationalError/m);

    // message-wise insights: one separate call per non-description tool step (steps 2, 3, 4)
    const ins = await readDdrInsights(store, 'ddr-1');
    assert.deepEqual(
      ins.map((i) => [i.stepIndex, i.tool, i.insight !== null]),
      [
        [0, 'get_database_info', false],
        [1, 'describe_table', false],
        [2, 'execute_query', true],
        [3, 'execute_query', true],
        [4, 'python', true],
      ],
    );
    assert.equal(insightRequests.length, 3);
    assert.match(ins[2]!.insight!, /52/);

    // touched tables / columns from the SQL parser
    const q = ddrState(await store.getExtraState('ddr-1')).queries;
    assert.deepEqual(
      q.map((x) => [x.stepIndex, x.via]),
      [
        [2, 'execute_query'],
        [3, 'execute_query'],
        [4, 'python'],
      ],
    );
    assert.deepEqual([q[2]!.tables, q[2]!.columns], [['hosp_admissions'], ['hosp_admissions.subject_id']]);
    assert.deepEqual(q[0]!.columns, [
      'hosp_patients.anchor_age',
      'hosp_patients.dod',
      'hosp_patients.gender',
      'hosp_patients.subject_id',
    ]);
    assert.deepEqual(q[1]!.tables, ['hosp_admissions', 'hosp_patients']);
    assert.deepEqual(q[1]!.columns, [
      'hosp_admissions.admission_type',
      'hosp_admissions.admittime',
      'hosp_admissions.subject_id',
      'hosp_patients.subject_id',
    ]);

    const result = await finishDdrRun(store, 'ddr-1');
    assert.equal(result.finalReportSource, 'finish');
    assert.match(
      result.finalReport!,
      /^FINISH: Patient 10000032 is a 52-year-old woman .* with \d+ admissions; the database refused writes \(OperationalError\)/,
    );
    assert.deepEqual(result.touched.tables, ['hosp_admissions', 'hosp_patients']);
    assert.deepEqual(await readDdrResult(store, 'ddr-1'), result);

    const rep = await replayRun({
      store,
      runId: 'ddr-1',
      database: block.visible.database!.path,
      startKernel: kernelFactory(linkWorkspace(block)),
    });
    assert.deepEqual(
      rep.actions.map((a) => [a.stepIndex, a.kind]),
      [
        [2, 'sql'],
        [3, 'sql'],
        [4, 'python'],
        [4, 'python'],
      ],
    );
    assert.equal(rep.allMatch, true, JSON.stringify(rep.actions.filter((a) => !a.match)));
  });

  it('FINISH is checked before tool calls: code rule ends on "finish" anywhere, paper rule does not', async () => {
    const { runAgent } = await import('../../../../../src/core/agent/loop.ts');
    const msg = {
      role: 'assistant' as const,
      content: 'I will finish by checking the admissions.',
      tool_calls: [
        {
          id: 'c1',
          type: 'function' as const,
          function: {
            name: 'execute_query',
            arguments: JSON.stringify({ sql: 'SELECT count(*) FROM hosp_admissions' }),
          },
        },
      ],
    };
    const model = {
      model: 'inline',
      complete: async () => ({
        message: msg,
        usage: { input: 0, output: 0, cached: 0 },
        costUsd: null,
        finishReason: 'tool_calls',
        latencyMs: 0,
        attempts: 1,
      }),
    };
    for (const [rule, status, queries] of [
      ['code', 'finished', 0],
      ['paper', 'budget_exhausted', 2],
    ] as const) {
      const toolSet = createDdrToolSet({ python: false, finishRule: rule });
      const id = `ddr-rule-${rule}`;
      await store.createRun({
        id,
        suite: 'ddr',
        blockId: block.id,
        agent: 'llm',
        model: 'inline',
        params: {},
        promptHash: '',
        toolSet: toolSet.id,
        dataChecksums: {},
        loupeVersion: 'test',
        sandbox: 'off',
        workspace: '/tmp',
      });
      const res = await runAgent({
        store,
        runId: id,
        model,
        toolSet: toolSet as never,
        block,
        workspace: '/tmp',
        budget: { maxSteps: 2 },
      });
      assert.equal(res.status, status, `${rule}: ${res.reason}`);
      assert.equal(ddrState(await store.getExtraState(id)).queries.length, queries, rule);
    }
  });

  it('budget end without FINISH: forced final summary becomes the report', async () => {
    const toolSet = createDdrToolSet({ python: false });
    const w = linkWorkspace(block);
    const model = new LlmClient({ baseUrl: srv.baseUrl, model: 'scripted' });
    await store.createRun({
      id: 'ddr-2',
      suite: 'ddr',
      blockId: block.id,
      agent: 'llm',
      model: 'scripted',
      params: {},
      promptHash: '',
      toolSet: toolSet.id,
      dataChecksums: {},
      loupeVersion: 'test',
      sandbox: 'off',
      workspace: w.ws,
    });
    const { runAgent } = await import('../../../../../src/core/agent/loop.ts');
    const res = await runAgent({
      store,
      runId: 'ddr-2',
      model,
      toolSet: toolSet as never,
      block,
      workspace: w.ws,
      budget: { maxSteps: 2 },
    });
    assert.equal(res.status, 'budget_exhausted');
    // The forced summary is a separate conversation; script it as an insight-style reply.
    const summaryModel = {
      model: 'scripted',
      complete: async () => ({
        message: { role: 'assistant' as const, content: 'The patient has three tables of data.' },
        usage: { input: 0, output: 0, cached: 0 },
      }),
    };
    const result = await finishDdrRun(store, 'ddr-2', {
      model: summaryModel,
      messages: messagesFromSteps(toolSet.systemPrompt, toolSet.buildBlockPrompt(block), await store.getSteps('ddr-2')),
      insights: 'reasoning',
    });
    assert.equal(result.finalReportSource, 'forced-summary');
    assert.equal(result.finalReport, 'FINISH: The patient has three tables of data.');
    assert.deepEqual(
      result.insights.map((i) => i.tool),
      ['get_database_info', 'describe_table'],
    );
  });
});
