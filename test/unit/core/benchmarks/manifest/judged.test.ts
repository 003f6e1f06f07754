/**
 * Issue 44: the judged scorers of a manifest (`llm-judge` for hypothesis-style gold, `checklist` for DDR-style facts,
 * `rubric` for AnalystBench-style criteria) go through Loupe's judge tasks; a pending judgement (a human judge) counts
 * as not met and is counted, and each judgement names the item and sub-answer it is about.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { manifestBenchmarkAt } from '../../../../../src/core/benchmarks/manifest/define.ts';
import type {
  Judge,
  JudgeContext,
  JudgeInput,
  JudgeTaskName,
  Judgement,
} from '../../../../../src/core/eval/judges/types.ts';

/** A judge deciding by rules, recording what it was asked. */
function ruleJudge(calls: Array<{ task: string; input: unknown; ctx?: JudgeContext }>): Judge {
  return {
    id: 'rules',
    async judge<K extends JudgeTaskName>(task: K, input: JudgeInput<K>, ctx?: JudgeContext): Promise<Judgement<K>> {
      calls.push({ task, input, ...(ctx ? { ctx } : {}) });
      const i = input as Record<string, unknown>;
      let verdict: unknown = null;
      let status: 'done' | 'pending' = 'done';
      if (task === 'semantic-match') {
        if (String(i.a).includes('maybe')) status = 'pending';
        verdict = { match: String(i.a).toLowerCase().includes(String(i.b).toLowerCase()), reason: '' };
      }
      if (task === 'checklist-support') {
        verdict = {
          label: String(i.report).includes(String(i.answer)) ? 'CORRECT_INFO' : 'INSUFFICIENT_INFO',
          supporting: [],
          contradicting: [],
          evidence: '',
          reasoning: '',
        };
      }
      if (task === 'checklist-score') verdict = { score: String(i.response).length > 10 ? 5 : 2, reason: '' };
      return {
        key: 'k',
        task,
        judgeId: 'rules',
        inputHash: 'h',
        promptHash: null,
        input,
        raw: null,
        verdict: status === 'done' ? verdict : null,
        status,
        at: '',
      } as Judgement<K>;
    },
  };
}

const manifest = (scorer: string, extra = '') => `kind: judged-${scorer}
title: Judged
items: { file: q.jsonl, id: id, instruction: question }
gold: { file: q.jsonl, id: id, answer: gold, shape: object }
scoring:
  scorer: ${scorer}
${extra}  aggregations:
    - { metric: accuracy, kind: per-item }
    - { metric: sub, kind: per-sub-answer }
nativeOutputs: { id: id, response: response }
`;

describe('judged manifest scorers', () => {
  const d = mkdtempSync(join(tmpdir(), 'loupe-judged-'));
  after(() => rmSync(d, { recursive: true, force: true }));
  writeFileSync(
    join(d, 'q.jsonl'),
    '{"id": 1, "question": "What drives sales?", "gold": {"direction": "price lowers sales", "size": "strongly"}}\n{"id": 2, "question": "Is X linked to Y?", "gold": {"answer": "no link"}}\n',
  );
  writeFileSync(
    join(d, 'r.jsonl'),
    '{"id": 1, "response": "Price lowers sales, weakly."}\n{"id": 2, "response": "maybe no link"}\n',
  );
  const score = async (scorer: string, extra = '') => {
    const dir = join(d, scorer);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'loupe-benchmark.yaml'), manifest(scorer, extra));
    const calls: Array<{ task: string; input: unknown; ctx?: JudgeContext }> = [];
    const def = manifestBenchmarkAt(dir);
    assert.equal(def.judgeFree, false);
    const r = await def.importNativeOutputs!.score({
      paths: [join(d, 'r.jsonl')],
      root: d,
      inputs: {},
      judge: () => ruleJudge(calls),
      raw: {},
      preset: 'official',
    });
    return {
      j: r.json as {
        summary: Record<string, number>;
        pending: number;
        items: Array<{ subs: Array<{ name: string; correct: boolean }> }>;
      },
      calls,
      lines: r.lines,
    };
  };

  it('llm-judge: one semantic match per facet with the question and rubric as context; pending counted', async () => {
    const { j, calls, lines } = await score('llm-judge', '  rubric: Same direction and strength.\n');
    assert.deepEqual(
      calls.map((c) => c.task),
      ['semantic-match', 'semantic-match', 'semantic-match'],
    );
    assert.match(
      String((calls[0]!.input as { context: string }).context),
      /What drives sales\?\nSame direction and strength\.\nFacet: direction/,
    );
    assert.deepEqual(calls[1]!.ctx?.nativeId, { item: '1', sub: 'size' });
    assert.deepEqual(
      j.items[0]!.subs.map((s) => [s.name, s.correct]),
      [
        ['direction', true],
        ['size', false],
      ],
    );
    assert.equal(j.pending, 1);
    assert.equal(j.summary.sub, 1 / 3);
    assert.match(lines[0]!, /1 judgements pending/);
  });

  it('checklist: CORRECT_INFO counts; rubric: a criterion is met at passScore', async () => {
    const c = await score('checklist');
    assert.deepEqual(
      c.calls.map((x) => x.task),
      ['checklist-support', 'checklist-support', 'checklist-support'],
    );
    assert.deepEqual(
      c.j.items.map((i) => i.subs.map((s) => s.correct)),
      [[false, false], [true]],
    );
    const r = await score('rubric', '  passScore: 5\n  rubricLevels: [none, poor, fair, good, full]\n');
    assert.deepEqual((r.calls[0]!.input as { rubric: string[] }).rubric, ['none', 'poor', 'fair', 'good', 'full']);
    assert.deepEqual(
      r.j.items.map((i) => i.subs.map((s) => s.correct)),
      [[true, true], [true]],
    );
  });
});
