/**
 * Commands of the run experience: "Run Benchmark Block" (suite → block → model profile → repeats), "Set API Key",
 * and the run actions of the Runs view (timeline, heatmap, notebook, workspace, resume, stop, export, delete).
 */
import { importInspectLog } from '../../core/runs/inspect/import.ts';
import { listInspectLogs } from '../../core/runs/inspect/read-log.ts';
import { writeInspectLog } from '../../core/runs/inspect/write-log.ts';
import { notebookPathIn, requireRunFolderIn, runFolderIn } from './run-folder.ts';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import type { LlmConfig } from '../../core/agent/llm.ts';
import type { RunRecord } from '../../core/agent/types.ts';
import { findBenchmark } from '../../core/benchmarks/registry.ts';
import { reopenRun } from '../../core/runs/reopen.ts';
import { referenceAgentAvailable } from '../../core/runs/runner.ts';
import { errorMessage } from '../../core/util/errors.ts';
import { exportTrajectoryJsonl } from '../../core/store/export.ts';
import { loadSuite, parseSuiteKind } from '../../core/benchmarks/index.ts';
import type { Block, Suite } from '../../core/suites/types.ts';
import { apiKeySecretName, type ModelProfile, type SuiteSetting } from '../config.ts';
import type { LoupeContext } from '../context.ts';
import { TimelinePanel } from '../panels/timeline-panel.ts';
import { cellMeta, RunNotebook } from './run-notebook.ts';
import { RunSession } from './run-session.ts';
import { rememberFolder } from '../folder-context.ts';
import { showErrorMessage, showInformationMessage, showWarningMessage } from '../messages.ts';
import { oneLine } from '../../core/util/text-safety.ts';

/** What "Run Benchmark Block" may be given (from the Benchmarks view, a test, or nothing: the palette). */
export interface RunBlockArgs {
  suite?: string;
  root?: string;
  blockId?: string;
  /** Model profile name, or `reference`. */
  profile?: string;
  repeats?: number;
  /** Do not wait for the runs to end (default: the command resolves when all runs ended). */
  background?: boolean;
}

const REFERENCE = 'reference';
const secretKey = apiKeySecretName;

async function loadConfiguredSuite(s: SuiteSetting): Promise<Suite> {
  return loadSuite(parseSuiteKind(s.suite, 'loupe.suites'), s.root, s.entities ? { entities: s.entities } : {});
}

/** Accepts `{ suite, root, blockId }`, a Benchmarks-view node carrying those, or nothing. */
function asRunArgs(arg: unknown): RunBlockArgs {
  if (!arg || typeof arg !== 'object') return {};
  const a = arg as Record<string, unknown>;
  const block = (a.block ?? undefined) as Block | undefined;
  const suite = (a.suite ?? undefined) as Suite | string | undefined;
  return {
    suite:
      typeof suite === 'string' ? suite : (suite?.kind ?? (typeof block?.suite === 'string' ? block.suite : undefined)),
    root: typeof a.root === 'string' ? a.root : typeof suite === 'object' ? suite.root : undefined,
    blockId: typeof a.blockId === 'string' ? a.blockId : block?.id,
    profile: typeof a.profile === 'string' ? a.profile : undefined,
    repeats: typeof a.repeats === 'number' ? a.repeats : undefined,
    background: a.background === true,
  };
}

async function pickSuite(ctx: LoupeContext, args: RunBlockArgs): Promise<Suite | undefined> {
  const configured = ctx.settings.suites;
  let setting: SuiteSetting | undefined;
  // A configured suite of that root keeps its own fields (DDR's entities); otherwise the root alone.
  if (args.suite && args.root) {
    setting = configured.find((s) => s.suite === args.suite && s.root === args.root) ?? {
      suite: args.suite,
      root: args.root,
    };
  } else if (args.suite) setting = configured.find((s) => s.suite === args.suite);
  if (!setting) {
    if (!configured.length) {
      const open = 'Open Settings';
      const pick = await showWarningMessage(
        'Loupe: no benchmark suites configured. Add one to the setting loupe.suites.',
        open,
      );
      if (pick === open) await vscode.commands.executeCommand('workbench.action.openSettings', 'loupe.suites');
      return undefined;
    }
    const pick =
      configured.length === 1
        ? { s: configured[0] as SuiteSetting }
        : await vscode.window.showQuickPick(
            configured.map((s) => ({ label: s.suite, description: s.root, s })),
            { title: 'Run Benchmark Block (1/4): suite', placeHolder: 'Which benchmark suite?' },
          );
    if (!pick) return undefined;
    setting = pick.s;
  }
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: `Loading ${setting.suite} suite…` },
    () => loadConfiguredSuite(setting),
  );
}

async function pickBlock(suite: Suite, args: RunBlockArgs): Promise<Block | undefined> {
  if (args.blockId) {
    const b = suite.blocks.find((x) => x.id === args.blockId);
    if (!b) throw new Error(`No block '${args.blockId}' in the ${suite.kind} suite at ${suite.root}`);
    return b;
  }
  const sorted = [...suite.blocks].sort((a, b) => Number(b.runnable) - Number(a.runnable));
  const pick = await vscode.window.showQuickPick(
    sorted.map((b) => ({
      label: `${b.runnable ? '$(play)' : '$(warning)'} ${b.id}`,
      description: `${b.items.length} item${b.items.length === 1 ? '' : 's'}${b.title !== b.id ? ` · ${b.title}` : ''}`,
      detail: b.runnable ? undefined : `Not runnable: ${b.problems.join('; ')}`,
      b,
    })),
    {
      title: 'Run Benchmark Block (2/4): block',
      placeHolder: 'Runnable blocks first',
      matchOnDescription: true,
      matchOnDetail: true,
    },
  );
  if (!pick) return undefined;
  if (!pick.b.runnable) throw new Error(`Block ${pick.b.id} is not runnable: ${pick.b.problems.join('; ')}`);
  return pick.b;
}

async function pickProfile(
  ctx: LoupeContext,
  args: RunBlockArgs,
  block: Block,
): Promise<ModelProfile | typeof REFERENCE | undefined> {
  const profiles = ctx.settings.models;
  // Issue 22: offer only agents that can run this block (no reference agent for DDR, none for a LongDA block without a script).
  const ref = referenceAgentAvailable(block);
  if (args.profile === REFERENCE) {
    if (!ref.ok) throw new Error(`The reference agent cannot run block ${block.id}: ${ref.reason}.`);
    return REFERENCE;
  }
  if (args.profile) {
    const p = profiles.find((x) => x.name === args.profile);
    if (!p) throw new Error(`No model profile '${args.profile}' in loupe.models`);
    return p;
  }
  if (!profiles.length && !ref.ok) {
    const open = 'Open Settings';
    const pick = await showWarningMessage(
      `Loupe: no agent can run block ${block.id}. Add a model profile to the setting loupe.models (the reference agent cannot run it: ${ref.reason}).`,
      open,
    );
    if (pick === open) await vscode.commands.executeCommand('workbench.action.openSettings', 'loupe.models');
    return undefined;
  }
  const items = [
    ...profiles.map((p) => ({
      label: `$(hubot) ${p.name}`,
      description: `${p.model} · ${p.baseUrl}`,
      p: p as ModelProfile | typeof REFERENCE,
    })),
    ...(ref.ok
      ? [
          {
            label: '$(beaker) reference',
            description: 'the reference solution (no model): checks data, tools and scoring',
            p: REFERENCE as ModelProfile | typeof REFERENCE,
          },
        ]
      : []),
  ];
  const pick = await vscode.window.showQuickPick(items, {
    title: 'Run Benchmark Block (3/4): agent',
    placeHolder: profiles.length
      ? ref.ok
        ? 'Which model?'
        : `Which model? (no reference agent for this block: ${ref.reason})`
      : 'No model profiles in loupe.models yet: the reference agent can run this block',
  });
  return pick?.p;
}

async function pickRepeats(args: RunBlockArgs): Promise<number | undefined> {
  if (args.repeats) return args.repeats;
  const pick = await vscode.window.showQuickPick(
    ['1', '3', '5', '10'].map((n) => ({ label: n, description: n === '1' ? 'one run' : `${n} independent runs` })),
    { title: 'Run Benchmark Block (4/4): repeats', placeHolder: 'How many runs of this block?' },
  );
  return pick ? Number(pick.label) : undefined;
}

export async function llmConfig(ctx: LoupeContext, p: ModelProfile): Promise<LlmConfig> {
  const apiKey = await ctx.extension.secrets.get(secretKey(p.name));
  return {
    baseUrl: p.baseUrl,
    model: p.model,
    apiKey: apiKey ?? undefined,
    temperature: p.temperature,
    maxTokens: p.maxTokens,
    reasoningEffort: p.reasoningEffort,
    stream: p.stream,
    pricePerMillionInput: p.pricePerMillionInput,
    pricePerMillionOutput: p.pricePerMillionOutput,
  };
}

let statusItem: vscode.StatusBarItem | undefined;

function updateStatus(): void {
  if (!statusItem) return;
  const n = RunSession.active.length;
  if (!n) {
    statusItem.hide();
    return;
  }
  statusItem.text = `$(sync~spin) Loupe: ${n} run${n === 1 ? '' : 's'}`;
  statusItem.tooltip = RunSession.active.map((s) => `${s.runId ?? '…'}`).join('\n');
  statusItem.show();
}

/** The status-bar item shown while runs are active. */
export function createRunStatusItem(): vscode.Disposable {
  statusItem = vscode.window.createStatusBarItem('loupe.runs', vscode.StatusBarAlignment.Left, 50);
  statusItem.name = 'Loupe runs';
  statusItem.command = 'loupe.runs.focus';
  const sub = RunSession.onDidChange(updateStatus);
  return {
    dispose: () => {
      sub.dispose();
      statusItem?.dispose();
      statusItem = undefined;
    },
  };
}

/** Loupe: Run Benchmark Block. Resolves with the run ids once every run ended (or at once with `background`). */
export async function runBenchmarkBlock(ctx: LoupeContext, raw?: unknown): Promise<string[] | undefined> {
  if (!vscode.workspace.isTrusted) {
    void showErrorMessage(
      'Loupe: running agents executes model-written code. Trust this workspace first (Workspaces: Manage Workspace Trust).',
    );
    return undefined;
  }
  const args = asRunArgs(raw);
  const suite = await pickSuite(ctx, args);
  if (!suite) return undefined;
  const block = await pickBlock(suite, args);
  if (!block) return undefined;
  const profile = await pickProfile(ctx, args, block);
  if (!profile) return undefined;
  const repeats = await pickRepeats(args);
  if (!repeats) return undefined;
  if (ctx.settings.sandbox === 'off') {
    void showWarningMessage(
      'Loupe: the sandbox is OFF (setting loupe.sandbox = "off"). Agent code and the SQL tool run with your permissions and network: they can read the benchmark answers and write anywhere you can. Runs are recorded as uncontained.',
    );
  }
  const llm = profile === REFERENCE ? undefined : await llmConfig(ctx, profile);
  const runIds: string[] = [];
  const work = vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Loupe: ${block.id}`, cancellable: true },
    async (progress, token) => {
      for (let i = 1; i <= repeats; i++) {
        if (token.isCancellationRequested) break;
        progress.report({ message: `run ${i} of ${repeats} (${profile === REFERENCE ? 'reference' : profile.name})` });
        // Issue 22: repeats open one notebook, timeline and terminal (the first run's); the others are listed at the end.
        const session = new RunSession(ctx, {
          suite,
          block,
          agent: profile === REFERENCE ? 'reference' : 'llm',
          llm,
          repeat: i,
          showUi: i === 1,
        });
        ctx.register(session);
        const cancel = token.onCancellationRequested(() =>
          session.control.stop('cancelled from the progress notification'),
        );
        try {
          const r = await session.run();
          runIds.push(r.runId);
          progress.report({ increment: 100 / repeats, message: `run ${i}: ${r.status} after ${r.steps} steps` });
          if (r.status === 'failed') void showWarningMessage(`Loupe: run ${r.runId} failed: ${r.reason}`);
        } finally {
          cancel.dispose();
        }
      }
      return runIds;
    },
  );
  void work.then(
    (ids) => listOtherRepeats(ids, block.id),
    () => undefined,
  );
  if (args.background) return runIds;
  await work;
  return runIds;
}

/** After repeats: the first run is open; the message lists the others and opens the one picked. */
async function listOtherRepeats(ids: string[], blockId: string): Promise<void> {
  if (ids.length < 2) return;
  const open = 'Open Another Run…';
  const pick = await showInformationMessage(
    `Loupe: ${ids.length} runs of ${blockId} finished. The first is open; the others: ${ids.slice(1).join(', ')} (also in the Runs view).`,
    open,
  );
  if (pick !== open) return;
  const id = await vscode.window.showQuickPick(
    ids.slice(1).map((x, k) => ({ label: `repeat ${k + 2}`, description: x, id: x })),
    { title: `Runs of ${blockId}` },
  );
  if (id) await vscode.commands.executeCommand('loupe.openRun', id.id);
}

export async function setApiKey(ctx: LoupeContext, raw?: unknown): Promise<boolean> {
  const a = (raw ?? {}) as { profile?: string; key?: string };
  const profiles = ctx.settings.models;
  let name = a.profile;
  if (!name) {
    if (!profiles.length) {
      void showWarningMessage('Loupe: add a model profile to the setting loupe.models first.');
      return false;
    }
    name = (
      await vscode.window.showQuickPick(
        profiles.map((p) => ({ label: p.name, description: `${p.model} · ${p.baseUrl}` })),
        { title: 'Set API Key for…' },
      )
    )?.label;
  }
  if (!name) return false;
  const key =
    a.key ??
    (await vscode.window.showInputBox({
      title: `API key for ${name}`,
      password: true,
      ignoreFocusOut: true,
      prompt: 'Stored in VS Code SecretStorage; never written to the run store, logs or exports.',
    }));
  if (key === undefined) return false;
  if (key === '') await ctx.extension.secrets.delete(secretKey(name));
  else await ctx.extension.secrets.store(secretKey(name), key);
  void showInformationMessage(key ? `Loupe: API key for ${name} stored.` : `Loupe: API key for ${name} removed.`);
  return true;
}

/** A run id from a command argument (string, Runs-view node) or a QuickPick over the store. */
async function runFrom(
  ctx: LoupeContext,
  raw: unknown,
  title: string,
  o: { only?: (r: RunRecord) => boolean; none?: string } = {},
): Promise<RunRecord | undefined> {
  const store = ctx.store();
  const id = typeof raw === 'string' ? raw : (raw as { run?: RunRecord } | undefined)?.run?.id;
  if (id) {
    const r = await store.getRun(id);
    if (!r) throw new Error(`No run ${id} in ${ctx.storePath}`);
    return r;
  }
  const all = await store.listRuns({ limit: 500 });
  const runs = o.only ? all.filter(o.only) : all;
  if (!runs.length) {
    void showInformationMessage(
      all.length && o.none ? `Loupe: ${o.none}` : 'Loupe: no runs yet. Use "Loupe: Run Benchmark Block".',
    );
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    runs.map((r) => ({
      label: `${oneLine(r.blockId)} · ${r.status}`,
      description: `${oneLine(r.agent)}${r.model ? ` · ${oneLine(r.model)}` : ''} · ${r.createdAt}`,
      detail: r.id,
      r,
    })),
    { title, matchOnDetail: true },
  );
  return pick?.r;
}

async function loadRunBlock(run: RunRecord): Promise<{ suite: Suite; block: Block }> {
  try {
    const { suite, block } = await reopenRun(run);
    return { suite, block };
  } catch (e) {
    throw new Error(
      `Run ${run.id}: its block ${run.blockId} could not be reopened from ${run.params.suiteRoot ?? 'an unrecorded folder'} (${errorMessage(e)})`,
      { cause: e },
    );
  }
}

/**
 * Issue 38: the notebook never renders an agent's HTML; this shows what a run-notebook cell's code produced, raw (the
 * DataFrame's own `to_html`, stdout, stderr, the result's repr, the error), as a plain-text document. Arg: a
 * notebook cell (its title menu); without one, the selected cell of the active notebook.
 */
async function showRawCellOutput(ctx: LoupeContext, arg: unknown): Promise<string | undefined> {
  const editor = vscode.window.activeNotebookEditor;
  const cell =
    arg && typeof arg === 'object' && 'notebook' in arg
      ? (arg as vscode.NotebookCell)
      : editor?.notebook.cellAt(editor.selections[0]?.start ?? 0);
  const meta = cell ? cellMeta(cell) : undefined;
  if (!meta) {
    throw new Error("Choose a code cell of a run notebook (a Loupe run's notebook.ipynb) to show its raw output.");
  }
  const c = (await ctx.store().getCells(meta.runId, { withFigures: false })).find((x) => x.seq === meta.seq);
  if (!c) throw new Error(`Run ${meta.runId} has no recorded cell ${meta.seq} in the store.`);
  const part = (title: string, body: string | null | undefined) =>
    body ? [`──── ${title} ────`, body.replace(/\n$/, ''), ''] : [];
  const content = [
    `Raw output of cell ${meta.seq} (run ${meta.runId}, ${c.stepIndex < 0 ? 'analyst cell' : `step ${c.stepIndex + 1}`}, status ${c.status}), as the code produced it.`,
    'Shown as text, never rendered: the notebook shows these values as text and tables Loupe builds itself.',
    '',
    ...part('stdout', c.stdout),
    ...part('stderr', c.stderr),
    ...part('result (repr)', c.result),
    ...c.tables.flatMap((t, i) => [
      ...part(`table ${i + 1}: to_string`, t.text),
      ...part(`table ${i + 1}: to_html (the agent's HTML, raw)`, t.html),
    ]),
    ...part('error', c.error ? [`${c.error.ename}: ${c.error.evalue}`, ...c.error.traceback].join('\n') : null),
    ...(c.figureCount ? [`${c.figureCount} figure(s) (PNG, shown in the notebook)`] : []),
  ].join('\n');
  const doc = await vscode.workspace.openTextDocument({ content, language: 'plaintext' });
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
  return content;
}

export function runCommands(): Record<string, (ctx: LoupeContext, ...args: unknown[]) => unknown> {
  return {
    'loupe.runBenchmarkBlock': (ctx, arg) => runBenchmarkBlock(ctx, arg),
    'loupe.setApiKey': (ctx, arg) => setApiKey(ctx, arg),
    'loupe.openTimeline': async (ctx, arg, focusStep) => {
      const r = await runFrom(ctx, arg, 'Open Trajectory Timeline');
      if (!r) return undefined;
      await TimelinePanel.show(ctx, r.id, { focusStep: typeof focusStep === 'number' ? focusStep : undefined });
      return r.id;
    },
    'loupe.showToolHeatmap': async (ctx, arg) => {
      const r = await runFrom(ctx, arg, 'Show Tool-Usage Heatmap');
      if (!r) return undefined;
      TimelinePanel.get(r.id)?.dispose();
      await TimelinePanel.show(ctx, r.id, { showHeatmap: true });
      return r.id;
    },
    'loupe.showRawCellOutput': (ctx, arg) => showRawCellOutput(ctx, arg),
    'loupe.openRunNotebook': async (ctx, arg, cellSeq) => {
      const r = await runFrom(ctx, arg, 'Open Run Notebook');
      if (!r) return undefined;
      const nb = RunSession.get(r.id)?.notebook ?? new RunNotebook(ctx.store(), r, notebookPathIn(ctx, r));
      if (!RunSession.get(r.id)) await nb.writeFile();
      const editor = await nb.open({
        preserveFocus: false,
        ...(typeof cellSeq === 'number' ? { viewColumn: vscode.ViewColumn.Beside } : {}),
      });
      if (typeof cellSeq === 'number') {
        // an annotator's evidence link: select and reveal the cell that ran as kernel cell `cellSeq`
        const at = editor.notebook.getCells().findIndex((c) => cellMeta(c)?.seq === cellSeq);
        if (at >= 0) {
          const range = new vscode.NotebookRange(at, at + 1);
          editor.selections = [range];
          editor.revealRange(range, vscode.NotebookEditorRevealType.InCenter);
        }
      }
      return nb.uri.fsPath;
    },
    'loupe.openRunWorkspace': async (ctx, arg) => {
      const r = await runFrom(ctx, arg, 'Open Run Workspace');
      if (!r) return undefined;
      // Issue 22: the new window shows this run's suite and store (kept in the extension's state, not in the folder).
      const kind = r.params.suiteKind ?? r.suite;
      const root = r.params.suiteRoot;
      const configured = ctx.settings.suites.find((x) => x.suite === kind && x.root === root);
      const suites = configured
        ? [configured]
        : root
          ? [
              {
                suite: kind,
                root,
                ...(r.params.loadOptions?.entities ? { entities: r.params.loadOptions.entities } : {}),
              },
            ]
          : [];
      const { workspace } = requireRunFolderIn(ctx, r, 'its workspace is not opened');
      await rememberFolder(ctx.extension.globalState, workspace, {
        kind: 'run',
        suites,
        runsDirectory: ctx.runsDirectory,
        blockId: r.blockId,
        runId: r.id,
      });
      if ((arg as { open?: boolean } | undefined)?.open === false) return workspace;
      await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(workspace), { forceNewWindow: true });
      return workspace;
    },
    'loupe.resumeRun': async (ctx, arg) => {
      const r = await runFrom(ctx, arg, 'Resume Run');
      if (!r) return undefined;
      if (RunSession.get(r.id) && !RunSession.get(r.id)?.result) throw new Error(`Run ${r.id} is still running`);
      requireRunFolderIn(ctx, r, 'it is not resumed', { allowAbsent: true }); // issue 36: never a folder set in the store
      const { suite, block } = await loadRunBlock(r);
      const profile = ctx.settings.models.find((p) => p.model === r.model && p.baseUrl === r.params.baseUrl);
      if (r.agent === 'llm' && !profile) {
        throw new Error(`No model profile in loupe.models matches ${r.model} at ${String(r.params.baseUrl)}`);
      }
      const session = new RunSession(ctx, {
        suite,
        block,
        agent: r.agent === 'reference' ? 'reference' : 'llm',
        llm: profile ? await llmConfig(ctx, profile) : undefined,
        resumeRunId: r.id,
      });
      ctx.register(session);
      const res = await session.run();
      return res.status;
    },
    'loupe.stopRun': async (ctx, arg) => {
      // Issue 22: only runs that are running in this window can be stopped, so only those are offered.
      const r = await runFrom(ctx, arg, 'Stop Run', {
        only: (x) => !!RunSession.get(x.id) && !RunSession.get(x.id)?.result,
        none: 'no run is running in this window.',
      });
      const s = r && RunSession.get(r.id);
      if (!s || s.result) {
        void showInformationMessage('Loupe: that run is not running in this window.');
        return false;
      }
      s.control.stop('stopped from the Runs view');
      return true;
    },
    /** Args: run, format (`jsonl` or the benchmark's kind), target (a file for JSONL, a folder for results; else a save dialog). */
    'loupe.exportRun': async (ctx, arg, format, target) => {
      const r = await runFrom(ctx, arg, 'Export Run');
      if (!r) return undefined;
      const def = findBenchmark(r.suite);
      const formats = [
        { label: 'JSONL trajectory', id: 'jsonl' },
        ...(def?.exportResults
          ? [{ label: `${def.title} results files (the benchmark's own format)`, id: def.kind }]
          : []),
        { label: 'Inspect AI log (.eval)', id: 'inspect' },
      ];
      const fmt =
        typeof format === 'string'
          ? format
          : (await vscode.window.showQuickPick(formats, { title: `Export run ${r.id}` }))?.id;
      if (!fmt) return undefined;
      // Issue 22: where to is the user's choice (a save dialog), the run's folder by default.
      const outDir = join(runFolderIn(ctx, r).runDir ?? ctx.runsDirectory, 'export');
      const store = ctx.store();
      let out: string;
      if (fmt === 'jsonl') {
        const chosen =
          typeof target === 'string'
            ? target
            : (
                await vscode.window.showSaveDialog({
                  title: `Export run ${r.id} as a JSONL trajectory`,
                  defaultUri: vscode.Uri.file(join(outDir, `${r.id.replace(/[^A-Za-z0-9._-]/g, '_')}.jsonl`)),
                  filters: { 'JSON Lines': ['jsonl'] },
                  saveLabel: 'Export',
                })
              )?.fsPath;
        if (!chosen) return undefined;
        out = chosen;
        mkdirSync(dirname(out), { recursive: true });
        writeFileSync(out, await exportTrajectoryJsonl(store, r.id));
      } else if (def?.exportResults && fmt === def.kind) {
        const chosen =
          typeof target === 'string'
            ? target
            : (
                await vscode.window.showSaveDialog({
                  title: `Export run ${r.id} as ${def.title} results (a folder)`,
                  defaultUri: vscode.Uri.file(join(outDir, `${def.kind}-results`)),
                  saveLabel: 'Export here',
                })
              )?.fsPath;
        if (!chosen) return undefined;
        const { block } = await loadRunBlock(r);
        out = chosen;
        mkdirSync(out, { recursive: true });
        await def.exportResults(store, [{ runId: r.id, block, repeat: r.params.repeat ?? 1 }], out, ctx.runsDirectory);
      } else if (fmt === 'inspect') {
        // Issue 45: an Inspect AI log, which Inspect's viewer opens (experts' verdicts as score edits).
        const chosen =
          typeof target === 'string'
            ? target
            : (
                await vscode.window.showSaveDialog({
                  title: `Export run ${r.id} as an Inspect AI log`,
                  defaultUri: vscode.Uri.file(join(outDir, `${r.id.replace(/[^A-Za-z0-9._-]/g, '_')}.eval`)),
                  filters: { 'Inspect log': ['eval', 'json'] },
                  saveLabel: 'Export',
                })
              )?.fsPath;
        if (!chosen) return undefined;
        out = /\.(eval|json)$/.test(chosen) ? chosen : `${chosen}.eval`;
        mkdirSync(dirname(out), { recursive: true });
        await writeInspectLog(store, [r.id], out);
      } else throw new Error(`Unknown export format ${fmt}`);
      void showInformationMessage(`Loupe: exported to ${out}`, 'Reveal').then(
        (x) => x && vscode.commands.executeCommand('revealFileInOS', vscode.Uri.file(out)),
      );
      return out;
    },
    'loupe.importInspectLogs': async (ctx, paths) => {
      // Issue 45: Inspect AI logs (.eval / .json, or folders of them) → runs of benchmark inspect:<task>.
      const chosen =
        Array.isArray(paths) && paths.every((p) => typeof p === 'string')
          ? (paths as string[])
          : (
              await vscode.window.showOpenDialog({
                title: 'Import Inspect Logs',
                canSelectMany: true,
                canSelectFiles: true,
                canSelectFolders: true,
                filters: { 'Inspect log': ['eval', 'json'] },
                openLabel: 'Import',
              })
            )?.map((u) => u.fsPath);
      if (!chosen?.length) return undefined;
      const store = ctx.store();
      const results = [];
      for (const f of listInspectLogs(chosen)) {
        results.push(await importInspectLog(store, f, { runsRoot: ctx.runsDirectory }));
      }
      const added = results.reduce((a, x) => a + x.imported.length, 0);
      const had = results.reduce((a, x) => a + x.skipped.length, 0);
      void showInformationMessage(
        `Loupe: imported ${added} run${added === 1 ? '' : 's'} from ${results.length} Inspect log${results.length === 1 ? '' : 's'}${had ? ` (${had} already in the store)` : ''}`,
      );
      await vscode.commands.executeCommand('loupe.refreshRuns');
      return results;
    },
    'loupe.deleteRun': async (ctx, arg, confirm) => {
      const r = await runFrom(ctx, arg, 'Delete Run');
      if (!r) return false;
      if (RunSession.get(r.id) && !RunSession.get(r.id)?.result) {
        throw new Error(`Run ${r.id} is still running; stop it first`);
      }
      if (confirm !== true) {
        const ok = await showWarningMessage(
          `Delete run ${r.id} (${r.blockId}) and its folder? This cannot be undone.`,
          { modal: true },
          'Delete',
        );
        if (ok !== 'Delete') return false;
      }
      TimelinePanel.get(r.id)?.dispose();
      // Issue 36: the run folder is removed only when it lies inside the runs folder (never a folder set in the store).
      const folder = runFolderIn(ctx, r);
      await ctx.store().deleteRun(r.id);
      if (folder.runDir) rmSync(folder.runDir, { recursive: true, force: true });
      else if (folder.refused) {
        void showWarningMessage(
          `Loupe: run ${r.id} deleted from the store; its recorded folder was left alone (${folder.refused}).`,
        );
      }
      ctx.fireRunsChanged();
      return true;
    },
  };
}
