/**
 * Issue 36, the documentation tools' fallback: when an AnalystBench block's documents do not share one folder, the doc
 * tools used to index the run's workspace, where the agent can plant a link, FIFO or hard link under a document's
 * name (a host file's text then became the agent's "documentation"; a FIFO hung the run). They read the suite's own
 * files instead. Each plant runs in a child process (`docs-fallback.child.ts`) watched for a hang.
 */
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import type { DocsFallbackPlant, DocsFallbackResult } from './docs-fallback.child.ts';

const PLANTS: DocsFallbackPlant[] = ['link to a host file', 'FIFO', 'hard link to a host file'];

/** Runs one plant; undefined when the child was silent for `hangMs` (killed: hung). */
async function runChild(
  plant: DocsFallbackPlant,
  hangMs: number,
): Promise<{ result?: DocsFallbackResult; stderr: string }> {
  const child = spawn(process.execPath, [join(import.meta.dirname, 'docs-fallback.child.ts'), plant], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_OPTIONS: '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON' },
  });
  let out = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    out += String(d);
  });
  child.stderr.on('data', (d) => {
    stderr = (stderr + String(d)).slice(-4000);
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), hangMs);
  await new Promise<void>((res) => child.on('close', () => res()));
  clearTimeout(timer);
  const line = out.split('\n').find((l) => l.startsWith('RESULT '));
  return { result: line ? (JSON.parse(line.slice(7)) as DocsFallbackResult) : undefined, stderr };
}

for (const plant of PLANTS) {
  test(
    `AnalystBench doc tools, documents in several folders, ${plant} planted under each document's workspace name: the suite's files are read, the host's never, nothing hangs`,
    { timeout: 5 * 60_000 },
    async () => {
      const { result, stderr } = await runChild(plant, 90_000);
      assert.ok(result, `the doc tools hung or crashed (killed after 90 s of silence): ${stderr}`);
      const text = result.observations.join('\n');
      assert.ok(!text.includes('HOSTSECRET-3e1f'), `host file text reached the agent:\n${text}`);
      assert.equal(result.hostChanged, false);
      // the clear observation: the suite's own document, under the name the agent knows
      assert.match(result.observations[0]!, /SUITEWORD codebook/, result.observations[0]);
      assert.match(result.observations[1]!, /docs\/guide\.md/, result.observations[1]);
      assert.match(result.observations[1]!, /docs\/notes\.md/, result.observations[1]);
    },
  );
}
