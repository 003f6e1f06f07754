/**
 * A human baseline (issue 46): an expert works a block as the agent would — the same task workspace (visible files
 * only; the kernel's sandbox hides everything else), the same tool set with the same validation — and the result is a
 * run like any other, of agent `human:<annotator>`. Every call the expert makes (an executed cell is the tool set's
 * `python` call, a documentation search/read its doc tool call, an answer its answer/finish call) goes through the agent
 * loop via the external-agent bridge of the MCP session (`mcp/bridge.ts`): the loop runs the tool exactly as for an
 * agent's call and commits a step. Time on task (wall and active, idle gaps excluded) is recorded as `time-on-task`
 * events. A session closed before the finishing tool leaves the run `cancelled`, resumable another day.
 * Source: issue 46 "Start Human Baseline on Block".
 */
import { RunControl } from '../../agent/loop.ts';
import type { AgentEvent, KernelLike, RunParams, ToolSet } from '../../agent/types.ts';
import type { Block, Suite } from '../../suites/types.ts';
import type { RunStore } from '../../store/types.ts';
import { LoupeInputError } from '../../util/errors.ts';
import { nullLogger, type Logger } from '../../util/log.ts';
import { getBenchmark } from '../../benchmarks/registry.ts';
import { ExactOnlyJudge } from '../../eval/judges/judge.ts';
import { judgementStoreOf } from '../../eval/store.ts';
import { blockToolSet, resumeBlockRun, startBlockRun, type KernelPlacement, type KernelSettings } from '../runner.ts';
import { saveRunScore, scoreStoredRun } from '../score-stored-run.ts';
import { McpAgentBridge, McpRunClosedError } from '../mcp/bridge.ts';
import { systemClock, TimeOnTaskTracker, type Clock, type TimeOnTask } from './time-on-task.ts';

/** Event kind of the recorded time on task (message: the {@link TimeOnTask} as JSON; the last one holds). */
export const TIME_ON_TASK_EVENT = 'time-on-task';
/** Default idle threshold: a gap over 5 minutes between two actions is not counted as active time. */
export const DEFAULT_IDLE_MINUTES = 5;
/** Name of the tool whose calls are kernel cells (the agent loop's convention). */
export const CELL_TOOL = 'python';

/**
 * The agent name of a human baseline by `annotator`.
 * @param annotator the expert's name (letters, digits, `. _ @ -`, 1–64 characters).
 * @returns `human:<annotator>`. @throws LoupeInputError naming the annotator when the name has other characters.
 */
export function humanAgentName(annotator: string): `human:${string}` {
  const a = annotator.trim();
  if (!/^[\p{L}\p{N}._@-]{1,64}$/u.test(a)) {
    throw new LoupeInputError(
      'annotator',
      `'${a.slice(0, 80)}' is not a usable name for a human baseline: use 1–64 letters, digits, '.', '_', '@' or '-'`,
    );
  }
  return `human:${a}`;
}

/** Whether a run's agent is a human baseline (`human:<annotator>`). @param agent the run's agent. */
export function isHumanAgent(agent: string): boolean {
  return agent.startsWith('human:');
}

/**
 * The time on task recorded with a run: its last `time-on-task` event.
 * @param store the run store; `runId` the run. @returns the record, or null when none was recorded (not a human run).
 */
export async function recordedTimeOnTask(store: RunStore, runId: string): Promise<TimeOnTask | null> {
  const ev = (await store.getEvents(runId)).filter((e) => e.kind === TIME_ON_TASK_EVENT).at(-1);
  if (!ev) return null;
  try {
    const t = JSON.parse(ev.message) as TimeOnTask;
    return typeof t.wallMs === 'number' && typeof t.activeMs === 'number' ? t : null;
  } catch {
    return null;
  }
}

/** What one expert action got back. */
export interface HumanCallOutcome {
  /** The observation the tool returned (what an agent would have seen). */
  observation: string;
  isError: boolean;
  /** 0-based index of the recorded step. */
  stepIndex: number;
  /** Set when this call ended the run (the block's finishing tool). */
  ended?: { status: string; reason: string };
}

/** Inputs of a {@link HumanBaselineSession}. */
export interface HumanBaselineOptions {
  store: RunStore;
  suite: Suite;
  block: Block;
  /** The expert (`currentAnnotator` in VS Code, `--annotator` on the CLI). */
  annotator: string;
  /** On the team store, the database role the expert connects as (recorded with the run). */
  dbRole?: string;
  runsDir: string;
  kernel: KernelSettings;
  /** Gap between two actions beyond which the time is idle (minutes, > 0; default {@link DEFAULT_IDLE_MINUTES}). */
  idleMinutes?: number;
  clock?: Clock;
  toolSetOptions?: Record<string, string>;
  loadOptions?: RunParams['loadOptions'];
  docsCacheDir?: string;
  /** Continue this stored human run (another day) instead of recording a new one. */
  resumeRunId?: string;
  log?: Logger;
  onEvent?: (e: AgentEvent) => void;
  onRunCreated?: (runId: string) => void;
  /** Overrides the kernel factory (tests). */
  startKernel?: (o: KernelPlacement) => Promise<KernelLike>;
  /** Overrides the docs provider (tests). */
  docs?: () => Promise<unknown>;
}

/** How a human run ended. */
export interface HumanRunOutcome {
  runId: string;
  status: string;
  reason: string;
  steps: number;
  timeOnTask: TimeOnTask;
  /** The judge-free score's summary, saved in the store; null when the benchmark needs a judge. */
  score: Record<string, number | null> | null;
}

/**
 * One expert's working session on one block. The run is recorded at the first action (`cell`, `call`), so opening a
 * block and closing it leaves no empty run.
 */
export class HumanBaselineSession {
  readonly toolSet: ToolSet;
  readonly agent: `human:${string}`;
  readonly #o: HumanBaselineOptions;
  readonly #control = new RunControl();
  readonly #tracker: Promise<TimeOnTaskTracker>;
  #bridge: McpAgentBridge | undefined;
  #runId: string | undefined;
  #done: Promise<HumanRunOutcome | undefined>;
  #doneResolve!: (o: HumanRunOutcome | undefined) => void;
  #startError: string | undefined;

  /** @throws LoupeInputError for a bad annotator name, an unrunnable block or a bad idle threshold. */
  constructor(o: HumanBaselineOptions) {
    this.agent = humanAgentName(o.annotator);
    if (!o.block.runnable) {
      throw new LoupeInputError(o.block.id, `block is not runnable: ${o.block.problems.join('; ')}`);
    }
    const idle = o.idleMinutes ?? DEFAULT_IDLE_MINUTES;
    if (!(idle > 0) || !Number.isFinite(idle)) {
      throw new LoupeInputError('idle minutes', `must be a positive number of minutes, not ${idle}`);
    }
    this.#o = o;
    this.toolSet = blockToolSet({
      block: o.block,
      agent: 'llm',
      ...(o.toolSetOptions ? { toolSetOptions: o.toolSetOptions } : {}),
      ...(o.docsCacheDir ? { docsCacheDir: o.docsCacheDir } : {}),
      ...(o.docs ? { docs: o.docs } : {}),
    });
    const clock = o.clock ?? systemClock;
    this.#tracker = (o.resumeRunId ? recordedTimeOnTask(o.store, o.resumeRunId) : Promise.resolve(null)).then(
      (prior) => new TimeOnTaskTracker(clock, idle * 60_000, prior ?? undefined),
    );
    this.#done = new Promise((r) => (this.#doneResolve = r));
  }

  /** The recorded run (undefined before the first action). */
  get runId(): string | undefined {
    return this.#runId;
  }

  /** The task as the agent gets it: the benchmark's instructions and the block's task text. */
  get task(): { system: string; block: string } {
    return { system: this.toolSet.systemPrompt, block: this.toolSet.buildBlockPrompt(this.#o.block) };
  }

  /** Resolves when the run has ended (finished, or closed for another day). */
  get done(): Promise<HumanRunOutcome | undefined> {
    return this.#done;
  }

  /** Time on task so far. */
  async timeOnTask(): Promise<TimeOnTask> {
    return (await this.#tracker).snapshot();
  }

  /** Records that the expert is working (a keystroke in the answer form) without a step. */
  async touch(): Promise<void> {
    (await this.#tracker).activity();
  }

  /** Pauses the clock (the run stays open in this session); the next action resumes it. */
  async pause(): Promise<TimeOnTask> {
    const t = await this.#tracker;
    t.pause();
    await this.#record();
    return t.snapshot();
  }

  /** Runs one cell on the run's sandboxed kernel, recorded as the tool set's `python` call. @throws LoupeInputError when the block's tools have no kernel. */
  cell(code: string): Promise<HumanCallOutcome> {
    if (!this.toolSet.tools.some((t) => t.name === CELL_TOOL)) {
      throw new LoupeInputError(`block ${this.#o.block.id}`, 'its tools run no Python cells');
    }
    return this.call(CELL_TOOL, { code });
  }

  /**
   * Calls one of the block's tools as the agent would (documentation search, answer, finish, ...): validated by the
   * tool set, recorded as a step.
   * @throws LoupeInputError for a tool the block does not have, or when the run no longer takes calls.
   */
  async call(name: string, args: Record<string, unknown>): Promise<HumanCallOutcome> {
    if (!this.toolSet.tools.some((t) => t.name === name)) {
      throw new LoupeInputError(
        'tool',
        `'${name}' is not a tool of block ${this.#o.block.id} (its tools: ${this.toolSet.tools.map((t) => t.name).join(', ')})`,
      );
    }
    if (this.#startError) {
      throw new LoupeInputError(`block ${this.#o.block.id}`, `the run could not be driven: ${this.#startError}`);
    }
    const tracker = await this.#tracker;
    tracker.activity();
    this.#start();
    try {
      const out = await this.#bridge!.submit({ name, argumentsText: JSON.stringify(args) });
      tracker.activity();
      if (!out.ended) await this.#record();
      else await this.#done;
      return out;
    } catch (e) {
      if (e instanceof McpRunClosedError) {
        throw new LoupeInputError(`run ${this.#runId ?? '(not recorded)'}`, e.message);
      }
      throw e;
    }
  }

  /** Closes the session: an unfinished run is stopped (`cancelled`) with its time on task recorded, to be resumed another day. */
  async close(reason = 'the expert closed the baseline; resume it to continue'): Promise<HumanRunOutcome | undefined> {
    if (!this.#bridge) {
      this.#doneResolve(undefined);
      return undefined;
    }
    (await this.#tracker).pause();
    this.#control.stop(reason);
    return this.#done;
  }

  async #record(): Promise<void> {
    if (!this.#runId) return;
    await this.#o.store.addEvent(this.#runId, TIME_ON_TASK_EVENT, JSON.stringify((await this.#tracker).snapshot()));
  }

  #start(): void {
    if (this.#bridge) return;
    const o = this.#o;
    const bridge = new McpAgentBridge(this.agent);
    this.#bridge = bridge;
    const onEvent = (e: AgentEvent) => {
      if (e.type === 'step-end') bridge.stepCommitted(e.record);
      o.onEvent?.(e);
    };
    const idleMinutes = o.idleMinutes ?? DEFAULT_IDLE_MINUTES;
    const common = {
      store: o.store,
      suite: o.suite,
      block: o.block,
      agent: this.agent,
      modelClient: bridge,
      runsDir: o.runsDir,
      kernel: o.kernel,
      ...(o.toolSetOptions ? { toolSetOptions: o.toolSetOptions } : {}),
      ...(o.loadOptions ? { loadOptions: o.loadOptions } : {}),
      ...(o.docsCacheDir ? { docsCacheDir: o.docsCacheDir } : {}),
      ...(o.startKernel ? { startKernel: o.startKernel } : {}),
      ...(o.docs ? { docs: o.docs } : {}),
      log: o.log ?? nullLogger,
      onEvent,
      control: this.#control,
      tokensUnknown: true,
      // a person works at their own pace: no step limit beyond the tool set's, no wall clock budget
      budget: { maxSteps: 10_000 },
      extraParams: { human: { annotator: o.annotator.trim(), idleMinutes, ...(o.dbRole ? { dbRole: o.dbRole } : {}) } },
      onRunCreated: (id: string) => {
        this.#runId = id;
        void o.store
          .addEvent(
            id,
            'human',
            `human baseline by ${o.annotator.trim()}${o.dbRole ? ` (database role ${o.dbRole})` : ''}: cells run in the run's sandbox and answers go through the block's tools, but a person at the host can open the suite folder — the run relies on the expert's honesty`,
          )
          .catch(() => undefined);
        o.onRunCreated?.(id);
      },
    };
    const p = o.resumeRunId
      ? o.store.getRun(o.resumeRunId).then((run) => {
          if (run && run.agent !== this.agent) {
            throw new LoupeInputError(
              `run ${o.resumeRunId}`,
              `is ${run.agent}'s, not ${this.agent}'s: only its own expert resumes a human baseline`,
            );
          }
          this.#runId = o.resumeRunId;
          o.onRunCreated?.(o.resumeRunId!);
          return resumeBlockRun({ ...common, runId: o.resumeRunId! });
        })
      : startBlockRun(common);
    p.then(
      async (res) => {
        const tracker = await this.#tracker;
        tracker.pause();
        await this.#record();
        const score =
          res.status === 'finished'
            ? await this.#score(res.runId).catch(async (e: unknown) => {
                await o.store
                  .addEvent(res.runId, 'warning', `scoring the human run failed: ${(e as Error).message}`)
                  .catch(() => undefined);
                return null;
              })
            : null;
        bridge.close(`run ${res.runId} has ended (${res.status}: ${res.reason})`, {
          status: res.status,
          reason: res.reason,
        });
        this.#doneResolve({
          runId: res.runId,
          status: res.status,
          reason: res.reason,
          steps: res.steps,
          timeOnTask: tracker.snapshot(),
          score,
        });
      },
      (e: unknown) => {
        this.#startError = (e as Error).message;
        bridge.close(`the run could not be driven: ${this.#startError}`);
        this.#doneResolve(undefined);
      },
    );
  }

  /** Scores a finished run when its benchmark needs no judge, and saves the score. */
  async #score(runId: string): Promise<Record<string, number | null> | null> {
    const def = getBenchmark(this.#o.block.suite);
    if (!def.judgeFree) return null;
    const s = await scoreStoredRun(this.#o.store, runId, {
      judge: new ExactOnlyJudge(judgementStoreOf(this.#o.store)),
      runsRoot: this.#o.runsDir,
      suites: new Map([[`${this.#o.suite.kind}\u0000${this.#o.suite.root}`, Promise.resolve(this.#o.suite)]]),
    });
    if (s.error) throw new Error(s.error);
    await saveRunScore(this.#o.store, s);
    return s.summary;
  }
}
