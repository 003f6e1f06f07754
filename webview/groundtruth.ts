/**
 * Ground-truth view (issue 17): behind an explicit reveal, a block's expert ground truth — the transform DAG drawn as
 * a graph (ROOT on the left, alternative branches dashed; a node selected with the mouse or j / k / Enter shows its
 * code, verb, columns, rationale and branches), conceptual variables and models listed with their fields, the review
 * rows apart, and the version picker (0 = the shipped file).
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import {
  ShowGroundTruthRequest,
  type GroundTruthDecision,
  type GroundTruthState,
  type GroundTruthView,
} from '../src/protocol/ground-truth.ts';
import { connectHost, h, ready } from './shared/host.ts';
import { adoptCss } from './shared/styles.ts';

const host = connectHost();
const app = document.getElementById('app') as HTMLElement;
adoptCss(`
body { padding: 0 12px; }
.muted { color: var(--vscode-descriptionForeground); }
.warn { color: var(--vscode-editorWarning-foreground, #d29922); }
.error { color: var(--vscode-errorForeground); }
.gt-top { display: flex; gap: 16px; align-items: baseline; flex-wrap: wrap; }
select { background: var(--vscode-dropdown-background); color: var(--vscode-dropdown-foreground); border: 1px solid var(--vscode-dropdown-border); padding: 2px 4px; }
.gt-main { display: grid; grid-template-columns: minmax(0, 3fr) minmax(300px, 2fr); gap: 16px; }
.gt-main.stacked { grid-template-columns: minmax(0, 1fr); }
.dag { overflow: auto; border: 1px solid var(--vscode-panel-border, rgba(128,128,128,.3)); max-height: 520px; }
.dag svg text { fill: var(--vscode-foreground); font-size: 11px; pointer-events: none; }
.dag .node rect { fill: var(--vscode-editorWidget-background, #252526); stroke: var(--vscode-panel-border, #555); cursor: pointer; }
.dag .node.root rect { fill: var(--vscode-badge-background); }
.dag .node.sel rect { stroke: var(--vscode-focusBorder); stroke-width: 2.5; }
.dag .edge { stroke: var(--vscode-descriptionForeground); fill: none; stroke-width: 1.2; }
.dag .edge.alt { stroke-dasharray: 4 3; opacity: .7; }
.detail h3 { margin: 4px 0; }
.detail dt { font-weight: 600; margin-top: 6px; color: var(--vscode-descriptionForeground); }
.detail dd { margin: 2px 0 0; white-space: pre-wrap; }
.detail pre { background: var(--vscode-textCodeBlock-background); padding: 6px; overflow-x: auto; margin: 2px 0; }
.group table { border-collapse: collapse; margin: 4px 0 12px; }
.group td, .group th { text-align: left; padding: 2px 8px; border-bottom: 1px solid var(--vscode-panel-border, rgba(128,128,128,.3)); vertical-align: top; }
.group tr.sel { background: var(--vscode-list-activeSelectionBackground); color: var(--vscode-list-activeSelectionForeground); }
.group tr { cursor: pointer; }
.reveal { margin-top: 24px; max-width: 720px; }
`);

let state: GroundTruthState | undefined;
let selected: string | null = null;
let message = '';

const decisions = (v: GroundTruthView): GroundTruthDecision[] => v.groups.flatMap((g) => g.decisions);
const graphOrder = (v: GroundTruthView): string[] =>
  v.graph
    ? [...v.graph.nodes].sort((a, b) => a.layer - b.layer || a.row - b.row).map((n) => n.id)
    : decisions(v).map((d) => d.id);

function dag(v: GroundTruthView): SVGSVGElement | HTMLElement {
  if (!v.graph) return h('p', { class: 'muted' }, 'No transform graph.');
  const W = 170;
  const H = 34;
  const GX = 36;
  const GY = 14;
  const ns = 'http://www.w3.org/2000/svg';
  const layers = Math.max(...v.graph.nodes.map((n) => n.layer)) + 1;
  const rows = Math.max(...v.graph.nodes.map((n) => n.row)) + 1;
  const svg = document.createElementNS(ns, 'svg');
  // issue 42: drawn to a viewBox so it scales down (to 65% at most, then the pane scrolls) instead of being clipped
  const width = layers * (W + GX) + 10;
  const height = rows * (H + GY) + 10;
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('data-width', String(width));
  svg.style.width = `${width}px`;
  svg.style.maxWidth = '100%';
  svg.style.minWidth = `${Math.round(width * 0.65)}px`;
  svg.style.height = 'auto';
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', `transform graph: ${v.graph.nodes.length - 1} transforms in ${layers - 1} layers`);
  const pos = new Map(v.graph.nodes.map((n) => [n.id, { x: 5 + n.layer * (W + GX), y: 5 + n.row * (H + GY) }]));
  for (const e of v.graph.edges) {
    const a = pos.get(e.from);
    const b = pos.get(e.to);
    if (!a || !b) continue;
    const p = document.createElementNS(ns, 'path');
    const x1 = a.x + W;
    const y1 = a.y + H / 2;
    const x2 = b.x;
    const y2 = b.y + H / 2;
    p.setAttribute('d', `M${x1},${y1} C${x1 + GX / 2},${y1} ${x2 - GX / 2},${y2} ${x2},${y2}`);
    p.setAttribute('class', `edge${e.alternative ? ' alt' : ''}`);
    svg.append(p);
  }
  for (const n of v.graph.nodes) {
    const g = document.createElementNS(ns, 'g');
    const at = pos.get(n.id)!;
    g.setAttribute('class', `node${n.layer === 0 ? ' root' : ''}${selected === n.id ? ' sel' : ''}`);
    g.setAttribute('data-id', n.id);
    g.setAttribute('transform', `translate(${at.x},${at.y})`);
    const r = document.createElementNS(ns, 'rect');
    r.setAttribute('width', String(W));
    r.setAttribute('height', String(H));
    r.setAttribute('rx', '4');
    const t = document.createElementNS(ns, 'text');
    t.setAttribute('x', '8');
    t.setAttribute('y', String(H / 2 + 4));
    t.textContent = n.label.length > 24 ? `${n.label.slice(0, 23)}…` : n.label;
    const title = document.createElementNS(ns, 'title');
    title.textContent = n.label;
    g.append(r, t, title);
    g.addEventListener('click', () => select(n.id));
    svg.append(g);
  }
  return svg;
}

function detail(v: GroundTruthView): HTMLElement {
  const d = decisions(v).find((x) => x.id === selected);
  if (!d) {
    return h(
      'section',
      { class: 'detail', id: 'detail' },
      h(
        'p',
        { class: 'muted' },
        selected === 'ROOT_SPEC_ID'
          ? 'ROOT: the dataset as loaded.'
          : 'Select a node or a row (j / k, Enter) to see its code, columns and rationale.',
      ),
    );
  }
  return h(
    'section',
    { class: 'detail', id: 'detail' },
    h('h3', {}, d.label),
    h('p', { class: 'muted' }, `${d.kind} · ${d.id}`),
    h(
      'dl',
      {},
      ...d.fields.flatMap((f) => [h('dt', {}, f.name), h('dd', {}, f.code ? h('pre', {}, f.value) : f.value)]),
    ),
  );
}

function select(id: string): void {
  selected = id;
  render();
}

function render(): void {
  if (!state) return;
  host.setViewState({ key: state.key });
  if (!state.revealed || !state.view) {
    const btn = h('vscode-button', { id: 'reveal' }, 'Show the ground truth (Enter)');
    btn.addEventListener('click', () => void show('latest'));
    app.replaceChildren(
      h(
        'section',
        { class: 'reveal' },
        h('h1', {}, state.subject),
        h(
          'p',
          { class: 'warn' },
          'This shows the expert answers: the ground-truth decisions runs of this block are scored against.',
        ),
        h('p', { class: 'muted' }, 'If you are about to judge or review runs of it, you may want to do that first.'),
        btn,
        message ? h('p', { class: 'error', id: 'message' }, message) : null,
      ),
    );
    app.removeAttribute('aria-busy');
    btn.focus();
    return;
  }
  const v = state.view;
  const versions = h(
    'select',
    { id: 'version', 'aria-label': 'version' },
    ...v.versions.map((x) =>
      h(
        'option',
        { value: String(x.version), ...(x.version === v.version ? { selected: true } : {}) },
        x.version === 0
          ? 'v0 · shipped annotations.csv'
          : `v${x.version} · ${x.author} · ${x.createdAt.slice(0, 16).replace('T', ' ')} · ${x.changes}${x.note ? ` · ${x.note}` : ''}`,
      ),
    ),
  );
  versions.addEventListener('change', () => void show(Number(versions.value)));
  const groups = v.groups
    .filter((g) => g.title !== 'Transforms')
    .map((g) =>
      h(
        'section',
        { class: 'group', id: `group-${g.title.toLowerCase().replace(/\W+/g, '-')}` },
        h('h2', {}, `${g.title} (${g.decisions.length})`),
        h(
          'table',
          {},
          ...g.decisions.map((d) => {
            const tr = h(
              'tr',
              { class: selected === d.id ? 'sel' : '', 'data-id': d.id },
              h('td', {}, d.kind),
              h('td', {}, d.label),
              h('td', { class: 'muted' }, d.fields.find((f) => f.name === 'Columns')?.value ?? ''),
            );
            tr.addEventListener('click', () => select(d.id));
            return tr;
          }),
        ),
      ),
    );
  const reviews = h(
    'details',
    { id: 'reviews' },
    h('summary', {}, `Review rows (${v.reviews.length}): LM-generated candidates and the annotators' labels`),
    h(
      'table',
      {},
      ...v.reviews.map((r) =>
        h('tr', {}, h('td', {}, r.kind), h('td', {}, r.verdict), h('td', { class: 'muted' }, r.label)),
      ),
    ),
  );
  const nT = v.groups.find((g) => g.title === 'Transforms')?.decisions.length ?? 0;
  app.replaceChildren(
    h('div', { class: 'gt-top' }, h('h1', { id: 'title' }, v.title), h('label', {}, 'Version ', versions)),
    v.problems.length
      ? h('ul', { class: 'warn', id: 'problems' }, ...v.problems.map((p) => h('li', {}, p)))
      : h('span', {}),
    h(
      'h2',
      {},
      `Transforms (${nT})`,
      h('span', { class: 'muted' }, ' — dashed: alternative branch; j / k move, Enter shows'),
    ),
    h('div', { class: 'gt-main', id: 'gt-main' }, h('div', { class: 'dag', id: 'dag' }, dag(v)), detail(v)),
    ...groups,
    reviews,
  );
  fitDag();
  app.removeAttribute('aria-busy');
  app.tabIndex = -1;
  if (!document.activeElement || document.activeElement === document.body) app.focus({ preventScroll: true });
}

/**
 * Puts the detail pane under the graph when the graph would not fit beside it (issue 42: at 1600 px the detail pane
 * clipped the DAG); beside it otherwise.
 */
function fitDag(): void {
  const main = document.getElementById('gt-main');
  const svg = main?.querySelector<SVGSVGElement>('svg[data-width]');
  if (!main || !svg) return;
  const natural = Number(svg.dataset.width);
  // beside: the graph gets 3/5 of the width less the gap, and may shrink to 65% before it must scroll
  main.classList.toggle('stacked', natural * 0.65 > (main.clientWidth - 16) * 0.6);
}
window.addEventListener('resize', () => fitDag());

async function show(version: number | 'latest'): Promise<void> {
  try {
    state = await host.rpc.request(ShowGroundTruthRequest, { version });
    message = '';
  } catch (e) {
    message = e instanceof Error ? e.message : String(e);
  }
  render();
}

document.addEventListener('keydown', (ev) => {
  if (!state) return;
  const t = ev.target as HTMLElement | null;
  if (t && (t.tagName === 'SELECT' || t.tagName === 'INPUT')) return;
  if (!state.revealed) {
    if (ev.key === 'Enter') {
      ev.preventDefault();
      void show('latest');
    }
    return;
  }
  const v = state.view!;
  const order = [
    ...graphOrder(v),
    ...v.groups.filter((g) => g.title !== 'Transforms').flatMap((g) => g.decisions.map((d) => d.id)),
  ];
  const i = selected ? order.indexOf(selected) : -1;
  if (ev.key === 'j' || ev.key === 'ArrowDown') {
    ev.preventDefault();
    select(order[Math.min(order.length - 1, i + 1)]!);
  } else if (ev.key === 'k' || ev.key === 'ArrowUp') {
    ev.preventDefault();
    select(order[Math.max(0, i - 1)]!);
  } else if (ev.key === 'Enter' && selected) {
    ev.preventDefault();
    document.getElementById('detail')?.scrollIntoView({ block: 'nearest' });
  }
});

ready<GroundTruthState>(host, 'groundtruth').then(
  (s) => {
    state = s;
    render();
  },
  (e: unknown) => {
    app.replaceChildren(
      h('p', { class: 'error' }, `Could not load the ground truth: ${e instanceof Error ? e.message : String(e)}`),
    );
  },
);
