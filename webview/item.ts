/**
 * Benchmark Item panel (issue 22): one block item as the agent sees it; its ground truth only after the reviewer
 * presses "Show ground truth" (Enter on the focused button works too); BLADE datasets offer their decision view.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import { OpenGroundTruthViewRequest, ShowItemGroundTruthRequest, type ItemViewState } from '../src/protocol/item.ts';
import { DidChangeStateNotification } from '../src/protocol/webview.ts';
import { connectHost, h, ready } from './shared/host.ts';
import { adoptCss } from './shared/styles.ts';

const host = connectHost();
const app = document.getElementById('app') as HTMLElement;
adoptCss(`
body { padding: 0 16px; max-width: 960px; }
.muted { color: var(--vscode-descriptionForeground); }
.error { color: var(--vscode-errorForeground); }
.question { white-space: pre-wrap; font-size: 1.05em; line-height: 1.5; padding: 8px 12px; border-left: 3px solid var(--vscode-focusBorder); background: var(--vscode-textCodeBlock-background); }
dl dt { font-weight: 600; margin-top: 8px; color: var(--vscode-descriptionForeground); }
dl dd { margin: 2px 0 0; white-space: pre-wrap; }
dd code { font-family: var(--vscode-editor-font-family); }
.truth { margin-top: 16px; padding: 8px 12px; border: 1px dashed var(--vscode-editorWarning-foreground, #d29922); }
.actions { display: flex; gap: 8px; margin-top: 16px; }
`);

function fieldList(fields: ItemViewState['fields']): HTMLElement {
  return h(
    'dl',
    {},
    ...fields.flatMap((f) => [h('dt', {}, f.name), h('dd', {}, f.code ? h('code', {}, f.value) : f.value)]),
  );
}

function render(s: ItemViewState): void {
  if (s.target) host.setViewState({ target: s.target });
  const actions = h('div', { class: 'actions' });
  if (s.hasGroundTruth && !s.groundTruth) {
    const b = h(
      'vscode-button',
      { id: 'show-ground-truth', title: 'Reveal the expected answer of this item' },
      'Show ground truth',
    );
    b.addEventListener('click', async () => render(await host.rpc.request(ShowItemGroundTruthRequest, {})));
    actions.append(b);
  }
  if (s.groundTruthView) {
    const b = h(
      'vscode-button',
      {
        id: 'open-decisions',
        secondary: true,
        title: "The dataset's ground-truth analysis decisions (revealed there on request)",
      },
      'Open ground-truth decisions…',
    );
    b.addEventListener('click', () => void host.rpc.request(OpenGroundTruthViewRequest, {}));
    actions.append(b);
  }
  app.replaceChildren(
    h('p', { class: 'muted' }, `${s.suite} · ${s.blockTitle} · ${s.itemId}`),
    h('h1', { id: 'item-title' }, s.title),
    h('div', { class: 'question', id: 'item-text' }, s.text),
    s.fields.length ? fieldList(s.fields) : '',
    s.groundTruth
      ? h(
          'section',
          { class: 'truth', id: 'ground-truth' },
          h('h2', {}, 'Ground truth'),
          s.groundTruth.length ? fieldList(s.groundTruth) : h('p', { class: 'muted' }, 'None recorded.'),
        )
      : h(
          'p',
          { class: 'muted', id: 'ground-truth-hidden' },
          s.hasGroundTruth
            ? 'The ground truth is hidden until you ask for it.'
            : 'This item has no per-item ground truth.',
        ),
    actions,
  );
  app.removeAttribute('aria-busy');
}

host.rpc.onNotification(DidChangeStateNotification, ({ state }) => render(state as ItemViewState));

ready<ItemViewState>(host, 'item').then(render, (e: unknown) => {
  app.replaceChildren(h('p', { class: 'error' }, `Could not load: ${e instanceof Error ? e.message : String(e)}`));
});
