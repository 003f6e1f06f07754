/** Welcome panel: what Loupe found on this machine and how to start. */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import { ConfigureSuitesRequest, RefreshWelcomeRequest, type WelcomeState } from '../src/protocol/welcome.ts';
import { DidChangeStateNotification, ExecuteCommandRequest } from '../src/protocol/webview.ts';
import { connectHost, h, ready } from './shared/host.ts';

const host = connectHost();
const app = document.getElementById('app') as HTMLElement;

/** A button that runs a Loupe command (or opens settings). */
function commandButton(id: string, label: string, command: string, args?: unknown[], secondary = false): HTMLElement {
  const b = h('vscode-button', { id, ...(secondary ? { secondary: true } : {}) }, label);
  b.addEventListener(
    'click',
    () => void host.rpc.request(ExecuteCommandRequest, { command, ...(args ? { args } : {}) }),
  );
  return b;
}

/** Issue 22: after the checks, the next thing to do — configure a suite, run a block, or look at the results. */
function nextStep(s: WelcomeState): HTMLElement {
  const parts: HTMLElement[] = [];
  if (!s.suites.length) {
    const configure = h('vscode-button', { id: 'configure-suites' }, 'Configure suites…');
    configure.addEventListener('click', () => void host.rpc.request(ConfigureSuitesRequest, {}));
    parts.push(
      h(
        'p',
        {},
        'Point Loupe at a benchmark: add its folder to the setting loupe.suites (LongDA, BLADE, DDR-Bench, AnalystBench), or fetch a suite from its official source in a terminal with loupe fetch.',
      ),
      h('div', { class: 'actions' }, configure),
    );
  } else {
    parts.push(
      h(
        'p',
        {},
        s.runs
          ? 'Run another block, or compare the runs you have in Results.'
          : 'Run a block of a configured suite: pick the block, the agent (a model profile or the reference solution) and the repeats.',
      ),
      h(
        'div',
        { class: 'actions' },
        commandButton('run-block', 'Run a benchmark block…', 'loupe.runBenchmarkBlock'),
        commandButton('open-benchmarks', 'Browse benchmarks', 'loupe.benchmarks.focus', undefined, true),
        ...(s.runs ? [commandButton('show-results', 'Show results', 'loupe.showResults', undefined, true)] : []),
      ),
    );
  }
  return h('section', { id: 'next-step' }, h('h2', {}, 'Next step'), ...parts);
}

function render(s: WelcomeState): void {
  const checks = h(
    'ul',
    { class: 'checks' },
    ...s.checks.map((c) =>
      h(
        'li',
        { class: c.ok ? 'ok' : 'bad', 'data-check': c.name },
        h('span', { class: 'mark' }, c.ok ? '✔' : '✘'),
        h('strong', {}, c.name),
        h('span', { class: 'detail' }, c.detail),
      ),
    ),
  );
  const suites = s.suites.length
    ? h('ul', {}, ...s.suites.map((x) => h('li', {}, h('code', {}, x.suite), ' ', x.root)))
    : h(
        'p',
        { class: 'muted' },
        'No suites configured yet. Add one to the setting loupe.suites, e.g. { "suite": "longda", "root": "/data/LongDA/benchmark" }.',
      );
  const refresh = h('vscode-button', { id: 'refresh', secondary: true }, 'Re-check');
  refresh.addEventListener('click', async () => render(await host.rpc.request(RefreshWelcomeRequest, {})));
  const log = h('vscode-button', { id: 'show-log', secondary: true }, 'Show Log');
  log.addEventListener('click', () => void host.rpc.request(ExecuteCommandRequest, { command: 'loupe.showLog' }));
  app.replaceChildren(
    h('header', {}, h('h1', { id: 'title' }, 'Loupe'), h('vscode-badge', {}, `v${s.version}`)),
    h(
      'p',
      { class: 'lead' },
      'Analyst-in-the-loop evaluation of LLM data-analysis agents on LongDA, BLADE, DDR-Bench and AnalystBench.',
    ),
    h(
      'section',
      {},
      h('h2', {}, 'This machine'),
      checks,
      h('p', { class: 'muted' }, `VS Code ${s.vscodeVersion} · extension host node ${s.node}`),
    ),
    h('section', {}, h('h2', {}, 'Benchmark suites'), suites),
    nextStep(s),
    h('div', { class: 'actions' }, refresh, log),
  );
  app.removeAttribute('aria-busy');
}

host.rpc.onNotification(DidChangeStateNotification, ({ state }) => render(state as WelcomeState));

ready<WelcomeState>(host, 'welcome').then(render, (e: unknown) => {
  app.replaceChildren(h('p', { class: 'error' }, `Could not load: ${e instanceof Error ? e.message : String(e)}`));
});
