/**
 * The MCP block session in process (issue 24), with the SDK's client over its in-memory transport: a BLADE block's
 * tools are its tool set (`python`, `submit_analysis`), the hidden ground truth is neither a resource nor readable;
 * an unknown tool and a call before initialisation record nothing; two parallel calls become two steps in order.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { loadSuite } from '../../../../../src/core/benchmarks/index.ts';
import { blockToolSet } from '../../../../../src/core/runs/runner.ts';
import { finishMessage, McpBlockSession } from '../../../../../src/core/runs/mcp/session.ts';
import { openStore } from '../../../../../src/core/store/run-store.ts';
import { sharedData } from '../../../../helpers/shared.ts';

test(
  "MCP session on a BLADE block: the tool set as Loupe's agent sees it, python sandboxed, hidden files out of reach, parallel calls one step each",
  { timeout: 120_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-mcp-blade-'));
    const store = openStore(join(dir, 'runs.sqlite'));
    try {
      const suite = await loadSuite('blade', sharedData('blade', 'datasets'));
      const block = suite.blocks.find((b) => b.runnable && b.hidden.files.length > 0)!;
      const session = new McpBlockSession({
        store,
        suite,
        block,
        runsDir: join(dir, 'runs'),
        kernel: { sandbox: 'bubblewrap' },
        transport: 'stdio',
      });
      const ts = blockToolSet({ block, agent: 'llm' });
      const PROBE = `try:\n    open(${JSON.stringify(block.hidden.files[0])}).read(10)\n    print('hidden: READABLE')\nexcept Exception as e:\n    print('hidden:', type(e).__name__)`;
      assert.equal(session.finishTool, null, 'BLADE ends on its submit tool: no finish variant');
      const [a, b] = InMemoryTransport.createLinkedPair();
      await session.server.connect(b);
      const c = new Client({ name: 'inproc', version: '0.0.1' });
      await c.connect(a);
      const tools = (await c.listTools()).tools;
      assert.deepEqual(
        tools.map((t) => t.name),
        ts.tools.map((t) => t.name),
      );
      assert.ok(tools.some((t) => t.name === 'python') && tools.some((t) => t.name === 'submit_analysis'));
      for (const t of ts.tools) assert.equal(tools.find((x) => x.name === t.name)!.description, t.description);
      const hiddenPaths = block.hidden.files;
      const resources = (await c.listResources()).resources;
      for (const r of resources) assert.ok(!hiddenPaths.some((h) => h.endsWith(r.name)), `${r.name} is hidden`);
      await assert.rejects(c.callTool({ name: 'shell', arguments: { cmd: 'ls' } }), /unknown tool 'shell'/);
      const [one, two] = await Promise.all([
        c.callTool({ name: 'python', arguments: { code: PROBE } }),
        c.callTool({ name: 'python', arguments: { code: 'print("second")' } }),
      ]);
      assert.match(JSON.stringify(one.content), /hidden: (FileNotFoundError|PermissionError)/);
      assert.match(JSON.stringify(two.content), /second/);
      await c.close();
      const out = await session.done;
      assert.ok(out);
      assert.equal(out.status, 'cancelled', 'a client that disconnects stops the run (resumable)');
      const steps = await store.getSteps(out.runId);
      assert.deepEqual(
        steps.map((s) => JSON.parse(s.toolCalls[0]!.argumentsText).code),
        [PROBE, 'print("second")'],
      );
      assert.ok(steps.every((s) => s.usage === null));
      const run = (await store.getRun(out.runId))!;
      assert.equal(run.agent, 'mcp:inproc/0.0.1');
      assert.equal(run.tokens, null);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'MCP session: a client idle past the wall clock budget ends the run budget_exhausted; its next call is refused',
  { timeout: 60_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-mcp-wall-'));
    const store = openStore(join(dir, 'runs.sqlite'));
    try {
      const suite = await loadSuite('blade', sharedData('blade', 'datasets'));
      const block = suite.blocks.find((b) => b.runnable)!;
      const session = new McpBlockSession({
        store,
        suite,
        block,
        runsDir: join(dir, 'runs'),
        kernel: { sandbox: 'bubblewrap' },
        transport: 'stdio',
        budget: { maxWallMs: 8000 },
      }); // room for the first cell's kernel start on a loaded machine
      const [a, b] = InMemoryTransport.createLinkedPair();
      await session.server.connect(b);
      const c = new Client({ name: 'idle', version: '1' });
      await c.connect(a);
      await c.callTool({ name: 'python', arguments: { code: 'print(1)' } });
      const out = await session.done;
      assert.equal(out?.status, 'budget_exhausted');
      assert.match(out!.reason, /wall clock budget \(8000 ms\) reached while waiting for the client's next call/);
      await assert.rejects(
        c.callTool({ name: 'python', arguments: { code: 'print(2)' } }),
        /has ended \(budget_exhausted/,
      );
      assert.equal((await store.getSteps(out!.runId)).length, 1);
      await c.close();
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('finishMessage: the FINISH message the finish variant records (bullets after the optional report)', () => {
  assert.equal(finishMessage(['a', ' b ', '']), 'FINISH: - a\n- b');
  assert.equal(finishMessage(['x'], 'Report.'), 'FINISH: Report.\n- x');
});
