/**
 * The model × question matrix (issue 43) in the real VS Code: a store of its own with two profiles on two LongDA blocks
 * × 2 repeats (scores through the store API, one run unscored, one with a failed tool call, answer steps recorded),
 * a model name carrying markup. The panel shows the items and profiles of `loupe results --matrix --json` for the
 * same store, a dot opens its run's Timeline, the keyboard moves across dots and Enter opens one, the "profiles
 * disagree" filter narrows the rows, the expected value is revealed on request and refused in blind mode.
 * Screenshots: matrix-1600, matrix-disagree-1600.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { openStore } from '../../src/core/store/run-store.ts';
import type { MatrixViewState } from '../../src/protocol/matrix.ts';
import { cli, hasRunner, runner, screenshot, webviewText } from './helpers/runner.ts';

const BLOCKS = ['NHANES-mx-1', 'NHANES-mx-2'];
const MODEL_B = 'model-b <img src=x onerror=alert(1)><b>bold</b>';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const timelineTabs = () =>
  vscode.window.tabGroups.all
    .flatMap((g) => g.tabs)
    .map((t) => t.label)
    .filter((l) => l.startsWith('Timeline: '));

describe('Model × question matrix panel', function () {
  this.timeout(300_000);
  const cfg = () => vscode.workspace.getConfiguration('loupe');
  let storePath = '';

  before(async function () {
    if (!hasRunner()) this.skip();
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    const dir = mkdtempSync(join(tmpdir(), 'loupe-matrix-int-'));
    storePath = join(dir, 'runs.sqlite');
    const st = openStore(storePath);
    try {
      let n = 0;
      for (const model of ['model-a', MODEL_B]) {
        for (const blockId of BLOCKS) {
          for (let r = 0; r < 2; r++) {
            const id = `mx-${model === 'model-a' ? 'a' : 'b'}-${blockId}-${r}`;
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
            for (let s = 0; s < 2; s++) {
              await st.commitStep(
                {
                  runId: id,
                  index: s,
                  startedAt: new Date().toISOString(),
                  endedAt: new Date().toISOString(),
                  latencyMs: 1,
                  toolMs: 1,
                  usage: null,
                  costUsd: null,
                  finishReason: 'tool_calls',
                  extraMessages: [],
                  assistant: {
                    role: 'assistant',
                    content: `step ${s}`,
                    tool_calls: [{ id: `c${s}`, type: 'function', function: { name: 'python', arguments: '{}' } }],
                  },
                  toolCalls: [
                    {
                      id: `c${s}`,
                      name: 'python',
                      argumentsText: '{}',
                      observation: 'ok',
                      isError: model !== 'model-a' && r === 0 && s === 0,
                      truncated: false,
                      durationMs: 1,
                    },
                  ],
                } as never,
                {
                  answers: [0, 1, 2]
                    .filter((q) => q % 2 === s)
                    .map((q) => ({ runId: id, queryId: `q${q}`, answer: q, raw: String(q), stepIndex: s })),
                } as never,
              );
            }
            await st.updateRun(id, { status: 'finished', steps: 2 } as never);
            if (model !== 'model-a' && blockId === BLOCKS[1] && r === 1) continue; // unscored
            const rows = [0, 1, 2].map((q) => {
              const match = q === 2 ? 0 : model === 'model-a' || q === 0 ? 1 : 0;
              return {
                qId: `q${q}`,
                survey: 'NHANES',
                source: blockId,
                internalId: q,
                answerStructure: 'single',
                rawAnswer: String(match),
                match,
                given: match,
                expected: 1000 + q,
              };
            });
            const summary = { match: rows.reduce((a, x) => a + x.match, 0) / rows.length };
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
    } finally {
      await st.close();
    }
    await cfg().update('store', storePath, vscode.ConfigurationTarget.Global);
    await cfg().update('annotation.blind', false, vscode.ConfigurationTarget.Global);
  });

  after(async () => {
    await cfg().update('store', undefined, vscode.ConfigurationTarget.Global);
    await cfg().update('annotation.blind', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('shows the items and profiles of loupe results --matrix, names as text; a dot and Enter open the answer step', async () => {
    await runner({ action: 'viewport', width: 1600, height: 1000 });
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const r = await cli(['results', '--matrix', '--store', storePath, '--suite', 'longda', '--json']);
    assert.equal(r.rc, 0, r.err);
    const c = JSON.parse(r.out);
    const shown = await vscode.commands.executeCommand<MatrixViewState | undefined>('loupe.openMatrix', {
      suite: 'longda',
    });
    assert.ok(shown?.matrix, `no matrix: ${shown?.message}`);
    assert.deepEqual(
      shown.matrix.rows.map((x) => x.key),
      c.rows.map((x: { key: string }) => x.key),
    );
    assert.deepEqual(
      shown.matrix.columns.map((x) => x.player),
      c.columns.map((x: { player: string }) => x.player),
    );
    assert.deepEqual(shown.matrix.counts, c.counts);
    const text = await webviewText({ title: 'Matrix: LongDA', expect: /Profiles disagree/ });
    for (const w of [
      'Wrong in every repeat (2)',
      'Profiles disagree (2)',
      'Unscored (3)',
      'Tool errors (6)',
      MODEL_B,
      'NHANES-mx-1/q0',
    ]) {
      assert.ok(text.includes(w), `the panel does not show '${w}': ${text.slice(0, 1200)}`);
    }
    assert.ok(!text.includes('expected: 1000'), 'an expected value was shown before it was asked for');
    const imgs = await runner<unknown[]>({
      action: 'webviewRects',
      selector: '#app img, #app b',
      title: 'Matrix: LongDA',
    }).catch(() => []);
    assert.equal(imgs.length, 0, 'markup in a profile name became elements');
    await sleep(500);
    await screenshot('matrix-1600');
    // a click on a dot opens its run's Timeline
    await runner({ action: 'clickInWebview', selector: '[data-pos="0:0:0"]', title: 'Matrix: LongDA' });
    for (let i = 0; i < 40 && !timelineTabs().length; i++) await sleep(250);
    assert.deepEqual(timelineTabs(), ['Timeline: NHANES-mx-1']);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    // keyboard: the cursor moves across the dots, Enter opens the run (ArrowDown ×3 reaches block 2's first item)
    await vscode.commands.executeCommand('loupe.openMatrix', { suite: 'longda' });
    await webviewText({ title: 'Matrix: LongDA', expect: /Profiles disagree/ });
    await runner({ action: 'clickInWebview', selector: 'thead th .label', title: 'Matrix: LongDA' });
    for (const k of ['ArrowRight', 'ArrowDown', 'ArrowDown', 'ArrowDown', 'Enter']) {
      await runner({ action: 'press', key: k });
      await sleep(150);
    }
    for (let i = 0; i < 40 && !timelineTabs().length; i++) await sleep(250);
    assert.deepEqual(
      timelineTabs(),
      ['Timeline: NHANES-mx-2'],
      'Enter on the keyboard cursor did not open the run of block 2',
    );
  });

  it('narrows to the disagreeing items and reveals an expected value on request, never in blind mode', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const s = await vscode.commands.executeCommand<MatrixViewState>('loupe.openMatrix', {
      suite: 'longda',
      filter: 'disagree',
    });
    assert.deepEqual(
      s.matrix!.rows.map((x) => x.key),
      ['NHANES-mx-1/q1', 'NHANES-mx-2/q1'],
    );
    await webviewText({ title: 'Matrix: LongDA', expect: /NHANES-mx-2\/q1/ });
    await runner({ action: 'clickInWebview', selector: 'tr[data-row="0"] button.reveal', title: 'Matrix: LongDA' });
    const t = await webviewText({ title: 'Matrix: LongDA', expect: /expected: 1001/ });
    assert.ok(!t.includes('expected: 1000'));
    await sleep(400);
    await screenshot('matrix-disagree-1600');
    await cfg().update('annotation.blind', true, vscode.ConfigurationTarget.Global);
    const b = await vscode.commands.executeCommand<MatrixViewState>('loupe.openMatrix', {
      suite: 'longda',
      filter: 'disagree',
    });
    assert.ok(b.matrix!.blind && b.matrix!.rows.every((x) => x.expected === undefined));
    const bt = await webviewText({ title: 'Matrix: LongDA', expect: /Blind review is on/ });
    assert.ok(!bt.includes('expected: 10'), 'an expected value is shown in blind mode');
    const reveal = await runner<unknown[]>({
      action: 'webviewRects',
      selector: 'button.reveal',
      title: 'Matrix: LongDA',
    }).catch(() => []);
    assert.equal(reveal.length, 0, 'blind mode still offers to reveal expected values');
    await cfg().update('annotation.blind', false, vscode.ConfigurationTarget.Global);
  });
});
