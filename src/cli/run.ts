import { mkdirSync, writeFileSync } from 'node:fs';
import { trustedRunFolder } from '../core/store/run-folder.ts';
import { plural } from './plural.ts';
import { join, resolve } from 'node:path';
import { loadSuite, parseSuiteKind, type Block, type Suite } from '../core/benchmarks/index.ts';
import type { RunStore } from '../core/store/run-store.ts';
import { runsDirOf, STORE_OPTIONS, storeLocation } from './store-arg.ts';
import {
  describeStoreLocation,
  parseStoreLocation,
  type PostgresLocation,
  type StoreLocation,
} from '../core/store/location.ts';
import { newSweepId, planSweep, recordSweepRuns, type SweepSpec } from '../core/runs/sweep.ts';
import { openUnitQueue, type UnitRetryPolicy } from '../core/runs/queue.ts';
import { openStoreAt } from '../core/store/open.ts';
import { LoupeInputError } from '../core/util/errors.ts';
import { didYouMean } from './suggest.ts';
import { exportTrajectoryJsonl } from '../core/store/export.ts';
import { RunControl, type Budget } from '../core/agent/loop.ts';
import {
  parseToolOptions,
  resumeBlockRun,
  startBlockRun,
  type AgentKind,
  type BlockRunOptions,
} from '../core/runs/runner.ts';
import { benchmarkOfFolder, findBenchmark, getBenchmark } from '../core/benchmarks/registry.ts';
import { reopenRun } from '../core/runs/reopen.ts';
import { splitOptionPairs } from '../core/benchmarks/options.ts';
import { runReplayCommand } from './run-replay.ts';
import { parseForkSpec } from '../core/runs/intervene.ts';
import { cliWho } from './intervene.ts';
import type { LlmConfig } from '../core/agent/llm.ts';
import type { AgentEvent } from '../core/agent/types.ts';
import { streamLogger } from '../core/util/log.ts';
import { UsageError, type CliIo } from './types.ts';
import {
  OTEL_OPTIONS,
  otelConfigFromArgs,
  JSON_OPTIONS,
  KERNEL_LIMIT_OPTIONS,
  MODEL_OPTIONS,
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
  synopsis: 'run',
  groups: [
    SUITE_OPTIONS,
    optionGroup('blocks', {
      block: { type: 'string', value: 'ID', help: 'the block run' },
      blocks: { type: 'string', value: 'all|ID,ID', help: 'the blocks run (all: every runnable block)' },
      repeats: { type: 'string', value: 'N', help: 'runs per block (default 1)' },
      concurrency: { type: 'string', value: 'K', help: 'runs at a time (default 1)' },
      agent: {
        type: 'string',
        value: 'llm|reference|replay',
        help: "who acts: a model, the benchmark's reference solution, or a replay of --run",
      },
      'reference-dir': {
        type: 'string',
        value: 'DIR',
        help: "the reference agent's solutions (default benchmarks/<suite>/reference); BLADE: submits a ground-truth path",
      },
      run: { type: 'string', value: 'RUN', help: 'replay: the recorded run re-executed' },
      resume: { type: 'string', value: 'RUN', help: 'continue a stopped run' },
    }),
    MODEL_OPTIONS,
    optionGroup('model settings', {
      temperature: { type: 'string', value: 'T', help: 'sampling temperature' },
      'max-tokens': { type: 'string', value: 'N', help: 'tokens per reply' },
      'max-tokens-field': {
        type: 'string',
        value: 'max_tokens|max_completion_tokens',
        help: 'how the endpoint names it',
      },
      'reasoning-effort': { type: 'string', value: 'E', help: 'the reasoning effort asked for' },
      stream: { type: 'boolean', help: 'stream replies' },
      'idle-timeout-ms': { type: 'string', value: 'N', help: 'no bytes for N ms fails the try (default 120000)' },
      'timeout-ms': { type: 'string', value: 'N', help: 'whole-request cap (default none)' },
      'max-retries': { type: 'string', value: 'N', help: 'retries of a failed request' },
      'price-in': { type: 'string', value: 'USD_PER_M', help: 'price of a million input tokens' },
      'price-out': { type: 'string', value: 'USD_PER_M', help: 'price of a million output tokens' },
    }),
    RUN_LIMIT_OPTIONS,
    optionGroup('token budget', {
      'max-total-tokens': { type: 'string', value: 'N', help: 'tokens a run may use' },
      'max-cost': { type: 'string', value: 'USD', help: 'what a run may cost' },
    }),
    optionGroup('exports', {
      results: {
        type: 'string',
        value: 'DIR',
        help: "the benchmark's own results files (LongDA: answers_progress.csv, run_summary.json, ...; BLADE: <dataset>/multirun_analyses.json + submission.json; BLADE-MCQ: mcq_results.json; DDR: ddr_results.jsonl; AnalystBench: <block>/report.md + figures)",
      },
      trajectory: { type: 'string', value: 'DIR', help: 'one <runId>.jsonl per run' },
    }),
    optionGroup('fork', {
      fork: {
        type: 'string',
        value: 'RUN@STEP',
        help: "start a new run that replays RUN's steps 1..STEP without model calls (cells re-run in a fresh kernel) and continues with --model/--base-url (default: RUN's model)",
      },
      hint: { type: 'string', value: 'TEXT', help: 'a human step before the first new step of the fork' },
      'hint-kind': { type: 'string', value: 'hint|correction', help: 'what the hint is (default hint)' },
    }),
    optionGroup('sweep', {
      queue: {
        type: 'string',
        value: '[postgres://...]',
        help: "record every unit (block × repeat × model) as a pending run of a new sweep in the team store and enqueue it (default: the store's database) instead of running it here",
      },
      models: { type: 'string', value: 'M,M', help: 'one unit per model (same --base-url and settings)' },
      sweep: { type: 'string', value: 'ID', help: "the sweep's id (default sweep-<time>-<hex>)" },
      'unit-heartbeat-s': {
        type: 'string',
        value: 'N',
        help: 'a unit whose worker is silent this long is retried (default 30, at least 10)',
      },
      'unit-retries': { type: 'string', value: 'N', help: 'retries of a unit (default 10)' },
    }),
    SANDBOX_OPTIONS,
    KERNEL_LIMIT_OPTIONS,
    TOOL_OPTIONS,
    STORE_OPTIONS,
    VERBOSE_OPTIONS,
    JSON_OPTIONS,
    optionGroup('live traces', {
      'otel-endpoint': {
        type: 'string',
        value: 'URL',
        help: 'send each run as OpenTelemetry GenAI spans to this OTLP/HTTP endpoint while it runs (none by default)',
      },
    }),
    OTEL_OPTIONS,
  ],
  dynamic: [loaderOptionGroup],
  notes: `  --suite, --root and --block or --blocks are required (or --resume RUN); --max-steps defaults to 100.
  --base-url defaults to $OPENAI_BASE_URL, else OpenAI's; the API key is read from the variable named by
  --api-key-env and never stored. Run folders go next to the store in runs/.
  replay: --agent replay --run RUN re-executes RUN's python cells and SQL queries in a fresh sandbox, stores the
  per-step comparison with the run; exit 1 when anything differs.
  Loader flags: give them again with --resume / replay.
  tool options: e.g. finishRule=code, insights=reasoning, emptyInsights=drop, python=false, forcedSummary=false,
  queryTimeoutMs=N (DDR); input=instruction|sources|toc|template, template=FILE (AnalystBench);
  useDataDescription=false (BLADE).
  fork: a replayed cell that now errors stops it. A run an MCP client drove (loupe mcp) forks the same way: its calls
  are replayed and Loupe's agent continues (give --model); an MCP client cannot continue a fork.
  sweep: needs the team store (--store postgres://...); \`loupe worker\` runs the units (on any number of machines),
  \`loupe runs --sweep ID\` shows progress. Workers always sandbox (no --sandbox off).
  --json prints one line per run: { runId, suite, blockId, agent, status, steps, tokens, durationMs, answers }
  live traces: --otel-endpoint URL (a base such as http://127.0.0.1:4318 gets /v1/traces) sends spans batched; an
  unreachable endpoint never stops or slows a run (its first failure is a warning event of the run). See
  \`loupe export otel\` for the span layout.`,
});

/** The `--json` line of one run (issue 5 "CLI"). */
export interface RunJsonLine {
  runId: string;
  suite: string;
  blockId: string;
  agent: string;
  status: string;
  steps: number;
  /** null when unknown (an MCP client's run). */
  tokens: { input: number; output: number } | null;
  durationMs: number;
  answers: { queryId: string; answer: number | number[] }[];
}

/** Builds the `--json` line of a run from the store. */
export async function runJsonLine(store: RunStore, runId: string): Promise<RunJsonLine> {
  const r = (await store.getRun(runId))!;
  return {
    runId: r.id,
    suite: r.suite,
    blockId: r.blockId,
    agent: r.agent,
    status: r.status,
    steps: r.steps,
    tokens: r.tokens ? { input: r.tokens.input, output: r.tokens.output } : null,
    durationMs: r.durationMs,
    answers: (await store.getAnswers(runId)).map((a) => ({ queryId: a.queryId, answer: a.answer })),
  };
}

function num(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new UsageError(`--${name} must be a number, got '${v}'`);
  return n;
}

function maxTokensField(v: string): 'max_tokens' | 'max_completion_tokens' {
  if (v !== 'max_tokens' && v !== 'max_completion_tokens') {
    throw new UsageError(`--max-tokens-field must be max_tokens or max_completion_tokens, got '${v}'`);
  }
  return v;
}

export function progressPrinter(io: CliIo, label: string): (e: AgentEvent) => void {
  return (e) => {
    switch (e.type) {
      case 'tool-call': {
        const a = e.call.argumentsText.replace(/\s+/g, ' ');
        io.err(`[${label}] step ${e.step + 1}: ${e.call.name}(${a.length > 80 ? a.slice(0, 77) + '...' : a})\n`);
        break;
      }
      case 'observation':
        if (e.isError) {
          // The reason may be on the lines after a heading ("Submission rejected:\n- PatsyError: ..."): show up to 3 lines.
          const lines = e.observation
            .split('\n')
            .map((l) => l.trim())
            .filter(Boolean)
            .slice(0, 3);
          io.err(`[${label}]   ✘ ${lines.join(' ').slice(0, 300)}\n`);
        }
        break;
      case 'retry':
        io.err(`[${label}] model retry ${e.attempt} in ${Math.round(e.delayMs)} ms: ${e.reason.slice(0, 160)}\n`);
        break;
      case 'log':
        io.err(`[${label}] ${e.message}\n`);
        break;
      case 'run-end':
        io.err(`[${label}] ${e.status} after ${plural(e.steps, 'step')}: ${e.reason}\n`);
        break;
      default:
        break;
    }
  };
}

export const runCommand = defineCommand({
  name: 'run',
  summary: 'run an agent (llm or reference) on benchmark blocks, recording every step; --resume continues a run',
  declarations: [DECL],
  async run(argv, io) {
    // \`--queue\` alone: the queue lives in the store's database
    argv = argv.map((a, i) =>
      a === '--queue' && (i + 1 >= argv.length || argv[i + 1]!.startsWith('--')) ? '--queue=' : a,
    );
    const { values: v, extra } = parseCommand(DECL, argv);
    const queued = v.queue !== undefined;
    const loc = storeLocation(io, v.store);
    const storeFile = describeStoreLocation(loc);
    const runsDir = runsDirOf(io, loc);
    const sandbox = (v.sandbox ?? io.env.LOUPE_SANDBOX ?? 'bubblewrap') as 'bubblewrap' | 'off';
    if (sandbox !== 'bubblewrap' && sandbox !== 'off') {
      throw new UsageError(`--sandbox must be bubblewrap or off, got '${sandbox}'`);
    }
    if (queued) {
      if (sandbox === 'off') {
        throw new UsageError('--queue: sweep workers always run agent code in the sandbox; drop --sandbox off');
      }
      if (v.resume || v.fork || v.agent === 'replay') {
        throw new UsageError('--queue enqueues new runs: not with --resume, --fork or --agent replay');
      }
      if (loc.engine !== 'postgres') {
        throw new UsageError(
          `--queue needs the team store (--store postgres://...): workers on other machines cannot reach ${storeFile}`,
        );
      }
    } else if (v.models || v.sweep || v['unit-heartbeat-s'] || v['unit-retries']) {
      throw new UsageError('--models, --sweep, --unit-heartbeat-s and --unit-retries go with --queue');
    }
    if (queued) {
      /* the enqueuing machine runs no agent code */
    } else if (sandbox === 'bubblewrap') {
      const { findBubblewrap } = await import('../core/kernel/index.ts');
      if (!findBubblewrap(io.env)) {
        io.err(
          'loupe run: bubblewrap (bwrap) is not installed, so agent code cannot be sandboxed. Install it (apt-get install bubblewrap) or pass --sandbox off to run Python unsandboxed.\n',
        );
        return 2;
      }
    } else io.err('loupe run: WARNING: the Python kernel runs without a sandbox (--sandbox off)\n');
    const budget: Budget = {
      maxSteps: num(v['max-steps'], 'max-steps'),
      maxWallMs: num(v['max-wall-ms'], 'max-wall-ms'),
      maxTotalTokens: num(v['max-total-tokens'], 'max-total-tokens'),
      maxCostUsd: num(v['max-cost'], 'max-cost'),
    };
    if (budget.maxSteps != null && (budget.maxSteps < 1 || !Number.isInteger(budget.maxSteps))) {
      throw new UsageError('--max-steps must be a positive integer');
    }
    const keyEnv = v['api-key-env'] ?? 'OPENAI_API_KEY';
    const llmFrom = (model: string | undefined, baseUrl: string | undefined): LlmConfig | undefined => {
      if (!model) return undefined;
      return {
        model,
        baseUrl: baseUrl ?? io.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
        apiKey: io.env[keyEnv] ?? '',
        temperature: num(v.temperature, 'temperature'),
        maxTokens: num(v['max-tokens'], 'max-tokens'),
        reasoningEffort: v['reasoning-effort'],
        ...(v['max-tokens-field'] ? { maxTokensField: maxTokensField(v['max-tokens-field']) } : {}),
        stream: v.stream ?? false,
        timeoutMs: num(v['timeout-ms'], 'timeout-ms'),
        idleTimeoutMs: num(v['idle-timeout-ms'], 'idle-timeout-ms'),
        maxRetries: num(v['max-retries'], 'max-retries'),
        pricePerMillionInput: num(v['price-in'], 'price-in'),
        pricePerMillionOutput: num(v['price-out'], 'price-out'),
      };
    };
    const log = streamLogger({ write: (s: string) => io.err(s) }, v.verbose ? 'debug' : 'warn');
    if (!v['otel-endpoint'] && (v['otel-header'] || v['otel-max-text'])) {
      throw new UsageError('--otel-header and --otel-max-text go with --otel-endpoint URL');
    }
    if (v['otel-endpoint'] && queued) {
      throw new UsageError(
        '--otel-endpoint: a queued sweep runs on workers; live traces are sent by runs started here',
      );
    }
    const otel = v['otel-endpoint'] ? otelConfigFromArgs(v['otel-endpoint'], '--otel-endpoint', v, io.env) : undefined;
    const store = await openStoreAt(loc, { env: io.env });
    const controls = new Set<RunControl>();
    const onSig = () => {
      io.err('loupe run: stopping (Ctrl-C again to force)\n');
      for (const c of controls) c.stop('interrupted (SIGINT)');
      process.off('SIGINT', onSig);
    };
    process.on('SIGINT', onSig);
    // Interactive keys on a terminal: p pause, r resume, s stop (all runs of this invocation).
    const stdin = process.stdin;
    const keys = !v.json && stdin.isTTY && io.env.LOUPE_NO_KEYS !== '1';
    let stopping = false;
    const onKey = (b: Buffer) => {
      const k = b.toString();
      if (k === 'p') {
        for (const c of controls) c.pause();
        io.err('loupe run: paused after the current step (r to resume, s to stop)\n');
      } else if (k === 'r') {
        for (const c of controls) c.resume();
        io.err('loupe run: resumed\n');
      } else if (k === '\u0003' && stopping) process.exit(130);
      else if (k === 's' || k === '\u0003') {
        stopping = true;
        onSig();
      }
    };
    if (keys) {
      stdin.setRawMode(true);
      stdin.on('data', onKey);
      stdin.resume();
      io.err('loupe run: keys — p pause, r resume, s stop\n');
    }
    let anyFailed = false;
    const done: { runId: string; block: Block; repeat: number }[] = [];
    const finishRun = async (runId: string, block: Block, repeat = 1) => {
      done.push({ runId, block, repeat });
      if (v.trajectory) {
        mkdirSync(resolve(io.cwd, v.trajectory), { recursive: true });
        writeFileSync(join(resolve(io.cwd, v.trajectory), `${runId}.jsonl`), await exportTrajectoryJsonl(store, runId));
      }
      const line = await runJsonLine(store, runId);
      if (line.status === 'failed' || line.status === 'cancelled') anyFailed = true;
      // LongDA needs no judge: the line carries its score (coverage / match as fractions, options used).
      const quick = getBenchmark(block.suite).runLineScore;
      if (v.json) io.out(JSON.stringify(quick ? { ...line, score: await quick(store, runId, block) } : line) + '\n');
      else {
        io.out(
          `${line.runId}  ${line.blockId}  ${line.status}  steps=${line.steps}  answers=${line.answers.length}  tokens=${line.tokens ? `${line.tokens.input}/${line.tokens.output}` : 'unknown'}  ${(line.durationMs / 1000).toFixed(1)} s\n`,
        );
      }
    };
    const writeResults = async () => {
      if (!v.results || !done.length) return;
      const base = resolve(io.cwd, v.results);
      const def = getBenchmark(done[0]!.block.suite);
      if (!def.exportResults) {
        io.err(
          `results: ${def.title} has no results files of its own; use --trajectory DIR or loupe runs --trajectory\n`,
        );
        return;
      }
      const files = await def.exportResults(store, done, base, runsDir);
      io.err(`results: ${base} (${files.length} files)\n`);
    };
    try {
      const referenceDir = v['reference-dir'] ? resolve(io.cwd, v['reference-dir']) : undefined;
      const kernel = {
        sandbox,
        python: v.python ?? io.env.LOUPE_PYTHON,
        cellTimeoutMs: num(v['cell-timeout-ms'], 'cell-timeout-ms'),
        workspaceQuotaMb: num(v['workspace-quota-mb'], 'workspace-quota-mb'),
      };
      // issue 44: a --root folder holding a benchmark manifest registers its benchmark (and names the suite)
      const fromFolder = v.root ? benchmarkOfFolder(resolve(io.cwd, v.root)) : undefined;
      if (fromFolder) v.root = resolve(io.cwd, v.root!);
      if (!v.suite && fromFolder) v.suite = fromFolder.kind;
      const suiteOpts = loaderOptionsFromArgs(
        extra,
        io.cwd,
        v.suite && !v.resume && !v.fork && v.agent !== 'replay' ? findBenchmark(v.suite) : undefined,
      );
      if (v.agent === 'replay') {
        if (!v.run) throw new UsageError('--agent replay needs --run RUN (the id of a recorded run)');
        return await runReplayCommand({
          store,
          runsDir,
          runId: v.run,
          root: v.root,
          suiteOpts,
          kernel,
          log,
          io,
          json: !!v.json,
        });
      }
      if (v.hint !== undefined && !v.fork) {
        throw new UsageError('--hint goes with --fork RUN@STEP (to add one to a stopped run: loupe intervene)');
      }
      if (v.fork) {
        if (v.resume) throw new UsageError('--fork and --resume are exclusive');
        const { runId: parentId, step } = parseForkSpec(v.fork);
        const parent = await store.getRun(parentId);
        if (!parent) throw new UsageError(`--fork: no run '${parentId}' in ${storeFile}`);
        const { suite, block } = await reopenRun(parent, {
          ...(v.root ? { suiteRoot: v.root } : {}),
          loadOptions: suiteOpts,
        });
        const agent = (v.agent ?? 'llm') as AgentKind;
        if (agent !== 'llm') throw new UsageError('--fork continues with a model: --agent llm (the default)');
        const llm = llmFrom(
          v.model ?? parent.params.model ?? (parent.agent === 'llm' ? (parent.model ?? undefined) : undefined),
          v['base-url'] ?? (parent.params.baseUrl as string | undefined),
        );
        if (!llm && parent.agent.startsWith('mcp:')) {
          const m = parent.params.mcp;
          throw new UsageError(
            `--fork: run ${parentId} was driven by the MCP client ${m ? `${m.client} ${m.clientVersion}` : parent.agent.slice(4)}: a fork continues with Loupe's own agent — give --model (and --base-url) to continue it with (an MCP client cannot continue a fork)`,
          );
        }
        if (!llm) {
          throw new UsageError(
            `--fork: run ${parentId} is not an LLM run; give --model (and --base-url) to continue it with`,
          );
        }
        const hk = v['hint-kind'] ?? 'hint';
        if (hk !== 'hint' && hk !== 'correction') {
          throw new UsageError(`--hint-kind must be hint or correction, got '${hk}'`);
        }
        const control = new RunControl();
        controls.add(control);
        let runId: string | undefined;
        io.err(`[${block.id}] forking run ${parentId} at step ${step}
`);
        await startBlockRun({
          store,
          suite,
          block,
          agent,
          llm,
          runsDir,
          kernel,
          budget,
          control,
          log,
          referenceDir,
          maxObservationChars: num(v['max-observation-chars'], 'max-observation-chars'),
          loadOptions: suiteOpts,
          ...(v['tool-option'] ? { toolSetOptions: splitOptionPairs(v['tool-option'], '--tool-option') } : {}),
          ...(otel ? { otel } : {}),
          forkOf: {
            runId: parentId,
            step,
            ...(v.hint !== undefined ? { hint: { who: cliWho(io), kind: hk, text: v.hint } } : {}),
          },
          onEvent: progressPrinter(io, block.id),
          onRunCreated: (id) => {
            runId = id;
            io.err(`[${block.id}] run ${id} started (fork of ${parentId}@${step})
`);
          },
        });
        if (runId) await finishRun(runId, block);
        await writeResults();
        return anyFailed ? 1 : 0;
      }
      if (v.resume) {
        const run = await store.getRun(v.resume);
        if (!run) throw new UsageError(`--resume: no run '${v.resume}' in ${storeFile}`);
        if (!v.root && !run.params.suiteRoot) {
          throw new UsageError(`--resume: run ${run.id} does not record its suite root; pass --root`);
        }
        // Issue 36: a run is driven only in its folder under the runs folder of --store (never a folder set in the store).
        const refused = trustedRunFolder(run, runsDir).refused;
        if (refused) {
          throw new UsageError(
            `--resume ${run.id}: ${refused}; it is not resumed (a run resumes in its folder under ${runsDir}, the runs folder of --store)`,
            { showUsage: false },
          );
        }
        const { suite, block } = await reopenRun(run, {
          ...(v.root ? { suiteRoot: v.root } : {}),
          loadOptions: suiteOpts,
        });
        const control = new RunControl();
        controls.add(control);
        const llm =
          run.agent === 'llm'
            ? llmFrom(v.model ?? run.model ?? undefined, v['base-url'] ?? (run.params.baseUrl as string | undefined))
            : undefined;
        if (llm) {
          for (const k of [
            'temperature',
            'maxTokens',
            'maxTokensField',
            'reasoningEffort',
            'stream',
            'timeoutMs',
            'maxRetries',
            'pricePerMillionInput',
            'pricePerMillionOutput',
          ] as const) {
            if (llm[k] === undefined && run.params[k] !== undefined) {
              (llm as unknown as Record<string, unknown>)[k] = run.params[k];
            }
          }
        }
        io.err(`[${block.id}] resuming run ${run.id} after step ${run.steps}\n`);
        await resumeBlockRun({
          runId: run.id,
          store,
          suite,
          block,
          agent: run.agent as AgentKind,
          llm,
          runsDir,
          kernel,
          budget,
          control,
          log,
          referenceDir,
          maxObservationChars: num(v['max-observation-chars'], 'max-observation-chars'),
          onEvent: progressPrinter(io, block.id),
          ...(otel ? { otel } : {}),
        });
        await finishRun(run.id, block);
        await writeResults();
        return anyFailed ? 1 : 0;
      }
      if (!v.suite || !v.root) {
        throw new UsageError(
          '--suite and --root are required (or --resume RUN; --suite may be left out when the --root folder holds loupe-benchmark.yaml)',
        );
      }
      const agent = (v.agent ?? '') as AgentKind;
      if (agent !== 'llm' && agent !== 'reference') throw new UsageError('--agent must be llm, reference or replay');
      if (v.models && v.model) throw new UsageError('give --model or --models, not both');
      const llm = llmFrom(v.model ?? v.models?.split(',')[0]?.trim(), v['base-url']);
      if (agent === 'llm' && !llm) {
        throw new UsageError(`--agent llm needs --model${queued ? ' or --models' : ''} (and usually --base-url)`);
      }
      const suite: Suite = await loadSuite(parseSuiteKind(v.suite), v.root, suiteOpts);
      const toolSetOptions = splitOptionPairs(v['tool-option'], '--tool-option');
      parseToolOptions(suite.kind, toolSetOptions); // checked before any run starts
      let blocks: Block[];
      if (v.block && v.blocks) throw new UsageError('give --block or --blocks, not both');
      const spec = v.block ?? v.blocks;
      if (!spec) throw new UsageError('--block ID or --blocks all|ID,ID is required');
      // Problems of the suite (malformed rows dropped, files missing) are warnings here and in each run's record.
      const suiteWarnings = suite.problems;
      for (const w of suiteWarnings.slice(0, 20)) io.err(`warning: ${w}\n`);
      if (suiteWarnings.length > 20) io.err(`warning: ... and ${suiteWarnings.length - 20} more problems\n`);
      if (spec === 'all') {
        blocks = suite.blocks.filter((b) => b.runnable);
        const skipped = suite.blocks.filter((b) => !b.runnable);
        for (const b of skipped) io.err(`skipped ${b.id}: ${b.problems.join('; ') || 'not runnable'}\n`);
        if (!blocks.length) {
          io.err(
            `loupe run: no runnable block in ${suite.root} (${suite.blocks.length} block(s) found${suiteWarnings.length ? `, ${suiteWarnings.length} problem(s) above` : ''})\n`,
          );
          return 1;
        }
      } else {
        blocks = spec
          .split(',')
          .map((id) => id.trim())
          .filter(Boolean)
          .map((id) => {
            const b = suite.blocks.find((x) => x.id === id);
            if (!b) {
              throw new UsageError(
                `unknown block '${id}' in ${suite.root}.${
                  didYouMean(
                    id,
                    suite.blocks.map((x) => x.id),
                  ) ||
                  ` ${suite.blocks.length} blocks: \`loupe blocks --suite ${suite.kind} --root ${suite.root}\` lists them.`
                }`,
                { showUsage: false },
              );
            }
            return b;
          });
      }
      const repeats = num(v.repeats, 'repeats') ?? 1;
      if (queued) {
        const models =
          agent === 'llm'
            ? (v.models ?? v.model ?? '')
                .split(',')
                .map((m) => m.trim())
                .filter(Boolean)
            : [];
        return await enqueueSweep({
          io,
          store,
          loc: loc as PostgresLocation,
          queueText: v.queue!,
          json: !!v.json,
          runsDir,
          spec: {
            sweepId: v.sweep ?? newSweepId(),
            suite,
            blocks,
            repeats,
            agent,
            profiles: models.map((m) => {
              const { apiKey: _k, ...p } = llmFrom(m, v['base-url'])!;
              return p;
            }),
            apiKeyEnv: keyEnv,
            budget,
            ...(num(v['max-observation-chars'], 'max-observation-chars') != null
              ? { maxObservationChars: num(v['max-observation-chars'], 'max-observation-chars')! }
              : {}),
            toolSetOptions,
            loadOptions: suiteOpts,
            kernel: {
              ...(kernel.python ? { python: kernel.python } : {}),
              ...(kernel.cellTimeoutMs != null ? { cellTimeoutMs: kernel.cellTimeoutMs } : {}),
              ...(kernel.workspaceQuotaMb != null ? { workspaceQuotaMb: kernel.workspaceQuotaMb } : {}),
            },
            ...(referenceDir ? { referenceDir } : {}),
          },
          policy: {
            heartbeatSeconds: num(v['unit-heartbeat-s'], 'unit-heartbeat-s') ?? 30,
            retryLimit: num(v['unit-retries'], 'unit-retries') ?? 10,
          },
        });
      }
      const concurrency = Math.max(1, num(v.concurrency, 'concurrency') ?? 1);
      const jobs: { block: Block; repeat: number }[] = [];
      for (const block of blocks) for (let r = 1; r <= repeats; r++) jobs.push({ block, repeat: r });
      let next = 0;
      const worker = async () => {
        while (next < jobs.length) {
          const job = jobs[next++]!;
          const label = repeats > 1 ? `${job.block.id}#${job.repeat}` : job.block.id;
          const control = new RunControl();
          controls.add(control);
          let runId: string | undefined;
          const opts: BlockRunOptions = {
            store,
            suite,
            block: job.block,
            agent,
            llm,
            runsDir,
            kernel,
            budget,
            repeat: job.repeat,
            control,
            log,
            referenceDir,
            maxObservationChars: num(v['max-observation-chars'], 'max-observation-chars'),
            toolSetOptions,
            loadOptions: suiteOpts,
            ...(otel ? { otel } : {}),
            onEvent: progressPrinter(io, label),
            onRunCreated: (id) => {
              runId = id;
              io.err(`[${label}] run ${id} started\n`);
              for (const w of suiteWarnings) void store.addEvent(id, 'warning', `suite: ${w}`).catch(() => undefined);
            },
          };
          try {
            await startBlockRun(opts);
            started++;
          } catch (e) {
            const msg = e instanceof Error ? e.message : String(e);
            if (spec === 'all' && !runId && e instanceof LoupeInputError) {
              // `--blocks all`: a block this agent cannot run (e.g. the reference agent without ground truth) is skipped, not a failure
              skippedForAgent.push(job.block.id);
              io.err(`skipped ${label}: ${msg}\n`);
            } else {
              if (runId) started++;
              anyFailed = true;
              io.err(`[${label}] ${msg}\n`);
            }
          }
          controls.delete(control);
          if (runId) await finishRun(runId, job.block, job.repeat);
        }
      };
      let started = 0;
      const skippedForAgent: string[] = [];
      await Promise.all(Array.from({ length: Math.min(concurrency, jobs.length) }, worker));
      await writeResults();
      if (skippedForAgent.length) {
        io.err(
          `${skippedForAgent.length} block(s) skipped: the ${agent} agent cannot run them (${skippedForAgent.join(', ')})\n`,
        );
      }
      if (!started) {
        io.err('loupe run: no block could be run\n');
        return 1;
      }
      return anyFailed ? 1 : 0;
    } finally {
      process.off('SIGINT', onSig);
      if (keys) {
        stdin.off('data', onKey);
        stdin.setRawMode(false);
        stdin.pause();
      }
      await store.close();
    }
  },
});

/**
 * \`loupe run ... --queue\`: records the sweep's units as pending runs in the team store, then enqueues them.
 * @returns the exit code (0).
 */
async function enqueueSweep(o: {
  io: CliIo;
  store: RunStore;
  loc: PostgresLocation;
  queueText: string;
  json: boolean;
  runsDir: string;
  spec: SweepSpec;
  policy: UnitRetryPolicy;
}): Promise<number> {
  const { io } = o;
  let queueLoc: StoreLocation = o.loc;
  if (o.queueText) {
    try {
      queueLoc = parseStoreLocation(o.queueText, io.cwd, io.env);
    } catch (e) {
      throw new UsageError(`--queue ${(e as Error).message}`);
    }
    if (queueLoc.engine !== 'postgres') {
      throw new UsageError(`--queue ${o.queueText}: the queue is a PostgreSQL database (postgres://...)`);
    }
  }
  if ((o.policy.heartbeatSeconds ?? 30) < 10) throw new UsageError('--unit-heartbeat-s must be at least 10 (pg-boss)');
  const units = planSweep(o.spec);
  const queue = await openUnitQueue(queueLoc, { env: io.env, supervise: false });
  try {
    await recordSweepRuns(o.store, o.spec.suite, units, o.runsDir);
    try {
      await queue.send(units, o.policy);
    } catch (e) {
      for (const u of units) {
        await o.store
          .updateRun(u.runId, { status: 'cancelled', statusReason: `could not be enqueued: ${(e as Error).message}` })
          .catch(() => undefined);
      }
      throw e;
    }
  } finally {
    await queue.stop({ graceful: false });
  }
  const models = [...new Set(units.map((u) => u.profile?.model ?? u.agent))];
  if (o.json) {
    io.out(
      JSON.stringify({
        sweepId: o.spec.sweepId,
        units: units.length,
        models,
        queue: queueLoc.url,
        runIds: units.map((u) => u.runId),
      }) + '\n',
    );
  } else {
    io.out(
      `sweep ${o.spec.sweepId}: ${units.length} units (${o.spec.blocks.length} block(s) × ${o.spec.repeats} repeat(s) × ${models.length} model(s)) queued in ${queueLoc.url}\n  start workers: loupe worker --store ${o.loc.url}${o.queueText ? ` --queue ${queueLoc.url}` : ''}\n  progress:      loupe runs --store ${o.loc.url} --sweep ${o.spec.sweepId}\n`,
    );
  }
  return 0;
}
