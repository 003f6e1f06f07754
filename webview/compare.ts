/**
 * Compare two profiles (issue 48): the paired difference A − B with its clustered SE and CI, the paired t, the cluster
 * bootstrap and sign-flip permutation, n items / clusters / repeats, the minimum detectable difference, each profile's
 * headline and the runs it rests on, and the items where the two disagree (each opens its runs). Numbers are formatted
 * as `loupe compare` prints them (4 decimals, p to 3 significant digits). Every name (profile, item, run id) is text.
 */
import type { CompareFigure, CompareResult, CompareViewState } from '../src/protocol/compare.ts';
import { OpenRunsRequest } from '../src/protocol/results.ts';
import { DidChangeStateNotification, ExecuteCommandRequest } from '../src/protocol/webview.ts';
import css from './compare.css';
import { connectHost, h, ready } from './shared/host.ts';
import { adoptCss } from './shared/styles.ts';

const host = connectHost();
const app = document.getElementById('app') as HTMLElement;
adoptCss(css);

const f4 = (x: number): string => x.toFixed(4);
const ci = (c: [number, number]): string => `[${f4(c[0])}, ${f4(c[1])}]`;

function runsLink(runIds: string[], label: string, text: string): HTMLElement {
  if (!runIds.length) return h('span', { class: 'muted' }, text);
  return h(
    'a',
    {
      class: 'runs',
      href: '#',
      title: `Open ${runIds.length === 1 ? 'the run' : `one of the ${runIds.length} runs`} behind ${label}`,
      onclick: (ev: Event) => {
        ev.preventDefault();
        void host.rpc.request(OpenRunsRequest, { runIds, label });
      },
    },
    text,
  );
}

function card(side: 'A' | 'B', f: CompareFigure): HTMLElement {
  const e = f;
  const w = e.withinItemVariance === null ? 'n/a (one repeat)' : f4(e.withinItemVariance);
  return h(
    'div',
    { class: 'card', id: `profile-${side.toLowerCase()}` },
    h('h2', {}, `${side}: ${f.profile.label}`),
    h('div', { class: 'player muted' }, f.profile.player),
    h(
      'div',
      { class: 'value' },
      h('span', { class: 'mean' }, f4(e.mean)),
      ` ± ${f4(e.se)} `,
      h('span', { class: 'muted' }, ci(e.ci)),
    ),
    h(
      'table',
      { class: 'figures' },
      h('tr', {}, h('th', {}, 'metric'), h('td', {}, `${f.metric} (judge ${f.judgeId})`)),
      h('tr', {}, h('th', {}, 'items'), h('td', {}, `${e.n} ${f.unit} in ${e.clusters} ${f.clusterUnit}s`)),
      h(
        'tr',
        {},
        h('th', {}, 'repeats per item'),
        h('td', {}, `${e.repeats.min}–${e.repeats.max} (${e.repeats.total} observations)`),
      ),
      h('tr', {}, h('th', {}, 'within-item variance'), h('td', {}, w)),
    ),
    h(
      'details',
      { class: 'runs-of' },
      h('summary', {}, `rests on ${f.runIds.length} runs`),
      h('div', { class: 'runlist' }, ...f.runIds.map((r) => runsLink([r], `${side} run ${r}`, r))),
    ),
  );
}

function row(label: string, id: string, ...value: (Node | string)[]): HTMLElement {
  return h('tr', {}, h('th', {}, label), h('td', { id }, ...value));
}

function render(s: CompareViewState): void {
  if (s.target) host.setViewState({ target: s.target });
  const parts: (HTMLElement | undefined)[] = [
    h(
      'header',
      {},
      h('h1', {}, 'Compare two profiles'),
      s.source ? h('span', { class: 'muted source', title: s.source }, s.source) : undefined,
    ),
  ];
  if (s.message) parts.push(h('p', { class: 'message', id: 'message' }, s.message));
  const r = s.result;
  if (!r && !s.message) {
    parts.push(
      h(
        'p',
        { class: 'muted' },
        'Run "Loupe: Compare Two Profiles" (or the button in Results) to choose a benchmark and two profiles.',
      ),
    );
  }
  if (r) parts.push(...result(r));
  app.replaceChildren(...parts.filter((p): p is HTMLElement => p !== undefined));
}

function result(r: CompareResult): HTMLElement[] {
  const d = r.difference;
  const unit = `${r.a.unit} in ${d.clusters} ${r.a.clusterUnit}s`;
  // coloured only when the CI excludes 0 (a sign alone is not a finding)
  const sign = d.ci[0] > 0 ? 'pos' : d.ci[1] < 0 ? 'neg' : '';
  const out: HTMLElement[] = [
    h(
      'p',
      { class: 'headline' },
      'A − B ',
      h('span', { class: `big ${sign}`, id: 'diff-mean' }, f4(d.mean)),
      ` ± ${f4(d.se)} (clustered SE), 95% CI ${ci(d.ci)} over ${d.n} shared ${unit}`,
    ),
    h(
      'p',
      { class: 'muted', id: 'mdd' },
      r.minimumDetectable === null
        ? 'Power: no item has repeats from both profiles, so the within-item variance (and the detectable difference) is unknown.'
        : `This comparison could detect differences ≥ ${f4(r.minimumDetectable)} (80% power, α = 0.05; Miller 2024 §5).`,
    ),
    h('div', { class: 'profiles' }, card('A', r.a), card('B', r.b)),
  ];
  const t = r.pairedT;
  const tbl = h(
    'table',
    { class: 'figures', id: 'figures' },
    row('paired difference A − B', 'f-mean', f4(d.mean)),
    row('clustered SE', 'f-se', `${f4(d.se)} (statsmodels small-sample correction)`),
    row('Miller uncorrected SE / iid SE', 'f-se-other', `${f4(d.seMillerUncorrected)} / ${f4(d.seIid)}`),
    row(`${Math.round(d.level * 100)}% CI (normal)`, 'f-ci', ci(d.ci)),
    row(
      'paired t',
      'f-t',
      t.degenerate
        ? `none: ${t.degenerate}`
        : `t = ${t.t.toFixed(3)}, ${t.df} df, p = ${t.p.toPrecision(3)}, t-CI ${ci(t.ci)}`,
    ),
    row(
      'cluster bootstrap',
      'f-boot',
      r.bootstrap
        ? `${r.bootstrap.resamples} resamples (seed ${r.bootstrap.seed}): SE ${f4(r.bootstrap.se)}, CI ${ci(r.bootstrap.ci)}`
        : 'not run',
    ),
    row(
      'sign-flip permutation',
      'f-perm',
      r.permutation
        ? `${r.permutation.permutations} permutations over clusters (seed ${r.permutation.seed}): p = ${r.permutation.p.toPrecision(3)}`
        : 'not run',
    ),
    row(
      'n',
      'f-n',
      `${d.n} ${r.a.unit}, ${d.clusters} ${r.a.clusterUnit}s, repeats A ${r.a.repeats.min}–${r.a.repeats.max}, B ${r.b.repeats.min}–${r.b.repeats.max}`,
    ),
    row(
      'minimum detectable difference',
      'f-mdd',
      r.minimumDetectable === null ? 'unknown (no repeats)' : f4(r.minimumDetectable),
    ),
    row('left out', 'f-left', `${r.onlyA} ${r.a.unit} only A ran, ${r.onlyB} only B ran`),
  );
  out.push(h('section', {}, h('h3', {}, 'Paired difference'), tbl));
  const dis = r.disagreements;
  const table = h(
    'table',
    { class: 'disagree', id: 'disagreements' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', {}, 'item'),
        h('th', {}, r.a.clusterUnit),
        h('th', { class: 'num' }, 'A'),
        h('th', { class: 'num' }, 'B'),
        h('th', { class: 'num' }, 'A − B'),
        h('th', {}, 'runs'),
      ),
    ),
    h(
      'tbody',
      {},
      ...dis.map((i) =>
        h(
          'tr',
          {},
          h('td', { class: 'item' }, i.item),
          h('td', {}, i.cluster),
          h('td', { class: 'num' }, `${f4(i.a)} (${i.repeatsA}×)`),
          h('td', { class: 'num' }, `${f4(i.b)} (${i.repeatsB}×)`),
          h('td', { class: `num ${i.diff > 0 ? 'pos' : 'neg'}` }, f4(i.diff)),
          h(
            'td',
            {},
            runsLink(i.runIdsA, `A on ${i.item}`, `A (${i.runIdsA.length})`),
            ' · ',
            runsLink(i.runIdsB, `B on ${i.item}`, `B (${i.runIdsB.length})`),
          ),
        ),
      ),
    ),
  );
  const toMatrix = h(
    'a',
    {
      class: 'runs',
      href: '#',
      id: 'open-matrix',
      title:
        'The model × question matrix of these two profiles, on the items where they disagree (each repeat a dot that opens its answer step)',
      onclick: (ev: Event) => {
        ev.preventDefault();
        void host.rpc.request(ExecuteCommandRequest, {
          command: 'loupe.openMatrix',
          args: [{ suite: r.suite, profiles: [r.a.profile.player, r.b.profile.player], filter: 'disagree' }],
        });
      },
    },
    'Open these items in the model × question matrix',
  );
  out.push(
    h(
      'section',
      {},
      h(
        'h3',
        { id: 'disagreements-title' },
        `Items where they disagree (${dis.length} of ${d.n}), largest difference first`,
      ),
      dis.length ? h('p', {}, toMatrix) : undefined,
      dis.length ? table : h('p', { class: 'muted' }, 'None: A and B have the same item means on every shared item.'),
    ),
  );
  return out;
}

void (async () => {
  host.rpc.onNotification(DidChangeStateNotification, ({ state }) => render(state as CompareViewState));
  render(await ready<CompareViewState>(host, 'compare'));
})();
