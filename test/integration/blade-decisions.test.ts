/**
 * BLADE ground-truth authoring and review in the real VS Code (issue 18): a transform authored on `hurricane` is
 * checked on data.csv in the sandboxed kernel (its columns shown) and saved as a new version; 5 sampled decisions of a
 * scripted BLADE run are reviewed by keyboard by two annotators; the agreement view shows the figure; a transform
 * judged justifiable by both is accepted into a new version through its prefilled form; the run's score against the
 * new version rises. Screenshots: blade-author-check, blade-review-item, blade-agreement, blade-accept.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { bladeGtStoreOf } from '../../src/core/benchmarks/blade/gt-versions.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import { call, startScriptedLlm } from '../helpers/scripted-llm.ts';
import { hasRunner, pressUntil as sharedPressUntil, runner, screenshot, webviewText } from './helpers/runner.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const shared = () => process.env.LOUPE_SHARED ?? join(process.env.LOUPE_REPO_ROOT ?? process.cwd(), '..', 'shared');
const root = () => join(shared(), 'data', 'blade', 'datasets');
const TITLE = 'BLADE decisions: hurricane';
const DATASET = { suite: 'blade', root: '', blockId: 'hurricane' };

/** An analysis of hurricane with 5 decisions: 2 conceptual variables, 2 transform units, 1 model. */
const SUBMISSION = {
  conceptual_variables: [
    { description: 'femininity of the hurricane name', type: 'IV', columns: ['masfem'] },
    { description: 'number of deaths', type: 'DV', columns: ['log_deaths'] },
  ],
  transform_code:
    "def transform(df):\n    df['log_deaths'] = np.log1p(df['alldeaths'])\n    df['deaths_per_wind'] = df['alldeaths'] / df['wind']\n    return df\n",
  model_code: "def model(df):\n    return smf.ols('log_deaths ~ masfem', data=df).fit()\n",
};

function cli(args: string[]): Promise<{ rc: number; out: string; err: string }> {
  const repo = process.env.LOUPE_REPO_ROOT ?? process.cwd();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(repo, 'dist', 'cli.js'), ...args],
      { env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' }, cwd: tmpdir(), maxBuffer: 64 << 20, timeout: 300_000 },
      (e, out, err) =>
        resolve({ rc: e ? (typeof e.code === 'number' ? e.code : 1) : 0, out: String(out), err: String(err) }),
    );
  });
}

const text = (selector: string) =>
  runner<string>({ action: 'webviewText', title: TITLE, selector }, 15_000).catch(() => '');

/** Presses a key until its effect shows (a key can be dropped while focus moves between frames). */
const pressUntil = (key: string, effect: () => Promise<boolean>, what: string) =>
  sharedPressUntil(key, effect, what, {
    shotPrefix: 'blade',
    explain: async () => `message '${await text('#message')}', progress '${await text('#progress')}'`,
  });

describe('BLADE ground-truth authoring and review', function () {
  this.timeout(900_000);
  const cfg = () => vscode.workspace.getConfiguration('loupe');
  let suitesBefore: unknown;
  let storePath = '';
  let runId = '';
  let scoreBefore = NaN;

  const score = async (): Promise<number> => {
    const s = await cli(['score', '--store', storePath, '--run', runId, '--judge', 'none', '--no-save', '--json']);
    assert.equal(s.rc, 0, s.err);
    const r = (JSON.parse(s.out) as { runs: Array<{ summary: Record<string, number | null>; error?: string }> })
      .runs[0]!;
    assert.ok(!r.error, r.error);
    return r.summary.transformValuePrecision as number;
  };

  before(async function () {
    if (!hasRunner()) this.skip();
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    DATASET.root = root();
    suitesBefore = cfg().inspect('suites')?.workspaceValue;
    await cfg().update('suites', [{ suite: 'blade', root: root() }], vscode.ConfigurationTarget.Workspace);
    await cfg().update('annotator', 'expert-a', vscode.ConfigurationTarget.Global);
    await cfg().update('annotation.reviewersPerItem', 2, vscode.ConfigurationTarget.Global);
    storePath = join(cfg().get<string>('runsDirectory') ?? '', 'runs.sqlite');
    const llm = await startScriptedLlm({
      script: [{ content: 'Submit.', toolCalls: [call('submit_analysis', SUBMISSION)] }, { content: 'done' }],
    });
    try {
      const r = await cli([
        'run',
        '--store',
        storePath,
        '--suite',
        'blade',
        '--root',
        root(),
        '--block',
        'hurricane',
        '--agent',
        'llm',
        '--model',
        'scripted-gt',
        '--base-url',
        llm.baseUrl,
        '--json',
      ]);
      assert.equal(r.rc, 0, r.err);
      runId = (JSON.parse(r.out.trim().split('\n').pop()!) as { runId: string }).runId;
    } finally {
      await llm.close();
    }
    scoreBefore = await score();
  });

  after(async () => {
    await cfg().update('suites', suitesBefore, vscode.ConfigurationTarget.Workspace);
    await cfg().update('annotator', undefined, vscode.ConfigurationTarget.Global);
    await cfg().update('annotation.reviewersPerItem', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('authors a transform on hurricane: its check runs on data.csv and shows its columns; it saves as a new version', async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const form = {
      kind: 'transform',
      specName: 'damage',
      specification: 'log of normalised damage',
      transVerb: ['derive'],
      code: "df['log_damage_loupe'] = np.log(df['ndam15'] + 1)",
      rationale: 'damage is heavily skewed',
      mapping: [{ inputs: ['ndam15'], output: 'log_damage_loupe' }],
      branches: [
        { dependencies: ['ROOT_SPEC_ID'], condition: '' },
        { dependencies: ['79d33ed08a8f4c46afd64392221ddc7b'], condition: '' },
      ],
    };
    assert.equal(await vscode.commands.executeCommand('loupe.authorGroundTruth', { ...DATASET, form }), 'hurricane');
    await webviewText({ title: TITLE, expect: /Run check/, timeoutMs: 60_000 });
    // the spec name is typed by the expert
    await runner({ action: 'clickInWebview', title: TITLE, selector: '#f-specName' });
    await runner({ action: 'press', key: 'Control+a' });
    await runner({ action: 'type', text: 'log_damage_loupe' });
    await pressUntil(
      'Control+Enter',
      async () => /Check passed|Check failed/.test(await text('#check-result')),
      'check',
    );
    const result = await text('#check-result');
    assert.match(result, /Check passed/, result);
    assert.match(result, /Branch 1 \(after ROOT[^)]*\)\)[\s\S]*94 rows[\s\S]*added: log_damage_loupe/);
    assert.match(result, /Branch 2 \(after remove_Katrina\)[\s\S]*9[0-3] rows/);
    assert.match(result, /Columns: [\s\S]*log_damage_loupe/);
    await sleep(400);
    await screenshot('blade-author-check');
    await runner({ action: 'clickInWebview', title: TITLE, selector: '#save' });
    await webviewText({ title: TITLE, expect: /Saved as ground-truth version \d+/, timeoutMs: 60_000 });
    const st = openStore(storePath);
    try {
      const v = await bladeGtStoreOf(st).latest('hurricane');
      assert.ok(
        v && /log_damage_loupe/.test(v.csv) && v.author === 'expert-a',
        'the authored transform is in the newest version',
      );
    } finally {
      await st.close();
    }
  });

  it('two annotators review the 5 sampled decisions of the scripted run by keyboard', async () => {
    for (const who of ['expert-a', 'expert-b']) {
      await cfg().update('annotator', who, vscode.ConfigurationTarget.Global);
      await vscode.commands.executeCommand('loupe.reviewBladeDecisions', {
        ...DATASET,
        runIds: [runId],
        perDataset: 5,
        seed: 1,
      });
      await webviewText({ title: TITLE, expect: new RegExp(`item 1 of 5 .*annotating as ${who}`), timeoutMs: 120_000 });
      await runner({ action: 'clickInWebview', title: TITLE, selector: '#progress' });
      for (let k = 1; k <= 5; k++) {
        await webviewText({ title: TITLE, expect: new RegExp(`item ${k} of 5`), timeoutMs: 30_000 });
        const fields = (await text('#fields')).split('\n').filter((l) => /Yes/.test(l)).length || 1;
        const isModel = /Loupe extension/.test(await text('#fields'));
        for (let f = 1; f <= fields; f++) {
          const key = who === 'expert-b' && isModel ? 'u' : 'y';
          await pressUntil(
            key,
            async () => ((await text('#draft-summary')).match(/= (Yes|No|Unsure)/g) ?? []).length >= f,
            `answer field ${f}`,
          );
        }
        if (k === 1 && who === 'expert-a') await screenshot('blade-review-item');
        await pressUntil(
          'Control+Enter',
          async () => /Saved\. Enter: next item/.test(await text('#message')),
          'submit',
        );
        if (k < 5) {
          await pressUntil(
            'Enter',
            async () => new RegExp(`item ${k + 1} of 5`).test(await text('#progress')),
            `next ${k + 1}`,
          );
        }
      }
      await webviewText({ title: TITLE, expect: new RegExp(`${who}: 5`), timeoutMs: 30_000 });
    }
    await webviewText({ title: TITLE, expect: /5 \/ 5 done/, timeoutMs: 30_000 });
  });

  it("the agreement view shows the figure; a justifiable transform is accepted into a new version and the run's score rises", async () => {
    await vscode.commands.executeCommand('loupe.showBladeDecisionAgreement', DATASET);
    const agreement = await webviewText({ title: TITLE, expect: /Offered for acceptance/, timeoutMs: 60_000 });
    assert.match(agreement, /Transforms[\s\S]*agent[\s\S]*100% justifiable · n = 2/);
    assert.match(agreement, /Models[\s\S]*agent[\s\S]*0% justifiable · n = 1/);
    assert.match(agreement, /Cohen's κ/);
    assert.match(agreement, /Loupe extension|is_reasonable/);
    await sleep(400);
    await screenshot('blade-agreement');
    const rows = (await text('#candidates')).split('\n').filter((l) => l.trim());
    const at = rows.findIndex((l) => /deaths_per_wind/.test(l));
    assert.ok(at >= 0, `candidates: ${rows.join(' | ')}`);
    await runner({ action: 'clickInWebview', title: TITLE, selector: `#candidates tr:nth-child(${at + 1}) .accept` });
    await webviewText({
      title: TITLE,
      expect: /Accepting a decision judged justifiable by consensus/,
      timeoutMs: 30_000,
    });
    assert.match(
      await runner<string>({ action: 'webviewValue', title: TITLE, selector: '#f-code' }),
      /deaths_per_wind/,
    );
    await runner({ action: 'clickInWebview', title: TITLE, selector: '#check' });
    await webviewText({ title: TITLE, expect: /Check passed/, timeoutMs: 60_000 });
    await sleep(300);
    await screenshot('blade-accept');
    await runner({ action: 'clickInWebview', title: TITLE, selector: '#save' });
    const saved = await webviewText({ title: TITLE, expect: /Saved as ground-truth version \d+/, timeoutMs: 60_000 });
    assert.match(saved, /accepted transform deaths_per_wind by consensus from review item bd:/);
    const scoreAfter = await score();
    console.log(`      transform value precision of ${runId}: ${scoreBefore} → ${scoreAfter}`);
    assert.ok(scoreAfter > scoreBefore, `score rose: ${scoreBefore} → ${scoreAfter}`);
  });
});
