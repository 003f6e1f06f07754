/**
 * Issue 26 "Artefacts in the store", through the real runner on both engines: an AnalystBench run (scripted model)
 * writes report.md; when the run ends the report is in the store; with the run folder gone (an expert on another
 * machine) side-by-side review still reads the report, from the store. The benchmark's evidence files (AnalystBench:
 * the report) are captured before the rest, so 1,005 files the agent dumped cannot push the report out of the per-run
 * file bound; a run that is cancelled, fails or crashes keeps its files too (the runner's finally path).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { loadSuite } from '../../../../src/core/benchmarks/index.ts';
import { closeAnalystDocIndexes } from '../../../../src/core/benchmarks/analystbench/toolset.ts';
import { reviewSourceOf } from '../../../../src/app/review/sources.ts';
import { RunControl } from '../../../../src/core/agent/loop.ts';
import { ARTEFACT_RUN_MAX_FILES } from '../../../../src/core/store/artefacts.ts';
import { startBlockRun } from '../../../../src/core/runs/runner.ts';
import type { RunStore } from '../../../../src/core/store/types.ts';
import type { Suite } from '../../../../src/core/suites/types.ts';
import { call, startScriptedLlm, type ScriptedLlm } from '../../../helpers/scripted-llm.ts';
import { repoRoot, sharedDir } from '../../../helpers/shared.ts';
import { forEachEngine } from '../../../helpers/store-engines.ts';

const REPORT = '# Obesity, 2021–2023\n\n## Key findings\n- 40.3% of adults had obesity.\n';
let dir = '';
let suite: Suite;
let srv: ScriptedLlm;

before(async () => {
  process.env.LOUPE_SHARED ??= sharedDir();
  dir = mkdtempSync(join(tmpdir(), 'loupe-artefacts-run-'));
  suite = await loadSuite('analystbench', join(repoRoot, 'test', 'fixtures', 'suites', 'analystbench'));
  srv = await startScriptedLlm({
    scriptFor: () => [{ content: 'Write the report.', toolCalls: [call('write_report', { markdown: REPORT })] }],
  });
});
after(async () => {
  await srv?.close();
  await closeAnalystDocIndexes();
  rmSync(dir, { recursive: true, force: true });
});

const DUMP = 1005;
/** Python the agent runs: `n` one-byte files under dump/ (each smaller than the report). */
const dumpCode = (n: number) =>
  `import os\nos.makedirs('dump', exist_ok=True)\nfor i in range(${n}):\n    open(f'dump/n{i:04d}.txt', 'w').write('x')\nprint('wrote', ${n})`;

/** A run store whose last write of a run (its final status) fails: the database went away as the run ended. */
function failingAtEnd(store: RunStore): RunStore {
  return new Proxy(store, {
    get(t, k) {
      if (k === 'updateRun') {
        return async (id: string, patch: { status?: string }) => {
          if (patch.status && patch.status !== 'running') throw new Error('the database went away');
          return t.updateRun(id, patch as never);
        };
      }
      const v = Reflect.get(t, k, t) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
}

forEachEngine((e) => {
  it(
    'the report a run wrote is kept in the store when the run ends; review reads it without the run folder',
    { timeout: 120_000 },
    async () => {
      const store = await e.open(await e.fresh());
      const block = suite.blocks.find((b) => b.id === 'nchs_obesity_2021-2023')!;
      assert.ok(block.runnable, block.problems.join('; '));
      const r = await startBlockRun({
        store,
        suite,
        block,
        agent: 'llm',
        llm: { baseUrl: srv.baseUrl, model: 'scripted', apiKey: 'k' },
        runsDir: join(dir, e.name),
        kernel: { sandbox: 'off' },
      });
      assert.equal(r.status, 'finished', r.reason);
      const kept = await store.artefacts.list(r.runId);
      assert.deepEqual(
        kept.map((a) => [a.path, a.mediaType, a.size]),
        [['report.md', 'text/markdown', Buffer.byteLength(REPORT)]],
      );
      rmSync(join(dir, e.name, r.runId), { recursive: true, force: true });
      assert.deepEqual((await reviewSourceOf(store, r.runId, join(dir, e.name))).source, { markdown: REPORT });
      await store.close();
    },
  );

  it(
    `the report is kept before ${DUMP} files the agent dumped; the files over the bound are named in the run event`,
    { timeout: 180_000 },
    async () => {
      const store = await e.open(await e.fresh());
      const block = suite.blocks.find((b) => b.id === 'nchs_obesity_2021-2023')!;
      const llm = await startScriptedLlm({
        script: [
          { content: 'Dump files.', toolCalls: [call('python', { code: dumpCode(DUMP) })] },
          { content: 'Write the report.', toolCalls: [call('write_report', { markdown: REPORT })] },
        ],
      });
      try {
        const r = await startBlockRun({
          store,
          suite,
          block,
          agent: 'llm',
          llm: { baseUrl: llm.baseUrl, model: 'scripted', apiKey: 'k' },
          runsDir: join(dir, `${e.name}-dump`),
          kernel: { sandbox: 'off' },
        });
        assert.equal(r.status, 'finished', r.reason);
        const kept = await store.artefacts.list(r.runId);
        assert.equal(kept.length, ARTEFACT_RUN_MAX_FILES);
        assert.ok(
          kept.some((a) => a.path === 'report.md' && a.size === Buffer.byteLength(REPORT)),
          'report.md is in the store',
        );
        const dumped = kept.filter((a) => a.path.startsWith('dump/')).length;
        assert.equal(dumped, ARTEFACT_RUN_MAX_FILES - 1);
        // the files left out: the largest names of the dump (same size: by path), each named in one warning event
        const skipped = Array.from(
          { length: DUMP - dumped },
          (_, i) => `dump/n${String(dumped + i).padStart(4, '0')}.txt`,
        );
        assert.equal(skipped.length, 6);
        const warn = (await store.getEvents(r.runId)).filter(
          (ev) => ev.kind === 'warning' && ev.message.startsWith('artefacts:'),
        );
        assert.equal(warn.length, 1, warn.map((w) => w.message).join('\n'));
        assert.match(warn[0]!.message, /^artefacts: 6 file\(s\) of the workspace not kept in the store/);
        for (const f of skipped) {
          assert.ok(warn[0]!.message.includes(`${f} (1 bytes, run file limit)`), `${f} named in: ${warn[0]!.message}`);
        }
        assert.ok(!warn[0]!.message.includes('report.md'));
      } finally {
        await llm.close();
        await store.close();
      }
    },
  );

  it(
    'a run that is cancelled, fails or crashes keeps the files it wrote in the store when it ends',
    { timeout: 180_000 },
    async () => {
      const store = await e.open(await e.fresh());
      const block = suite.blocks.find((b) => b.id === 'nchs_obesity_2021-2023')!;
      const partial = (tag: string) => `open('partial-${tag}.csv', 'w').write('a,b\\n1,2\\n')\nprint('ok')`;
      const runsDir = join(dir, `${e.name}-ends`);
      // cancelled: stopped after its first step (the CLI's Ctrl-C, the progress notification's Cancel)
      const cancelLlm = await startScriptedLlm({
        script: [
          { content: 'Start.', toolCalls: [call('python', { code: partial('cancelled') })] },
          { content: 'More.', toolCalls: [call('python', { code: 'print(1)' })] },
        ],
      });
      // failed: the model endpoint refuses the second request
      const failLlm = await startScriptedLlm({
        script: [
          { content: 'Start.', toolCalls: [call('python', { code: partial('failed') })] },
          { faults: [{ type: 'status', status: 400, message: 'bad request' }], reply: { content: 'never' } },
        ],
      });
      // crashed: the run ends (report written) but recording its end throws out of the loop
      const crashLlm = await startScriptedLlm({
        script: [
          { content: 'Start.', toolCalls: [call('python', { code: partial('crashed') })] },
          { content: 'Write the report.', toolCalls: [call('write_report', { markdown: REPORT })] },
        ],
      });
      try {
        const control = new RunControl();
        const cancelled = await startBlockRun({
          store,
          suite,
          block,
          agent: 'llm',
          llm: { baseUrl: cancelLlm.baseUrl, model: 'scripted', apiKey: 'k' },
          runsDir,
          kernel: { sandbox: 'off' },
          control,
          onEvent: (ev) => {
            if (ev.type === 'step-end') control.stop('stopped by the test');
          },
        });
        assert.equal(cancelled.status, 'cancelled', cancelled.reason);
        assert.deepEqual(
          (await store.artefacts.list(cancelled.runId)).map((a) => a.path),
          ['partial-cancelled.csv'],
        );

        const failed = await startBlockRun({
          store,
          suite,
          block,
          agent: 'llm',
          llm: { baseUrl: failLlm.baseUrl, model: 'scripted', apiKey: 'k' },
          runsDir,
          kernel: { sandbox: 'off' },
        });
        assert.equal(failed.status, 'failed', failed.reason);
        assert.deepEqual(
          (await store.artefacts.list(failed.runId)).map((a) => a.path),
          ['partial-failed.csv'],
        );

        let crashedId = '';
        await assert.rejects(
          startBlockRun({
            store: failingAtEnd(store),
            suite,
            block,
            agent: 'llm',
            llm: { baseUrl: crashLlm.baseUrl, model: 'scripted', apiKey: 'k' },
            runsDir,
            kernel: { sandbox: 'off' },
            onRunCreated: (id) => {
              crashedId = id;
            },
          }),
          /the database went away/,
        );
        assert.ok(crashedId);
        assert.equal((await store.getRun(crashedId))!.status, 'running', 'its end was never recorded');
        const kept = await store.artefacts.list(crashedId);
        assert.deepEqual(
          kept.map((a) => a.path),
          ['partial-crashed.csv', 'report.md'],
        );
        // with the run folder gone, the report is read from the store
        rmSync(join(runsDir, crashedId), { recursive: true, force: true });
        assert.deepEqual((await reviewSourceOf(store, crashedId, runsDir)).source, { markdown: REPORT });
      } finally {
        await Promise.all([cancelLlm.close(), failLlm.close(), crashLlm.close()]);
        await store.close();
      }
    },
  );
});
