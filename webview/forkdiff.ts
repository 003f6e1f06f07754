/**
 * Compare Fork with Parent (issue 43): a forked run and its parent aligned from the fork step — the hint, the steps
 * after it, the code diff, answers and score (renderer `webview/shared/fork-diff.ts`). Agent text is text.
 */
import { OpenForkStepRequest, type ForkDiffState } from '../src/protocol/fork-diff.ts';
import { DidChangeStateNotification } from '../src/protocol/webview.ts';
import { connectHost, h, ready } from './shared/host.ts';
import { forkDiffElement, FORK_DIFF_CSS } from './shared/fork-diff.ts';
import { adoptCss } from './shared/styles.ts';

const host = connectHost();
const app = document.getElementById('app') as HTMLElement;
adoptCss(
  `body { padding: 0 16px; } header h1 { font-size: 1.3em; margin: 10px 0 4px; } .message { white-space: pre-wrap; overflow-wrap: anywhere; }${FORK_DIFF_CSS}`,
);

function render(s: ForkDiffState): void {
  if (s.runId) host.setViewState({ runId: s.runId });
  const title = h(
    'header',
    {},
    h('h1', {}, s.view?.relation === 'sibling-forks' ? 'Two forks of one run' : 'Fork and parent'),
  );
  if (!s.view) {
    app.replaceChildren(
      title,
      h('p', { class: 'message', id: 'message' }, s.message ?? 'Pick a forked run in the Runs view.'),
    );
    return;
  }
  app.replaceChildren(
    title,
    forkDiffElement(s.view, (runId, step) => void host.rpc.request(OpenForkStepRequest, { runId, step })),
  );
}

host.rpc.onNotification(DidChangeStateNotification, ({ state }) => render(state as ForkDiffState));
void ready<ForkDiffState>(host, 'forkdiff').then(render);
