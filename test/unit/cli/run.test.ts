/**
 * `loupe run` end to end with the scripted OpenAI-compatible model on the real NHANES block of NCHS
 * Data Brief 508 (LongDA, $LOUPE_SHARED): sandboxed pandas on the real XPT files, answers recorded
 * and matching the published values, fault injection, exports, no key in the store, kill -9 + --resume.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../../src/cli/main.ts';
import { isRunActive, openStore } from '../../../src/core/store/run-store.ts';
import { call, rawToolCall, startScriptedLlm, type ChatRequestBody, type Turn } from '../../helpers/scripted-llm.ts';
import { repoRoot, sharedData } from '../../helpers/shared.ts';

const ROOT = sharedData('longda', 'benchmark');
const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const Q = (i: number) => `NHANES_NCHS Data Brief No. 508_q${i}`;
const KEY = 'sk-loupe-test-key-7f3a9c2e51';

/** Analysis the scripted model "writes": weighted obesity prevalence from DEMO_L + BMX_L. */
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
import pandas as pd
try:
    open(${JSON.stringify(join(ROOT, 'benchmark.csv'))}).read(10)
    print('hidden: READABLE')
except Exception as e:
    print('hidden:', type(e).__name__)
try:
    pd.read_csv('http://1.1.1.1/data.csv')
    print('net: CONNECTED')
except Exception as e:
    print('net:', type(e).__name__, e)
print('benchmark root visible:', os.path.exists(${JSON.stringify(ROOT)}))
print('data files:', len([f for d, _, fs in os.walk('data') for f in fs]) > 0)
print('home visible:', os.path.exists(${JSON.stringify(repoRoot)}))
`;

function lastToolContent(req: ChatRequestBody): string {
  return [...req.messages].reverse().find((m) => m.role === 'tool')?.content ?? '';
}

function io(env: NodeJS.ProcessEnv, cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s), env, cwd } };
}

test(
  'loupe run: scripted llm agent on NHANES Data Brief 508 with faults, sandbox, exports, no key in store',
  { timeout: 120_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-run-'));
    const script: Turn[] = [
      {
        faults: [{ type: 'rate-limit', retryAfterMs: 20 }, { type: 'server-error' }, { type: 'truncate' }],
        reply: {
          content: 'Look at q1 first.',
          toolCalls: [call('prompt', { q_id: Q(1) }), call('notes', { action: 'add', content: 'weights: WTMEC2YR' })],
        },
      },
      {
        toolCalls: [
          rawToolCall('python', '{"code": "print(1)'),
          call('sql', { query: 'select 1' }),
          call('answer', { action: 'add', q_id: Q(1) }),
        ],
      },
      { toolCalls: [call('python', { code: ANALYSIS })] },
      (req) => {
        const res = JSON.parse(lastToolContent(req).trim().split('\n').pop()!) as {
          overall: number;
          sex: number[];
          age: number[];
        };
        return {
          toolCalls: [
            call('answer', { action: 'add', q_id: Q(1), answer: res.overall }),
            call('answer', { action: 'add', q_id: Q(2), answer: res.sex }),
            call('answer', { action: 'add', q_id: Q(3), answer: res.age.slice(0, 2) }),
            call('answer', { action: 'add', q_id: 'NHANES_NCHS Data Brief No. 999_q1', answer: 1 }),
            call('answer', { action: 'add', q_id: Q(3), answer: JSON.stringify(res.age) }),
          ],
        };
      },
      { toolCalls: [call('python', { code: PROBE })] },
      { toolCalls: [call('save_code', { code: ANALYSIS }), call('answer', { action: 'list' })] },
      { content: 'All done.', toolCalls: [call('final_answer', { summary: 'q1-q3 answered' })] },
    ];
    const srv = await startScriptedLlm({ script, requireKey: KEY });
    try {
      const t = io({ ...process.env, LOUPE_TEST_KEY: KEY }, dir);
      const store = join(dir, 'runs.sqlite');
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
          '--api-key-env',
          'LOUPE_TEST_KEY',
          '--stream',
          '--temperature',
          '0.1',
          '--max-tokens',
          '4096',
          '--max-tokens-field',
          'max_completion_tokens',
          '--store',
          store,
          '--json',
          '--results',
          join(dir, 'results'),
          '--trajectory',
          join(dir, 'traj'),
        ],
        t.io,
      );
      assert.equal(code, 0, t.err.join(''));
      const lines = t.out.join('').trim().split('\n');
      assert.equal(lines.length, 1);
      const line = JSON.parse(lines[0]!);
      assert.deepEqual(Object.keys(line), [
        'runId',
        'suite',
        'blockId',
        'agent',
        'status',
        'steps',
        'tokens',
        'durationMs',
        'answers',
        'score',
      ]);
      // LongDA lines carry the score (no judge needed): 3 of the block's 9 queries answered, all within tolerance
      assert.equal(line.score.match, 3 / 9);
      assert.equal(line.score.coverage, 3 / 9);
      assert.equal(line.score.options.list_scoring, 'partial');
      assert.equal(line.status, 'finished');
      assert.equal(line.suite, 'longda');
      assert.equal(line.blockId, BLOCK);
      assert.equal(line.agent, 'llm');
      assert.equal(line.steps, 7);
      assert.ok(line.tokens.input > 0 && line.tokens.output > 0);
      // published values (NCHS Data Brief 508): 40.3; men 39.2, women 41.3; 20–39/40–59/60+ 35.5/46.4/38.9
      assert.deepEqual(line.answers, [
        { queryId: Q(1), answer: 40.3 },
        { queryId: Q(2), answer: [39.2, 41.3] },
        { queryId: Q(3), answer: [35.5, 46.4, 38.9] },
      ]);
      // faults were served and retried
      assert.deepEqual(
        srv.requests.slice(0, 4).map((r) => r.served),
        ['rate-limit', 'server-error', 'truncate', 'reply'],
      );
      assert.ok(srv.requests.every((r) => r.authorization === `Bearer ${KEY}`));
      const body = srv.requests.at(-1)!.body;
      assert.equal(body.temperature, 0.1);
      assert.equal(body.max_completion_tokens, 4096);
      assert.equal(body.max_tokens, undefined);
      assert.equal(body.stream, true);

      const s = openStore(store);
      const steps = await s.getSteps(line.runId);
      const obs = (i: number) => steps[i]!.toolCalls.map((c) => c.observation);
      assert.match(
        obs(0)[0]!,
        /^Question ID: NHANES_NCHS Data Brief No. 508_q1\nQ1: What was the overall prevalence of obesity/,
      );
      assert.match(obs(1)[0]!, /tool call format error for 'python': invalid JSON/);
      assert.match(obs(1)[1]!, /unknown tool 'sql'/);
      assert.match(obs(1)[2]!, /needs answer/);
      assert.match(obs(3)[2]!, /expects a list of 3 numbers \[age20_39, age40_59, age60plus\], got a list of 2/);
      assert.match(obs(3)[3]!, /is not a question of this block/);
      assert.match(obs(3)[4]!, /recorded: \[35.5, 46.4, 38.9\]/);
      // the sandbox: hidden ground truth and the network are out of reach, nothing of the host's /work is mounted
      assert.match(obs(4)[0]!, /hidden: (FileNotFoundError|PermissionError)/);
      assert.match(obs(4)[0]!, /net: URLError .*(Network is unreachable|Errno)/);
      // the suite root (where benchmark.csv lives) is not even visible: the data is mounted into the workspace
      assert.match(obs(4)[0]!, /benchmark root visible: False/);
      assert.match(obs(4)[0]!, /data files: True/);
      assert.match(obs(4)[0]!, /home visible: False/);
      const run = (await s.getRun(line.runId))!;
      assert.equal(run.sandbox, 'bubblewrap');
      assert.equal(run.model, 'scripted');
      assert.equal(run.toolSet, 'longda');
      assert.match(run.dataChecksums['data/Examination/BMX_L.xpt']!, /^[0-9a-f]{64}$/);
      assert.match(run.promptHash, /^[0-9a-f]{64}$/);
      assert.equal(run.params.baseUrl, srv.baseUrl);
      assert.equal((await s.getNotes(line.runId))[0], 'weights: WTMEC2YR');
      assert.equal(await s.getSavedCode(line.runId), ANALYSIS);
      assert.equal((await s.getCells(line.runId)).length, 2);
      assert.ok((await s.getEvents(line.runId)).some((e) => e.kind === 'retry'));
      s.close();

      // exports
      const csv = readFileSync(join(dir, 'results', 'answers_progress.csv'), 'utf8').split('\n');
      assert.equal(csv[0], 'survey,source,internal_id,query,answer_structure,additional_info,answer,my_answer,q_id');
      assert.equal(csv.filter((l) => l.startsWith('NHANES,NCHS Data Brief No. 508,')).length, 9);
      assert.ok(
        csv.some((l) => l.includes('"[39.2, 41.3]","[39.2, 41.3]",NHANES_NCHS Data Brief No. 508_q2')),
        csv.slice(0, 4).join('\n'),
      );
      const summary = JSON.parse(readFileSync(join(dir, 'results', 'run_summary.json'), 'utf8'));
      assert.equal(summary.n_blocks, 1);
      assert.equal(summary.total_steps, 7);
      assert.equal(summary.answered_queries, 3);
      assert.equal(summary.tool_usage_counts.answer, 7);
      const traj = readFileSync(join(dir, 'traj', `${line.runId}.jsonl`), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.equal(traj[0].type, 'run');
      assert.equal(traj.filter((r) => r.type === 'step').length, 7);

      // the key is nowhere on disk: store (db + WAL), run folder, exports
      const files: string[] = [];
      const walk = (p: string) => {
        for (const e of readdirSync(p, { withFileTypes: true })) {
          if (e.isSymbolicLink()) continue;
          if (e.isDirectory()) walk(join(p, e.name));
          else files.push(join(p, e.name));
        }
      };
      walk(dir);
      assert.ok(files.some((f) => f.endsWith('runs.sqlite')));
      for (const f of files) assert.ok(!readFileSync(f).includes(KEY), `API key found in ${f}`);
      assert.ok(!t.err.join('').includes(KEY));
    } finally {
      await srv.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'loupe run: kill -9 mid-run, then --resume continues with nothing lost or duplicated',
  { timeout: 120_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-kill-'));
    const script: Turn[] = [
      { toolCalls: [call('python', { code: ANALYSIS })] },
      (req) => ({
        toolCalls: [
          call('answer', {
            action: 'add',
            q_id: Q(1),
            answer: JSON.parse(lastToolContent(req).trim().split('\n').pop()!).overall,
          }),
          call('notes', { action: 'add', content: 'q1 done' }),
        ],
      }),
      // the first request for this turn hangs: the CLI is killed while waiting for it
      {
        faults: [{ type: 'hang' }],
        reply: { toolCalls: [call('python', { code: "print(json.dumps({'sex': res['sex']}))" })] },
      },
      (req) => ({
        toolCalls: [
          call('answer', {
            action: 'add',
            q_id: Q(2),
            answer: JSON.parse(lastToolContent(req).trim().split('\n').pop()!).sex,
          }),
        ],
      }),
      { toolCalls: [call('final_answer', {})] },
    ];
    const srv = await startScriptedLlm({ script });
    const store = join(dir, 'runs.sqlite');
    const cli = (args: string[]) =>
      spawn(process.execPath, ['--no-warnings', join(repoRoot, 'src', 'cli.ts'), ...args], {
        cwd: dir,
        env: { ...process.env, OPENAI_API_KEY: KEY },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    try {
      const child = cli([
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
        store,
        '--json',
      ]);
      let err = '';
      child.stderr.on('data', (c: Buffer) => {
        err += c.toString();
      });
      const exited = new Promise<number | null>((r) => child.on('exit', (c, sig) => r(sig ? -1 : c)));
      // wait until the third model request (the hanging one) arrives: steps 0 and 1 are committed
      for (let i = 0; i < 600 && !srv.requests.some((r) => r.turn === 2); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(
        srv.requests.some((r) => r.turn === 2),
        `CLI never reached step 3:\n${err}`,
      );
      const runId = /run (\S+) started/.exec(err)![1]!;
      child.kill('SIGKILL');
      assert.equal(await exited, -1);

      const mid = openStore(store);
      assert.equal((await mid.getRun(runId))!.status, 'running');
      assert.equal((await mid.getRun(runId))!.ownerPid, child.pid);
      assert.equal(isRunActive((await mid.getRun(runId))!), false, 'a killed run must read as stale');
      assert.ok((await mid.getRun(runId))!.heartbeatAt);
      assert.deepEqual(
        (await mid.getSteps(runId)).map((s) => s.index),
        [0, 1],
      );
      mid.close();

      const resumed = cli(['run', '--resume', runId, '--store', store, '--json']);
      let out = '';
      let err2 = '';
      resumed.stdout.on('data', (c: Buffer) => {
        out += c.toString();
      });
      resumed.stderr.on('data', (c: Buffer) => {
        err2 += c.toString();
      });
      const code = await new Promise<number | null>((r) => resumed.on('exit', (c) => r(c)));
      assert.equal(code, 0, err2);
      const line = JSON.parse(out.trim());
      assert.equal(line.runId, runId);
      assert.equal(line.status, 'finished');
      assert.equal(line.steps, 5);
      assert.deepEqual(line.answers, [
        { queryId: Q(1), answer: 40.3 },
        { queryId: Q(2), answer: [39.2, 41.3] },
      ]);

      const s = openStore(store);
      assert.deepEqual(
        (await s.getSteps(runId)).map((x) => x.index),
        [0, 1, 2, 3, 4],
      );
      assert.deepEqual(await s.getNotes(runId), ['q1 done']);
      // the python state (res) was rebuilt by replaying the recorded cell, and the run says so
      const events = await s.getEvents(runId);
      assert.ok(
        events.some((e) => e.kind === 'resume' && /after step 2/.test(e.message)),
        JSON.stringify(events),
      );
      assert.ok(
        events.some((e) => e.kind === 'kernel-replay' && /re-executing 1 recorded cells/.test(e.message)),
        JSON.stringify(events),
      );
      assert.deepEqual(
        (await s.getCells(runId)).map((c) => [c.stepIndex, c.replay, c.status]),
        [
          [0, false, 'ok'],
          [0, true, 'ok'],
          [2, false, 'ok'],
        ],
      );
      // the resumed model request carried the whole committed conversation once
      const req = srv.requests.filter((r) => r.turn === 2 && r.served === 'reply');
      assert.equal(req.length, 1);
      assert.equal(req[0]!.body.messages.filter((m) => m.role === 'assistant').length, 2);
      s.close();
      assert.ok(!readFileSync(store).includes(KEY));
      if (existsSync(store + '-wal')) assert.ok(!readFileSync(store + '-wal').includes(KEY));
    } finally {
      await srv.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('loupe run: SIGINT stops the run as cancelled and still prints its JSON line', { timeout: 60_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loupe-sigint-'));
  const srv = await startScriptedLlm({
    script: [
      { toolCalls: [call('notes', { action: 'add', content: 'a' })] },
      { faults: [{ type: 'hang' }], reply: { content: 'x' } },
    ],
  });
  try {
    const child = spawn(
      process.execPath,
      [
        '--no-warnings',
        join(repoRoot, 'src', 'cli.ts'),
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
        join(dir, 's.sqlite'),
        '--json',
      ],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    for (let i = 0; i < 600 && !srv.requests.some((r) => r.turn === 1); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGINT');
    assert.equal(await exited, 1);
    const line = JSON.parse(out.trim());
    assert.equal(line.status, 'cancelled');
    assert.equal(line.steps, 1);
    const s = openStore(join(dir, 's.sqlite'));
    assert.match((await s.getRun(line.runId))!.statusReason!, /SIGINT/);
    s.close();
  } finally {
    await srv.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('loupe run: usage errors and an unknown block exit 2 with a clear message', async () => {
  const t = io(process.env, tmpdir());
  assert.equal(
    await main(
      [
        'run',
        '--suite',
        'longda',
        '--root',
        ROOT,
        '--block',
        'nope',
        '--agent',
        'reference',
        '--sandbox',
        'off',
        '--store',
        join(tmpdir(), `loupe-x-${process.pid}.sqlite`),
      ],
      t.io,
    ),
    2,
  );
  assert.match(t.err.join(''), /unknown block 'nope'/);
  const t2 = io(process.env, tmpdir());
  assert.equal(
    await main(
      [
        'run',
        '--suite',
        'longda',
        '--root',
        ROOT,
        '--block',
        BLOCK,
        '--agent',
        'robot',
        '--sandbox',
        'off',
        '--store',
        join(tmpdir(), `loupe-x-${process.pid}.sqlite`),
      ],
      t2.io,
    ),
    2,
  );
  assert.match(t2.err.join(''), /--agent must be llm, reference/);
  rmSync(join(tmpdir(), `loupe-x-${process.pid}.sqlite`), { force: true });
  rmSync(join(tmpdir(), `loupe-x-${process.pid}.sqlite-wal`), { force: true });
  rmSync(join(tmpdir(), `loupe-x-${process.pid}.sqlite-shm`), { force: true });
});

test(
  'loupe run: an unseen LongDA-format block (xlsx data, fixture) — python reads it in the sandbox, answers land in --json',
  { timeout: 60_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-unseen-'));
    const root = join(repoRoot, 'test', 'fixtures', 'suites', 'longda-unseen');
    const q = (i: number) => `ACS_ACS Brief: Commuting 2030_q${i}`;
    const code =
      "import pandas as pd, numpy as np\nd = pd.read_excel('data/acs_commute_2030.xlsx')\nprint(round(100*float(np.average(d['mode']=='transit', weights=d.weight)), 1))";
    const srv = await startScriptedLlm({
      script: [
        { toolCalls: [call('search_doc', { keyword: 'weight' }), call('prompt', {})] },
        (req) => {
          const prompt = lastToolContent(req);
          const file = /^Available data files:\n(.+)$/m.exec(prompt)![1]!;
          return { toolCalls: [call('python', { code: code.replace('data/acs_commute_2030.xlsx', file) })] };
        },
        (req) => ({
          toolCalls: [
            call('answer', { action: 'add', q_id: q(1), answer: Number(lastToolContent(req).trim()) }),
            call('final_answer', {}),
          ],
        }),
      ],
    });
    try {
      const t = io(process.env, dir);
      const rc = await main(
        [
          'run',
          '--suite',
          'longda',
          '--root',
          root,
          '--blocks',
          'all',
          '--agent',
          'llm',
          '--model',
          'scripted',
          '--base-url',
          srv.baseUrl,
          '--store',
          join(dir, 's.sqlite'),
          '--json',
          '--concurrency',
          '2',
        ],
        t.io,
      );
      const lines = t.out
        .join('')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      const acs = lines.find((l) => l.blockId.startsWith('ACS'));
      assert.ok(acs, t.err.join(''));
      assert.equal(acs.status, 'finished', t.err.join(''));
      assert.deepEqual(acs.answers, [{ queryId: q(1), answer: 40 }]);
      assert.equal(srv.requests.filter((r) => r.served === 'reply').length >= 3, true);
      // the doc tool reached the documentation index of the block's docs
      const st = openStore(join(dir, 's.sqlite'));
      const first = (await st.getSteps(acs.runId))[0]!.toolCalls[0]!;
      st.close();
      assert.equal(first.name, 'search_doc');
      assert.match(first.observation, /\[docs\/readme\.txt\] .*Columns: region, mode, minutes, weight/s);
      // --blocks all ran every runnable block of the suite (BRFSS has no data: not runnable)
      assert.deepEqual(lines.map((l) => l.blockId.split('_')[0]).sort(), ['ACS', 'NHANES1718']);
      assert.equal(rc, 0);
    } finally {
      await srv.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'loupe run --agent reference: the NHANES 508 reference analysis reproduces the published values; --repeats writes one results folder per repeat',
  { timeout: 120_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-ref-'));
    try {
      const t = io(process.env, dir);
      const rc = await main(
        [
          'run',
          '--suite',
          'longda',
          '--root',
          ROOT,
          '--block',
          BLOCK,
          '--agent',
          'reference',
          '--repeats',
          '2',
          '--concurrency',
          '2',
          '--store',
          join(dir, 's.sqlite'),
          '--json',
          '--results',
          join(dir, 'results'),
        ],
        t.io,
      );
      assert.equal(rc, 0, t.err.join(''));
      const lines = t.out
        .join('')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.equal(lines.length, 2);
      for (const line of lines) {
        assert.equal(line.status, 'finished');
        assert.equal(line.agent, 'reference');
        assert.equal(line.steps, 3);
        const a = Object.fromEntries(
          line.answers.map((x: { queryId: string; answer: unknown }) => [x.queryId.replace(/.*_q/, 'q'), x.answer]),
        );
        // NCHS Data Brief 508 (published): obesity 40.3; men 39.2, women 41.3; ages 35.5/46.4/38.9; severe obesity 9.4
        assert.equal(a.q1, 40.3);
        assert.deepEqual(a.q2, [39.2, 41.3]);
        assert.deepEqual(a.q3, [35.5, 46.4, 38.9]);
        assert.equal(a.q5, 9.4);
        assert.equal(line.answers.length, 9);
      }
      for (const r of [1, 2]) {
        const csv = readFileSync(join(dir, 'results', `repeat-${r}`, 'answers_progress.csv'), 'utf8');
        assert.match(csv, /,40\.3,40\.3,NHANES_NCHS Data Brief No\. 508_q1\n/);
      }
      const s = openStore(join(dir, 's.sqlite'));
      const runs = await s.listRuns({ blockId: BLOCK });
      assert.deepEqual(runs.map((r) => r.params.repeat).sort(), [1, 2]);
      // the answers came from the script's output through the python tool, not typed in
      const step0 = (await s.getSteps(runs[0]!.id))[0]!.toolCalls[0]!;
      assert.equal(step0.name, 'python');
      assert.match(step0.observation, /"q1": 40\.3/);
      s.close();

      // loupe runs: list (JSON) and export one run's trajectory and results folder after the fact
      const t2 = io(process.env, dir);
      assert.equal(await main(['runs', '--store', join(dir, 's.sqlite'), '--json'], t2.io), 0, t2.err.join(''));
      const listed = t2.out
        .join('')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.equal(listed.length, 2);
      assert.ok(listed.every((r) => r.status === 'finished' && r.active === false && r.answers === 9));
      const t3 = io(process.env, dir);
      assert.equal(
        await main(
          [
            'runs',
            '--store',
            join(dir, 's.sqlite'),
            '--run',
            listed[0].id,
            '--trajectory',
            join(dir, 'tr'),
            '--results',
            join(dir, 'res'),
          ],
          t3.io,
        ),
        0,
        t3.err.join(''),
      );
      assert.ok(readFileSync(join(dir, 'tr', `${listed[0].id}.jsonl`), 'utf8').includes('"type":"answer"'));
      assert.equal(JSON.parse(readFileSync(join(dir, 'res', 'run_summary.json'), 'utf8')).answered_queries, 9);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('loupe run --blocks all: a LongDA root with no usable row exits non-zero with the reason; dropped rows are warnings', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loupe-empty-'));
  try {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      join(dir, 'benchmark.csv'),
      'survey,source,internal_id,query,answer_structure,additional_info,answer\n',
    );
    const run = (root: string) =>
      new Promise<{ code: number | null; err: string }>((res) => {
        const c = spawn(
          process.execPath,
          [
            '--no-warnings',
            join(repoRoot, 'src', 'cli.ts'),
            'run',
            '--suite',
            'longda',
            '--root',
            root,
            '--blocks',
            'all',
            '--agent',
            'reference',
            '--store',
            join(dir, 's.sqlite'),
          ],
          { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let err = '';
        c.stderr.on('data', (b: Buffer) => {
          err += b.toString();
        });
        c.on('exit', (code) => res({ code, err }));
      });
    const empty = await run(dir);
    assert.equal(empty.code, 1);
    assert.match(empty.err, /no runnable block in .*0 block\(s\) found/);
    writeFileSync(
      join(dir, 'benchmark.csv'),
      'survey,source,internal_id,query,answer_structure,additional_info,answer\nTOY,T 1,1,"What is x?,single_number,,42\n',
    );
    const broken = await run(dir);
    assert.equal(broken.code, 1);
    assert.match(broken.err, /warning: .*benchmark\.csv:2: malformed CSV record/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
