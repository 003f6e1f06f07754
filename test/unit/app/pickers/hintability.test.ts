import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hintability, runnableFirst } from '../../../../src/app/pickers/hintability.ts';

describe('pickers offer only what can succeed (issue 42 defect 7)', () => {
  const run = (
    status: 'pending' | 'running' | 'finished' | 'failed' | 'cancelled' | 'budget_exhausted',
    agent = 'llm',
  ) => ({ id: `r-${status}`, agent, status });
  it('a hint goes to a live run (running or paused) or a stored run that can resume', () => {
    assert.equal(hintability(run('running'), { paused: false }).ok, true);
    assert.equal(hintability(run('running'), { paused: true }).ok, true);
    assert.equal(hintability(run('cancelled'), null).ok, true);
    assert.equal(hintability(run('pending'), null).ok, true);
  });
  it('never to a finished run, a run driven elsewhere, the reference agent or an MCP client', () => {
    const no = (r: ReturnType<typeof hintability>, re: RegExp) => {
      assert.equal(r.ok, false);
      assert.match((r as { reason: string }).reason, re);
    };
    no(hintability(run('finished'), null), /finished: fork it/);
    no(hintability(run('running'), null), /another window or process/);
    no(hintability(run('running', 'reference'), { paused: true }), /reference agent/);
    no(hintability(run('cancelled', 'mcp:copilot'), null), /MCP client/);
  });
  it('a run picker lists runnable blocks only and counts the others', () => {
    const r = runnableFirst([
      { id: 'asfin', runnable: false },
      { id: 'longda-1', runnable: true },
      { id: 'longda-2', runnable: true },
    ]);
    assert.deepEqual(
      r.offered.map((b) => b.id),
      ['longda-1', 'longda-2'],
    );
    assert.equal(r.hidden, 1);
  });
});
