import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main } from '../../../src/cli/main.ts';
import { openStore } from '../../../src/core/store/run-store.ts';
import { loadSuite } from '../../../src/core/benchmarks/index.ts';
import { judgementStoreOf } from '../../../src/core/eval/store.ts';
import { DEMO_REPORT, writeAnalystbenchDemo } from '../../helpers/fixtures.ts';
import { startScriptedLlm, type ChatRequestBody, type ScriptedLlm } from '../../helpers/scripted-llm.ts';

/** A scripted judge endpoint: the reply depends on which task the system prompt describes. */
function judgeReply(req: ChatRequestBody): { content: string } {
  const sys = req.messages.find((m) => m.role === 'system')?.content ?? '';
  const user = req.messages.find((m) => m.role === 'user')?.content ?? '';
  if (/grade a written analysis/.test(sys)) return { content: JSON.stringify({ score: 4, reason: 'mostly there' }) };
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
    const claim = /Claim: (.*)/.exec(user)?.[1] ?? '';
    return {
      content: JSON.stringify({ supported: /40\.3/.test(claim) && /40\.3 percent/.test(user), reason: 'checked' }),
    };
  }
  if (/rate a figure/.test(sys)) {
    return {
      content: JSON.stringify({ readability: 5, groundedness: 4, task_utility: 4, reproducibility: 3, reason: 'fine' }),
    };
  }
  return { content: 'unexpected' };
}

let dir = '';
let srv: ScriptedLlm;
let storeFile = '';

before(async () => {
  srv = await startScriptedLlm({ script: [(req) => judgeReply(req)] });
  dir = mkdtempSync(join(tmpdir(), 'loupe-score-ab-'));
  const suite = writeAnalystbenchDemo(join(dir, 'suite'));
  const s = await loadSuite('analystbench', suite);
  const block = s.blocks[0]!;
  assert.equal(block.runnable, true, block.problems.join('; '));
  const ws = join(dir, 'runs', 'ab1', 'workspace'); // the runs folder of --store (issue 36: a folder elsewhere is never read)
  mkdirSync(ws, { recursive: true });
  writeFileSync(join(ws, 'report.md'), DEMO_REPORT);
  storeFile = join(dir, 'runs.sqlite');
  const st = openStore(storeFile);
  await st.createRun({
    id: 'ab1',
    suite: 'analystbench',
    blockId: block.id,
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
  st.close();
});
after(async () => {
  await srv.close();
  rmSync(dir, { recursive: true, force: true });
});

const io = () => {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: {
      out: (s: string) => out.push(s),
      err: (s: string) => err.push(s),
      env: { ...process.env, JUDGE_KEY: 'sk-test' },
      cwd: process.cwd(),
    },
  };
};

describe('cli score --judge llm (AnalystBench-style run)', () => {
  it('scores checklist, hallucination and figures through the LLM judge, and caches every judgement in the store', async () => {
    const args = [
      'score',
      '--store',
      storeFile,
      '--run',
      'ab1',
      '--judge',
      'llm',
      '--judge-model',
      'judge-m',
      '--judge-base-url',
      srv.baseUrl,
      '--judge-api-key-env',
      'JUDGE_KEY',
      '--json',
    ];
    const t = io();
    assert.equal(await main(args, t.io), 0, t.err.join(''));
    const r = (
      JSON.parse(t.out.join('')) as {
        runs: Array<{ summary: Record<string, number>; options: Record<string, unknown>; judge: string }>;
      }
    ).runs[0]!;
    assert.equal(r.judge, 'llm:judge-m');
    assert.equal(r.summary.checklistPercent, 80, '2 criteria × 4 → 20 · 4');
    assert.equal(r.summary.hallucinationRate, 0.5, '1 of 2 claims unsupported');
    assert.equal(r.summary.figureCoveragePercent, 50, 'by-sex figure matched, age-group figure not');
    assert.equal(r.summary.figureQualityPercent, 80);
    assert.equal(r.options.lexical_fallback, true, 'options are echoed in snake_case, as typed');
    assert.equal(r.options.checklist_normalisation, 'mean20');
    const calls = srv.requests.length;
    assert.equal(calls, 2 + 1 + 2 + 1, 'two criteria, one extraction, two claims, one figure pair');
    assert.ok(srv.requests.every((q) => q.body.temperature === 0 && q.authorization === 'Bearer sk-test'));
    const t2 = io();
    assert.equal(await main(args, t2.io), 0);
    assert.equal(srv.requests.length, calls, 're-scoring is served from the judgement cache');
    const st = openStore(storeFile);
    const js = await judgementStoreOf(st).listForRun('ab1');
    st.close();
    assert.equal(js.length, 6);
    assert.ok(js.every((j) => j.judgeId === 'llm:judge-m' && j.promptHash && j.raw && j.verdict && j.at));
  });

  it('--judge human leaves everything pending and says so', async () => {
    const t = io();
    assert.equal(
      await main(['score', '--store', storeFile, '--run', 'ab1', '--judge', 'human', '--no-save'], t.io),
      0,
      t.err.join(''),
    );
    assert.match(t.out.join(''), /checklist —%.*\(\d+ pending\)/);
  });
});
