/**
 * Child process of `docs-fallback.test.ts` (issue 36): an AnalystBench block whose documents do not share one folder
 * (so the doc tools cannot index the documents' own folder as one root), a run workspace with something planted under
 * each document's workspace name (a link to a host file, a FIFO, a hard link to a host file), and the doc tools
 * (`read_doc`, `search_doc`) called with the real documentation index. Prints `RESULT <json>`: the observations and
 * whether the host folder changed. A FIFO read blocks the whole event loop, so the parent watches this process.
 * Usage: node docs-fallback.child.ts <plant>
 */
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import {
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeAnalystDocIndexes, createAnalystToolSet } from '../../../src/core/benchmarks/analystbench/toolset.ts';
import type { Block } from '../../../src/core/suites/types.ts';
import type { RunState, ToolContext } from '../../../src/core/agent/types.ts';
import { nullLogger } from '../../../src/core/util/log.ts';

/** The plants this child knows. */
export type DocsFallbackPlant = 'link to a host file' | 'FIFO' | 'hard link to a host file';

/** What the child reports. */
export interface DocsFallbackResult {
  observations: string[];
  hostChanged: boolean;
}

const HOST_SECRET = 'HOSTSECRET-3e1f of the user, never for the agent';

function hostSnapshot(dir: string): string {
  return readdirSync(dir)
    .sort()
    .map((n) => {
      const st = statSync(join(dir, n));
      return `${n} ${st.mtimeMs} ${st.size} ${createHash('sha256')
        .update(readFileSync(join(dir, n)))
        .digest('hex')}`;
    })
    .join('\n');
}

const plant = process.argv[2] as DocsFallbackPlant;
const base = mkdtempSync(join(tmpdir(), 'loupe-docs-fallback-'));
process.env.LOUPE_CACHE = join(base, 'cache');
try {
  const host = join(base, 'host');
  mkdirSync(host);
  writeFileSync(join(host, 'secret.md'), `# Secret\n\n${HOST_SECRET}\n`);
  // the suite's own documents, in two folders and under other names than the workspace's
  const suite = join(base, 'suite');
  mkdirSync(join(suite, 'A'), { recursive: true });
  mkdirSync(join(suite, 'B'), { recursive: true });
  writeFileSync(join(suite, 'A', 'guide.md'), '# Guide\n\nThe SUITEWORD codebook explains the weights.\n');
  writeFileSync(join(suite, 'B', 'notes-original.md'), '# Notes\n\nMore SUITEWORD text.\n');
  const block = {
    id: 'b1',
    suite: 'analystbench',
    suiteId: 'analystbench:fallback',
    title: 'fallback',
    items: [],
    visible: {
      data: [],
      missing: [],
      instruction: 'Write a report.',
      tableOfContents: '1. Intro',
      docs: [
        { rel: 'docs/guide.md', path: join(suite, 'A', 'guide.md'), size: 0 },
        { rel: 'docs/notes.md', path: join(suite, 'B', 'notes-original.md'), size: 0 },
      ],
    },
    hidden: { files: [] },
    runnable: true,
    problems: [],
  } as unknown as Block;
  // the run workspace, where the agent planted something under each document's name
  const ws = join(base, 'ws');
  mkdirSync(join(ws, 'docs'), { recursive: true });
  for (const rel of ['docs/guide.md', 'docs/notes.md']) {
    const p = join(ws, rel);
    if (plant === 'link to a host file') symlinkSync(join(host, 'secret.md'), p);
    else if (plant === 'FIFO') execFileSync('mkfifo', [p]);
    else linkSync(join(host, 'secret.md'), p);
  }
  const before = hostSnapshot(host);
  const ts = createAnalystToolSet({ input: 'toc' });
  const state: RunState = { extra: {}, benchmark: {} };
  const ctx: ToolContext = {
    runId: 'run-1',
    stepIndex: 0,
    workspace: ws,
    block,
    taskPrompt: 'task',
    state,
    kernel: () => Promise.reject(new Error('no kernel here')),
    execute: () => Promise.reject(new Error('no kernel here')),
    signal: new AbortController().signal,
    log: nullLogger,
    sandbox: 'bubblewrap',
  };
  const observations: string[] = [];
  for (const [name, args] of [
    ['read_doc', { doc_path: 'docs/guide.md' }],
    ['search_doc', { keyword: 'SUITEWORD' }],
    ['search_doc', { keyword: 'HOSTSECRET' }],
  ] as const) {
    const t = ts.tools.find((x) => x.name === name)!;
    const r = await t.run(args, ctx);
    observations.push(`${name}: ${r.observation}`);
  }
  await closeAnalystDocIndexes();
  const result: DocsFallbackResult = { observations, hostChanged: hostSnapshot(host) !== before };
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
} finally {
  rmSync(base, { recursive: true, force: true });
}
