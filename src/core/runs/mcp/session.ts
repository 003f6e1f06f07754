/**
 * One MCP session on one benchmark block (issue 24): an MCP server (the SDK's low-level `Server`) whose tools are
 * exactly the block's tool set — the same names, JSON schemas and descriptions Loupe's own agent sees — whose prompt
 * is the block's task, and whose resources are the block's visible documentation files (read-only; nothing hidden is
 * listed or readable). At the client's first tool call (a client that only lists tools leaves no run), the session
 * records a run whose agent is `mcp:<client name>/<version>` and drives it through the agent loop (`runner.ts`):
 * every tool call is a recorded step, Python and SQL run in the same sandboxes as `loupe run`, the run holds the store's run lease, the step and
 * time limits are the same options, and the block's finishing tool ends and scores the run. Blocks whose tool set
 * ends on a message (DDR's `FINISH:`) get a `finish` tool taking the insight list — a Loupe variant, recorded as such.
 * Source: issue 24; MCP specification 2025-06-18 (tools, prompts, resources).
 */
import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { RunControl, type Budget } from '../../agent/loop.ts';
import type { AgentEvent, JsonSchema, KernelLike, RunParams, ToolSet } from '../../agent/types.ts';
import type { Block, Suite } from '../../suites/types.ts';
import type { RunStore } from '../../store/types.ts';
import { nullLogger, type Logger } from '../../util/log.ts';
import { LOUPE_VERSION } from '../../version.ts';
import { getBenchmark } from '../../benchmarks/registry.ts';
import { acquireDocIndex } from '../../docs/shared-build.ts';
import type { DocIndex, DocUnit } from '../../docs/types.ts';
import { unitKindFor } from '../../docs/units.ts';
import { ExactOnlyJudge } from '../../eval/judges/judge.ts';
import { judgementStoreOf } from '../../eval/store.ts';
import { blockToolSet, resumeBlockRun, startBlockRun, type KernelPlacement, type KernelSettings } from '../runner.ts';
import { saveRunScore, scoreStoredRun } from '../score-stored-run.ts';
import { sanitiseClientInfo } from './client-identity.ts';
import { McpAgentBridge, McpRunClosedError, type McpCallOutcome } from './bridge.ts';

/** URI scheme of the block's documentation resources: `loupe-doc:///<workspace-relative path>`. */
export const MCP_DOC_SCHEME = 'loupe-doc';
/**
 * Suffix of the text resource of a documentation file that is not text itself (PDF, spreadsheet):
 * `loupe-doc:///docs/DEMO_L.pdf?as=text` is its text as `read_doc` extracts it, unit by unit (`text/plain`).
 */
export const MCP_TEXT_SUFFIX = '?as=text';

/** What the client said about itself in `initialize`, as recorded with the run. */
export interface McpClientIdentity {
  name: string;
  version: string;
  /** The client declared that it runs its own tools (shell, files) in a sandbox (`capabilities.experimental.sandbox`). */
  sandboxed: boolean;
  /** What the client sent (escaped, cut), when `name`/`version` had to be sanitised (`sanitiseClientInfo`, issue 38). */
  sent?: { name: string; version: string };
}

/** How an MCP run ended, with its score when the benchmark needs no judge. */
export interface McpRunOutcome {
  runId: string;
  status: string;
  reason: string;
  steps: number;
  /** The judge-free score's summary (LongDA: match, coverage, ...), saved in the store; null when a judge is needed. */
  score: Record<string, number | null> | null;
}

/** Inputs of an {@link McpBlockSession}. */
export interface McpBlockSessionOptions {
  store: RunStore;
  suite: Suite;
  block: Block;
  /** Run folders are created under this directory. */
  runsDir: string;
  kernel: KernelSettings;
  budget?: Budget;
  toolSetOptions?: Record<string, string>;
  loadOptions?: RunParams['loadOptions'];
  docsCacheDir?: string;
  maxObservationChars?: number;
  /** Continue this stored run (`loupe mcp --resume RUN`) instead of recording a new one. */
  resumeRunId?: string;
  /** How the client is connected (recorded). */
  transport: 'stdio' | 'http';
  log?: Logger;
  onEvent?: (e: AgentEvent) => void;
  /** Called with the run id once the run is recorded (or reopened). */
  onRunCreated?: (runId: string) => void;
  /** Overrides the kernel factory (tests). */
  startKernel?: (o: KernelPlacement) => Promise<KernelLike>;
  /** Overrides the docs provider (tests). */
  docs?: () => Promise<unknown>;
}

/** Name of the `finish` variant for tool sets that end on a message (DDR); another name if the tool set already has one. */
function finishToolName(toolSet: ToolSet): string {
  return toolSet.tools.some((t) => t.name === 'finish') ? 'loupe_finish' : 'finish';
}

const FINISH_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    insights: {
      type: 'array',
      items: { type: 'string' },
      description: 'Every insight you found, one per item, with the numbers that support it.',
    },
    report: { type: 'string', description: 'Optional: a short final report placed before the insights.' },
  },
  required: ['insights'],
  additionalProperties: false,
};

/** The FINISH message the `finish` variant records for an insight list (what Loupe's own agent would have written). */
export function finishMessage(insights: readonly string[], report?: string): string {
  const lines = insights
    .map((i) => i.trim())
    .filter(Boolean)
    .map((i) => `- ${i}`);
  return `FINISH: ${report?.trim() ? `${report.trim()}\n` : ''}${lines.join('\n')}`;
}

/** Documentation files served as they are, as text (UTF-8), with their media type (IANA; code and SAS files as text/plain). */
const TEXT_MIME: Record<string, string> = {
  '.txt': 'text/plain',
  '.md': 'text/markdown',
  '.csv': 'text/csv',
  '.tsv': 'text/tab-separated-values',
  '.json': 'application/json',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.xml': 'application/xml',
  '.sas': 'text/plain',
  '.do': 'text/plain',
  '.r': 'text/plain',
  '.py': 'text/x-python',
  '.sql': 'application/sql',
  '.yaml': 'application/yaml',
  '.yml': 'application/yaml',
};
/** Binary documentation files (served as a blob, and as extracted text under {@link MCP_TEXT_SUFFIX}). */
const BINARY_MIME: Record<string, string> = {
  '.pdf': 'application/pdf',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.xls': 'application/vnd.ms-excel',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
};

/**
 * The text resource of a documentation file's extracted units: each unit under its label (`[Page 3]`), as `read_doc` shows them.
 * @param units the file's units (docs index). @returns the text (units separated by a blank line).
 */
export function unitsText(units: readonly DocUnit[]): string {
  return units.map((u) => `[${u.label}]\n${u.text}`).join('\n\n');
}

/** One documentation resource of a block. */
interface DocResource {
  rel: string;
  path: string;
  mimeType: string;
  /** `file`: the file's bytes (text or blob by its type); `text`: the text extracted from a binary file. */
  as: 'file' | 'text';
}

/**
 * One MCP connection's server on one block, and the run it records. Create it, connect `server` to a transport
 * (stdio or streamable HTTP); the run starts with the client's first tool call.
 */
export class McpBlockSession {
  readonly server: Server;
  readonly toolSet: ToolSet;
  readonly finishTool: string | null;
  #o: McpBlockSessionOptions;
  #bridge: McpAgentBridge | undefined;
  #runId: string | undefined;
  #done: Promise<McpRunOutcome | undefined> | undefined;
  #doneResolve!: (o: McpRunOutcome | undefined) => void;
  #control = new RunControl();
  #client: McpClientIdentity | undefined;
  #startError: string | undefined;
  #docs: Map<string, DocResource>;

  #closed: Promise<void>;
  #stopped = false;

  /** @throws LoupeInputError for an unrunnable block or a bad tool option (as `loupe run`). */
  constructor(o: McpBlockSessionOptions) {
    this.#o = o;
    if (!o.block.runnable) throw new Error(`block ${o.block.id} is not runnable: ${o.block.problems.join('; ')}`);
    this.toolSet = blockToolSet({
      block: o.block,
      agent: 'mcp:client',
      ...(o.toolSetOptions ? { toolSetOptions: o.toolSetOptions } : {}),
      ...(o.budget ? { budget: o.budget } : {}),
      ...(o.docsCacheDir ? { docsCacheDir: o.docsCacheDir } : {}),
      ...(o.docs ? { docs: o.docs } : {}),
    });
    this.finishTool = this.toolSet.isTerminal ? finishToolName(this.toolSet) : null;
    this.#docs = new Map();
    for (const f of o.block.visible.docs) {
      const uri = `${MCP_DOC_SCHEME}:///${f.rel.split('/').map(encodeURIComponent).join('/')}`;
      const ext = extname(f.rel).toLowerCase();
      const text = TEXT_MIME[ext];
      this.#docs.set(uri, {
        rel: f.rel,
        path: f.path,
        mimeType: text ?? BINARY_MIME[ext] ?? 'application/octet-stream',
        as: 'file',
      });
      // a PDF or spreadsheet is also offered as its text, which clients without a PDF reader can use
      if (!text && unitKindFor(f.rel)) {
        this.#docs.set(`${uri}${MCP_TEXT_SUFFIX}`, { rel: f.rel, path: f.path, mimeType: 'text/plain', as: 'text' });
      }
    }
    this.#done = new Promise((r) => (this.#doneResolve = r));
    this.server = new Server(
      {
        name: `loupe-${o.block.suite}`,
        title: `Loupe: ${getBenchmark(o.block.suite).title} block ${o.block.id}`,
        version: LOUPE_VERSION,
      },
      { capabilities: { tools: {}, prompts: {}, resources: {} }, instructions: this.toolSet.systemPrompt },
    );
    this.server.oninitialized = () => this.#identify();
    // A client that disconnects stops its run (status cancelled; `loupe mcp --resume RUN` continues it).
    this.#closed = new Promise<void>((resolve) => {
      this.server.onclose = () => {
        this.stop('the MCP client disconnected');
        resolve();
      };
    });
    this.server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: this.tools() }));
    this.server.setRequestHandler(CallToolRequestSchema, async (req) =>
      this.#call(req.params.name, req.params.arguments ?? {}),
    );
    this.server.setRequestHandler(ListPromptsRequestSchema, async () => ({
      prompts: [
        {
          name: 'task',
          title: `Task of block ${o.block.id}`,
          description:
            "The block's task as Loupe's own agent gets it: the benchmark's instructions, then the task text.",
        },
      ],
    }));
    this.server.setRequestHandler(GetPromptRequestSchema, async (req) => {
      if (req.params.name !== 'task') {
        throw new McpError(
          ErrorCode.InvalidParams,
          `unknown prompt '${req.params.name}' (this server has one prompt: task)`,
        );
      }
      return {
        description: `Task of ${getBenchmark(o.block.suite).title} block ${o.block.id}`,
        messages: [
          {
            role: 'user' as const,
            content: {
              type: 'text' as const,
              text: `${this.toolSet.systemPrompt}\n\n${this.toolSet.buildBlockPrompt(o.block)}`,
            },
          },
        ],
      };
    });
    this.server.setRequestHandler(ListResourcesRequestSchema, async () => ({
      resources: [...this.#docs].map(([uri, f]) => ({
        uri,
        name: f.as === 'text' ? `${f.rel} (text)` : f.rel,
        mimeType: f.mimeType,
        description:
          f.as === 'text'
            ? `Text of the documentation file ${f.rel}, page by page as read_doc extracts it (read-only)`
            : 'Documentation of the block (read-only)',
      })),
    }));
    this.server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
      const uri = req.params.uri;
      const f = this.#docs.get(uri);
      // Only the block's visible documentation is addressable: any other URI (a hidden file, a path) is unknown.
      if (!f) {
        throw new McpError(-32002, `resource not found: ${uri} is not a documentation file of block ${o.block.id}`, {
          uri,
        });
      }
      if (f.as === 'text') return { contents: [{ uri, mimeType: f.mimeType, text: unitsText(await this.#units(f)) }] };
      const bytes = readFileSync(f.path);
      return {
        contents: [
          TEXT_MIME[extname(f.rel).toLowerCase()] === f.mimeType
            ? { uri, mimeType: f.mimeType, text: bytes.toString('utf8') }
            : { uri, mimeType: f.mimeType, blob: bytes.toString('base64') },
        ],
      };
    });
  }

  /**
   * The extracted units of a binary documentation file, from the documentation index of its folder — the one the doc
   * tools use in this process (shared, same cache; built on first use).
   * @throws McpError naming the file when its text cannot be extracted.
   */
  async #units(f: DocResource): Promise<DocUnit[]> {
    const root = f.path.slice(0, f.path.length - f.rel.length);
    const files = this.#o.block.visible.docs
      .filter((d) => d.path.slice(0, d.path.length - d.rel.length) === root)
      .map((d) => d.rel);
    try {
      // the shared index is a full DocIndex (typed as the doc tools' subset): its units are the pages read_doc shows
      const idx = (await acquireDocIndex(root, files, this.#o.docsCacheDir).built()) as object as {
        units?: DocIndex['units'];
      };
      if (typeof idx.units !== 'function') throw new Error('the documentation index gives no pages');
      return idx.units(f.rel);
    } catch (e) {
      throw new McpError(
        ErrorCode.InternalError,
        `the text of ${f.rel} could not be extracted: ${(e as Error).message}`,
      );
    }
  }

  /** The tools as MCP lists them: the block's tool set (names, descriptions, JSON schemas as Loupe's agent sees them), plus the `finish` variant where the tool set ends on a message. */
  tools(): Tool[] {
    const tools: Tool[] = this.toolSet.tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: { ...(t.parameters as Record<string, unknown>), type: 'object' },
    }));
    if (this.finishTool) {
      tools.push({
        name: this.finishTool,
        description:
          'Loupe variant for MCP clients: ends the session with your insights. Loupe\'s own agent ends it with a message that starts with "FINISH:"; this tool records that message for you (a bullet list of the insights, after the optional report). Only call it when you are done: the session ends there.',
        inputSchema: { ...(FINISH_SCHEMA as Record<string, unknown>), type: 'object' },
      });
    }
    return tools;
  }

  /** Resolves when the connection closed (the run is then being stopped, see {@link done}). */
  get closed(): Promise<void> {
    return this.#closed;
  }

  /** The recorded run's id (undefined before the first tool call). */
  get runId(): string | undefined {
    return this.#runId;
  }

  /** The client as it introduced itself (undefined before `initialize`). */
  get client(): McpClientIdentity | undefined {
    return this.#client;
  }

  /** Resolves when the run has ended and been scored (undefined when it never started). */
  get done(): Promise<McpRunOutcome | undefined> {
    return this.#done!;
  }

  /** Stops the run (status `cancelled`, resumable with `loupe mcp --resume RUN`), e.g. when the client disconnected. */
  stop(reason: string): void {
    this.#stopped = true;
    if (!this.#bridge) this.#doneResolve(undefined);
    this.#control.stop(reason);
  }

  /** Who the client is, from its `initialize` request. */
  #identify(): McpClientIdentity {
    if (this.#client) return this.#client;
    const v = this.server.getClientVersion();
    const experimental = this.server.getClientCapabilities()?.experimental as Record<string, unknown> | undefined;
    // Issue 38: the name and version become the stored agent name, shown on every expert surface: sanitised first.
    const info = sanitiseClientInfo(v?.name, v?.version);
    this.#client = {
      name: info.name,
      version: info.version,
      sandboxed: !!experimental?.sandbox,
      ...(info.sent ? { sent: info.sent } : {}),
    };
    return this.#client;
  }

  /** Records (or reopens) the run and starts driving it: on the first tool call, so a client that only lists tools leaves no empty run. */
  #start(): void {
    if (this.#bridge) return;
    const client = this.#identify();
    const agent = `mcp:${client.name}/${client.version}` as const;
    // The run's model names the client; an uncontained client's runs are grouped apart (`… (uncontained)`) in every
    // score table, aggregate and report, which group by model.
    const bridge = new McpAgentBridge(client.sandboxed ? agent : `${agent} (uncontained)`);
    this.#bridge = bridge;
    const o = this.#o;
    const onEvent = (e: AgentEvent) => {
      if (e.type === 'step-end') bridge.stepCommitted(e.record);
      o.onEvent?.(e);
    };
    const mcpParams = {
      client: client.name,
      clientVersion: client.version,
      transport: o.transport,
      contained: client.sandboxed,
      ...(client.sent ? { clientSent: client.sent } : {}),
      ...(this.finishTool ? { finishTool: this.finishTool } : {}),
    };
    const common = {
      store: o.store,
      suite: o.suite,
      block: o.block,
      agent,
      modelClient: bridge,
      runsDir: o.runsDir,
      kernel: o.kernel,
      ...(o.budget ? { budget: o.budget } : {}),
      ...(o.toolSetOptions ? { toolSetOptions: o.toolSetOptions } : {}),
      ...(o.loadOptions ? { loadOptions: o.loadOptions } : {}),
      ...(o.docsCacheDir ? { docsCacheDir: o.docsCacheDir } : {}),
      ...(o.maxObservationChars != null ? { maxObservationChars: o.maxObservationChars } : {}),
      ...(o.startKernel ? { startKernel: o.startKernel } : {}),
      ...(o.docs ? { docs: o.docs } : {}),
      log: o.log ?? nullLogger,
      onEvent,
      control: this.#control,
      extraParams: { mcp: mcpParams },
      tokensUnknown: true,
      onRunCreated: (id: string) => {
        this.#runId = id;
        void this.#announce(id, client).catch(() => undefined);
        o.onRunCreated?.(id);
      },
    };
    const wall = o.budget?.maxWallMs;
    const setDeadline = (priorMs: number) => {
      if (wall != null) {
        bridge.setDeadline(
          Date.now() + wall - priorMs,
          `wall clock budget (${wall} ms) reached while waiting for the client's next call`,
        );
      }
    };
    let p: Promise<{ runId: string; status: string; reason: string; steps: number }>;
    if (o.resumeRunId) {
      this.#runId = o.resumeRunId;
      p = o.store.getRun(o.resumeRunId).then(async (run) => {
        if (run && run.agent !== agent) {
          await o.store.addEvent(run.id, 'mcp', `resumed over MCP by ${agent} (the run was started by ${run.agent})`);
        }
        setDeadline(run?.durationMs ?? 0);
        o.onRunCreated?.(o.resumeRunId!);
        return resumeBlockRun({ ...common, runId: o.resumeRunId! });
      });
    } else {
      setDeadline(0);
      p = startBlockRun(common);
    }
    p.then(
      async (res) => {
        const score = await this.#score(res.runId).catch(async (e: unknown) => {
          await o.store
            .addEvent(res.runId, 'warning', `scoring the MCP run failed: ${(e as Error).message}`)
            .catch(() => undefined);
          return null;
        });
        bridge.close(
          `run ${res.runId} has ended (${res.status}: ${res.reason}); it takes no more calls${res.status === 'finished' ? '' : ` — continue it with loupe mcp --resume ${res.runId}`}`,
          { status: res.status, reason: res.reason },
        );
        this.#doneResolve({ runId: res.runId, status: res.status, reason: res.reason, steps: res.steps, score });
      },
      (e: unknown) => {
        // The run could not start or continue (its lease is held by another process, an unrunnable block, ...).
        this.#startError = (e as Error).message;
        (o.log ?? nullLogger).error(`MCP run did not start: ${this.#startError}`);
        bridge.close(`the run could not be driven: ${this.#startError}`);
        this.#doneResolve(undefined);
      },
    );
  }

  /** Records who the client is and, when it declared no sandbox of its own, that the run is uncontained. */
  async #announce(runId: string, c: McpClientIdentity): Promise<void> {
    const s = this.#o.store;
    if (c.sent) {
      await s.addEvent(
        runId,
        'warning',
        `the MCP client's name or version held characters Loupe does not store (controls, markup, '/', or too long); recorded as ${c.name} ${c.version}; it sent ${JSON.stringify(c.sent.name)} ${JSON.stringify(c.sent.version)}`,
      );
    }
    await s.addEvent(
      runId,
      'mcp',
      `driven over MCP (${this.#o.transport}) by ${c.name} ${c.version}; token use is unknown (recorded as null)${this.finishTool ? `; the '${this.finishTool}' tool is a Loupe variant that records the FINISH message from an insight list` : ''}`,
    );
    if (!c.sandboxed) {
      await s.addEvent(
        runId,
        'warning',
        `UNCONTAINED: the MCP client ${c.name} declared no sandbox of its own. Loupe contains what its tools do (Python, SQL), but the client may bring its own shell and file tools, which Loupe neither sees nor contains: this run is reported apart from contained runs.`,
      );
    }
  }

  /** Scores an ended run when its benchmark needs no judge (LongDA) and saves the score. @returns the summary, or null. */
  async #score(runId: string): Promise<Record<string, number | null> | null> {
    const def = getBenchmark(this.#o.block.suite);
    if (!def.judgeFree) {
      await this.#o.store.addEvent(
        runId,
        'mcp',
        `${def.title} scores need a judge: score the run with loupe score --run ${runId}`,
      );
      return null;
    }
    const s = await scoreStoredRun(this.#o.store, runId, {
      judge: new ExactOnlyJudge(judgementStoreOf(this.#o.store)),
      runsRoot: this.#o.runsDir,
      suites: new Map([[`${this.#o.suite.kind}\u0000${this.#o.suite.root}`, Promise.resolve(this.#o.suite)]]),
    });
    if (s.error) throw new Error(s.error);
    await saveRunScore(this.#o.store, s);
    return s.summary;
  }

  async #call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const known = this.toolSet.tools.some((t) => t.name === name) || name === this.finishTool;
    // An unknown tool is a protocol error (MCP spec: tools/call errors); nothing is recorded.
    if (!known) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `unknown tool '${name}'. This block's tools: ${this.tools()
          .map((t) => t.name)
          .join(', ')}`,
      );
    }
    if (this.#startError) {
      throw new McpError(ErrorCode.InvalidRequest, `the run could not be driven: ${this.#startError}`);
    }
    if (this.#stopped) throw new McpError(ErrorCode.InvalidRequest, 'the session was stopped; nothing was recorded');
    this.#start();
    const bridge = this.#bridge!;
    let out: McpCallOutcome;
    try {
      if (name === this.finishTool) {
        const ins = args.insights;
        if (!Array.isArray(ins) || ins.some((x) => typeof x !== 'string')) {
          return {
            isError: true,
            content: [
              {
                type: 'text',
                text: 'Error: insights must be an array of strings (every insight you found, one per item). Nothing was recorded.',
              },
            ],
          };
        }
        if (args.report !== undefined && typeof args.report !== 'string') {
          return {
            isError: true,
            content: [{ type: 'text', text: 'Error: report must be a string. Nothing was recorded.' }],
          };
        }
        out = await bridge.submit({ content: finishMessage(ins as string[], args.report as string | undefined) });
      } else out = await bridge.submit({ name, argumentsText: JSON.stringify(args) });
    } catch (e) {
      if (e instanceof McpRunClosedError) throw new McpError(ErrorCode.InvalidRequest, e.message);
      throw e;
    }
    let text = out.observation;
    if (out.ended) {
      const done = await this.done;
      if (!text) text = `The session ended (${out.ended.reason}).`;
      text += `\n\n[Loupe] The run ${done?.runId ?? this.#runId} has ended: ${out.ended.status} (${out.ended.reason}). It is recorded${done?.score ? ' and scored' : ''} in Loupe; further calls are refused.`;
    }
    return { isError: out.isError, content: [{ type: 'text', text }] };
  }
}
