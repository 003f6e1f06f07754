/**
 * Results panel: metrics per model × block, LongDA match vs tokens, tool-usage heatmaps, BLADE precision /
 * coverage / F1 with CIs. Every number is a link to the runs behind it (OpenRunsRequest → `loupe.openRun`).
 * Charts are Vega-Lite through vega-embed with `ast: true`, so vega interprets expressions instead of compiling
 * them with `new Function` and the webview's CSP needs no 'unsafe-eval'.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import embed, { type VisualizationSpec } from 'vega-embed';
import {
  OpenRunsRequest,
  OpenStepRequest,
  RefreshResultsRequest,
  type BladeDecisionRow,
  type MetricCell,
  type MetricFormat,
  type MetricsTable,
  type QuestionDrilldown,
  type ResultsState,
} from '../src/protocol/results.ts';
import { DidChangeStateNotification, ExecuteCommandRequest } from '../src/protocol/webview.ts';
import css from './results.css';
import { connectHost, h, ready } from './shared/host.ts';
import {
  bladeSpec,
  cellTooltip,
  distinct,
  formatCell,
  formatSpread,
  heatmapSpec,
  scatterSpec,
  type ChartTheme,
} from './shared/results-view.ts';
import { adoptCss } from './shared/styles.ts';

const host = connectHost();
const app = document.getElementById('app') as HTMLElement;
adoptCss(css);

function theme(): ChartTheme {
  const cs = getComputedStyle(document.body);
  const v = (name: string, fallback: string) => cs.getPropertyValue(name).trim() || fallback;
  return {
    foreground: v('--vscode-foreground', '#cccccc'),
    muted: v('--vscode-descriptionForeground', '#9d9d9d'),
    grid: v('--vscode-editorWidget-border', v('--vscode-panel-border', '#3c3c3c')),
    font: v('--vscode-font-family', 'sans-serif'),
    heatLow: v('--vscode-editor-background', '#1e1e1e'),
    heatHigh: v('--vscode-charts-blue', v('--vscode-focusBorder', '#3794ff')),
  };
}

function openRuns(runIds: string[], label: string): void {
  if (!runIds.length) return;
  void host.rpc.request(OpenRunsRequest, { runIds, label });
}

/** A number that opens its runs. */
function cellLink(c: MetricCell | undefined, format: MetricFormat, label: string): HTMLElement {
  const { text, ci } = formatCell(c, format);
  if (!c || !c.runIds.length) return h('span', { class: 'muted' }, text);
  const a = h(
    'a',
    { href: '#', class: 'metric', title: cellTooltip(label, c, format), 'data-runs': c.runIds.join(',') },
    h('span', { class: 'value' }, text),
    ci ? h('span', { class: 'ci' }, ` ${ci}`) : undefined,
    c.pending
      ? h('span', { class: 'pending', title: `${c.pending} judgements pending` }, ` (${c.pending} pending)`)
      : undefined,
  );
  a.addEventListener('click', (ev) => {
    ev.preventDefault();
    openRuns(c.runIds, label);
  });
  const sp = formatSpread(c.spread, format);
  if (!sp) return a;
  return h(
    'span',
    { class: 'with-spread' },
    a,
    h(
      'span',
      {
        class: 'spread muted',
        title: c.spread?.kind === 'ci' ? 'bootstrap 95% CI of the mean over repeats' : `repeats: ${sp.points}`,
      },
      sp.text,
      c.spread?.kind === 'points' ? h('span', { class: 'points' }, ` (${sp.points})`) : undefined,
    ),
  );
}

const VERDICT_GLYPH: Record<string, string> = { right: '✓', wrong: '✗', partial: '◐', unanswered: '∅', pending: '…' };

/** Per question (issue 22): block → question → each repeat's answer against the truth, linked to its step. */
function renderDrilldown(blocks: QuestionDrilldown[]): HTMLElement {
  return h(
    'section',
    { id: 'drilldown' },
    h('h2', {}, 'Per question'),
    h(
      'p',
      { class: 'muted' },
      "Each repeat's answer against the ground truth. Click a step to open it in the run's timeline.",
    ),
    ...blocks.map((b) =>
      h(
        'details',
        { class: 'dd-block', 'data-block': b.blockId, open: blocks.length === 1 },
        h(
          'summary',
          {},
          `${b.blockId} `,
          h('span', { class: 'muted' }, `· ${b.questions.length} questions · ${b.runIds.length} runs`),
        ),
        ...b.questions.map((q) => {
          // one line per run profile (issue 42): its repeats' marks and its own spread of credit, never pooled
          const profileLines = q.profiles.map((p) => {
            const sp = formatSpread(p.spread ?? undefined, 'percent');
            return h(
              'span',
              { class: 'dd-profile', 'data-player': p.player, title: `runs ${p.runIds.join(', ')}` },
              h('span', { class: 'dd-profile-label' }, p.label),
              ' ',
              ...q.repeats
                .filter((r) => p.runIds.includes(r.runId))
                .map((r) =>
                  h(
                    'span',
                    {
                      class: `dd-dot ${r.verdict}`,
                      title: `${r.profile} · repeat ${r.repeat} (run ${r.runId}): ${r.verdict}`,
                    },
                    VERDICT_GLYPH[r.verdict] ?? '?',
                  ),
                ),
              sp ? h('span', { class: 'spread muted' }, ` credit ${sp.text}`) : undefined,
            );
          });
          return h(
            'details',
            { class: 'dd-question', 'data-ref': q.ref },
            h('summary', { title: q.ref }, h('span', { class: 'dd-question-text' }, q.question), ...profileLines),
            q.expected ? h('div', { class: 'dd-truth' }, 'Ground truth: ', h('code', {}, q.expected)) : undefined,
            h(
              'table',
              { class: 'dd-repeats' },
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  h('th', {}, 'Profile'),
                  h('th', { class: 'num' }, 'Repeat'),
                  h('th', {}, 'Verdict'),
                  h('th', {}, 'Answer'),
                  h('th', {}, 'Step'),
                ),
              ),
              h(
                'tbody',
                {},
                ...q.repeats.map((r) => {
                  const step =
                    r.stepIndex === undefined
                      ? h('span', { class: 'muted' }, '—')
                      : h(
                          'a',
                          { href: '#', class: 'dd-step', 'data-run': r.runId, 'data-step': r.stepIndex },
                          `step ${r.stepIndex + 1}`,
                        );
                  step.addEventListener('click', (ev) => {
                    ev.preventDefault();
                    if (r.stepIndex !== undefined) {
                      void host.rpc.request(OpenStepRequest, { runId: r.runId, stepIndex: r.stepIndex });
                    }
                  });
                  return h(
                    'tr',
                    {},
                    h('td', { title: `run ${r.runId}` }, r.profile),
                    h('td', { class: 'num' }, String(r.repeat)),
                    h(
                      'td',
                      { class: `verdict ${r.verdict}` },
                      `${VERDICT_GLYPH[r.verdict] ?? ''} ${r.verdict}${r.verdict === 'partial' && r.credit !== null ? ` (${Math.round(r.credit * 100)}%)` : ''}`,
                    ),
                    h('td', {}, h('code', {}, r.given || 'no answer')),
                    h('td', {}, step),
                  );
                }),
              ),
            ),
          );
        }),
      ),
    ),
  );
}

/** Which runs a row rests on (issue 42): "2 scored / 3", the unscored ones named and one click away. */
function rowRunsCell(r: MetricsTable['rows'][number], label: string): HTMLElement {
  const x = r.runs;
  if (!x) return h('span', { class: 'muted' }, '—');
  const text = `${x.scored.length} scored / ${x.total}`;
  if (!x.unscored.length) {
    return h('span', { title: `every figure of this row rests on runs ${x.scored.join(', ')}` }, text);
  }
  const a = h(
    'a',
    {
      href: '#',
      class: 'unscored',
      'data-runs': x.unscored.join(','),
      title: `not scored, left out of every figure of this row: ${x.unscored.join(', ')} — open them to score them`,
    },
    `${x.unscored.length} unscored`,
  );
  a.addEventListener('click', (ev) => {
    ev.preventDefault();
    openRuns(x.unscored, `${label} · unscored runs`);
  });
  return h('span', {}, text, h('br'), a);
}

function renderTable(t: MetricsTable): HTMLElement {
  const models = distinct(t.rows.map((r) => r.model));
  const head = h(
    'tr',
    {},
    h('th', {}, 'Model'),
    h('th', {}, 'Block'),
    h(
      'th',
      {
        class: 'num',
        title:
          'Every figure of the row is computed over its scored runs; runs without a stored score are named and left out',
      },
      'Runs',
    ),
    ...t.columns.map((c) => h('th', { class: 'num', title: c.description ?? '' }, c.label)),
  );
  const body = t.rows.map((r) =>
    h(
      'tr',
      { class: r.block === '*' ? 'aggregate' : undefined },
      h('td', {}, r.model),
      h('td', { title: r.block }, r.block === '*' ? 'All blocks' : (r.blockTitle ?? r.block)),
      h('td', { class: 'num runs' }, rowRunsCell(r, `${r.model} · ${r.blockTitle ?? r.block}`)),
      ...t.columns.map((c) =>
        h(
          'td',
          { class: 'num' },
          cellLink(r.cells[c.key], c.format, `${r.model} · ${r.blockTitle ?? r.block} · ${c.label}`),
        ),
      ),
    ),
  );
  const opts = t.options
    ? Object.entries(t.options).map(([k, v]) => h('code', { class: 'opt' }, `${k}=${String(v)}`))
    : [];
  return h(
    'section',
    { class: 'metrics', id: `table-${t.id}` },
    h('h2', {}, t.title, ' ', h('vscode-badge', {}, `${models.length} model${models.length === 1 ? '' : 's'}`)),
    opts.length ? h('div', { class: 'options muted' }, 'Options: ', ...opts) : undefined,
    h('div', { class: 'table-wrap' }, h('table', {}, h('thead', {}, head), h('tbody', {}, ...body))),
    t.note ? h('p', { class: 'muted note' }, t.note) : undefined,
  );
}

function renderBladeTable(rows: BladeDecisionRow[]): HTMLElement {
  const head = h(
    'tr',
    {},
    h('th', {}, 'Model'),
    h('th', {}, 'Decision type'),
    h('th', { class: 'num' }, 'Precision'),
    h('th', { class: 'num' }, 'Coverage@k'),
    h('th', { class: 'num' }, 'F1'),
  );
  return h(
    'table',
    { class: 'blade' },
    h('thead', {}, head),
    h(
      'tbody',
      {},
      ...rows.map((r) =>
        h(
          'tr',
          { class: r.decisionType === 'weighted' ? 'aggregate' : undefined },
          h('td', {}, r.model),
          h('td', {}, r.decisionType),
          h('td', { class: 'num' }, cellLink(r.precision, 'fraction', `${r.model} · ${r.decisionType} · precision`)),
          h('td', { class: 'num' }, cellLink(r.coverage, 'fraction', `${r.model} · ${r.decisionType} · coverage`)),
          h('td', { class: 'num' }, cellLink(r.f1, 'fraction', `${r.model} · ${r.decisionType} · F1`)),
        ),
      ),
    ),
  );
}

type ClickHandler = (datum: Record<string, unknown>) => void;

async function chart(el: HTMLElement, spec: Record<string, unknown>, onClick?: ClickHandler): Promise<void> {
  try {
    const res = await embed(el, spec as VisualizationSpec, {
      ast: true,
      actions: false,
      renderer: 'svg',
      mode: 'vega-lite',
      tooltip: { theme: 'dark' },
    });
    if (onClick) {
      res.view.addEventListener('click', (_ev, item) => {
        const d = (item as { datum?: Record<string, unknown> } | null | undefined)?.datum;
        if (d) onClick(d);
      });
    }
    el.dataset.rendered = 'true';
  } catch (e) {
    el.replaceChildren(h('p', { class: 'error' }, `Chart failed: ${e instanceof Error ? e.message : String(e)}`));
  }
}

function render(s: ResultsState): void {
  const t = theme();
  const refresh = h('vscode-button', { id: 'refresh', secondary: true }, 'Refresh');
  refresh.addEventListener('click', async () => render(await host.rpc.request(RefreshResultsRequest, {})));
  const header = h(
    'header',
    {},
    h('h1', {}, 'Results'),
    h('span', { class: 'muted source', title: s.source }, s.source),
    s.experiment
      ? h(
          'vscode-badge',
          { id: 'experiment', title: 'Only the runs of this experiment are counted (Loupe: Select Experiment)' },
          s.experiment,
        )
      : undefined,
    s.pendingJudgements
      ? h('vscode-badge', { title: 'Judgements still pending' }, `${s.pendingJudgements} pending`)
      : undefined,
    h('span', { class: 'spacer' }),
    s.pendingJudgements
      ? h(
          'vscode-button',
          {
            id: 'annotate',
            secondary: true,
            title: 'Open the annotation queue of the items waiting for an expert',
            onclick: () =>
              void host.rpc.request(ExecuteCommandRequest, {
                command: 'loupe.openAnnotationQueue',
                args: [{ kind: 'items' }],
              }),
          },
          'Annotate pending items',
        )
      : undefined,
    h(
      'vscode-button',
      {
        id: 'compare-profiles',
        secondary: true,
        title: 'Paired difference of two profiles with clustered standard errors (as loupe compare)',
        onclick: () => void host.rpc.request(ExecuteCommandRequest, { command: 'loupe.compareProfiles' }),
      },
      'Compare two profiles',
    ),
    h(
      'vscode-button',
      {
        id: 'open-matrix',
        secondary: true,
        title: 'Items × run profiles, each repeat a dot coloured by its outcome (as loupe results --matrix)',
        onclick: () => void host.rpc.request(ExecuteCommandRequest, { command: 'loupe.openMatrix' }),
      },
      'Model × question matrix',
    ),
    refresh,
  );
  const parts: (HTMLElement | undefined)[] = [
    header,
    h(
      'p',
      { class: 'muted' },
      `Scored ${new Date(s.generatedAt).toLocaleString()}. Click any number to open the runs behind it.`,
    ),
  ];
  if (s.message) parts.push(h('p', { class: 'message', id: 'message' }, s.message));
  for (const table of s.tables) parts.push(renderTable(table));
  if (s.drilldown?.length) parts.push(renderDrilldown(s.drilldown));

  const charts: [HTMLElement, Record<string, unknown>, ClickHandler | undefined][] = [];
  if (s.scatter.length) {
    const el = h('div', { class: 'chart', id: 'chart-scatter' });
    parts.push(
      h(
        'section',
        {},
        h('h2', {}, 'LongDA: match vs total tokens'),
        h(
          'p',
          { class: 'muted' },
          'One point per model (as in LongDA Figure 4); dashed: y = a·ln(x) + b fit. Click a point to open its runs.',
        ),
        el,
      ),
    );
    charts.push([
      el,
      scatterSpec(s.scatter, t),
      (d) => openRuns((d.runIds as string[]) ?? [], `${String(d.model)} · match vs tokens`),
    ]);
  }
  if (s.heatmaps.length) {
    const sec = h(
      'section',
      { id: 'heatmaps' },
      h('h2', {}, 'Tool usage over the trajectory'),
      h(
        'p',
        { class: 'muted' },
        'Share of each tool among the calls in each position bin (binned as LongDA Figure 8). "Tools the runs called" counts every call by its name; the paper view keeps the paper\'s tool list (helpers called inside code counted). Click a cell to open the model\'s runs.',
      ),
    );
    for (const hm of s.heatmaps) {
      const el = h('div', { class: 'chart heatmap', 'data-model': hm.model, 'data-view': hm.view ?? 'paper' });
      sec.append(
        h(
          'h3',
          { class: 'heatmap-title' },
          `${hm.benchmark ? `${hm.benchmark} · ` : ''}${hm.view === 'own' ? 'tools the runs called' : 'paper tool list (Figure 8)'}`,
        ),
        el,
      );
      charts.push([el, heatmapSpec(hm, t), () => openRuns(hm.runIds, `${hm.model} · tool usage`)]);
    }
    parts.push(sec);
  }
  if (s.blade.length) {
    const el = h('div', { class: 'chart', id: 'chart-blade' });
    const opts = s.bladeOptions
      ? Object.entries(s.bladeOptions).map(([k, v]) => h('code', { class: 'opt' }, `${k}=${String(v)}`))
      : [];
    parts.push(
      h(
        'section',
        { id: 'blade' },
        h('h2', {}, s.categoryHeading ?? 'Per category'),
        opts.length ? h('div', { class: 'options muted' }, 'Options: ', ...opts) : undefined,
        h('div', { class: 'table-wrap' }, renderBladeTable(s.blade)),
        el,
      ),
    );
    charts.push([
      el,
      bladeSpec(s.blade, t),
      (d) => {
        const row = s.blade.find((r) => r.model === d.model && r.decisionType === d.decisionType);
        if (row) openRuns(row.f1.runIds, `${row.model} · ${row.decisionType} · F1`);
      },
    ]);
  }
  if (s.failures) failuresSection(s.failures, parts, charts);
  if (!s.tables.length && !s.scatter.length && !s.heatmaps.length && !s.blade.length && !s.message) {
    parts.push(h('p', { class: 'muted', id: 'message' }, 'No scored runs yet.'));
  }
  app.replaceChildren(...parts.filter((p): p is HTMLElement => p !== undefined));
  app.removeAttribute('aria-busy');
  for (const [el, spec, onClick] of charts) void chart(el, spec, onClick);
}

/** Expert failure analysis (issue 19): the Fig. 8-form chart, added to the page's sections and charts. */
function failuresSection(
  f: NonNullable<ResultsState['failures']>,
  parts: (HTMLElement | undefined)[],
  charts: [HTMLElement, Record<string, unknown>, ClickHandler | undefined][],
): void {
  const el = h('div', { class: 'chart', id: 'chart-failures' });
  parts.push(
    h(
      'section',
      { id: 'failures' },
      h('h2', {}, 'Failure classes per model and scenario'),
      h(
        'p',
        { class: 'muted' },
        `From ${f.resolved} resolved expert failure cases of ${f.cases} sampled (DDR-Bench Fig. 8 form). Loupe: Show Failure Figures has Table 6 too.`,
      ),
      el,
    ),
  );
  charts.push([el, f.fig8, undefined]);
}

host.rpc.onNotification(DidChangeStateNotification, ({ state }) => render(state as ResultsState));

ready<ResultsState>(host, 'results').then(render, (e: unknown) => {
  app.replaceChildren(h('p', { class: 'error' }, `Could not load: ${e instanceof Error ? e.message : String(e)}`));
});
