/**
 * Child process of `host-paths.test.ts` (issue 36): runs planted-path cases one after the other and prints, for each,
 * `START <n>` before and `RESULT <json>` after. A case that hangs (a FIFO read without O_NONBLOCK blocks the whole
 * event loop, so no in-process timer can catch it) is seen by the parent as a START without a RESULT: it kills this
 * process and starts another for the cases left.
 *
 * One case: a fresh run workspace with one thing planted at one path (a link to a host file, a link to a host folder,
 * a FIFO, a UNIX socket, a hard link to a host file); every tool of the benchmark's tool set is called (no model, no
 * kernel: `execute` answers with one figure), then artefact capture, review, scoring and the results export of the
 * run. The host folder outside is compared before and after.
 * Usage: node host-paths.child.ts <cases.json> <first case index>
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import '../../fixtures/benchmarks/register.ts';
import { getBenchmark } from '../../../src/core/benchmarks/registry.ts';
import { parseOptions } from '../../../src/core/benchmarks/options.ts';
import { parseToolOptions } from '../../../src/core/runs/runner.ts';
import { captureRunEvidence } from '../../../src/core/runs/evidence.ts';
import { scoringSession } from '../../../src/core/eval/run-score.ts';
import { openStore } from '../../../src/core/store/run-store.ts';
import type { Block, Suite } from '../../../src/core/suites/types.ts';
import type { RunState, ToolContext } from '../../../src/core/agent/types.ts';
import { longdaRunState } from '../../../src/core/benchmarks/longda/run-state.ts';
import type { Judge } from '../../../src/core/eval/judges/types.ts';
import { errorMessage } from '../../../src/core/util/errors.ts';
import { nullLogger } from '../../../src/core/util/log.ts';
import { trustedRunFolder } from '../../../src/core/store/run-folder.ts';

/** One case as the parent lists it. */
export interface HostPathCase {
  benchmark: string;
  toolOptions: Record<string, string>;
  /** The declared path's concrete instance (where to plant). */
  path: string;
  plant: 'link to a host file' | 'link to a host folder' | 'FIFO' | 'socket' | 'hard link to a host file';
  /** Tool name → the calls to make, in order (arguments objects). */
  calls: Record<string, Array<Record<string, unknown>>>;
  /** Tools the tool set declares for `path` (their observations must name it). */
  declaredBy: string[];
}

/** What the child reports of one case. */
export interface HostPathResult {
  index: number;
  /** Host files and folders changed (paths relative to the host folder), empty when contained. */
  hostChanged: string[];
  /** Every observation and error message of the case, `<what>: <text>`. */
  messages: string[];
  /** Tools called. */
  tools: string[];
}

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** Everything below `dir`: path → content hash (files), `dir`, `link`, with mtimes. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string, rel: string) => {
    for (const n of readdirSync(d).sort()) {
      const p = join(d, n);
      const r = rel ? `${rel}/${n}` : n;
      const st = lstatSync(p);
      if (st.isDirectory()) {
        out.set(r, `dir ${st.mtimeMs}`);
        walk(p, r);
      } else if (st.isFile()) {
        out.set(r, `file ${createHash('sha256').update(readFileSync(p)).digest('hex')} ${st.mtimeMs} ${st.size}`);
      } else out.set(r, `other ${st.mtimeMs}`);
    }
  };
  walk(dir, '');
  return out;
}

async function plant(
  ws: string,
  rel: string,
  kind: HostPathCase['plant'],
  host: { file: string; dir: string },
): Promise<Server | undefined> {
  const p = join(ws, rel);
  mkdirSync(dirname(p), { recursive: true });
  if (kind === 'link to a host file') symlinkSync(host.file, p);
  else if (kind === 'link to a host folder') symlinkSync(host.dir, p);
  else if (kind === 'FIFO') execFileSync('mkfifo', [p]);
  else if (kind === 'hard link to a host file') linkSync(host.file, p);
  else {
    const srv = createServer(() => undefined);
    await new Promise<void>((res, rej) => srv.once('error', rej).listen(p, () => res()));
    return srv;
  }
  return undefined;
}

const judge: Judge = {
  id: 'no-judge',
  judge: async () => {
    throw new Error('no judge in the containment test');
  },
};

async function runCase(c: HostPathCase, index: number, tmp: string): Promise<HostPathResult> {
  const def = getBenchmark(c.benchmark);
  const root = join(tmp, `case-${index}`);
  const host = { file: join(root, 'host', 'secret.txt'), dir: join(root, 'host', 'folder') };
  mkdirSync(host.dir, { recursive: true });
  writeFileSync(host.file, 'HOST SECRET\n');
  writeFileSync(join(host.dir, 'inside.txt'), 'host folder file\n');
  const ws = join(root, 'runs', 'run-1', 'workspace');
  mkdirSync(ws, { recursive: true });
  const srv = await plant(ws, c.path, c.plant, host);
  const before = snapshot(join(root, 'host'));
  const messages: string[] = [];
  const block: Block = {
    id: 'b1',
    suite: def.kind,
    suiteId: `${def.kind}:containment`,
    title: 'containment',
    items: [],
    visible: { data: [], docs: [], missing: [], instruction: 'Write a report.', tableOfContents: '1. Intro' },
    hidden: { files: [] },
    runnable: true,
    problems: [],
  } as unknown as Block;
  const store = openStore(':memory:');
  const tools: string[] = [];
  try {
    const ts = def.toolSet({ block, agent: 'llm', options: parseToolOptions(def.kind, c.toolOptions) });
    await store.createRun({
      id: 'run-1',
      suite: def.kind,
      blockId: block.id,
      agent: 'llm',
      model: 'm',
      params: {},
      promptHash: 'h',
      toolSet: ts.id,
      dataChecksums: {},
      loupeVersion: 't',
      sandbox: 'bubblewrap',
      workspace: ws,
    });
    const state: RunState = { extra: {}, benchmark: {} };
    const ctx: ToolContext = {
      runId: 'run-1',
      stepIndex: 0,
      workspace: ws,
      block,
      taskPrompt: 'task',
      state,
      kernel: () => Promise.reject(new Error('no kernel in the containment test')),
      execute: async () => ({ status: 'ok', stdout: '', stderr: '', figures: [{ png: PNG }], durationMs: 1 }),
      signal: new AbortController().signal,
      log: nullLogger,
      sandbox: 'bubblewrap',
    };
    for (const t of ts.tools) {
      for (const args of c.calls[t.name] ?? []) {
        tools.push(t.name);
        try {
          const r = await t.run(args, ctx);
          messages.push(`${t.name}: ${r.observation}`);
        } catch (e) {
          messages.push(`${t.name} threw: ${errorMessage(e)}`);
        }
      }
    }
    await store.commitStep(
      {
        runId: 'run-1',
        index: 0,
        startedAt: new Date().toISOString(),
        endedAt: new Date().toISOString(),
        latencyMs: 0,
        toolMs: 0,
        assistant: { role: 'assistant', content: 'x' },
        toolCalls: [],
        extraMessages: [],
        usage: null,
        costUsd: null,
        finishReason: 'stop',
      } as never,
      { extra: state.extra, notes: longdaRunState(state).notes },
    );
    await store.updateRun('run-1', { status: 'finished' } as never);
    const run = (await store.getRun('run-1'))!;
    const folder = trustedRunFolder(run, join(root, 'runs'));
    const capture = await captureRunEvidence(store, run, folder);
    messages.push(`capture: stored ${capture?.stored.join(', ') || 'nothing'}`);
    try {
      const src = await def.review.sectionsOf(store, run, folder);
      messages.push(`review: ${src ? JSON.stringify(src).slice(0, 200) : 'nothing to review'}`);
    } catch (e) {
      messages.push(`review threw: ${errorMessage(e)}`);
    }
    const session = scoringSession();
    try {
      const suite = {
        id: block.suiteId,
        kind: def.kind,
        title: 'c',
        version: '1',
        root: root,
        source: { kind: 'local', root },
        blocks: [block],
        problems: [],
      } as unknown as Suite;
      const s = await def.score({
        store,
        run,
        suite,
        block,
        judge,
        options: parseOptions(def.scoreOptions, {}, (n) => n, def.kind),
        raw: {},
        session,
        extras: {},
        log: nullLogger,
        folder,
      });
      messages.push(`score: ${s.error ?? 'scored'}`);
    } catch (e) {
      messages.push(`score threw: ${errorMessage(e)}`);
    } finally {
      await session.close().catch(() => undefined);
    }
    if (def.exportResults) {
      try {
        const files = await def.exportResults(
          store,
          [{ runId: 'run-1', block, repeat: 0 }],
          join(root, 'export'),
          join(root, 'runs'),
        );
        messages.push(`export: ${files.length} file(s)`);
      } catch (e) {
        messages.push(`export threw: ${errorMessage(e)}`);
      }
    }
  } finally {
    srv?.close();
    await store.close();
  }
  const after = snapshot(join(root, 'host'));
  const hostChanged = [...new Set([...before.keys(), ...after.keys()])].filter((k) => before.get(k) !== after.get(k));
  return { index, hostChanged, messages, tools };
}

const [casesFile, firstArg] = process.argv.slice(2);
const cases = JSON.parse(readFileSync(casesFile!, 'utf8')) as HostPathCase[];
const tmp = mkdtempSync(join(tmpdir(), 'loupe-host-paths-'));
try {
  for (let i = Number(firstArg ?? 0); i < cases.length; i++) {
    process.stdout.write(`START ${i}\n`);
    const r = await runCase(cases[i]!, i, tmp);
    process.stdout.write(`RESULT ${JSON.stringify(r)}\n`);
  }
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
process.exit(0);
