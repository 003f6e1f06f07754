/** Time on task with a fake clock (issue 46): idle gaps longer than the threshold are excluded from active time, pauses from both. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration, TimeOnTaskTracker, type Clock } from '../../../../../src/core/runs/human/time-on-task.ts';

const MIN = 60_000;

function fakeClock(): Clock & { t: number; tick(ms: number): void } {
  return {
    t: 1_000_000,
    now() {
      return this.t;
    },
    tick(ms: number) {
      this.t += ms;
    },
  };
}

test('time on task: a gap over the idle threshold is excluded from active time but not wall time', () => {
  const c = fakeClock();
  const t = new TimeOnTaskTracker(c, 5 * MIN);
  t.resume();
  c.tick(2 * MIN);
  t.activity(); // active 2
  c.tick(5 * MIN);
  t.activity(); // exactly the threshold: active, 7
  c.tick(30 * MIN);
  t.activity(); // idle: excluded
  c.tick(1 * MIN);
  t.activity(); // active 8
  const s = t.snapshot();
  assert.equal(s.wallMs, 38 * MIN);
  assert.equal(s.activeMs, 8 * MIN);
  assert.equal(s.idleMs, 30 * MIN);
  assert.equal(s.sessions, 1);
});

test('time on task: paused time counts neither wall nor active; a resumed session adds to the prior record', () => {
  const c = fakeClock();
  const t = new TimeOnTaskTracker(c, 5 * MIN);
  t.resume();
  c.tick(3 * MIN);
  t.activity();
  c.tick(1 * MIN);
  t.pause();
  c.tick(24 * 60 * MIN); // the next day
  t.resume();
  c.tick(2 * MIN);
  t.activity();
  c.tick(10 * MIN);
  t.pause(); // trailing idle gap at pause: excluded
  const s = t.snapshot();
  assert.deepEqual(s, { wallMs: 16 * MIN, activeMs: 6 * MIN, idleMs: 10 * MIN, idleThresholdMs: 5 * MIN, sessions: 2 });
  const again = new TimeOnTaskTracker(c, 5 * MIN, s);
  again.activity(); // resumes
  c.tick(1 * MIN);
  again.activity();
  assert.deepEqual(again.snapshot(), {
    wallMs: 17 * MIN,
    activeMs: 7 * MIN,
    idleMs: 10 * MIN,
    idleThresholdMs: 5 * MIN,
    sessions: 3,
  });
});

test('time on task: the open session is counted up to now; a bad threshold is refused', () => {
  const c = fakeClock();
  const t = new TimeOnTaskTracker(c, 5 * MIN);
  t.resume();
  c.tick(4 * MIN);
  assert.equal(t.snapshot().activeMs, 4 * MIN);
  c.tick(4 * MIN); // 8 min since last activity: idle while nothing happens
  assert.equal(t.snapshot().activeMs, 0);
  assert.equal(t.snapshot().wallMs, 8 * MIN);
  assert.throws(() => new TimeOnTaskTracker(c, 0), /idle threshold/);
  assert.equal(formatDuration(62 * MIN + 5000), '1 h 02 min');
  assert.equal(formatDuration(4 * MIN + 5000), '4 min 05 s');
});
