import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bladeCiRows } from '../../../../src/core/benchmarks/blade/presentation.ts';
import { toolUsageHeatmap } from '../../../../src/core/benchmarks/longda/eval.ts';
import {
  bladeCiSpec,
  heatmapsByModel,
  heatmapSpec,
  longdaMatchVsTokens,
  matchVsTokensSpec,
  metricsByModelBlock,
  modelBarSpec,
} from '../../../../src/app/results/results.ts';
import { buildReport, renderMarkdown } from '../../../../src/app/report/report.ts';

describe('eval/results data shaping', () => {
  it('metrics per model × block average repeats and keep the run ids', () => {
    const t = metricsByModelBlock(
      [
        { runId: 'a1', suite: 'longda', blockId: 'B1', model: 'm', metrics: { match: 0.5 } },
        { runId: 'a2', suite: 'longda', blockId: 'B1', model: 'm', metrics: { match: 1 } },
        { runId: 'a3', suite: 'longda', blockId: 'B2', model: 'm', metrics: { match: 0 } },
        { runId: 'b1', suite: 'longda', blockId: 'B1', model: 'n', metrics: { match: null } },
      ],
      'match',
    );
    assert.deepEqual(t.models, ['m', 'n']);
    assert.deepEqual(
      t.cells.find((c) => c.model === 'm' && c.block === 'B1'),
      { model: 'm', block: 'B1', value: 0.75, n: 2, runIds: ['a1', 'a2'] },
    );
    assert.equal(t.modelMeans.find((x) => x.model === 'm')!.value, 0.375);
    assert.equal(t.modelMeans.find((x) => x.model === 'n')!.value, null);
    assert.equal((modelBarSpec(t, 'x').data as { values: unknown[] }).values.length, 1);
  });
  it('match vs tokens pools runs per model and fits y = a·ln(x) + b (exact on log data; exclusions honoured)', () => {
    const mk = (model: string, tokens: number, match: number) => ({
      runId: model,
      model,
      inputTokens: tokens,
      outputTokens: 0,
      matchSum: match * 10,
      coverageSum: 10,
      queries: 10,
    });
    const f = (x: number) => 0.1 * Math.log(x) - 1;
    const d = longdaMatchVsTokens(
      [mk('a', 1e6, f(1e6)), mk('b', 1e7, f(1e7)), mk('c', 1e8, f(1e8)), mk('outlier', 1e7, 0.99)],
      ['outlier'],
    );
    assert.ok(Math.abs(d.fit!.a - 0.1) < 1e-12);
    assert.ok(Math.abs(d.fit!.b + 1) < 1e-10);
    assert.ok(Math.abs(d.fit!.r2 - 1) < 1e-12);
    assert.equal(d.points.length, 4);
    const pooled = longdaMatchVsTokens([mk('a', 100, 1), { ...mk('a', 300, 0), runId: 'a2' }]);
    assert.deepEqual(pooled.points[0], {
      model: 'a',
      totalTokens: 400,
      match: 0.5,
      coverage: 1,
      queries: 20,
      runIds: ['a', 'a2'],
    });
    assert.equal(pooled.fit, null);
    assert.equal((matchVsTokensSpec(d).layer as unknown[]).length, 2);
  });
  it('heatmaps per model pool trajectories', () => {
    const h = heatmapsByModel(
      [
        { runId: 'r1', model: 'm', steps: [['prompt'], ['answer']] },
        { runId: 'r2', model: 'm', steps: [['answer']] },
      ],
      toolUsageHeatmap,
      { bins: 2 },
    );
    assert.equal(h.length, 1);
    assert.deepEqual(h[0]!.runIds, ['r1', 'r2']);
    // r1: step1 → bin floor(1/2·2)=1, step2 → min(2,1)=1; r2: step1/1·2 → 1
    assert.deepEqual(h[0]!.heatmap.counts[0], [0, 1]);
    assert.deepEqual(h[0]!.heatmap.counts[5], [0, 2]);
    assert.equal((heatmapSpec('m', h[0]!.heatmap).data as { values: unknown[] }).values.length, 7 * 2);
  });
  it('BLADE CI rows from aggregates', () => {
    const iv = (m: number) => ({ mean: m, lo: m - 0.1, hi: m + 0.1 });
    const rows = bladeCiRows([
      {
        model: 'm',
        runIds: ['x'],
        extra: {
          bootstrap: {
            weightedF1: iv(0.4),
            perType: { cvar: { precision: iv(0.5), coverage: iv(0.3), f1: iv(0.37) } },
          },
        },
      },
    ]);
    assert.equal(rows.length, 2);
    assert.deepEqual(rows[0]!.f1, { mean: 0.37, lo: 0.27, hi: 0.47 });
    assert.equal(rows[1]!.type, 'weighted');
    assert.equal((bladeCiSpec(rows).data as { values: unknown[] }).values.length, 2);
  });
  it('BLADE F1 chart: the y axis is titled "F1" (was "F1, lo": the error bar layer merged its field name in)', async () => {
    const iv = (m: number) => ({ mean: m, lo: m - 0.1, hi: m + 0.1 });
    const rows = bladeCiRows([
      {
        model: 'm',
        runIds: ['x'],
        extra: {
          bootstrap: {
            weightedF1: iv(0.4),
            perType: { cvar: { precision: iv(0.5), coverage: iv(0.3), f1: iv(0.37) } },
          },
        },
      },
    ]);
    const { compile } = await import('vega-lite');
    const vg = JSON.stringify(compile(bladeCiSpec(rows) as never).spec);
    const titles = [...vg.matchAll(/"title":"([^"]*)"/g)].map((m) => m[1]);
    assert.ok(titles.includes('F1'), titles.join(' | '));
    assert.ok(!titles.some((t) => /lo/.test(t!)), titles.join(' | '));
  });
  it('report lists failures, options and judges', () => {
    const r = buildReport(
      [
        {
          runId: 'x',
          suite: 'ddr',
          blockId: 'p1',
          model: 'm',
          agent: 'llm',
          status: 'finished',
          benchmark: 'ddr',
          judgeId: 'human',
          options: { scenario: 'mimic' },
          summary: { messageWiseAccuracy: 0.25 },
          pending: 3,
          unjudged: 3,
          detail: null,
        },
        {
          runId: 'y',
          suite: 'ddr',
          blockId: 'p2',
          model: 'm',
          agent: 'llm',
          status: 'failed',
          benchmark: 'ddr',
          judgeId: 'human',
          options: {},
          summary: {},
          pending: 0,
          unjudged: 0,
          detail: null,
          error: 'boom',
        },
      ],
      [],
    );
    const md = renderMarkdown(r);
    assert.match(md, /Judge: human\. Pending judgements: 3/);
    assert.match(md, /Options: scenario=mimic/);
    assert.match(md, /Run y not scored: boom/);
    assert.match(md, /\| m \| 25\.00 \|/);
  });
  it('report sections follow the benchmark presentation: BLADE decision-type CIs, nothing extra for a kind not registered', () => {
    const iv = (m: number) => ({ mean: m, lo: m - 0.1, hi: m + 0.1 });
    const run = {
      runId: 'b1',
      suite: 'blade',
      blockId: 'affairs',
      model: 'm',
      agent: 'llm',
      status: 'finished',
      benchmark: 'blade',
      judgeId: 'none',
      options: {},
      summary: { transformValuePrecision: 0.5 },
      pending: 0,
      unjudged: 0,
      detail: null,
    };
    const agg = {
      benchmark: 'blade',
      model: 'm',
      runs: 1,
      runIds: ['b1'],
      failed: 0,
      pending: 0,
      metrics: {},
      method: 'bootstrap',
      extra: {
        bootstrap: { weightedF1: iv(0.4), perType: { cvar: { precision: iv(0.5), coverage: iv(0.3), f1: iv(0.37) } } },
      },
    };
    const md = renderMarkdown(
      buildReport([run, { ...run, runId: 'z1', suite: 'zz-unknown', benchmark: 'zz-unknown' }], [agg]),
    );
    assert.match(md, /BLADE per decision type: bootstrap mean \[95% CI\]/);
    assert.match(md, /\| m \| cvar \| 0\.500 \[0\.400, 0\.600\]/);
    assert.match(md, /BLADE F1 by decision type/);
    assert.match(md, /BLADE transform precision \(value\) per model × block/);
    const unknown = md.slice(md.indexOf('## zz-unknown'));
    assert.doesNotMatch(unknown, /per model × block|vega-lite/);
  });
  it('HTML report tables fit the page: headers wrap between camelCase words, numbers never wrap', async () => {
    const { renderHtml } = await import('../../../../src/app/report/report.ts');
    const r = buildReport(
      [
        {
          runId: 'x',
          suite: 'ddr',
          blockId: 'p1',
          model: 'm',
          agent: 'llm',
          status: 'finished',
          benchmark: 'ddr',
          judgeId: 'human',
          options: {},
          summary: { messageWiseAccuracy: 0.25 },
          pending: 0,
          unjudged: 0,
          detail: null,
        },
      ],
      [],
    );
    const html = await renderHtml(r);
    assert.match(html, /<th>model<\/th>/);
    assert.match(
      await renderHtml({
        ...r,
        sections: [
          { ...r.sections[0]!, tables: [{ caption: 'c', header: ['model', 'coverageComparable'], rows: [] }] },
        ],
      } as never),
      /<th>coverage<wbr>Comparable<\/th>/,
    );
    assert.match(html, /td\{white-space:nowrap\}/);
    assert.doesNotMatch(html, /max-width:1200px/);
  });
});

describe('eval/score-run aggregateScores', () => {
  it('DDR: sample/item averages over entities and Bradley–Terry novelty across models', async () => {
    const { aggregateScores } = await import('../../../../src/core/runs/score-stored-run.ts');
    const { CallbackJudge } = await import('../../../../src/core/eval/judges/index.ts');
    const ctx = (correct: number, judged: number, supporting: number[]) => ({
      included: true,
      correct,
      judged,
      accuracy: judged ? correct / judged : null,
      entityId: 'e',
      items: [
        {
          index: 0,
          question: 'q',
          label: 'CORRECT_INFO',
          supporting,
          contradicting: [],
          judgeId: 'x',
          judgementKey: null,
          status: 'done',
        },
      ],
    });
    const run = (runId: string, model: string, entityId: string, m: [number, number], insights: string[]) => ({
      runId,
      suite: 'ddr',
      blockId: entityId,
      model,
      agent: 'llm',
      status: 'finished',
      benchmark: 'ddr',
      judgeId: 'x',
      options: {},
      pending: 0,
      unjudged: 0,
      summary: { coverage: 0.1, normalizedEntropy: 0.5, hallucinationRate: null },
      detail: {
        entityId,
        insights,
        checklist: {
          perEntity: [
            {
              entityId,
              messageWise: ctx(m[0], m[1], [0]),
              trajectoryWise: ctx(0, m[1], []),
              validInsights: insights.length,
              totalInsights: insights.length,
            },
          ],
        },
      },
    });
    const runs = [
      run('a1', 'A', 'e1', [1, 2], ['used', 'novel a1', 'novel a2']),
      run('a2', 'A', 'e2', [3, 3], ['used', 'novel a3']),
      run('b1', 'B', 'e1', [0, 2], ['used']),
      run('b2', 'B', 'e2', [1, 4], ['used', 'novel b']),
    ];
    const judge = new CallbackJudge('n', ((_t: string, i: { insightsA: string[]; insightsB: string[] }) => ({
      winner: i.insightsA.length > i.insightsB.length ? 'A' : i.insightsA.length < i.insightsB.length ? 'B' : 'TIE',
      reason: '',
    })) as never);
    const aggs = await aggregateScores(runs as never, judge);
    const a = aggs.find((x) => x.model === 'A')!;
    const b = aggs.find((x) => x.model === 'B')!;
    assert.equal(a.metrics.messageWiseSampleAveraged, (1 / 2 + 1) / 2);
    assert.equal(a.metrics.messageWiseItemAveraged, 4 / 5);
    assert.equal(b.metrics.messageWiseItemAveraged, 1 / 6);
    assert.equal(a.metrics.noveltyRank, 1, 'A has more uncited insights on both entities');
    assert.equal(b.metrics.noveltyRank, 2);
  });
});
