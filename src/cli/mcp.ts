/**
 * `loupe mcp`: serves one benchmark block's tools over the Model Context Protocol so that any MCP-capable agent
 * (an editor's agent mode, Claude Code, Codex, a custom client) can be evaluated on it. Every call is a recorded
 * step of a run in the store, as with `loupe run`. Source: issue 24.
 */
import { oneLine } from '../core/util/text-safety.ts';
import { trustedRunFolder } from '../core/store/run-folder.ts';
import { hostname } from 'node:os';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { loadSuite, parseSuiteKind, type Block, type Suite } from '../core/benchmarks/index.ts';
import { RunLeaseError, type Budget } from '../core/agent/loop.ts';
import { openStoreAt } from '../core/store/open.ts';
import { reopenRun } from '../core/runs/reopen.ts';
import { McpBlockSession, type McpBlockSessionOptions, type McpRunOutcome } from '../core/runs/mcp/session.ts';
import { startMcpHttpServer } from '../core/runs/mcp/http.ts';
import { splitOptionPairs } from '../core/benchmarks/options.ts';
import { LoupeInputError } from '../core/util/errors.ts';
import { streamLogger } from '../core/util/log.ts';
import { progressPrinter } from './run.ts';
import { runsDirOf, STORE_OPTIONS, storeLocation } from './store-arg.ts';
import { findBenchmark } from '../core/benchmarks/registry.ts';
import { didYouMean } from './suggest.ts';
import { UsageError } from './types.ts';
import {
  JSON_OPTIONS,
  KERNEL_LIMIT_OPTIONS,
  RUN_LIMIT_OPTIONS,
  SANDBOX_OPTIONS,
  SUITE_OPTIONS,
  TOOL_OPTIONS,
  VERBOSE_OPTIONS,
  loaderOptionGroup,
  loaderOptionsFromArgs,
} from './option-groups.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';

const DECL = declareCommand({
  synopsis: 'mcp',
  groups: [
    SUITE_OPTIONS,
    optionGroup('server', {
      block: { type: 'string', value: 'ID', help: 'the block served (required; one MCP server serves one block)' },
      transport: {
        type: 'string',
        value: 'stdio|http',
        help: 'stdio (default; the client starts this command) or http (streamable HTTP on 127.0.0.1 only, one run per session)',
      },
      port: { type: 'string', value: 'N', help: 'http: the port (default: a free port)' },
      'token-env': { type: 'string', value: 'VAR', help: 'http: take the token from VAR instead of a random one' },
      resume: {
        type: 'string',
        value: 'RUN',
        help: 'continue a stopped MCP run over a new connection (a run driven by another process is refused)',
      },
    }),
    RUN_LIMIT_OPTIONS,
    SANDBOX_OPTIONS,
    KERNEL_LIMIT_OPTIONS,
    TOOL_OPTIONS,
    STORE_OPTIONS,
    VERBOSE_OPTIONS,
    JSON_OPTIONS,
  ],
  dynamic: [loaderOptionGroup],
  notes: `  Serves the block's tools (the same names, schemas and descriptions as Loupe's agent sees), its task as the prompt
  'task', and its visible documentation files as read-only resources. When a client connects, a run is recorded
  (agent mcp:<client>/<version>); every tool call is a step; the block's finishing tool ends and scores it.
  Blocks that end on a FINISH message (DDR) get a 'finish' tool taking the insight list (a Loupe variant).
  http requires the token printed at start as 'Authorization: Bearer TOKEN' or '?token=TOKEN'.
  Token counts of MCP clients are unknown: recorded as null and left out of efficiency figures. A client that brings
  its own shell or file tools and declares no sandbox (capabilities.experimental.sandbox) makes the run uncontained.
  Runs of MCP clients cannot be intervened on (Loupe cannot send the client messages).
  --json: one line on stdout with the run outcome at the end (http: also a first line with url and token).`,
});

function num(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new UsageError(`--${name} must be a number ≥ 0, got '${v}'`);
  return n;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export const mcpCommand = defineCommand({
  name: 'mcp',
  summary: "serve a benchmark block's tools over MCP so any MCP-capable agent can be evaluated on it (stdio or http)",
  declarations: [DECL],
  async run(argv, io) {
    const { values: v, extra } = parseCommand(DECL, argv);
    const transport = v.transport ?? 'stdio';
    if (transport !== 'stdio' && transport !== 'http') {
      throw new UsageError(`--transport must be stdio or http, got '${transport}'`);
    }
    if (v.port !== undefined && transport !== 'http') throw new UsageError('--port applies to --transport http only');
    const port = num(v.port, 'port');
    if (port !== undefined && (!Number.isInteger(port) || port > 65535)) {
      throw new UsageError(`--port must be a port number, got '${v.port}'`);
    }
    const sandbox = (v.sandbox ?? io.env.LOUPE_SANDBOX ?? 'bubblewrap') as 'bubblewrap' | 'off';
    if (sandbox !== 'bubblewrap' && sandbox !== 'off') {
      throw new UsageError(`--sandbox must be bubblewrap or off, got '${sandbox}'`);
    }
    if (sandbox === 'bubblewrap') {
      const { findBubblewrap } = await import('../core/kernel/index.ts');
      if (!findBubblewrap(io.env)) {
        io.err(
          'loupe mcp: bubblewrap (bwrap) is not installed, so tool code cannot be sandboxed. Install it (apt-get install bubblewrap) or pass --sandbox off.\n',
        );
        return 2;
      }
    } else io.err('loupe mcp: WARNING: the Python kernel runs without a sandbox (--sandbox off)\n');
    const budget: Budget = {
      maxSteps: num(v['max-steps'], 'max-steps'),
      maxWallMs: num(v['max-wall-ms'], 'max-wall-ms'),
    };
    if (budget.maxSteps != null && (budget.maxSteps < 1 || !Number.isInteger(budget.maxSteps))) {
      throw new UsageError('--max-steps must be a positive integer');
    }
    let token: string | undefined;
    if (v['token-env']) {
      token = io.env[v['token-env']];
      if (!token || token.length < 16) {
        throw new UsageError(`--token-env ${v['token-env']}: the variable must hold a token of at least 16 characters`);
      }
    }
    const log = streamLogger({ write: (s: string) => io.err(s) }, v.verbose ? 'debug' : 'warn');
    // A SQLite file (run folders in runs/ next to it) or a team store URL (its runs' folders under ./.loupe/runs here;
    // steps, answers, scores and the files the client's run wrote go to the team store)
    const loc = storeLocation(io, v.store);
    const store = await openStoreAt(loc, { cwd: io.cwd, env: io.env });
    try {
      let suite: Suite;
      let block: Block;
      let toolSetOptions: Record<string, string> | undefined = v['tool-option']?.length
        ? splitOptionPairs(v['tool-option'], '--tool-option')
        : undefined;
      // loader flags from the benchmarks' declarations, paths against the working folder (as every command resolves them)
      let loadOptions: McpBlockSessionOptions['loadOptions'] = loaderOptionsFromArgs(
        extra,
        io.cwd,
        v.suite && !v.resume ? findBenchmark(v.suite) : undefined,
      );
      if (v.resume) {
        if (transport !== 'stdio') {
          throw new UsageError(
            '--resume continues a run over a new stdio connection (an HTTP session is resumed by its session id)',
          );
        }
        const run = await store.getRun(v.resume);
        if (!run) throw new LoupeInputError('--resume', `no run '${v.resume}' in ${store.location}`);
        if (!run.agent.startsWith('mcp:')) {
          const f = run.params.forkOf;
          if (f) {
            throw new LoupeInputError(
              '--resume',
              `run ${run.id} is a fork (of run ${f.runId} at step ${f.step}) continued by Loupe's own agent, not by an MCP client: continue it with loupe run --resume ${run.id}; an MCP client continues the parent with loupe mcp --resume ${f.runId}`,
            );
          }
          throw new LoupeInputError(
            '--resume',
            `run ${run.id} was made by ${oneLine(run.agent)}, not an MCP client: continue it with loupe run --resume ${run.id}`,
          );
        }
        if (run.status === 'finished') throw new LoupeInputError('--resume', `run ${run.id} already finished`);
        const holder = await store.getRunLease(run.id);
        if (
          holder &&
          Date.parse(holder.expiresAt) > Date.now() &&
          !(holder.host === hostname() && holder.pid != null && !pidAlive(holder.pid))
        ) {
          io.err(`loupe mcp: ${new RunLeaseError(run.id, holder).message}\n`);
          return 2;
        }
        // Issue 36: a run is driven only in its folder under the runs folder of --store (never a folder set in the store).
        const refused = trustedRunFolder(run, runsDirOf(io, loc)).refused;
        if (refused) {
          throw new LoupeInputError(
            '--resume',
            `run ${run.id}: ${refused}; it is not resumed (a run resumes in its folder under ${runsDirOf(io, loc)}, the runs folder of --store)`,
          );
        }
        const r = await reopenRun(run, { ...(v.root ? { suiteRoot: v.root } : {}), log });
        suite = r.suite;
        block = r.block;
        toolSetOptions = toolSetOptions ?? run.params.toolSetOptions;
        loadOptions = run.params.loadOptions ?? loadOptions;
      } else {
        if (!v.suite) throw new UsageError('--suite is required');
        if (!v.root) throw new UsageError('--root is required');
        if (!v.block) throw new UsageError('--block ID is required (one MCP server serves one block)');
        suite = await loadSuite(parseSuiteKind(v.suite), v.root, { ...loadOptions, log });
        const found = suite.blocks.find((b) => b.id === v.block);
        if (!found) {
          throw new LoupeInputError(
            `--block ${v.block}`,
            `not in suite ${suite.root}${didYouMean(
              v.block,
              suite.blocks.map((b) => b.id),
            )}`,
          );
        }
        block = found;
      }
      const runsDir = runsDirOf(io, loc);
      const kernel = {
        sandbox,
        ...(v.python ? { python: v.python } : {}),
        ...(v['cell-timeout-ms'] ? { cellTimeoutMs: num(v['cell-timeout-ms'], 'cell-timeout-ms') } : {}),
        ...(v['workspace-quota-mb'] ? { workspaceQuotaMb: num(v['workspace-quota-mb'], 'workspace-quota-mb') } : {}),
      };
      const label = `mcp ${block.id}`;
      const progress = progressPrinter(io, label);
      const sessionOptions = (): McpBlockSessionOptions => ({
        store,
        suite,
        block,
        runsDir,
        kernel,
        budget,
        transport,
        log,
        onEvent: progress,
        ...(toolSetOptions ? { toolSetOptions } : {}),
        ...(Object.keys(loadOptions ?? {}).length ? { loadOptions } : {}),
        ...(v['max-observation-chars']
          ? { maxObservationChars: num(v['max-observation-chars'], 'max-observation-chars') }
          : {}),
        ...(v.resume ? { resumeRunId: v.resume } : {}),
        onRunCreated: (id) => io.err(`loupe mcp: run ${id} (${suite.kind} block ${block.id})\n`),
      });
      const report = (o: McpRunOutcome | undefined) => {
        if (!o) return;
        if (v.json) io.out(JSON.stringify(o) + '\n');
        else {
          io.err(
            `loupe mcp: run ${o.runId} ${o.status} after ${o.steps} step${o.steps === 1 ? '' : 's'}: ${o.reason}${o.score ? ` · score ${JSON.stringify(o.score)}` : ''}\n`,
          );
        }
      };

      if (transport === 'stdio') {
        const session = new McpBlockSession(sessionOptions());
        const stdio = new StdioServerTransport(process.stdin, process.stdout);
        const onSig = () => session.stop('interrupted (signal)');
        process.once('SIGINT', onSig);
        process.once('SIGTERM', onSig);
        await session.server.connect(stdio);
        io.err(`loupe mcp: serving ${suite.kind} block ${block.id} over stdio (${session.tools().length} tools)\n`);
        await session.closed;
        const out = await session.done;
        process.off('SIGINT', onSig);
        process.off('SIGTERM', onSig);
        report(out);
        return 0;
      }

      const all: McpBlockSession[] = [];
      const newSession = () => {
        const s = new McpBlockSession(sessionOptions());
        all.push(s);
        return s;
      };
      const http = await startMcpHttpServer({
        ...(port !== undefined ? { port } : {}),
        ...(token ? { token } : {}),
        newSession,
        log,
      });
      if (v.json) {
        io.out(JSON.stringify({ url: http.url, token: http.token, suite: suite.kind, block: block.id }) + '\n');
      }
      io.err(`loupe mcp: serving ${suite.kind} block ${block.id} at ${http.url} (127.0.0.1 only)\n`);
      io.err(`loupe mcp: token ${http.token}\n`);
      io.err(
        `loupe mcp: client configuration: ${JSON.stringify({ type: 'http', url: http.url, headers: { Authorization: `Bearer ${http.token}` } })}\n`,
      );
      io.err('loupe mcp: Ctrl-C stops the server (open runs are stopped and can be resumed)\n');
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await http.close();
      for (const s of all) s.stop('the Loupe MCP server stopped');
      for (const s of all) report(await s.done);
      return 0;
    } finally {
      await store.close();
    }
  },
});
