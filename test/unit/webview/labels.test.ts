import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  answerStepLabel,
  middleTruncate,
  runElapsedMs,
  shortRef,
  smallSampleWarning,
} from '../../../webview/shared/labels.ts';

describe('panel labels (issue 42 defect 10)', () => {
  it('a running run shows the time since it started, not its stored 0 ms', () => {
    const start = '2026-01-01T00:00:00.000Z';
    assert.equal(
      runElapsedMs({ status: 'running', startedAt: start, durationMs: 0 }, Date.parse(start) + 21_000),
      21_000,
    );
    assert.equal(
      runElapsedMs({ status: 'finished', startedAt: start, durationMs: 5_000 }, Date.parse(start) + 21_000),
      5_000,
    );
    assert.equal(runElapsedMs({ status: 'running', startedAt: null, durationMs: 0 }, 1), 0);
  });
  it('an answer step names its question by short id and the start of its text', () => {
    assert.equal(shortRef('NHANES_NCHS_Data_Brief_No_492_q3'), 'q3');
    assert.equal(shortRef('query 2'), 'query 2');
    assert.equal(shortRef('a-very-long-identifier-without-q'), '…ier-without-q');
    assert.equal(
      answerStepLabel(
        [
          {
            ref: 'NHANES_NCHS_Data_Brief_No_492_q3',
            question: 'What share of adults aged 20 and over had obesity in 2017–2018, in percent?',
          },
        ],
        30,
      ),
      'q3 “What share of adults aged 20…”',
    );
    assert.equal(
      answerStepLabel([
        { ref: 'q1', question: 'Mean?' },
        { ref: 'q2', question: 'Median?' },
      ]),
      'q1 “Mean?” · q2 “Median?”',
    );
    assert.equal(answerStepLabel([]), '');
  });
  it('paths are cut in the middle and keep the file name', () => {
    const p = 'data/longda/NHANES/documentation/2017-2018/laboratory/P_DEMO.pdf';
    const t = middleTruncate(p, 32);
    assert.ok(t.length <= 32, t);
    assert.ok(t.endsWith('/P_DEMO.pdf') && t.startsWith('data/longda'), t);
    assert.equal(middleTruncate('short.pdf', 32), 'short.pdf');
  });
  it('warns on agreement statistics from fewer than 10 items', () => {
    assert.match(smallSampleWarning('κ', 2)!, /κ on n = 2 is not informative/);
    assert.equal(smallSampleWarning('κ', 10), null);
  });
});
