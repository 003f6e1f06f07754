/**
 * Issue 36 through `loupe run` with a real sandboxed kernel: agent code plants a FIFO named `report.md` and a link
 * `figures -> <a host folder>`, makes a figure and calls write_report. The run ends (the CLI runs in a child process
 * that is killed if it hangs), the host folder gets nothing, and the agent is told which path was refused and why.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openStore } from '../../../src/core/store/run-store.ts';
import { writeAnalystbenchDemo } from '../../helpers/fixtures.ts';
import { call, startScriptedLlm, type ChatRequestBody } from '../../helpers/scripted-llm.ts';
import { repoRoot } from '../../helpers/shared.ts';

const lastTool = (req: ChatRequestBody) =>
  String([...req.messages].reverse().find((m) => m.role === 'tool')?.content ?? '');

test(
  'loupe run: a FIFO named report.md and a figures link to a host folder, planted by agent code, neither hang the run nor reach the host',
  { timeout: 300_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-run-fifo-'));
    const hostDir = join(dir, 'host-folder');
    mkdirSync(hostDir);
    const seen: string[] = [];
    const srv = await startScriptedLlm({
      script: [
        {
          content: 'Plant.',
          toolCalls: [
            call('python', {
              code: `import os\nos.mkfifo('report.md')\nos.symlink(${JSON.stringify(hostDir)}, 'figures')\nplt.plot([1, 2, 3])`,
            }),
          ],
        },
        (req) => {
          seen.push(lastTool(req));
          return {
            content: 'Report.',
            toolCalls: [call('write_report', { markdown: '# Report\n\nObesity was 40.3% overall.\n' })],
          };
        },
        (req) => {
          seen.push(lastTool(req));
          return { content: 'Done.', toolCalls: [call('write_report', { markdown: '# Report\n\nStill here.\n' })] };
        },
      ],
    });
    try {
      const suite = writeAnalystbenchDemo(join(dir, 'suite'));
      const store = join(dir, 'runs.sqlite');
      const child = spawn(
        process.execPath,
        [
          '--no-warnings',
          join(repoRoot, 'src', 'cli.ts'),
          'run',
          '--suite',
          'analystbench',
          '--root',
          suite,
          '--blocks',
          'all',
          '--agent',
          'llm',
          '--model',
          'scripted',
          '--base-url',
          srv.baseUrl,
          '--max-steps',
          '3',
          '--store',
          store,
          '--results',
          join(dir, 'results'),
          '--json',
        ],
        { cwd: dir, env: { ...process.env, OPENAI_API_KEY: 'sk-test' }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
      });
      child.stderr.on('data', (c: Buffer) => {
        err += c.toString();
      });
      const kill = setTimeout(() => child.kill('SIGKILL'), 240_000);
      const [code, signal] = await new Promise<[number | null, string | null]>((r) =>
        child.on('exit', (c, s) => r([c, s])),
      );
      clearTimeout(kill);
      assert.equal(signal, null, `loupe run hung (killed after 240 s): ${out}${err}`);
      assert.notEqual(code, null, err);
      assert.deepEqual(readdirSync(hostDir), [], 'nothing was written into the host folder through the planted link');
      assert.match(
        seen[0] ?? '',
        /Not saved: figures\/fig-\d+-1\.png: is \(or passes through\) a symbolic link/,
        `python observation: ${seen[0]}`,
      );
      assert.match(seen[1] ?? '', /report\.md: is a FIFO/, `write_report observation: ${seen[1]}`);
      const line = JSON.parse(out.trim().split('\n')[0]!) as { runId: string };
      const s = openStore(store);
      const arts = await s.artefacts.list(line.runId);
      s.close();
      assert.ok(
        !arts.some((a) => a.path === 'report.md' || a.path.startsWith('figures/')),
        `nothing planted was captured: ${arts.map((a) => a.path).join(', ')}`,
      );
    } finally {
      await srv.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
