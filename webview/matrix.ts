/**
 * The model × question matrix (issue 43): items (rows, with their question) × run profiles (columns), each repeat a
 * dot coloured by its outcome; filters with their counts; profiles toggled on and off; an item's expected value on
 * request (the host refuses it in blind mode); a dot (click, or Enter on the keyboard cursor) opens its run in the
 * Timeline at the answer step. Arrow keys move the cursor dot by dot (see `shared/matrix-nav.ts`). Every name
 * (profile, item, question, answer) is text.
 */
import {
  MatrixExpectedRequest,
  MatrixFilterRequest,
  MatrixOpenDotRequest,
  type MatrixDot,
  type MatrixRowFilter,
  type MatrixView,
  type MatrixViewState,
} from '../src/protocol/matrix.ts';
import { DidChangeStateNotification } from '../src/protocol/webview.ts';
import css from './matrix.css';
import { connectHost, h, ready } from './shared/host.ts';
import { navigateMatrix, type MatrixCursor } from './shared/matrix-nav.ts';
import { adoptCss } from './shared/styles.ts';

const host = connectHost();
const app = document.getElementById('app') as HTMLElement;
adoptCss(css);

const FILTERS: Array<[MatrixRowFilter, string, string]> = [
  ['all', 'All items', 'every item'],
  ['wrong-every-repeat', 'Wrong in every repeat', 'no credit in any scored repeat of the profiles shown'],
  ['disagree', 'Profiles disagree', "the profiles' mean credits on the item differ"],
  ['unscored', 'Unscored', 'a repeat without a complete score (shown grey, never counted)'],
  ['tool-errors', 'Tool errors', 'a repeat whose run had a failed tool call'],
];
const VERDICT_TEXT: Record<MatrixDot['verdict'], string> = {
  right: 'right',
  partial: 'partial credit',
  wrong: 'wrong',
  unanswered: 'unanswered',
  pending: 'judgement pending',
  unscored: 'run not scored',
  missing: "not in the run's score",
};

let state: MatrixViewState = { suites: [] };
let cursor: MatrixCursor | null = null;
let status = '';
const expected = new Map<string, string>();

async function request(filter: MatrixRowFilter, profiles: string[] | null, suite?: string): Promise<void> {
  try {
    state = await host.rpc.request(MatrixFilterRequest, { filter, profiles, ...(suite ? { suite } : {}) });
    cursor = null;
    status = '';
  } catch (e) {
    status = e instanceof Error ? e.message : String(e);
  }
  render();
}

function openDot(d: MatrixDot): void {
  void host.rpc.request(MatrixOpenDotRequest, { runId: d.runId, stepIndex: d.stepIndex }).catch((e: unknown) => {
    status = e instanceof Error ? e.message : String(e);
    render();
  });
}

async function reveal(key: string): Promise<void> {
  try {
    const r = await host.rpc.request(MatrixExpectedRequest, { key });
    expected.set(r.key, r.expected);
    status = '';
  } catch (e) {
    status = e instanceof Error ? e.message : String(e);
  }
  render();
}

function dotTitle(m: MatrixView, col: number, d: MatrixDot): string {
  const parts = [`${m.columns[col]!.label} · repeat ${d.repeat}: ${VERDICT_TEXT[d.verdict]}`];
  if (d.credit !== null) parts.push(`credit ${d.credit.toFixed(2)}`);
  if (d.given) parts.push(`answered ${d.given}`);
  if (d.toolErrors) parts.push(`${d.toolErrors} failed tool call${d.toolErrors === 1 ? '' : 's'}`);
  parts.push(d.stepIndex === null ? 'opens the run' : `opens step ${d.stepIndex + 1}`);
  return parts.join(' · ');
}

function render(): void {
  if (state.matrix) {
    host.setViewState({
      target: { suite: state.matrix.suite, profiles: state.matrix.profiles, filter: state.matrix.filter },
    });
  }
  const m = state.matrix;
  const picker =
    state.suites.length > 1
      ? h(
          'select',
          {
            id: 'suite',
            'aria-label': 'Benchmark',
            onchange: (ev: Event) => void request('all', null, (ev.target as HTMLSelectElement).value),
          },
          ...state.suites.map((s) => h('option', { value: s, selected: s === m?.suite }, s)),
        )
      : undefined;
  const parts: (HTMLElement | undefined)[] = [
    h(
      'header',
      {},
      h('h1', {}, m ? `Model × question: ${m.title}` : 'Model × question matrix'),
      picker,
      state.source ? h('span', { class: 'muted source', title: state.source }, state.source) : undefined,
    ),
  ];
  if (state.message) parts.push(h('p', { class: 'message', id: 'message' }, state.message));
  if (status) parts.push(h('p', { class: 'message', id: 'status', role: 'alert' }, status));
  if (m) parts.push(...matrix(m));
  app.replaceChildren(...parts.filter((p): p is HTMLElement => p !== undefined));
  focusCursor();
}

function matrix(m: MatrixView): HTMLElement[] {
  const out: HTMLElement[] = [];
  out.push(
    h(
      'div',
      { class: 'filters', role: 'toolbar', 'aria-label': 'Filters' },
      ...FILTERS.map(([f, label, help]) =>
        h(
          'button',
          {
            id: `filter-${f}`,
            'aria-pressed': String(m.filter === f),
            title: help,
            onclick: () => void request(f, m.profiles),
          },
          `${label} (${m.counts[f]})`,
        ),
      ),
    ),
  );
  if (m.profiles) {
    out.push(
      h(
        'p',
        { class: 'muted', id: 'narrowed' },
        `Showing ${m.columns.length} of the profiles. `,
        h(
          'a',
          {
            href: '#',
            id: 'all-profiles',
            onclick: (ev: Event) => {
              ev.preventDefault();
              void request(m.filter, null);
            },
          },
          'Show every profile',
        ),
      ),
    );
  }
  out.push(
    h(
      'div',
      { class: 'legend muted' },
      ...(['right', 'partial', 'wrong', 'unanswered', 'pending', 'unscored'] as const).map((v) =>
        h('span', {}, h('span', { class: `dot ${v}` }), VERDICT_TEXT[v]),
      ),
      h('span', {}, h('span', { class: 'dot wrong tool-error' }), 'ring: tool error'),
      h(
        'span',
        {},
        m.blind
          ? 'Blind review is on: expected values are hidden.'
          : 'Press e (or click "expected") to reveal an item\'s expected value.',
      ),
    ),
  );
  if (m.judges.length > 1) {
    out.push(
      h(
        'p',
        { class: 'message' },
        `The scores come from ${m.judges.length} judges or option sets: ${m.judges.join(' | ')}`,
      ),
    );
  }
  for (const b of m.unscoredBlocks) {
    out.push(
      h(
        'p',
        { class: 'muted' },
        `Block ${b.block}: no run scored yet, so its items are unknown (${b.runIds.length} runs).`,
      ),
    );
  }
  const head = h(
    'tr',
    {},
    h('th', {}, `Item (${m.rows.length} of ${m.counts.all})`),
    ...m.columns.map((c) =>
      h(
        'th',
        { title: `${c.runIds.length} runs${c.unscored.length ? `, ${c.unscored.length} unscored` : ''}` },
        h('span', { class: 'label' }, c.label),
        h('span', { class: 'player' }, c.player),
        h('span', { class: 'mean muted' }, c.mean === null ? 'no scored repeat' : `mean ${c.mean.toFixed(3)}`),
        m.columns.length > 1
          ? h(
              'button',
              { class: 'only', title: 'Show only this profile', onclick: () => void request(m.filter, [c.player]) },
              'only',
            )
          : undefined,
      ),
    ),
  );
  const body = h(
    'tbody',
    {},
    ...m.rows.map((r, ri) => {
      const exp = r.expected ?? expected.get(r.key);
      const item = h(
        'td',
        { class: 'item' },
        h('div', { class: 'key' }, r.key),
        h('div', { class: 'question' }, r.question),
        exp !== undefined
          ? h('div', { class: 'expected' }, `expected: ${exp}`)
          : m.blind
            ? undefined
            : h(
                'button',
                {
                  class: 'reveal',
                  title: 'Reveal the expected value (ground truth)',
                  onclick: () => void reveal(r.key),
                },
                'expected',
              ),
      );
      return h(
        'tr',
        { 'data-row': String(ri) },
        item,
        ...r.cells.map((cell, ci) =>
          h(
            'td',
            { class: 'cell' },
            ...cell.map((d, di) =>
              h('button', {
                class: `dot ${d.verdict}${d.toolErrors ? ' tool-error' : ''}`,
                tabindex: '-1',
                'data-pos': `${ri}:${ci}:${di}`,
                'aria-label': dotTitle(m, ci, d),
                title: dotTitle(m, ci, d),
                onclick: () => {
                  cursor = { row: ri, col: ci, dot: di };
                  markCursor();
                  openDot(d);
                },
              }),
            ),
          ),
        ),
      );
    }),
  );
  const table = h(
    'table',
    {
      class: 'matrix',
      id: 'matrix',
      tabindex: '0',
      'aria-label':
        'Model × question matrix: arrow keys move across the dots, Enter opens the run at its answer step, e reveals the expected value',
    },
    h('thead', {}, head),
    body,
  );
  table.addEventListener('keydown', (ev) => onKey(ev, m));
  out.push(table);
  if (!m.rows.length) out.push(h('p', { class: 'muted', id: 'empty' }, 'No item matches this filter.'));
  return out;
}

function onKey(ev: KeyboardEvent, m: MatrixView): void {
  if (ev.key === 'e' && cursor && !m.blind) {
    ev.preventDefault();
    void reveal(m.rows[cursor.row]!.key);
    return;
  }
  const a = navigateMatrix(
    ev.key,
    cursor,
    m.rows.map((r) => r.cells.map((c) => c.length)),
  );
  if (a.kind === 'none') return;
  ev.preventDefault();
  if (a.kind === 'move') {
    cursor = a.to;
    markCursor();
    return;
  }
  openDot(m.rows[a.at.row]!.cells[a.at.col]![a.at.dot]!);
}

function markCursor(): void {
  for (const el of app.querySelectorAll('.cursor')) el.classList.remove('cursor');
  for (const el of app.querySelectorAll('tr.current')) el.classList.remove('current');
  if (!cursor) return;
  const el = app.querySelector(`[data-pos="${cursor.row}:${cursor.col}:${cursor.dot}"]`);
  el?.classList.add('cursor');
  el?.closest('tr')?.classList.add('current');
  el?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
}

function focusCursor(): void {
  markCursor();
  (app.querySelector('#matrix') as HTMLElement | null)?.focus({ preventScroll: true });
}

void (async () => {
  host.rpc.onNotification(DidChangeStateNotification, ({ state: s }) => {
    state = s as MatrixViewState;
    cursor = null;
    expected.clear();
    render();
  });
  state = await ready<MatrixViewState>(host, 'matrix');
  render();
})();
