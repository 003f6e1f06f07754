/** Welcome panel: what Loupe found on this machine and how to start. */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import { RefreshWelcomeRequest, type WelcomeState } from '../src/protocol/welcome.ts';
import { ExecuteCommandRequest } from '../src/protocol/webview.ts';
import { connectHost, h, ready } from './shared/host.ts';

const host = connectHost();
const app = document.getElementById('app') as HTMLElement;

function render(s: WelcomeState): void {
  const checks = h('ul', { class: 'checks' },
    ...s.checks.map((c) => h('li', { class: c.ok ? 'ok' : 'bad', 'data-check': c.name },
      h('span', { class: 'mark' }, c.ok ? '✔' : '✘'), h('strong', {}, c.name), h('span', { class: 'detail' }, c.detail))));
  const suites = s.suites.length
    ? h('ul', {}, ...s.suites.map((x) => h('li', {}, h('code', {}, x.suite), ' ', x.root)))
    : h('p', { class: 'muted' }, 'No suites configured yet. Add one to the setting loupe.suites, e.g. { "suite": "longda", "root": "/data/LongDA/benchmark" }.');
  const refresh = h('vscode-button', { id: 'refresh', secondary: true }, 'Re-check');
  refresh.addEventListener('click', async () => render(await host.rpc.request(RefreshWelcomeRequest, {})));
  const log = h('vscode-button', { id: 'show-log', secondary: true }, 'Show Log');
  log.addEventListener('click', () => void host.rpc.request(ExecuteCommandRequest, { command: 'loupe.showLog' }));
  app.replaceChildren(
    h('header', {}, h('h1', { id: 'title' }, 'Loupe'), h('vscode-badge', {}, `v${s.version}`)),
    h('p', { class: 'lead' }, 'Analyst-in-the-loop evaluation of LLM data-analysis agents on LongDA, BLADE, DDR-Bench and AnalystBench.'),
    h('section', {}, h('h2', {}, 'This machine'), checks,
      h('p', { class: 'muted' }, `VS Code ${s.vscodeVersion} · extension host node ${s.node}`)),
    h('section', {}, h('h2', {}, 'Benchmark suites'), suites),
    h('div', { class: 'actions' }, refresh, log),
  );
  app.removeAttribute('aria-busy');
}

ready<WelcomeState>(host, 'welcome').then(render, (e: unknown) => {
  app.replaceChildren(h('p', { class: 'error' }, `Could not load: ${e instanceof Error ? e.message : String(e)}`));
});
