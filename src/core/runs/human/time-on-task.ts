/**
 * Time on task of a human baseline (issue 46): wall time and active time of an expert working a block, with idle
 * stretches longer than a threshold excluded from active time. Activity is whatever the expert does on the run
 * (a cell executed, a documentation search or read, an answer submitted, a keystroke in the answer form); the gap
 * between two activities counts as active when it is at most the idle threshold, and not at all when longer. A
 * paused session counts neither wall nor active time. The clock is injected so a test can move time by hand.
 * Source: issue 46 "time on task is measured (wall and active time, idle > N minutes excluded, recorded)".
 */

/** A source of the current time in epoch milliseconds (`Date.now` in production, a fake in tests). */
export interface Clock {
  now(): number;
}

/** The system clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** Time on task as recorded with a run (`params`-free: stored as a `time-on-task` event and in the run's metrics). */
export interface TimeOnTask {
  /** Milliseconds between resume/start and pause/end, summed over working sessions (pauses excluded). */
  wallMs: number;
  /** Milliseconds of wall time not inside an idle gap longer than `idleThresholdMs`. */
  activeMs: number;
  /** Milliseconds excluded as idle (wallMs − activeMs). */
  idleMs: number;
  /** The idle threshold in force (milliseconds). */
  idleThresholdMs: number;
  /** Number of working sessions (start and each resume). */
  sessions: number;
}

/**
 * Measures wall and active time of one working session series.
 * Every method takes the time from the clock; none throws except the constructor on a bad threshold.
 */
export class TimeOnTaskTracker {
  readonly #clock: Clock;
  readonly #idleMs: number;
  #wall = 0;
  #active = 0;
  #sessions = 0;
  /** Start of the current working session, undefined while paused. */
  #since: number | undefined;
  /** Last activity of the current working session. */
  #last = 0;

  /**
   * @param clock the time source; `idleThresholdMs` a gap longer than this (milliseconds, > 0) between activities is idle;
   * `prior` time already recorded for this run (a baseline resumed another day).
   * @throws RangeError when the threshold is not a positive finite number.
   */
  constructor(clock: Clock, idleThresholdMs: number, prior?: Pick<TimeOnTask, 'wallMs' | 'activeMs' | 'sessions'>) {
    if (!Number.isFinite(idleThresholdMs) || idleThresholdMs <= 0) {
      throw new RangeError(`idle threshold must be a positive number of milliseconds, not ${idleThresholdMs}`);
    }
    this.#clock = clock;
    this.#idleMs = idleThresholdMs;
    if (prior) {
      this.#wall = prior.wallMs;
      this.#active = prior.activeMs;
      this.#sessions = prior.sessions;
    }
  }

  /** Whether a working session is open (started or resumed, not paused). */
  get running(): boolean {
    return this.#since !== undefined;
  }

  /** Starts (or resumes) a working session now; starting one that is running does nothing. */
  resume(): void {
    if (this.#since !== undefined) return;
    const t = this.#clock.now();
    this.#since = t;
    this.#last = t;
    this.#sessions++;
  }

  /** Records an activity now (a cell, a search, an answer, a keystroke); resumes a paused session first. */
  activity(): void {
    if (this.#since === undefined) {
      this.resume();
      return;
    }
    this.#advance(this.#clock.now());
  }

  /** Ends the current working session now (the gap since the last activity counts as for an activity). */
  pause(): void {
    if (this.#since === undefined) return;
    const t = this.#clock.now();
    this.#advance(t);
    this.#wall += t - this.#since;
    this.#since = undefined;
  }

  #advance(t: number): void {
    const gap = Math.max(0, t - this.#last);
    if (gap <= this.#idleMs) this.#active += gap;
    this.#last = Math.max(this.#last, t);
  }

  /** Time on task so far (the open session counted up to now, its trailing gap as if an activity happened now). */
  snapshot(): TimeOnTask {
    let wall = this.#wall;
    let active = this.#active;
    if (this.#since !== undefined) {
      const t = this.#clock.now();
      wall += t - this.#since;
      const gap = Math.max(0, t - this.#last);
      if (gap <= this.#idleMs) active += gap;
    }
    return {
      wallMs: wall,
      activeMs: active,
      idleMs: wall - active,
      idleThresholdMs: this.#idleMs,
      sessions: this.#sessions,
    };
  }
}

/**
 * "1 h 02 min" / "4 min 05 s" text of a duration.
 * @param ms milliseconds (≥ 0). @returns the text.
 */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h) return `${h} h ${String(m).padStart(2, '0')} min`;
  return `${m} min ${String(s % 60).padStart(2, '0')} s`;
}
