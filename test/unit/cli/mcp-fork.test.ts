/**
 * Forking a run an MCP client drove (issue 24 with issue 20), on the real NHANES block of NCHS Data Brief 508
 * (LongDA, $LOUPE_SHARED), with the SDK's client over stdio (`loupe mcp`, the built CLI: `npm run build` first) and
 * the scripted OpenAI-compatible server: `loupe run --fork RUN@STEP --model M` replays the client's steps up to the
 * fork point without any model call (the recorded Python cell re-runs in the fork's own sandboxed kernel) and Loupe's
 * agent continues; without a model it is refused saying what a fork of an MCP run needs; the parent stays resumable
 * over MCP (`loupe mcp --resume`), and a fork is not continued by an MCP client.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { main } from '../../../src/cli/main.ts';
import { openStore } from '../../../src/core/store/run-store.ts';
import { call, startScriptedLlm, type ChatRequestBody } from '../../helpers/scripted-llm.ts';
import { repoRoot, sharedData } from '../../helpers/shared.ts';

const ROOT = sharedData('longda', 'benchmark');
const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const Q = (i: number) => `NHANES_NCHS Data Brief No. 508_q${i}`;
const CLI = join(repoRoot, 'dist', 'cli.js');

function text(r: unknown): string {
  return (r as { content: { type: string; text?: string }[] }).content.map((x) => x.text ?? '').join('');
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

const toolMessages = (req: ChatRequestBody) =>
  req.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));

test(
  "loupe run --fork of a run recorded by loupe mcp: replays the client's steps without model calls, Loupe's agent continues; the parent resumes over MCP",
  { timeout: 240_000 },
  async () => {
    assert.ok(existsSync(CLI), `${CLI} is missing: run npm run build first`);
    const dir = mkdtempSync(join(tmpdir(), 'loupe-mcp-fork-'));
    const store = join(dir, 'runs.sqlite');
    const never = (): never => {
      throw new Error('a replayed step called the model');
    };
    const llm = await startScriptedLlm({
      script: [
        never,
        never,
        { content: 'Record q2.', toolCalls: [call('python', { code: 'print(men, women)' })] },
        (req) => ({
          content: 'q2.',
          toolCalls: [
            call('answer', {
              action: 'add',
              q_id: Q(2),
              answer: toolMessages(req).at(-1)!.includes('39.2 41.3') ? [39.2, 41.3] : [0, 0],
            }),
          ],
        }),
        { content: 'Done.', toolCalls: [call('final_answer', { summary: 'q1 q2' })] },
      ],
    });
    try {
      // the MCP client's run: two steps, then it disconnects (the run is stopped, resumable)
      const c = new Client({ name: 'fork-test-agent', version: '1.0' });
      await c.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [CLI, 'mcp', '--suite', 'longda', '--root', ROOT, '--block', BLOCK, '--store', store],
          cwd: dir,
          stderr: 'pipe',
        }),
      );
      assert.match(
        text(
          await c.callTool({
            name: 'python',
            arguments: { code: 'overall = 40.3\nmen, women = 39.2, 41.3\nprint(overall)' },
          }),
        ),
        /40\.3/,
      );
      assert.match(
        text(await c.callTool({ name: 'answer', arguments: { action: 'add', q_id: Q(1), answer: 40.3 } })),
        /./,
      );
      assert.match(
        text(
          await c.callTool({ name: 'notes', arguments: { action: 'add', content: 'q1 from the weighted prevalence' } }),
        ),
        /./,
      );
      await c.close();
      const s0 = openStore(store);
      const parent = (await s0.listRuns())[0]!;
      await s0.close();
      assert.equal(parent.agent, 'mcp:fork-test-agent/1.0');
      assert.equal(parent.steps, 3);

      // without a model: refused, saying what continues a fork of an MCP run
      let t = io(dir);
      assert.equal(await main(['run', '--store', store, '--fork', `${parent.id}@2`], t.io), 2, t.err.join(''));
      assert.match(
        t.err.join(''),
        new RegExp(
          `run ${parent.id} was driven by the MCP client fork-test-agent 1\\.0: a fork continues with Loupe's own agent — give --model \\(and --base-url\\)`,
        ),
      );

      // the fork: steps 1–2 replayed without model calls, then Loupe's agent with the scripted model
      t = io(dir);
      assert.equal(
        await main(
          [
            'run',
            '--store',
            store,
            '--json',
            '--fork',
            `${parent.id}@2`,
            '--model',
            'model-b',
            '--base-url',
            llm.baseUrl,
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
      assert.equal(llm.requests.length, 3, 'the two replayed steps made no model call');
      const first = llm.requests[0]!.body;
      assert.deepEqual(
        first.messages
          .filter((m) => m.role === 'assistant')
          .flatMap((m) => m.tool_calls?.map((x) => x.function.name) ?? []),
        ['python', 'answer'],
      );
      assert.ok(toolMessages(first)[0]!.includes('40.3'), 'the replayed python cell printed 40.3 again');
      assert.deepEqual(fork.answers, [
        { queryId: Q(1), answer: 40.3 },
        { queryId: Q(2), answer: [39.2, 41.3] },
      ]);
      const s = openStore(store);
      try {
        const run = (await s.getRun(fork.runId))!;
        assert.deepEqual(run.params.forkOf, { runId: parent.id, step: 2 });
        assert.equal(run.agent, 'llm');
        assert.equal(run.model, 'model-b');
        const steps = await s.getSteps(fork.runId);
        assert.deepEqual(
          steps.map((x) => x.toolCalls[0]?.name),
          ['python', 'answer', 'python', 'answer', 'final_answer'],
        );
        // the fork's own token use is known: the replayed steps cost it nothing, the scripted model's steps count
        assert.deepEqual(
          steps.map((x) => x.usage?.input),
          [0, 0, ...steps.slice(2).map((x) => x.usage!.input)],
        );
        assert.ok(steps.slice(2).every((x) => x.usage!.input > 0));
        assert.notEqual(run.tokens, null);
        const cells = await s.getCells(fork.runId);
        assert.deepEqual(
          cells.map((x) => [x.stepIndex, x.status, x.replay]),
          [
            [0, 'ok', false],
            [2, 'ok', false],
          ],
        );
        const ev = await s.getEvents(fork.runId);
        assert.ok(
          ev.some(
            (e) =>
              e.kind === 'fork' &&
              /steps 1–2 were the MCP client fork-test-agent 1\.0's calls, replayed; Loupe's agent continues with model-b/.test(
                e.message,
              ),
          ),
          JSON.stringify(ev.map((e) => e.message)),
        );
        assert.ok(
          ev.some(
            (e) =>
              e.kind === 'warning' &&
              /^UNCONTAINED parent: the MCP client fork-test-agent declared no sandbox of its own when it drove steps 1–2/.test(
                e.message,
              ),
          ),
          'the parent was uncontained: the fork says so',
        );
        assert.equal((await s.getRun(parent.id))!.steps, 3, 'the parent is unchanged');
      } finally {
        await s.close();
      }

      // a fork is continued by Loupe's agent, not by an MCP client
      t = io(dir);
      assert.equal(await main(['mcp', '--resume', fork.runId, '--store', store], t.io), 1);
      assert.ok(
        t.err
          .join('')
          .includes(
            `run ${fork.runId} is a fork (of run ${parent.id} at step 2) continued by Loupe's own agent, not by an MCP client: continue it with loupe run --resume ${fork.runId}; an MCP client continues the parent with loupe mcp --resume ${parent.id}`,
          ),
        t.err.join(''),
      );

      // the parent still resumes over MCP with nothing lost
      const c2 = new Client({ name: 'fork-test-agent', version: '1.0' });
      await c2.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [CLI, 'mcp', '--resume', parent.id, '--store', store],
          cwd: dir,
          stderr: 'pipe',
        }),
      );
      assert.match(
        text(await c2.callTool({ name: 'notes', arguments: { action: 'list' } })),
        /q1 from the weighted prevalence/,
      );
      assert.match(text(await c2.callTool({ name: 'final_answer', arguments: {} })), /has ended: finished/);
      await c2.close();
      const s2 = openStore(store);
      try {
        const p = (await s2.getRun(parent.id))!;
        assert.equal(p.status, 'finished');
        assert.equal(p.steps, 5);
      } finally {
        await s2.close();
      }
    } finally {
      await llm.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
