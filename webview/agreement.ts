/**
 * Agreement view (issue 14): per task and criterion, percent / pairwise agreement, Cohen's κ, Krippendorff's α,
 * Gwet's AC1/AC2 with bootstrap 95% CIs; LLM judge vs humans, with the confusion matrix drawn with Vega-Lite.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import type { TopLevelSpec } from 'vega-lite';
import {
  AgreementChangedNotification,
  RefreshAgreementRequest,
  type AgreementState,
} from '../src/protocol/annotation.ts';
import { connectHost, h, ready } from './shared/host.ts';
import { useStatTableStyles } from './shared/tables.ts';
import { smallSampleWarning } from './shared/labels.ts';

const host = connectHost();
const app = document.getElementById('app') as HTMLElement;
useStatTableStyles(`
.group { margin-bottom: 18px; }
.confusion { margin-top: 4px; }
.small-n, .small-n-note { color: var(--vscode-editorWarning-foreground, #d29922); }
.small-n-note { margin: 4px 0 8px; }
`);

type Est = { value: number | null; ci: { low: number | null; high: number | null } | null } | null;
const f3 = (x: number | null | undefined) => (x === null || x === undefined ? '—' : x.toFixed(3));
const est = (e: Est) => (e ? `${f3(e.value)}${e.ci ? `  [${f3(e.ci.low)}, ${f3(e.ci.high)}]` : ''}` : '—');

async function render(s: AgreementState): Promise<void> {
  const r = s.report;
  const groups = r.groups.map((g, gi) => {
    // issue 42: a statistic on fewer than 10 items says so next to its value and CI
    const n = g.pairableItems;
    const small = smallSampleWarning('κ', n);
    const warned = (v: string, stat: string): string | HTMLElement =>
      small && v !== '—' && !v.startsWith('— ')
        ? h(
            'span',
            {},
            v,
            ' ',
            h('span', { class: 'small-n', title: smallSampleWarning(stat, n)! }, `⚠ n = ${n}: not informative`),
          )
        : v;
    const rows: Array<[string, string | HTMLElement]> = [
      ['Items (≥ 2 annotators)', `${g.items} (${g.pairableItems})`],
      ['Annotators', g.annotators.map((a) => s.labels?.[a] ?? a).join(', ') || '—'],
      ['Percent agreement', f3(g.percentAgreement)],
      ['Pairwise agreement', f3(g.pairwiseAgreement)],
      ["Cohen's κ", g.cohensKappa ? warned(est(g.cohensKappa), 'κ') : '— (needs exactly two annotators)'],
      ["Krippendorff's α (nominal)", warned(est(g.alphaNominal), 'α')],
      ...(g.alphaInterval
        ? [["Krippendorff's α (interval)", warned(est(g.alphaInterval), 'α')] as [string, string | HTMLElement]]
        : []),
      ...(g.alphaOrdinal
        ? [["Krippendorff's α (ordinal)", warned(est(g.alphaOrdinal), 'α')] as [string, string | HTMLElement]]
        : []),
      [
        g.gwet.weights === 'identity' ? "Gwet's AC1" : `Gwet's AC2 (${g.gwet.weights} weights)`,
        warned(est(g.gwet), g.gwet.weights === 'identity' ? 'AC1' : 'AC2'),
      ],
    ];
    const jh = g.judgeHuman.length
      ? h(
          'table',
          { class: 'judge-human' },
          h('tr', {}, h('th', {}, 'LLM judge vs'), h('th', {}, 'items'), h('th', {}, 'agreement'), h('th', {}, 'κ')),
          ...g.judgeHuman.map((j) =>
            h(
              'tr',
              {},
              h('td', {}, j.against),
              h('td', {}, String(j.items)),
              h('td', {}, f3(j.agreement)),
              h(
                'td',
                {},
                f3(j.kappa),
                smallSampleWarning('κ', j.items) && j.kappa !== null
                  ? h('span', { class: 'small-n', title: smallSampleWarning('κ', j.items)! }, ` ⚠ n = ${j.items}`)
                  : '',
              ),
            ),
          ),
        )
      : h('p', { class: 'muted' }, 'No LLM verdicts on these items.');
    const chart = h('div', { class: 'confusion', id: `confusion-${gi}` });
    return {
      el: h(
        'section',
        { class: 'group', 'data-task': g.task },
        h('h2', {}, g.task, g.criterion ? h('span', { class: 'muted' }, ` · ${g.criterion}`) : ''),
        h('table', { class: 'stats' }, ...rows.map(([k, v]) => h('tr', {}, h('th', {}, k), h('td', {}, v)))),
        small ? h('p', { class: 'small-n-note', 'data-n': String(n) }, `⚠ ${small}`) : '',
        jh,
        chart,
      ),
      chart,
      g,
    };
  });
  const refresh = h('vscode-button', { id: 'refresh', secondary: true }, 'Refresh');
  refresh.addEventListener('click', async () => render(await host.rpc.request(RefreshAgreementRequest, {})));
  app.replaceChildren(
    h('h1', { id: 'title' }, 'Annotation agreement'),
    h(
      'p',
      { class: 'muted' },
      `${r.totals.items} annotated item(s): ${r.totals.adjudicated} adjudicated, ${r.totals.majority} decided by majority, ${r.totals.single} by one annotator, ${r.totals.tied} tied. CIs: percentile bootstrap over items, ${r.bootstrap.resamples} resamples, seed ${r.bootstrap.seed}.`,
    ),
    refresh,
    ...(groups.length
      ? groups.map((g) => g.el)
      : [h('p', { id: 'empty' }, 'No annotations yet. Open an annotation queue and judge a few items.')]),
  );
  app.removeAttribute('aria-busy');
  const withMatrix = groups.filter((g) => g.g.confusion && g.g.confusion.labels.length);
  if (!withMatrix.length) return;
  const { renderVegaLite } = await import('./shared/vega.ts');
  for (const { chart, g } of withMatrix) {
    const c = g.confusion!;
    const values = c.labels.flatMap((a, i) => c.labels.map((b, j) => ({ llm: a, human: b, n: c.counts[i]![j]! })));
    const spec: TopLevelSpec = {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      title: 'LLM judge (rows) vs human resolution (columns)',
      data: { values },
      width: Math.max(140, 60 * c.labels.length),
      height: Math.max(90, 40 * c.labels.length),
      encoding: {
        x: { field: 'human', type: 'ordinal', sort: c.labels, title: 'human resolution' },
        y: { field: 'llm', type: 'ordinal', sort: c.labels, title: 'LLM judge' },
      },
      layer: [
        {
          mark: 'rect',
          encoding: {
            color: {
              field: 'n',
              type: 'quantitative',
              title: 'items',
              scale: { scheme: 'blues' },
              legend: { format: 'd', tickMinStep: 1 },
            },
          },
        },
        { mark: { type: 'text', fontSize: 13 }, encoding: { text: { field: 'n', type: 'quantitative' } } },
      ],
    };
    await renderVegaLite(chart, spec);
  }
}

ready<AgreementState>(host, 'agreement').then(render, (e: unknown) => {
  app.replaceChildren(
    h('p', { class: 'error' }, `Could not compute agreement: ${e instanceof Error ? e.message : String(e)}`),
  );
});

// A colleague's annotations landed (team store): the report is redrawn in place, keeping the focus on Refresh.
host.rpc.onNotification(AgreementChangedNotification, (s) => {
  const hadFocus = document.activeElement?.id === 'refresh';
  void render(s).then(() => {
    if (hadFocus) (document.getElementById('refresh') as HTMLElement | null)?.focus();
  });
});
