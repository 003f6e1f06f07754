/**
 * The run lease (issue 11): a live run cannot be resumed by a second process, and when two processes
 * resume the same stale run at once exactly one proceeds; nothing is recorded twice.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../../src/core/store/run-store.ts';
import { call, startScriptedLlm, type Turn } from '../../helpers/scripted-llm.ts';
import { repoRoot, sharedData } from '../../helpers/shared.ts';

const ROOT = sharedData('longda', 'benchmark');
const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const Q = (i: number) => `NHANES_NCHS Data Brief No. 508_q${i}`;

test(
  'run lease: resuming a live run is refused naming its owner; two concurrent resumes of a stale run: exactly one proceeds',
  { timeout: 120_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-lease-'));
    const script: Turn[] = [
      { toolCalls: [call('notes', { action: 'add', content: 'step 1' })] },
      // hangs on its first request: the first CLI stays alive (lease held) until it is killed
      {
        faults: [{ type: 'hang' }],
        reply: { toolCalls: [call('answer', { action: 'add', q_id: Q(1), answer: 40.3 })] },
      },
      // slow reply: both resumers would be inside the run at the same time if both were let in
      { delayMs: 1500, toolCalls: [call('final_answer', {})] },
    ];
    const srv = await startScriptedLlm({ script });
    const store = join(dir, 'runs.sqlite');
    const cli = (args: string[]) =>
      spawn(process.execPath, ['--no-warnings', join(repoRoot, 'src', 'cli.ts'), ...args], {
        cwd: dir,
        env: { ...process.env, OPENAI_API_KEY: 'k' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    const finish = (c: ReturnType<typeof cli>) =>
      new Promise<{ code: number | null; out: string; err: string }>((res) => {
        let out = '';
        let err = '';
        c.stdout.on('data', (b: Buffer) => {
          out += b.toString();
        });
        c.stderr.on('data', (b: Buffer) => {
          err += b.toString();
        });
        c.on('exit', (code, sig) => res({ code: sig ? -1 : code, out, err }));
      });
    try {
      const first = cli([
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
      const firstDone = finish(first);
      let err = '';
      first.stderr.on('data', (c: Buffer) => {
        err += c.toString();
      });
      for (let i = 0; i < 600 && !srv.requests.some((r) => r.turn === 1); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      const runId = /run (\S+) started/.exec(err)![1]!;

      // 1. the run is live: a resume is refused, names the owner, records nothing
      const refused = await finish(cli(['run', '--resume', runId, '--store', store, '--json']));
      assert.notEqual(refused.code, 0);
      if (process.env.RT_DEBUG) console.log(refused.code, refused.err);
      assert.match(refused.err, new RegExp(`being driven by another process: \\S+:${first.pid}:`));
      const mid = openStore(store);
      assert.deepEqual(
        (await mid.getSteps(runId)).map((s) => s.index),
        [0],
      );
      mid.close();

      // 2. kill the owner; two processes resume at once: one proceeds, the other is refused
      first.kill('SIGKILL');
      await firstDone;
      const [a, b] = await Promise.all([
        finish(cli(['run', '--resume', runId, '--store', store, '--json'])),
        finish(cli(['run', '--resume', runId, '--store', store, '--json'])),
      ]);
      const winners = [a, b].filter((r) => r.code === 0);
      const losers = [a, b].filter((r) => r.code !== 0);
      assert.equal(winners.length, 1, `a: ${a.code} ${a.err}\nb: ${b.code} ${b.err}`);
      assert.equal(losers.length, 1);
      assert.match(losers[0]!.err, /being driven by another process/);
      assert.equal(JSON.parse(winners[0]!.out.trim()).status, 'finished');
      const s = openStore(store);
      assert.deepEqual(
        (await s.getSteps(runId)).map((x) => x.index),
        [0, 1, 2],
        'no step recorded twice',
      );
      assert.equal((await s.getAnswers(runId)).length, 1);
      assert.equal(
        (await s.getSteps(runId)).filter((x) => x.toolCalls.some((c) => c.name === 'final_answer')).length,
        1,
      );
      assert.equal(await s.getRunLease(runId), undefined, 'the lease is released at the end');
      assert.ok((await s.getEvents(runId)).some((e) => e.kind === 'lease' && /took the run over/.test(e.message)));
      s.close();
    } finally {
      await srv.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
