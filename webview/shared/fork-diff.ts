/**
 * The fork diff (issue 43) as DOM: hint, steps after the fork point side by side, code diff, answers and score. Shared
 * by the "Compare Fork with Parent" panel and the review panel (beside the vote). Every string is agent or user text:
 * it reaches the DOM only as text (`h()`).
 */
import type { ForkDiffView } from '../../src/protocol/fork-diff.ts';
import { h } from './host.ts';

const num = (x: number | null): string => (x === null ? '—' : `${Number(x.toFixed(4))}`);

/** Renders the diff; `openStep` (optional) makes step numbers links. */
export function forkDiffElement(v: ForkDiffView, openStep?: (runId: string, step: number) => void): HTMLElement {
  const pName = v.relation === 'parent-fork' ? 'Parent' : 'Fork 1';
  const fName = v.relation === 'parent-fork' ? 'Fork' : 'Fork 2';
  const runLabel = (r: ForkDiffView['parent']) => `${r.model ?? r.agent} · ${r.id} · ${r.status} · ${r.steps} steps`;
  const stepLink = (runId: string, index: number) =>
    openStep
      ? h(
          'a',
          {
            href: '#',
            class: 'fd-step',
            title: "Open this step in the run's timeline",
            onclick: (e: Event) => {
              e.preventDefault();
              openStep(runId, index);
            },
          },
          `step ${index + 1}`,
        )
      : h('span', { class: 'fd-step' }, `step ${index + 1}`);
  const hintList = (hs: ForkDiffView['hints'], who: string) =>
    hs.length
      ? h(
          'ul',
          { class: 'fd-hints' },
          ...hs.map((x) =>
            h(
              'li',
              {},
              h('span', { class: 'muted' }, `${who}: ${x.kind} by ${x.who} — `),
              h('span', { class: 'fd-hint-text' }, x.text),
            ),
          ),
        )
      : null;
  const head = h(
    'div',
    { class: 'fd-head' },
    h('div', { id: 'fd-parent' }, h('strong', {}, `${pName}: `), runLabel(v.parent)),
    h('div', { id: 'fd-fork' }, h('strong', {}, `${fName}: `), runLabel(v.fork)),
    h(
      'div',
      { class: 'muted', id: 'fd-point' },
      v.forkStep === 0
        ? 'forked from the start (no step replayed)'
        : `forked after step ${v.forkStep}: ${v.forkStep === 1 ? 'step 1 is' : `steps 1–${v.forkStep} are`} shared`,
    ),
  );
  const hints = h(
    'section',
    { id: 'fd-hint' },
    h('h3', {}, 'Hint at the fork point'),
    hintList(v.hints, fName) ??
      h('p', { class: 'muted' }, 'No hint: the fork differs by model, sampling or settings only.'),
    hintList(v.parentHints, pName) ?? '',
  );
  const stepCell = (runId: string, st: ForkDiffView['steps'][number]['parent']) =>
    h(
      'td',
      {},
      st
        ? h(
            'div',
            {},
            stepLink(runId, st.index),
            st.tools.length ? h('span', { class: 'muted' }, ` · ${st.tools.join(', ')}`) : '',
            h('div', { class: 'fd-text' }, st.text || '(no text)'),
          )
        : h('span', { class: 'muted' }, '—'),
    );
  const steps = h(
    'section',
    { id: 'fd-steps' },
    h(
      'h3',
      {},
      `Steps after the fork point (${pName} ${v.steps.filter((s) => s.parent).length}, ${fName} ${v.steps.filter((s) => s.fork).length})`,
    ),
    h(
      'table',
      { class: 'fd-steps' },
      h('tr', {}, h('th', {}, pName), h('th', {}, fName)),
      ...v.steps.slice(0, 60).map((s) => h('tr', {}, stepCell(v.parent.id, s.parent), stepCell(v.fork.id, s.fork))),
    ),
  );
  const c = v.codeStats;
  const code = h(
    'section',
    { id: 'fd-code' },
    h(
      'h3',
      {},
      `Code after the fork point: +${c.added} −${c.removed} (${c.parentCells} ${pName.toLowerCase()} cells, ${c.forkCells} ${fName.toLowerCase()} cells)`,
    ),
    v.code.length
      ? h(
          'pre',
          { class: 'fd-diff' },
          ...v.code.map((l) =>
            h('div', { class: l.op === '+' ? 'add' : l.op === '-' ? 'del' : 'ctx' }, `${l.op} ${l.text}`),
          ),
        )
      : h('p', { class: 'muted' }, 'Neither run ran code after the fork point.'),
  );
  const answers = h(
    'section',
    { id: 'fd-answers' },
    h('h3', {}, `Answers (${v.answers.filter((a) => !a.same).length} differ)`),
    v.answers.length
      ? h(
          'table',
          { class: 'fd-table' },
          h('tr', {}, h('th', {}, 'query'), h('th', {}, pName), h('th', {}, fName)),
          ...v.answers.map((a) =>
            h(
              'tr',
              { class: a.same ? '' : 'differs' },
              h('td', {}, a.queryId),
              h('td', {}, a.parent ?? '—'),
              h('td', {}, a.fork ?? '—'),
            ),
          ),
        )
      : h('p', { class: 'muted' }, 'No recorded answers.'),
  );
  const score = h(
    'section',
    { id: 'fd-score' },
    h('h3', {}, 'Score'),
    v.metrics.length
      ? h(
          'table',
          { class: 'fd-table' },
          h('tr', {}, h('th', {}, 'metric'), h('th', {}, pName), h('th', {}, fName), h('th', {}, 'Δ')),
          ...v.metrics.map((m) =>
            h(
              'tr',
              {},
              h('td', {}, m.label),
              h('td', { class: 'num' }, num(m.parent)),
              h('td', { class: 'num' }, num(m.fork)),
              h(
                'td',
                { class: `num ${m.delta === null || m.delta === 0 ? '' : m.delta > 0 ? 'up' : 'down'}` },
                m.delta === null ? '—' : `${m.delta > 0 ? '+' : ''}${num(m.delta)}`,
              ),
            ),
          ),
        )
      : h('p', { class: 'muted' }, 'Not scored.'),
    ...[v.scores.parent, v.scores.fork].map((s, i) =>
      s
        ? h(
            'div',
            { class: 'muted fd-opts' },
            `${i ? fName : pName}: judge ${s.judgeId}, ${Object.entries(s.options)
              .map(([k, x]) => `${k}=${String(x)}`)
              .join(' ')}`,
          )
        : '',
    ),
  );
  const notes = v.notes.length ? h('ul', { class: 'fd-notes muted' }, ...v.notes.map((n) => h('li', {}, n))) : '';
  return h('div', { class: 'fork-diff' }, head, hints, steps, code, answers, score, notes);
}

/** The diff's stylesheet (theme variables only). */
export const FORK_DIFF_CSS = `
.fork-diff h3 { font-size: 1.05em; margin: 14px 0 4px; }
.fork-diff .muted { color: var(--vscode-descriptionForeground); }
.fd-head div { overflow-wrap: anywhere; }
.fd-hints { margin: 2px 0; padding-left: 18px; }
.fd-hint-text, .fd-text { white-space: pre-wrap; overflow-wrap: anywhere; }
table.fd-steps { width: 100%; table-layout: fixed; border-collapse: collapse; }
table.fd-steps td, table.fd-steps th, table.fd-table td, table.fd-table th { border-bottom: 1px solid var(--vscode-editorWidget-border, transparent); padding: 3px 8px 3px 0; text-align: left; vertical-align: top; }
table.fd-steps .fd-text { max-height: 8em; overflow: auto; }
table.fd-table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
table.fd-table td.num { text-align: right; }
tr.differs td { font-weight: 600; }
td.up { color: var(--vscode-testing-iconPassed, inherit); }
td.down { color: var(--vscode-testing-iconFailed, inherit); }
pre.fd-diff { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); max-height: 40vh; overflow: auto; padding: 6px; background: var(--vscode-textCodeBlock-background, transparent); }
pre.fd-diff .add { background: var(--vscode-diffEditor-insertedLineBackground, rgba(0,160,0,.15)); }
pre.fd-diff .del { background: var(--vscode-diffEditor-removedLineBackground, rgba(200,0,0,.15)); }
pre.fd-diff div { white-space: pre-wrap; overflow-wrap: anywhere; }
`;
