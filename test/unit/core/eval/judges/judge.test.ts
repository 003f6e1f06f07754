import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  answerHumanJudgement,
  CallbackJudge,
  ExactOnlyJudge,
  extractJson,
  extractRating,
  HumanJudge,
  LlmJudge,
  MemoryJudgementStore,
  tallyJudgements,
  validateSchema,
} from '../../../../../src/core/eval/judges/index.ts';
import { judgementStoreOf } from '../../../../../src/core/eval/store.ts';
import { openStore } from '../../../../../src/core/store/run-store.ts';
import { LoupeInputError } from '../../../../../src/core/util/errors.ts';
import {
  startScriptedLlm,
  type ChatRequestBody,
  type ScriptedLlm,
  type ScriptedReply,
} from '../../../../helpers/scripted-llm.ts';

/** Replies by looking at the request: the first user message decides the verdict. */
let firstReply: (req: ChatRequestBody) => ScriptedReply = () => ({ content: '{}' });
let retryReply: (req: ChatRequestBody) => ScriptedReply = () => ({ content: '{}' });
let srv: ScriptedLlm;

before(async () => {
  srv = await startScriptedLlm({ script: [(req) => firstReply(req), (req) => retryReply(req)] });
});
after(async () => {
  await srv.close();
});

const userText = (req: ChatRequestBody) => req.messages.find((m) => m.role === 'user')?.content ?? '';

describe('eval/judges LLM judge', () => {
  it('sends temperature 0, validates JSON, records prompt hash and raw output, and caches', async () => {
    firstReply = (req) => ({ content: JSON.stringify({ match: /BMI/.test(userText(req)), reason: 'same construct' }) });
    const store = new MemoryJudgementStore();
    const judge = new LlmJudge({ baseUrl: srv.baseUrl, model: 'judge-m', maxRetries: 0 }, store);
    const n0 = srv.requests.length;
    const j = await judge.judge('semantic-match', { kind: 'conceptual-variable', a: 'BMI', b: 'body mass index' });
    assert.equal(j.status, 'done');
    assert.deepEqual(j.verdict, { match: true, reason: 'same construct' });
    assert.equal(j.judgeId, 'llm:judge-m');
    assert.match(j.promptHash!, /^[0-9a-f]{64}$/);
    assert.match(j.raw!, /"match":true/);
    assert.equal(srv.requests.length, n0 + 1);
    assert.equal(srv.requests.at(-1)!.body.temperature, 0);
    const again = await judge.judge('semantic-match', { kind: 'conceptual-variable', a: 'BMI', b: 'body mass index' });
    assert.equal(again.cached, true);
    assert.equal(srv.requests.length, n0 + 1, 're-judging the same input makes no call');
    const no = await judge.judge('semantic-match', { kind: 'conceptual-variable', a: 'age', b: 'income' });
    assert.equal(no.verdict!.match, false);
  });

  it('asks again once when the reply is not valid for the schema', async () => {
    firstReply = () => ({ content: 'I think they match.' });
    retryReply = () => ({
      content:
        '```json\n{"label": "CORRECT_INFO", "supporting": [1], "contradicting": [], "evidence": "female", "reasoning": "ok"}\n```',
    });
    const judge = new LlmJudge({ baseUrl: srv.baseUrl, model: 'judge-m', maxRetries: 0 }, new MemoryJudgementStore());
    const n0 = srv.requests.length;
    const j = await judge.judge('checklist-support', {
      question: 'Sex?',
      answer: 'Female',
      insights: ['Age 70', 'The patient is a woman'],
    });
    assert.equal(srv.requests.length, n0 + 2);
    assert.equal(j.status, 'done');
    assert.equal(j.verdict!.label, 'CORRECT_INFO');
    assert.deepEqual(j.verdict!.supporting, [1]);
    assert.match(userText(srv.requests.at(-2)!.body), /\[Message 1\]: The patient is a woman/);
  });

  it('repairs harmless deviations (numeric strings, lower-case labels) without a retry', async () => {
    firstReply = () => ({ content: '{"label": "correct_info", "supporting": ["0"], "contradicting": []}' });
    const judge = new LlmJudge({ baseUrl: srv.baseUrl, model: 'judge-m', maxRetries: 0 }, new MemoryJudgementStore());
    const n0 = srv.requests.length;
    const j = await judge.judge('checklist-support', {
      question: 'Sex?',
      answer: 'Female',
      insights: ['She is a woman'],
    });
    assert.equal(srv.requests.length, n0 + 1);
    assert.deepEqual([j.verdict!.label, j.verdict!.supporting], ['CORRECT_INFO', [0]]);
  });

  it('marks an item unjudged (error) when both replies are invalid, and does not cache the failure', async () => {
    firstReply = () => ({ content: '{"label": "MAYBE"}' });
    retryReply = () => ({ content: '{"label": "PERHAPS"}' });
    const store = new MemoryJudgementStore();
    const judge = new LlmJudge({ baseUrl: srv.baseUrl, model: 'judge-m', maxRetries: 0 }, store);
    const j = await judge.judge('checklist-support', { question: 'Q', answer: 'A', report: 'something else' });
    assert.equal(j.status, 'error');
    assert.equal(j.verdict, null);
    assert.match(j.error!, /must be one of/);
    firstReply = () => ({ content: '{"label": "INSUFFICIENT_INFO"}' });
    const j2 = await judge.judge('checklist-support', { question: 'Q', answer: 'A', report: 'something else' });
    assert.equal(j2.status, 'done');
    assert.deepEqual(tallyJudgements([j, j2]), {
      judgeIds: ['llm:judge-m'],
      done: 1,
      pending: 0,
      errors: 1,
      cached: 0,
      exact: 0,
    });
  });

  it('reads a 1–5 rating from a non-JSON reply ("therefore, the rating is: 4/5")', async () => {
    firstReply = () => ({ content: 'Covers most sections. Therefore, the rating is: 4/5' });
    const judge = new LlmJudge({ baseUrl: srv.baseUrl, model: 'judge-m', maxRetries: 0 }, new MemoryJudgementStore());
    const j = await judge.judge('checklist-score', {
      instruction: 'Write a brief',
      response: 'Report…',
      criterion: 'Has a key findings section',
      rubric: ['none', 'a', 'b', 'c', 'all'],
    });
    assert.equal(j.verdict!.score, 4);
    assert.equal(extractRating('the rating is: 1/5'), 1);
    assert.equal(extractRating('therefore, the rating is: 6'), undefined);
  });

  it('never calls the model for identical text', async () => {
    const judge = new LlmJudge({ baseUrl: srv.baseUrl, model: 'judge-m', maxRetries: 0 }, new MemoryJudgementStore());
    const n0 = srv.requests.length;
    const j = await judge.judge('semantic-match', { kind: 'model', a: 'Linear Regression', b: 'linear regression ' });
    assert.equal(j.judgeId, 'exact');
    assert.equal(j.verdict!.match, true);
    const c = await judge.judge('checklist-support', {
      question: 'Sex?',
      answer: 'Female',
      insights: ['x', 'female.'],
    });
    assert.deepEqual(c.verdict!.supporting, [1]);
    assert.equal(srv.requests.length, n0);
  });

  it('returns an error judgement when the endpoint is down', async () => {
    const judge = new LlmJudge(
      { baseUrl: 'http://127.0.0.1:9/v1', model: 'm', maxRetries: 0, timeoutMs: 2000 },
      new MemoryJudgementStore(),
    );
    const j = await judge.judge('claim-support', { claim: 'Obesity was 40.3%', sources: 'table' });
    assert.equal(j.status, 'error');
    assert.match(j.error!, /model call failed/);
  });

  it('re-scores from the SQLite run store without any model call (new process, same file)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-judge-'));
    try {
      firstReply = () => ({ content: '{"supported": false, "reason": "not in sources"}' });
      const file = join(dir, 'runs.sqlite');
      const s1 = openStore(file);
      const j1 = await new LlmJudge(
        { baseUrl: srv.baseUrl, model: 'judge-m', maxRetries: 0 },
        judgementStoreOf(s1),
      ).judge('claim-support', { claim: 'X rose 3%', sources: 'X fell' }, { runId: 'r1' });
      s1.close();
      const n0 = srv.requests.length;
      const s2 = openStore(file);
      const store2 = judgementStoreOf(s2);
      const j2 = await new LlmJudge({ baseUrl: srv.baseUrl, model: 'judge-m', maxRetries: 0 }, store2).judge(
        'claim-support',
        { claim: 'X rose 3%', sources: 'X fell' },
      );
      assert.equal(srv.requests.length, n0);
      assert.equal(j2.cached, true);
      assert.deepEqual(j2.verdict, j1.verdict);
      assert.equal(j2.promptHash, j1.promptHash);
      assert.equal((await store2.listForRun('r1')).length, 1);
      s2.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('eval/judges human and exact-only judges', () => {
  it('queues items as pending until an annotator answers', async () => {
    const store = new MemoryJudgementStore();
    const h = new HumanJudge(store);
    const j = await h.judge('claim-support', { claim: 'Rate was 11.3%', sources: 'The rate was 11.4%' });
    assert.equal(j.status, 'pending');
    assert.equal((await store.listPending('claim-support')).length, 1);
    await assert.rejects(answerHumanJudgement(store, j.key, { supported: 'yes' } as never, 'ann1'), LoupeInputError);
    await answerHumanJudgement(store, j.key, { supported: false, reason: '11.3 ≠ 11.4' }, 'ann1');
    const again = await h.judge('claim-support', { claim: 'Rate was 11.3%', sources: 'The rate was 11.4%' });
    assert.equal(again.status, 'done');
    assert.equal(again.annotator, 'ann1');
    assert.equal((await store.listPending()).length, 0);
  });

  it('exact-only judge decides identical text and leaves the rest unjudged', async () => {
    const j = new ExactOnlyJudge(new MemoryJudgementStore());
    assert.equal((await j.judge('semantic-match', { kind: 'text', a: 'a b', b: 'A  B' })).status, 'done');
    assert.equal((await j.judge('semantic-match', { kind: 'text', a: 'a', b: 'b' })).status, 'error');
  });

  it('callback judge caches by input', async () => {
    const cb = new CallbackJudge(
      'scripted',
      (task) => (task === 'hallucination' ? { hallucinated: true, reason: 'r' } : undefined) as never,
    );
    await cb.judge('hallucination', { insight: 'i', evidence: 'e' });
    await cb.judge('hallucination', { insight: 'i', evidence: 'e' });
    assert.equal(cb.calls, 1);
  });
});

describe('eval/judges schema helpers', () => {
  it('validates the schema subset and extracts JSON', () => {
    assert.deepEqual(
      validateSchema(
        { score: 7 },
        { type: 'object', required: ['score', 'reason'], properties: { score: { type: 'integer', maximum: 5 } } },
      ),
      ['$.reason: is required', '$.score: must be ≤ 5'],
    );
    assert.deepEqual(extractJson('Sure: {"a": "}"} trailing'), { a: '}' });
    assert.equal(extractJson('no json'), undefined);
  });
});
