/**
 * `loupe mcp` against third-party MCP tools (issue 24): the MCP conformance suite (`@modelcontextprotocol/conformance
 * server --url`) over streamable HTTP for the scenarios that apply to a benchmark block's server (those that call the
 * suite's own fixture tools do not). `resources-read-text` reads the suite's fixed URI `test://static-text`: it runs
 * through a loopback proxy that changes only that URI, in the request, to the text resource of a real documentation
 * file of the block (`loupe-doc:///docs/Demographics/DEMO_L.pdf?as=text`), so its checks (contents, uri, mimeType,
 * text) hold for Loupe's own resource; the response is passed on unchanged. And the
 * inspector's CLI (`@modelcontextprotocol/inspector-cli`) over stdio on the NHANES DB508 block: it lists the tools and
 * calls `search_doc` and `python`. Spawns the built CLI (`npm run build` first).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
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
const SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'prompts-list',
  'resources-list',
  'dns-rebinding-protection',
];

/**
 * A loopback HTTP proxy to `target` that rewrites the `uri` of a JSON-RPC `resources/read` request from `from` to `to`
 * (nothing else: headers but Host, other requests and every response pass unchanged). @returns its URL (same path and query).
 */
async function rewritingProxy(
  target: URL,
  from: string,
  to: string,
): Promise<{ url: string; rewritten: () => number; close(): Promise<void> }> {
  let n = 0;
  const srv = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (b: Buffer) => chunks.push(b));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      try {
        const msg = JSON.parse(body.toString('utf8')) as { method?: string; params?: { uri?: string } };
        if (msg.method === 'resources/read' && msg.params?.uri === from) {
          msg.params.uri = to;
          body = Buffer.from(JSON.stringify(msg));
          n++;
        }
      } catch {
        // not JSON (a GET, an empty body): forwarded as is
      }
      const headers: Record<string, string | string[] | undefined> = { ...req.headers, host: target.host };
      if (chunks.length) headers['content-length'] = String(body.length);
      const up = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      up.end(body);
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${target.pathname}${target.search}`,
    rewritten: () => n,
    close: () =>
      new Promise((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  };
}

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

test(
  'MCP conformance suite over streamable HTTP: initialize, ping, tools, prompts, resources (list, read text), DNS rebinding protection',
  { timeout: 240_000 },
  async () => {
    assert.ok(existsSync(CLI), 'run npm run build first');
    const dir = mkdtempSync(join(tmpdir(), 'loupe-mcp-conf-'));
    const server = spawn(
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
        join(dir, 's.sqlite'),
        '--transport',
        'http',
        '--json',
      ],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
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
        const r = await run(
          [CONFORMANCE, 'server', '--url', `${url}?token=${encodeURIComponent(token)}`, '--scenario', scenario],
          dir,
        );
        assert.equal(r.code, 0, `${scenario}: ${r.out}${r.err}`);
        assert.match(r.out, /Passed: (\d+)\/\1, 0 failed/, `${scenario}: ${r.out}`);
      }
      // resources-read-text: the suite's fixture URI stands for the text of a real documentation file of the block
      const proxy = await rewritingProxy(
        new URL(`${url}?token=${encodeURIComponent(token)}`),
        'test://static-text',
        'loupe-doc:///docs/Demographics/DEMO_L.pdf?as=text',
      );
      try {
        const r = await run([CONFORMANCE, 'server', '--url', proxy.url, '--scenario', 'resources-read-text'], dir);
        assert.equal(r.code, 0, `resources-read-text: ${r.out}${r.err}`);
        assert.match(r.out, /Passed: (\d+)\/\1, 0 failed/, `resources-read-text: ${r.out}`);
        assert.equal(proxy.rewritten(), 1, "the scenario read the fixture URI once, answered by Loupe's resource");
      } finally {
        await proxy.close();
      }
    } finally {
      server.kill('SIGINT');
      await new Promise((r) => server.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'the inspector CLI lists the tools of a LongDA block over stdio and calls search_doc and python; each call is a recorded run',
  { timeout: 240_000 },
  async () => {
    assert.ok(existsSync(CLI), 'run npm run build first');
    const dir = mkdtempSync(join(tmpdir(), 'loupe-mcp-insp-'));
    const store = join(dir, 's.sqlite');
    const server = [
      process.execPath,
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
    ];
    // inspector-cli 1.0.3 reads its own package.json through a path relative to the working folder ("../package.json"
    // must exist there): run it from a folder of this checkout.
    const cwd = join(repoRoot, 'test');
    try {
      const list = await run([INSPECTOR, '--cli', ...server, '--method', 'tools/list'], cwd);
      assert.equal(list.code, 0, list.err);
      const tools = (JSON.parse(list.out.slice(list.out.indexOf('{'))) as { tools: { name: string }[] }).tools.map(
        (t) => t.name,
      );
      assert.deepEqual(tools, [
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
      const search = await run(
        [
          INSPECTOR,
          '--cli',
          ...server,
          '--method',
          'tools/call',
          '--tool-name',
          'search_doc',
          '--tool-arg',
          'keyword=obesity',
        ],
        cwd,
      );
      assert.equal(search.code, 0, search.err);
      assert.match(search.out, /Found \d+ matches for 'obesity'/);
      const py = await run(
        [
          INSPECTOR,
          '--cli',
          ...server,
          '--method',
          'tools/call',
          '--tool-name',
          'python',
          '--tool-arg',
          'code=print(6*7)',
        ],
        cwd,
      );
      assert.equal(py.code, 0, py.err);
      assert.match(py.out, /"text": "42/);
      const s = openStore(store);
      try {
        const runs = await s.listRuns();
        // listing tools records nothing; each call is one step of its own run (one connection, one run)
        assert.equal(runs.length, 2);
        assert.ok(
          runs.every((r) => r.agent.startsWith('mcp:inspector-cli/') && r.steps === 1),
          JSON.stringify(runs.map((r) => [r.agent, r.steps])),
        );
        assert.deepEqual(
          (await Promise.all(runs.map(async (r) => (await s.getSteps(r.id))[0]!.toolCalls[0]!.name))).sort(),
          ['python', 'search_doc'],
        );
      } finally {
        await s.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
