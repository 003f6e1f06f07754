/**
 * Documentation Search panel: search a suite's documentation with the agent's own index (keyword / BM25 / LongTA),
 * read the whole unit of a hit, render PDF pages with pdf.js. Keyboard: ↑/↓ select, Enter opens the page
 * (PDF) or the file, `/` focuses the search box.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-multi-select/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import '@vscode-elements/elements/dist/vscode-progress-bar/index.js';
import {
  DidChangeIndexNotification,
  DidPrefillNotification,
  GetPdfRequest,
  ReadUnitRequest,
  RebuildIndexRequest,
  RevealFileRequest,
  SEARCH_MODES,
  SearchDocsRequest,
  type DocFileInfo,
  type DocHit,
  type DocSearchHistoryEntry,
  type DocSearchPrefill,
  type DocSearchState,
  type DocSearchTarget,
  type IndexStatus,
  type SearchMode,
  type UnitContent,
} from '../src/protocol/docsearch.ts';
import { DidChangeStateNotification } from '../src/protocol/webview.ts';
import css from './docsearch.css';
import { connectHost, h, ready } from './shared/host.ts';
import { focusSnippet, highlight } from './shared/highlight.ts';
import { formatScore, navigate, pageOfUnit } from './shared/keynav.ts';
import { adoptCss } from './shared/styles.ts';

interface ViewState {
  /** Saved so the host can restore the panel after a reload (see DocSearchPanel.registerSerializer). */
  target?: DocSearchTarget;
  query: string;
  mode: SearchMode;
  files: string[];
  selected?: { file: string; unit: string };
}

const host = connectHost();
const app = document.getElementById('app') as HTMLElement;
adoptCss(css);

let target: DocSearchTarget | undefined;
let files: DocFileInfo[] = [];
let index: IndexStatus = { state: 'idle', done: 0, total: 0, skipped: [] };
let history: DocSearchHistoryEntry[] = [];
let view: ViewState = { query: '', mode: 'bm25', files: [] };
let hits: DocHit[] = [];
let selected = -1;
let pendingSelect: { file: string; unit: string } | undefined;
let searchSeq = 0;
let unitSeq = 0;
let searchTimer: ReturnType<typeof setTimeout> | undefined;
let lastElapsed: number | undefined;

// Static skeleton; the parts below are re-rendered as data arrives.
const titleEl = h('span', { class: 'target', id: 'target-title' });
const filesBadge = h('vscode-badge', { id: 'files-badge' });
const statusEl = h('div', { class: 'index-status', id: 'index-status', role: 'status' });
const queryEl = h('vscode-textfield', {
  id: 'query',
  placeholder: 'Search the documentation (variable names, phrases, questions)…',
  'aria-label': 'Query',
}) as HTMLElement & { value: string };
const modeEl = h('vscode-single-select', { id: 'mode', 'aria-label': 'Search mode' }) as HTMLElement & {
  value: string;
};
for (const m of SEARCH_MODES) {
  modeEl.append(h('vscode-option', { value: m.mode, description: modeDescription(m.mode) }, m.label));
}
const filesEl = h('vscode-multi-select', {
  id: 'files',
  combobox: true,
  'aria-label': 'Filter by file',
  title: 'Only search these files (none selected: all files)',
}) as HTMLElement & { value: string[] };
const searchBtn = h('vscode-button', { id: 'search' }, 'Search');
const historyEl = h('section', { id: 'history', class: 'history', hidden: true });
const summaryEl = h('div', { class: 'summary muted', id: 'summary' });
const resultsEl = h('div', {
  id: 'results',
  class: 'results',
  role: 'listbox',
  tabindex: 0,
  'aria-label': 'Search results',
});
const detailEl = h('div', { id: 'detail', class: 'detail-pane', 'aria-live': 'polite' });

app.replaceChildren(
  h('header', {}, h('h1', {}, 'Documentation Search'), titleEl, filesBadge),
  statusEl,
  h(
    'div',
    { class: 'searchbar' },
    queryEl,
    modeEl,
    h('label', { class: 'files-label muted', for: 'files' }, 'In files'),
    filesEl,
    searchBtn,
  ),
  historyEl,
  summaryEl,
  h('div', { class: 'split' }, resultsEl, detailEl),
);

function modeDescription(m: SearchMode): string {
  if (m === 'keyword') return "Exact, case-insensitive text (the agent's search_doc)";
  if (m === 'longta') return "LongTA's retriever: whitespace tokens, case-sensitive, 500/100-char chunks";
  return 'Loupe BM25: case-insensitive, variable names kept whole';
}

function saveView(): void {
  host.setViewState(view);
}

function renderHeader(): void {
  titleEl.textContent = target ? target.title : 'No documentation selected';
  titleEl.title = target?.root ?? '';
  filesBadge.textContent = `${files.length} files`;
}

function renderStatus(): void {
  const parts: (Node | string)[] = [];
  if (index.state === 'building') {
    const bar = h('vscode-progress-bar', {
      id: 'index-progress',
      max: Math.max(1, index.total),
      value: index.done,
      'aria-label': 'Index build progress',
    });
    parts.push(
      bar,
      h('span', {}, `Indexing ${index.done} / ${index.total} files${index.message ? ` · ${index.message}` : ''}`),
    );
  } else if (index.state === 'error') {
    parts.push(
      h('span', { class: 'error' }, `Index failed: ${index.message ?? 'unknown error'}`),
      rebuildButton('Retry'),
    );
  } else if (index.state === 'ready') {
    const units = files.reduce((n, f) => n + f.units, 0);
    parts.push(h('span', { class: 'muted' }, `Index ready: ${files.length} files, ${units.toLocaleString()} units.`));
    parts.push(rebuildButton('Rebuild'));
  } else {
    parts.push(
      h(
        'span',
        { class: 'muted' },
        target
          ? 'Index not built yet.'
          : 'Open this panel from the Benchmarks view or the command "Loupe: Search Documentation".',
      ),
    );
  }
  if (index.skipped.length) {
    parts.push(
      h(
        'details',
        { class: 'skipped', id: 'skipped' },
        h('summary', {}, `${index.skipped.length} file${index.skipped.length === 1 ? '' : 's'} skipped`),
        h('ul', {}, ...index.skipped.map((s) => h('li', {}, h('code', {}, s.file), ' — ', s.reason))),
      ),
    );
  }
  statusEl.replaceChildren(...parts);
}

function rebuildButton(label: string): HTMLElement {
  const b = h('vscode-button', { secondary: true, class: 'small' }, label);
  b.addEventListener('click', () => void host.rpc.request(RebuildIndexRequest, {}));
  return b;
}

function renderFileOptions(): void {
  const chosen = new Set(view.files);
  filesEl.replaceChildren(
    ...files.map((f) =>
      h(
        'vscode-option',
        { value: f.file, selected: chosen.has(f.file), description: `${f.kind} · ${f.units} units` },
        f.file,
      ),
    ),
  );
  // The element reads its options asynchronously; set the value after it has seen them.
  queueMicrotask(() => (filesEl.value = view.files.filter((f) => files.some((x) => x.file === f))));
}

function renderHistory(): void {
  historyEl.hidden = history.length === 0;
  if (!history.length) return;
  historyEl.replaceChildren(
    h('h2', {}, 'Searches'),
    h(
      'ol',
      { class: 'history-list' },
      ...history.map((e, i) => {
        const li = h(
          'li',
          {},
          h('a', { href: '#', 'data-history': i }, e.label),
          ' ',
          h('code', {}, e.query),
          ' ',
          h('span', { class: 'muted' }, e.mode),
          e.opened?.length
            ? h('span', { class: 'muted' }, ` · opened ${e.opened.map((o) => `${o.file} ${o.unit}`).join(', ')}`)
            : undefined,
        );
        li.querySelector('a')?.addEventListener('click', (ev) => {
          ev.preventDefault();
          applyPrefill({ query: e.query, mode: e.mode, files: e.files, select: e.opened?.[0] });
        });
        return li;
      }),
    ),
  );
}

/**
 * A path cut in the middle when it does not fit (issue 42): the folder part shrinks with an ellipsis at its end, the
 * file name never does; the whole path is the tooltip.
 */
function pathParts(path: string): HTMLElement[] {
  const slash = path.lastIndexOf('/');
  return [
    h('span', { class: 'dir' }, slash >= 0 ? path.slice(0, slash + 1) : ''),
    h('span', { class: 'base' }, path.slice(slash + 1)),
  ];
}
function pathLabel(path: string, cls: string): HTMLElement {
  return h('span', { class: `${cls} path`, title: path }, ...pathParts(path));
}

function renderResults(): void {
  if (!hits.length) {
    resultsEl.replaceChildren(
      h('p', { class: 'muted empty' }, view.query.trim() ? 'No matches.' : 'Type a query and press Enter.'),
    );
    summaryEl.textContent = '';
    return;
  }
  summaryEl.textContent =
    `${hits.length} result${hits.length === 1 ? '' : 's'} · ${SEARCH_MODES.find((m) => m.mode === view.mode)?.label ?? view.mode}` +
    (lastElapsed !== undefined ? ` · ${lastElapsed.toFixed(1)} ms` : '');
  resultsEl.replaceChildren(
    ...hits.map((hit, i) => {
      const snippet = focusSnippet(hit.snippet, view.query, view.mode);
      const row = h(
        'div',
        {
          class: 'hit',
          role: 'option',
          id: `hit-${i}`,
          'data-index': i,
          'aria-selected': i === selected ? 'true' : 'false',
        },
        h(
          'div',
          { class: 'hit-head' },
          pathLabel(hit.file, 'hit-file'),
          h('span', { class: 'hit-unit' }, hit.unit),
          h('span', { class: 'hit-score num', title: 'Score' }, formatScore(hit.score)),
        ),
        h('div', { class: 'hit-snippet' }, ...segmentsToNodes(snippet, view.query, view.mode)),
        ...(hit.alsoIn?.length
          ? [
              h(
                'div',
                { class: 'hit-also muted', title: hit.alsoIn.map((a) => `${a.file} · ${a.unit}`).join('\n') },
                `Same text also in ${hit.alsoIn.length} other place${hit.alsoIn.length === 1 ? '' : 's'}: ${hit.alsoIn
                  .slice(0, 3)
                  .map((a) => a.file.split('/').pop())
                  .join(', ')}${hit.alsoIn.length > 3 ? ', …' : ''}`,
              ),
            ]
          : []),
      );
      row.addEventListener('click', () => select(i, true));
      row.addEventListener('dblclick', () => open(i));
      return row;
    }),
  );
  resultsEl.setAttribute('aria-activedescendant', selected >= 0 ? `hit-${selected}` : '');
}

function segmentsToNodes(text: string, query: string, mode: SearchMode, primary?: [number, number]): Node[] {
  return highlight(text, query, mode, primary).map((s) => {
    if (!s.mark && !s.primary) return document.createTextNode(s.text);
    const el = h(s.mark ? 'mark' : 'span', { class: s.primary ? 'primary' : undefined }, s.text);
    return el;
  });
}

function markSelected(): void {
  for (const el of resultsEl.querySelectorAll<HTMLElement>('.hit')) {
    el.setAttribute('aria-selected', Number(el.dataset.index) === selected ? 'true' : 'false');
  }
  resultsEl.setAttribute('aria-activedescendant', selected >= 0 ? `hit-${selected}` : '');
  resultsEl.querySelector<HTMLElement>(`#hit-${selected}`)?.scrollIntoView({ block: 'nearest' });
}

async function runSearch(): Promise<void> {
  const query = view.query.trim();
  const seq = ++searchSeq;
  if (!query) {
    hits = [];
    selected = -1;
    renderResults();
    return;
  }
  summaryEl.textContent = 'Searching…';
  try {
    const res = await host.rpc.request(SearchDocsRequest, {
      query,
      mode: view.mode,
      files: view.files.length ? view.files : undefined,
      top: 50,
    });
    if (seq !== searchSeq) return;
    hits = res.hits;
    lastElapsed = res.elapsedMs;
    const want = pendingSelect ?? view.selected;
    pendingSelect = undefined;
    const idx = want ? hits.findIndex((x) => x.file === want.file && x.unit === want.unit) : -1;
    selected = idx >= 0 ? idx : hits.length ? 0 : -1;
    renderResults();
    if (selected >= 0) void showUnit(selected);
    else detailEl.replaceChildren();
  } catch (e) {
    if (seq !== searchSeq) return;
    summaryEl.textContent = '';
    resultsEl.replaceChildren(h('p', { class: 'error' }, `Search failed: ${message(e)}`));
  }
}

function scheduleSearch(delay = 250): void {
  if (searchTimer) clearTimeout(searchTimer);
  searchTimer = setTimeout(() => void runSearch(), delay);
}

function select(i: number, focusList = false): void {
  if (i < 0 || i >= hits.length) return;
  selected = i;
  const hit = hits[i] as DocHit;
  view.selected = { file: hit.file, unit: hit.unit };
  saveView();
  markSelected();
  if (focusList) resultsEl.focus();
  void showUnit(i);
}

/** Enter / double-click: render the PDF page, or open the file in an editor. */
function open(i: number): void {
  const hit = hits[i];
  if (!hit) return;
  if (isPdf(hit.file) && pageOfUnit(hit.unit) !== undefined) void showUnit(i, true);
  else void host.rpc.request(RevealFileRequest, { file: hit.file, unit: hit.unit });
}

function isPdf(file: string): boolean {
  return /\.pdf$/i.test(file);
}

async function showUnit(i: number, asPage = false): Promise<void> {
  const hit = hits[i];
  if (!hit) return;
  const seq = ++unitSeq;
  detailEl.setAttribute('aria-busy', 'true');
  let unit: UnitContent;
  try {
    unit = await host.rpc.request(ReadUnitRequest, { file: hit.file, unit: hit.unit });
  } catch (e) {
    if (seq === unitSeq) {
      detailEl.replaceChildren(h('p', { class: 'error' }, `Could not read ${hit.file} ${hit.unit}: ${message(e)}`));
    }
    return;
  }
  if (seq !== unitSeq) return;
  const page = unit.page ?? (isPdf(hit.file) ? pageOfUnit(hit.unit) : undefined);
  const buttons: HTMLElement[] = [];
  if (page !== undefined) {
    const b = h(
      'vscode-button',
      { id: asPage ? 'show-text' : 'open-page', secondary: asPage },
      asPage ? 'Show text' : 'Open page',
    );
    b.addEventListener('click', () => void showUnit(i, !asPage));
    buttons.push(b);
  }
  const reveal = h('vscode-button', { id: 'open-file', secondary: true }, 'Open file');
  reveal.addEventListener('click', () => void host.rpc.request(RevealFileRequest, { file: hit.file, unit: hit.unit }));
  buttons.push(reveal);
  const head = h(
    'div',
    { class: 'detail-head' },
    h(
      'div',
      { class: 'detail-title' },
      h('strong', { id: 'detail-file', class: 'path', title: unit.file }, ...pathParts(unit.file)),
      h('span', { class: 'hit-unit', id: 'detail-unit' }, unit.unit),
    ),
    h('div', { class: 'detail-actions' }, ...buttons),
  );
  if (asPage && page !== undefined) {
    const canvas = h('canvas', { id: 'pdf-canvas', 'aria-label': `${unit.file}, page ${page}` });
    const overlay = h('canvas', { class: 'pdf-overlay', 'aria-hidden': 'true' });
    const info = h('div', { class: 'muted', id: 'pdf-info' }, `Rendering page ${page}…`);
    detailEl.replaceChildren(head, info, h('div', { class: 'pdf-page' }, canvas, overlay));
    try {
      const { openPdf, renderPage } = await import('./shared/pdf-view.ts');
      const doc = await openPdf(hit.file, async () => (await host.rpc.request(GetPdfRequest, { file: hit.file })).data);
      if (seq !== unitSeq) return;
      const width = Math.max(300, detailEl.clientWidth - 24);
      const r = await renderPage(doc, page, canvas, overlay, width, view.query, view.mode);
      if (seq !== unitSeq) return;
      info.textContent = `Page ${r.page} of ${r.pages}${r.marks ? ` · ${r.marks} match${r.marks === 1 ? '' : 'es'} marked` : ''}`;
      detailEl.dataset.rendered = 'pdf';
    } catch (e) {
      if (seq === unitSeq) {
        info.replaceChildren(h('span', { class: 'error' }, `Could not render the page: ${message(e)}`));
      }
    }
  } else {
    const text = h(
      'pre',
      { class: 'unit-text', id: 'unit-text' },
      ...segmentsToNodes(unit.text, view.query, view.mode, [hit.start, hit.end]),
    );
    detailEl.replaceChildren(head, text);
    detailEl.dataset.rendered = 'text';
    text.querySelector('.primary, mark')?.scrollIntoView({ block: 'center' });
  }
  detailEl.removeAttribute('aria-busy');
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function applyPrefill(p: DocSearchPrefill): void {
  view = { target, query: p.query, mode: p.mode ?? view.mode, files: p.files ?? [], selected: p.select };
  pendingSelect = p.select;
  if (p.history) history = p.history;
  queryEl.value = view.query;
  modeEl.value = view.mode;
  renderFileOptions();
  renderHistory();
  saveView();
  void runSearch();
}

function applyState(s: DocSearchState): void {
  if (target && s.target && (target.root !== s.target.root || target.blockId !== s.target.blockId)) {
    // Another target: the old query's file filter and selection do not apply.
    view = { query: view.query, mode: view.mode, files: [] };
    hits = [];
    selected = -1;
    detailEl.replaceChildren();
  }
  target = s.target;
  view.target = target;
  saveView();
  files = s.files;
  index = s.index;
  renderHeader();
  renderStatus();
  renderFileOptions();
  if (s.prefill) {
    applyPrefill(s.prefill);
  } else {
    queryEl.value = view.query;
    modeEl.value = view.mode;
    renderHistory();
    if (view.query) void runSearch();
    else renderResults();
  }
}

// Events
queryEl.addEventListener('input', () => {
  view.query = queryEl.value;
  saveView();
  scheduleSearch();
});
queryEl.addEventListener('keydown', (ev: KeyboardEvent) => {
  if (ev.key === 'Enter') {
    ev.preventDefault();
    scheduleSearch(0);
  } else if (ev.key === 'ArrowDown' && hits.length) {
    ev.preventDefault();
    select(selected < 0 ? 0 : selected, true);
  }
});
modeEl.addEventListener('change', () => {
  view.mode = modeEl.value as SearchMode;
  saveView();
  scheduleSearch(0);
});
filesEl.addEventListener('change', () => {
  view.files = [...filesEl.value];
  saveView();
  scheduleSearch(0);
});
searchBtn.addEventListener('click', () => scheduleSearch(0));
resultsEl.addEventListener('keydown', (ev: KeyboardEvent) => {
  const a = navigate(ev.key, selected, hits.length);
  if (a.kind === 'none') return;
  ev.preventDefault();
  if (a.kind === 'move') select(a.index);
  else open(a.index);
});
window.addEventListener('keydown', (ev) => {
  if (ev.key === '/' && document.activeElement !== queryEl) {
    ev.preventDefault();
    queryEl.focus();
  }
});

host.rpc.onNotification(DidChangeIndexNotification, ({ index: ix, files: fs }) => {
  const becameReady = index.state !== 'ready' && ix.state === 'ready';
  index = ix;
  files = fs;
  renderHeader();
  renderStatus();
  if (becameReady) {
    renderFileOptions();
    if (view.query) void runSearch();
  }
});
host.rpc.onNotification(DidChangeStateNotification, ({ state }) => applyState(state as DocSearchState));
host.rpc.onNotification(DidPrefillNotification, ({ target: t, prefill }) => {
  if (t) {
    target = t;
    renderHeader();
  }
  applyPrefill(prefill);
});

const saved = host.getViewState<ViewState>();
if (saved && typeof saved.query === 'string') view = { ...view, ...saved };

ready<DocSearchState>(host, 'docsearch').then(
  (s) => {
    applyState(s);
    app.removeAttribute('aria-busy');
  },
  (e: unknown) => {
    app.replaceChildren(h('p', { class: 'error' }, `Could not load: ${message(e)}`));
  },
);
