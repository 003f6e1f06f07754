/**
 * `loupe mcp --store postgres://...` (issue 26 on issue 24): an MCP client's run on a DDR block (MIMIC-IV demo) is
 * recorded in a PostgreSQL team store — run, steps, the finishing result — and a colleague's connection reads it;
 * the run folder stays on this machine (./.loupe/runs). Spawns the built CLI (`npm run build` first).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readDdrResult } from '../../../src/core/benchmarks/ddr/toolset.ts';
import { openStoreAt } from '../../../src/core/store/open.ts';
import { mimicSubsetDb } from '../../helpers/toolsets.ts';
import { startPg } from '../../helpers/pg.ts';
import { repoRoot } from '../../helpers/shared.ts';

const CLI = join(repoRoot, 'dist', 'cli.js');

function text(r: unknown): string {
  return (r as { content: { type: string; text?: string }[] }).content.map((x) => x.text ?? '').join('');
}

test("loupe mcp records an MCP client's run in a PostgreSQL team store", { timeout: 120_000 }, async () => {
  assert.ok(existsSync(CLI), `${CLI} is missing: run npm run build first`);
  const dir = mkdtempSync(join(tmpdir(), 'loupe-mcp-pg-'));
  const db = mimicSubsetDb(['hosp/patients', 'hosp/admissions']);
  const srv = await startPg({ fsync: 'off' });
  try {
    const url = await srv.createDatabase('mcp_team');
    assert.doesNotMatch(url, new RegExp(process.env[srv.passwordEnv]!), 'the password is not in the URL');
    const c = new Client({ name: 'team-agent', version: '1.0' });
    const stderr: string[] = [];
    const transport = new StdioClientTransport({
      command: process.execPath,
      cwd: dir,
      stderr: 'pipe',
      env: { ...process.env } as Record<string, string>,
      args: [
        CLI,
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
        url,
        '--sandbox',
        'off',
      ],
    });
    transport.stderr?.on('data', (b: Buffer) => stderr.push(b.toString()));
    await c.connect(transport);
    const q = text(
      await c.callTool({
        name: 'execute_query',
        arguments: { sql: 'SELECT gender, anchor_age FROM patients WHERE subject_id = 10001217' },
      }),
    );
    assert.match(q, /"gender"/);
    const fin = await c.callTool({ name: 'finish', arguments: { insights: ['The patient is a woman aged 52.'] } });
    assert.match(text(fin), /has ended: finished/, stderr.join(''));
    await c.close();
    assert.doesNotMatch(
      stderr.join(''),
      new RegExp(process.env[srv.passwordEnv]!),
      "no password in the server's messages",
    );
    // a colleague's connection to the team store sees the run, its steps and its result
    const s = await openStoreAt(url);
    try {
      const [run] = await s.listRuns();
      assert.ok(run, stderr.join(''));
      assert.equal(run.agent, 'mcp:team-agent/1.0');
      assert.equal(run.status, 'finished', run.statusReason ?? '');
      assert.equal(run.tokens, null, "an MCP client's token use is unknown");
      const steps = await s.getSteps(run.id);
      assert.equal(steps.length, 2);
      assert.equal(steps.at(-1)!.assistant.content, 'FINISH: - The patient is a woman aged 52.');
      assert.equal((await readDdrResult(s, run.id))!.finalReport, 'FINISH: - The patient is a woman aged 52.');
      // the run folder is on this machine, under ./.loupe/runs of the server's working directory
      assert.equal(dirname(dirname(run.storedWorkspace)), join(dir, '.loupe', 'runs'));
      assert.ok(readdirSync(join(dir, '.loupe', 'runs')).includes(run.id));
    } finally {
      await s.close();
    }
  } finally {
    srv.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(dirname(db), { recursive: true, force: true });
  }
});
