/**
 * `loupe mcp` against third-party MCP tools (issue 24): the MCP conformance suite (`@modelcontextprotocol/conformance
 * server --url`) over streamable HTTP for the scenarios that apply to a benchmark block's server (those that read the
 * suite's own fixture tools or resources, e.g. `resources-read-text` with `test://static-text`, do not), and the
 * inspector's CLI (`@modelcontextprotocol/inspector-cli`) over stdio on the NHANES DB508 block: it lists the tools and
 * calls `search_doc` and `python`. Spawns the built CLI (`npm run build` first).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../../src/core/store/run-store.ts';
import { repoRoot, sharedData } from '../../helpers/shared.ts';

const ROOT = sharedData('longda', 'benchmark');
const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const CLI = join(repoRoot, 'dist', 'cli.js');
const CONFORMANCE = join(repoRoot, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const INSPECTOR = join(repoRoot, 'node_modules', '@modelcontextprotocol', 'inspector-cli', 'build', 'cli.js');
const SCENARIOS = ['server-initialize', 'ping', 'tools-list', 'prompts-list', 'resources-list', 'dns-rebinding-protection'];

function run(args: string[], cwd: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (b: Buffer) => (out += b.toString()));
    c.stderr.on('data', (b: Buffer) => (err += b.toString()));
    c.on('exit', (code) => resolve({ code, out, err }));
  });
}

test('MCP conformance suite over streamable HTTP: initialize, ping, tools, prompts, resources, DNS rebinding protection', { timeout: 240_000 }, async () => {
  assert.ok(existsSync(CLI), 'run npm run build first');
  const dir = mkdtempSync(join(tmpdir(), 'loupe-mcp-conf-'));
  const server = spawn(process.execPath, [CLI, 'mcp', '--suite', 'longda', '--root', ROOT, '--block', BLOCK, '--store', join(dir, 's.sqlite'), '--transport', 'http', '--json'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const first = await new Promise<string>((resolve, reject) => {
      let buf = '';
      server.stdout.on('data', (b: Buffer) => {
        buf += b.toString();
        if (buf.includes('\n')) resolve(buf.slice(0, buf.indexOf('\n')));
      });
      server.once('exit', (code) => reject(new Error(`loupe mcp exited ${code}`)));
    });
    const { url, token } = JSON.parse(first) as { url: string; token: string };
    for (const scenario of SCENARIOS) {
      const r = await run([CONFORMANCE, 'server', '--url', `${url}?token=${encodeURIComponent(token)}`, '--scenario', scenario], dir);
      assert.equal(r.code, 0, `${scenario}: ${r.out}${r.err}`);
      assert.match(r.out, /Passed: (\d+)\/\1, 0 failed/, `${scenario}: ${r.out}`);
    }
  } finally {
    server.kill('SIGINT');
    await new Promise((r) => server.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the inspector CLI lists the tools of a LongDA block over stdio and calls search_doc and python; each call is a recorded run', { timeout: 240_000 }, async () => {
  assert.ok(existsSync(CLI), 'run npm run build first');
  const dir = mkdtempSync(join(tmpdir(), 'loupe-mcp-insp-'));
  const store = join(dir, 's.sqlite');
  const server = [process.execPath, CLI, 'mcp', '--suite', 'longda', '--root', ROOT, '--block', BLOCK, '--store', store];
  // inspector-cli 1.0.3 reads its own package.json through a path relative to the working folder ("../package.json"
  // must exist there): run it from a folder of this checkout.
  const cwd = join(repoRoot, 'test');
  try {
    const list = await run([INSPECTOR, '--cli', ...server, '--method', 'tools/list'], cwd);
    assert.equal(list.code, 0, list.err);
    const tools = (JSON.parse(list.out.slice(list.out.indexOf('{'))) as { tools: { name: string }[] }).tools.map((t) => t.name);
    assert.deepEqual(tools, ['prompt', 'read_doc', 'search_doc', 'retriever', 'notes', 'answer', 'save_code', 'python', 'final_answer']);
    const search = await run([INSPECTOR, '--cli', ...server, '--method', 'tools/call', '--tool-name', 'search_doc', '--tool-arg', 'keyword=obesity'], cwd);
    assert.equal(search.code, 0, search.err);
    assert.match(search.out, /Found \d+ matches for 'obesity'/);
    const py = await run([INSPECTOR, '--cli', ...server, '--method', 'tools/call', '--tool-name', 'python', '--tool-arg', 'code=print(6*7)'], cwd);
    assert.equal(py.code, 0, py.err);
    assert.match(py.out, /"text": "42/);
    const s = openStore(store);
    try {
      const runs = await s.listRuns();
      // listing tools records nothing; each call is one step of its own run (one connection, one run)
      assert.equal(runs.length, 2);
      assert.ok(runs.every((r) => r.agent.startsWith('mcp:inspector-cli/') && r.steps === 1), JSON.stringify(runs.map((r) => [r.agent, r.steps])));
      assert.deepEqual((await Promise.all(runs.map(async (r) => (await s.getSteps(r.id))[0]!.toolCalls[0]!.name))).sort(), ['python', 'search_doc']);
    } finally {
      await s.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
