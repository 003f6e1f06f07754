/**
 * Expert annotation panel (issue 14): one item at a time, keyboard first.
 * Keys: digits pick a score / label (figure quality: the active scale, then the next), y / n yes / no,
 * j / k next / previous item in the queue, e cite evidence (↑/↓ move, Space cites, Enter opens, Esc back),
 * n (Shift+N on yes/no items) note, s skip, Ctrl+Enter submit, Enter after submitting: next item.
 * The item's draft (choices, note, citations) is kept in the webview state, so a window reload loses nothing.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-textarea/index.js';
import '@vscode-elements/elements/dist/vscode-progress-bar/index.js';
import {
  ItemAtRequest,
  NextItemRequest,
  OpenEvidenceRequest,
  QueueProgressNotification,
  SaveDraftRequest,
  SaveFactSplitRequest,
  SubmitVerdictRequest,
  type AnnotationItemView,
  type AnnotationState,
  type CitedEvidence,
  type QueueView,
} from '../src/protocol/annotation.ts';
import css from './annotation.css';
import { connectHost, h, ready } from './shared/host.ts';
import { agentMarkdown } from './shared/agent-html.ts';
import { adoptCss } from './shared/styles.ts';

const host = connectHost();
const app = document.getElementById('app') as HTMLElement;
adoptCss(css);

interface Draft {
  queueId: string;
  pos: number;
  itemId: string | null;
  choice: Record<string, string | number | boolean>;
  note: string;
  cited: CitedEvidence[];
  submitted: boolean;
}

let queue: QueueView | undefined;
let item: AnnotationItemView | null = null;
let draft: Draft = { queueId: '', pos: -1, itemId: null, choice: {}, note: '', cited: [], submitted: false };
let activeControl = 0;
let evidenceMode = false;
let evidenceIndex = 0;
let message = '';
/** When the current item was asked for (first paint / next-item latency, read by the integration test). */
let askedAt = performance.now();

let draftTimer: ReturnType<typeof setTimeout> | undefined;
/** Keeps the draft: in the webview state at once, in the store (host) shortly after (every choice, note, citation). */
function save(immediate = true): void {
  host.setViewState(draft);
  if (!item || draft.submitted || draft.itemId !== item.itemId) return;
  if (draftTimer) clearTimeout(draftTimer);
  const d = { itemId: item.itemId, choice: { ...draft.choice }, note: draft.note, evidence: [...draft.cited] };
  draftTimer = setTimeout(() => void host.rpc.request(SaveDraftRequest, d).catch(() => undefined), immediate ? 0 : 400);
}
const keyOf = (e: CitedEvidence) => JSON.stringify(e);
const isCited = (e: CitedEvidence) => draft.cited.some((c) => keyOf(c) === keyOf(e));

/** Markdown an agent wrote (a report, insights, an observation): the shared agent-content sanitiser. */
function markdown(md: string): HTMLElement {
  return agentMarkdown(md);
}

/** Evidence rows of the item, in the order the list shows them (cells holding the item's numbers first). */
function evidenceRows(
  it: AnnotationItemView,
): Array<{ ref: CitedEvidence; label: string; detail: string; hot: boolean }> {
  if (!it.runId) return [];
  const runId = it.runId;
  const cells = [...it.evidence.cells].sort(
    (a, b) => Number(b.matches.length > 0) - Number(a.matches.length > 0) || a.seq - b.seq,
  );
  return [
    ...cells.map((c) => ({
      ref: { kind: 'cell', runId, seq: c.seq } as CitedEvidence,
      label: `cell ${c.seq + 1} · step ${c.step + 1}`,
      hot: c.matches.length > 0,
      detail: `${c.matches.length ? `mentions ${c.matches.join(', ')} · ` : ''}${c.code.split('\n')[0] ?? ''}${c.output ? `  →  ${c.output.split('\n').slice(0, 2).join(' ')}` : ''}`,
    })),
    ...it.evidence.steps.map((s) => ({
      ref: { kind: 'step', runId, step: s.step } as CitedEvidence,
      label: `step ${s.step + 1}${s.tools.length ? ` · ${s.tools.join(', ')}` : ''}`,
      detail: s.text,
      hot: false,
    })),
    ...it.evidence.docs.map((d) => ({
      ref: { kind: 'doc', path: d.path, ...(d.query ? { query: d.query } : {}) } as CitedEvidence,
      label: `doc · ${d.path.split('/').pop() || d.path}`,
      detail: `${d.query ? `“${d.query}” ` : ''}(step ${d.step + 1})`,
      hot: false,
    })),
  ];
}

function isYesNo(it: AnnotationItemView | null): boolean {
  return !!it && it.controls.length === 1 && it.controls[0]!.options.some((o) => o.key === 'y');
}

function render(): void {
  if (!queue) return;
  const q = queue;
  const pct = q.total ? Math.round((100 * q.done) / q.total) : 100;
  const header = h(
    'header',
    { class: 'an-header' },
    h('h1', { id: 'queue-name' }, q.name),
    h(
      'span',
      {
        class: 'an-progress',
        id: 'progress',
        title: 'items with enough annotators (or adjudicated) / items in the queue',
      },
      `${q.done} / ${q.total} done`,
    ),
    h(
      'span',
      { class: 'muted' },
      q.kind === 'disagreement'
        ? 'adjudication: one final verdict per item'
        : `${q.reviewers} annotator${q.reviewers === 1 ? '' : 's'} per item${q.blind ? ' · blind' : ''}`,
    ),
    h('span', { class: 'muted', id: 'annotator' }, `annotating as ${q.annotator}`),
    ...Object.entries(q.byAnnotator).map(([who, n]) =>
      h(
        'vscode-badge',
        { class: 'an-annotator', title: `${q.labels?.[who] ?? who} answered ${n} item(s) of this queue` },
        `${q.labels?.[who] ?? who}: ${n}`,
      ),
    ),
    q.experiment
      ? h(
          'span',
          {
            class: 'an-experiment',
            id: 'experiment',
            title: "Only items of this experiment's runs are served and counted (Loupe: Select Experiment)",
          },
          `experiment ${q.experiment}`,
        )
      : null,
  );
  // issue 43: items assigned per annotator, done of assigned (as LangSmith / Phoenix queues show it)
  const assignment = q.assignment
    ? h(
        'div',
        { class: 'an-assignment', id: 'assignment', role: 'list', 'aria-label': 'assignment progress per annotator' },
        h('span', { class: 'muted' }, 'Assigned:'),
        ...q.assignment.annotators
          .filter((a) => a.assigned || a.extra)
          .map((a) => {
            const pctA = a.assigned ? Math.round((100 * a.done) / a.assigned) : 0;
            const row = h(
              'span',
              {
                class: `an-assignee${a.annotator === q.annotator ? ' me' : ''}`,
                role: 'listitem',
                'data-annotator': a.annotator,
                title: `${a.annotator}: ${a.done} of ${a.assigned} assigned item(s) labelled${a.extra ? `, and ${a.extra} not assigned to them` : ''}`,
              },
              h('b', {}, a.annotator === q.annotator ? `${a.annotator} (you)` : a.annotator),
              ` ${a.done} / ${a.assigned}`,
              a.extra ? h('span', { class: 'muted' }, ` +${a.extra}`) : null,
            );
            const meter = h('span', { class: 'an-meter' }, h('span', { class: 'an-meter-fill' }));
            (meter.firstChild as HTMLElement).style.width = `${pctA}%`;
            row.append(meter);
            return row;
          }),
        h('span', { class: 'muted', id: 'unassigned' }, `${q.assignment.unassigned} unassigned`),
      )
    : null;
  const instructions = q.instructions
    ? h(
        'details',
        { class: 'an-instructions', id: 'instructions', open: true },
        h(
          'summary',
          {},
          'Instructions ',
          h('span', { class: 'muted' }, `v${q.instructions.version} by ${q.instructions.author}`),
        ),
        markdown(q.instructions.text),
      )
    : null;
  const bar = h('vscode-progress-bar', { value: pct, max: 100, 'aria-label': `${pct}% done` });
  if (!item) {
    app.replaceChildren(
      header,
      bar,
      ...(assignment ? [assignment] : []),
      ...(instructions ? [instructions] : []),
      h(
        'section',
        { class: 'an-empty', id: 'queue-empty' },
        h('h2', {}, q.total ? 'Nothing left for you in this queue' : 'This queue is empty'),
        h(
          'p',
          { class: 'muted' },
          q.total
            ? 'Every item has the annotators it needs (or is reserved by someone else). Browse with k / j, or open another queue.'
            : 'No item matches. Score a run with the human judge (or the LLM judge, for an audit) first.',
        ),
        h(
          'vscode-button',
          { id: 'browse', secondary: true, onclick: () => void go(() => host.rpc.request(ItemAtRequest, { pos: 0 })) },
          'Browse from the first item (j)',
        ),
      ),
    );
    app.removeAttribute('aria-busy');
    keepFocus();
    return;
  }
  const it = item;
  const left = h(
    'section',
    { class: 'an-item', id: 'item', 'data-item': it.itemId, 'data-pos': String(it.pos) },
    h(
      'div',
      { class: 'an-task' },
      h('strong', {}, it.taskTitle),
      h(
        'span',
        { class: 'muted' },
        ` · item ${it.pos + 1} of ${it.size}${it.suite ? ` · ${it.suite}` : ''}${it.runId ? ` · run ${it.runId}` : ''}`,
      ),
      it.assignedTo
        ? h(
            'span',
            { class: `an-assigned-to${it.assignedTo === q.annotator ? ' me' : ''}`, id: 'assigned-to' },
            ` · assigned to ${it.assignedTo === q.annotator ? 'you' : it.assignedTo}`,
          )
        : null,
    ),
    it.orphaned
      ? h(
          'p',
          { class: 'warn', id: 'orphaned' },
          'The run of this item was deleted: its evidence is gone, its verdicts remain (orphaned).',
        )
      : null,
    ...it.fields.map((f, fi) => {
      const body = f.paragraphs
        ? h(
            'div',
            { class: 'paras' },
            ...splitParas(f.text).map((p, k) => {
              const ref: CitedEvidence | null = it.runId
                ? {
                    kind: 'span',
                    runId: it.runId,
                    artefact: f.label,
                    start: p.start,
                    end: p.end,
                    quote: p.text.slice(0, 200),
                  }
                : null;
              const cited = ref ? isCited(ref) : false;
              return h(
                'div',
                { class: `para${cited ? ' cited' : ''}`, id: `para-${fi}-${k}` },
                f.markdown ? markdown(p.text) : h('p', {}, p.text),
                ref
                  ? h(
                      'button',
                      {
                        class: 'link cite-para',
                        title: 'cite this paragraph as evidence',
                        onclick: () => toggleCite(ref),
                      },
                      cited ? '✓ cited' : 'cite ¶',
                    )
                  : null,
              );
            }),
          )
        : f.markdown
          ? markdown(f.text)
          : h('p', { class: 'plain' }, f.text);
      return h('div', { class: 'field' }, h('h3', {}, f.label), body);
    }),
    it.claims.length ? claimsSection(it) : null,
  );
  const controls = h(
    'div',
    { class: 'an-controls', id: 'controls' },
    ...it.controls.map((c, ci) =>
      h(
        'div',
        {
          class: `control${ci === activeControl && it.controls.length > 1 ? ' active' : ''}`,
          role: 'radiogroup',
          'aria-label': c.label,
        },
        h('div', { class: 'control-label' }, c.label),
        h(
          'div',
          { class: 'options' },
          ...c.options.map((o) => {
            const on = draft.choice[c.field] === o.value;
            return h(
              'button',
              {
                class: `opt${on ? ' on' : ''}`,
                role: 'radio',
                'aria-checked': on ? 'true' : 'false',
                'data-field': c.field,
                'data-value': String(o.value),
                title: o.hint ?? o.label,
                onclick: () => choose(ci, o.value),
              },
              h('kbd', {}, o.key),
              ` ${o.label}`,
            );
          }),
        ),
        ...c.options
          .filter((o) => o.hint)
          .map((o) =>
            h(
              'div',
              { class: `hint${draft.choice[c.field] === o.value ? ' on' : ''}` },
              h('b', {}, `${o.label}: `),
              o.hint!,
            ),
          ),
      ),
    ),
  );
  const summary = it.controls
    .filter((c) => draft.choice[c.field] !== undefined)
    .map(
      (c) =>
        `${c.label} = ${c.options.find((o) => o.value === draft.choice[c.field])?.label ?? String(draft.choice[c.field])}`,
    );
  const draftLine = h(
    'p',
    { class: 'muted', id: 'draft-summary' },
    summary.length ? `Your verdict: ${summary.join(' · ')}` : 'No verdict chosen yet.',
  );
  const note = h('vscode-textarea', {
    id: 'note',
    rows: 3,
    placeholder: 'Note (why this verdict) — n to focus, Esc to leave',
    'aria-label': 'note',
  }) as HTMLElement & { value: string };
  note.value = draft.note;
  note.addEventListener('input', () => {
    draft.note = note.value;
    save(false);
  });
  const rows = evidenceRows(it);
  const evList = h(
    'ul',
    {
      class: `evidence${evidenceMode ? ' active' : ''}`,
      id: 'evidence',
      tabindex: 0,
      role: 'listbox',
      'aria-label': 'evidence',
    },
    ...rows.map((r, k) =>
      h(
        'li',
        {
          class: `ev${k === evidenceIndex && evidenceMode ? ' sel' : ''}${r.hot ? ' hot' : ''}${isCited(r.ref) ? ' cited' : ''}`,
          role: 'option',
          'aria-selected': isCited(r.ref) ? 'true' : 'false',
          'data-ev': keyOf(r.ref),
        },
        h('input', {
          type: 'checkbox',
          tabindex: -1,
          'aria-label': `cite ${r.label}`,
          ...(isCited(r.ref) ? { checked: true } : {}),
          onchange: () => toggleCite(r.ref),
        }),
        h('span', { class: 'ev-label' }, r.label),
        h('span', { class: 'ev-detail' }, r.detail),
        h('button', { class: 'link', title: 'open where it lives', onclick: () => void openEvidence(r.ref) }, 'open'),
      ),
    ),
  );
  const revealed = it.revealed
    ? h(
        'div',
        { class: 'an-revealed', id: 'revealed' },
        h('h3', {}, 'Other verdicts'),
        h(
          'p',
          {},
          `Resolution: ${it.revealed.resolution.decidedBy}${it.revealed.resolution.label !== null ? ` → ${it.revealed.resolution.label}` : ''}`,
        ),
        h(
          'ul',
          {},
          ...it.revealed.others.map((o) =>
            h(
              'li',
              { class: o.superseded ? 'superseded' : '' },
              h('b', {}, o.who),
              ` (${o.kind}) `,
              h('code', {}, o.label),
              o.note ? ` — ${o.note}` : '',
              o.superseded ? ' (edited later)' : '',
            ),
          ),
        ),
      )
    : h(
        'p',
        { class: 'muted', id: 'blind' },
        "Blind: the LLM judge's and other annotators' verdicts appear after you submit.",
      );
  const actions = h(
    'div',
    { class: 'an-actions' },
    h(
      'vscode-button',
      { id: 'submit', onclick: () => void submit() },
      it.mine
        ? 'Save edit (Ctrl+Enter)'
        : it.role === 'adjudicator'
          ? 'Adjudicate (Ctrl+Enter)'
          : 'Submit (Ctrl+Enter)',
    ),
    h(
      'vscode-button',
      { id: 'skip', secondary: true, onclick: () => void skip() },
      draft.submitted ? 'Next item (Enter)' : 'Skip (s)',
    ),
    h('vscode-button', { id: 'prev', secondary: true, onclick: () => void browse(-1) }, 'Previous (k)'),
    h('vscode-button', { id: 'next', secondary: true, onclick: () => void browse(1) }, 'Next (j)'),
  );
  const right = h(
    'section',
    { class: 'an-side' },
    instructions,
    it.role === 'adjudicator' ? h('p', { class: 'warn' }, 'Adjudication: your verdict is final.') : null,
    it.mine
      ? h(
          'p',
          { class: 'muted', id: 'mine' },
          `You answered this item at ${it.mine.at.slice(0, 16).replace('T', ' ')}; a new verdict supersedes it (history kept).`,
        )
      : null,
    controls,
    draftLine,
    note,
    h(
      'h3',
      { id: 'evidence-title' },
      `Evidence (${draft.cited.length} cited) `,
      h(
        'span',
        { class: 'muted' },
        `— e to cite${it.evidence.hiddenCells ? ` · ${it.evidence.hiddenCells} cell${it.evidence.hiddenCells === 1 ? '' : 's'} mentioning nothing of the item not listed` : ''}`,
      ),
    ),
    evList,
    actions,
    message
      ? h('p', { class: message.startsWith('✔') ? 'ok' : 'error', id: 'message', role: 'status' }, message)
      : null,
    revealed,
  );
  const keys = h(
    'footer',
    { class: 'an-keys' },
    isYesNo(it) ? 'y / n verdict · Shift+N note' : 'digits choose · n note',
    ' · e evidence · s skip · j / k next / previous · Ctrl+Enter submit',
    h('span', { id: 'paint-ms', class: 'muted' }, ''),
  );
  app.replaceChildren(
    header,
    bar,
    ...(assignment ? [assignment] : []),
    h('div', { class: 'an-main' }, left, right),
    keys,
  );
  app.removeAttribute('aria-busy');
  if (evidenceMode) {
    evList.focus();
    evList.querySelector('.sel')?.scrollIntoView({ block: 'nearest' });
  } else keepFocus();
}

/** Keeps keyboard focus inside the panel after a re-render removed the focused element (keys must keep working). */
function keepFocus(): void {
  const a = document.activeElement;
  if (!a || a === document.body || !a.isConnected) {
    app.tabIndex = -1;
    app.focus({ preventScroll: true });
  }
}

/** Paragraphs of a text with their character offsets. */
function splitParas(text: string): Array<{ text: string; start: number; end: number }> {
  const out: Array<{ text: string; start: number; end: number }> = [];
  const re = /\n\s*\n/g;
  let at = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > at) out.push({ text: text.slice(at, m.index), start: at, end: m.index });
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push({ text: text.slice(at), start: at, end: text.length });
  return out.length ? out : [{ text, start: 0, end: text.length }];
}

function choose(ci: number, value: string | number | boolean): void {
  if (!item) return;
  const c = item.controls[ci];
  if (!c) return;
  draft.choice[c.field] = value;
  activeControl = Math.min(item.controls.length - 1, ci + 1);
  message = '';
  save();
  render();
}

function toggleCite(ref: CitedEvidence): void {
  draft.cited = isCited(ref) ? draft.cited.filter((c) => keyOf(c) !== keyOf(ref)) : [...draft.cited, ref];
  save();
  render();
}

async function openEvidence(ref: CitedEvidence): Promise<void> {
  try {
    await host.rpc.request(OpenEvidenceRequest, { evidence: ref });
  } catch (e) {
    message = `Could not open: ${e instanceof Error ? e.message : String(e)}`;
    render();
  }
}

/** Shows a state from the host, restoring the saved draft when it is for the same item. */
/** Working copies of claims' facts being split / merged / edited (item id + claim index → facts), until saved. */
const factEdits = new Map<string, string[]>();

/**
 * Atomic facts of the item's claims (issue 43): each fact an editable line, split at the cursor, merged with the next,
 * removed; "Save split" records the expert's split (append-only; it supersedes their previous one). Facts are text.
 */
function claimsSection(it: AnnotationItemView): HTMLElement {
  return h(
    'div',
    { class: 'field an-claims', id: 'atomic-facts' },
    h('h3', {}, 'Atomic facts'),
    h(
      'p',
      { class: 'muted' },
      'Split a claim into facts that each state one checkable thing: edit a fact, split it at the cursor, merge it with the next. Saving records your split; scoring with claims=atomic uses it.',
    ),
    ...it.claims.map((c) => {
      const key = `${it.itemId}:${c.index}`;
      const facts = factEdits.get(key) ?? [...c.facts];
      const edited = factEdits.has(key);
      const set = (next: string[]) => {
        factEdits.set(key, next);
        render();
      };
      const list = h(
        'ol',
        { class: 'facts' },
        ...facts.map((f, k) => {
          const input = h('input', {
            type: 'text',
            class: 'fact',
            id: `fact-${c.index}-${k}`,
            'aria-label': `fact ${k + 1} of claim ${c.index + 1}`,
          }) as HTMLInputElement;
          input.value = f;
          input.addEventListener('input', () => {
            const cur = factEdits.get(key) ?? [...facts];
            cur[k] = input.value;
            factEdits.set(key, cur);
          });
          const cur = () => factEdits.get(key) ?? [...facts];
          const steps = c.steps[k] ?? [];
          return h(
            'li',
            { class: 'fact-row' },
            input,
            h(
              'button',
              {
                class: 'link split',
                title: 'split this fact at the cursor',
                onclick: () => {
                  const at = input.selectionStart ?? input.value.length;
                  const a = input.value.slice(0, at).trim();
                  const b = input.value.slice(at).trim();
                  if (!a || !b) return;
                  const next = cur();
                  next.splice(k, 1, a, b);
                  set(next);
                },
              },
              'split',
            ),
            k < facts.length - 1
              ? h(
                  'button',
                  {
                    class: 'link merge',
                    title: 'merge with the next fact',
                    onclick: () => {
                      const next = cur();
                      next.splice(k, 2, `${next[k]!.trim()} ${next[k + 1]!.trim()}`);
                      set(next);
                    },
                  },
                  'merge ↓',
                )
              : null,
            facts.length > 1
              ? h(
                  'button',
                  {
                    class: 'link remove',
                    title: 'remove this fact',
                    onclick: () => {
                      const next = cur();
                      next.splice(k, 1);
                      set(next);
                    },
                  },
                  '×',
                )
              : null,
            h(
              'span',
              { class: 'muted fact-steps', title: "steps whose queries or cells mention this fact's values" },
              steps.length
                ? `steps ${steps
                    .slice(0, 6)
                    .map((s) => s + 1)
                    .join(', ')}`
                : 'no step mentions it',
            ),
          );
        }),
      );
      return h(
        'div',
        { class: 'claim', 'data-claim': String(c.index) },
        h('p', { class: 'claim-text' }, h('span', { class: 'muted' }, `${c.source} ${c.index + 1}: `), c.text),
        h(
          'p',
          { class: 'muted claim-from' },
          edited
            ? 'edited, not saved'
            : c.from === 'expert'
              ? `split by ${c.by ?? 'an expert'}`
              : 'proposed by the list-marker rule',
        ),
        list,
        h(
          'vscode-button',
          {
            class: 'save-split',
            id: `save-split-${c.index}`,
            secondary: !edited,
            onclick: () => void saveSplit(it, c.index, factEdits.get(key) ?? facts),
          },
          'Save split',
        ),
      );
    }),
  );
}

async function saveSplit(it: AnnotationItemView, index: number, facts: string[]): Promise<void> {
  try {
    const s = await host.rpc.request(SaveFactSplitRequest, { pos: it.pos, itemId: it.itemId, index, facts });
    factEdits.delete(`${it.itemId}:${index}`);
    message = `✔ split of ${it.claims.find((c) => c.index === index)?.source ?? 'claim'} ${index + 1} saved`;
    show(s, { keepDraft: true });
  } catch (e) {
    message = e instanceof Error ? e.message : String(e);
    render();
  }
}

function show(s: AnnotationState, opts: { keepDraft?: boolean } = {}): void {
  queue = s.queue;
  item = s.item;
  const same = opts.keepDraft && item && draft.itemId === item.itemId && draft.queueId === s.queue.queueId;
  if (!same) {
    const from =
      item?.draft ??
      (item?.mine ? { choice: item.mine.choice, note: item.mine.note ?? '', evidence: item.mine.evidence } : undefined);
    draft = item
      ? {
          queueId: s.queue.queueId,
          pos: item.pos,
          itemId: item.itemId,
          choice: { ...(from?.choice ?? {}) },
          note: from?.note ?? '',
          cited: [...(from?.evidence ?? [])],
          submitted: false,
        }
      : { queueId: s.queue.queueId, pos: -1, itemId: null, choice: {}, note: '', cited: [], submitted: false };
    activeControl = item
      ? Math.min(item.controls.length - 1, item.controls.filter((c) => draft.choice[c.field] !== undefined).length)
      : 0;
    evidenceMode = false;
    evidenceIndex = 0;
    message = '';
  }
  host.setViewState(draft);
  render();
  const ms = performance.now() - askedAt;
  const paint = document.getElementById('paint-ms');
  if (paint) paint.textContent = ` · shown in ${ms.toFixed(0)} ms`;
}

/** Asks the host for a state (next item or an item by position) and shows it. */
async function go(ask: () => Promise<AnnotationState>): Promise<void> {
  askedAt = performance.now();
  try {
    show(await ask());
  } catch (e) {
    message = e instanceof Error ? e.message : String(e);
    render();
  }
}

const skip = () => go(() => host.rpc.request(NextItemRequest, { afterPos: item?.pos ?? -1 }));
async function browse(d: number): Promise<void> {
  if (!queue || !queue.total) return;
  const pos = Math.max(0, Math.min(queue.total - 1, (item?.pos ?? -1) + d));
  await go(() => host.rpc.request(ItemAtRequest, { pos }));
}

async function submit(): Promise<void> {
  if (!item) return;
  const missing = item.controls.filter((c) => draft.choice[c.field] === undefined);
  if (missing.length) {
    message = `Choose ${missing.map((c) => c.label).join(', ')} first (${missing[0]!.options.map((o) => o.key).join('/')}).`;
    render();
    return;
  }
  try {
    const s = await host.rpc.request(SubmitVerdictRequest, {
      pos: item.pos,
      itemId: item.itemId,
      choice: draft.choice,
      note: draft.note,
      evidence: draft.cited,
      supersedes: item.mine?.annotationId ?? null,
    });
    queue = s.queue;
    item = s.item;
    draft.submitted = true;
    message = '✔ Saved. Enter: next item.';
    save();
    render();
  } catch (e) {
    message = e instanceof Error ? e.message : String(e);
    render();
  }
}

document.addEventListener('keydown', (ev) => {
  const t = ev.target as HTMLElement | null;
  const typing =
    !!t &&
    (t.tagName === 'VSCODE-TEXTAREA' ||
      t.tagName === 'TEXTAREA' ||
      (t.tagName === 'INPUT' && (t as HTMLInputElement).type !== 'checkbox'));
  if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) {
    ev.preventDefault();
    void submit();
    return;
  }
  if (typing) {
    if (ev.key === 'Escape') (t as HTMLElement).blur();
    return;
  }
  if (!item) {
    if (ev.key === 'j' || ev.key === 'k') void browse(1);
    return;
  }
  if (evidenceMode) {
    const rows = evidenceRows(item);
    if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      evidenceIndex = Math.max(0, Math.min(rows.length - 1, evidenceIndex + (ev.key === 'ArrowDown' ? 1 : -1)));
      ev.preventDefault();
      render();
      return;
    }
    if (ev.key === ' ' && rows[evidenceIndex]) {
      ev.preventDefault();
      toggleCite(rows[evidenceIndex]!.ref);
      return;
    }
    if (ev.key === 'Enter' && rows[evidenceIndex]) {
      ev.preventDefault();
      void openEvidence(rows[evidenceIndex]!.ref);
      return;
    }
    if (ev.key === 'Escape' || ev.key === 'e') {
      evidenceMode = false;
      ev.preventDefault();
      render();
      return;
    }
    return;
  }
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const yesNo = isYesNo(item);
  if ((ev.key === 'n' && !yesNo) || (ev.key === 'N' && ev.shiftKey)) {
    ev.preventDefault();
    (document.getElementById('note') as HTMLElement | null)?.focus();
    return;
  }
  switch (ev.key) {
    case 'j':
      ev.preventDefault();
      void browse(1);
      return;
    case 'k':
      ev.preventDefault();
      void browse(-1);
      return;
    case 's':
      ev.preventDefault();
      void skip();
      return;
    case 'e':
      ev.preventDefault();
      evidenceMode = evidenceRows(item).length > 0;
      if (!evidenceMode) {
        message = 'This item has no evidence to cite (no run, or the run was deleted).';
      }
      render();
      return;
    case 'Enter':
      if (draft.submitted) {
        ev.preventDefault();
        void skip();
      }
      return;
    default:
      break;
  }
  const order = [activeControl, ...item.controls.map((_, i) => i).filter((i) => i !== activeControl)];
  for (const ci of order) {
    const o = item.controls[ci]?.options.find((x) => x.key === ev.key);
    if (o) {
      ev.preventDefault();
      choose(ci, o.value);
      return;
    }
  }
});

host.rpc.onNotification(QueueProgressNotification, ({ queue: q }) => {
  if (queue && q.queueId === queue.queueId) {
    queue = q;
    render();
  }
});

ready<AnnotationState>(host, 'annotation').then(
  (s) => {
    // The host serves the item this annotator was on (its reservation) with the draft kept in the store; the
    // webview's own state only fills in when the store has no draft for that same item.
    const saved = host.getViewState<Draft>();
    if (
      saved &&
      s.item &&
      !s.item.draft &&
      saved.queueId === s.queue.queueId &&
      saved.itemId === s.item.itemId &&
      !saved.submitted
    ) {
      draft = saved;
      show(s, { keepDraft: true });
      return;
    }
    show(s);
  },
  (e: unknown) => {
    app.replaceChildren(
      h('p', { class: 'error' }, `Could not load the queue: ${e instanceof Error ? e.message : String(e)}`),
    );
  },
);
