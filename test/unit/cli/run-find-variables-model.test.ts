/**
 * Issue 25 through the CLI on the real NHANES block of NCHS Data Brief 508 (LongDA, $LOUPE_SHARED) with the scripted
 * OpenAI-compatible server: the tool options `findVariables=true findVariablesDecompose=run-model` give the agent
 * `find_variables`, whose question the run's own model breaks into concepts first (one more request, without tools);
 * the options are recorded with the run and every score says which retrieval the agent had. A run without a model of
 * Loupe's (the reference agent, an MCP client) refuses the option, naming it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../../src/cli/main.ts';
import { openStore } from '../../../src/core/store/run-store.ts';
import { DECOMPOSE_SYSTEM_PROMPT } from '../../../src/core/docs/question.ts';
import { computeCost } from '../../../src/core/agent/llm.ts';
import { call, startScriptedLlm, type Turn } from '../../helpers/scripted-llm.ts';
import { sharedData } from '../../helpers/shared.ts';

const ROOT = sharedData('longda', 'benchmark');
const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const QUESTION = 'What was the prevalence of anemia among adults, by sex?';

function io(cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s), env: { ...process.env }, cwd },
  };
}

test(
  'loupe run --tool-option findVariablesDecompose=run-model: the run model decomposes find_variables questions; recorded and echoed in scores; refused without a model',
  { timeout: 240_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-fv-model-'));
    const store = join(dir, 'runs.sqlite');
    const agent: Turn[] = [
      { content: 'Which variables?', toolCalls: [call('find_variables', { question: QUESTION })] },
      { content: 'Done.', toolCalls: [call('final_answer', { summary: 'looked up variables' })] },
    ];
    // the decomposition is a conversation of its own: system prompt DECOMPOSE_SYSTEM_PROMPT, the question as the user message
    const llm = await startScriptedLlm({
      scriptFor: (first) =>
        first === QUESTION
          ? [
              {
                content:
                  '{"population": ["adults"], "measures": ["hemoglobin"], "groupings": ["sex"], "design": ["examination weight"]}',
              },
            ]
          : agent,
    });
    try {
      const opts = ['--tool-option', 'findVariables=true', '--tool-option', 'findVariablesDecompose=run-model'];
      const base = ['--suite', 'longda', '--root', ROOT, '--block', BLOCK, '--store', store, '--json'];
      let t = io(dir);
      assert.equal(
        await main(['run', ...base, '--agent', 'llm', '--model', 'scripted', '--base-url', llm.baseUrl, ...opts], t.io),
        0,
        t.err.join(''),
      );
      const runId = (JSON.parse(t.out.join('').trim()) as { runId: string }).runId;
      const decomposition = llm.requests.filter((r) => r.body.messages[0]?.content === DECOMPOSE_SYSTEM_PROMPT);
      assert.equal(decomposition.length, 1);
      assert.equal(decomposition[0]!.body.messages[1]!.content, QUESTION);
      assert.equal(decomposition[0]!.body.tools?.length ?? 0, 0, 'the decomposition offers no tools');
      const s = openStore(store);
      try {
        const run = (await s.getRun(runId))!;
        assert.deepEqual(run.params.toolSetOptions, { findVariables: 'true', findVariablesDecompose: 'run-model' });
        assert.deepEqual(
          run.params.docsText,
          { pdfExtractor: 'pdfium', extractorVersion: 4 },
          'the run records which extractor made the text its doc tools showed',
        );
        const steps = await s.getSteps(runId);
        const obs = steps[0]!.toolCalls[0]!.observation;
        assert.match(obs, /^Sub-queries from the model's decomposition: hemoglobin; adults$/m);
        assert.match(obs, /^- LBXHGB \(CBC_L\): Hemoglobin/m);
      } finally {
        await s.close();
      }
      t = io(dir);
      assert.equal(await main(['score', '--store', store, '--all', '--json'], t.io), 0, t.err.join(''));
      const sc = JSON.parse(t.out.join('')) as { runs: Array<{ runId: string; toolOptions: Record<string, unknown> }> };
      assert.deepEqual(sc.runs.find((r) => r.runId === runId)!.toolOptions, {
        findVariables: true,
        findVariablesDecompose: 'run-model',
      });
      t = io(dir);
      assert.equal(await main(['score', '--store', store, '--all'], t.io), 0, t.err.join(''));
      assert.match(
        t.out.join(''),
        /^tool options of runs \(longda: findVariables=true findVariablesDecompose=run-model\)$/m,
      );

      // no model of Loupe's: refused before anything runs, naming the option
      t = io(dir);
      assert.equal(await main(['run', ...base, '--agent', 'reference', ...opts], t.io), 1);
      assert.match(
        t.err.join(''),
        /tool option findVariablesDecompose: 'run-model' asks the run's own model, and this run has none/,
      );
      t = io(dir);
      assert.equal(
        await main(
          [
            'run',
            ...base,
            '--agent',
            'llm',
            '--model',
            'scripted',
            '--base-url',
            llm.baseUrl,
            '--tool-option',
            'findVariablesDecompose=run-model',
          ],
          t.io,
        ),
        1,
      );
      assert.match(
        t.err.join(''),
        /tool option findVariablesDecompose: 'run-model' decomposes the questions of the find_variables tool: turn the tool on with findVariables=true/,
      );
      t = io(dir);
      assert.equal(
        await main(['mcp', '--suite', 'longda', '--root', ROOT, '--block', BLOCK, '--store', store, ...opts], t.io),
        1,
      );
      assert.match(
        t.err.join(''),
        /tool option findVariablesDecompose: 'run-model' asks the run's own model, and this run has none/,
      );
      const s2 = openStore(store);
      try {
        assert.equal((await s2.listRuns()).length, 1, 'the refused runs recorded nothing');
      } finally {
        await s2.close();
      }
    } finally {
      await llm.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'find_variables with findVariablesDecompose=run-model: the decomposition call counts in the step, the run totals and the token and cost budgets',
  { timeout: 240_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-fv-usage-'));
    const store = join(dir, 'runs.sqlite');
    // what the server reports for each call; expectations below are sums of these
    const own0 = { prompt_tokens: 100, completion_tokens: 10 };
    const own1 = { prompt_tokens: 200, completion_tokens: 20 };
    const dec = { prompt_tokens: 700, completion_tokens: 50 };
    const prices = { pricePerMillionInput: 2, pricePerMillionOutput: 10 };
    const u = (x: { prompt_tokens: number; completion_tokens: number }) => ({
      input: x.prompt_tokens,
      output: x.completion_tokens,
      cached: 0,
    });
    const agent: Turn[] = [
      { content: 'Which variables?', toolCalls: [call('find_variables', { question: QUESTION })], usage: own0 },
      { content: 'Done.', toolCalls: [call('final_answer', { summary: 'looked up variables' })], usage: own1 },
    ];
    const llm = await startScriptedLlm({
      scriptFor: (first) =>
        first === QUESTION
          ? [
              {
                content: '{"population": ["adults"], "measures": ["hemoglobin"], "groupings": ["sex"], "design": []}',
                usage: dec,
              },
            ]
          : agent,
    });
    const base = [
      '--suite',
      'longda',
      '--root',
      ROOT,
      '--block',
      BLOCK,
      '--store',
      store,
      '--json',
      '--agent',
      'llm',
      '--model',
      'scripted',
      '--base-url',
      llm.baseUrl,
      '--price-in',
      String(prices.pricePerMillionInput),
      '--price-out',
      String(prices.pricePerMillionOutput),
      '--tool-option',
      'findVariables=true',
      '--tool-option',
      'findVariablesDecompose=run-model',
    ];
    const run = async (extra: string[]) => {
      const t = io(dir);
      assert.equal(await main(['run', ...base, ...extra], t.io), 0, t.err.join(''));
      return JSON.parse(t.out.join('').trim()) as {
        runId: string;
        status: string;
        steps: number;
        tokens: { input: number; output: number } | null;
      };
    };
    const cost = (x: { prompt_tokens: number; completion_tokens: number }) => computeCost(u(x), prices)!;
    try {
      const r = await run([]);
      assert.equal(r.status, 'finished');
      const s = openStore(store);
      try {
        const steps = await s.getSteps(r.runId);
        const fv = steps[0]!.toolCalls[0]!;
        assert.equal(fv.name, 'find_variables');
        assert.deepEqual(fv.modelUse, { calls: 1, usage: u(dec), costUsd: cost(dec) });
        assert.deepEqual(steps[0]!.usage, {
          input: own0.prompt_tokens + dec.prompt_tokens,
          output: own0.completion_tokens + dec.completion_tokens,
          cached: 0,
        });
        assert.ok(Math.abs(steps[0]!.costUsd! - (cost(own0) + cost(dec))) < 1e-12, `step cost ${steps[0]!.costUsd}`);
        assert.equal(steps[1]!.toolCalls[0]!.modelUse, undefined, 'final_answer called no model');
        assert.deepEqual(steps[1]!.usage, u(own1));
        const rec = (await s.getRun(r.runId))!;
        const total = {
          input: own0.prompt_tokens + dec.prompt_tokens + own1.prompt_tokens,
          output: own0.completion_tokens + dec.completion_tokens + own1.completion_tokens,
        };
        assert.deepEqual(rec.tokens && { input: rec.tokens.input, output: rec.tokens.output }, total);
        assert.deepEqual(r.tokens, total, 'loupe run --json reports the totals with the decomposition');
        assert.ok(Math.abs(rec.costUsd! - (cost(own0) + cost(dec) + cost(own1))) < 1e-12, `run cost ${rec.costUsd}`);
      } finally {
        await s.close();
      }

      // A token budget the agent's own first call stays under but its find_variables decomposition crosses: the run stops
      // before the second model call, as it does when the agent's own calls reach the budget.
      const ownFirst = own0.prompt_tokens + own0.completion_tokens;
      const withDec = ownFirst + dec.prompt_tokens + dec.completion_tokens;
      const maxTokens = Math.floor((ownFirst + withDec) / 2);
      const requestsBefore = llm.requests.length;
      const b = await run(['--max-total-tokens', String(maxTokens)]);
      assert.equal(b.status, 'budget_exhausted');
      assert.equal(b.steps, 1);
      assert.equal(
        llm.requests.length - requestsBefore,
        2,
        'the agent call and the decomposition; no second agent call',
      );
      const s2 = openStore(store);
      try {
        assert.equal((await s2.getRun(b.runId))!.statusReason, `token budget (${maxTokens}) reached`);
      } finally {
        await s2.close();
      }
      // the same with a cost budget
      const maxCost = (cost(own0) + cost(own0) + cost(dec)) / 2;
      const c = await run(['--max-cost', String(maxCost)]);
      assert.equal(c.status, 'budget_exhausted');
      assert.equal(c.steps, 1);
      const s3 = openStore(store);
      try {
        assert.equal((await s3.getRun(c.runId))!.statusReason, `cost budget ($${maxCost}) reached`);
      } finally {
        await s3.close();
      }
    } finally {
      await llm.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
