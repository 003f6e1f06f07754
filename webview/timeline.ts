/**
 * Trajectory Timeline: one row per step (tool icon, duration bar, tokens, status), filter by tool, text search,
 * a detail pane with the full message / arguments / observations (Markdown through the shared agent-content sanitiser, `shared/agent-html.ts`), live
 * updates, and the tool-usage heatmap (tools × 20 bins of normalised progress, LongDA Figure 8) in Vega-Lite.
 * The list is virtualised: only rows in view are in the DOM.
 * Keys (anywhere in the panel but a text field): ↑/↓ or j/k, Home/End, PageUp/PageDown move; Shift+↑/↓, J/K or
 * Shift+click extend a step range; t (or "Tag failure…") tags the range as a failure (issue 19, `timeline-tags.ts`).
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import '@vscode-elements/elements/dist/vscode-single-select/index.js';
import '@vscode-elements/elements/dist/vscode-option/index.js';
import type { TopLevelSpec } from 'vega-lite';
import {
  DidAppendStepsNotification,
  DidChangeFailureTagsNotification,
  FocusStepNotification,
  GetStepDetailRequest,
  RevealToolCallRequest,
  SearchStepsRequest,
  type AnswerMark,
  type StepDetail,
  type TimelineFailures,
  type TimelineHeatmap,
  type TimelineRun,
  type TimelineScoring,
  type TimelineState,
  type TimelineStep,
} from '../src/protocol/timeline.ts';
import { ExecuteCommandRequest } from '../src/protocol/webview.ts';
import { connectHost, h, ready } from './shared/host.ts';
import {
  argSections,
  filterSteps,
  formatDuration,
  formatTokens,
  stepVerdict,
  tallyText,
  toolGlyph,
  VERDICT_GLYPH,
} from './shared/timeline-model.ts';
import { argSectionsView } from './shared/arg-sections.ts';
import { VirtualList } from './shared/virtual-list.ts';
import { answerStepLabel, runElapsedMs } from './shared/labels.ts';
import css from './timeline.css';
import { mountAssistance, type AssistView } from './timeline-assist.ts';
import { mountFailureTagging, type FailureTagging } from './timeline-tags.ts';
import { agentMarkdown } from './shared/agent-html.ts';
import { adoptCss } from './shared/styles.ts';

const ROW_HEIGHT = 26;
const host = connectHost();
adoptCss(css);
const app = document.getElementById('app') as HTMLElement;

let run: TimelineRun;
let all: TimelineStep[] = [];
let shown: TimelineStep[] = [];
let heatmap: TimelineHeatmap;
/** Right / wrong / partial per answer step (issue 22), or null. */
let scoring: TimelineScoring | null = null;
/** Items whose expected value the user asked to see (hidden until asked). */
const revealed = new Set<string>();
let selected = -1;
/** The other end of the selected step range (Shift+↑/↓, Shift+click); equal to `selected` for one step. */
let anchor = -1;
/** Issue 19: failure tags on this run and the tag form. */
let tagging: FailureTagging | undefined;
let maxDuration = 1;
let toolFilter = '';
let query = '';
/** Step indices matching the search box (null: no search). */
let matches: Set<number> | null = null;
let list: VirtualList<TimelineStep>;
const detailCache = new Map<number, StepDetail>();
/** Issue 20: human steps, run controls and forks. */
let assist: AssistView | undefined;

const header = h('header', { class: 'tl-header' });
const toolSelect = h('vscode-single-select', { id: 'tool-filter', 'aria-label': 'Filter by tool' });
const search = h('vscode-textfield', {
  id: 'search',
  placeholder: 'Search messages, arguments, observations',
  'aria-label': 'Search steps',
});
const count = h('span', { class: 'muted', id: 'count' });
const heatmapBtn = h('vscode-button', { id: 'heatmap-toggle', secondary: true }, 'Heatmap');
const tagBtn = h(
  'vscode-button',
  {
    id: 'tag-steps',
    secondary: true,
    title:
      'Tag the selected step or step range as a failure (key t; Shift+↑/↓, Shift+J/K or Shift+click extends the range)',
  },
  'Tag failure…',
);
/** Column labels of the step list (issue 22: no unlabelled numbers). */
const listHead = h(
  'div',
  { class: 'tl-row tl-head', 'aria-hidden': 'true' },
  h('span', { class: 'tl-idx' }, '#'),
  h('span', {}, 'Tools'),
  h('span', {}, 'Step'),
  h('span', {}, 'Duration'),
  h('span', { class: 'num' }, 'Time'),
  h('span', { class: 'num tl-tok' }, 'Tokens'),
  h('span', {}, 'Answer'),
  h('span', { title: 'tool calls without error' }, 'OK'),
);
const listEl = h('div', { class: 'tl-list', id: 'steps', tabindex: 0, role: 'listbox', 'aria-label': 'Steps' });
const detailEl = h(
  'section',
  { class: 'tl-detail', id: 'detail', 'aria-live': 'polite' },
  h('p', { class: 'muted' }, 'Select a step to see its message, arguments and observations.'),
);
const heatmapEl = h('section', { class: 'tl-heatmap', id: 'heatmap', hidden: true });

function renderHeader(): void {
  const statusClass =
    run.status === 'finished' ? 'ok' : run.status === 'running' ? 'live' : run.status === 'failed' ? 'bad' : 'warn';
  header.replaceChildren(
    h('h1', {}, run.blockId),
    h('span', { class: `status ${statusClass}`, id: 'run-status', title: run.statusReason ?? '' }, run.status),
    h('span', { class: 'muted' }, `${run.agent}${run.model ? ` · ${run.model}` : ''} · ${run.suite}`),
    h(
      'span',
      { class: 'muted', id: 'run-totals' },
      `${run.steps} steps · ${run.tokens ? `${formatTokens(run.tokens.input)} in / ${formatTokens(run.tokens.output)} out` : 'tokens unknown (external client)'} · `,
      elapsedEl,
    ),
    scoringSummary(),
  );
  tickElapsed();
}

/** The run's duration in the header: live (ticking each second) while the run is running (issue 42: not "0 ms" at 21 s). */
const elapsedEl = h('span', { id: 'run-elapsed' });
let elapsedTimer: ReturnType<typeof setInterval> | undefined;
function tickElapsed(): void {
  const live = run.status === 'running' && !!run.startedAt;
  elapsedEl.textContent = `${formatDuration(runElapsedMs(run, Date.now()))}${live ? ' elapsed' : ''}`;
  elapsedEl.title = live ? `running since ${run.startedAt}` : 'run duration';
  if (live && !elapsedTimer) elapsedTimer = setInterval(tickElapsed, 1000);
  if (!live && elapsedTimer) {
    clearInterval(elapsedTimer);
    elapsedTimer = undefined;
  }
}

/** The run's tally of right / partial / wrong items, and where it came from. */
function scoringSummary(): HTMLElement | string {
  if (!scoring) return '';
  if (scoring.error) return h('span', { class: 'muted', id: 'run-score' }, `Not scored: ${scoring.error}`);
  const from =
    scoring.source === 'live'
      ? 'scored live against the ground truth'
      : `score of ${new Date(scoring.scoredAt).toLocaleString()}`;
  return h(
    'span',
    { class: 'score-tally', id: 'run-score', title: from },
    tallyText(scoring.tally),
    h('span', { class: 'muted' }, ` · ${from}`),
  );
}

/** One answer's verdict, what the run gave, and its expected value behind a button (hidden until asked). */
function markView(m: AnswerMark): HTMLElement {
  const key = m.ref;
  const expected = h(
    'span',
    { class: 'expected', 'data-ref': m.ref },
    revealed.has(key) ? `expected ${m.expected}` : '',
  );
  const parts: (HTMLElement | string)[] = [
    h(
      'span',
      { class: `verdict ${m.verdict}` },
      `${VERDICT_GLYPH[m.verdict]} ${m.verdict}${m.verdict === 'partial' && m.credit !== null ? ` (${Math.round(m.credit * 100)}%)` : ''}`,
    ),
    h('span', { class: 'mark-ref' }, ` ${m.ref}`),
    h('span', { class: 'muted' }, ` · ${m.question}`),
    h('div', { class: 'given' }, m.given ? `given ${m.given}` : 'no answer'),
  ];
  if (m.expected) {
    if (!revealed.has(key)) {
      const btn = h(
        'vscode-button',
        { secondary: true, class: 'show-expected', 'data-ref': m.ref, title: 'Show the ground truth of this item' },
        'Show expected value',
      );
      btn.addEventListener('click', () => {
        revealed.add(key);
        expected.textContent = `expected ${m.expected}`;
        btn.remove();
      });
      parts.push(btn);
    }
    parts.push(expected);
  }
  if (m.verdict === 'wrong' || m.verdict === 'partial') {
    // issue 19: tag the failure where it is; the failure panel opens this trajectory with the item attached (the
    // detail says what was given and the verdict, never the expected value: tagging stays blind)
    const tag = h(
      'vscode-button',
      {
        secondary: true,
        class: 'tag-failure',
        'data-ref': m.ref,
        title: 'Open this run in the failure analysis with the item attached, to tag the step(s) where it went wrong',
      },
      'Tag failure',
    );
    tag.addEventListener(
      'click',
      () =>
        void host.rpc.request(ExecuteCommandRequest, {
          command: 'loupe.tagFailure',
          args: [
            {
              runId: run.id,
              ref: m.ref,
              question: m.question,
              detail: `${m.given ? `answered ${m.given}` : 'no answer'}; judged ${m.verdict}`,
              ...(m.stepIndex !== undefined ? { step: m.stepIndex } : {}),
            },
          ],
        }),
    );
    parts.push(tag);
  }
  return h('div', { class: `answer-mark ${m.verdict}`, 'data-ref': m.ref }, ...parts);
}

function renderToolOptions(): void {
  const tools = [...new Set(all.flatMap((s) => s.tools))].sort();
  const current = toolFilter;
  toolSelect.replaceChildren(
    h('vscode-option', { value: '', selected: current === '' }, 'All tools'),
    ...tools.map((t) => h('vscode-option', { value: t, selected: current === t }, t)),
  );
}

function renderRow(s: TimelineStep): HTMLElement {
  const width = Math.max(2, Math.round((s.durationMs / maxDuration) * 100));
  const [lo, hi] = selRange();
  const inRange = s.index >= lo && s.index <= hi;
  const tags = tagging?.marks(s.index) ?? [];
  const row = h(
    'div',
    {
      class: `tl-row${s.index === selected ? ' selected' : ''}${inRange && hi > lo ? ' in-range' : ''}${tags.length ? ' tagged' : ''}${s.error ? ' error' : ''}`,
      role: 'option',
      'aria-selected': inRange ? 'true' : 'false',
      'data-step': s.index,
    },
    h('span', { class: 'tl-idx' }, String(s.index + 1)),
    h(
      'span',
      { class: 'tl-icons', title: s.tools.join(', ') || 'message' },
      ...(s.tools.length ? s.tools.slice(0, 2) : ['']).map((t) =>
        h('span', { class: `tl-icon tool-${toolGlyph(t).cls}`, title: t || 'message' }, toolGlyph(t).glyph),
      ),
      s.tools.length > 2 ? h('span', { class: 'tl-more' }, `+${s.tools.length - 2}`) : '',
    ),
    summaryCell(s, tags),
    h(
      'span',
      { class: 'tl-bar', title: `model ${formatDuration(s.latencyMs)} · tools ${formatDuration(s.toolMs)}` },
      h('span', { style: `width:${width}%` }),
    ),
    h('span', { class: 'tl-dur num' }, formatDuration(s.durationMs)),
    s.tokensIn === null || s.tokensOut === null
      ? h('span', { class: 'tl-tok num', title: 'token use unknown: an external client (MCP) does not report it' }, '—')
      : h(
          'span',
          { class: 'tl-tok num', title: `${s.tokensIn} input / ${s.tokensOut} output tokens` },
          formatTokens(s.tokensIn + s.tokensOut),
        ),
    verdictCell(s.index),
    h(
      'span',
      { class: `tl-status ${s.error ? 'bad' : 'ok'}`, title: s.error ? 'a tool call failed' : 'ok' },
      s.error ? '✘' : '✔',
    ),
  );
  row.addEventListener('click', (ev) => {
    // the keys (↑/↓, Shift+↑/↓, t) go to the list after a click on a row
    listEl.focus({ preventScroll: true });
    void select(s.index, (ev as MouseEvent).shiftKey);
  });
  return row;
}

/** The verdict of the answers this step recorded (empty for steps that recorded none). */
/** A step's summary; an answer step leads with the items it answered (short id + start of the question, issue 42). */
function summaryCell(s: TimelineStep, tags: HTMLElement[]): HTMLElement {
  const marks = scoring?.byStep[s.index] ?? [];
  const asked = answerStepLabel(marks);
  if (!asked) {
    return h(
      'span',
      { class: 'tl-summary', title: s.summary },
      ...tags,
      h('span', { class: 'tl-summary-text' }, s.summary),
    );
  }
  return h(
    'span',
    { class: 'tl-summary', title: `${marks.map((m) => `${m.ref}: ${m.question}`).join('\n')}\n${s.summary}` },
    ...tags,
    h(
      'span',
      { class: 'tl-summary-text' },
      h('span', { class: 'tl-asked' }, asked),
      h('span', { class: 'muted' }, ` · ${s.summary}`),
    ),
  );
}

function verdictCell(index: number): HTMLElement {
  const marks = scoring?.byStep[index];
  if (!marks?.length) return h('span', { class: 'tl-verdict' });
  const v = stepVerdict(marks);
  return h(
    'span',
    { class: `tl-verdict ${v.verdict}`, title: marks.map((m) => `${m.ref}: ${m.verdict}`).join('\n') },
    v.text,
  );
}

function applyFilter(keepScroll = true): void {
  shown = filterSteps(all, toolFilter, matches);
  count.textContent = shown.length === all.length ? `${all.length} steps` : `${shown.length} of ${all.length} steps`;
  list.setItems(shown, keepScroll);
}

/** The selected step range [first, last] (0-based); [-1, -1] when nothing is selected. */
function selRange(): [number, number] {
  if (selected < 0) return [-1, -1];
  const a = anchor < 0 ? selected : anchor;
  return [Math.min(a, selected), Math.max(a, selected)];
}

async function select(index: number, extend = false): Promise<void> {
  if (!extend || selected < 0) anchor = index;
  else if (anchor < 0) anchor = selected;
  selected = index;
  tagging?.selectionChanged();
  list.refresh();
  const pos = shown.findIndex((s) => s.index === index);
  if (pos >= 0) list.scrollToIndex(pos);
  host.setViewState({ runId: run.id, selected });
  let d = detailCache.get(index);
  if (!d) {
    detailEl.replaceChildren(h('p', { class: 'muted' }, `Loading step ${index + 1}…`));
    try {
      d = await host.rpc.request(GetStepDetailRequest, { runId: run.id, index });
      detailCache.set(index, d);
    } catch (e) {
      detailEl.replaceChildren(
        h('p', { class: 'error' }, `Could not load step ${index + 1}: ${e instanceof Error ? e.message : String(e)}`),
      );
      return;
    }
  }
  if (selected === index) renderDetail(d);
}

/** Markdown an agent wrote (a report, insights, an observation): the shared agent-content sanitiser. */
function markdown(md: string): HTMLElement {
  return agentMarkdown(md);
}

function prettyArgs(text: string): string {
  try {
    const v = JSON.parse(text) as Record<string, unknown>;
    if (typeof v === 'object' && v && typeof v.code === 'string' && Object.keys(v).length === 1) return v.code;
    return JSON.stringify(v, null, 2);
  } catch {
    return text;
  }
}

/** A call's arguments: readable sections when structured (a BLADE submission), else the pretty-printed JSON. */
function argumentsView(text: string): HTMLElement[] {
  const sections = argSections(text);
  if (!sections) return [h('div', { class: 'label' }, 'Arguments'), h('pre', { class: 'args' }, prettyArgs(text))];
  return [argSectionsView(sections)];
}

function renderDetail(d: StepDetail): void {
  const calls = d.toolCalls.map((c) => {
    const reveal = h(
      'vscode-button',
      { secondary: true, class: 'reveal', 'data-call': c.id },
      c.name === 'python'
        ? 'Reveal in notebook'
        : /doc|retriever/.test(c.name)
          ? 'Open in Documentation Search'
          : 'Reveal',
    );
    reveal.addEventListener('click', async () => {
      const r = await host.rpc.request(RevealToolCallRequest, { runId: run.id, index: d.index, callId: c.id });
      if (r.revealed === 'none') reveal.setAttribute('disabled', '');
    });
    return h(
      'article',
      { class: `call${c.isError ? ' error' : ''}` },
      h(
        'h3',
        {},
        h('span', { class: `tl-icon tool-${toolGlyph(c.name).cls}` }, toolGlyph(c.name).glyph),
        ` ${c.name}`,
        h(
          'span',
          { class: 'muted' },
          ` · ${formatDuration(c.durationMs)}${c.modelUse ? ` · ${modelUseText(c.modelUse)}` : ''}${c.isError ? ' · error' : ''}${c.truncated ? ' · observation cut' : ''}`,
        ),
        reveal,
      ),
      ...argumentsView(c.argumentsText),
      h('div', { class: 'label' }, 'Observation'),
      h('pre', { class: 'obs' }, c.observation),
    );
  });
  detailEl.replaceChildren(
    h(
      'h2',
      {},
      `Step ${d.index + 1}`,
      h(
        'span',
        { class: 'muted' },
        ` · ${d.usage ? `${d.usage.input} in / ${d.usage.output} out tokens${toolTokensText(d)}` : 'tokens unknown'}${d.finishReason ? ` · ${d.finishReason}` : ''}`,
      ),
    ),
    ...(assist?.detail(d.index, all.length - 1) ?? []),
    ...answersSection(d.index),
    ...(tagging?.detail(d.index) ?? []),
    d.reasoning ? h('details', {}, h('summary', {}, 'Reasoning'), h('pre', { class: 'reasoning' }, d.reasoning)) : '',
    d.content ? markdown(d.content) : h('p', { class: 'muted' }, '(no message text)'),
    ...calls,
  );
}

/** A tool call's own model calls, e.g. "its model call: 700 in / 50 out tokens, $0.0019". */
function modelUseText(m: NonNullable<StepDetail['toolCalls'][number]['modelUse']>): string {
  return `${m.calls === 1 ? 'its model call' : `its ${m.calls} model calls`}: ${m.input} in / ${m.output} out tokens${m.costUsd != null ? `, $${m.costUsd.toPrecision(2)}` : ''}`;
}

/** The part of a step's tokens its tools' model calls used, e.g. " (incl. 700 in / 50 out by find_variables)". */
function toolTokensText(d: StepDetail): string {
  const by = d.toolCalls
    .filter((c) => c.modelUse)
    .map((c) => `${c.modelUse!.input} in / ${c.modelUse!.output} out by ${c.name}`);
  return by.length ? ` (incl. ${by.join(', ')})` : '';
}

/** The answers a step recorded with their verdicts (issue 22). */
function answersSection(index: number): HTMLElement[] {
  const marks = scoring?.byStep[index];
  if (!marks?.length) return [];
  return [
    h(
      'section',
      { class: 'answers', id: 'step-answers' },
      h(
        'div',
        { class: 'label' },
        `Answers recorded at this step (${scoring?.source === 'live' ? 'scored live' : 'stored score'})`,
      ),
      ...marks.map(markView),
    ),
  ];
}

async function renderHeatmap(): Promise<void> {
  if (heatmapEl.hidden) return;
  // Only cells with calls are drawn; the x domain keeps every bin so empty stretches of the run stay visible as gaps.
  const values = heatmap.tools
    .flatMap((tool, r) =>
      (heatmap.matrix[r] ?? []).map((share, b) => ({ tool, bin: b, share, calls: heatmap.counts[r]?.[b] ?? 0 })),
    )
    .filter((v) => v.calls > 0);
  if (!values.length) {
    heatmapEl.replaceChildren(h('p', { class: 'muted' }, 'No tool calls yet.'));
    return;
  }
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: 'Tool usage over normalised progress',
    data: { values },
    width: 'container',
    height: { step: 22 },
    mark: { type: 'rect', tooltip: true },
    encoding: {
      x: {
        field: 'bin',
        type: 'ordinal',
        title: `Progress (${heatmap.bins} bins)`,
        scale: { domain: Array.from({ length: heatmap.bins }, (_, i) => i) },
        axis: { labelExpr: `datum.value % 5 == 0 ? round(datum.value * 100 / ${heatmap.bins}) + '%' : ''` },
      },
      y: { field: 'tool', type: 'nominal', title: null, sort: heatmap.tools },
      color: {
        field: 'share',
        type: 'quantitative',
        title: 'Share of calls',
        scale: { scheme: 'blues', domain: [0, 1] },
        legend: { format: '.0%' },
      },
    },
  };
  const chart = h('div', { class: 'chart', id: 'heatmap-chart' });
  heatmapEl.replaceChildren(chart);
  try {
    // vega is ~1.5 MB: loaded only when the heatmap is first shown.
    const { renderVegaLite } = await import('./shared/vega.ts');
    await renderVegaLite(chart, spec);
  } catch (e) {
    heatmapEl.replaceChildren(
      h('p', { class: 'error' }, `Heatmap failed: ${e instanceof Error ? e.message : String(e)}`),
    );
  }
}

function onKey(ev: KeyboardEvent): void {
  if (!shown.length) return;
  if (ev.key === 't' && !ev.ctrlKey && !ev.metaKey && !ev.altKey) {
    ev.preventDefault();
    tagging?.open();
    return;
  }
  const pos = Math.max(
    0,
    shown.findIndex((s) => s.index === selected),
  );
  let next = -1;
  // Shift+↓/↑ or J/K (Shift+j/k) extend the selected range (the browser host may keep Shift+arrows for itself)
  if (ev.key === 'ArrowDown' || ev.key === 'j' || ev.key === 'J') {
    next = Math.min(shown.length - 1, selected < 0 ? 0 : pos + 1);
  } else if (ev.key === 'ArrowUp' || ev.key === 'k' || ev.key === 'K') next = Math.max(0, pos - 1);
  else if (ev.key === 'Home') next = 0;
  else if (ev.key === 'End') next = shown.length - 1;
  else if (ev.key === 'PageDown') next = Math.min(shown.length - 1, pos + 20);
  else if (ev.key === 'PageUp') next = Math.max(0, pos - 20);
  if (next >= 0) {
    ev.preventDefault();
    void select((shown[next] as TimelineStep).index, ev.shiftKey);
  }
}

async function runSearch(q: string): Promise<void> {
  query = q;
  if (!q) {
    matches = null;
    applyFilter(false);
    return;
  }
  try {
    const { indices } = await host.rpc.request(SearchStepsRequest, { runId: run.id, query: q });
    if (query !== q) return; // a newer search started
    matches = new Set(indices);
  } catch (e) {
    count.textContent = `search failed: ${e instanceof Error ? e.message : String(e)}`;
    return;
  }
  applyFilter(false);
}

function init(state: TimelineState): void {
  run = state.run;
  all = state.steps;
  heatmap = state.heatmap;
  scoring = state.scoring ?? null;
  maxDuration = Math.max(1, ...all.map((s) => s.durationMs));
  const saved = host.getViewState<{ runId: string; selected: number }>();
  assist = mountAssistance(
    host,
    run.id,
    (i) => void select(Math.max(0, Math.min(i, all.length - 1))),
    () => {
      const d = detailCache.get(selected);
      if (d) renderDetail(d);
    },
  );
  tagging = mountFailureTagging(host, run.id, state.failures, {
    range: selRange,
    redraw: () => {
      list.refresh();
      const d = detailCache.get(selected);
      if (d) renderDetail(d);
    },
    focusList: () => listEl.focus(),
  });
  tagBtn.addEventListener('click', () => tagging?.open());
  app.replaceChildren(
    header,
    assist.element,
    h('div', { class: 'tl-toolbar' }, toolSelect, search, count, heatmapBtn, tagBtn),
    tagging.element,
    heatmapEl,
    h('div', { class: 'tl-main' }, h('div', { class: 'tl-listwrap' }, listHead, listEl), detailEl),
  );
  list = new VirtualList<TimelineStep>({ container: listEl, rowHeight: ROW_HEIGHT, renderRow });
  renderHeader();
  renderToolOptions();
  applyFilter(false);
  toolSelect.addEventListener('change', () => {
    toolFilter = (toolSelect as unknown as { value: string }).value;
    applyFilter(false);
  });
  let t: ReturnType<typeof setTimeout> | undefined;
  search.addEventListener('input', () => {
    clearTimeout(t);
    t = setTimeout(() => void runSearch(((search as unknown as { value: string }).value ?? '').trim()), 150);
  });
  heatmapBtn.addEventListener('click', () => {
    heatmapEl.hidden = !heatmapEl.hidden;
    void renderHeatmap();
  });
  // Keys work wherever the panel's focus is (VS Code may give the focus back to the document, not the list), except
  // while typing in a field; the open tag form takes its keys first.
  document.addEventListener('keydown', (ev) => {
    if (tagging?.handleKey(ev)) return;
    const t = ev.target as HTMLElement;
    if (
      /^(INPUT|TEXTAREA|SELECT|VSCODE-TEXTFIELD|VSCODE-SINGLE-SELECT|VSCODE-TEXTAREA)$/.test(t.tagName) ||
      t.closest?.('#tl-tag-form')
    ) {
      return;
    }
    if (t.closest?.('.tl-human-row') && (ev.key === 'Enter' || ev.key === ' ')) return;
    onKey(ev);
  });
  app.removeAttribute('aria-busy');
  performance.mark('loupe:timeline-ready');
  const focus = state.focusStep ?? (saved?.runId === run.id ? saved.selected : -1);
  if (focus !== undefined && focus >= 0) void select(focus);
  if (state.showHeatmap) heatmapBtn.click();
}

host.rpc.onNotification(DidChangeFailureTagsNotification, ({ runId, failures }) => {
  if (run && runId === run.id) tagging?.update(failures as TimelineFailures);
});

host.rpc.onNotification(FocusStepNotification, ({ index }) => {
  if (run) void select(index);
});

host.rpc.onNotification(DidAppendStepsNotification, (u) => {
  if (!run || u.runId !== run.id) return;
  run = u.run;
  const known = new Set(all.map((s) => s.index));
  for (const s of u.steps) if (!known.has(s.index)) all.push(s);
  if (query) void runSearch(query);
  heatmap = u.heatmap;
  if (u.scoring !== undefined) {
    scoring = u.scoring;
    const d = detailCache.get(selected);
    if (d) renderDetail(d);
  }
  maxDuration = Math.max(maxDuration, ...u.steps.map((s) => s.durationMs));
  renderHeader();
  renderToolOptions();
  const atBottom = listEl.scrollTop + listEl.clientHeight >= listEl.scrollHeight - ROW_HEIGHT * 2;
  applyFilter(true);
  if (atBottom) list.scrollToIndex(shown.length - 1);
  void renderHeatmap();
});

ready<TimelineState>(host, 'timeline').then(
  (s) => {
    performance.mark('loupe:timeline-state');
    init(s);
  },
  (e: unknown) => {
    // e.g. the run store in use changed and this run is not in it: say so and offer the Runs view (the page loads again,
    // with the run, when the store is switched back)
    const runsBtn = h('vscode-button', { id: 'show-runs', secondary: true }, 'Show Runs');
    runsBtn.addEventListener(
      'click',
      () => void host.rpc.request(ExecuteCommandRequest, { command: 'loupe.runs.focus' }),
    );
    app.replaceChildren(
      h(
        'section',
        { class: 'tl-unavailable', id: 'unavailable', role: 'alert' },
        h('h1', {}, 'Run not available'),
        h('p', {}, e instanceof Error ? e.message : String(e)),
        runsBtn,
      ),
    );
    app.removeAttribute('aria-busy');
    runsBtn.focus();
  },
);
