import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import {
  aggregateHallucination,
  analystOptions,
  extractFigures,
  lexicalEmbedder,
  normaliseChecklist,
  openAiEmbedder,
  parseAnalystChecklist,
  scoreAnalystChecklist,
  scoreAnalystClaims,
  scoreAnalystFigures,
  selectSourceContext,
} from '../../../../../src/core/benchmarks/analystbench/eval.ts';
import {
  CallbackJudge,
  HumanJudge,
  MemoryJudgementStore,
  type JudgeInput,
} from '../../../../../src/core/eval/judges/index.ts';

const CHECKLIST = `- The response should include a Key Findings section.
  - 1: No such section.
  - 2: A heading with no content.
  - 3: Some findings.
  - 4: Most findings.
  - 5: All key findings, clearly stated.
- The response should report the overall obesity prevalence of 40.3%.
  - 1: Missing.
  - 5: Exactly 40.3%.
- The response should use a neutral tone.
`;

describe('eval/analystbench checklist', () => {
  it('parses criteria with their 1–5 rubric', () => {
    const c = parseAnalystChecklist(CHECKLIST);
    assert.equal(c.length, 3);
    assert.equal(c[0]!.rubric.length, 5);
    assert.equal(c[0]!.rubric[4], 'All key findings, clearly stated.');
    assert.deepEqual(c[1]!.rubric, ['Missing.', '', '', '', 'Exactly 40.3%.']);
    assert.deepEqual(c[2]!.rubric, []);
    assert.throws(() => parseAnalystChecklist('  - 1: orphan', 'c.md'), /c\.md:1/);
  });
  it('normalises as the paper implies: 20·mean (k/75 for 15 criteria)', () => {
    const fifteen = (sum: number) => {
      const a = new Array<number>(15).fill(Math.floor(sum / 15));
      for (let i = 0; i < sum % 15; i++) a[i]! += 1;
      return a;
    };
    assert.equal(normaliseChecklist(fifteen(70))!.toFixed(2), '93.33');
    assert.equal(normaliseChecklist(fifteen(43))!.toFixed(2), '57.33');
    assert.equal(normaliseChecklist(fifteen(34))!.toFixed(1), '45.3');
    assert.equal(normaliseChecklist(fifteen(65))!.toFixed(1), '86.7');
    assert.equal(normaliseChecklist(new Array(15).fill(1)), 20, 'minimum is 20, not 0');
    assert.equal(normaliseChecklist(new Array(15).fill(1), 'rescaled'), 0);
  });
  it('scores each criterion through the judge and counts pending ones', async () => {
    const judge = new CallbackJudge('scripted', ((_t: string, i: JudgeInput<'checklist-score'>) => ({
      score: i.criterion.includes('40.3') ? (i.response.includes('40.3') ? 5 : 1) : 4,
      reason: '',
    })) as never);
    const s = await scoreAnalystChecklist(
      { instruction: 'Write Data Brief 508', response: 'Key findings: obesity was 40.3%.' },
      parseAnalystChecklist(CHECKLIST),
      judge,
    );
    assert.deepEqual(
      s.scores.map((x) => x.score),
      [4, 5, 4],
    );
    assert.equal(s.percent, 20 * (13 / 3));
    const h = await scoreAnalystChecklist(
      { instruction: 'x', response: 'y' },
      parseAnalystChecklist(CHECKLIST),
      new HumanJudge(new MemoryJudgementStore()),
    );
    assert.equal(h.percent, null);
    assert.equal(h.judgements.pending, 3);
    assert.throws(() => analystOptions({ checklist_normalisation: 'linear' }), /option checklist_normalisation/);
  });
});

describe('eval/analystbench claims', () => {
  it('extracts claims, checks them against selected sources and computes the hallucination rate', async () => {
    const sources = [
      'Table 1. Obesity prevalence 2021–2023: overall 40.3, men 39.2, women 41.3.',
      'Severe obesity was 9.4 percent.',
    ];
    const judge = new CallbackJudge('scripted', ((
      task: string,
      i: JudgeInput<'claim-extraction'> & JudgeInput<'claim-support'>,
    ) => {
      if (task === 'claim-extraction') {
        return {
          claims: [
            { claim: 'Overall obesity prevalence was 40.3%', quote: 'Obesity was 40.3%.' },
            { claim: 'Women had higher prevalence (41.3%) than men (39.2%)', quote: '…' },
            { claim: 'Obesity causes 300,000 deaths a year', quote: '…' },
          ],
        };
      }
      return { supported: !/deaths/.test(i.claim), reason: '' };
    }) as never);
    const s = await scoreAnalystClaims({ report: 'Obesity was 40.3%. …', sources }, judge);
    assert.equal(s.claims.length, 3);
    assert.equal(s.rate, 1 / 3);
    assert.equal(aggregateHallucination([s, { rate: 0, unsupported: 0, judged: 5 }], 'micro'), 1 / 8);
    assert.equal(aggregateHallucination([s, { rate: 0, unsupported: 0, judged: 5 }], 'macro'), 1 / 6);
  });
  it("selects the passages that share the claim's numbers when sources are too long", () => {
    const filler = Array.from(
      { length: 40 },
      (_, i) => `Paragraph ${i} about survey design and weighting procedures.`,
    ).join('\n\n');
    const src = `${filler}\n\nHigh total cholesterol prevalence was 11.3 percent among adults.\n\n${filler}`;
    const ctx = selectSourceContext('High cholesterol prevalence was 11.3%', [src], 200);
    assert.match(ctx, /11\.3 percent/);
    assert.ok(ctx.length <= 200);
  });
});

describe('eval/analystbench figures', () => {
  const report = [
    '# Obesity',
    '![Prevalence of obesity by sex, 2021–2023](fig1.png)',
    '',
    '![](fig2.png)',
    '*Figure 2. Severe obesity by age group*',
    '```python',
    'import matplotlib.pyplot as plt',
    'plt.bar(x, y)',
    "plt.title('Obesity by education level')",
    '```',
  ].join('\n');
  it('extracts figures from images, caption lines and plotting code', () => {
    const f = extractFigures(report);
    assert.deepEqual(
      f.map((x) => x.caption),
      [
        'Prevalence of obesity by sex, 2021–2023',
        'Figure 2. Severe obesity by age group',
        'Obesity by education level',
      ],
    );
    assert.equal(f[2]!.source, 'code');
  });
  it('lexical fallback says so; coverage counts references matched by ≥1 figure', async () => {
    const reference = [
      'Obesity prevalence by sex',
      'Severe obesity prevalence by age group',
      'Trends in adult weight since 1999',
    ].map((caption) => ({ caption, source: 'ref', rendered: true }));
    const generated = extractFigures(report);
    const judge = new CallbackJudge('scripted', (() => ({
      readability: 5,
      groundedness: 4,
      task_utility: 4,
      reproducibility: 3,
      reason: '',
    })) as never);
    const s = await scoreAnalystFigures({ reference, generated }, lexicalEmbedder(), judge, { figure_threshold: 0.3 });
    assert.equal(s.lexicalFallback, true);
    assert.equal(s.method, 'lexical-fallback');
    assert.deepEqual(
      s.matches.map((m) => [m.reference, m.generated]),
      [
        [0, 0],
        [1, 1],
      ],
    );
    assert.equal(s.coverage, (100 * 2) / 3);
    assert.equal(s.quality, (16 / 4 / 5) * 100);
    const none = await scoreAnalystFigures({ reference, generated: [] }, lexicalEmbedder(), judge);
    assert.equal(none.coverage, 0);
    assert.equal(none.quality, null, 'N/A without generated figures');
  });
  it('uses embeddings from an OpenAI-compatible endpoint', async () => {
    // a tiny embeddings server: captions mentioning "sex" → [1,0], "age" → [0,1], else [1,1]
    const srv = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const { input } = JSON.parse(body) as { input: string[] };
        const data = input.map((t, index) => ({
          object: 'embedding',
          index,
          embedding: /sex/i.test(t) ? [1, 0] : /age/i.test(t) ? [0, 1] : [1, 1],
        }));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data, model: 'mini', usage: { prompt_tokens: 1, total_tokens: 1 } }));
      });
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    try {
      const port = (srv.address() as AddressInfo).port;
      const emb = openAiEmbedder({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'mini' });
      const s = await scoreAnalystFigures(
        {
          reference: [
            { caption: 'by sex', source: 'r', rendered: true },
            { caption: 'by age', source: 'r', rendered: true },
          ],
          generated: [{ caption: 'Obesity, men vs women (sex)', source: 'g', rendered: true }],
        },
        emb,
        undefined,
        { figure_threshold: 0.9 },
      );
      assert.equal(s.lexicalFallback, false);
      assert.equal(s.method, 'embeddings:mini');
      assert.equal(s.coverage, 50);
      assert.deepEqual(s.similarity, [[1], [0]]);
    } finally {
      await new Promise<void>((r) => srv.close(() => r()));
    }
  });
});
