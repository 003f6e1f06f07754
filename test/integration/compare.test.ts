/**
 * Compare two profiles (issue 48) in the real VS Code: a store of its own with two scripted profiles on three LongDA
 * NHANES blocks × 3 repeats (scores written through the store API), one model name carrying markup. The panel shows
 * the numbers the shipped `loupe compare --json` prints for the same store (paired difference, clustered SE and CI,
 * paired t p-value, bootstrap CI, n items / clusters / repeats, minimum detectable difference, the runs, the
 * disagreeing items), and the markup as text. Screenshot: compare-profiles-1600.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { openStore } from '../../src/core/store/run-store.ts';
import type { CompareResult } from '../../src/protocol/compare.ts';
import { cli, hasRunner, runner, screenshot, webviewText } from './helpers/runner.ts';

const BLOCKS = ['NHANES-pub-1', 'NHANES-pub-2', 'NHANES-pub-3'];
const QUERIES = 5;
const MODEL_B = 'model-b <img src=x onerror=alert(1)><b>bold</b>';
const MODELS = ['model-a', MODEL_B];
function credit(model: string, b: number, q: number, r: number): number {
  const h = (b * 7 + q * 3 + r * 2 + (model === 'model-a' ? 1 : 0)) % 5;
  // B's rate differs by block, so the paired difference varies between clusters (a non-degenerate clustered SE)
  return model === 'model-a' ? (h < 3 ? 1 : 0) : h < 1 + b ? 1 : 0;
}
const f4 = (x: number) => x.toFixed(4);
const TITLE = 'Compare: longda';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Compare two profiles panel', function () {
  this.timeout(300_000);
  const cfg = () => vscode.workspace.getConfiguration('loupe');
  let storePath = '';

  before(async function () {
    if (!hasRunner()) this.skip();
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    const dir = mkdtempSync(join(tmpdir(), 'loupe-compare-int-'));
    storePath = join(dir, 'runs.sqlite');
    const st = openStore(storePath);
    try {
      let n = 0;
      for (const model of MODELS) {
        for (const [bi, blockId] of BLOCKS.entries()) {
          for (let r = 0; r < 3; r++) {
            const id = `cmp-${model === 'model-a' ? 'a' : 'b'}-${blockId}-${r}`;
            await st.createRun({
              id,
              suite: 'longda',
              blockId,
              agent: 'llm',
              model,
              params: { temperature: 0.7 },
              promptHash: 'h',
              toolSet: 'longda',
              dataChecksums: {},
              loupeVersion: 't',
              sandbox: 'off',
              workspace: dir,
            });
            await st.updateRun(id, { status: 'finished' });
            const rows = Array.from({ length: QUERIES }, (_, q) => ({
              qId: `q${q}`,
              survey: 'NHANES',
              source: blockId,
              internalId: q,
              answerStructure: 'single',
              rawAnswer: '1',
              match: credit(model, bi, q, r),
              given: 1,
              expected: 1,
            }));
            const summary = { match: rows.reduce((a, x) => a + x.match, 0) / QUERIES };
            const detail = {
              runId: id,
              suite: 'longda',
              blockId,
              model,
              agent: 'llm',
              status: 'finished',
              benchmark: 'longda',
              judgeId: 'none',
              options: {},
              summary,
              pending: 0,
              unjudged: 0,
              detail: { score: { rows } },
            };
            await st.scores.save({
              runId: id,
              benchmark: 'longda',
              judgeId: 'none',
              options: {},
              summary,
              detail,
              pending: 0,
              scoredAt: new Date(Date.UTC(2026, 0, 1) + n++).toISOString(),
            });
          }
        }
      }
      // a third profile with a run never scored: the pickers must not offer it
      await st.createRun({
        id: 'cmp-c-unscored',
        suite: 'longda',
        blockId: BLOCKS[0]!,
        agent: 'llm',
        model: 'model-c-unscored',
        params: { temperature: 0.7 },
        promptHash: 'h',
        toolSet: 'longda',
        dataChecksums: {},
        loupeVersion: 't',
        sandbox: 'off',
        workspace: dir,
      });
    } finally {
      await st.close();
    }
    await cfg().update('store', storePath, vscode.ConfigurationTarget.Global);
  });

  after(async () => {
    await cfg().update('store', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('shows the numbers of loupe compare --json for the same store, names as text', async () => {
    await runner({ action: 'viewport', width: 1600, height: 1000 });
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const r = await cli([
      'compare',
      '--store',
      storePath,
      '--suite',
      'longda',
      '--a',
      'model-a',
      '--b',
      MODEL_B,
      '--json',
    ]);
    assert.equal(r.rc, 0, r.err);
    const c = JSON.parse(r.out);
    const shown = await vscode.commands.executeCommand<CompareResult | undefined>('loupe.compareProfiles', {
      suite: 'longda',
      a: 'model-a',
      b: MODEL_B,
    });
    assert.ok(shown, 'the command returned no comparison');
    // the panel's numbers are the CLI's, unrounded
    assert.deepEqual(shown.difference, c.paired.difference);
    assert.deepEqual(shown.pairedT, c.paired.pairedT);
    assert.deepEqual(shown.bootstrap, c.paired.bootstrap);
    assert.equal(shown.minimumDetectable, c.minimumDetectable);
    assert.deepEqual(shown.a.runIds, c.a.basis.runIds);
    assert.deepEqual(shown.b.runIds, c.b.basis.runIds);
    assert.deepEqual(
      shown.disagreements.map((d) => d.item),
      c.paired.disagreements.map((d: { item: string }) => d.item),
    );
    // and what the webview renders is those numbers, formatted as the CLI prints them
    const d = c.paired.difference;
    const text = await webviewText({ title: TITLE, expect: /Items where they disagree/ });
    const want = [
      `A − B ${f4(d.mean)} ± ${f4(d.se)} (clustered SE), 95% CI [${f4(d.ci[0])}, ${f4(d.ci[1])}] over ${d.n} shared items in ${d.clusters} publications`,
      `p = ${c.paired.pairedT.p.toPrecision(3)}`,
      `${c.paired.bootstrap.resamples} resamples (seed 0): SE ${f4(c.paired.bootstrap.se)}, CI [${f4(c.paired.bootstrap.ci[0])}, ${f4(c.paired.bootstrap.ci[1])}]`,
      `p = ${c.paired.permutation.p.toPrecision(3)}`,
      `could detect differences ≥ ${f4(c.minimumDetectable)}`,
      `${d.n} items, ${d.clusters} publications, repeats A 3–3, B 3–3`,
      `${f4(c.a.estimate.mean)} ± ${f4(c.a.estimate.se)}`,
      `${f4(c.b.estimate.mean)} ± ${f4(c.b.estimate.se)}`,
      `Items where they disagree (${c.paired.disagreements.length} of ${d.n})`,
      `rests on ${c.a.basis.runIds.length} runs`,
      MODEL_B,
    ];
    for (const w of want) {
      assert.ok(text.includes(w), `the panel does not show '${w}'; it shows: ${text.slice(0, 1500)}`);
    }
    assert.equal(d.n, BLOCKS.length * QUERIES);
    assert.equal(d.clusters, 3);
    assert.ok(d.se > 1e-6, `the scripted profiles should differ by block (clustered SE ${d.se})`);
    // markup in a model name is text: no element was made of it
    const imgs = await runner<unknown[]>({ action: 'webviewRects', selector: '#app img, #app b', title: TITLE }).catch(
      () => [],
    );
    assert.equal(imgs.length, 0, 'markup in a profile name became elements');
    await new Promise((res) => setTimeout(res, 500));
    await screenshot('compare-profiles-1600');
  });

  it('from the palette: the pickers offer only the fully scored profiles, and the chosen pair is compared', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await runner({ action: 'palette', title: 'Loupe: Compare Two Profiles' });
    await sleep(2000);
    const offeredA = await runner<string>({ action: 'workbenchText', selector: '.quick-input-widget' });
    await runner({ action: 'type', text: 'model-a' });
    await sleep(800);
    await runner({ action: 'press', key: 'Enter' });
    await sleep(1500);
    const offeredB = await runner<string>({ action: 'workbenchText', selector: '.quick-input-widget' });
    await runner({ action: 'press', key: 'Enter' });
    assert.match(offeredA, /model-a/);
    assert.ok(offeredA.includes('model-b <img'), `profile B is offered as text: ${offeredA}`);
    assert.doesNotMatch(offeredA, /model-c-unscored/, 'a profile with an unscored run is not offered');
    assert.match(offeredA, /1 profile with unscored runs not offered/);
    assert.doesNotMatch(offeredB, /llm · model-a · /, `profile A is not offered again as B: ${offeredB}`);
    assert.match(offeredB, /llm · model-b /);
    const text = await webviewText({ title: TITLE, expect: /Items where they disagree/ });
    assert.match(text, /A: model-a/);
    assert.ok(text.includes(`B: ${MODEL_B}`));
  });

  it('Results has a "Compare two profiles" button that opens the same pickers', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('loupe.showResults');
    await webviewText({ title: 'Loupe Results', expect: /Compare two profiles/ });
    await runner({ action: 'clickInWebview', selector: '#compare-profiles', title: 'Loupe Results' });
    await sleep(2000);
    const offered = await runner<string>({ action: 'workbenchText', selector: '.quick-input-widget' });
    await screenshot('compare-profiles-from-results');
    await runner({ action: 'press', key: 'Escape' });
    assert.match(offered, /Compare two profiles of LongDA: profile A/);
    assert.doesNotMatch(offered, /model-c-unscored/);
  });

  it('refuses a profile with an unscored run in the panel, naming the run', async () => {
    const st = openStore(storePath);
    try {
      await st.createRun({
        id: 'cmp-a-unscored',
        suite: 'longda',
        blockId: BLOCKS[0]!,
        agent: 'llm',
        model: 'model-a',
        params: { temperature: 0.7 },
        promptHash: 'h',
        toolSet: 'longda',
        dataChecksums: {},
        loupeVersion: 't',
        sandbox: 'off',
        workspace: tmpdir(),
      });
    } finally {
      await st.close();
    }
    const shown = await vscode.commands.executeCommand<CompareResult | undefined>('loupe.compareProfiles', {
      suite: 'longda',
      a: 'model-a',
      b: MODEL_B,
    });
    assert.equal(shown, undefined);
    const text = await webviewText({ title: TITLE, expect: /Cannot compare/ });
    assert.match(text, /cmp-a-unscored/);
    assert.doesNotMatch(text, /--[a-z]/, 'a VS Code message names no CLI flag');
  });
});
