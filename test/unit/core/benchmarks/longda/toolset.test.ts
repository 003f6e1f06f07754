import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildLongdaPrompt,
  createLongdaToolSet,
  parseAnswerArg,
} from '../../../../../src/core/benchmarks/longda/toolset.ts';
import { ToolRegistry } from '../../../../../src/core/agent/registry.ts';
import type { RunState, ToolContext } from '../../../../../src/core/agent/types.ts';
import { longdaRunState } from '../../../../../src/core/benchmarks/longda/run-state.ts';
import { openDocIndex } from '../../../../../src/core/docs/index.ts';
import type { DocIndexLease } from '../../../../../src/core/docs/shared-build.ts';
import { loadSuite } from '../../../../../src/core/benchmarks/index.ts';
import { nullLogger } from '../../../../../src/core/util/log.ts';
import { repoRoot, sharedData } from '../../../../helpers/shared.ts';

const UNSEEN = join(repoRoot, 'test', 'fixtures', 'suites', 'longda-unseen');

function ctxFor(block: unknown, prompt: string): ToolContext {
  const state: RunState = { extra: {}, benchmark: {} };
  return {
    runId: 'r',
    stepIndex: 3,
    workspace: '/tmp',
    block,
    taskPrompt: prompt,
    state,
    signal: new AbortController().signal,
    log: nullLogger,
    kernel: () => Promise.reject(new Error('no kernel')),
    execute: () => Promise.reject(new Error('no kernel')),
  };
}

const inv = (reg: ToolRegistry, ctx: ToolContext, name: string, args: unknown) =>
  reg.invoke({ id: 'c', type: 'function', function: { name, arguments: JSON.stringify(args) } }, ctx);

test('longda prompt: survey, Question ID lines, structures, NA. for empty info, workspace-relative files', async () => {
  const suite = await loadSuite('longda', sharedData('longda', 'benchmark'));
  const block = suite.blocks.find((b) => b.id === 'NHANES_NCHS_Data_Brief_No._508')!;
  const p = buildLongdaPrompt(block);
  assert.match(p, /^Survey: NHANES$/m);
  assert.match(
    p,
    /^Question ID: NHANES_NCHS Data Brief No\. 508_q1\nQ1: What was the overall prevalence of obesity among adults age 20 and older\?\nExpected Answer Structure: single_number\nAdditional Info: Body mass index/m,
  );
  assert.match(
    p,
    /^Question ID: NHANES_NCHS Data Brief No\. 508_q2\nQ2: What were the obesity prevalences for men and women\?\nExpected Answer Structure: \[men, women\]\nAdditional Info: NA\.$/m,
  );
  assert.equal((p.match(/^Question ID: /gm) ?? []).length, 9);
  const dataPart = p.slice(p.indexOf('Available data files:'), p.indexOf('Available documentation files:'));
  assert.match(dataPart, /^data\/Examination\/BMX_L\.xpt$/m);
  assert.match(dataPart, /^data\/Demographics\/DEMO_L\.xpt$/m);
  assert.match(p.slice(p.indexOf('Available documentation files:')), /^docs\//m);
  assert.ok(!p.includes('40.3'), 'ground truth leaked into the prompt');
  assert.ok(!p.includes(sharedData()), 'absolute paths in the prompt');
});

test('longda tools: prompt(q_id), notes, answer validation, save_code, final_answer', async () => {
  const suite = await loadSuite('longda', UNSEEN);
  const block = suite.blocks.find((b) => b.longda?.survey === 'ACS')!;
  const ts = createLongdaToolSet(block);
  const reg = new ToolRegistry(ts.tools);
  assert.deepEqual(reg.names(), [
    'prompt',
    'read_doc',
    'search_doc',
    'retriever',
    'notes',
    'answer',
    'save_code',
    'python',
    'final_answer',
  ]);
  const ctx = ctxFor(block, ts.buildBlockPrompt(block));
  const q1 = 'ACS_ACS Brief: Commuting 2030_q1';
  const q2 = 'ACS_ACS Brief: Commuting 2030_q2';

  const one = await inv(reg, ctx, 'prompt', { q_id: q2 });
  assert.equal(
    one.observation,
    `Question ID: ${q2}\nQ2: What were the mean travel times, in minutes, for the two regions?\nExpected Answer Structure: [north, south]\nAdditional Info: NA.`,
  );
  assert.ok((await inv(reg, ctx, 'prompt', {})).observation.includes(`Question ID: ${q1}`));
  assert.match((await inv(reg, ctx, 'prompt', { q_id: 'x' })).observation, /no question with ID 'x'/);

  assert.equal(
    (await inv(reg, ctx, 'notes', { action: 'add', content: 'weight column is weight' })).observation,
    'Note 1 added.',
  );
  await inv(reg, ctx, 'notes', { action: 'add', content: 'x'.repeat(150) });
  assert.match(
    (await inv(reg, ctx, 'notes', { action: 'list' })).observation,
    /^1\. weight column is weight\n2\. x{100}…$/,
  );
  assert.match(
    (await inv(reg, ctx, 'notes', { action: 'update', index: 3, content: 'y' })).observation,
    /index must be between 1 and 2/,
  );
  await inv(reg, ctx, 'notes', { action: 'update', index: 2, content: 'short' });
  assert.equal((await inv(reg, ctx, 'notes', { action: 'view', index: 2 })).observation, '2. short');
  assert.match(
    (await inv(reg, ctx, 'notes', { action: 'bogus' })).observation,
    /must be one of "add", "view", "update", "list", "clear"/,
  );

  // answers: q_id must belong to the block, list length must match the structure, strings are parsed
  assert.match(
    (await inv(reg, ctx, 'answer', { action: 'add', q_id: 'NHANES_x_q1', answer: 1 })).observation,
    /not a question of this block/,
  );
  assert.match(
    (await inv(reg, ctx, 'answer', { action: 'add', q_id: q2, answer: [1, 2, 3] })).observation,
    /expects a list of 2 numbers \[north, south\], got a list of 3/,
  );
  assert.match(
    (await inv(reg, ctx, 'answer', { action: 'add', q_id: q2, answer: 27.4 })).observation,
    /got a single number/,
  );
  assert.match(
    (await inv(reg, ctx, 'answer', { action: 'add', q_id: q1, answer: 'about five' })).observation,
    /not a number or a list of numbers/,
  );
  assert.match(
    (await inv(reg, ctx, 'answer', { action: 'add', q_id: q1, answer: true })).observation,
    /wrong arguments for 'answer': answer: expected number or array or string, got boolean/,
  );
  assert.match(
    (await inv(reg, ctx, 'answer', { action: 'update', q_id: q1, answer: 5 })).observation,
    /no answer to update/,
  );
  assert.match(
    (await inv(reg, ctx, 'answer', { action: 'add', q_id: q1, answer: '5.1' })).observation,
    /recorded: 5\.1\. 1 of 2/,
  );
  assert.match(
    (await inv(reg, ctx, 'answer', { action: 'add', q_id: q2, answer: '[27.4, 24.9]' })).observation,
    /recorded: \[27\.4, 24\.9\]/,
  );
  assert.match(
    (await inv(reg, ctx, 'answer', { action: 'update', q_id: q1, answer: [5.2] })).observation,
    /updated \(was 5\.1\): 5\.2/,
  );
  assert.equal((await inv(reg, ctx, 'answer', { action: 'view', q_id: q1 })).observation, `${q1}: 5.2`);
  assert.equal(
    (await inv(reg, ctx, 'answer', { action: 'list' })).observation,
    `2 of 2 answered:\n${q1}: 5.2\n${q2}: [27.4, 24.9]`,
  );
  assert.deepEqual(longdaRunState(ctx.state).answers.get(q2), {
    answer: [27.4, 24.9],
    raw: '[27.4, 24.9]',
    stepIndex: 3,
  });

  await inv(reg, ctx, 'save_code', { code: 'a\nb' });
  assert.equal(longdaRunState(ctx.state).savedCode, 'a\nb');
  const fin = await inv(reg, ctx, 'final_answer', {});
  assert.equal(fin.finish, true);
  assert.match(fin.observation, /2 of 2 questions answered/);

  // LongTA enabled_tools: search_doc can be left out, answer cannot
  assert.deepEqual(
    createLongdaToolSet(block, { disabledTools: ['search_doc', 'answer'] })
      .tools.map((t) => t.name)
      .includes('answer'),
    true,
  );
  assert.equal(
    createLongdaToolSet(block, { disabledTools: ['search_doc'] }).tools.some((t) => t.name === 'search_doc'),
    false,
  );
});

test('longda doc tools go through the documentation index, restricted to the block docs', async () => {
  const suite = await loadSuite('longda', UNSEEN);
  const block = suite.blocks.find((b) => b.longda?.survey === 'NHANES1718')!;
  const cache = mkdtempSync(join(tmpdir(), 'loupe-docs-'));
  try {
    const first = block.visible.docs[0]!;
    const root = first.path.slice(0, first.path.length - first.rel.length);
    const ts = createLongdaToolSet(block, {
      docs: async () => {
        const d = await openDocIndex({ root, files: block.visible.docs.map((x) => x.rel), cacheDir: cache });
        await d.build();
        return d;
      },
    });
    const reg = new ToolRegistry(ts.tools);
    const ctx = ctxFor(block, ts.buildBlockPrompt(block));
    const doc = block.visible.docs.find((d) => d.rel.endsWith('BMX_J.md'))!.rel;
    const read = await inv(reg, ctx, 'read_doc', { doc_path: doc });
    assert.match(read.observation, new RegExp(`^\\[${doc.replace(/[.]/g, '\\.')}\\] Lines available: 1-\\d+`));
    const lines = await inv(reg, ctx, 'read_doc', { doc_path: doc, range_str: '1-2' });
    assert.match(lines.observation, /Line 1: /);
    const search = await inv(reg, ctx, 'search_doc', { keyword: 'BMXBMI' });
    assert.match(search.observation, /Found \d+ match/);
    const retr = await inv(reg, ctx, 'retriever', { query: 'body mass index', max_matches: 2 });
    assert.ok(retr.observation.length > 0 && !retr.isError, retr.observation);
    const outside = await inv(reg, ctx, 'read_doc', { doc_path: '../ACS/docs/readme.txt' });
    assert.ok(!/Synthetic ACS extract/.test(outside.observation), outside.observation);
    const noDocs = new ToolRegistry(createLongdaToolSet(block).tools);
    assert.match(
      (await inv(noDocs, ctx, 'read_doc', { doc_path: doc })).observation,
      /documentation index is not available/,
    );
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});

test('longda parseAnswerArg: numbers, lists, literal strings', () => {
  assert.deepEqual(parseAnswerArg(3), { ok: true, value: 3, raw: '3' });
  assert.deepEqual(parseAnswerArg('(1, 2.5)'), { ok: true, value: [1, 2.5], raw: '(1, 2.5)' });
  assert.equal(parseAnswerArg([]).ok, false);
  assert.equal(parseAnswerArg([1, 'a']).ok, false);
  assert.equal(parseAnswerArg(Number.NaN).ok, false);
});

test('longda findVariables option: off by default; on, find_variables names variables and codebook pages from the catalog', async () => {
  const suite = await loadSuite('longda', sharedData('longda', 'benchmark'));
  const block = suite.blocks.find((b) => b.id === 'NHANES_NCHS_Data_Brief_No._508')!;
  assert.ok(!new ToolRegistry(createLongdaToolSet(block).tools).names().includes('find_variables'));
  const cache = mkdtempSync(join(tmpdir(), 'loupe-findvars-'));
  try {
    const first = block.visible.docs[0]!;
    const root = first.path.slice(0, first.path.length - first.rel.length);
    const ts = createLongdaToolSet(block, {
      findVariables: true,
      docs: async () => {
        const d = await openDocIndex({ root, files: block.visible.docs.map((x) => x.rel), cacheDir: cache });
        await d.build();
        return d;
      },
    });
    const reg = new ToolRegistry(ts.tools);
    assert.deepEqual(reg.names(), [
      'prompt',
      'read_doc',
      'search_doc',
      'retriever',
      'find_variables',
      'notes',
      'answer',
      'save_code',
      'python',
      'final_answer',
    ]);
    const ctx = ctxFor(block, ts.buildBlockPrompt(block));
    const r = await inv(reg, ctx, 'find_variables', { question: 'average body mass index of adults by sex' });
    assert.ok(!r.isError, r.observation);
    assert.match(
      r.observation,
      /^- BMXBMI \(BMX_L\): Body Mass Index \(kg\/m\*\*2\) — docs\/Examination\/BMX_L\.pdf Page \d+ \[measure\]$/m,
    );
    assert.match(r.observation, /^- RIAGENDR \(DEMO_L\): Gender — docs\/Demographics\/DEMO_L\.pdf Page \d+ \[sex\]$/m);
    // the measure's file (body measures) and the population's (demographics) lead, in either order
    assert.match(
      r.observation,
      /Documentation files to read:\n1\. docs\/(Demographics\/DEMO_L|Examination\/BMX_L)\.pdf\n2\. docs\/(Demographics\/DEMO_L|Examination\/BMX_L)\.pdf\n/,
    );
    assert.match((await inv(reg, ctx, 'find_variables', { question: '  ' })).observation, /needs a question/);
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});

test('longda doc index (issue 23): the build starts when the run starts, and each doc tool waits only for what it reads', async () => {
  const suite = await loadSuite('longda', UNSEEN);
  const block = suite.blocks.find((b) => b.longda?.survey === 'NHANES1718')!;
  const cache = mkdtempSync(join(tmpdir(), 'loupe-docs-'));
  try {
    const first = block.visible.docs[0]!;
    const root = first.path.slice(0, first.path.length - first.rel.length);
    const real = await openDocIndex({ root, files: block.visible.docs.map((x) => x.rel), cacheDir: cache });
    await real.build();
    const calls: string[] = [];
    let leases = 0;
    let released = 0;
    const docIndex = (): DocIndexLease => {
      leases++;
      return {
        file: async (p) => (calls.push(`file ${p}`), real),
        extracted: async () => (calls.push('extracted'), real),
        built: async () => (calls.push('built'), real),
        progress: () => ({ ready: 1, total: block.visible.docs.length }),
        release: () => void released++,
      };
    };
    const ts = createLongdaToolSet(block, { docIndex });
    assert.ok(ts.prepare, 'a tool set with doc tools prepares its documentation index');
    const ac = new AbortController();
    const release = ts.prepare({ signal: ac.signal });
    assert.equal(leases, 1, 'the build was asked for when the run started, before any tool call');
    const reg = new ToolRegistry(ts.tools);
    const ctx = ctxFor(block, ts.buildBlockPrompt(block));
    const doc = block.visible.docs.find((d) => d.rel.endsWith('BMX_J.md'))!.rel;
    const one = await inv(reg, ctx, 'search_doc', { keyword: 'BMXBMI', doc_path: doc });
    assert.match(one.observation, /Found \d+ match/);
    assert.deepEqual((one.data as { index: unknown }).index, {
      waitedFor: `file ${doc}`,
      waitedMs: (one.data as { index: { waitedMs: number } }).index.waitedMs,
      filesReady: 1,
      filesTotal: block.visible.docs.length,
    });
    await inv(reg, ctx, 'read_doc', { doc_path: doc });
    await inv(reg, ctx, 'search_doc', { keyword: 'BMXBMI' });
    await inv(reg, ctx, 'retriever', { query: 'body mass index' });
    assert.deepEqual(calls, [`file ${doc}`, `file ${doc}`, 'extracted', 'built']);
    assert.equal(leases, 1, 'the tools use the lease taken at the start');
    ac.abort();
    assert.equal(released, 1, 'a cancelled run gives its lease back at once');
    release();
    assert.equal(released, 1);
    // no doc tools: nothing to build
    const noDocs = createLongdaToolSet(block, { docIndex, disabledTools: ['read_doc', 'search_doc', 'retriever'] });
    assert.equal(noDocs.prepare, undefined);
    real.close();
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
});

test('longda doc index (issue 23): a failed build is reported by the doc tool call and tried again by the next', async () => {
  const suite = await loadSuite('longda', UNSEEN);
  const block = suite.blocks.find((b) => b.longda?.survey === 'NHANES1718')!;
  let leases = 0;
  const docIndex = (): DocIndexLease => {
    leases++;
    const fail = () => Promise.reject(new Error('docs root does not exist'));
    return { file: fail, extracted: fail, built: fail, progress: () => ({ ready: 0, total: 1 }), release: () => {} };
  };
  const ts = createLongdaToolSet(block, { docIndex });
  const release = ts.prepare!({ signal: new AbortController().signal });
  const reg = new ToolRegistry(ts.tools);
  const ctx = ctxFor(block, ts.buildBlockPrompt(block));
  const r = await inv(reg, ctx, 'search_doc', { keyword: 'x' });
  assert.equal(r.isError, true);
  assert.match(r.observation, /^Error: the documentation index could not be opened: docs root does not exist/);
  await inv(reg, ctx, 'search_doc', { keyword: 'x' });
  assert.equal(leases, 2);
  release();
});
