/**
 * Variables panel (issue 25): a survey's variable catalog as a virtualised table (name, label, file, values), the
 * selected variable's detail (value codes, universe, question, codebook page), "Open codebook page", "Copy as
 * pandas", and question mode (the variables a question needs, best first).
 * Keyboard: `/` focuses the filter, ↑/↓ (or j/k) move in the table, `o` opens the codebook page, `p` copies as
 * pandas, `q` focuses the question box (Enter asks, Escape returns to the catalog), `m` turns on or off "Let the
 * model break the question into concepts" (enabled only when a model profile is configured; its sub-queries are shown).
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import {
  AskQuestionRequest,
  CopyAsPandasRequest,
  OpenCodebookRequest,
  type QuestionAnswer,
  type VariableRow,
  type VariablesState,
} from '../src/protocol/variables.ts';
import { DidChangeStateNotification } from '../src/protocol/webview.ts';
import { connectHost, h, ready } from './shared/host.ts';
import { VirtualList } from './shared/virtual-list.ts';
import { adoptCss } from './shared/styles.ts';

const host = connectHost();
const app = document.getElementById('app') as HTMLElement;
const ROW = 24;
adoptCss(`
body { padding: 0 12px; }
.muted { color: var(--vscode-descriptionForeground); }
.error { color: var(--vscode-errorForeground); }
.vh { display: flex; gap: 12px; align-items: baseline; flex-wrap: wrap; }
.vh h1 { font-size: 1.3em; margin: 8px 0; }
.bar { display: flex; gap: 8px; align-items: center; margin: 6px 0; flex-wrap: wrap; }
input[type=text] { background: var(--vscode-input-background); color: var(--vscode-input-foreground); border: 1px solid var(--vscode-input-border, #555); padding: 3px 6px; }
#filter { width: 260px; }
#question { flex: 1; min-width: 320px; }
.main { display: grid; grid-template-columns: minmax(0, 1.5fr) minmax(240px, 1fr); gap: 10px; }
@media (max-width: 760px) { .main { grid-template-columns: 1fr; } #detail { max-height: none; } }
.thead, .row { display: grid; grid-template-columns: 160px 1fr 90px 1fr; gap: 8px; padding: 0 6px; align-items: center; }
.thead { font-weight: 600; border-bottom: 1px solid var(--vscode-panel-border, rgba(128,128,128,.35)); height: ${ROW}px; }
.row { height: ${ROW}px; white-space: nowrap; cursor: pointer; }
.row > span { overflow: hidden; text-overflow: ellipsis; }
.row.sel { background: var(--vscode-list-activeSelectionBackground); color: var(--vscode-list-activeSelectionForeground); }
.row.undoc .lab { font-style: italic; color: var(--vscode-descriptionForeground); }
.row .why { font-size: 11px; border: 1px solid var(--vscode-panel-border, #888); border-radius: 3px; padding: 0 3px; margin-right: 4px; }
#table { height: 420px; border: 1px solid var(--vscode-panel-border, rgba(128,128,128,.35)); }
#table:focus { outline: 1px solid var(--vscode-focusBorder); }
#detail { border: 1px solid var(--vscode-panel-border, rgba(128,128,128,.35)); padding: 6px 10px; max-height: 444px; overflow: auto; }
#detail h2 { font-size: 1.1em; margin: 4px 0; }
#detail table { border-collapse: collapse; }
#detail td, #detail th { text-align: left; padding: 1px 8px 1px 0; vertical-align: top; }
.mono { font-family: var(--vscode-editor-font-family); }
#concepts, #files, #subqueries { font-size: 12px; margin: 4px 0; }
#use-model-label { display: inline-flex; gap: 4px; align-items: center; }
#use-model-label.off { color: var(--vscode-disabledForeground, var(--vscode-descriptionForeground)); }
#subqueries .sq { font-family: var(--vscode-editor-font-family); border: 1px solid var(--vscode-panel-border, #888); border-radius: 3px; padding: 0 4px; margin-right: 4px; }
#message { min-height: 1.4em; }
.keys { font-size: 11px; }
`);

let state: VariablesState = { status: 'idle', variables: [], problems: [], coverage: { columns: 0, documented: 0 } };
let shown: Array<{ v: VariableRow; why?: string }> = [];
let selected = 0;
let answer: QuestionAnswer | undefined;

const titleEl = h('h1', {}, 'Variables');
const statusEl = h('span', { id: 'status', class: 'muted' });
const filterEl = h('input', {
  id: 'filter',
  type: 'text',
  placeholder: 'Filter: name, label, value…  ( / )',
  'aria-label': 'Filter variables',
});
const questionEl = h('input', {
  id: 'question',
  type: 'text',
  placeholder: 'Ask: which variables does this question need?  ( q, Enter )',
  'aria-label': 'Question',
});
const askBtn = h('vscode-button', { id: 'ask', secondary: true }, 'Find variables');
const clearBtn = h('vscode-button', { id: 'clear', secondary: true }, 'Back to catalog');
const useModelEl = h('input', { id: 'use-model', type: 'checkbox', 'aria-describedby': 'use-model-text' });
const useModelText = h('span', { id: 'use-model-text' }, 'Let the model break the question into concepts');
const useModelLabel = h('label', { id: 'use-model-label', for: 'use-model' }, useModelEl, useModelText);
const subQueriesEl = h('div', { id: 'subqueries' });
const countEl = h('span', { id: 'count', class: 'muted' });
const conceptsEl = h('div', { id: 'concepts', class: 'muted' });
const filesEl = h('div', { id: 'files' });
const tableEl = h('div', { id: 'table', tabindex: 0, role: 'listbox', 'aria-label': 'Variables' });
const detailEl = h('div', { id: 'detail', 'aria-live': 'polite' });
const messageEl = h('div', { id: 'message', 'aria-live': 'polite' });
const problemsEl = h('details', { id: 'problems' });

const say = (text: string, error = false) => {
  messageEl.textContent = text;
  messageEl.className = error ? 'error' : '';
};
const message = (e: unknown) => (e instanceof Error ? e.message : String(e)).replace(/^Error: /, '');
const valuesText = (v: VariableRow) => v.values.map((x) => `${x.code}=${x.label}`).join('; ');

const list = new VirtualList<{ v: VariableRow; why?: string }>({
  container: tableEl,
  rowHeight: ROW,
  renderRow: ({ v, why }, i) => {
    const row = h(
      'div',
      {
        class: `row${i === selected ? ' sel' : ''}${v.documented ? '' : ' undoc'}`,
        role: 'option',
        'aria-selected': i === selected ? 'true' : 'false',
        'data-name': v.name,
      },
      h('span', { class: 'mono' }, why ? h('span', { class: 'why' }, why) : '', v.name),
      h(
        'span',
        { class: 'lab', title: v.label ?? '' },
        v.label ?? (v.dataLabel ? `undocumented (data label: ${v.dataLabel})` : 'undocumented'),
      ),
      h('span', { class: 'mono' }, v.file),
      h('span', { class: 'muted', title: valuesText(v) }, valuesText(v)),
    );
    row.addEventListener('click', () => {
      select(i);
      tableEl.focus();
    });
    return row;
  },
});

function matches(v: VariableRow, terms: string[]): boolean {
  if (!terms.length) return true;
  const hay = [
    v.name,
    v.label ?? '',
    v.file,
    v.universe ?? '',
    v.text ?? '',
    v.dataLabel ?? '',
    ...v.values.map((x) => x.label),
  ]
    .join('\u0001')
    .toLowerCase();
  return terms.every((t) => hay.includes(t));
}

function refilter(): void {
  const terms = filterEl.value.toLowerCase().split(/\s+/).filter(Boolean);
  if (answer) {
    const by = new Map(state.variables.map((v) => [`${v.file}\u0000${v.name}`, v]));
    shown = answer.variables
      .map((a) => ({ v: by.get(`${a.file}\u0000${a.name}`)!, why: a.why }))
      .filter((x) => x.v && matches(x.v, terms));
  } else {
    const exact = filterEl.value.trim().toUpperCase();
    shown = state.variables.filter((v) => matches(v, terms)).map((v) => ({ v }));
    if (exact) shown.sort((a, b) => Number(b.v.name === exact) - Number(a.v.name === exact));
  }
  selected = Math.min(selected, Math.max(0, shown.length - 1));
  countEl.textContent = answer
    ? `${shown.length} candidate variables`
    : `${shown.length} of ${state.variables.length} variables`;
  list.setItems(shown, false);
  renderDetail();
}

interface ViewState {
  target?: VariablesState['target'];
  filter?: string;
  selected?: { name: string; file: string };
}

/** Saved so a hidden panel comes back as it was (VS Code re-creates hidden webviews). */
function saveView(): void {
  const cur = shown[selected];
  host.setViewState({
    target: state.target,
    filter: filterEl.value,
    selected: cur ? { name: cur.v.name, file: cur.v.file } : undefined,
  } satisfies ViewState);
}

function select(i: number): void {
  if (!shown.length) return;
  selected = Math.max(0, Math.min(shown.length - 1, i));
  saveView();
  list.scrollToIndex(selected);
  list.refresh();
  renderDetail();
}

function renderDetail(): void {
  const cur = shown[selected];
  if (!cur) {
    detailEl.replaceChildren(h('p', { class: 'muted' }, state.status === 'ready' ? 'No variable matches.' : ''));
    return;
  }
  const v = cur.v;
  const openBtn = h('vscode-button', { id: 'open-codebook', disabled: !v.doc }, 'Open codebook page (o)');
  const copyBtn = h(
    'vscode-button',
    { id: 'copy-pandas', secondary: true, disabled: !v.dataPath },
    'Copy as pandas (p)',
  );
  openBtn.addEventListener('click', () => void openCodebook());
  copyBtn.addEventListener('click', () => void copyAsPandas());
  detailEl.replaceChildren(
    h('h2', { class: 'mono' }, `${v.name}`),
    h('div', {}, v.label ?? 'Undocumented: this column is in the data file but no codebook defines it.'),
    h(
      'table',
      {},
      h(
        'tr',
        {},
        h('th', {}, 'Data file'),
        h('td', { class: 'mono' }, v.dataPath ?? `${v.file} (no data file in this folder)`),
      ),
      h('tr', {}, h('th', {}, 'Defined in'), h('td', { id: 'defined-in' }, v.doc ? `${v.doc} — ${v.page}` : '—')),
      v.universe ? h('tr', {}, h('th', {}, 'Universe'), h('td', {}, v.universe)) : null,
      v.text && v.text !== v.label ? h('tr', {}, h('th', {}, 'Question'), h('td', {}, v.text)) : null,
      v.dataLabel ? h('tr', {}, h('th', {}, 'Data label'), h('td', {}, v.dataLabel)) : null,
    ),
    h('div', { class: 'bar' }, openBtn, copyBtn),
    v.values.length
      ? h(
          'table',
          { id: 'codes' },
          h('tr', {}, h('th', {}, 'Code'), h('th', {}, 'Label')),
          ...v.values.map((x) => h('tr', {}, h('td', { class: 'mono' }, x.code), h('td', {}, x.label))),
        )
      : h('p', { class: 'muted' }, 'No value codes listed.'),
  );
}

async function openCodebook(): Promise<void> {
  const cur = shown[selected];
  if (!cur?.v.doc) return say(`${cur?.v.name ?? 'This variable'} has no codebook page.`, true);
  try {
    await host.rpc.request(OpenCodebookRequest, { name: cur.v.name, file: cur.v.file });
    say(`Opened ${cur.v.doc} at ${cur.v.page}.`);
  } catch (e) {
    say(message(e), true);
  }
}

async function copyAsPandas(): Promise<void> {
  const cur = shown[selected];
  if (!cur) return;
  try {
    const r = await host.rpc.request(CopyAsPandasRequest, { name: cur.v.name, file: cur.v.file });
    say(
      r.where === 'notebook'
        ? `Inserted a cell reading ${cur.v.name} into the notebook.`
        : `No notebook is open: the snippet reading ${cur.v.name} is on the clipboard.`,
    );
  } catch (e) {
    say(message(e), true);
  }
}

async function ask(): Promise<void> {
  const q = questionEl.value.trim();
  if (!q) return say('Type a question first.', true);
  say('Looking for the variables…');
  try {
    const useModel = useModelEl.checked && !useModelEl.disabled;
    if (useModel) say('The model is breaking the question into concepts…');
    answer = await host.rpc.request(AskQuestionRequest, { question: q, ...(useModel ? { useModel: true } : {}) });
    filterEl.value = ''; // the question is the new search; the filter then narrows its candidates
    conceptsEl.textContent = `Groupings: ${answer.concepts.groupings.join(', ') || 'none'} · measures: ${answer.concepts.measures.join(' ') || 'none'}${answer.concepts.family ? ` · design data: ${answer.concepts.family}` : ''} · ${answer.elapsedMs} ms`;
    const d = answer.decomposition;
    subQueriesEl.replaceChildren(
      ...(d
        ? [
            h(
              'span',
              { class: 'muted' },
              `Model ${d.model} searched ${d.subQueries.length} sub-quer${d.subQueries.length === 1 ? 'y' : 'ies'}: `,
            ),
            ...(d.subQueries.length
              ? d.subQueries.map((x) => h('span', { class: 'sq' }, x))
              : [h('span', { class: 'muted' }, 'none')]),
            h(
              'span',
              { class: 'muted' },
              ` · groupings: ${d.groupings.join(', ') || 'none'} · design: ${d.design.join(', ') || 'none'}`,
            ),
          ]
        : []),
    );
    filesEl.replaceChildren(
      h('span', { class: 'muted' }, 'Files to read: '),
      ...answer.files
        .slice(0, 6)
        .map((f, i) =>
          h('span', { class: 'mono', title: f.from.join(', ') }, `${i + 1}. ${f.file.split('/').pop()}  `),
        ),
    );
    selected = 0;
    refilter();
    say(
      `${answer.variables.length} candidate variables for the question${d ? `, with ${d.model}'s sub-queries` : ''}.`,
    );
    tableEl.focus();
  } catch (e) {
    say(message(e), true);
  }
}

function clearAnswer(): void {
  answer = undefined;
  conceptsEl.textContent = '';
  subQueriesEl.replaceChildren();
  filesEl.replaceChildren();
  selected = 0;
  refilter();
  say('');
}

/** The "Let the model break the question into concepts" toggle: enabled only when a model profile is configured. */
function renderDecomposer(): void {
  const d = state.decomposer;
  const ok = !!d && 'profile' in d;
  useModelEl.disabled = !ok;
  if (!ok) useModelEl.checked = false;
  useModelLabel.className = ok ? '' : 'off';
  useModelText.textContent = ok
    ? `Let the model break the question into concepts (profile ${d.profile}, ${d.model}) ( m )`
    : 'Let a model break the question into concepts (needs a model profile)';
  useModelLabel.title = ok
    ? "The model lists the measures, population, groupings and design the question needs; its measures and population are searched besides the question's own words."
    : d && 'unavailable' in d
      ? d.unavailable
      : 'No model profile is configured: add one to the setting loupe.models.';
}

function renderHeader(): void {
  titleEl.textContent = state.target ? `Variables · ${state.target.title}` : 'Variables';
  const cov = state.coverage.columns
    ? ` · data columns documented ${state.coverage.documented}/${state.coverage.columns}`
    : '';
  statusEl.textContent =
    state.status === 'building'
      ? (state.message ?? 'Building the catalog…')
      : state.status === 'error'
        ? `Could not build the catalog: ${state.message ?? ''}`
        : `${state.variables.length} variables${cov}`;
  statusEl.className = state.status === 'error' ? 'error' : 'muted';
  problemsEl.replaceChildren();
  problemsEl.hidden = !state.problems.length;
  if (state.problems.length) {
    problemsEl.append(
      h('summary', {}, `${state.problems.length} file(s) skipped`),
      ...state.problems.map((p) => h('div', { class: 'muted' }, `${p.file}: ${p.reason}`)),
    );
  }
}

function applyState(s: VariablesState): void {
  const saved = host.getViewState<ViewState>();
  const sameTarget =
    saved?.target && s.target && saved.target.root === s.target.root && saved.target.survey === s.target.survey;
  state = s;
  renderDecomposer();
  if (sameTarget && typeof saved.filter === 'string' && !filterEl.value) filterEl.value = saved.filter;
  renderHeader();
  refilter();
  const want = sameTarget ? saved.selected : undefined;
  const at = want ? shown.findIndex((x) => x.v.name === want.name && x.v.file === want.file) : -1;
  if (at >= 0) select(at);
  else saveView();
}

filterEl.addEventListener('input', () => {
  selected = 0;
  refilter();
  saveView();
});
filterEl.addEventListener('keydown', (ev: KeyboardEvent) => {
  if (ev.key === 'ArrowDown' || ev.key === 'Enter') {
    ev.preventDefault();
    tableEl.focus();
  }
});
questionEl.addEventListener('keydown', (ev: KeyboardEvent) => {
  if (ev.key === 'Enter') {
    ev.preventDefault();
    void ask();
  } else if (ev.key === 'Escape') {
    ev.preventDefault();
    clearAnswer();
    tableEl.focus();
  }
});
askBtn.addEventListener('click', () => void ask());
clearBtn.addEventListener('click', () => clearAnswer());
tableEl.addEventListener('keydown', (ev: KeyboardEvent) => {
  const k = ev.key;
  if (k === 'ArrowDown' || k === 'j') select(selected + 1);
  else if (k === 'ArrowUp' || k === 'k') select(selected - 1);
  else if (k === 'PageDown') select(selected + Math.floor(tableEl.clientHeight / ROW));
  else if (k === 'PageUp') select(selected - Math.floor(tableEl.clientHeight / ROW));
  else if (k === 'Home') select(0);
  else if (k === 'End') select(shown.length - 1);
  else if (k === 'o' || k === 'Enter') void openCodebook();
  else if (k === 'p') void copyAsPandas();
  else if (k === 'Escape' && answer) clearAnswer();
  else return;
  ev.preventDefault();
});
window.addEventListener('keydown', (ev) => {
  const typing = document.activeElement === filterEl || document.activeElement === questionEl;
  if (typing) return;
  if (ev.key === '/') {
    ev.preventDefault();
    filterEl.focus();
  } else if (ev.key === 'q') {
    ev.preventDefault();
    questionEl.focus();
  } else if (ev.key === 'm' && document.activeElement !== useModelEl) {
    ev.preventDefault();
    if (useModelEl.disabled) say(useModelLabel.title, true);
    else {
      useModelEl.checked = !useModelEl.checked;
      say(
        useModelEl.checked
          ? 'The model will break the next question into concepts.'
          : 'Questions are searched without the model.',
      );
    }
  }
});

host.rpc.onNotification(DidChangeStateNotification, ({ state: s }) => applyState(s as VariablesState));

app.replaceChildren(
  h('div', { class: 'vh' }, titleEl, statusEl),
  h('div', { class: 'bar' }, questionEl, askBtn, clearBtn),
  h('div', { class: 'bar' }, useModelLabel),
  conceptsEl,
  subQueriesEl,
  filesEl,
  h('div', { class: 'bar' }, filterEl, countEl),
  h(
    'div',
    { class: 'main' },
    h(
      'div',
      {},
      h(
        'div',
        { class: 'thead' },
        h('span', {}, 'Name'),
        h('span', {}, 'Label'),
        h('span', {}, 'File'),
        h('span', {}, 'Values'),
      ),
      tableEl,
    ),
    detailEl,
  ),
  messageEl,
  problemsEl,
  h(
    'div',
    { class: 'keys muted' },
    'Keys: / filter · q question · m model breaks the question into concepts · ↑/↓ move · o codebook page · p copy as pandas · Esc back to catalog',
  ),
);

ready<VariablesState>(host, 'variables').then(
  (s) => {
    applyState(s);
    app.removeAttribute('aria-busy');
  },
  (e: unknown) => {
    app.replaceChildren(h('p', { class: 'error' }, `Could not load: ${message(e)}`));
  },
);
