/**
 * One agent run as the analyst watches it: the core runner drives the agent; this wires its events to the
 * transcript terminal, the run notebook, the timeline and the runs view, and shares the kernel with the notebook
 * controller so the analyst can run cells on it.
 */
import { notebookPathIn } from './run-folder.ts';
import * as vscode from 'vscode';
import { RunControl, type AgentRunResult, type InterventionInput } from '../../core/agent/loop.ts';
import { defaultStartKernel, resumeBlockRun, startBlockRun, type BlockRunOptions } from '../../core/runs/runner.ts';
import type { AgentEvent } from '../../core/agent/types.ts';
import type { LlmConfig } from '../../core/agent/llm.ts';
import type { Block, Suite } from '../../core/suites/types.ts';
import type { RunRecord } from '../../core/store/records.ts';
import type { LoupeContext } from '../context.ts';
import { TimelinePanel } from '../panels/timeline-panel.ts';
import { RunNotebook } from './run-notebook.ts';
import { SharedKernel } from './shared-kernel.ts';
import { TranscriptTerminal } from './transcript-terminal.ts';
import { neutraliseControls } from '../../core/util/text-safety.ts';
import { otelExportSettings } from '../config.ts';

export interface SessionStart {
  suite: Suite;
  block: Block;
  agent: 'llm' | 'reference';
  llm?: LlmConfig;
  repeat?: number;
  /** Continue this recorded run instead of starting a new one. */
  resumeRunId?: string;
  /** Open the notebook, terminal and timeline (default true). */
  showUi?: boolean;
  /** Fork (issue 20): start from this run's first `step` steps (replayed without model calls), after `hint` if given. */
  forkOf?: { runId: string; step: number; hint?: InterventionInput };
}

export class RunSession implements vscode.Disposable {
  private static readonly byRun = new Map<string, RunSession>();
  private static readonly changed = new vscode.EventEmitter<void>();
  /** Fires when sessions start or end (status bar, runs view). */
  static readonly onDidChange = RunSession.changed.event;
  private static readonly assistChanged = new vscode.EventEmitter<string>();
  /** Fires with the run id when a live run pauses, resumes, takes a hint or ends (issue 20: the timeline's run controls). */
  static readonly onDidChangeAssistance = RunSession.assistChanged.event;
  /** Handles the transcript's `i` key (add a hint while paused); set by the run commands. */
  static onInterveneKey: ((session: RunSession) => void) | undefined;

  readonly control = new RunControl();
  readonly terminal: TranscriptTerminal;
  kernel: SharedKernel | undefined;
  notebook: RunNotebook | undefined;
  runId: string | undefined;
  result: AgentRunResult | undefined;
  private readonly ctx: LoupeContext;
  private readonly opts: SessionStart;
  private uiReady: Promise<void> = Promise.resolve();

  static get(runId: string): RunSession | undefined {
    return RunSession.byRun.get(runId);
  }

  static get active(): RunSession[] {
    return [...RunSession.byRun.values()].filter((s) => !s.result);
  }

  constructor(ctx: LoupeContext, opts: SessionStart) {
    this.ctx = ctx;
    this.opts = opts;
    this.terminal = new TranscriptTerminal(`Loupe: ${opts.block.id}`, this.control, (k) => {
      if (k === 'i') RunSession.onInterveneKey?.(this);
      else if (k === 'p' && this.runId) RunSession.assistChanged.fire(this.runId);
    });
  }

  /** Runs to the end (or until stopped). Never throws for model/tool failures: they end the run as `failed`. */
  async run(): Promise<AgentRunResult> {
    const { suite, block } = this.opts;
    const settings = this.ctx.settings;
    const otel = otelExportSettings(); // a bad loupe.otel.endpoint stops the start with the setting named, before any run is recorded
    const showUi = this.opts.showUi ?? true;
    if (showUi) this.terminal.show(true);
    // held, not borrowed: a switch of loupe.store during the run must not close the store its steps go to
    const held = this.ctx.holdStore();
    const store = held.store;
    const onRunCreated = (runId: string, run: RunRecord) => {
      this.runId = runId;
      RunSession.byRun.set(runId, this);
      RunSession.changed.fire();
      this.ctx.fireRunsChanged();
      this.notebook = new RunNotebook(store, run, notebookPathIn(this.ctx, run));
      const written = this.notebook.writeFile();
      if (showUi) {
        this.uiReady = (async () => {
          await written;
          await this.notebook?.open({ viewColumn: vscode.ViewColumn.One, preserveFocus: true });
          await TimelinePanel.show(this.ctx, runId, { column: vscode.ViewColumn.Two });
        })().catch((e: unknown) =>
          this.ctx.log.error(`run UI failed to open: ${e instanceof Error ? e.message : String(e)}`),
        );
      }
    };
    const onEvent = (e: AgentEvent) => {
      this.terminal.event(e);
      // the step is committed when step-end comes: an open timeline of this run reads it now, not at its next poll
      if (e.type === 'step-end' || e.type === 'run-end') this.ctx.fireStepsCommitted(e.runId, e.type === 'run-end');
      if (e.type === 'paused' || e.type === 'resumed' || e.type === 'intervention' || e.type === 'run-end') {
        RunSession.assistChanged.fire(e.runId);
      }
      if (e.type === 'step-end' || e.type === 'run-end') {
        void this.uiReady.then(() => this.notebook?.sync());
        this.ctx.fireRunsChanged();
      }
    };
    const base: BlockRunOptions = {
      store,
      suite,
      block,
      agent: this.opts.agent,
      llm: this.opts.llm,
      runsDir: this.ctx.runsDirectory,
      repeat: this.opts.repeat,
      docsCacheDir: this.ctx.docsCacheDirectory, // the index Documentation Search built serves the run's doc tools
      kernel: { sandbox: settings.sandbox, python: settings.pythonPath || undefined },
      budget: { maxSteps: this.opts.agent === 'llm' ? settings.maxSteps : undefined },
      control: this.control,
      onEvent,
      onRunCreated,
      log: this.ctx.log,
      ...(this.opts.forkOf ? { forkOf: this.opts.forkOf } : {}),
      ...(otel ? { otel } : {}),
      startKernel: async (k) => {
        const inner = await defaultStartKernel(
          { sandbox: settings.sandbox, python: settings.pythonPath || undefined },
          block.suite,
          k,
          this.ctx.log,
        );
        this.kernel = new SharedKernel(inner);
        return this.kernel;
      },
    };
    try {
      if (this.opts.resumeRunId) {
        const run = await store.getRun(this.opts.resumeRunId);
        if (!run) throw new Error(`Run ${this.opts.resumeRunId} is no longer in the store`);
        onRunCreated(this.opts.resumeRunId, run);
        this.result = await resumeBlockRun({ ...base, runId: this.opts.resumeRunId });
      } else {
        this.result = await startBlockRun(base);
      }
      return this.result;
    } catch (e) {
      // Shown where the user is looking (the run's terminal), then reported by the command as an error message.
      this.terminal.write(
        `\r\n\x1b[31m✘ ${neutraliseControls(e instanceof Error ? e.message : String(e)).replace(/\n/g, '\r\n')}\x1b[0m\r\n`,
      );
      throw e;
    } finally {
      if (this.kernel) this.kernel.agentRunning = false;
      await this.uiReady;
      await this.notebook?.sync();
      RunSession.changed.fire();
      this.ctx.fireRunsChanged();
      held.release();
    }
  }

  dispose(): void {
    if (!this.result) this.control.stop('window closed');
    if (this.runId) RunSession.byRun.delete(this.runId);
    void this.kernel?.close();
    this.terminal.dispose();
  }
}
