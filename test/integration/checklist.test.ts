/**
 * Checklist editor (issue 15) in the real VS Code: the published MIMIC checklists do not cover the MIMIC-IV demo, so
 * an expert writes three fact items for a demo patient in the editor (one with a SQL result run in the block's
 * sandboxed database and attached), a scripted DDR run of that patient is scored against them with a scripted LLM
 * judge, an item is revised, and the score against the new version differs. Screenshots of the editor.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { importCsvFolder } from '../../src/core/benchmarks/ddr/import.ts';
import { checklistStoreOf } from '../../src/core/annotations/checklists.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import { call, startScriptedLlm, type ChatRequestBody, type ScriptedLlm } from '../helpers/scripted-llm.ts';
import { hasRunner, runner, screenshot, webviewText } from './helpers/runner.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const shared = () => process.env.LOUPE_SHARED ?? join(process.env.LOUPE_REPO_ROOT ?? process.cwd(), '..', 'shared');
const BLOCK = 'patient_10000032';
const TITLE = 'Checklist';

const panelText = (selector: string) =>
  runner<string>({ action: 'webviewText', title: TITLE, selector }, 15_000).catch(() => '');
const valueOf = (selector: string) =>
  runner<string | null>({ action: 'webviewValue', title: TITLE, selector }, 15_000).catch(() => null);

/** Replaces the text of a field in the editor, checking it took (a key can be lost while focus moves). */
async function fill(selector: string, text: string): Promise<void> {
  for (let i = 0; i < 4; i++) {
    await runner({ action: 'clickInWebview', title: TITLE, selector });
    await runner({ action: 'press', key: 'Control+a' });
    await runner({ action: 'type', text });
    await sleep(150);
    if ((await valueOf(selector)) === text) return;
  }
  await screenshot('checklist-failed-fill').catch(() => '');
  throw new Error(`could not type into ${selector}: it holds '${await valueOf(selector)}'`);
}

/** Waits for the editor's message line to match. */
async function message(expect: RegExp, timeoutMs = 60_000): Promise<string> {
  const t0 = Date.now();
  let last = '';
  while (Date.now() - t0 < timeoutMs) {
    last = await panelText('.msg');
    if (expect.test(last)) return last;
    await sleep(300);
  }
  await screenshot('checklist-failed-message').catch(() => '');
  throw new Error(`editor message did not match ${expect}; last: '${last}'`);
}

describe('Checklist editor (expert-authored checklists, versioned)', function () {
  this.timeout(600_000);
  let llm: ScriptedLlm | undefined;
  let dir = '';
  let db = '';
  const cfg = () => vscode.workspace.getConfiguration('loupe');
  const before_: Record<string, unknown> = {};

  before(async function () {
    if (!hasRunner()) this.skip();
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    dir = mkdtempSync(join(tmpdir(), 'loupe-checklist-int-'));
    db = join(dir, 'mimic-demo.sqlite');
    const few = new Set(['hosp_patients', 'hosp_admissions']);
    await importCsvFolder(join(shared(), 'data', 'mimic-iv-demo'), db, { tableFilter: (t) => few.has(t) });
    const agent = [
      {
        content: 'Demographics first.',
        toolCalls: [
          call('execute_query', { sql: 'SELECT gender, anchor_age FROM hosp_patients WHERE subject_id = 10000032' }),
        ],
      },
      {
        content: 'Now the admissions.',
        toolCalls: [
          call('execute_query', { sql: 'SELECT COUNT(*) AS n FROM hosp_admissions WHERE subject_id = 10000032' }),
        ],
      },
      { content: 'FINISH: Patient 10000032 is a woman (F), anchor age 52, with 4 hospital admissions.' },
    ];
    const between = (s: string, a: string, b: string) => s.slice(s.indexOf(a) + a.length, b ? s.indexOf(b) : undefined);
    llm = await startScriptedLlm({
      scriptFor: (first) => {
        if (first.startsWith('Task:')) {
          // DDR's separate insight call for one step: state what its result shows
          return [
            () => ({
              content: /anchor_age/.test(first)
                ? 'The patient is F, anchor age 52.'
                : /"n"/.test(first)
                  ? 'The patient has 4 hospital admissions.'
                  : 'NO INSIGHT',
            }),
          ];
        }
        if (first.startsWith('Numbered findings') || first.startsWith('Final report')) {
          // the checklist judge: supported when the findings hold the reference answer
          return [
            (req: ChatRequestBody) => {
              const u = String(req.messages.at(-1)!.content);
              const findings = between(u, ':\n', '\n\nQuestion:').toLowerCase();
              const answer = u
                .slice(u.indexOf('Reference answer: ') + 'Reference answer: '.length)
                .trim()
                .toLowerCase();
              const label = findings.includes(answer) ? 'CORRECT_INFO' : 'INSUFFICIENT_INFO';
              return {
                content: JSON.stringify({
                  label,
                  supporting: label === 'CORRECT_INFO' ? [1] : [],
                  contradicting: [],
                  evidence: '',
                  reasoning: 'scripted',
                }),
              };
            },
          ];
        }
        if (first.startsWith('What the agent saw')) {
          return [() => ({ content: '{"hallucinated": false, "reason": "scripted"}' })];
        }
        return agent;
      },
    });
    for (const k of ['suites', 'models', 'judge.kind', 'judge.profile']) before_[k] = cfg().inspect(k)?.workspaceValue;
    await cfg().update(
      'suites',
      [{ suite: 'ddr', root: db, entities: 'hosp_patients.subject_id' }],
      vscode.ConfigurationTarget.Workspace,
    );
    await cfg().update(
      'models',
      [
        { name: 'scripted-ddr', baseUrl: llm.baseUrl, model: 'scripted-ddr', temperature: 0 },
        { name: 'scripted-judge', baseUrl: llm.baseUrl, model: 'scripted-judge', temperature: 0 },
      ],
      vscode.ConfigurationTarget.Workspace,
    );
    await cfg().update('judge.kind', 'llm', vscode.ConfigurationTarget.Workspace);
    await cfg().update('judge.profile', 'scripted-judge', vscode.ConfigurationTarget.Workspace);
    for (const p of ['scripted-ddr', 'scripted-judge']) {
      assert.equal(await vscode.commands.executeCommand('loupe.setApiKey', { profile: p, key: 'k' }), true);
    }
  });

  after(async () => {
    await llm?.close();
    for (const [k, v] of Object.entries(before_)) await cfg().update(k, v, vscode.ConfigurationTarget.Workspace);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    for (const t of vscode.window.terminals) t.dispose();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('an expert writes three fact items (one with an attached SQL result), a scripted DDR run is scored against them, a revised item changes the score', async () => {
    // A scripted DDR run of the demo patient, from the run command.
    const runIds = await vscode.commands.executeCommand<string[] | undefined>('loupe.runBenchmarkBlock', {
      suite: 'ddr',
      root: db,
      blockId: BLOCK,
      profile: 'scripted-ddr',
      repeats: 1,
    });
    assert.equal(runIds?.length, 1);
    const runId = runIds![0]!;
    const storePath = join(cfg().get<string>('runsDirectory') ?? '', 'runs.sqlite');
    const reader = openStore(storePath);
    try {
      const run = await reader.getRun(runId);
      assert.equal(run?.status, 'finished', run?.statusReason ?? '');
    } finally {
      await reader.close();
    }
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');

    // The Benchmarks view says the block has no checklist.
    await vscode.commands.executeCommand('workbench.view.extension.loupe');
    await vscode.commands.executeCommand('loupe.benchmarks.focus');

    // The editor: empty (the published checklists share no patient with the demo).
    assert.equal(
      await vscode.commands.executeCommand('loupe.editChecklist', { suite: 'ddr', root: db, blockId: BLOCK }),
      BLOCK,
    );
    const first = await webviewText({ title: TITLE, expect: /no checklist yet/ });
    assert.match(first, /entity 10000032/);
    await screenshot('checklist-editor-empty');

    const items: Array<[string, string, string?]> = [
      ['What is the patient\u2019s gender?', 'F'],
      ['What is the patient\u2019s anchor age?', '52'],
      [
        'How many hospital admissions does the patient have?',
        '7',
        'SELECT COUNT(*) AS n FROM hosp_admissions WHERE subject_id = 10000032',
      ],
    ];
    for (const [k, [q, a, sql]] of items.entries()) {
      await runner({ action: 'clickInWebview', title: TITLE, selector: '#add-item' });
      await webviewText({ title: TITLE, expect: new RegExp(`c${k + 1} · fact`) });
      await fill('#f-question', q);
      await fill('#f-answer', a);
      if (sql) {
        await fill('#f-sql', sql);
        // Ctrl+Enter in the query runs it (pressed again if a key was lost while focus moved)
        for (let i = 0; i < 3 && !(await panelText('.msg')); i++) {
          await runner({ action: 'clickInWebview', title: TITLE, selector: '#f-sql' });
          await runner({ action: 'press', key: 'Control+Enter' });
          await sleep(1500);
        }
        await message(/Query result attached to c3/);
        const result = await panelText('table.result');
        assert.match(
          result,
          /n\s+4/,
          'the demo patient has 4 admissions: the expert will see the answer 7 is wrong later',
        );
      }
    }
    await fill('#f-note', 'three facts for the demo patient');
    await screenshot('checklist-editor-items');
    await runner({ action: 'clickInWebview', title: TITLE, selector: '#save' });
    // issue 42: the answer 7 contradicts its own evidence (COUNT = 4): not saved until the expert confirms
    await message(
      /Not saved yet: the evidence contradicts[\s\S]*c3: expected “7”, but its evidence query returned n = 4/,
    );
    await screenshot('checklist-editor-contradiction');
    await runner({ action: 'clickInWebview', title: TITLE, selector: '#save-anyway' });
    await message(/Saved version 1\./);
    const store = openStore(storePath);
    try {
      const v1 = (await checklistStoreOf(store).listLatest()).find((v) => v.blockId === BLOCK);
      assert.equal(v1?.version, 1);
      assert.equal(v1?.items.length, 3);
      assert.equal(v1?.items[2]?.evidence?.result?.rows[0]?.[0], '4');
      assert.equal(v1?.note, 'three facts for the demo patient');
    } finally {
      await store.close();
    }

    // Score the run against version 1 with the scripted judge.
    await runner({ action: 'clickInWebview', title: TITLE, selector: '#rescore' });
    const t0 = Date.now();
    let r1 = '';
    while (Date.now() - t0 < 120_000 && !/Against version 1/.test(r1)) {
      await sleep(500);
      r1 = await panelText('#rescore-result');
    }
    const acc1 = Number(/I_m acc ([\d.]+)%/.exec(r1)?.[1]);
    assert.equal(acc1, 66.67, r1);

    // Revise c3 (the expert checked the attached result: 4 admissions), save version 2, score again.
    await runner({ action: 'clickInWebview', title: TITLE, selector: '.item-row[data-index="2"]' });
    await webviewText({ title: TITLE, expect: /c3 · fact/ });
    await fill('#f-answer', '4');
    await fill('#f-note', 'c3: the demo has 4 admissions');
    // Ctrl+S saves (pressed again if the key was lost while focus moved: a repeated save of the same items is no new version)
    for (let i = 0; i < 3 && !/Saved version 2\./.test(await panelText('.msg')); i++) {
      await runner({ action: 'clickInWebview', title: TITLE, selector: '#f-note' });
      await runner({ action: 'press', key: 'Control+s' });
      await sleep(1500);
    }
    await message(/Saved version 2\./);
    await runner({ action: 'clickInWebview', title: TITLE, selector: '.history summary' });
    await sleep(300);
    const hist = await panelText('.history');
    assert.match(hist, /v2 .*1 changed \(c3\).*c3: the demo has 4 admissions/s);
    await runner({ action: 'clickInWebview', title: TITLE, selector: '#rescore' });
    let r2 = '';
    const t1 = Date.now();
    while (Date.now() - t1 < 120_000 && !/Against version 2/.test(r2)) {
      await sleep(500);
      r2 = await panelText('#rescore-result');
    }
    const acc2 = Number(/I_m acc ([\d.]+)%/.exec(r2)?.[1]);
    assert.equal(acc2, 100, r2);
    assert.notEqual(acc1, acc2, 'the score against the new version differs');
    await screenshot('checklist-editor-versions');

    // Another expert saves version 3 (c1 reworded) while this editor changes c1 too, from version 2: the save shows
    // their change and saves nothing; taking theirs and saving again makes version 4 on top of it.
    const other = openStore(storePath);
    try {
      const cs = checklistStoreOf(other);
      const latest = (await cs.listLatest()).find((v) => v.blockId === BLOCK)!;
      const theirs = latest.items.map((i) => (i.id === 'c1' ? { ...i, answer: 'Female' } : i));
      const saved = await cs.save(latest, {
        base: latest.version,
        items: theirs,
        author: 'expert-b',
        note: 'c1 spelled out',
      });
      assert.equal(saved.version.version, 3);
    } finally {
      await other.close();
    }
    await runner({ action: 'clickInWebview', title: TITLE, selector: '.item-row[data-index="0"]' });
    await webviewText({ title: TITLE, expect: /c1 · fact/ });
    await fill('#f-answer', 'F (female)');
    await runner({ action: 'clickInWebview', title: TITLE, selector: '#save' });
    await message(/expert-b saved version 3 meanwhile and changed c1/);
    const box = await panelText('.conflict');
    assert.match(box, /c1 theirs: What is the patient’s gender\? = Female — expert-b/);
    assert.match(box, /yours: What is the patient’s gender\? = F \(female\)/);
    await screenshot('checklist-editor-conflict');
    await runner({ action: 'clickInWebview', title: TITLE, selector: '.conflict button' });
    await message(/Resolved\. Save again to make a version on top of version 3/);
    await runner({ action: 'clickInWebview', title: TITLE, selector: '#save' });
    await message(/No change: version 3 already has these items\.|Saved version 4\./);

    // Both scores are stored, each naming its checklist version.
    const s2 = openStore(storePath);
    try {
      const scores = (await s2.scores.list(runId)).map((s) => s.options.checklist).sort();
      assert.deepEqual(scores, ['v1', 'v2']);
    } finally {
      await s2.close();
    }
    // The Benchmarks view now says which version the block is scored against.
    await vscode.commands.executeCommand('loupe.benchmarks.focus');
    await vscode.commands.executeCommand('list.focusFirst');
    await vscode.commands.executeCommand('list.expand');
    const sidebar = await runner<string>({ action: 'workbenchText', selector: '.part.sidebar' });
    assert.match(sidebar, /Patient 10000032\s*1 item · checklist v3, 3/);
    assert.match(sidebar, /Patient 10001217\s*1 item · no checklist/);
    await screenshot('benchmarks-view-checklists');
  });
});
