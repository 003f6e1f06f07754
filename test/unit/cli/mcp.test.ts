/**
 * `loupe mcp` (issue 24) with the MCP SDK's own client, over stdio and streamable HTTP, on the real NHANES block of
 * NCHS Data Brief 508 (LongDA, $LOUPE_SHARED): the tools are the block's tool set as Loupe's agent sees it, the
 * prompt its task, the resources its visible documentation; every call is a recorded step of a run whose agent is
 * the client; the finishing tool ends and scores it with the same answers and score as `loupe run` with a scripted
 * model; hidden files stay out of reach; the HTTP endpoint refuses requests without the token, with a foreign Origin
 * or Host, and is not reachable off loopback; a second server on a driven run is refused by the run lease.
 * Spawns the built CLI (`npm run build` first).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { main } from '../../../src/cli/main.ts';
import { loadSuite } from '../../../src/core/benchmarks/index.ts';
import { blockToolSet } from '../../../src/core/runs/runner.ts';
import { interveneStoredRun } from '../../../src/core/runs/intervene.ts';
import { openStore } from '../../../src/core/store/run-store.ts';
import { ddrState, readDdrResult } from '../../../src/core/benchmarks/ddr/toolset.ts';
import { mimicSubsetDb } from '../../helpers/toolsets.ts';
import { call, startScriptedLlm, type ChatRequestBody, type Turn } from '../../helpers/scripted-llm.ts';
import { repoRoot, sharedData } from '../../helpers/shared.ts';

const ROOT = sharedData('longda', 'benchmark');
const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const Q = (i: number) => `NHANES_NCHS Data Brief No. 508_q${i}`;
const CLI = join(repoRoot, 'dist', 'cli.js');

/** The analysis an agent "writes": weighted obesity prevalence from DEMO_L + BMX_L (as in run.test.ts). */
const ANALYSIS = `
import json
import numpy as np
import pandas as pd
demo = pd.read_sas('data/Demographics/DEMO_L.xpt')
bmx = pd.read_sas('data/Examination/BMX_L.xpt')
d = demo.merge(bmx, on='SEQN')
d = d[(d.RIDAGEYR >= 20) & (d.RIDEXPRG != 1) & d.BMXBMI.notna()]
ob = d.BMXBMI >= 30
def p(mask):
    return round(100 * float(np.average(ob[mask], weights=d.WTMEC2YR[mask])), 1)
res = {'overall': p(d.index == d.index), 'sex': [p(d.RIAGENDR == 1), p(d.RIAGENDR == 2)],
       'age': [p(d.RIDAGEYR < 40), p((d.RIDAGEYR >= 40) & (d.RIDAGEYR < 60)), p(d.RIDAGEYR >= 60)]}
print(json.dumps(res))
`;

const PROBE = `
import os
try:
    open(${JSON.stringify(join(ROOT, 'benchmark.csv'))}).read(10)
    print('hidden: READABLE')
except Exception as e:
    print('hidden:', type(e).__name__)
print('benchmark root visible:', os.path.exists(${JSON.stringify(ROOT)}))
`;

function text(r: unknown): string {
  const c = (r as { content: { type: string; text?: string }[] }).content;
  return c.map((x) => x.text ?? '').join('');
}

function needBuild(): void {
  assert.ok(existsSync(CLI), `${CLI} is missing: run npm run build first`);
}

function io(cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s), env: { ...process.env }, cwd },
  };
}

/** Runs the agent's part of the block through an MCP client: the calls a scripted model makes in `loupe run` below. */
async function solve(c: Client): Promise<{ answers: string[] }> {
  const res = JSON.parse(
    text(await c.callTool({ name: 'python', arguments: { code: ANALYSIS } }))
      .trim()
      .split('\n')
      .pop()!,
  ) as { overall: number; sex: number[]; age: number[] };
  const answers = [
    text(await c.callTool({ name: 'answer', arguments: { action: 'add', q_id: Q(1), answer: res.overall } })),
    text(await c.callTool({ name: 'answer', arguments: { action: 'add', q_id: Q(2), answer: res.sex } })),
    text(await c.callTool({ name: 'answer', arguments: { action: 'add', q_id: Q(3), answer: res.age } })),
  ];
  return { answers };
}

test(
  "loupe mcp over stdio: the SDK client sees the block's tools, prompt and docs, solves NHANES DB508; steps, answers and score equal loupe run",
  { timeout: 240_000 },
  async () => {
    needBuild();
    const dir = mkdtempSync(join(tmpdir(), 'loupe-mcp-'));
    const store = join(dir, 'runs.sqlite');
    try {
      const suite = await loadSuite('longda', ROOT);
      const block = suite.blocks.find((b) => b.id === BLOCK)!;
      const ts = blockToolSet({ block, agent: 'llm' });
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp', '--suite', 'longda', '--root', ROOT, '--block', BLOCK, '--store', store],
        cwd: dir,
        stderr: 'pipe',
      });
      const stderr: string[] = [];
      transport.stderr?.on('data', (b: Buffer) => stderr.push(b.toString()));
      const c = new Client({ name: 'loupe-test-agent', version: '1.0' });
      await c.connect(transport);

      // tools: exactly the tool set Loupe's agent gets (names, descriptions, schemas); LongDA has no finish variant
      const tools = (await c.listTools()).tools;
      assert.deepEqual(
        tools.map((t) => t.name),
        ts.tools.map((t) => t.name),
      );
      for (const t of ts.tools) {
        const m = tools.find((x) => x.name === t.name)!;
        assert.equal(m.description, t.description);
        assert.deepEqual(m.inputSchema, { ...t.parameters, type: 'object' });
      }
      // prompt: the block's task; instructions: the system prompt
      const prompt = await c.getPrompt({ name: 'task' });
      assert.equal(prompt.messages.length, 1);
      assert.ok(text({ content: [prompt.messages[0]!.content] }).includes(ts.buildBlockPrompt(block)));
      assert.equal(c.getInstructions(), ts.systemPrompt);
      // resources: the visible documentation, nothing else; a hidden file is not addressable
      // (each file as it is, and a PDF also as its text: `…?as=text`, text/plain, page by page as read_doc extracts it)
      const resources = (await c.listResources()).resources;
      const files = resources.filter((r) => !r.uri.endsWith('?as=text'));
      assert.equal(files.length, block.visible.docs.length);
      assert.ok(files.length > 0);
      assert.deepEqual(files.map((r) => r.name).sort(), block.visible.docs.map((d) => d.rel).sort());
      const texts = resources.filter((r) => r.uri.endsWith('?as=text'));
      assert.deepEqual(
        texts.map((r) => r.name).sort(),
        block.visible.docs
          .filter((d) => d.rel.endsWith('.pdf'))
          .map((d) => `${d.rel} (text)`)
          .sort(),
      );
      assert.ok(texts.every((r) => r.mimeType === 'text/plain'));
      const pdf = resources.find((r) => r.mimeType === 'application/pdf')!;
      const read = await c.readResource({ uri: pdf.uri });
      assert.ok(
        Buffer.from((read.contents[0] as { blob: string }).blob, 'base64')
          .subarray(0, 5)
          .toString() === '%PDF-',
      );
      const demo = texts.find((r) => r.name === 'docs/Demographics/DEMO_L.pdf (text)')!;
      assert.equal(demo.uri, 'loupe-doc:///docs/Demographics/DEMO_L.pdf?as=text');
      const demoText = (await c.readResource({ uri: demo.uri })).contents;
      assert.equal(demoText.length, 1);
      assert.equal(demoText[0]!.uri, demo.uri);
      assert.equal(demoText[0]!.mimeType, 'text/plain');
      const pages = (demoText[0] as { text: string }).text;
      assert.match(pages, /^\[Page 1\]\n/);
      assert.match(pages, /\[Page \d+\]\n[^[]*Variable Name: RIAGENDR SAS Label: Gender/);
      for (const uri of [
        'loupe-doc:///benchmark.csv',
        'loupe-doc:///benchmark.csv?as=text',
        `loupe-doc:///${encodeURIComponent(join(ROOT, 'benchmark.csv'))}`,
        'loupe-doc:///../benchmark.csv',
        `file://${join(ROOT, 'benchmark.csv')}`,
      ]) {
        await assert.rejects(c.readResource({ uri }), /resource not found/);
      }

      // an unknown tool is a protocol error and records nothing; bad arguments are a recorded error result naming the field
      await assert.rejects(c.callTool({ name: 'sql', arguments: { query: 'select 1' } }), /unknown tool 'sql'/);
      const bad = await c.callTool({ name: 'search_doc', arguments: { query: 'obesity' } });
      assert.equal(bad.isError, true);
      assert.match(text(bad), /missing required argument 'keyword'/);
      // the sandbox: the hidden ground truth and the suite root are out of reach of the python tool
      const probe = text(await c.callTool({ name: 'python', arguments: { code: PROBE } }));
      assert.match(probe, /hidden: (FileNotFoundError|PermissionError)/);
      assert.match(probe, /benchmark root visible: False/);
      const found = text(await c.callTool({ name: 'search_doc', arguments: { keyword: 'obesity' } }));
      assert.ok(found.length > 0);

      const { answers } = await solve(c);
      assert.match(answers[2]!, /recorded: \[35.5, 46.4, 38.9\]/);
      const fin = await c.callTool({ name: 'final_answer', arguments: { summary: 'q1-q3 answered' } });
      assert.match(text(fin), /has ended: finished/);
      // a call after the run ended is refused, nothing recorded
      await assert.rejects(c.callTool({ name: 'answer', arguments: { action: 'list' } }), /has ended/);
      await c.close();

      const s = openStore(store);
      try {
        const [run] = await s.listRuns();
        assert.ok(run);
        assert.equal(run.agent, 'mcp:loupe-test-agent/1.0');
        assert.equal(
          run.model,
          'mcp:loupe-test-agent/1.0 (uncontained)',
          'scores of uncontained runs are grouped apart',
        );
        assert.equal(run.status, 'finished', run.statusReason ?? '');
        assert.equal(run.tokens, null, 'token counts of an MCP client are unknown: null, not 0');
        assert.deepEqual(run.params.mcp, {
          client: 'loupe-test-agent',
          clientVersion: '1.0',
          transport: 'stdio',
          contained: false,
        });
        const steps = await s.getSteps(run.id);
        // search_doc (bad), python (probe), search_doc, python, 3 × answer, final_answer: one step per call
        assert.deepEqual(
          steps.map((x) => x.toolCalls.map((t) => t.name).join()),
          ['search_doc', 'python', 'search_doc', 'python', 'answer', 'answer', 'answer', 'final_answer'],
        );
        assert.ok(steps.every((x) => x.usage === null));
        assert.equal(run.steps, steps.length);
        const events = await s.getEvents(run.id);
        assert.ok(
          events.some(
            (e) =>
              e.kind === 'warning' &&
              /^UNCONTAINED: the MCP client loupe-test-agent declared no sandbox/.test(e.message),
          ),
        );
        const mcpAnswers = (await s.getAnswers(run.id)).map((a) => ({ queryId: a.queryId, answer: a.answer }));
        assert.deepEqual(mcpAnswers, [
          { queryId: Q(1), answer: 40.3 },
          { queryId: Q(2), answer: [39.2, 41.3] },
          { queryId: Q(3), answer: [35.5, 46.4, 38.9] },
        ]);
        const saved = (await s.scores.list()).filter((x) => x.runId === run.id);
        assert.equal(saved.length, 1, 'the finishing call scored the run');
        const mcpScore = (saved[0]!.detail as { summary: Record<string, number | null> }).summary;
        assert.equal(mcpScore.inputTokens, null);
        // MCP runs cannot be intervened on, and the refusal says why
        await assert.rejects(
          interveneStoredRun(s, run.id, { who: 'analyst', text: 'try harder' }),
          /external MCP client/,
        );

        // the same answers through loupe run with a scripted model give the same answers and score
        const lastTool = (req: ChatRequestBody) =>
          [...req.messages].reverse().find((m) => m.role === 'tool')?.content ?? '';
        const script: Turn[] = [
          { toolCalls: [call('python', { code: ANALYSIS })] },
          (req) => {
            const res = JSON.parse(lastTool(req).trim().split('\n').pop()!) as {
              overall: number;
              sex: number[];
              age: number[];
            };
            return {
              toolCalls: [
                call('answer', { action: 'add', q_id: Q(1), answer: res.overall }),
                call('answer', { action: 'add', q_id: Q(2), answer: res.sex }),
                call('answer', { action: 'add', q_id: Q(3), answer: res.age }),
              ],
            };
          },
          { toolCalls: [call('final_answer', { summary: 'q1-q3 answered' })] },
        ];
        const srv = await startScriptedLlm({ script });
        try {
          const t = io(dir);
          const code = await main(
            [
              'run',
              '--suite',
              'longda',
              '--root',
              ROOT,
              '--block',
              BLOCK,
              '--agent',
              'llm',
              '--model',
              'scripted',
              '--base-url',
              srv.baseUrl,
              '--store',
              join(dir, 'llm.sqlite'),
              '--json',
            ],
            t.io,
          );
          assert.equal(code, 0, t.err.join(''));
          const line = JSON.parse(t.out.join('').trim()) as { answers: unknown; score: Record<string, unknown> };
          assert.deepEqual(line.answers, mcpAnswers);
          const common = Object.keys(line.score).filter((k) => k in mcpScore);
          assert.ok(common.includes('match') && common.includes('coverage'), common.join());
          for (const k of common) assert.deepEqual(mcpScore[k], line.score[k], k);
          assert.equal(mcpScore.match, 3 / 9);
        } finally {
          await srv.close();
        }
      } finally {
        await s.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

/** Starts `loupe mcp --transport http --json` and reads its first line (url, token). */
async function startHttp(
  dir: string,
  store: string,
): Promise<{ child: ChildProcess; url: string; token: string; err: string[] }> {
  const child = spawn(
    process.execPath,
    [
      CLI,
      'mcp',
      '--suite',
      'longda',
      '--root',
      ROOT,
      '--block',
      BLOCK,
      '--store',
      store,
      '--transport',
      'http',
      '--json',
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const err: string[] = [];
  child.stderr!.on('data', (b: Buffer) => err.push(b.toString()));
  const first = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (b: Buffer) => {
      buf += b.toString();
      const i = buf.indexOf('\n');
      if (i >= 0) resolve(buf.slice(0, i));
    });
    child.once('exit', (code) => reject(new Error(`loupe mcp exited ${code}: ${err.join('')}`)));
  });
  const { url, token } = JSON.parse(first) as { url: string; token: string };
  return { child, url, token, err };
}

function rawPost(url: string, headers: Record<string, string>): Promise<number> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: `${u.pathname}${u.search}`,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
      }),
    );
  });
}

test(
  "loupe mcp over http: token, Origin and Host checks, loopback only; a sandboxed client's run is contained; a dropped connection resumes by session id; a second server on the run is refused by the lease; --resume continues it",
  { timeout: 240_000 },
  async () => {
    needBuild();
    const dir = mkdtempSync(join(tmpdir(), 'loupe-mcp-http-'));
    const store = join(dir, 'runs.sqlite');
    const { child, url, token, err } = await startHttp(dir, store);
    try {
      const port = new URL(url).port;
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      // security: no token, a wrong token, a foreign Origin, a foreign Host (DNS rebinding)
      assert.equal(await rawPost(url, {}), 401);
      assert.equal(await rawPost(url, { authorization: 'Bearer wrong-token-0123456789' }), 401);
      assert.equal(await rawPost(url, { authorization: `Bearer ${token}`, origin: 'http://evil.example' }), 403);
      assert.equal(await rawPost(url, { authorization: `Bearer ${token}`, host: `evil.example:${port}` }), 403);
      // not reachable on a non-loopback address of this machine
      const external = Object.values(networkInterfaces())
        .flat()
        .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
      if (external) {
        await assert.rejects(
          new Promise((resolve, reject) => {
            const req = request({ host: external, port, path: '/mcp', method: 'POST', timeout: 3000 }, resolve);
            req.on('error', reject);
            req.on('timeout', () => req.destroy(new Error('timeout')));
            req.end();
          }),
          /ECONNREFUSED|timeout|EHOSTUNREACH/,
        );
      }

      // a client that declares its own sandbox, token as a query parameter
      const c = new Client(
        { name: 'sandboxed-agent', version: '2.1' },
        { capabilities: { experimental: { sandbox: { kind: 'container' } } } },
      );
      const first = new StreamableHTTPClientTransport(new URL(`${url}?token=${encodeURIComponent(token)}`));
      await c.connect(first);
      assert.deepEqual(
        (await c.listTools()).tools.map((t) => t.name),
        ['prompt', 'read_doc', 'search_doc', 'retriever', 'notes', 'answer', 'save_code', 'python', 'final_answer'],
      );
      const out = text(await c.callTool({ name: 'python', arguments: { code: 'print(6 * 7)' } }));
      assert.equal(out.trim(), '42');
      await c.callTool({ name: 'notes', arguments: { action: 'add', content: 'weights: WTMEC2YR' } });

      // the run is visible in the store while it happens
      const s = openStore(store);
      let runId: string;
      try {
        const [run] = await s.listRuns();
        assert.ok(run);
        runId = run.id;
        assert.equal(run.status, 'running');
        assert.equal(run.agent, 'mcp:sandboxed-agent/2.1');
        assert.equal(run.params.mcp?.contained, true);
        assert.equal(run.model, 'mcp:sandboxed-agent/2.1');
        assert.equal(run.params.mcp?.transport, 'http');
        assert.equal((await s.getSteps(run.id)).length, 2);
        assert.ok(!(await s.getEvents(run.id)).some((e) => /UNCONTAINED/.test(e.message)));
      } finally {
        await s.close();
      }

      // a second server on the same run: refused by the run lease, naming the holder
      const second = spawn(process.execPath, [CLI, 'mcp', '--resume', runId, '--store', store], {
        cwd: dir,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const secondErr: string[] = [];
      second.stderr.on('data', (b: Buffer) => secondErr.push(b.toString()));
      const code = await new Promise<number | null>((r) => second.once('exit', r));
      assert.equal(code, 2, secondErr.join(''));
      assert.match(secondErr.join(''), /is being driven by another process/);

      // a dropped connection (the session is not ended) is resumed by its session id: same session, same run
      const sessionId = first.sessionId;
      assert.ok(sessionId);
      await c.close();
      const c3 = new Client({ name: 'sandboxed-agent', version: '2.1' });
      await c3.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          sessionId,
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        }),
      );
      assert.match(
        text(await c3.callTool({ name: 'notes', arguments: { action: 'add', content: 'after reconnect' } })),
        /./,
      );
      await c3.close();

      // stopping the server stops the run (resumable); --resume over stdio continues it with nothing lost
      child.kill('SIGINT');
      await new Promise((r) => child.once('exit', r));
      const t2 = new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp', '--resume', runId, '--store', store],
        cwd: dir,
        stderr: 'pipe',
      });
      const c2 = new Client(
        { name: 'sandboxed-agent', version: '2.1' },
        { capabilities: { experimental: { sandbox: {} } } },
      );
      await c2.connect(t2);
      const notes = text(await c2.callTool({ name: 'notes', arguments: { action: 'list' } }));
      assert.match(notes, /weights: WTMEC2YR[\s\S]*after reconnect/);
      assert.match(text(await c2.callTool({ name: 'final_answer', arguments: {} })), /has ended: finished/);
      await c2.close();
      const s2 = openStore(store);
      try {
        const run = (await s2.getRun(runId))!;
        assert.equal(run.status, 'finished');
        assert.deepEqual(
          (await s2.getSteps(runId)).map((x) => x.toolCalls[0]!.name),
          ['python', 'notes', 'notes', 'notes', 'final_answer'],
        );
        assert.ok((await s2.getEvents(runId)).some((e) => e.kind === 'resume'));
      } finally {
        await s2.close();
      }
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      void err;
    }
  },
);

test(
  'loupe mcp on a DDR block (MIMIC-IV demo): execute_query in the SQL sandbox, the finish variant ends the run with the insight list; a flooding client is bounded by the step limit',
  { timeout: 240_000 },
  async () => {
    needBuild();
    const dir = mkdtempSync(join(tmpdir(), 'loupe-mcp-ddr-'));
    const db = mimicSubsetDb(['hosp/patients', 'hosp/admissions']);
    const store = join(dir, 'runs.sqlite');
    const args = [
      'mcp',
      '--suite',
      'ddr',
      '--root',
      db,
      '--entities',
      'patients.subject_id',
      '--block',
      'patient_10001217',
      '--store',
      store,
    ];
    try {
      const c = new Client({ name: 'ddr-agent', version: '0.3' });
      await c.connect(
        new StdioClientTransport({ command: process.execPath, args: [CLI, ...args], cwd: dir, stderr: 'pipe' }),
      );
      const names = (await c.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('get_database_info') && names.includes('execute_query'), names.join());
      assert.equal(names.at(-1), 'finish', 'DDR ends on a FINISH message: MCP clients get the finish variant');
      const q = text(
        await c.callTool({
          name: 'execute_query',
          arguments: { sql: 'SELECT gender, anchor_age FROM patients WHERE subject_id = 10001217' },
        }),
      );
      assert.match(q, /"gender"/);
      // the SQL sandbox is read-only
      const w = await c.callTool({ name: 'execute_query', arguments: { sql: 'DELETE FROM patients' } });
      assert.equal(w.isError, true);
      const bad = await c.callTool({ name: 'finish', arguments: { insights: 'not a list' } });
      assert.equal(bad.isError, true);
      assert.match(text(bad), /insights must be an array of strings/);
      const fin = await c.callTool({
        name: 'finish',
        arguments: { insights: ['The patient is a woman aged 52.', 'She had two admissions.'] },
      });
      assert.match(text(fin), /has ended: finished/);
      await c.close();
      const s = openStore(store);
      try {
        const [run] = await s.listRuns();
        assert.ok(run);
        assert.equal(run.status, 'finished', run.statusReason ?? '');
        assert.equal(run.params.mcp?.finishTool, 'finish');
        const steps = await s.getSteps(run.id);
        assert.equal(steps.length, 3, 'the rejected finish call (bad arguments) was not a step; the good one was');
        assert.equal(
          steps.at(-1)!.assistant.content,
          'FINISH: - The patient is a woman aged 52.\n- She had two admissions.',
        );
        assert.equal(ddrState(await s.getExtraState(run.id)).queries.length, 2);
        const res = (await readDdrResult(s, run.id))!;
        assert.equal(res.finalReport, 'FINISH: - The patient is a woman aged 52.\n- She had two admissions.');
        assert.equal(res.options.insights, 'reasoning', 'an MCP client cannot be asked separate insight calls');
        assert.ok(
          (await s.getEvents(run.id)).some(
            (e) => e.kind === 'mcp' && /'finish' tool is a Loupe variant/.test(e.message),
          ),
        );
      } finally {
        await s.close();
      }

      // a client sending 6 calls at once with --max-steps 3: three are recorded, the rest refused, the run out of budget
      const c2 = new Client({ name: 'flood', version: '1' });
      await c2.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [CLI, ...args, '--max-steps', '3'],
          cwd: dir,
          stderr: 'pipe',
        }),
      );
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) =>
          c2.callTool({ name: 'execute_query', arguments: { sql: `SELECT ${i} AS i` } }),
        ),
      );
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 3);
      for (const r of results.filter((x) => x.status === 'rejected')) {
        assert.match(
          String((r as PromiseRejectedResult).reason),
          /has ended \(budget_exhausted: max steps \(3\) reached\)/,
        );
      }
      await c2.close();
      const s2 = openStore(store);
      try {
        const flood = (await s2.listRuns()).find((r) => r.agent === 'mcp:flood/1')!;
        assert.equal(flood.status, 'budget_exhausted');
        assert.equal((await s2.getSteps(flood.id)).length, 3);
      } finally {
        await s2.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(dirname(db), { recursive: true, force: true });
    }
  },
);
