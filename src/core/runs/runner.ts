/**
 * Runs one benchmark block end to end: prepares the run folder and the block's workspace (the
 * visible files appear at their workspace-relative paths, as read-only links to the originals),
 * records the run (suite, block, agent, model parameters without the key, prompt hash, tool set,
 * data checksums, Loupe version, sandbox mode), starts the sandboxed kernel lazily, and drives
 * {@link runAgent}. Also resumes a run from the store. The CLI (`loupe run`) and the VS Code
 * "Run Benchmark Block" UI are thin callers of {@link startBlockRun} / {@link resumeBlockRun}.
 * Source: issue 5 (run store, agents, CLI); spec §2.3.
 */
import { randomUUID } from 'node:crypto';
import { dirname, join, relative, resolve } from 'node:path';
import { LoupeInputError } from '../util/errors.ts';
import {
  ensureFolder,
  entryKindContained,
  mkdirContained,
  removeContainedEntry,
  removePlantedLinks,
  symlinkContained,
  writeContainedFile,
} from '../util/contained.ts';
import { fileSha256, listAllFiles } from '../suites/files.ts';
import { nullLogger, type Logger } from '../util/log.ts';
import { LOUPE_VERSION } from '../version.ts';
import { captureRunEvidence } from './evidence.ts';
import { requireRunFolder, runFolderOf, runIdSegment } from '../store/run-folder.ts';
import { findPython } from '../env/doctor.ts';
import type { Block, Suite } from '../suites/types.ts';
import { otherVisibleFiles } from '../suites/guard.ts';
import type { RunStore } from '../store/types.ts';
import type { RunRecord } from '../store/records.ts';
import { LlmClient, type LlmConfig } from '../agent/llm.ts';
import {
  promptHash,
  runAgent,
  RunLeaseError,
  type AgentRunOptions,
  type AgentRunResult,
  type Budget,
  type InterventionInput,
  type ModelClient,
  type RunControl,
} from '../agent/loop.ts';
import { readForkPoint, seedForkInterventions, type ForkPoint } from './intervene.ts';
import { getBenchmark, benchmarks } from '../benchmarks/registry.ts';
import { parseOptions, type OptionValues } from '../benchmarks/options.ts';
import type { BenchmarkDefinition, ToolSetContext } from '../benchmarks/types.ts';
import type { AgentEvent, KernelLike, RunParams, ToolSet } from '../agent/types.ts';
import { DEFAULT_PDF_EXTRACTOR, EXTRACTOR_VERSION } from '../docs/pdf.ts';
import { startLiveOtel, type OtelExportConfig } from './otel.ts';

/**
 * Who drives a run: Loupe's LLM agent, the reference agent, an external MCP client (`mcp:<client>/<version>`, issue 24)
 * or an expert doing a human baseline (`human:<annotator>`, issue 46).
 */
export type AgentKind = 'llm' | 'reference' | `mcp:${string}` | `human:${string}`;

/** Where a run's kernel works: its workspace, what it sees read-only and what it may write. */
export interface KernelPlacement {
  cwd: string;
  readOnlyPaths: string[];
  writablePaths: string[];
  mounts?: WorkspaceMount[];
}

export interface KernelSettings {
  sandbox: 'bubblewrap' | 'off';
  python?: string;
  cellTimeoutMs?: number;
  memoryLimitMb?: number;
  /** Total size the run's workspace may reach (MiB, default 2048; 0 = none): see the kernel's `workspaceQuotaMb`. */
  workspaceQuotaMb?: number;
}

export interface BlockRunOptions {
  store: RunStore;
  suite: Suite;
  block: Block;
  agent: AgentKind;
  /** LLM agent: the model configuration (the key stays in memory). */
  llm?: LlmConfig;
  /** Overrides the model client (tests, perf). */
  modelClient?: ModelClient;
  /** Run folders are created under this directory. */
  runsDir: string;
  kernel: KernelSettings;
  budget?: Budget;
  /** Observations longer than this are cut head+tail (default 20,000 characters). */
  maxObservationChars?: number;
  /** 1-based repeat number (recorded). */
  repeat?: number;
  /** Reference scripts folder (default `benchmarks/<suite>/reference` of this checkout / package). */
  referenceDir?: string;
  /** Documentation cache folder (default: the docs layer's default). */
  docsCacheDir?: string;
  control?: RunControl;
  onEvent?: (e: AgentEvent) => void;
  /** Called with the run id as soon as the run is recorded. */
  onRunCreated?: (runId: string, run: RunRecord) => void;
  log?: Logger;
  /** Overrides the kernel factory (tests). */
  startKernel?: (o: KernelPlacement) => Promise<KernelLike>;
  /** Overrides the docs provider (tests). */
  docs?: () => Promise<unknown>;
  /** Loader options the suite was loaded with (DDR `entities`, `database`, `metadataDir`): recorded so that `reopenRun` can load it again. */
  loadOptions?: RunParams['loadOptions'];
  /** BLADE / DDR / AnalystBench named tool-set options (`--tool-option k=v`); recorded as params.toolSetOptions. */
  toolSetOptions?: Record<string, string>;
  /**
   * Fork (issue 20): start from run `runId`'s first `step` steps (1-based count; replayed without model calls, cells
   * re-executed in a fresh kernel) and continue with this run's model, after `hint` if given. Recorded as params.forkOf.
   */
  forkOf?: { runId: string; step: number; hint?: InterventionInput };
  /** Extra run parameters recorded with the run (an MCP run's client and containment, issue 24). */
  extraParams?: Partial<RunParams>;
  /** Token counts of this run are unknown (an MCP client does not report them): stored as null, not 0 (issue 24). */
  tokensUnknown?: boolean;
  /**
   * Send the run live as OpenTelemetry GenAI spans (issue 45; `otel.ts`): batched, bounded, never failing or slowing
   * the run; the first export failure is a `warning` event of the run. Undefined: nothing is sent.
   */
  otel?: OtelExportConfig;
}

export { fileSha256 };

export { defaultReferenceDir } from '../benchmarks/paths.ts';

/**
 * Parses a run's named tool-set options (`--tool-option k=v`, recorded as `params.toolSetOptions`) against its benchmark's declaration.
 * @param kind the benchmark; `raw` the options as given. @returns typed values, defaults filled in.
 * @throws LoupeInputError naming the option (`tool option <name>`) for an unknown name or a bad value.
 */
export function parseToolOptions(kind: string, raw: Readonly<Record<string, string>> = {}): OptionValues {
  const def = getBenchmark(kind);
  return parseOptions(def.toolOptions, raw, (n) => `tool option ${n}`, `suite ${def.kind}`);
}

/**
 * The block as its run workspace presents it under the run's tool options (e.g. AnalystBench's "instruction only"
 * input setting, spec §4.1: no source tools AND no source files in the workspace, so python cannot open them either).
 * @param block the block; `toolSetOptions` the run's `--tool-option` values.
 * @returns the same block, or the benchmark's reduced copy.
 */
export function workspaceBlock(block: Block, toolSetOptions?: Record<string, string>): Block {
  const def = getBenchmark(block.suite, `block ${block.id}`);
  return def.workspaceBlock ? def.workspaceBlock(block, parseToolOptions(def.kind, toolSetOptions)) : block;
}

/** A read-only mount of the sandbox: `source` (host path) appears at `target` (a path in the workspace). */
export interface WorkspaceMount {
  source: string;
  target: string;
}

/**
 * Makes `rel` an empty directory (mount point) of the workspace, replacing a link left by an older workspace layout
 * (or planted by agent code on an earlier attempt): contained, nothing on the way is followed (issue 36).
 */
function mountDir(workspace: string, rel: string): void {
  if (entryKindContained(workspace, rel)?.kind === 'link') removeContainedEntry(workspace, rel);
  mkdirContained(workspace, rel);
}

/**
 * Makes `rel` an empty regular file (mount point) of the workspace, replacing a link left by an older layout (or
 * planted); an existing entry of another kind is left (the sandbox then refuses to mount onto it). Contained (issue 36).
 */
function mountFile(workspace: string, rel: string): void {
  const e = entryKindContained(workspace, rel);
  if (e?.kind === 'link') removeContainedEntry(workspace, rel);
  else if (e) return;
  writeContainedFile(workspace, rel, '');
}

/**
 * Creates `<runDir>/workspace` where every visible file appears at its workspace-relative path.
 * When a top-level folder of the workspace (e.g. `data/`) maps to a real folder whose files are all
 * visible, the folder is presented whole (one mount instead of one per file); otherwise each file is,
 * so nothing hidden is reachable through the workspace.
 * With `links: false` (the sandboxed layout, default) the workspace holds empty mount points and the
 * returned `mounts` say what the sandbox binds read-only onto them: inside the sandbox `data/` and
 * `docs/` are real read-only directories (agents' `os.walk('.')` finds the files) and no link points
 * out of the workspace. With `links: true` (sandbox off) the entries are links to the originals.
 * @returns the workspace, the real paths read (for the sandbox-off layout and checksums) and the mounts.
 * @throws LoupeInputError when a visible path would escape the workspace.
 */
export function prepareWorkspace(
  runDir: string,
  block: Block,
  opts: { links?: boolean } = {},
): { workspace: string; readOnlyPaths: string[]; mounts: WorkspaceMount[] } {
  const links = opts.links ?? false;
  const workspace = join(runDir, 'workspace');
  ensureFolder(workspace);
  const ro: string[] = [];
  const mounts: WorkspaceMount[] = [];
  const place = (source: string, target: string, dir: boolean) => {
    ro.push(source);
    const rel = relative(workspace, target);
    if (links) {
      symlinkContained(workspace, rel, source);
    } else {
      if (dir) mountDir(workspace, rel);
      else mountFile(workspace, rel);
      mounts.push({ source, target });
    }
  };
  const files = [...block.visible.data, ...block.visible.docs];
  const groups = new Map<string, typeof files>();
  for (const f of files) {
    const dest = join(workspace, f.rel);
    if (!resolve(dest).startsWith(resolve(workspace) + '/')) {
      throw new LoupeInputError(f.rel, 'visible file path escapes the workspace');
    }
    const seg = f.rel.split('/')[0]!;
    if (seg === f.rel) continue; // a top-level file: placed on its own below
    const g = groups.get(seg) ?? [];
    g.push(f);
    groups.set(seg, g);
  }
  const wholeDirs = new Set<string>();
  for (const [seg, g] of groups) {
    const roots = new Set(g.map((f) => f.path.slice(0, f.path.length - f.rel.length)));
    if (roots.size !== 1 || g.some((f) => !f.path.endsWith(f.rel))) continue;
    const realDir = join([...roots][0]!, seg);
    const all = listAllFiles(realDir);
    const visible = new Set(g.map((f) => resolve(f.path)));
    if (!all || all.length !== visible.size || !all.every((p) => visible.has(resolve(p)))) continue;
    place(realDir, join(workspace, seg), true);
    wholeDirs.add(seg);
  }
  for (const f of files) {
    if (wholeDirs.has(f.rel.split('/')[0]!)) continue;
    place(f.path, join(workspace, f.rel), false);
  }
  for (const f of otherVisibleFiles(block)) place(f.path, join(workspace, f.rel), false);
  return { workspace, readOnlyPaths: ro, mounts };
}

/**
 * After a sandboxed run: replaces the workspace's empty mount points with links to the visible files they stood
 * for, so a person browsing the workspace sees the data (agent code no longer runs there; host tools never follow
 * links: `util/contained.ts`). Only empty mount points are replaced; anything else is left alone.
 * @param runDir the run folder; `block` the block as the workspace presents it.
 */
export function presentWorkspace(runDir: string, block: Block): void {
  const { mounts } = prepareWorkspace(runDir, block, { links: false });
  const workspace = join(runDir, 'workspace');
  for (const m of mounts) {
    try {
      const rel = relative(workspace, m.target);
      const e = entryKindContained(workspace, rel);
      if (!e || !(e.kind === 'dir' || (e.kind === 'file' && e.size === 0))) continue;
      if (!removeContainedEntry(workspace, rel)) continue; // a folder that is not empty: kept
      symlinkContained(workspace, rel, m.source);
    } catch {
      /* planted on its path, or gone: leave it */
    }
  }
}

/**
 * The workspace layout and kernel placement for a run folder: sandboxed, the workspace is the only
 * writable path (not the run folder with its records) and the block's files are mounted read-only into
 * it; with the sandbox off, the workspace holds links (and nothing of this holds).
 * @param sandbox the run's sandbox mode.
 */
export function kernelPlacement(runDir: string, block: Block, sandbox: 'bubblewrap' | 'off'): KernelPlacement {
  const { workspace, readOnlyPaths, mounts } = prepareWorkspace(runDir, block, { links: sandbox === 'off' });
  return sandbox === 'off'
    ? { cwd: workspace, readOnlyPaths, writablePaths: [workspace] }
    : { cwd: workspace, readOnlyPaths: [], writablePaths: [workspace], mounts };
}

const pythonCache = new Map<string, Promise<string>>();

/** Resolves the interpreter once per process (`findPython` probes by importing pandas, which is slow under load). */
function resolvePython(configured: string | undefined): Promise<string> {
  const key = configured ?? '';
  let p = pythonCache.get(key);
  if (!p) {
    p = findPython(configured).then((r) => r.path);
    pythonCache.set(key, p);
    p.catch(() => pythonCache.delete(key));
  }
  return p;
}

/**
 * Starts the run's kernel: sandbox per settings, the block's files read-only, the run folder writable,
 * LongTA's import allowlist for LongDA. Throws LoupeInputError (no bubblewrap, bad paths) or Error (start failure).
 */
export async function defaultStartKernel(
  k: KernelSettings,
  suite: string,
  o: KernelPlacement,
  log: Logger,
): Promise<KernelLike> {
  const { PythonKernel } = await import('../kernel/index.ts');
  const allow = getBenchmark(suite).kernelImportAllowlist;
  const python = await resolvePython(k.python);
  return PythonKernel.start({
    cwd: o.cwd,
    sandbox: k.sandbox,
    python,
    readOnlyPaths: o.readOnlyPaths,
    writablePaths: o.writablePaths,
    ...(o.mounts ? { mounts: o.mounts } : {}),
    cellTimeoutMs: k.cellTimeoutMs,
    memoryLimitMb: k.memoryLimitMb,
    ...(k.workspaceQuotaMb != null ? { workspaceQuotaMb: k.workspaceQuotaMb } : {}),
    importAllowlist: allow ? [...allow] : undefined,
    log,
    preloadModules: kernelPreload(allow),
  });
}

/**
 * The modules a run's kernel imports while the model writes its first cell: pandas, which nearly every data-analysis
 * cell imports (~0.5 s of CPU), when the benchmark's allowlist lets agent code import it.
 * @param allow the benchmark's kernel import allowlist (null/undefined = anything).
 */
export function kernelPreload(allow: readonly string[] | null | undefined): string[] {
  return !allow || allow.some((p) => p === 'pandas' || p === 'pandas.*') ? ['pandas'] : [];
}

/**
 * The tool set a run of this block gets: the benchmark's tools, system prompt and block prompt under the run's tool
 * options and step budget. The same for Loupe's agent and for an MCP client (issue 24: same names, schemas, descriptions).
 * @throws LoupeInputError for an unknown benchmark or a bad tool option.
 */
export function blockToolSet(
  o: Pick<BlockRunOptions, 'block' | 'docs' | 'docsCacheDir' | 'budget' | 'toolSetOptions' | 'agent'>,
): ToolSet {
  return toolSetFor(o);
}

function toolSetFor(
  o: Pick<BlockRunOptions, 'block' | 'docs' | 'docsCacheDir' | 'budget' | 'toolSetOptions' | 'agent' | 'llm'>,
): ToolSet {
  const def = getBenchmark(o.block.suite, `block ${o.block.id}`);
  return def.toolSet({
    block: o.block,
    options: parseToolOptions(def.kind, o.toolSetOptions),
    agent: o.agent === 'reference' ? 'reference' : 'llm',
    ...(o.budget?.maxSteps != null ? { maxSteps: o.budget.maxSteps } : {}),
    ...(o.docsCacheDir ? { docsCacheDir: o.docsCacheDir } : {}),
    ...(o.docs ? { docs: o.docs } : {}),
    ...(o.agent === 'llm' && o.llm ? { complete: completionOf(o.llm) } : {}),
  });
}

/**
 * The run's model as a plain completion for tools that ask it (no tools offered; its own client, so the loop's model is
 * untouched): the reply text with the call's tokens and its cost at the run's prices, for the tool to report.
 */
function completionOf(cfg: LlmConfig): NonNullable<ToolSetContext['complete']> {
  let client: LlmClient | undefined;
  return async (system, user, opts) => {
    client ??= new LlmClient(cfg);
    const r = await client.complete(
      [
        { role: 'system', content: system },
        { role: 'user', content: user },
      ],
      [],
      opts?.signal ? { signal: opts.signal } : {},
    );
    return { text: r.message.content ?? '', usage: r.usage, costUsd: r.costUsd };
  };
}

/**
 * Whether the `reference` agent can run a block: its benchmark has one and it accepts the block (LongDA: a reference
 * script exists for it; BLADE: an annotated model with an IV and a DV). Builds the agent without running anything.
 * @param o.referenceDir where reference scripts are looked for (default: the benchmark's own).
 * @returns `{ ok: true }`, or `{ ok: false, reason }` saying why in words (no flags), for the surfaces to explain.
 */
export function referenceAgentAvailable(
  block: Block,
  o: { referenceDir?: string } = {},
): { ok: true } | { ok: false; reason: string } {
  const def = getBenchmark(block.suite, `block ${block.id}`);
  if (!def.referenceAgent) return { ok: false, reason: `${def.title} has no reference agent` };
  try {
    def.referenceAgent(block, o.referenceDir ? { referenceDir: o.referenceDir } : {});
    return { ok: true };
  } catch (e) {
    return { ok: false, reason: e instanceof Error ? e.message : String(e) };
  }
}

function modelFor(o: Pick<BlockRunOptions, 'agent' | 'llm' | 'modelClient' | 'block' | 'referenceDir'>): ModelClient {
  if (o.modelClient) return o.modelClient;
  if (o.agent === 'reference') {
    const def = getBenchmark(o.block.suite, `block ${o.block.id}`);
    if (!def.referenceAgent) {
      const withRef = benchmarks()
        .filter((b) => b.referenceAgent)
        .map((b) => b.title);
      throw new LoupeInputError(
        '--agent',
        `there is no reference agent for suite '${o.block.suite}' (${withRef.join(' and ')} have one)`,
      );
    }
    return def.referenceAgent(o.block, o.referenceDir ? { referenceDir: o.referenceDir } : {});
  }
  if (!o.llm) throw new LoupeInputError('--model', 'the llm agent needs a model (--model, --base-url)');
  return new LlmClient(o.llm);
}

/** The parameters recorded with a run (the model configuration without its key, budget, suite, options). */
function runParams(o: BlockRunOptions, toolSet: ToolSet, fork?: ForkPoint): RunParams {
  const { apiKey: _key, ...publicLlm } = o.llm ?? ({} as Partial<LlmConfig>);
  return {
    ...publicLlm,
    ...(o.budget?.maxSteps != null ? { maxSteps: o.budget.maxSteps } : { maxSteps: toolSet.defaultMaxSteps }),
    ...(o.budget?.maxWallMs != null ? { maxWallMs: o.budget.maxWallMs } : {}),
    ...(o.budget?.maxTotalTokens != null ? { maxTotalTokens: o.budget.maxTotalTokens } : {}),
    ...(o.budget?.maxCostUsd != null ? { maxCostUsd: o.budget.maxCostUsd } : {}),
    repeat: o.repeat ?? 1,
    suiteRoot: o.suite.root,
    suiteKind: o.suite.kind,
    python: o.kernel.python,
    ...(o.maxObservationChars != null ? { maxObservationChars: o.maxObservationChars } : {}),
    ...(o.toolSetOptions && Object.keys(o.toolSetOptions).length ? { toolSetOptions: o.toolSetOptions } : {}),
    // the block-independent part of the prompt, for the run profile (a profile spans the blocks of a benchmark)
    agentPromptHash: promptHash(
      toolSet.systemPrompt,
      '',
      toolSet.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    ),
    ...(o.loadOptions && Object.keys(o.loadOptions).length ? { loadOptions: o.loadOptions } : {}),
    ...(fork ? { forkOf: { runId: fork.parent.id, step: fork.step } } : {}),
    // a tool set that prepares a documentation index shows text made by the index's extractor (runs use the default)
    ...(toolSet.prepare
      ? { docsText: { pdfExtractor: DEFAULT_PDF_EXTRACTOR, extractorVersion: EXTRACTOR_VERSION } }
      : {}),
    ...(o.extraParams ?? {}),
  };
}

/**
 * Records and runs one block.
 * @returns the final status (also in the store). Model/tool failures end as `failed`, never throw.
 * @throws LoupeInputError for an unrunnable block, a missing reference script, or a bad model configuration.
 */
export async function startBlockRun(o: BlockRunOptions): Promise<AgentRunResult> {
  const log = o.log ?? nullLogger;
  if (!o.block.runnable) throw new LoupeInputError(o.block.id, `block is not runnable: ${o.block.problems.join('; ')}`);
  let fork: ForkPoint | undefined;
  if (o.forkOf) {
    fork = await readForkPoint(o.store, o.forkOf.runId, o.forkOf.step, o.block.id);
    o = {
      ...o,
      toolSetOptions: o.toolSetOptions ?? fork.parent.params.toolSetOptions,
      maxObservationChars: o.maxObservationChars ?? (fork.parent.params.maxObservationChars as number | undefined),
    };
  }
  const toolSet = toolSetFor(o);
  const model = modelFor(o);
  const runId = `${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${randomUUID().slice(0, 8)}`;
  const runDir = join(o.runsDir, runId);
  const { workspace } = prepareWorkspace(runDir, workspaceBlock(o.block, o.toolSetOptions), {
    links: o.kernel.sandbox === 'off',
  });
  // Data checksums are computed while the agent starts working (they are large files) and recorded before the run returns.
  const checksumsP = Promise.all(
    o.block.visible.data.map(async (f) => [f.rel, await fileSha256(f.path)] as const),
  ).then((e) => Object.fromEntries(e));
  const params = runParams(o, toolSet, fork);
  const created = await o.store.createRun({
    id: runId,
    suite: o.suite.kind,
    blockId: o.block.id,
    agent: o.agent,
    model: o.agent === 'reference' ? 'reference' : model.model,
    ...(o.tokensUnknown ? { tokensKnown: false } : {}),
    params,
    promptHash: promptHash(
      toolSet.systemPrompt,
      toolSet.buildBlockPrompt(o.block),
      toolSet.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    ),
    toolSet: toolSet.id,
    dataChecksums: {},
    loupeVersion: LOUPE_VERSION,
    sandbox: o.kernel.sandbox,
    workspace,
  });
  if (o.kernel.sandbox === 'off') {
    await o.store.addEvent(
      runId,
      'warning',
      'UNCONTAINED: this run has no sandbox (sandbox "off"). Agent code and the SQL tool run with your user\'s permissions: they can read the answers and any file you can, write anywhere you can, and use the network. Nothing Loupe says about containment holds for this run.',
    );
  }
  if (fork) {
    const copied = await seedForkInterventions(o.store, runId, fork, o.forkOf?.hint);
    await o.store.addEvent(
      runId,
      'fork',
      `forked from run ${fork.parent.id} at step ${fork.step}: steps 1–${fork.step} are replayed without model calls${copied.length ? `; ${copied.length} human step${copied.length === 1 ? '' : 's'} carried over or added` : ''}`,
    );
    const mcp = fork.parent.agent.startsWith('mcp:') ? fork.parent.params.mcp : undefined;
    if (mcp) {
      // Issue 24: the parent's steps were an MCP client's tool calls; the fork replays them and Loupe's agent continues.
      await o.store.addEvent(
        runId,
        'fork',
        `steps 1–${fork.step} were the MCP client ${mcp.client} ${mcp.clientVersion}'s calls, replayed; Loupe's agent continues with ${model.model}`,
      );
      if (!mcp.contained) {
        await o.store.addEvent(
          runId,
          'warning',
          `UNCONTAINED parent: the MCP client ${mcp.client} declared no sandbox of its own when it drove steps 1–${fork.step}. Only its calls of Loupe's tools are replayed here; whatever its own shell or file tools did is neither replayed nor contained.`,
        );
      }
    }
  }
  o.onRunCreated?.(runId, created);
  log.info(`run ${runId}: ${o.suite.kind} block ${o.block.id}, agent ${o.agent}`);
  const recorded = checksumsP.then(
    (c) => o.store.setDataChecksums(runId, c),
    (e: unknown) => o.store.addEvent(runId, 'warning', `data checksums failed: ${(e as Error).message}`),
  );
  try {
    return await drive(
      o,
      runId,
      runDir,
      workspace,
      toolSet,
      model,
      false,
      fork ? { parentRunId: fork.parent.id, steps: fork.steps, cells: fork.cells } : undefined,
    );
  } finally {
    await recorded;
  }
}

async function drive(
  o: BlockRunOptions,
  runId: string,
  runDir: string,
  workspace: string,
  toolSet: ToolSet,
  model: ModelClient,
  resume: boolean,
  replay?: AgentRunOptions['replay'],
): Promise<AgentRunResult> {
  const log = o.log ?? nullLogger;
  let driven = true;
  const live = o.otel ? await startLiveOtel(o.store, runId, o.otel) : undefined;
  if (live) {
    const onEvent = o.onEvent;
    o = {
      ...o,
      onEvent: (e) => {
        live.onEvent(e);
        onEvent?.(e);
      },
    };
  }
  try {
    return await driveBlock(o, runId, runDir, workspace, toolSet, model, resume, replay);
  } catch (e) {
    // another process holds the run's lease: it drives the run and keeps its files when the run ends
    if (e instanceof RunLeaseError) driven = false;
    throw e;
  } finally {
    // However the run ended — finished, out of budget, failed, cancelled, or an exception out of the loop or the
    // benchmark's hooks — the files the agent wrote are kept in the store (issue 26), evidence files first.
    if (driven) await storeArtefacts(o.store, runId, o.runsDir, log);
    await live?.end();
  }
}

async function driveBlock(
  o: BlockRunOptions,
  runId: string,
  runDir: string,
  workspace: string,
  toolSet: ToolSet,
  model: ModelClient,
  resume: boolean,
  replay?: AgentRunOptions['replay'],
): Promise<AgentRunResult> {
  const log = o.log ?? nullLogger;
  const kopts = kernelPlacement(runDir, workspaceBlock(o.block, o.toolSetOptions), o.kernel.sandbox);
  const startKernel = () =>
    o.startKernel ? o.startKernel(kopts) : defaultStartKernel(o.kernel, o.block.suite, kopts, log);
  const def: BenchmarkDefinition = getBenchmark(o.block.suite, `block ${o.block.id}`);
  if (def.runWithoutLoop && replay) {
    throw new LoupeInputError(
      `run ${runId}`,
      `${def.title} runs do not go through the agent loop: they cannot be forked`,
    );
  }
  if (def.runWithoutLoop) {
    return def.runWithoutLoop({
      store: o.store,
      runId,
      block: o.block,
      model,
      ...(o.control?.signal ? { signal: o.control.signal } : {}),
    });
  }
  const hook = {
    store: o.store,
    runId,
    block: o.block,
    toolSet,
    options: parseToolOptions(def.kind, o.toolSetOptions),
  };
  const m = def.prepareModel ? def.prepareModel(model, hook) : model;
  let res: AgentRunResult;
  try {
    res = await runAgent({
      store: o.store,
      runId,
      model: m,
      toolSet,
      block: o.block,
      workspace,
      startKernel,
      sandbox: o.kernel.sandbox,
      budget: o.budget,
      resume,
      maxObservationChars: o.maxObservationChars,
      control: o.control,
      onEvent: o.onEvent,
      log,
      ...(replay ? { replay } : {}),
    });
  } finally {
    // Sandboxed, Loupe makes no links in the workspace: every link there was planted by agent code. They are
    // removed so that no tool, replay or export on the host follows one out of the workspace.
    if (o.kernel.sandbox !== 'off') {
      const removed = removePlantedLinks(workspace);
      if (removed.length) {
        await o.store.addEvent(
          runId,
          'warning',
          `removed ${removed.length} symbolic link(s) planted in the workspace: ${removed.slice(0, 10).join(', ')}${removed.length > 10 ? ', ...' : ''}`,
        );
      }
      // For people opening the run's workspace afterwards (Open Run Workspace): the empty mount points become
      // links to the block's visible files again; a resume or an analyst kernel turns them back into mount points.
      presentWorkspace(runDir, workspaceBlock(o.block, o.toolSetOptions));
    }
  }
  if (def.completeRun) await def.completeRun(m, hook, res.status);
  return res;
}

/**
 * Keeps the files the agent wrote (report, figures, outputs) in the run store when a run ends (issue 26), the
 * benchmark's evidence files first, so a colleague without the run folder sees the same evidence. A failure is a run
 * event, never a failed run.
 */
async function storeArtefacts(store: RunStore, runId: string, runsDir: string, log: Logger): Promise<void> {
  const run = await store.getRun(runId).catch(() => undefined);
  if (run) await captureRunEvidence(store, run, await runFolderOf(store, run, runsDir, log), log);
}

/**
 * Continues a recorded run after its last committed step.
 * @param o as for {@link startBlockRun}; `suite`/`block` must be the run's (load them from `run.params.suiteRoot`).
 * @throws LoupeInputError when the run is unknown or belongs to another block; RunFolderRefusedError (a
 *   LoupeInputError, `store/run-folder.ts`) when its recorded workspace is not a folder of `o.runsDir` (issue 36).
 */
export async function resumeBlockRun(o: BlockRunOptions & { runId: string }): Promise<AgentRunResult> {
  const run = await o.store.getRun(o.runId);
  if (!run) throw new LoupeInputError('--resume', `no run '${o.runId}' in ${o.store.location}`);
  if (run.blockId !== o.block.id) {
    throw new LoupeInputError('--resume', `run ${o.runId} is for block ${run.blockId}, not ${o.block.id}`);
  }
  o = { ...o, toolSetOptions: o.toolSetOptions ?? run.params.toolSetOptions };
  if (run.status === 'finished') throw new LoupeInputError('--resume', `run ${o.runId} already finished`);
  if (run.agent.startsWith('mcp:') && !(o.modelClient as { external?: boolean } | undefined)?.external) {
    throw new LoupeInputError(
      `run ${o.runId}`,
      `was driven by the external MCP client ${run.agent.slice(4)}: only a new MCP connection can continue it (loupe mcp --resume)`,
    );
  }
  if (run.agent.startsWith('human:') && !(o.modelClient as { external?: boolean } | undefined)?.external) {
    throw new LoupeInputError(
      `run ${o.runId}`,
      `is a human baseline by ${run.agent.slice(6)}: only its expert continues it (Start Human Baseline, loupe baseline --resume)`,
    );
  }
  const toolSet = toolSetFor({
    ...o,
    budget: { ...o.budget, maxSteps: o.budget?.maxSteps ?? (run.params.maxSteps as number | undefined) },
  });
  const model = modelFor({ ...o, agent: run.agent as AgentKind });
  // Issue 36: the recorded workspace is driven only inside this user's runs folder (never a folder a colleague set).
  const { runDir, workspace } = requireRunFolder(
    run,
    o.runsDir,
    `it is not resumed (the runs folder is ${o.runsDir})`,
    { allowAbsent: true },
  );
  if (run.sandbox !== o.kernel.sandbox) {
    await o.store.addEvent(run.id, 'warning', `resumed with sandbox '${o.kernel.sandbox}' (was '${run.sandbox}')`);
  }
  const maxObservationChars = o.maxObservationChars ?? (run.params.maxObservationChars as number | undefined);
  return drive(
    {
      ...o,
      agent: run.agent as AgentKind,
      maxObservationChars,
      budget: { ...o.budget, maxSteps: o.budget?.maxSteps ?? (run.params.maxSteps as number | undefined) },
    },
    run.id,
    runDir,
    workspace,
    toolSet,
    model,
    true,
  );
}

/**
 * Records a run that a worker will drive later (a unit of a sweep, issue 27): status `pending`, the same parameters,
 * prompt hash and tool set as {@link startBlockRun} would record, and the sweep it belongs to. Nothing is prepared
 * on disk (the workspace is made on the worker's machine, see {@link driveQueuedRun}); no model is called.
 * @param o as for {@link startBlockRun}, plus `runId` (chosen by the sweep, unique in the store) and `sweepId`.
 * @returns the stored run.
 * @throws LoupeInputError for an unrunnable block, a bad tool option or model configuration; Error when the store
 *   already holds a run with that id.
 */
export async function createQueuedRun(o: BlockRunOptions & { runId: string; sweepId: string }): Promise<RunRecord> {
  if (!o.block.runnable) throw new LoupeInputError(o.block.id, `block is not runnable: ${o.block.problems.join('; ')}`);
  const toolSet = toolSetFor(o);
  const model = modelFor(o);
  return o.store.createRun({
    id: o.runId,
    suite: o.suite.kind,
    blockId: o.block.id,
    agent: o.agent,
    model: o.agent === 'reference' ? 'reference' : model.model,
    params: runParams(o, toolSet),
    promptHash: promptHash(
      toolSet.systemPrompt,
      toolSet.buildBlockPrompt(o.block),
      toolSet.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    ),
    toolSet: toolSet.id,
    dataChecksums: {},
    loupeVersion: LOUPE_VERSION,
    sandbox: o.kernel.sandbox,
    workspace: join(o.runsDir, o.runId, 'workspace'),
    sweepId: o.sweepId,
  });
}

/**
 * Drives a run recorded by {@link createQueuedRun} on this machine (a sweep worker, issue 27): its workspace moves
 * to `runsDir/<run id>/workspace` here; a run never started begins at step 1 (data checksums recorded), any other
 * continues after its last committed step with the kernel state rebuilt by replaying its recorded cells, exactly
 * as {@link resumeBlockRun}. The run lease (taken by the agent loop) makes sure one process drives it.
 * @param o as for {@link startBlockRun} (`suite`/`block` the run's), plus `runId`.
 * @returns the final status, or the stored one (no model call) when the run had already finished or exhausted its budget.
 * @throws LoupeInputError when the run is unknown or of another block; RunLeaseError (agent loop) when another live
 *   process drives it; the store's errors when it cannot be reached.
 */
export async function driveQueuedRun(o: BlockRunOptions & { runId: string }): Promise<AgentRunResult> {
  const run = await o.store.getRun(o.runId);
  if (!run) throw new LoupeInputError(`run ${o.runId}`, `no such run in ${o.store.location}`);
  if (run.blockId !== o.block.id) {
    throw new LoupeInputError(`run ${o.runId}`, `is for block ${run.blockId}, not ${o.block.id}`);
  }
  if (run.status === 'finished' || run.status === 'budget_exhausted') {
    return { runId: run.id, status: run.status, reason: run.statusReason ?? '', steps: run.steps };
  }
  const workspace = join(o.runsDir, runIdSegment(run.id), 'workspace'); // issue 36: a queued id from the store is one plain segment
  const fresh = run.status === 'pending' && run.steps === 0;
  // eslint-disable-next-line no-restricted-properties -- only compared and shown, never used as a path (issue 36)
  const recordedWs = run.storedWorkspace;
  if (recordedWs !== workspace) {
    await o.store.updateRun(run.id, { workspace });
    if (!fresh) {
      await o.store.addEvent(
        run.id,
        'worker',
        `workspace moved to ${workspace} on this machine (was ${recordedWs}); files written by recorded cells come back when they are replayed`,
      );
    }
  }
  if (!fresh) {
    // an earlier attempt died before it recorded the data checksums: record them now
    if (!Object.keys(run.dataChecksums).length && o.block.visible.data.length) {
      await Promise.all(o.block.visible.data.map(async (f) => [f.rel, await fileSha256(f.path)] as const)).then(
        (e) => o.store.setDataChecksums(run.id, Object.fromEntries(e)),
        (e: unknown) => o.store.addEvent(run.id, 'warning', `data checksums failed: ${(e as Error).message}`),
      );
    }
    return resumeBlockRun({ ...o, runId: run.id });
  }
  o = {
    ...o,
    toolSetOptions: o.toolSetOptions ?? run.params.toolSetOptions,
    maxObservationChars: o.maxObservationChars ?? (run.params.maxObservationChars as number | undefined),
  };
  const budget = { ...o.budget, maxSteps: o.budget?.maxSteps ?? (run.params.maxSteps as number | undefined) };
  const toolSet = toolSetFor({ ...o, budget });
  const model = modelFor(o);
  prepareWorkspace(dirname(workspace), workspaceBlock(o.block, o.toolSetOptions), {
    links: o.kernel.sandbox === 'off',
  });
  const recorded = Promise.all(o.block.visible.data.map(async (f) => [f.rel, await fileSha256(f.path)] as const)).then(
    (e) => o.store.setDataChecksums(run.id, Object.fromEntries(e)),
    (e: unknown) => o.store.addEvent(run.id, 'warning', `data checksums failed: ${(e as Error).message}`),
  );
  o.onRunCreated?.(run.id, run);
  try {
    return await drive({ ...o, budget }, run.id, dirname(workspace), workspace, toolSet, model, false);
  } finally {
    await recorded.catch(() => undefined);
  }
}
