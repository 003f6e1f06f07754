/**
 * AnalystBench-style task end to end: the NCHS Data Brief 508 task (Loupe's manifest fixture over the
 * real NHANES files in ../shared), narrowed to the two data files and two documents this test needs.
 * A scripted model lists files, searches the documentation, computes the published estimates in the
 * sandboxed kernel with a figure, is told its first report references a missing figure, and writes
 * report.md referencing the saved PNG. Then the python cells are replayed.
 */
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LlmClient } from '../../../../../src/core/agent/llm.ts';
import { ToolRegistry } from '../../../../../src/core/agent/registry.ts';
import type { ToolContext } from '../../../../../src/core/agent/types.ts';
import { nullLogger } from '../../../../../src/core/util/log.ts';
import { openStore, type RunStore } from '../../../../../src/core/store/run-store.ts';
import { loadSuite } from '../../../../../src/core/benchmarks/index.ts';
import type { Block } from '../../../../../src/core/suites/types.ts';
import {
  analystState,
  buildAnalystBlockPrompt,
  closeAnalystDocIndexes,
  createAnalystToolSet,
  reportImageRefs,
} from '../../../../../src/core/benchmarks/analystbench/toolset.ts';
import { globMatcher } from '../../../../../src/core/suites/glob.ts';
import { replayRun } from '../../../../../src/core/runs/replay-run.ts';
import { call, startScriptedLlm, type ChatRequestBody, type ScriptedLlm } from '../../../../helpers/scripted-llm.ts';
import { repoRoot, sharedDir } from '../../../../helpers/shared.ts';
import { kernelFactory, linkWorkspace, runWithModel } from '../../../../helpers/toolsets.ts';

const lastTool = (req: ChatRequestBody) =>
  String([...req.messages].reverse().find((m) => m.role === 'tool')?.content ?? '');

const CODE = `d = pd.read_sas('benchmark/NHANES/data/Demographics/DEMO_L.xpt')
b = pd.read_sas('benchmark/NHANES/data/Examination/BMX_L.xpt')
m = d.merge(b, on='SEQN')
m = m[(m.RIDAGEYR >= 20) & (m.RIDEXPRG != 1) & m.BMXBMI.notna() & (m.WTMEC2YR > 0)]
m['ob'] = (m.BMXBMI >= 30).astype(float)
w = lambda g: 100 * np.average(g.ob, weights=g.WTMEC2YR)
overall = round(w(m), 1)
by_sex = m.groupby('RIAGENDR').apply(w).round(1)
print('overall', overall, 'men', by_sex[1.0], 'women', by_sex[2.0])
fig, ax = plt.subplots(figsize=(4, 3))
ax.bar(['Total', 'Men', 'Women'], [overall, by_sex[1.0], by_sex[2.0]])
ax.set_ylabel('Percent')`;

describe('AnalystBench-style report task end to end (scripted model, NHANES)', () => {
  let store: RunStore;
  let block: Block;
  let srv: ScriptedLlm;
  before(async () => {
    process.env.LOUPE_SHARED ??= sharedDir();
    store = openStore(':memory:');
    const suite = await loadSuite('analystbench', join(repoRoot, 'test', 'fixtures', 'suites', 'analystbench'));
    const full = suite.blocks.find((b) => b.id === 'nchs_obesity_2021-2023')!;
    assert.ok(full.runnable, full.problems.join('; '));
    const keep = (rel: string) => /(DEMO_L|BMX_L)\.(xpt|pdf)$/.test(rel);
    block = {
      ...full,
      visible: {
        ...full.visible,
        data: full.visible.data.filter((f) => keep(f.rel)),
        docs: full.visible.docs.filter((f) => keep(f.rel)),
      },
    };
    assert.equal(block.visible.data.length, 2);
    assert.equal(block.visible.docs.length, 2);
    srv = await startScriptedLlm({
      script: [
        { content: 'Which tables are there?', toolCalls: [call('list_files', { glob: '**/*.xpt' })] },
        { content: 'Find the BMI variable.', toolCalls: [call('search_doc', { keyword: 'BMXBMI', max_matches: 3 })] },
        (req) => {
          assert.match(lastTool(req), /Found \d+ matches for .BMXBMI.[\s\S]*BMX_L\.pdf/);
          return { content: 'Compute the prevalence.', toolCalls: [call('python', { code: CODE })] };
        },
        {
          content: 'Write the report.',
          toolCalls: [call('write_report', { markdown: '# Obesity\n![Obesity by sex](figures/nope.png)\n' })],
        },
        (req) => {
          assert.match(
            lastTool(req),
            /references figures that do not exist: figures\/nope\.png\. Saved figures: figures\/fig-2-1\.png/,
          );
          return {
            content: 'Fix the figure path.',
            toolCalls: [
              call('write_report', {
                markdown:
                  '# Obesity and severe obesity, August 2021–August 2023\n\n## Key findings\n- 40.3% of adults had obesity.\n\n![Obesity by sex](figures/fig-2-1.png)\n',
              }),
            ],
          };
        },
      ],
    });
  });
  after(async () => {
    await srv?.close();
    await closeAnalystDocIndexes();
    store?.close();
  });

  it('lists, searches, computes with a figure, writes report.md referencing it; replay matches', async () => {
    const toolSet = createAnalystToolSet();
    const prompt = toolSet.buildBlockPrompt(block);
    assert.match(prompt, /^Task: You are a health statistician/);
    assert.match(prompt, /- benchmark\/NHANES\/data\/Examination\/BMX_L\.xpt/);
    assert.match(prompt, /table of contents[\s\S]*Key findings/);
    const w = linkWorkspace(block);
    const res = await runWithModel({
      store,
      runId: 'ab-1',
      toolSet,
      block,
      ws: w.ws,
      model: new LlmClient({ baseUrl: srv.baseUrl, model: 'scripted' }),
      startKernel: kernelFactory(w),
    });
    assert.equal(res.status, 'finished', res.reason);
    const steps = await store.getSteps('ab-1');
    assert.deepEqual(
      steps[0]!.toolCalls[0]!.observation.split('\n').map((l) => l.split('\t')[0]),
      ['benchmark/NHANES/data/Demographics/DEMO_L.xpt', 'benchmark/NHANES/data/Examination/BMX_L.xpt'],
    );
    // The published NCHS Data Brief 508 values, computed from the microdata in the sandbox.
    assert.match(steps[2]!.toolCalls[0]!.observation, /overall 40\.3 men 39\.2 women 41\.3/);
    assert.match(steps[2]!.toolCalls[0]!.observation, /Saved: figures\/fig-2-1\.png/);
    const png = readFileSync(join(w.ws, 'figures', 'fig-2-1.png'));
    assert.equal(png.subarray(1, 4).toString('latin1'), 'PNG');
    assert.equal(readFileSync(join(w.ws, 'figures', 'fig-2-1.py'), 'utf8'), CODE);
    assert.equal(steps[3]!.toolCalls[0]!.isError, true);
    const report = readFileSync(join(w.ws, 'report.md'), 'utf8');
    assert.deepEqual(reportImageRefs(report), ['figures/fig-2-1.png']);
    const st = analystState(await store.getExtraState('ab-1'));
    assert.deepEqual(st.report, { path: 'report.md', chars: report.length, figures: ['figures/fig-2-1.png'] });
    assert.deepEqual(
      st.figures.map((f) => f.path),
      ['figures/fig-2-1.png'],
    );

    const rep = await replayRun({ store, runId: 'ab-1', startKernel: kernelFactory(linkWorkspace(block)) });
    assert.equal(rep.total, 2);
    assert.equal(rep.allMatch, true, JSON.stringify(rep.actions.filter((a) => !a.match)));
  });

  it('with its block, the documentation build starts with the run and a search on one file waits only for that file (issue 23)', async () => {
    const toolSet = createAnalystToolSet({ block });
    assert.ok(toolSet.prepare, 'a tool set with doc tools and its block prepares the index');
    assert.equal(
      createAnalystToolSet({ block, input: 'instruction' }).prepare,
      undefined,
      'instruction only: no documents, no build',
    );
    const ac = new AbortController();
    const release = toolSet.prepare({ signal: ac.signal });
    try {
      const reg = new ToolRegistry(toolSet.tools);
      const doc = block.visible.docs.find((d) => d.rel.endsWith('BMX_L.pdf'))!.rel;
      const state = { extra: {}, benchmark: {} };
      const ctx = {
        runId: 'r',
        stepIndex: 0,
        workspace: '/nonexistent',
        block,
        taskPrompt: '',
        state,
        signal: ac.signal,
        log: nullLogger,
        kernel: () => Promise.reject(new Error('no kernel')),
        execute: () => Promise.reject(new Error('no kernel')),
      } as ToolContext;
      const r = await reg.invoke(
        {
          id: 'c',
          type: 'function',
          function: { name: 'search_doc', arguments: JSON.stringify({ keyword: 'BMXBMI', doc_path: doc }) },
        },
        ctx,
      );
      assert.match(r.observation, /Found \d+ matches for 'BMXBMI'/);
      const wait = (r.data as { index: { waitedFor: string; filesTotal: number } }).index;
      assert.equal(wait.waitedFor, `file ${doc}`);
      assert.equal(wait.filesTotal, 2);
    } finally {
      release();
    }
  });

  it('input settings: instruction only hides sources; template needs a template; globs', () => {
    const inst = createAnalystToolSet({ input: 'instruction' });
    assert.deepEqual(
      inst.tools.map((t) => t.name),
      ['python', 'write_report'],
    );
    assert.doesNotMatch(inst.buildBlockPrompt(block), /BMX_L/);
    assert.doesNotMatch(createAnalystToolSet({ input: 'sources' }).buildBlockPrompt(block), /table of contents/);
    assert.throws(() => buildAnalystBlockPrompt(block, { input: 'template' }), /template/);
    assert.match(
      buildAnalystBlockPrompt(block, { input: 'template', templateReport: '# Brief 2017-2018' }),
      /<template>\n# Brief 2017-2018\n<\/template>/,
    );
    assert.ok(globMatcher('**/*.xpt', 'glob', { matchBase: true })('a/b/c.xpt'));
    assert.ok(globMatcher('*.xpt', 'glob', { matchBase: true })('a/c.xpt'));
    assert.ok(!globMatcher('data/*.xpt', 'glob', { matchBase: true })('data/x/c.xpt'));
    assert.ok(globMatcher('**/{DEMO,BMX}_L.*', 'glob', { matchBase: true })('d/BMX_L.pdf'));
    assert.ok(existsSync(join(repoRoot, 'test', 'fixtures', 'suites', 'analystbench')));
  });
});
