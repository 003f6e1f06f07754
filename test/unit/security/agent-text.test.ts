/**
 * Issue 38: agent text is data on the terminal and CLI surfaces. Model text, observations, tool names, MCP client
 * names and stored run rows with ESC/CSI/OSC/DCS sequences, C1 controls, carriage returns or bidi overrides reach the
 * transcript terminal, `loupe runs`, `loupe score` and error messages escaped, never raw; Loupe's own colours still
 * work; an MCP client's name and version are sanitised before they become the stored agent name.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { formatAgentEvent } from '../../../src/core/agent/transcript.ts';
import type { AgentEvent } from '../../../src/core/agent/types.ts';
import { main } from '../../../src/cli/main.ts';
import type { CliIo } from '../../../src/cli/types.ts';
import { openStore } from '../../../src/core/store/run-store.ts';
import { forMessage, hasControls, neutraliseControls, oneLine } from '../../../src/core/util/text-safety.ts';
import { MCP_CLIENT_NAME_MAX, sanitiseClientInfo } from '../../../src/core/runs/mcp/client-identity.ts';
import { McpBlockSession } from '../../../src/core/runs/mcp/session.ts';
import { loadSuite } from '../../../src/core/benchmarks/index.ts';
import { sharedData } from '../../helpers/shared.ts';
import { renderMarkdown } from '../../../src/app/report/report.ts';

/** Every hostile payload of the issue: clear screen, forged line via CR, window title, OSC 8 link, OSC 52 clipboard, DCS, 8-bit CSI, bidi override. */
const HOSTILE = [
  '\x1b[2J\x1b[H',
  'ok\r\x1b[32m■ run finished after 1 steps: done\x1b[0m',
  '\x1b]0;pwned title\x07',
  '\x1b]8;;https://evil.example/\x1b\\click me\x1b]8;;\x1b\\',
  '\x1b]52;c;cm0gLXJmIH4=\x07',
  '\x1bP+q544e\x1b\\',
  '\u009b31mC1 CSI\u009b0m',
  'abc\u202eexe.txt',
  'nul\u0000bell\u0007del\u007f',
].join(' | ');

// eslint-disable-next-line no-control-regex
const ANY_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
/** Loupe's own SGR colour sequences (ESC [ digits m) are the only escapes the transcript may hold. */
// eslint-disable-next-line no-control-regex
const withoutOwnColours = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '').replace(/\r\n/g, '\n');

test('neutraliseControls shows C0, DEL, C1, CR and bidi controls escaped and keeps text, newlines and tabs', () => {
  assert.equal(neutraliseControls('a\x1b[2Jb'), 'a\\x1b[2Jb');
  assert.equal(neutraliseControls('x\r\ny\rz'), 'x\ny\\rz');
  assert.equal(neutraliseControls('t\tn\n'), 't\tn\n');
  assert.equal(neutraliseControls('t\tn\n', { keepNewlines: false, keepTabs: false }), 't\\tn\\n');
  assert.equal(neutraliseControls('\u009b2J'), '\\x9b2J');
  assert.equal(neutraliseControls('abc\u202eexe'), 'abc\\u202eexe');
  assert.equal(neutraliseControls('\u0000\u0007\u007f'), '\\x00\\x07\\x7f');
  assert.equal(neutraliseControls('Grüße — 数据 📊 <b>'), 'Grüße — 数据 📊 <b>', 'printable text is unchanged');
  const out = neutraliseControls(HOSTILE);
  assert.doesNotMatch(out, ANY_CONTROL);
  assert.ok(hasControls(HOSTILE) && !hasControls(out));
  assert.equal(oneLine('a\nb', 10), 'a\\nb');
  assert.equal(oneLine('x'.repeat(20), 5), 'xxxxx…');
  assert.equal(
    forMessage('see [docs](command:workbench.action.terminal.sendSequence?%7B%7D)'),
    'see [docs] (command:workbench.action.terminal.sendSequence?%7B%7D)',
  );
});

test("transcript terminal: agent, model and observation text is neutralised; Loupe's own colours remain", () => {
  const call = { id: 'c1', name: `python${HOSTILE}`, argumentsText: JSON.stringify({ code: `print(1)\n${HOSTILE}` }) };
  const events: AgentEvent[] = [
    { type: 'model-delta', runId: 'r', step: 0, content: HOSTILE },
    { type: 'model-delta', runId: 'r', step: 0, reasoning: HOSTILE },
    { type: 'tool-call', runId: 'r', step: 0, call },
    { type: 'observation', runId: 'r', step: 0, callId: 'c1', observation: HOSTILE, isError: false },
    { type: 'log', runId: 'r', kind: 'warning', message: HOSTILE },
    { type: 'retry', runId: 'r', attempt: 1, delayMs: 1000, reason: HOSTILE },
    { type: 'run-end', runId: 'r', status: 'failed', steps: 1, reason: HOSTILE },
  ] as unknown as AgentEvent[];
  for (const e of events) {
    const s = formatAgentEvent(e, { maxArgChars: 10_000, maxObservationChars: 10_000 });
    assert.ok(s.length > 0, e.type);
    assert.doesNotMatch(withoutOwnColours(s), ANY_CONTROL, `${e.type}: ${JSON.stringify(s)}`);
    assert.doesNotMatch(s.replace(/\r\n/g, ''), /\r/, `${e.type}: no bare carriage return`);
    assert.match(withoutOwnColours(s), /\\x1b\]52;c;/, `${e.type}: the OSC 52 payload is shown, escaped`);
  }
  assert.ok(formatAgentEvent(events[3]!).includes('\x1b[32m  ✔ \x1b[0m'), 'Loupe colours its own marks');
  assert.equal(formatAgentEvent(events[3]!, { color: false }).includes('\x1b'), false);
});

test('sanitiseClientInfo: printable, bounded, no "/", the original kept escaped', () => {
  assert.deepEqual(sanitiseClientInfo('claude-code', '1.0.3'), { name: 'claude-code', version: '1.0.3' });
  assert.deepEqual(sanitiseClientInfo('Visual Studio Code (Insiders)', '1.101.0-insider'), {
    name: 'Visual Studio Code (Insiders)',
    version: '1.101.0-insider',
  });
  const h = sanitiseClientInfo('<img src=x onerror=alert(1)>\x1b[2J\x1b]52;c;eA==\x07', '1.0/../../x\x1b[2J');
  assert.doesNotMatch(h.name, /[<>=/:]/);
  assert.ok(!hasControls(h.name) && !hasControls(h.version));
  assert.doesNotMatch(h.version, /[^A-Za-z0-9._+-]/);
  assert.ok(
    h.sent && !hasControls(h.sent.name) && h.sent.name.includes('\\x1b[2J'),
    'what the client sent is kept, escaped',
  );
  assert.equal(sanitiseClientInfo('x'.repeat(10_000), '1').name.length, MCP_CLIENT_NAME_MAX);
  assert.equal(
    sanitiseClientInfo('other/9.9 (uncontained)', '1').name.includes('/'),
    false,
    'cannot forge another client group',
  );
  assert.deepEqual(sanitiseClientInfo('', undefined), { name: 'unknown-client', version: '0' });
  assert.equal(sanitiseClientInfo('\x1b\x07<>', 'v').name, 'unknown-client', 'nothing printable left');
  assert.equal(sanitiseClientInfo('abc\u202eexe', '1').name, 'abc_exe');
  assert.equal(sanitiseClientInfo(42, {}).name, 'unknown-client');
});

function capture(): CliIo & { text: () => string } {
  const chunks: string[] = [];
  return {
    out: (s) => chunks.push(s),
    err: (s) => chunks.push(s),
    env: { ...process.env },
    cwd: process.cwd(),
    text: () => chunks.join(''),
  };
}

test('loupe runs and loupe score print stored hostile names escaped; a binary answers CSV is not echoed raw', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'loupe-i38-cli-'));
  try {
    const file = join(dir, 'runs.sqlite');
    const st = openStore(file);
    // A row written before client names were validated (or by a colleague's older Loupe).
    await st.createRun({
      id: 'r-hostile',
      suite: 'longda',
      blockId: `blk${HOSTILE}`,
      agent: `mcp:<img src=x onerror=alert(1)>${HOSTILE}/1\x1b[2J`,
      model: `m${HOSTILE}`,
      params: {},
      promptHash: 'h',
      toolSet: 't',
      dataChecksums: {},
      loupeVersion: 't',
      sandbox: 'off',
      workspace: join(dir, 'ws'),
    });
    await st.close();
    const io = capture();
    assert.equal(await main(['runs', '--store', file], io), 0);
    const out = io.text();
    assert.match(out, /r-hostile/);
    assert.doesNotMatch(out, ANY_CONTROL, JSON.stringify(out));
    assert.match(out, /\\x1b\[2J/, 'shown escaped, not dropped');
    assert.equal(out.trim().split('\n').length, 1, 'one run, one line');
    // A LongDA answers CSV with binary bytes in its cells: `loupe score` prints each source it read (official preset:
    // grouped by `source` alone, as LongDA's metric.py; issue 47).
    const bin = join(dir, 'answers.csv');
    const raw = Buffer.from([
      0x1b, 0x5b, 0x32, 0x4a, 0x9b, 0x07, 0x00, 0x0d, 0xff, 0x1b, 0x5d, 0x35, 0x32, 0x3b, 0x63, 0x3b, 0x65, 0x41, 0x3d,
      0x3d, 0x07,
    ]);
    writeFileSync(
      bin,
      Buffer.concat([
        Buffer.from('survey,source,query,answer_structure,answer,my_answer,q_id\nS'),
        raw,
        Buffer.from(','),
        raw,
        Buffer.from(',q,number,1,'),
        raw,
        Buffer.from(',\n'),
      ]),
    );
    const io3 = capture();
    assert.equal(await main(['score', '--longda-answers', bin], io3), 0, io3.text());
    assert.match(io3.text(), /^ +\\x1b\[2J.*: match /m, 'the source name is printed, escaped');
    assert.doesNotMatch(io3.text(), ANY_CONTROL, JSON.stringify(io3.text()));
    // The refusal to resume a run that no MCP client made names the stored agent.
    const st2 = openStore(file);
    await st2.createRun({
      id: 'r-llm',
      suite: 'longda',
      blockId: 'b',
      agent: `llm${HOSTILE}`,
      model: 'm',
      params: {},
      promptHash: 'h',
      toolSet: 't',
      dataChecksums: {},
      loupeVersion: 't',
      sandbox: 'off',
      workspace: join(dir, 'ws2'),
    });
    await st2.close();
    const io5 = capture();
    assert.equal(await main(['mcp', '--store', file, '--resume', 'r-llm', '--sandbox', 'off'], io5), 1);
    assert.match(io5.text(), /was made by llm\\x1b\[2J/);
    assert.doesNotMatch(io5.text(), ANY_CONTROL, JSON.stringify(io5.text()));
    const io4 = capture();
    await main([`no-such-command\x1b[2J`], io4);
    assert.doesNotMatch(io4.text(), ANY_CONTROL);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test(
  'MCP session: a hostile clientInfo is stored as a sanitised agent name; the run still works',
  { timeout: 120_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-i38-mcp-'));
    const store = openStore(join(dir, 'runs.sqlite'));
    try {
      const suite = await loadSuite('blade', sharedData('blade', 'datasets'));
      const block = suite.blocks.find((b) => b.runnable)!;
      const session = new McpBlockSession({
        store,
        suite,
        block,
        runsDir: join(dir, 'runs'),
        kernel: { sandbox: 'off' },
        transport: 'stdio',
      });
      const [a, b] = InMemoryTransport.createLinkedPair();
      await session.server.connect(b);
      const c = new Client({
        name: `<img src=x onerror=alert(1)>\x1b[2J${'A'.repeat(500)}`,
        version: '1.0\x1b]52;c;eA==\x07',
      });
      await c.connect(a);
      await c.callTool({ name: 'python', arguments: { code: 'print(1)' } });
      await c.close();
      const out = (await session.done)!;
      const run = (await store.getRun(out.runId))!;
      assert.ok(!/[<>=]/.test(run.agent) && !hasControls(run.agent), run.agent);
      assert.ok(run.agent.length <= 'mcp:'.length + 64 + 1 + 32, `bounded: ${run.agent.length}`);
      assert.match(run.agent, /^mcp:_img src_x onerror_alert\(1\)___2JA+\/1\.0__52_c_eA___$/);
      assert.ok(
        run.params.mcp?.clientSent?.name.includes('\\x1b[2J'),
        'the name as sent is kept, escaped, as evidence',
      );
      const events = await store.getEvents(out.runId);
      assert.ok(
        events.some((e) => /name or version held characters/.test(e.message)),
        'the run records that the name was changed',
      );
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test('loupe report (Markdown): stored model and client names in tables are escaped, controls shown', () => {
  const md = renderMarkdown({
    title: 't',
    generatedAt: 'now',
    sections: [
      {
        heading: 'h',
        notes: [],
        figures: [],
        tables: [
          {
            caption: 'c',
            header: ['model', 'match'],
            rows: [
              [
                { text: `mcp:<img src=x onerror=alert(1)>[x](javascript:alert(1))${HOSTILE}/1` },
                { text: '0.5 [0.4, 0.6]' },
              ],
            ],
          },
        ],
      },
    ],
  } as never);
  const row = md.split('\n').find((l) => l.startsWith('| mcp'))!;
  assert.ok(row, md);
  assert.doesNotMatch(row, /(?<!\\)<|\]\(/, row);
  assert.ok(!hasControls(md), 'no control character in the report');
  assert.equal(row.split(/(?<!\\)\|/).length, 4, 'one row, two cells');
  assert.match(md, /0\.5 \[0\.4, 0\.6\]/);
});
