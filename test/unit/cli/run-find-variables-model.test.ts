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
import { call, startScriptedLlm, type Turn } from '../../helpers/scripted-llm.ts';
import { sharedData } from '../../helpers/shared.ts';

const ROOT = sharedData('longda', 'benchmark');
const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const QUESTION = 'What was the prevalence of anemia among adults, by sex?';

function io(cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s), env: { ...process.env }, cwd } };
}

test('loupe run --tool-option findVariablesDecompose=run-model: the run model decomposes find_variables questions; recorded and echoed in scores; refused without a model', { timeout: 240_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loupe-fv-model-'));
  const store = join(dir, 'runs.sqlite');
  const agent: Turn[] = [
    { content: 'Which variables?', toolCalls: [call('find_variables', { question: QUESTION })] },
    { content: 'Done.', toolCalls: [call('final_answer', { summary: 'looked up variables' })] },
  ];
  // the decomposition is a conversation of its own: system prompt DECOMPOSE_SYSTEM_PROMPT, the question as the user message
  const llm = await startScriptedLlm({
    scriptFor: (first) => (first === QUESTION ? [{ content: '{"population": ["adults"], "measures": ["hemoglobin"], "groupings": ["sex"], "design": ["examination weight"]}' }] : agent),
  });
  try {
    const opts = ['--tool-option', 'findVariables=true', '--tool-option', 'findVariablesDecompose=run-model'];
    const base = ['--suite', 'longda', '--root', ROOT, '--block', BLOCK, '--store', store, '--json'];
    let t = io(dir);
    assert.equal(await main(['run', ...base, '--agent', 'llm', '--model', 'scripted', '--base-url', llm.baseUrl, ...opts], t.io), 0, t.err.join(''));
    const runId = (JSON.parse(t.out.join('').trim()) as { runId: string }).runId;
    const decomposition = llm.requests.filter((r) => r.body.messages[0]?.content === DECOMPOSE_SYSTEM_PROMPT);
    assert.equal(decomposition.length, 1);
    assert.equal(decomposition[0]!.body.messages[1]!.content, QUESTION);
    assert.equal(decomposition[0]!.body.tools?.length ?? 0, 0, 'the decomposition offers no tools');
    const s = openStore(store);
    try {
      const run = (await s.getRun(runId))!;
      assert.deepEqual(run.params.toolSetOptions, { findVariables: 'true', findVariablesDecompose: 'run-model' });
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
    assert.deepEqual(sc.runs.find((r) => r.runId === runId)!.toolOptions, { findVariables: true, findVariablesDecompose: 'run-model' });
    t = io(dir);
    assert.equal(await main(['score', '--store', store, '--all'], t.io), 0, t.err.join(''));
    assert.match(t.out.join(''), /^tool options of runs \(longda: findVariables=true findVariablesDecompose=run-model\)$/m);

    // no model of Loupe's: refused before anything runs, naming the option
    t = io(dir);
    assert.equal(await main(['run', ...base, '--agent', 'reference', ...opts], t.io), 1);
    assert.match(t.err.join(''), /tool option findVariablesDecompose: 'run-model' asks the run's own model, and this run has none/);
    t = io(dir);
    assert.equal(await main(['run', ...base, '--agent', 'llm', '--model', 'scripted', '--base-url', llm.baseUrl, '--tool-option', 'findVariablesDecompose=run-model'], t.io), 1);
    assert.match(t.err.join(''), /tool option findVariablesDecompose: 'run-model' decomposes the questions of the find_variables tool: turn the tool on with findVariables=true/);
    t = io(dir);
    assert.equal(await main(['mcp', '--suite', 'longda', '--root', ROOT, '--block', BLOCK, '--store', store, ...opts], t.io), 1);
    assert.match(t.err.join(''), /tool option findVariablesDecompose: 'run-model' asks the run's own model, and this run has none/);
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
});
