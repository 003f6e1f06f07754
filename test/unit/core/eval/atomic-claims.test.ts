/**
 * Issue 43: atomic claims — compound insights and report claims split into atomic facts (the LLM judge's
 * `fact-decomposition` through the scripted OpenAI-compatible server, the rule, an expert's split), each fact linked to
 * the steps that mention it, and AnalystBench's `claims=atomic` counting facts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decomposeClaims, linkFacts, unitsOf } from '../../../../src/core/eval/atomic-claims.ts';
import { CallbackJudge, LlmJudge, MemoryJudgementStore } from '../../../../src/core/eval/judges/judge.ts';
import type { JudgeInput } from '../../../../src/core/eval/judges/types.ts';
import { scoreAnalystClaims } from '../../../../src/core/benchmarks/analystbench/eval.ts';
import { startScriptedLlm, type ChatRequestBody, type ScriptedLlm } from '../../../helpers/scripted-llm.ts';

let srv: ScriptedLlm;
let reply: (req: ChatRequestBody) => string = () => '{}';
before(async () => {
  srv = await startScriptedLlm({ script: [(req) => ({ content: reply(req) }), (req) => ({ content: reply(req) })] });
});
after(async () => {
  await srv.close();
});
const userText = (req: ChatRequestBody) => String(req.messages.find((m) => m.role === 'user')?.content ?? '');

const COMPOUND = 'The patient is a 61-year-old woman with hypertension and 3 admissions in 2019';

describe('atomic claims: decomposition (issue 43)', () => {
  it('the LLM judge splits a compound insight (scripted server on 127.0.0.1), the prompt carries the finding', async () => {
    reply = (req) =>
      userText(req).includes('61-year-old')
        ? JSON.stringify({
            facts: [
              'The patient is 61 years old',
              'The patient is a woman',
              'The patient has hypertension',
              'The patient had 3 admissions in 2019',
            ],
          })
        : JSON.stringify({ facts: [userText(req).replace(/^Finding:\n/, '')] });
    const judge = new LlmJudge({ baseUrl: srv.baseUrl, model: 'judge-m', maxRetries: 0 }, new MemoryJudgementStore());
    const n0 = srv.requests.length;
    const out = await decomposeClaims([COMPOUND, 'Median stay was 4 days'], {
      mode: 'judge',
      judge,
      ctx: { runId: 'r1' },
    });
    assert.equal(srv.requests.length, n0 + 2);
    assert.match(String(srv.requests[n0]!.body.messages[0]!.content), /atomic facts/);
    assert.equal(out[0]!.source, 'judge');
    assert.equal(out[0]!.facts.length, 4);
    assert.deepEqual(out[1]!.facts, ['Median stay was 4 days']);
    assert.deepEqual(unitsOf(out, 'whole'), [COMPOUND, 'Median stay was 4 days']);
    assert.equal(unitsOf(out, 'atomic').length, 5);
  });

  it('a judge that fails or returns no fact falls back to the rule, saying why', async () => {
    reply = () => 'not json at all';
    const judge = new LlmJudge({ baseUrl: srv.baseUrl, model: 'judge-m2', maxRetries: 0 }, new MemoryJudgementStore());
    const [c] = await decomposeClaims(['Findings: 1. female 2. aged 61 3. three admissions'], { mode: 'judge', judge });
    assert.equal(c!.source, 'rule');
    assert.match(c!.fallback!, /judge failed/);
    assert.deepEqual(c!.facts, ['Findings: female', 'Findings: aged 61', 'Findings: three admissions']);
    const empty = new CallbackJudge('scripted', (() => ({ facts: [] })) as never);
    const [d] = await decomposeClaims(['A rose by 3%'], { mode: 'judge', judge: empty });
    assert.equal(d!.fallback, 'the judge returned no fact');
    assert.deepEqual(d!.facts, ['A rose by 3%']);
  });

  it("an expert's split is used as is, before any judge call; an unknown mode is refused", async () => {
    const judge = new CallbackJudge('scripted', (() => ({ facts: ['x'] })) as never);
    const [c] = await decomposeClaims([COMPOUND], {
      mode: 'judge',
      judge,
      expert: new Map([[COMPOUND, ['61-year-old woman', 'hypertension; 3 admissions in 2019']]]),
    });
    assert.equal(c!.source, 'expert');
    assert.equal(judge.calls, 0);
    await assert.rejects(
      decomposeClaims(['a'], { mode: 'llm' as never }),
      /option fact_split: must be one of judge, rule/,
    );
  });

  it('each fact is linked to the steps (queries, cells) that mention its values, up to its bound', () => {
    const claims = [
      {
        index: 0,
        text: COMPOUND,
        facts: ['The patient had 3 admissions in 2019', 'The patient has hypertension'],
        source: 'judge' as const,
      },
    ];
    const steps = [
      { index: 0, text: 'execute_query(SELECT count(*) FROM admissions WHERE year=2019) → 3' },
      { index: 1, text: "execute_query(SELECT icd FROM diagnoses) → 'Hypertension, essential'" },
      { index: 2, text: 'execute_query(SELECT 1) → 1' },
    ];
    const f = linkFacts(claims, steps, 2);
    assert.deepEqual(
      f.map((x) => x.steps),
      [[0], [1]],
    );
    assert.deepEqual(
      f.map((x) => [x.index, x.claim, x.part]),
      [
        [0, 0, 0],
        [1, 0, 1],
      ],
    );
    assert.deepEqual(linkFacts(claims, steps, 0)[1]!.steps, [], 'a step after the bound never supports a fact');
  });
});

describe('AnalystBench claims=atomic (issue 43)', () => {
  const judge = () =>
    new CallbackJudge('scripted', ((
      task: string,
      i: JudgeInput<'claim-extraction'> & JudgeInput<'claim-support'> & JudgeInput<'fact-decomposition'>,
    ) => {
      if (task === 'claim-extraction') {
        return {
          claims: [
            { claim: 'Obesity was 40.3% overall and caused 300,000 deaths', quote: 'Obesity was 40.3%.' },
            { claim: 'Women had 41.3%', quote: 'w' },
          ],
        };
      }
      if (task === 'fact-decomposition') return { facts: i.text.split(/ and /) };
      return { supported: !/deaths/.test(i.claim), reason: '' };
    }) as never);
  const sources = ['Obesity prevalence: overall 40.3, women 41.3.'];

  it('whole (official) counts claims; atomic counts facts, each with its verdict and the cells that support it', async () => {
    const whole = await scoreAnalystClaims({ report: 'r', sources }, judge());
    assert.equal(whole.unit, 'whole');
    assert.equal(whole.rate, 1 / 2);
    assert.equal(whole.facts, undefined);
    const steps = [
      { index: 0, text: "execute_python(df['obesity'].mean()) → 40.3" },
      { index: 1, text: 'execute_python(women) → 41.3' },
    ];
    const atomic = await scoreAnalystClaims({ report: 'r', sources, steps }, judge(), { claims: 'atomic' });
    assert.equal(atomic.unit, 'atomic');
    assert.deepEqual(
      atomic.facts!.map((f) => [f.fact, f.supported, f.steps]),
      [
        ['Obesity was 40.3% overall', true, [0]],
        ['caused 300,000 deaths', false, []],
        ['Women had 41.3%', true, [1]],
      ],
    );
    assert.equal(atomic.rate, 1 / 3, 'one unsupported fact of three (whole: one claim of two)');
    assert.equal(atomic.claims[0]!.supported, false, 'a claim is supported only when all its facts are');
    assert.match(atomic.claims[0]!.reason, /1\/2 facts supported; facts by judge/);
  });
});
