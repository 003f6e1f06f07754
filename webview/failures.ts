/**
 * Failure Analysis panel (issue 19), keyboard first:
 * - steps list (`l` focuses it): ↑/↓ or j/k move, Shift+↑/↓ (or J/K) extend a step range, `t` tags the range;
 * - report / insights (`r` focuses it): ↑/↓ or j/k move by sentence, Shift extends, `t` tags the sentences (or the
 *   text selected with the mouse);
 * - tag form: digits toggle classes, `s` cycles severity, `n` writes a note, Enter saves, Escape cancels;
 * - a queue item (failure case / hallucination check): `c` opens its verdict form (digits toggle classes, or
 *   1 = facts correct / 2 = derivable; `w` = the judge was wrong), Enter submits and serves the next; `x` skips;
 * - `f` shows the figures (Fig. 8 form, Table 6 form);
 * - `o` opens the run's Trajectory Timeline at the selected step to tag there (the attached item carried along).
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import type { TopLevelSpec } from 'vega-lite';
import {
  GetFailureStepRequest,
  OpenInTimelineRequest,
  ShowFailureFiguresRequest,
  SkipCaseRequest,
  SubmitCaseRequest,
  TagFailureRequest,
  type FailureArtefact,
  type FailuresState,
  type SeverityName,
  type Taxonomy,
} from '../src/protocol/failures.ts';
import { DidChangeStateNotification } from '../src/protocol/webview.ts';
import { connectHost, h, ready } from './shared/host.ts';
import { adoptCss } from './shared/styles.ts';

const host = connectHost();
const app = document.getElementById('app') as HTMLElement;
adoptCss(`
body { padding: 0 12px; }
.muted { color: var(--vscode-descriptionForeground); }
.error { color: var(--vscode-errorForeground); }
.fa-head { display: flex; gap: 12px; align-items: baseline; flex-wrap: wrap; }
.fa-head h1 { font-size: 1.3em; margin: 8px 0; }
#message { min-height: 1.4em; }
.fa-case { border: 1px solid var(--vscode-focusBorder); padding: 6px 10px; margin: 6px 0; }
.fa-case .q { font-weight: 600; }
.fa-main { display: grid; grid-template-columns: minmax(220px, 1.1fr) minmax(220px, 1.2fr) minmax(240px, 1.3fr); gap: 10px; }
.pane { border: 1px solid var(--vscode-panel-border, rgba(128,128,128,.35)); max-height: 420px; overflow: auto; }
.pane:focus { outline: 1px solid var(--vscode-focusBorder); }
.pane h2 { font-size: 1em; margin: 4px 6px; }
.step { display: flex; gap: 6px; padding: 2px 6px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; cursor: pointer; }
.step.sel { background: var(--vscode-list-activeSelectionBackground); color: var(--vscode-list-activeSelectionForeground); }
.step.cursor { outline: 1px dashed var(--vscode-focusBorder); }
.step .err { color: var(--vscode-errorForeground); }
.tagmark { background: var(--vscode-editorWarning-foreground, #d29922); color: #000; border-radius: 3px; padding: 0 3px; font-size: 11px; }
#step-detail { white-space: pre-wrap; font-family: var(--vscode-editor-font-family); font-size: 12px; padding: 4px 6px; margin: 0; }
#report { padding: 4px 8px; white-space: pre-wrap; line-height: 1.5; }
.sent.sel { background: var(--vscode-editor-selectionBackground, rgba(38,79,120,.6)); }
.sent.tagged { text-decoration: underline wavy var(--vscode-editorWarning-foreground, #d29922); }
.form { border: 1px solid var(--vscode-focusBorder); padding: 6px 10px; margin: 8px 0; }
.form label { display: block; margin: 2px 0; }
.form .key { display: inline-block; min-width: 1.4em; text-align: center; border: 1px solid var(--vscode-panel-border, #888); border-radius: 3px; margin-right: 4px; font-size: 11px; }
.form .def { color: var(--vscode-descriptionForeground); font-size: 11px; margin-left: 2.2em; }
textarea { width: 100%; background: var(--vscode-input-background); color: var(--vscode-input-foreground); border: 1px solid var(--vscode-input-border, #555); }
select { background: var(--vscode-dropdown-background); color: var(--vscode-dropdown-foreground); border: 1px solid var(--vscode-dropdown-border); }
table.tags { border-collapse: collapse; margin: 6px 0; }
table.tags td, table.tags th { text-align: left; padding: 2px 8px; border-bottom: 1px solid var(--vscode-panel-border, rgba(128,128,128,.3)); vertical-align: top; }
.chart { margin: 8px 0; }
.keys { font-size: 11px; }
`);

let state: FailuresState;
let cursor = 0;
let anchor = 0;
let artefact = 0;
let sCursor = 0;
let sAnchor = 0;
let form:
  | null
  | {
      kind: 'tag';
      target:
        { kind: 'steps'; from: number; to: number } | { kind: 'span'; artefact: string; start: number; end: number };
      taxonomy: string;
      classes: Set<string>;
      severity: SeverityName;
      note: string;
    }
  | {
      kind: 'case';
      classes: Set<string>;
      severity: SeverityName;
      judgeWrong: boolean;
      correct: boolean;
      derivable: boolean;
      note: string;
    } = null;
let lastPane: 'steps' | 'report' = 'steps';
const SEVERITIES: SeverityName[] = ['minor', 'major', 'critical'];

const messageEl = h('div', { id: 'message', 'aria-live': 'polite' });
const stepsEl = h('div', { class: 'pane', id: 'steps', tabindex: 0, role: 'listbox', 'aria-label': 'Steps' });
const detailEl = h('div', { class: 'pane' }, h('pre', { id: 'step-detail' }));
const reportPane = h('div', { class: 'pane', id: 'report-pane', tabindex: 0, 'aria-label': 'Report and insights' });
const formEl = h('div', { id: 'form' });
const tagsEl = h('div', { id: 'tags' });
const figuresEl = h('section', { id: 'figures' });
const caseEl = h('div', { id: 'case' });

const say = (text: string, error = false) => {
  messageEl.textContent = text;
  messageEl.className = error ? 'error' : '';
};
const tax = (id: string): Taxonomy | undefined => state.taxonomies.find((t) => t.id === id);
const arts = (): FailureArtefact[] => state.run?.artefacts ?? [];
const range = (): [number, number] => [Math.min(cursor, anchor), Math.max(cursor, anchor)];
const sRange = (): [number, number] => [Math.min(sCursor, sAnchor), Math.max(sCursor, sAnchor)];

function renderHeader(): HTMLElement {
  const r = state.run;
  return h(
    'div',
    { class: 'fa-head' },
    h('h1', {}, r ? `${r.model} · ${r.blockId}` : 'Failure Analysis'),
    r ? h('span', { class: 'muted' }, `${r.suite} · run ${r.runId}`) : '',
    r
      ? h(
          'vscode-button',
          {
            id: 'open-timeline',
            secondary: true,
            title: "Open this run's Trajectory Timeline at the selected step to tag there (key o)",
            onclick: () => openInTimeline(),
          },
          'Open in Timeline',
        )
      : '',
    h('span', { class: 'muted', id: 'annotator' }, `annotator ${state.annotator}`),
    h('span', { class: 'muted keys' }, 'l steps · r report · t tag · c verdict · f figures · o open in timeline'),
  );
}

function renderCase(): void {
  const c = state.case;
  const att = state.run?.attached;
  if (!c && att) {
    caseEl.replaceChildren(
      h(
        'div',
        { class: 'fa-case', id: 'case-bar' },
        h(
          'div',
          { class: 'muted', id: 'case-pos' },
          'Failed item attached: tag the steps or report sentences where it went wrong',
        ),
        h('div', { class: 'q', id: 'case-question' }, `${att.ref}: ${att.question}`),
        h('div', { class: 'muted', id: 'case-detail' }, att.detail),
      ),
    );
    return;
  }
  if (!c) {
    caseEl.replaceChildren(
      state.queueDone
        ? h(
            'div',
            { class: 'fa-case', id: 'queue-done' },
            `${state.queueDone.queueName}: nothing left for you (${state.queueDone.done} of ${state.queueDone.total} items done).`,
          )
        : '',
    );
    return;
  }
  caseEl.replaceChildren(
    h(
      'div',
      { class: 'fa-case', id: 'case-bar' },
      h(
        'div',
        { class: 'muted', id: 'case-pos' },
        `${c.kind === 'failure-case' ? 'Failure case' : 'Hallucination check'} ${c.pos + 1} of ${c.total} · ${c.done} done · ${c.model} · ${c.scenario} · ${c.queueName}`,
      ),
      h('div', { class: 'q', id: 'case-question' }, `${c.ref}: ${c.question}`),
      h('div', { class: 'muted' }, c.detail),
      c.mine
        ? h(
            'div',
            { class: 'muted' },
            `Your verdict: ${c.kind === 'failure-case' ? (c.mine.judgeWrong ? 'judge was wrong' : (c.mine.classes ?? []).join(', ')) : `correct ${c.mine.correct ? 'yes' : 'no'}, derivable ${c.mine.derivable ? 'yes' : 'no'}`}`,
          )
        : '',
      h(
        'div',
        { class: 'muted keys' },
        c.kind === 'failure-case'
          ? 'Tag the steps or report sentences where it fails, then c: verdict (classes filled from your tags), Enter: submit and next, x: skip.'
          : 'c: verdict (1 facts correct, 2 derivable from what the agent saw), Enter: submit and next, x: skip.',
      ),
    ),
  );
}

function renderSteps(): void {
  const r = state.run;
  if (!r) {
    stepsEl.replaceChildren(h('p', { class: 'muted' }, 'No run.'));
    return;
  }
  const [a, b] = range();
  stepsEl.replaceChildren(
    h('h2', {}, `Steps (${r.steps.length})`),
    ...r.steps.map((s) => {
      const tags = r.tags.filter((t) => t.kind === 'step' && s.index >= t.from && s.index <= t.to);
      const row = h(
        'div',
        {
          class: `step${s.index >= a && s.index <= b ? ' sel' : ''}${s.index === cursor ? ' cursor' : ''}`,
          role: 'option',
          'data-step': s.index,
          'aria-selected': s.index >= a && s.index <= b ? 'true' : 'false',
        },
        h('span', { class: 'muted' }, String(s.index + 1)),
        s.error ? h('span', { class: 'err' }, '✘') : '',
        // tags first: a long summary is cut at the pane's edge
        ...tags.map((t) =>
          h(
            'span',
            {
              class: 'tagmark',
              title: `${t.annotatorLabel ?? t.annotator}: ${t.classes.join(', ')} (${t.severity})${t.note ? ` — ${t.note}` : ''}`,
            },
            t.classes.map((c) => tax(t.taxonomy)?.classes.find((x) => x.id === c)?.label ?? c).join(', '),
          ),
        ),
        h('span', { title: s.summary }, s.summary),
      );
      row.addEventListener('click', (ev) => {
        cursor = s.index;
        if (!(ev as MouseEvent).shiftKey) anchor = cursor;
        void showStep();
        renderSteps();
      });
      return row;
    }),
  );
  stepsEl.querySelector('.cursor')?.scrollIntoView({ block: 'nearest' });
}

async function showStep(): Promise<void> {
  const r = state.run;
  const pre = detailEl.querySelector('pre')!;
  if (!r || !r.steps.length) {
    pre.textContent = '';
    return;
  }
  try {
    const { text } = await host.rpc.request(GetFailureStepRequest, { runId: r.runId, index: cursor });
    pre.textContent = `Step ${cursor + 1}\n\n${text}`;
  } catch (e) {
    pre.textContent = e instanceof Error ? e.message : String(e);
  }
}

function renderReport(): void {
  const list = arts();
  if (!list.length) {
    reportPane.replaceChildren(h('p', { class: 'muted' }, 'This run has no report or insights.'));
    return;
  }
  artefact = Math.min(artefact, list.length - 1);
  const art = list[artefact]!;
  const select = h(
    'select',
    { id: 'artefact', 'aria-label': 'Text to tag' },
    ...list.map((x, i) => h('option', { value: String(i), selected: i === artefact }, x.title)),
  );
  select.addEventListener('change', () => {
    artefact = Number((select as HTMLSelectElement).value);
    sCursor = sAnchor = 0;
    renderReport();
  });
  const [a, b] = sRange();
  const tags = (state.run?.tags ?? []).filter((t) => t.kind === 'span' && t.artefact === art.name);
  const body = h('div', { id: 'report' });
  let last = 0;
  art.sentences.forEach(([s, e], i) => {
    if (s > last) body.append(art.text.slice(last, s));
    const tagged = tags.filter((t) => t.from < e && t.to > s);
    body.append(
      h(
        'span',
        {
          class: `sent${i >= a && i <= b ? ' sel' : ''}${tagged.length ? ' tagged' : ''}`,
          'data-sentence': i,
          title:
            tagged.map((t) => `${t.annotatorLabel ?? t.annotator}: ${t.classes.join(', ')}`).join('\n') || undefined,
        },
        art.text.slice(s, e),
      ),
    );
    last = e;
  });
  if (last < art.text.length) body.append(art.text.slice(last));
  const note = state.run?.attached?.note;
  reportPane.replaceChildren(
    h('h2', {}, select),
    note ? h('p', { class: 'muted', id: 'attached-note' }, note) : '',
    body,
  );
}

function renderTags(): void {
  const tags = state.run?.tags ?? [];
  if (!tags.length) {
    tagsEl.replaceChildren(h('p', { class: 'muted' }, 'No failure tags on this run yet.'));
    return;
  }
  tagsEl.replaceChildren(
    h(
      'table',
      { class: 'tags', id: 'tag-list' },
      h(
        'tr',
        {},
        h('th', {}, 'Where'),
        h('th', {}, 'Classes'),
        h('th', {}, 'Severity'),
        h('th', {}, 'Annotator'),
        h('th', {}, 'Note'),
      ),
      ...tags.map((t) =>
        h(
          'tr',
          {},
          h(
            'td',
            {},
            t.kind === 'step'
              ? t.from === t.to
                ? `step ${t.from + 1}`
                : `steps ${t.from + 1}–${t.to + 1}`
              : `${t.artefact}: “${(t.quote ?? '').slice(0, 60)}”`,
          ),
          h('td', {}, t.classes.map((c) => tax(t.taxonomy)?.classes.find((x) => x.id === c)?.label ?? c).join(', ')),
          h('td', {}, t.severity),
          h('td', { class: 'tag-annotator' }, t.annotatorLabel ?? t.annotator),
          h('td', {}, t.note ?? ''),
        ),
      ),
    ),
  );
}

function renderForm(): void {
  if (!form) {
    formEl.replaceChildren();
    return;
  }
  if (form.kind === 'tag') {
    const f = form;
    const t = tax(f.taxonomy);
    const where =
      f.target.kind === 'steps'
        ? f.target.from === f.target.to
          ? `step ${f.target.from + 1}`
          : `steps ${f.target.from + 1}–${f.target.to + 1}`
        : `“${arts()
            .find((a) => a.name === (f.target as { artefact: string }).artefact)
            ?.text.slice(f.target.start, f.target.end)
            .slice(0, 80)}”`;
    const sel = h(
      'select',
      { id: 'taxonomy', 'aria-label': 'Taxonomy' },
      ...state.taxonomies.map((x) =>
        h(
          'option',
          { value: x.id, selected: x.id === f.taxonomy },
          `${x.title}${x.origin === 'loupe' ? " — Loupe's own" : x.origin === 'workspace' ? ' — workspace' : ''}`,
        ),
      ),
    );
    sel.addEventListener('change', () => {
      f.taxonomy = (sel as HTMLSelectElement).value;
      f.classes.clear();
      renderForm();
    });
    const note = h('textarea', {
      id: 'tag-note',
      rows: 2,
      placeholder: 'Why (n to write, Ctrl+Enter to save)',
    }) as HTMLTextAreaElement;
    note.value = f.note;
    note.addEventListener('input', () => {
      f.note = note.value;
    });
    formEl.replaceChildren(
      h(
        'div',
        { class: 'form', id: 'tag-form' },
        h(
          'div',
          {},
          h('strong', {}, `Tag ${where}`),
          ' ',
          sel,
          h('span', { class: 'muted' }, t ? ` source: ${t.source}` : ''),
        ),
        ...(t?.classes ?? []).map((c, i) => {
          const box = h('input', {
            type: 'checkbox',
            'data-class': c.id,
            checked: f.classes.has(c.id),
          }) as HTMLInputElement;
          box.addEventListener('change', () => {
            if (box.checked) f.classes.add(c.id);
            else f.classes.delete(c.id);
            renderForm();
          });
          return h(
            'label',
            {},
            box,
            h('span', { class: 'key' }, i < 9 ? String(i + 1) : ''),
            `${c.group ? `${c.group} › ` : ''}${c.label}`,
            h('div', { class: 'def' }, c.definition),
          );
        }),
        h(
          'div',
          { id: 'severity' },
          'Severity (s): ',
          ...SEVERITIES.map((s) => h('strong', { class: s === f.severity ? '' : 'muted' }, ` ${s} `)),
        ),
        note,
        h(
          'div',
          { class: 'muted keys', id: 'tag-summary' },
          `${f.classes.size ? [...f.classes].join(', ') : 'no class yet'} · ${f.severity} · Enter: save · Esc: cancel`,
        ),
      ),
    );
    return;
  }
  const f = form;
  const c = state.case!;
  const note = h('textarea', {
    id: 'case-note',
    rows: 2,
    placeholder: 'Why (n to write, Ctrl+Enter to submit)',
  }) as HTMLTextAreaElement;
  note.value = f.note;
  note.addEventListener('input', () => {
    f.note = note.value;
  });
  if (c.kind === 'hallucination-check') {
    formEl.replaceChildren(
      h(
        'div',
        { class: 'form', id: 'case-form' },
        h('strong', {}, 'Hallucination check'),
        h('label', {}, h('span', { class: 'key' }, '1'), `Every fact is correct: ${f.correct ? 'yes' : 'no'}`),
        h(
          'label',
          {},
          h('span', { class: 'key' }, '2'),
          `Every fact is derivable from what the agent saw: ${f.derivable ? 'yes' : 'no'}`,
        ),
        h(
          'div',
          { class: 'muted' },
          `→ ${f.correct && !f.derivable ? 'hallucinated (correct but not derivable, DDR §7)' : 'not hallucinated'}`,
        ),
        note,
        h('div', { class: 'muted keys', id: 'case-summary' }, 'Enter: submit and next · Esc: close'),
      ),
    );
    return;
  }
  const t = tax(c.taxonomy);
  formEl.replaceChildren(
    h(
      'div',
      { class: 'form', id: 'case-form' },
      h('strong', {}, `Why did ${c.ref} fail? (${t?.title ?? c.taxonomy})`),
      ...(t?.classes ?? []).map((cl, i) =>
        h(
          'label',
          {},
          h('input', { type: 'checkbox', checked: f.classes.has(cl.id), disabled: true }),
          h('span', { class: 'key' }, String(i + 1)),
          `${cl.group ? `${cl.group} › ` : ''}${cl.label}`,
        ),
      ),
      h(
        'label',
        {},
        h('span', { class: 'key' }, 'w'),
        `The judge was wrong (not a failure): ${f.judgeWrong ? 'yes' : 'no'}`,
      ),
      h(
        'div',
        {},
        'Severity (s): ',
        ...SEVERITIES.map((s) => h('strong', { class: s === f.severity ? '' : 'muted' }, ` ${s} `)),
      ),
      note,
      h(
        'div',
        { class: 'muted keys', id: 'case-summary' },
        `${f.judgeWrong ? 'judge wrong' : f.classes.size ? [...f.classes].join(', ') : 'no class yet'} · Enter: submit and next · Esc: close`,
      ),
    ),
  );
}

function openTagForm(): void {
  if (!state.run) return;
  let target:
    { kind: 'steps'; from: number; to: number } | { kind: 'span'; artefact: string; start: number; end: number };
  if (lastPane === 'report' && arts().length) {
    const art = arts()[artefact]!;
    const sel = window.getSelection();
    const body = document.getElementById('report');
    if (sel && !sel.isCollapsed && body && body.contains(sel.anchorNode) && body.contains(sel.focusNode)) {
      const offset = (node: Node, off: number) => {
        const r = document.createRange();
        r.setStart(body, 0);
        r.setEnd(node, off);
        return r.toString().length;
      };
      const x = offset(sel.anchorNode!, sel.anchorOffset);
      const y = offset(sel.focusNode!, sel.focusOffset);
      target = { kind: 'span', artefact: art.name, start: Math.min(x, y), end: Math.max(x, y) };
    } else {
      const [a, b] = sRange();
      target = { kind: 'span', artefact: art.name, start: art.sentences[a]![0], end: art.sentences[b]![1] };
    }
  } else {
    const [a, b] = range();
    target = { kind: 'steps', from: a, to: b };
  }
  const taxonomy = state.case?.taxonomy || state.run.taxonomy;
  form = { kind: 'tag', target, taxonomy, classes: new Set(), severity: 'major', note: '' };
  renderForm();
  formEl.querySelector<HTMLElement>('#tag-form')?.setAttribute('tabindex', '0');
  formEl.querySelector<HTMLElement>('#tag-form')?.focus();
}

function openCaseForm(): void {
  const c = state.case;
  if (!c) return;
  const fromTags = new Set(
    (state.run?.tags ?? [])
      .filter((t) => t.taxonomy === c.taxonomy && t.annotator === state.annotator)
      .flatMap((t) => t.classes),
  );
  form = {
    kind: 'case',
    classes: new Set(c.mine?.classes ?? fromTags),
    severity: c.mine?.severity ?? 'major',
    judgeWrong: !!c.mine?.judgeWrong,
    correct: c.mine?.correct ?? true,
    derivable: c.mine?.derivable ?? true,
    note: c.mine?.note ?? '',
  };
  renderForm();
  formEl.querySelector<HTMLElement>('#case-form')?.setAttribute('tabindex', '0');
  formEl.querySelector<HTMLElement>('#case-form')?.focus();
}

async function save(): Promise<void> {
  if (!form) return;
  try {
    if (form.kind === 'tag') {
      if (!form.classes.size) {
        say('Choose at least one class (its number key).', true);
        return;
      }
      const next = await host.rpc.request(TagFailureRequest, {
        target: form.target,
        taxonomy: form.taxonomy,
        classes: [...form.classes],
        severity: form.severity,
        note: form.note,
      });
      form = null;
      apply(next);
    } else {
      const c = state.case!;
      const next = await host.rpc.request(SubmitCaseRequest, {
        itemId: c.itemId,
        classes: [...form.classes],
        severity: form.severity,
        judgeWrong: form.judgeWrong,
        correct: form.correct,
        derivable: form.derivable,
        note: form.note,
      });
      form = null;
      cursor = anchor = 0;
      apply(next);
    }
  } catch (e) {
    say(e instanceof Error ? e.message : String(e), true);
  }
}

function formKey(ev: KeyboardEvent): boolean {
  if (!form) return false;
  const inNote = (ev.target as HTMLElement).tagName === 'TEXTAREA';
  if (ev.key === 'Escape') {
    form = null;
    renderForm();
    (lastPane === 'report' ? reportPane : stepsEl).focus();
    return true;
  }
  if (ev.key === 'Enter' && (!inNote || ev.ctrlKey || ev.metaKey)) {
    void save();
    return true;
  }
  if (inNote) return false;
  if (ev.key === 'n') {
    formEl.querySelector<HTMLTextAreaElement>('textarea')?.focus();
    return true;
  }
  if (ev.key === 's') {
    form.severity = SEVERITIES[(SEVERITIES.indexOf(form.severity) + 1) % 3]!;
    renderForm();
    focusForm();
    return true;
  }
  if (form.kind === 'case' && state.case?.kind === 'hallucination-check') {
    if (ev.key === '1') form.correct = !form.correct;
    else if (ev.key === '2') form.derivable = !form.derivable;
    else return false;
    renderForm();
    focusForm();
    return true;
  }
  if (form.kind === 'case' && ev.key === 'w') {
    form.judgeWrong = !form.judgeWrong;
    renderForm();
    focusForm();
    return true;
  }
  if (/^[1-9]$/.test(ev.key)) {
    const t = tax(form.kind === 'tag' ? form.taxonomy : state.case!.taxonomy);
    const c = t?.classes[Number(ev.key) - 1];
    if (c) {
      if (form.classes.has(c.id)) form.classes.delete(c.id);
      else form.classes.add(c.id);
      renderForm();
      focusForm();
    }
    return true;
  }
  return false;
}

function focusForm(): void {
  const f = formEl.querySelector<HTMLElement>('.form');
  f?.setAttribute('tabindex', '0');
  f?.focus();
}

function openInTimeline(): void {
  void host.rpc
    .request(OpenInTimelineRequest, { step: cursor })
    .catch((e: unknown) => say(e instanceof Error ? e.message : String(e), true));
}

async function showFigures(): Promise<void> {
  try {
    apply(await host.rpc.request(ShowFailureFiguresRequest, {}));
  } catch (e) {
    say(e instanceof Error ? e.message : String(e), true);
  }
}

async function renderFigures(): Promise<void> {
  const f = state.figures;
  if (!f) {
    figuresEl.replaceChildren();
    return;
  }
  const c = f.counts;
  const fig8 = h('div', { class: 'chart', id: 'fig8-chart' });
  const t6 = h('div', { class: 'chart', id: 'table6-chart' });
  figuresEl.replaceChildren(
    h('h2', {}, 'Figures from expert annotations'),
    h(
      'p',
      { class: 'muted', id: 'figure-counts' },
      `Failure cases resolved: ${c.casesResolved} of ${c.cases} · hallucination checks: ${c.checksResolved} of ${c.checks} · tags: ${c.tagsResolved} of ${c.tags}.`,
    ),
    f.fig8Rows
      ? fig8
      : h('p', { class: 'muted' }, 'No resolved failure case yet: work the failure queue (Loupe: Open Failure Queue).'),
    f.table6Rows ? t6 : h('p', { class: 'muted' }, 'No resolved hallucination check yet.'),
  );
  try {
    const { renderVegaLite } = await import('./shared/vega.ts');
    if (f.fig8Rows) await renderVegaLite(fig8, f.fig8 as TopLevelSpec);
    if (f.table6Rows) await renderVegaLite(t6, f.table6 as TopLevelSpec);
  } catch (e) {
    figuresEl.append(h('p', { class: 'error' }, `Chart failed: ${e instanceof Error ? e.message : String(e)}`));
  }
}

function onKey(ev: KeyboardEvent): void {
  if (formKey(ev)) {
    ev.preventDefault();
    return;
  }
  const t = ev.target as HTMLElement;
  if (t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.tagName === 'INPUT') return;
  const r = state.run;
  let handled = true;
  if (ev.key === 'l') {
    stepsEl.focus();
    lastPane = 'steps';
  } else if (ev.key === 'r') {
    reportPane.focus();
    lastPane = 'report';
  } else if (ev.key === 't') openTagForm();
  else if (ev.key === 'c') openCaseForm();
  else if (ev.key === 'x' && state.case) {
    void host.rpc
      .request(SkipCaseRequest, { itemId: state.case.itemId })
      .then(apply, (e: unknown) => say(String(e), true));
  } else if (ev.key === 'f') void showFigures();
  else if (ev.key === 'o' && r) openInTimeline();
  else if (ev.key === 'Enter' && state.case && !form) openCaseForm();
  else if (
    r &&
    (ev.key === 'ArrowDown' ||
      ev.key === 'j' ||
      ev.key === 'J' ||
      ev.key === 'ArrowUp' ||
      ev.key === 'k' ||
      ev.key === 'K')
  ) {
    const down = ev.key === 'ArrowDown' || ev.key === 'j' || ev.key === 'J';
    const extend = ev.shiftKey;
    if (lastPane === 'report' && arts().length) {
      const n = arts()[artefact]!.sentences.length;
      sCursor = Math.max(0, Math.min(n - 1, sCursor + (down ? 1 : -1)));
      if (!extend) sAnchor = sCursor;
      renderReport();
      reportPane.querySelector(`[data-sentence="${sCursor}"]`)?.scrollIntoView({ block: 'nearest' });
    } else {
      cursor = Math.max(0, Math.min(r.steps.length - 1, cursor + (down ? 1 : -1)));
      if (!extend) anchor = cursor;
      renderSteps();
      void showStep();
    }
  } else handled = false;
  if (handled) ev.preventDefault();
}

function apply(s: FailuresState): void {
  const runChanged = s.run?.runId !== state?.run?.runId;
  state = s;
  if (runChanged) {
    cursor = anchor = s.run?.focusStep ?? 0;
    sCursor = sAnchor = 0;
    // an attached item opens the report pane on its own text (a LongDA query's answer), else the first
    artefact = s.run?.focusArtefact ?? 0;
  }
  app.replaceChildren(
    renderHeader(),
    messageEl,
    caseEl,
    s.run ? h('div', { class: 'fa-main' }, stepsEl, detailEl, reportPane) : '',
    formEl,
    s.run ? h('h2', {}, 'Tags on this run') : '',
    tagsEl,
    figuresEl,
  );
  if (s.message) {
    say(
      s.message,
      /not|no such|does not|refused|fail|error|cannot/i.test(s.message) && !/^Saved|^Tagged/.test(s.message),
    );
  } else if (s.taxonomyErrors.length) say(`Taxonomy files not loaded: ${s.taxonomyErrors.join(' · ')}`, true);
  else say('');
  renderCase();
  renderSteps();
  renderReport();
  renderTags();
  renderForm();
  void renderFigures();
  if (s.run) void showStep();
  host.setViewState({ panel: 'failures' });
  (lastPane === 'report' && s.run ? reportPane : stepsEl).focus();
}

stepsEl.addEventListener('focus', () => {
  lastPane = 'steps';
});
reportPane.addEventListener('focus', () => {
  lastPane = 'report';
});
document.addEventListener('keydown', onKey);
host.rpc.onNotification(DidChangeStateNotification, ({ state: s }) => apply(s as FailuresState));
ready<FailuresState>(host, 'failures').then(
  (s) => {
    apply(s);
    app.removeAttribute('aria-busy');
    performance.mark('loupe:failures-ready');
  },
  (e: unknown) => {
    app.replaceChildren(h('p', { class: 'error' }, `Could not load: ${e instanceof Error ? e.message : String(e)}`));
  },
);
