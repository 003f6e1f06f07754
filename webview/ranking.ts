/**
 * Pairwise ranking (issue 16): Bradley–Terry ratings of run profiles on the Elo-like scale with bootstrap 95% CIs
 * (table and interval chart), the win-rate matrix as a Vega-Lite heatmap, "both bad" as a rate, judge–human
 * agreement and the LLM's position consistency. A criterion and a vote source are picked at the top (keyboard:
 * the selects are in tab order).
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import type { TopLevelSpec } from 'vega-lite';
import { JudgePairsRequest, RankingRequest, type RankingState } from '../src/protocol/review.ts';
import { DidChangeStateNotification } from '../src/protocol/webview.ts';
import { connectHost, h, ready } from './shared/host.ts';
import { useStatTableStyles } from './shared/tables.ts';

const host = connectHost();
const app = document.getElementById('app') as HTMLElement;
useStatTableStyles(`
.pickers { display: flex; gap: 16px; align-items: center; margin: 6px 0; }
select { background: var(--vscode-dropdown-background); color: var(--vscode-dropdown-foreground); border: 1px solid var(--vscode-dropdown-border); padding: 2px 4px; }
.charts { display: flex; gap: 24px; flex-wrap: wrap; }
`);

async function render(s: RankingState): Promise<void> {
  host.setViewState({ suite: s.suite, criterion: s.criterion, source: s.source });
  const suite = h(
    'select',
    { id: 'suite', 'aria-label': 'benchmark' },
    ...s.suites.map((c) => h('option', { value: c, ...(c === s.suite ? { selected: true } : {}) }, c)),
  );
  const crit = h(
    'select',
    { id: 'criterion', 'aria-label': 'criterion' },
    ...['overall', ...s.criteria].map((c) =>
      h('option', { value: c, ...(c === s.criterion ? { selected: true } : {}) }, c),
    ),
  );
  const src = h(
    'select',
    { id: 'source', 'aria-label': 'votes from' },
    ...(['human', 'llm', 'all'] as const).map((c) =>
      h(
        'option',
        { value: c, ...(c === s.source ? { selected: true } : {}) },
        c === 'human' ? 'human reviewers' : c === 'llm' ? 'LLM pairwise judge' : 'both',
      ),
    ),
  );
  const change = async () => {
    try {
      await render(
        await host.rpc.request(RankingRequest, {
          suite: suite.value || null,
          criterion: crit.value,
          source: src.value as RankingState['source'],
        }),
      );
    } catch (e) {
      app.append(h('p', { class: 'error' }, e instanceof Error ? e.message : String(e)));
    }
  };
  const judgeBtn = h(
    'vscode-button',
    {
      id: 'judge-pairs',
      secondary: true,
      title: 'the model profile of the setting loupe.judge.profile, each pair asked in both orders',
    },
    'Judge pairs with the LLM',
  );
  const status = h('span', { class: 'muted', id: 'judge-status' }, '');
  judgeBtn.addEventListener('click', () => {
    status.textContent = 'judging…';
    host.rpc.request(JudgePairsRequest, { suite: suite.value || null, criterion: crit.value }).then(
      async (r) => {
        await render(r);
        const st = document.getElementById('judge-status');
        if (st) st.textContent = r.judged;
      },
      (e: unknown) => {
        status.textContent = e instanceof Error ? e.message : String(e);
        status.className = 'error';
      },
    );
  });
  crit.addEventListener('change', () => void change());
  suite.addEventListener('change', () => void change());
  src.addEventListener('change', () => void change());
  const f0 = (x: number) => x.toFixed(0);
  const table = s.rows.length
    ? h(
        'table',
        { id: 'ranking' },
        h(
          'tr',
          {},
          h('th', {}, '#'),
          h('th', {}, 'Player (run profile)'),
          h('th', { class: 'num' }, 'Rating'),
          h('th', { class: 'num' }, '95% CI'),
          h('th', { class: 'num' }, 'Battles'),
          h('th', { class: 'num' }, 'Wins'),
          h('th', { class: 'num' }, 'Ties'),
        ),
        ...s.rows.map((r, i) =>
          h(
            'tr',
            { 'data-player': r.player },
            h('td', {}, String(i + 1)),
            h('td', { title: r.player }, r.label),
            h('td', { class: 'num' }, f0(r.rating)),
            h('td', { class: 'num' }, `[${f0(r.ciLow)}, ${f0(r.ciHigh)}]`),
            h('td', { class: 'num' }, String(r.battles)),
            h('td', { class: 'num' }, String(r.wins)),
            h('td', { class: 'num' }, String(r.ties)),
          ),
        ),
      )
    : h('p', { id: 'empty' }, 'No votes under this criterion yet. Open a pairwise review and vote on a few pairs.');
  const pct = (x: number | null) => (x === null ? '—' : `${(x * 100).toFixed(1)}%`);
  const facts = h(
    'ul',
    { class: 'muted', id: 'facts' },
    h(
      'li',
      {},
      `${s.votes} vote${s.votes === 1 ? ' counted as a battle' : 's counted as battles'}; “both bad” ${s.bothBad.votes} (${pct(s.bothBad.rate)} of votes), left out of the ratings.`,
    ),
    s.votes < 20
      ? h(
          'li',
          { class: 'warn', id: 'few-votes' },
          `Only ${s.votes} vote${s.votes === 1 ? '' : 's'}: the bootstrap can only resample these, so narrow intervals here do not mean certainty.`,
        )
      : null,
    h(
      'li',
      {},
      `Bradley–Terry maximum likelihood on log-strengths (mean 0; ridge λ = ${s.options.l2}), ties ${s.options.ties === 'half' ? 'as half a win' : 'left out'}; Elo-like scale 1000 + 400/ln 10 per unit; percentile bootstrap over votes, ${s.options.samples} samples, seed ${s.options.seed}.`,
    ),
    s.components.length > 1
      ? h(
          'li',
          { class: 'warn', id: 'components' },
          `Players in separate groups were never compared, directly or through others: ratings are comparable only within a group (${s.components.map((c) => c.join(', ')).join(' | ')}).`,
        )
      : null,
    s.reviewers?.length
      ? h('li', { id: 'reviewers' }, `Human votes by ${s.reviewers.map((r) => `${r.label} (${r.votes})`).join(', ')}.`)
      : null,
    s.judgeHuman
      ? h(
          'li',
          { id: 'judge-human' },
          `LLM pairwise judge vs human resolution (overall): ${s.judgeHuman.items} pair(s), agreement ${pct(s.judgeHuman.agreement)}, Cohen's κ ${s.judgeHuman.kappa === null ? '—' : s.judgeHuman.kappa.toFixed(3)}.`,
        )
      : null,
    s.positionConsistency
      ? h(
          'li',
          {},
          `LLM position consistency (both orders agree): ${s.positionConsistency.consistent}/${s.positionConsistency.pairs} (${pct(s.positionConsistency.rate)}).`,
        )
      : null,
  );
  const ci = h('div', { id: 'ci-chart' });
  const heat = h('div', { id: 'winrate' });
  app.replaceChildren(
    h('h1', { id: 'title' }, 'Pairwise ranking'),
    h('p', { class: 'muted' }, s.title),
    h(
      'div',
      { class: 'pickers' },
      h('label', {}, 'Benchmark ', suite),
      h('label', {}, 'Criterion ', crit),
      h('label', {}, 'Votes from ', src),
      judgeBtn,
      status,
    ),
    table,
    facts,
    h('div', { class: 'charts' }, ci, heat),
  );
  app.removeAttribute('aria-busy');
  if (!s.rows.length) return;
  const { renderVegaLite } = await import('./shared/vega.ts');
  const order = s.rows.map((r) => r.label);
  const ciSpec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: `Rating with 95% CI · ${s.criterion}`,
    data: { values: s.rows.map((r) => ({ player: r.label, rating: r.rating, lo: r.ciLow, hi: r.ciHigh })) },
    width: 360,
    height: Math.max(60, 28 * s.rows.length),
    encoding: { y: { field: 'player', type: 'nominal', sort: order, title: null } },
    layer: [
      {
        mark: { type: 'rule', strokeWidth: 2 },
        encoding: {
          x: { field: 'lo', type: 'quantitative', title: 'rating', scale: { zero: false } },
          x2: { field: 'hi' },
        },
      },
      { mark: { type: 'point', filled: true, size: 70 }, encoding: { x: { field: 'rating', type: 'quantitative' } } },
    ],
  };
  await renderVegaLite(ci, ciSpec);
  const values = s.matrix.labels
    .flatMap((a, i) =>
      s.matrix.labels.map((b, j) => ({ row: a, col: b, rate: s.matrix.rate[i]![j], n: s.matrix.battles[i]![j]! })),
    )
    .filter((v) => v.row !== v.col);
  const heatSpec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: 'Win rate of row over column (ties half)',
    data: { values },
    width: Math.max(120, 70 * s.matrix.labels.length),
    height: Math.max(80, 40 * s.matrix.labels.length),
    encoding: {
      x: { field: 'col', type: 'nominal', sort: s.matrix.labels, title: null },
      y: { field: 'row', type: 'nominal', sort: s.matrix.labels, title: null },
    },
    layer: [
      {
        mark: 'rect',
        encoding: {
          color: {
            field: 'rate',
            type: 'quantitative',
            title: 'win rate',
            scale: { domain: [0, 1], scheme: 'redblue' },
          },
          tooltip: [
            { field: 'rate', format: '.2f' },
            { field: 'n', title: 'battles' },
          ],
        },
      },
      {
        mark: { type: 'text', fontSize: 12 },
        transform: [{ filter: 'datum.rate !== null' }],
        encoding: { text: { field: 'rate', type: 'quantitative', format: '.2f' } },
      },
    ],
  };
  await renderVegaLite(heat, heatSpec);
}

host.rpc.onNotification(DidChangeStateNotification, ({ state }) => void render(state as RankingState));

ready<RankingState>(host, 'ranking').then(render, (e: unknown) => {
  app.replaceChildren(
    h('p', { class: 'error' }, `Could not compute the ranking: ${e instanceof Error ? e.message : String(e)}`),
  );
});
