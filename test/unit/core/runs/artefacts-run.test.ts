/**
 * Issue 26 "Artefacts in the store", through the real runner on both engines: an AnalystBench run (scripted model)
 * writes report.md; when the run ends the report is in the store; with the run folder gone (an expert on another
 * machine) side-by-side review still reads the report, from the store.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { loadSuite } from '../../../../src/core/benchmarks/index.ts';
import { closeAnalystDocIndexes } from '../../../../src/core/benchmarks/analystbench/toolset.ts';
import { reviewSourceOf } from '../../../../src/core/review/sources.ts';
import { startBlockRun } from '../../../../src/core/runs/runner.ts';
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
  srv = await startScriptedLlm({ scriptFor: () => [{ content: 'Write the report.', toolCalls: [call('write_report', { markdown: REPORT })] }] });
});
after(async () => {
  await srv?.close();
  await closeAnalystDocIndexes();
  rmSync(dir, { recursive: true, force: true });
});

forEachEngine((e) => {
  it('the report a run wrote is kept in the store when the run ends; review reads it without the run folder', { timeout: 120_000 }, async () => {
    const store = await e.open(await e.fresh());
    const block = suite.blocks.find((b) => b.id === 'nchs_obesity_2021-2023')!;
    assert.ok(block.runnable, block.problems.join('; '));
    const r = await startBlockRun({ store, suite, block, agent: 'llm', llm: { baseUrl: srv.baseUrl, model: 'scripted', apiKey: 'k' }, runsDir: join(dir, e.name), kernel: { sandbox: 'off' } });
    assert.equal(r.status, 'finished', r.reason);
    const kept = await store.artefacts.list(r.runId);
    assert.deepEqual(kept.map((a) => [a.path, a.mediaType, a.size]), [['report.md', 'text/markdown', Buffer.byteLength(REPORT)]]);
    rmSync(join(dir, e.name, r.runId), { recursive: true, force: true });
    assert.deepEqual((await reviewSourceOf(store, r.runId)).source, { markdown: REPORT });
    await store.close();
  });
});
