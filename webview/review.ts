/**
 * Side-by-side review (issue 16): two outputs of one block aligned section by section, every number linked to the
 * notebook cell that computed it (or marked "no source found"), numbers that differ under the same heading and label
 * highlighted; a blind vote per criterion and overall. Keys (issue 42: one model, no auto-advance): a / b / t / x
 * choose Output A / Output B / tie / both bad for the highlighted criterion, which stays highlighted; j / k (↓ / ↑)
 * move the highlight, so `j` always goes to the very next criterion; r writes the rationale; Ctrl+Enter submits, or,
 * when a criterion is unanswered, highlights and focuses the first one and says so; v folds the vote panel to one line
 * (it never takes more than about a third of the height); n next pair once voted, s skips. The vote in the making is
 * kept in the webview state (a reload loses nothing).
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-textarea/index.js';
import '@vscode-elements/elements/dist/vscode-progress-bar/index.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import {
  NextPairRequest,
  OpenTracedCellRequest,
  PairGroundTruthRequest,
  type PairQuestionTruth,
  ReviewProgressNotification,
  SubmitVoteRequest,
  type PairView,
  type ReviewQueueView,
  type ReviewState,
  type ScreenChoice,
} from '../src/protocol/review.ts';
import css from './review.css';
import { agentHtml } from './shared/agent-html.ts';
import { renderStructuredJson } from './shared/arg-sections.ts';
import { connectHost, h, ready } from './shared/host.ts';
import { adoptCss } from './shared/styles.ts';
import { forkDiffElement, FORK_DIFF_CSS } from './shared/fork-diff.ts';

const host = connectHost();
const app = document.getElementById('app') as HTMLElement;
adoptCss(css);
adoptCss(
  `${FORK_DIFF_CSS}\n.rv-fork-diff { margin: 10px 0; padding: 4px 8px; border: 1px solid var(--vscode-editorWidget-border, transparent); } .rv-fork-diff summary { cursor: pointer; font-weight: 600; }`,
);

interface Draft {
  queueId: string;
  itemId: string | null;
  choices: Record<string, ScreenChoice>;
  overall: ScreenChoice | null;
  rationale: string;
}

const OVERALL = '\u0000overall';
const CHOICES: Array<{ value: ScreenChoice; key: string; label: string }> = [
  { value: 'left', key: 'a', label: 'A better' },
  { value: 'right', key: 'b', label: 'B better' },
  { value: 'tie', key: 't', label: 'Tie' },
  { value: 'both-bad', key: 'x', label: 'Both bad' },
];

let queue: ReviewQueueView | undefined;
let pair: PairView | null = null;
let draft: Draft = { queueId: '', itemId: null, choices: {}, overall: null, rationale: '' };
let active = 0;
let message: string | null = null;
/** Put the keyboard focus on the highlighted criterion at the next render (Ctrl+Enter with a gap). */
let focusRow = false;
/** The vote panel folded to its summary line (key v), so the outputs get the height. */
let folded = false;
/** Ground truth beside each side (issue 43, opt-in per question; the host sends nothing before the vote in a blind queue). */
let truth: {
  itemId: string;
  questions: Array<{ ref: string; question: string }> | null;
  shown: Map<string, PairQuestionTruth>;
  error: string | null;
} | null = null;

function groundTruthSection(p: PairView): HTMLElement | undefined {
  if (p.groundTruth === 'none') return undefined;
  if (truth?.itemId !== p.itemId) truth = { itemId: p.itemId, questions: null, shown: new Map(), error: null };
  const t = truth;
  const box = h(
    'section',
    { class: 'rv-truth', id: 'ground-truth', 'aria-label': 'ground truth' },
    h('h2', {}, 'Ground truth per question'),
  );
  if (p.groundTruth === 'after-vote') {
    box.append(
      h(
        'p',
        { class: 'muted', id: 'truth-after-vote' },
        'Blind review: the ground truth can be shown beside each output after you vote.',
      ),
    );
    return box;
  }
  const ask = async (ref?: string): Promise<void> => {
    try {
      const r = await host.rpc.request(PairGroundTruthRequest, { itemId: p.itemId, ...(ref ? { ref } : {}) });
      t.questions = r.questions;
      if (r.truth) t.shown.set(r.truth.ref, r.truth);
      t.error = null;
    } catch (e) {
      t.error = e instanceof Error ? e.message : String(e);
    }
    render();
  };
  if (!t.questions) {
    box.append(
      h(
        'button',
        { class: 'link', id: 'truth-list', onclick: () => void ask() },
        'Show the questions (ground truth per question on request)',
      ),
    );
  } else if (!t.questions.length) {
    box.append(
      h(
        'p',
        { class: 'muted' },
        'Neither run has a stored score with per-question outcomes: score them to see the ground truth here.',
      ),
    );
  } else {
    box.append(
      h(
        'table',
        { class: 'rv-truth-table' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', {}, 'question'),
            h('th', {}, 'Output A answered'),
            h('th', {}, 'expected'),
            h('th', {}, 'Output B answered'),
          ),
        ),
        h(
          'tbody',
          {},
          ...t.questions.map((q) => {
            const g = t.shown.get(q.ref);
            const side = (x: { given: string; verdict: string } | null) =>
              x ? `${x.given || '—'} (${x.verdict})` : 'not scored';
            return h(
              'tr',
              { 'data-ref': q.ref },
              h('td', {}, q.question),
              ...(g
                ? [
                    h('td', { class: 'truth-left' }, side(g.left)),
                    h('td', { class: 'truth-expected' }, g.expected),
                    h('td', { class: 'truth-right' }, side(g.right)),
                  ]
                : [
                    h(
                      'td',
                      { colspan: '3' },
                      h('button', { class: 'link truth-show', onclick: () => void ask(q.ref) }, 'show ground truth'),
                    ),
                  ]),
            );
          }),
        ),
      ),
    );
  }
  if (t.error) box.append(h('p', { class: 'error', role: 'status' }, t.error));
  return box;
}
/** The keyboard model, shown in the panel's key help. */
const KEY_HELP =
  'a / b / t / x vote on the highlighted criterion (the highlight stays) · j / k next / previous criterion · r rationale · Ctrl+Enter submit (or go to the first unanswered criterion) · v fold the vote panel · n next pair · s skip';

/** Criteria rows of the vote (criteria, then overall). */
const rowsOfVote = (p: PairView) => [...p.criteria, OVERALL];
const choiceOf = (c: string): ScreenChoice | null => (c === OVERALL ? draft.overall : (draft.choices[c] ?? null));

function save(): void {
  host.setViewState({ ...draft });
}

/** A section of an agent's report (marked's HTML with Loupe's number markers): the shared agent-content sanitiser. */
function html(s: string): HTMLElement {
  return agentHtml(s, { classes: ['loupe-num', 'loupe-figure'], extraClass: 'markdown' });
}

/**
 * Decorates the number spans of a rendered section: traced (link to its cell), no source, differing. A marker the
 * agent forged in its own raw HTML is not decorated: only the first marker of an id, whose text is the number as
 * written, is Loupe's; others lose the class (a forged marker cannot borrow another number's trace).
 */
function decorate(el: HTMLElement, side: 'left' | 'right', p: PairView, differing: Set<string>): void {
  const seen = new Set<string>();
  for (const span of el.querySelectorAll<HTMLElement>('span.loupe-num')) {
    const id = span.dataset.num ?? '';
    const n = p.numbers[id];
    if (!n || seen.has(id) || span.textContent !== n.raw || !id.startsWith(side === 'left' ? 'L' : 'R')) {
      span.classList.remove('loupe-num');
      continue;
    }
    seen.add(id);
    if (differing.has(id)) span.classList.add('differ');
    if (n.cell !== null) {
      span.classList.add('traced');
      span.tabIndex = 0;
      span.setAttribute('role', 'link');
      span.title = `${n.raw}${n.label ? ` (${n.label})` : ''} — computed in notebook cell ${n.cell + 1}; click or Enter opens it`;
      const open = () =>
        void host.rpc.request(OpenTracedCellRequest, { itemId: p.itemId, side, seq: n.cell! }).catch((e: unknown) => {
          message = e instanceof Error ? e.message : String(e);
          render();
        });
      span.addEventListener('click', open);
      span.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter') {
          ev.preventDefault();
          ev.stopPropagation();
          open();
        }
      });
    } else {
      span.classList.add('untraced');
      span.title = `${n.raw}${n.label ? ` (${n.label})` : ''} — no source found in the run's notebook cells`;
    }
    if (differing.has(id)) span.title += ' · differs from the other output under the same label';
  }
}

function sideHeader(s: PairView['left'], key: string): HTMLElement {
  return h(
    'div',
    { class: 'side-head', id: `head-${key}` },
    h('h2', {}, s.title),
    s.revealed
      ? h(
          'span',
          { class: 'revealed', id: `revealed-${key}` },
          `${s.revealed.player}`,
          h('span', { class: 'muted' }, ` · run ${s.revealed.runId}`),
        )
      : h('span', { class: 'muted blind' }, 'blind until you vote'),
    h(
      'div',
      { class: 'muted stats' },
      s.empty
        ? h('span', { class: 'warn', id: `empty-${key}` }, 'no report')
        : `${s.numbers.traced} of ${s.numbers.total} numbers traced to a cell · ${s.figures} figure${s.figures === 1 ? '' : 's'}`,
    ),
  );
}

function render(): void {
  if (!queue) return;
  const q = queue;
  const pct = q.total ? Math.round((100 * q.done) / q.total) : 100;
  const header = h(
    'header',
    { class: 'rv-header' },
    h('h1', { id: 'queue-name' }, q.name),
    h(
      'span',
      { class: 'rv-progress', id: 'progress', title: 'pairs with enough reviewers / pairs in the queue' },
      `${q.done} / ${q.total} pairs done`,
    ),
    h(
      'span',
      { class: 'muted' },
      `${q.reviewers} reviewer${q.reviewers === 1 ? '' : 's'} per pair · blind · most uncertain pair first`,
    ),
    h('span', { class: 'muted', id: 'annotator' }, `reviewing as ${q.annotator}`),
    ...(q.byReviewer ?? []).map((r) =>
      h(
        'vscode-badge',
        { class: 'rv-reviewer', title: `${r.label} voted on ${r.voted} pair(s) of this queue` },
        `${r.label}: ${r.voted}`,
      ),
    ),
  );
  const bar = h('vscode-progress-bar', { value: pct, max: 100, 'aria-label': `${pct}% done` });
  if (!pair) {
    app.replaceChildren(
      header,
      bar,
      h(
        'section',
        { class: 'rv-empty', id: 'queue-empty' },
        h('h2', {}, 'Nothing left to review'),
        h('p', { class: 'muted' }, message ?? ''),
      ),
    );
    app.removeAttribute('aria-busy');
    return;
  }
  const p = pair;
  const differing = new Set(p.rows.flatMap((r) => r.differing));
  const grid = h('div', { class: 'rv-grid', id: 'aligned' }, sideHeader(p.left, 'left'), sideHeader(p.right, 'right'));
  for (const r of p.rows) {
    for (const [side, sec] of [
      ['left', r.left],
      ['right', r.right],
    ] as const) {
      const cell = h('section', {
        class: `rv-cell ${side}${sec ? '' : ' missing'}`,
        'data-key': r.key,
        'data-side': side,
      });
      if (sec) {
        // a report section's HTML starts with its own heading; structured sections get their title here
        if (!/^\s*<h[1-6][\s>]/.test(sec.html)) cell.append(h('h3', {}, sec.title));
        const body = html(sec.html);
        decorate(body, side, p, differing);
        // a submission the agent pasted into its words (BLADE's conclusion) reads as sections, as in the timeline
        renderStructuredJson(body);
        cell.append(body);
      } else cell.append(h('p', { class: 'muted' }, `no “${(r.left ?? r.right)!.title}” section in this output`));
      grid.append(cell);
    }
  }
  const legend = h(
    'p',
    { class: 'muted legend' },
    h('span', { class: 'loupe-num traced' }, '12.3'),
    ' traced to a cell (click opens it) · ',
    h('span', { class: 'loupe-num untraced' }, '4.5'),
    ' no source found · ',
    h('span', { class: 'loupe-num differ' }, '67'),
    ' differs from the other output · ',
    h('span', { class: 'rule', title: p.traceRule, tabindex: 0 }, 'tracing rule'),
  );
  const answered = rowsOfVote(p).filter((c) => choiceOf(c) !== null).length;
  const vote = h(
    'section',
    { class: `rv-vote${folded ? ' folded' : ''}`, id: 'vote', role: 'group', 'aria-label': 'vote' },
    h(
      'h2',
      {},
      p.vote ? 'Your vote (saved; change it and submit again to edit)' : 'Your vote',
      ' ',
      h('span', { class: 'muted', id: 'vote-count' }, `${answered} / ${rowsOfVote(p).length} chosen`),
      ' ',
      h(
        'button',
        {
          class: 'link',
          id: 'fold',
          'aria-expanded': folded ? 'false' : 'true',
          title: 'v',
          onclick: () => {
            folded = !folded;
            render();
          },
        },
        folded ? 'Show vote (v)' : 'Fold (v)',
      ),
    ),
    ...(folded
      ? []
      : rowsOfVote(p).map((c, i) => {
          const chosen = choiceOf(c);
          return h(
            'div',
            {
              class: `vote-row${i === active ? ' active' : ''}${c === OVERALL ? ' overall' : ''}`,
              role: 'radiogroup',
              'aria-label': c === OVERALL ? 'Overall' : c,
              'data-criterion': c === OVERALL ? 'overall' : c,
            },
            h('span', { class: 'crit' }, c === OVERALL ? 'Overall preference' : c),
            h(
              'span',
              { class: 'opts' },
              ...CHOICES.map((o) =>
                h(
                  'button',
                  {
                    class: `opt${chosen === o.value ? ' on' : ''}`,
                    role: 'radio',
                    'aria-checked': chosen === o.value ? 'true' : 'false',
                    'data-value': o.value,
                    onclick: () => choose(i, o.value),
                  },
                  h('kbd', {}, o.key),
                  ` ${o.label}`,
                ),
              ),
            ),
          );
        })),
  );
  const rationale = h('vscode-textarea', {
    id: 'rationale',
    rows: 2,
    placeholder: 'Rationale — r to focus, Esc to leave',
    'aria-label': 'rationale',
  }) as HTMLElement & { value: string };
  rationale.value = draft.rationale;
  rationale.addEventListener('input', () => {
    draft.rationale = rationale.value;
    save();
  });
  const actions = h(
    'div',
    { class: 'rv-actions' },
    h(
      'vscode-button',
      { id: 'submit', onclick: () => void submit() },
      p.vote ? 'Save edit (Ctrl+Enter)' : 'Submit vote (Ctrl+Enter)',
    ),
    h(
      'vscode-button',
      { id: 'next', secondary: true, onclick: () => void next(!p.vote) },
      p.vote ? 'Next pair (n)' : 'Skip (s)',
    ),
  );
  if (!folded) vote.append(rationale);
  vote.append(
    actions,
    message
      ? h('p', { class: message.startsWith('Vote saved') ? 'ok' : 'error', id: 'message', role: 'status' }, message)
      : h('span', {}),
  );
  const keys = h('footer', { class: 'rv-keys', id: 'keys' }, KEY_HELP);
  // the keyboard focus stays on the highlighted criterion across re-renders once it was put there
  const rowFocus =
    focusRow || !!(document.activeElement instanceof HTMLElement && document.activeElement.closest('.vote-row'));
  focusRow = false;
  const gt = groundTruthSection(p);
  // issue 43: a fork and its parent (or two forks of one step): the fork diff beside the vote, once voted (blind until then)
  const fd = p.forkDiff;
  const forkSection = fd
    ? h(
        'details',
        { class: 'rv-fork-diff', id: 'fork-diff', open: true },
        h(
          'summary',
          {},
          fd.relation === 'parent-fork'
            ? `Fork diff: this pair is a fork and its parent (forked after step ${fd.forkStep})`
            : `Fork diff: two forks of one run from step ${fd.forkStep}`,
        ),
        fd.view
          ? forkDiffElement(fd.view)
          : h(
              'p',
              { class: 'muted', id: 'fork-diff-blind' },
              'The hint, the code diff, the answers and the scores of the two runs show here once you have voted (they name the runs).',
            ),
      )
    : '';
  app.replaceChildren(
    ...[
      header,
      bar,
      h('p', { class: 'muted', id: 'pair-title' }, `${p.suite} · block ${p.blockId} · ${p.criteria.length} criteria`),
      legend,
      grid,
      forkSection,
      gt,
      vote,
      keys,
    ].filter((x): x is HTMLElement => x !== undefined && x !== ''),
  );
  app.removeAttribute('aria-busy');
  const row = rowFocus ? vote.querySelector<HTMLElement>('.vote-row.active') : null;
  if (row) {
    row.scrollIntoView({ block: 'nearest' });
    (row.querySelector<HTMLElement>('button.opt.on') ?? row.querySelector<HTMLElement>('button.opt'))?.focus({
      preventScroll: true,
    });
  }
  keepFocus();
}

function keepFocus(): void {
  const a = document.activeElement;
  if (!a || a === document.body || !a.isConnected) {
    app.tabIndex = -1;
    app.focus({ preventScroll: true });
  }
}

function choose(i: number, v: ScreenChoice): void {
  if (!pair) return;
  const c = rowsOfVote(pair)[i];
  if (c === undefined) return;
  if (c === OVERALL) draft.overall = v;
  else draft.choices[c] = v;
  // no auto-advance: the highlight stays, so j / k always move exactly one criterion from what was just voted
  active = i;
  message = null;
  save();
  render();
}

function show(s: ReviewState, keep = false): void {
  queue = s.queue;
  pair = s.pair;
  message = s.message;
  if (!(keep && pair && draft.itemId === pair.itemId)) {
    draft = pair?.vote
      ? {
          queueId: s.queue.queueId,
          itemId: pair.itemId,
          choices: { ...pair.vote.criteria },
          overall: pair.vote.overall,
          rationale: pair.vote.rationale,
        }
      : { queueId: s.queue.queueId, itemId: pair?.itemId ?? null, choices: {}, overall: null, rationale: '' };
    active = pair
      ? Math.min(rowsOfVote(pair).length - 1, rowsOfVote(pair).filter((c) => choiceOf(c) !== null).length)
      : 0;
  }
  save();
  render();
}

async function next(skipping: boolean): Promise<void> {
  try {
    show(await host.rpc.request(NextPairRequest, skipping && pair ? { skip: pair.itemId } : {}));
  } catch (e) {
    message = e instanceof Error ? e.message : String(e);
    render();
  }
}

async function submit(): Promise<void> {
  if (!pair) return;
  const missing = rowsOfVote(pair).filter((c) => choiceOf(c) === null);
  if (missing.length) {
    active = rowsOfVote(pair).indexOf(missing[0]!);
    folded = false;
    const name = (c: string) => (c === OVERALL ? 'the overall preference' : `“${c}”`);
    message = `Not submitted: ${missing.length} ${missing.length === 1 ? 'criterion' : 'criteria'} unanswered. ${name(missing[0]!)} is highlighted — press a / b / t / x${missing.length > 1 ? `, then j for ${missing.slice(1).map(name).join(', ')}` : ''}, then Ctrl+Enter.`;
    focusRow = true;
    render();
    return;
  }
  try {
    show(
      await host.rpc.request(SubmitVoteRequest, {
        itemId: pair.itemId,
        criteria: draft.choices,
        overall: draft.overall,
        rationale: draft.rationale,
      }),
    );
  } catch (e) {
    message = e instanceof Error ? e.message : String(e);
    render();
  }
}

document.addEventListener('keydown', (ev) => {
  const t = ev.target as HTMLElement | null;
  const typing = !!t && (t.tagName === 'VSCODE-TEXTAREA' || t.tagName === 'TEXTAREA' || t.tagName === 'INPUT');
  if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) {
    ev.preventDefault();
    void submit();
    return;
  }
  if (typing) {
    if (ev.key === 'Escape') t.blur();
    return;
  }
  if (!pair || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const n = rowsOfVote(pair).length;
  switch (ev.key) {
    case 'j':
    case 'ArrowDown':
      ev.preventDefault();
      active = Math.min(n - 1, active + 1);
      render();
      return;
    case 'k':
    case 'ArrowUp':
      ev.preventDefault();
      active = Math.max(0, active - 1);
      render();
      return;
    case 'r':
      ev.preventDefault();
      (document.getElementById('rationale') as HTMLElement | null)?.focus();
      return;
    case 'n':
      if (pair.vote) {
        ev.preventDefault();
        void next(false);
      }
      return;
    case 's':
      ev.preventDefault();
      void next(true);
      return;
    case 'v':
      ev.preventDefault();
      folded = !folded;
      render();
      return;
    default:
      break;
  }
  const o = CHOICES.find((x) => x.key === ev.key);
  if (o) {
    ev.preventDefault();
    choose(active, o.value);
  }
});

host.rpc.onNotification(ReviewProgressNotification, ({ queue: q }) => {
  if (queue && q.queueId === queue.queueId) {
    queue = q;
    render();
  }
});

ready<ReviewState>(host, 'review').then(
  (s) => {
    const saved = host.getViewState<Draft>();
    if (saved && s.pair && !s.pair.vote && saved.queueId === s.queue.queueId && saved.itemId === s.pair.itemId) {
      draft = saved;
      show(s, true);
      return;
    }
    show(s);
  },
  (e: unknown) => {
    app.replaceChildren(
      h('p', { class: 'error' }, `Could not load the review: ${e instanceof Error ? e.message : String(e)}`),
    );
  },
);
