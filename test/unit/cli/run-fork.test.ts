/**
 * Issue 20 end to end through the CLI on the real NHANES block of NCHS Data Brief 508 (LongDA, $LOUPE_SHARED) with the
 * scripted model: a run stopped by its budget takes a correction (`loupe intervene`), the resume sends it; a fork from
 * step 3 replays steps 1–3 without model calls (its sandboxed kernel re-runs the recorded cell) and continues with
 * another scripted model after a hint; bad fork points and a run driven by another process are refused; `loupe score`
 * keeps the assisted and forked runs apart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../../../src/cli/main.ts';
import { openStore } from '../../../src/core/store/run-store.ts';
import { call, startScriptedLlm, type ChatRequestBody, type Turn } from '../../helpers/scripted-llm.ts';
import { sharedData } from '../../helpers/shared.ts';

const ROOT = sharedData('longda', 'benchmark');
const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const Q = (i: number) => `NHANES_NCHS Data Brief No. 508_q${i}`;

function io(cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: {
      out: (s: string) => out.push(s),
      err: (s: string) => err.push(s),
      env: { ...process.env, LOUPE_USER: 'ana' },
      cwd,
    },
  };
}
const users = (req: ChatRequestBody) => req.messages.filter((m) => m.role === 'user').map((m) => String(m.content));

test(
  'loupe intervene + loupe run --fork: hints reach the model, forks replay without model calls, scores apart',
  { timeout: 240_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-fork-'));
    const store = join(dir, 'runs.sqlite');
    const parentScript: Turn[] = [
      {
        content: 'Compute q1.',
        toolCalls: [call('python', { code: 'overall = 40.3\nmen, women = 39.2, 41.3\nprint(overall)' })],
      },
      { content: 'Record q1.', toolCalls: [call('answer', { action: 'add', q_id: Q(1), answer: 47.0 })] },
      (req) => {
        const fixed = users(req).some((u) => u.includes('q1 is the weighted prevalence you printed'));
        return {
          content: 'Fix q1.',
          toolCalls: [call('answer', { action: 'update', q_id: Q(1), answer: fixed ? 40.3 : 47.0 })],
        };
      },
      { content: 'Done.', toolCalls: [call('final_answer', { summary: 'q1' })] },
    ];
    const a = await startScriptedLlm({ script: parentScript });
    const never = (): never => {
      throw new Error('a replayed step called the model');
    };
    const b = await startScriptedLlm({
      script: [
        never,
        never,
        never,
        (req) => ({
          content: 'Fork: q2 as the hint says.',
          toolCalls: [
            call('python', { code: 'print(men, women)' }),
            call('answer', {
              action: 'add',
              q_id: Q(2),
              answer: users(req).some((u) => u.includes('answer q2 from men, women')) ? [39.2, 41.3] : [1, 2],
            }),
          ],
        }),
        { content: 'Fork done.', toolCalls: [call('final_answer', { summary: 'q1 q2' })] },
      ],
    });
    try {
      const base = [
        '--suite',
        'longda',
        '--root',
        ROOT,
        '--block',
        BLOCK,
        '--agent',
        'llm',
        '--store',
        store,
        '--json',
      ];
      let t = io(dir);
      assert.equal(
        await main(['run', ...base, '--model', 'model-a', '--base-url', a.baseUrl, '--max-steps', '2'], t.io),
        0,
        t.err.join(''),
      );
      const parent = (JSON.parse(t.out.join('').trim()) as { runId: string; status: string }).runId;
      assert.equal((await readRun(store, parent)).status, 'budget_exhausted');

      // Another process drives the run: refused, naming it; nothing recorded.
      const s0 = openStore(store);
      await s0.acquireRunLease(parent, { owner: 'lab-host:4242:feedbeef', host: 'lab-host', pid: 4242 }, 60_000);
      t = io(dir);
      assert.equal(
        await main(['intervene', '--store', store, '--run', parent, '--kind', 'correction', '--text', 'x'], t.io),
        1,
      );
      assert.match(t.err.join(''), /being driven by another process: lab-host:4242:feedbeef \(host lab-host, pid 4242/);
      await s0.releaseRunLease(parent, 'lab-host:4242:feedbeef');
      assert.equal((await s0.getInterventions(parent)).length, 0);
      await s0.close();

      t = io(dir);
      assert.equal(
        await main(
          [
            'intervene',
            '--store',
            store,
            '--run',
            parent,
            '--kind',
            'correction',
            '--text',
            'q1 is the weighted prevalence you printed',
          ],
          t.io,
        ),
        0,
        t.err.join(''),
      );
      assert.match(t.out.join(''), /correction #1 by ana recorded before step 3/);
      t = io(dir);
      assert.equal(
        await main(['run', '--store', store, '--json', '--resume', parent, '--max-steps', '10'], t.io),
        0,
        t.err.join(''),
      );
      assert.equal(a.requests.length, 4);
      assert.ok(
        users(a.requests[2]!.body).includes(
          'Correction from the analyst supervising this run: q1 is the weighted prevalence you printed',
        ),
      );
      const resumed = JSON.parse(t.out.join('').trim()) as {
        status: string;
        answers: { queryId: string; answer: unknown }[];
      };
      assert.equal(resumed.status, 'finished');
      assert.deepEqual(resumed.answers, [{ queryId: Q(1), answer: 40.3 }]);

      // Bad fork points.
      t = io(dir);
      assert.equal(
        await main(
          ['run', '--store', store, '--fork', `${parent}@9`, '--model', 'model-b', '--base-url', b.baseUrl],
          t.io,
        ),
        1,
      );
      assert.match(
        t.err.join(''),
        new RegExp(`fork point 9: is beyond the last step of run ${parent} \\(it has 4 steps\\)`),
      );
      t = io(dir);
      assert.equal(
        await main(['run', '--store', store, '--fork', parent, '--model', 'model-b', '--base-url', b.baseUrl], t.io),
        1,
      );
      assert.match(t.err.join(''), /write it as RUN@STEP/);

      // Fork from step 3 with another model and a hint.
      t = io(dir);
      assert.equal(
        await main(
          [
            'run',
            '--store',
            store,
            '--json',
            '--fork',
            `${parent}@3`,
            '--model',
            'model-b',
            '--base-url',
            b.baseUrl,
            '--hint',
            'answer q2 from men, women',
          ],
          t.io,
        ),
        0,
        t.err.join(''),
      );
      const fork = JSON.parse(t.out.join('').trim()) as {
        runId: string;
        status: string;
        steps: number;
        answers: { queryId: string; answer: unknown }[];
      };
      assert.equal(fork.status, 'finished');
      assert.equal(fork.steps, 5);
      assert.equal(b.requests.length, 2, 'steps 1–3 made no model call');
      assert.equal(a.requests.length, 4, "nor did they call the parent's model");
      const first = users(b.requests[0]!.body);
      assert.deepEqual(first.slice(1), [
        'Correction from the analyst supervising this run: q1 is the weighted prevalence you printed',
        'Hint from the analyst supervising this run: answer q2 from men, women',
      ]);
      assert.ok(
        b.requests[0]!.body.messages.some((m) => m.role === 'tool' && String(m.content).includes('40.3')),
        'the replayed python cell printed 40.3 again',
      );
      assert.deepEqual(fork.answers, [
        { queryId: Q(1), answer: 40.3 },
        { queryId: Q(2), answer: [39.2, 41.3] },
      ]);
      const s = openStore(store);
      try {
        const run = (await s.getRun(fork.runId))!;
        assert.deepEqual(run.params.forkOf, { runId: parent, step: 3 });
        assert.equal(run.model, 'model-b');
        const cells = await s.getCells(fork.runId);
        assert.deepEqual(
          cells.map((c) => [c.stepIndex, c.status, c.replay]),
          [
            [0, 'ok', false],
            [3, 'ok', false],
          ],
          "the recorded cell re-ran in the fork's own kernel; men, women existed for step 4",
        );
        assert.equal((await s.getInterventions(fork.runId)).length, 2);
      } finally {
        await s.close();
      }

      t = io(dir);
      assert.equal(await main(['score', '--store', store, '--all', '--json'], t.io), 0, t.err.join(''));
      const sc = JSON.parse(t.out.join('')) as {
        aggregates: Array<{ model: string; runIds: string[]; metrics: Record<string, number | null> }>;
      };
      assert.deepEqual(
        sc.aggregates.map((x) => [x.model, x.runIds]),
        [
          ['model-a (assisted)', [parent]],
          ['model-b (assisted fork)', [fork.runId]],
        ],
      );
      assert.equal(sc.aggregates[0]!.metrics.interventionsPerRun, 1);
      assert.equal(sc.aggregates[1]!.metrics.interventionsPerRun, 2);
    } finally {
      await a.close();
      await b.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

async function readRun(file: string, id: string) {
  const s = openStore(file);
  try {
    return (await s.getRun(id))!;
  } finally {
    await s.close();
  }
}
