/**
 * A human baseline (issue 46) on LongDA NHANES Data Brief 508, through the same tools an agent gets: two cells on the
 * run's sandboxed kernel compute the estimates, a codebook search, three answers (one refused by the tool's
 * validation first), finish; the run is `human:<name>`, each action a step, scored against the reference values.
 * Closing before finish leaves a cancelled run that the same expert resumes, time on task carried over.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSuite } from '../../../../../src/core/benchmarks/index.ts';
import { defaultReferenceDir } from '../../../../../src/core/runs/runner.ts';
import {
  HumanBaselineSession,
  humanAgentName,
  recordedTimeOnTask,
} from '../../../../../src/core/runs/human/session.ts';
import { openStore } from '../../../../../src/core/store/run-store.ts';
import { sharedData } from '../../../../helpers/shared.ts';

const BLOCK = 'NHANES_NCHS_Data_Brief_No._508';
const Q = (i: number) => `NHANES_NCHS Data Brief No. 508_q${i}`;

test(
  "human baseline on LongDA 508: cells, a doc search and answers are steps of a human:<name> run, scored like an agent's",
  { timeout: 300_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'loupe-human-'));
    const store = openStore(join(dir, 'runs.sqlite'));
    const open: HumanBaselineSession[] = [];
    try {
      const suite = await loadSuite('longda', sharedData('longda', 'benchmark'), {});
      const block = suite.blocks.find((b) => b.id === BLOCK)!;
      assert.ok(block, BLOCK);
      const ref = readFileSync(join(defaultReferenceDir('longda'), `${BLOCK}.py`), 'utf8');
      const cut = ref.indexOf('W = "WTMEC2YR"');
      const common = {
        store,
        suite,
        block,
        annotator: 'ada',
        runsDir: join(dir, 'runs'),
        kernel: { sandbox: 'bubblewrap' as const },
      };
      // Day 1: load the data, then close (the run is cancelled, resumable).
      const day1 = new HumanBaselineSession(common);
      open.push(day1);
      const c1 = await day1.cell(ref.slice(0, cut));
      assert.equal(c1.isError, false, c1.observation);
      const hidden = block.hidden.files[0];
      if (hidden) {
        const probe = await day1.cell(
          `try:\n    open(${JSON.stringify(hidden)}).read(5)\n    print('hidden: READABLE')\nexcept Exception as e:\n    print('hidden:', type(e).__name__)`,
        );
        assert.doesNotMatch(probe.observation, /READABLE/, "the expert's cells see what the agent sees");
      }
      const closed = await day1.close();
      assert.equal(closed?.status, 'cancelled');
      const runId = closed!.runId;
      assert.ok((await recordedTimeOnTask(store, runId))!.sessions >= 1);
      // Another expert cannot continue it.
      const other = new HumanBaselineSession({ ...common, annotator: 'bob', resumeRunId: runId });
      open.push(other);
      await assert.rejects(other.cell('print(1)'), /not human:bob's|could not be driven|is human:ada's/);
      // Day 2: the same expert resumes (a fresh kernel: the cell runs again), computes, searches, answers, finishes.
      const day2 = new HumanBaselineSession({ ...common, resumeRunId: runId });
      open.push(day2);
      const c2 = await day2.cell(`${ref.slice(0, cut)}\n${ref.slice(cut)}`);
      assert.equal(c2.isError, false, c2.observation);
      const est = JSON.parse(
        c2.observation
          .trim()
          .split('\n')
          .filter((l) => l.trim().startsWith('{'))
          .at(-1)!,
      ) as Record<string, number | number[]>;
      const search = await day2.call('search_doc', { keyword: 'BMXBMI' });
      assert.equal(search.isError, false, search.observation);
      const bad = await day2.call('answer', { action: 'add', q_id: Q(2), answer: 40.3 });
      assert.equal(bad.isError, true, 'a list question refuses a single number, as for the agent');
      assert.match(bad.observation, /expects a list of 2 numbers/);
      for (const i of [1, 2, 5]) {
        const a = await day2.call('answer', { action: 'add', q_id: Q(i), answer: est[`q${i}`] });
        assert.equal(a.isError, false, a.observation);
      }
      await assert.rejects(day2.call('shell', {}), /'shell' is not a tool/);
      const fin = await day2.call('final_answer', { summary: 'three answers' });
      assert.ok(fin.ended);
      const out = (await day2.done)!;
      assert.equal(out.status, 'finished');
      const run = (await store.getRun(runId))!;
      assert.equal(run.agent, 'human:ada');
      assert.equal(run.params.human?.annotator, 'ada');
      assert.equal(run.tokens, null, 'a person uses no tokens: unknown, not 0');
      const steps = await store.getSteps(runId);
      assert.deepEqual(
        steps.map((s) => s.toolCalls[0]!.name),
        [
          ...(hidden ? ['python', 'python'] : ['python']),
          'python',
          'search_doc',
          'answer',
          'answer',
          'answer',
          'answer',
          'final_answer',
        ],
      );
      assert.equal(out.score?.answered, 3);
      assert.equal(
        out.score?.match,
        3 / (out.score?.queries as number),
        'the three answers match the reference values',
      );
      const t = (await recordedTimeOnTask(store, runId))!;
      assert.equal(t.sessions, 2);
      assert.ok(t.wallMs >= t.activeMs && t.activeMs > 0);
      assert.throws(() => humanAgentName('<b>x</b>'), /not a usable name/);
    } finally {
      for (const s of open) await s.close().catch(() => undefined);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
