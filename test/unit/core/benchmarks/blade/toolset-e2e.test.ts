/**
 * BLADE end to end through the real loop, a scripted OpenAI-compatible model, a sandboxed kernel and
 * the run store, on real datasets: explore, a rejected submission fixed after the error observation,
 * then a replay of the run in a fresh sandbox.
 */
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { LlmClient } from '../../../../../src/core/agent/llm.ts';
import { openStore, type RunStore } from '../../../../../src/core/store/run-store.ts';
import { loadSuite } from '../../../../../src/core/benchmarks/index.ts';
import type { Block } from '../../../../../src/core/suites/types.ts';
import { bladeState, createBladeToolSet } from '../../../../../src/core/benchmarks/blade/toolset.ts';
import { readReplayReports, replayRun } from '../../../../../src/core/runs/replay-run.ts';
import { call, startScriptedLlm, type ChatRequestBody, type ScriptedLlm } from '../../../../helpers/scripted-llm.ts';
import { sharedData } from '../../../../helpers/shared.ts';
import { kernelFactory, linkWorkspace, runWithModel } from '../../../../helpers/toolsets.ts';

const lastTool = (req: ChatRequestBody) =>
  String([...req.messages].reverse().find((m) => m.role === 'tool')?.content ?? '');

describe('BLADE agent end to end (scripted model, real data)', () => {
  let store: RunStore;
  let blocks: Block[];
  let srv: ScriptedLlm;
  before(async () => {
    store = openStore(':memory:');
    blocks = (await loadSuite('blade', sharedData('blade', 'datasets'))).blocks;
    const cvars = (control: string) => [
      { description: 'femininity of the hurricane name', type: 'IV', columns: ['masfem'] },
      { description: 'deaths caused by the hurricane', type: 'DV', columns: ['log_deaths'] },
      { description: 'hurricane strength', type: 'Control', columns: ['min', control] },
    ];
    const transform =
      "def transform(df):\n    df = df[df['name'] != 'Katrina'].copy()\n    df['log_deaths'] = np.log1p(df['alldeaths'])\n    return df\n";
    const model = "def model(df):\n    return smf.ols('log_deaths ~ masfem + min + wind', data=df).fit()\n";
    srv = await startScriptedLlm({
      script: [
        {
          content: 'Look at the data first.',
          toolCalls: [
            call('python', { code: "print(df.shape)\ndf[['masfem', 'alldeaths', 'min', 'wind']].describe().round(3)" }),
          ],
        },
        {
          content: 'Submit.',
          toolCalls: [
            call('submit_analysis', {
              conceptual_variables: cvars('wind_kt'),
              transform_code: transform,
              model_code: model,
            }),
          ],
        },
        (req) => {
          const obs = lastTool(req);
          // React to the error observation: fix the column named in it.
          assert.match(obs, /'wind_kt' not in the transformed table/);
          return {
            content: 'Fix the column name.',
            toolCalls: [
              call('submit_analysis', {
                conceptual_variables: cvars('wind'),
                transform_code: transform,
                model_code: model,
              }),
            ],
          };
        },
      ],
    });
  });
  after(async () => {
    await srv?.close();
    store?.close();
  });

  it('explores, is told what is wrong with a submission, fixes it; replay reports no differences', async () => {
    const block = blocks.find((b) => b.id === 'hurricane')!;
    const w = linkWorkspace(block);
    const llm = new LlmClient({ baseUrl: srv.baseUrl, model: 'scripted' });
    const res = await runWithModel({
      store,
      runId: 'blade-hurricane-1',
      toolSet: createBladeToolSet(),
      block,
      ws: w.ws,
      model: llm,
      startKernel: kernelFactory(w),
    });
    assert.equal(res.status, 'finished', res.reason);
    assert.equal(res.steps, 3);
    const steps = await store.getSteps('blade-hurricane-1');
    assert.match(steps[0]!.toolCalls[0]!.observation, /\(94, 14\)/);
    assert.equal(steps[1]!.toolCalls[0]!.isError, true);
    assert.equal(steps[2]!.toolCalls[0]!.isError, false);
    const st = bladeState(await store.getExtraState('blade-hurricane-1'));
    assert.deepEqual(
      st.submissions.map((s) => s.valid),
      [false, true],
    );
    assert.deepEqual(st.final!.cvars.controls[0]!.columns, ['min', 'wind']);
    assert.match(st.submissions[1]!.modelResult!, /masfem/);

    const rep = await replayRun({
      store,
      runId: 'blade-hurricane-1',
      startKernel: kernelFactory(linkWorkspace(block)),
    });
    assert.ok(rep.total >= 4, `python cells replayed: ${rep.total}`);
    assert.equal(rep.allMatch, true, JSON.stringify(rep.actions.filter((a) => !a.match)));
    assert.deepEqual(
      rep.steps.map((s) => s.stepIndex),
      [0, 1, 2],
    );
    assert.equal((await readReplayReports(store, 'blade-hurricane-1')).length, 1);
  });
});
