/**
 * Protocol of stepping into a run from the Trajectory Timeline (issue 20): the run's human steps (interventions), its
 * fork point and forks, whether it can take a hint now, and the actions (pause, add a hint, resume, fork from a step).
 */
import { IpcNotification, IpcRequest } from './ipc.ts';

/** One human step as the timeline shows it. */
export interface TimelineIntervention {
  seq: number;
  /** 0-based index of the step whose model request first included it. */
  beforeStep: number;
  at: string;
  who: string;
  kind: 'hint' | 'correction';
  text: string;
}

/** A run's assistance and what the analyst can do now. */
export interface TimelineAssistance {
  runId: string;
  interventions: TimelineIntervention[];
  /** An analyst ran code in the agent's kernel while it ran. */
  analystCode: boolean;
  /** `assisted`, `fork`, `assisted fork`, or null for an unassisted run. */
  label: string | null;
  /** This run is a fork: its parent and the number of steps it replayed. */
  forkOf: { runId: string; step: number } | null;
  /** Runs forked from this one (newest last). */
  forks: { runId: string; step: number; model: string }[];
  /** Driven by this window right now. */
  live: boolean;
  /** Live and stopped at a step boundary (pause took effect). */
  paused: boolean;
  /** Live and asked to pause, the current step still running. */
  pausing: boolean;
  /** Null when hints can be added (now, or — for a stopped run — before resuming it); otherwise why not, in plain words. */
  cannotIntervene: string | null;
}

export const GetAssistanceRequest = new IpcRequest<{ runId: string }, TimelineAssistance>('timeline/assistance');
/** Webview → host: pause / resume the live run, add a hint (the host asks for the text), fork from a step (1-based: steps kept), compare two forks. */
export const RunActionRequest = new IpcRequest<
  {
    runId: string;
    action: 'pause' | 'resume' | 'intervene' | 'fork' | 'compareForks' | 'compareForkWithParent';
    step?: number;
  },
  { ok: boolean; message?: string }
>('timeline/runAction');
/** Host → webview: the assistance changed (paused, resumed, a hint added, a fork made). */
export const DidChangeAssistanceNotification = new IpcNotification<TimelineAssistance>('timeline/didChangeAssistance');
