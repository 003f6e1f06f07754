/**
 * Checklist editor (issue 15): one block's checklist, edited item by item and saved as a version.
 * Keys (outside text fields): ↑/↓ or j/k select an item, Enter edits it (focus its question), a adds an item,
 * r retires / restores it, Ctrl+S saves (the note field first), h shows the version history, Esc leaves a field.
 * In the evidence query: Ctrl+Enter runs it (the result is attached to the item). The unsaved edit survives a reload.
 */
import {
  LoadVersionRequest,
  RescoreRequest,
  RunEvidenceQueryRequest,
  SaveChecklistRequest,
  type ChecklistEditorState,
  type EditorItem,
  type SaveChecklistResult,
} from '../src/protocol/checklist.ts';
import css from './checklist.css';
import { ExecuteCommandRequest } from '../src/protocol/webview.ts';
import { connectHost, h, ready } from './shared/host.ts';
import { adoptCss } from './shared/styles.ts';

const host = connectHost();
const app = document.getElementById('app') as HTMLElement;
adoptCss(css);

/** What survives a reload: the items being edited and where the editor was. */
interface Draft {
  panelKey: string;
  base: number | null;
  items: EditorItem[];
  note: string;
  dirty: boolean;
  sel: number;
}

let state: (ChecklistEditorState & { panelKey: string }) | undefined;
let draft: Draft = { panelKey: '', base: null, items: [], note: '', dirty: false, sel: 0 };
/** A version shown read-only (history), or null while editing. */
let viewing: { version: number | null; items: EditorItem[] } | null = null;
let showHistory = false;
let message: { kind: 'ok' | 'error' | 'warn'; text: string; lines?: string[] } | null = null;
let conflict: Extract<SaveChecklistResult, { conflict: unknown }>['conflict'] | null = null;
/** Contradictions the last save found (shown with "Save anyway"). */
let contradictions: Extract<SaveChecklistResult, { contradictions: unknown }>['contradictions'] | null = null;
/** Judgements the last re-score left pending (linked to their queue). */
let rescorePending = 0;
let queryBusy = false;
let rescoreText = '';
/** Items the last re-score judged incorrect (issue 19: each offers "Tag failure"). */
let rescoreFailed: { runId: string; items: Array<{ ref: string; question: string; detail: string }> } | null = null;

const keep = () => host.setViewState(draft);
const items = () => (viewing ? viewing.items : draft.items);
const cur = (): EditorItem | undefined => items()[draft.sel];

function touch(): void {
  draft.dirty = true;
  keep();
}

function nextId(): string {
  let n = draft.items.length + 1;
  while (draft.items.some((i) => i.id === `c${n}`)) n++;
  return `c${n}`;
}

function addItem(): void {
  if (!state || viewing) return;
  const it: EditorItem = {
    id: nextId(),
    kind: state.kind,
    question: '',
    answer: '',
    author: state.annotator,
    updatedAt: new Date().toISOString(),
    ...(state.kind === 'fact' && state.entity ? { entity: state.entity } : {}),
    ...(state.kind === 'criterion' ? { rubric: ['', '', '', '', ''] } : {}),
  };
  draft.items.push(it);
  draft.sel = draft.items.length - 1;
  touch();
  render();
  (document.getElementById('f-question') as HTMLTextAreaElement | null)?.focus();
}

function toggleRetired(): void {
  const it = cur();
  if (!it || viewing) return;
  it.retired = !it.retired;
  touch();
  render();
}

function field(
  label: string,
  id: string,
  value: string,
  onInput: (v: string) => void,
  o: { multiline?: boolean; placeholder?: string; readOnly?: boolean; rows?: number } = {},
): HTMLElement {
  const input = o.multiline
    ? h('textarea', {
        id,
        rows: o.rows ?? 2,
        placeholder: o.placeholder ?? '',
        ...(o.readOnly ? { readonly: true } : {}),
      })
    : h('input', { id, type: 'text', placeholder: o.placeholder ?? '', ...(o.readOnly ? { readonly: true } : {}) });
  input.value = value;
  input.addEventListener('input', () => onInput(input.value));
  return h('label', { class: 'fld' }, h('span', { class: 'fld-label' }, label), input);
}

function resultTable(r: NonNullable<NonNullable<EditorItem['evidence']>['result']>): HTMLElement {
  const t = h('table', { class: 'result' });
  t.append(h('tr', {}, ...r.columns.map((c) => h('th', {}, c))));
  for (const row of r.rows.slice(0, 20)) {
    t.append(h('tr', {}, ...row.map((v) => h('td', {}, v === null ? 'NULL' : String(v)))));
  }
  return h(
    'div',
    { class: 'result-wrap' },
    t,
    h(
      'div',
      { class: 'muted' },
      `${r.rowCount} row${r.rowCount === 1 ? '' : 's'}${r.truncated ? ' (truncated)' : ''}${r.rows.length > 20 ? ', first 20 shown' : ''}`,
    ),
  );
}

async function runQuery(): Promise<void> {
  const it = cur();
  const sql = (document.getElementById('f-sql') as HTMLTextAreaElement | null)?.value ?? it?.evidence?.sql ?? '';
  if (!it || viewing || queryBusy) return;
  queryBusy = true;
  message = { kind: 'warn', text: 'Running the query in the sandbox…' };
  render();
  try {
    const result = await host.rpc.request(RunEvidenceQueryRequest, { sql });
    it.evidence = { ...(it.evidence ?? {}), sql, result };
    message = { kind: 'ok', text: `Query result attached to ${it.id}.` };
    touch();
  } catch (e) {
    message = { kind: 'error', text: `${it.id}: ${e instanceof Error ? e.message : String(e)}` };
  } finally {
    queryBusy = false;
    render();
  }
}

function itemForm(it: EditorItem): HTMLElement {
  const ro = !!viewing;
  const form = h('div', { class: 'form' });
  form.append(h('h3', {}, `${it.id} · ${it.kind}${it.retired ? ' · retired' : ''}`));
  form.append(
    field(
      it.kind === 'fact' ? 'Fact asked about' : 'Criterion',
      'f-question',
      it.question,
      (v) => {
        it.question = v;
        touch();
        updateRow();
      },
      {
        multiline: true,
        readOnly: ro,
        placeholder:
          it.kind === 'fact'
            ? 'e.g. How many hospital admissions does the patient have?'
            : 'e.g. Explains the main driver of the trend',
      },
    ),
  );
  form.append(
    field(
      it.kind === 'fact' ? 'Expected answer' : 'What a full-score report does (optional)',
      'f-answer',
      it.answer,
      (v) => {
        it.answer = v;
        touch();
        updateRow();
      },
      { readOnly: ro },
    ),
  );
  if (it.kind === 'fact') {
    form.append(
      field(
        'Entity',
        'f-entity',
        it.entity ?? '',
        (v) => {
          it.entity = v || undefined;
          touch();
        },
        { readOnly: ro },
      ),
    );
    form.append(
      field(
        'Source (table.column or text)',
        'f-source',
        it.sourceText ?? '',
        (v) => {
          it.sourceText = v || undefined;
          touch();
        },
        { readOnly: ro, placeholder: 'e.g. hosp_admissions.hadm_id' },
      ),
    );
  } else {
    const rub = it.rubric ?? ['', '', '', '', ''];
    rub.forEach((r, k) =>
      form.append(
        field(
          `Score ${k + 1}`,
          `f-rubric-${k + 1}`,
          r,
          (v) => {
            rub[k] = v;
            it.rubric = rub;
            touch();
          },
          { readOnly: ro },
        ),
      ),
    );
  }
  if (it.kind === 'fact') {
    form.append(h('h4', {}, 'Evidence'));
    if (state?.canQuery) {
      form.append(
        field(
          'Query in the block\u2019s database (read-only, sandboxed; Ctrl+Enter runs)',
          'f-sql',
          it.evidence?.sql ?? '',
          (v) => {
            it.evidence = { ...(it.evidence ?? {}), sql: v };
            delete it.evidence.result;
            touch();
          },
          {
            multiline: true,
            rows: 3,
            readOnly: ro,
            placeholder: state.entity
              ? `SELECT COUNT(*) FROM hosp_admissions WHERE subject_id = ${state.entity}`
              : 'SELECT …',
          },
        ),
      );
      if (!ro) {
        form.append(
          h(
            'div',
            { class: 'row' },
            h(
              'button',
              { id: 'run-query', onclick: () => void runQuery(), ...(queryBusy ? { disabled: true } : {}) },
              queryBusy ? 'Running…' : 'Run query and attach',
            ),
          ),
        );
      }
    }
    if (it.evidence?.result) form.append(resultTable(it.evidence.result));
    form.append(
      field(
        'Or values you checked by hand',
        'f-values',
        it.evidence?.values ?? '',
        (v) => {
          it.evidence = { ...(it.evidence ?? {}), values: v || undefined };
          touch();
        },
        { readOnly: ro },
      ),
    );
    if (state?.tables.length) {
      const det = h('details', { class: 'tables' }, h('summary', {}, `${state.tables.length} tables`));
      det.append(
        h('ul', {}, ...state.tables.map((t) => h('li', {}, h('code', {}, t.name), ` ${t.columns.join(', ')}`))),
      );
      form.append(det);
    }
  }
  form.append(
    h(
      'div',
      { class: 'muted' },
      it.author === 'native'
        ? 'from the suite\u2019s own checklist'
        : `last changed by ${it.author} · ${new Date(it.updatedAt).toLocaleString()}`,
    ),
  );
  return form;
}

/** Refreshes the selected row's text without re-rendering the form (keeps the caret). */
function updateRow(): void {
  const it = cur();
  const row = document.querySelector(`.item-row[data-index="${draft.sel}"]`);
  if (!it || !row) return;
  const q = row.querySelector('.q');
  const a = row.querySelector('.a');
  if (q) q.textContent = it.question || '(no text yet)';
  if (a) a.textContent = it.answer;
  const head = document.querySelector('.header .dirty');
  if (head) head.textContent = draft.dirty ? '● unsaved changes' : '';
}

async function save(confirmContradictions = false): Promise<void> {
  if (!state || viewing) return;
  const note = (document.getElementById('f-note') as HTMLInputElement | null)?.value ?? draft.note;
  draft.note = note;
  contradictions = null;
  const r = await host.rpc.request(SaveChecklistRequest, {
    base: draft.base,
    items: draft.items,
    note,
    ...(confirmContradictions ? { confirmContradictions } : {}),
  });
  if (r.ok) {
    state = { ...r.state, panelKey: state.panelKey };
    draft = {
      panelKey: state.panelKey,
      base: state.base,
      items: structuredClone(state.items),
      note: '',
      dirty: false,
      sel: Math.min(draft.sel, Math.max(0, state.items.length - 1)),
    };
    conflict = null;
    message = r.created
      ? { kind: 'ok', text: `Saved version ${state.base}.` }
      : { kind: 'warn', text: `No change: version ${state.base} already has these items.` };
  } else if ('conflict' in r) {
    conflict = r.conflict;
    message = { kind: 'error', text: r.conflict.message };
  } else if ('contradictions' in r) {
    // issue 42: an expected answer its own evidence contradicts is saved only when the expert confirms it
    contradictions = r.contradictions;
    message = {
      kind: 'warn',
      text: 'Not saved yet: the evidence contradicts these expected answers. Fix them, or save anyway if the evidence query is the one that is wrong:',
      lines: r.contradictions.map((c) => `${c.id}: ${c.message}`),
    };
  } else {
    message = { kind: 'error', text: 'Not saved:', lines: r.problems };
  }
  keep();
  render();
}

/** Resolves a conflict for one item: take the other expert's version, or keep mine on top of theirs. */
function resolveConflict(id: string, take: 'theirs' | 'mine'): void {
  if (!conflict) return;
  const t = conflict.theirs.find((x) => x.id === id);
  if (take === 'theirs') {
    const k = draft.items.findIndex((i) => i.id === id);
    if (t?.item) {
      if (k >= 0) draft.items[k] = structuredClone(t.item);
      else draft.items.push(structuredClone(t.item));
    } else if (k >= 0) draft.items.splice(k, 1);
  }
  conflict.theirs = conflict.theirs.filter((x) => x.id !== id);
  if (!conflict.theirs.length) {
    // Every clash decided: the next save is an edit of the version that was saved meanwhile.
    draft.base = conflict.latest;
    message = { kind: 'warn', text: `Resolved. Save again to make a version on top of version ${conflict.latest}.` };
    conflict = null;
  }
  touch();
  render();
}

async function viewVersion(v: number | 'native' | null): Promise<void> {
  if (v === null) {
    viewing = null;
  } else {
    const r = await host.rpc.request(LoadVersionRequest, { version: v });
    viewing = r;
  }
  draft.sel = 0;
  render();
}

/** The re-scored run's items judged incorrect, each with "Tag failure" (opens its trajectory with the item attached). */
function failedList(): HTMLElement | string {
  if (!rescoreFailed) return '';
  const f = rescoreFailed;
  return h(
    'ul',
    { id: 'failed-items' },
    ...f.items.map((i) =>
      h(
        'li',
        {},
        `${i.ref}: ${i.question} (${i.detail}) `,
        h(
          'button',
          {
            class: 'secondary tag-failure',
            onclick: () =>
              void host.rpc.request(ExecuteCommandRequest, {
                command: 'loupe.tagFailure',
                args: [{ runId: f.runId, ...i }],
              }),
          },
          'Tag failure',
        ),
      ),
    ),
  );
}

async function rescore(): Promise<void> {
  const run = (document.getElementById('rescore-run') as HTMLSelectElement | null)?.value;
  const ver = (document.getElementById('rescore-version') as HTMLSelectElement | null)?.value;
  if (!run || !ver) return;
  rescoreText = 'Scoring…';
  render();
  try {
    const r = await host.rpc.request(RescoreRequest, {
      runId: run,
      version: ver === 'native' ? 'native' : Number(ver),
    });
    rescoreText = `Against ${r.checklist}: ${r.summary}`;
    rescorePending = r.pending ?? 0;
    rescoreFailed = r.failed?.length ? { runId: run, items: r.failed } : null;
  } catch (e) {
    rescoreText = e instanceof Error ? e.message : String(e);
  }
  render();
}

function render(): void {
  if (!state) return;
  const s = state;
  const list = items();
  app.replaceChildren();
  const editing = viewing
    ? viewing.version === null
      ? 'the suite\u2019s own checklist (read-only)'
      : `version ${viewing.version} (read-only)`
    : draft.base
      ? `editing version ${draft.base}`
      : s.nativeCount
        ? `starting from the suite\u2019s own checklist (${s.nativeCount} items)`
        : 'no checklist yet: runs of this block cannot be scored until one is saved';
  app.append(
    h(
      'div',
      { class: 'header' },
      h('h1', {}, `Checklist · ${s.blockTitle}`),
      h(
        'span',
        { class: 'muted' },
        `${s.benchmarkTitle}${s.entity ? ` · entity ${s.entity}` : ''} · ${s.kind === 'fact' ? 'fact items' : 'criteria (1–5)'} · ${s.annotator}`,
      ),
      h('span', { class: viewing ? 'warn' : 'muted' }, editing),
      h('span', { class: 'dirty warn' }, draft.dirty && !viewing ? '● unsaved changes' : ''),
    ),
  );
  if (message) {
    app.append(
      h(
        'div',
        { class: `msg ${message.kind}`, role: 'status' },
        message.text,
        ...(message.lines ?? []).map((l) => h('div', {}, `• ${l}`)),
        contradictions?.length
          ? h(
              'div',
              { class: 'row' },
              h('button', { id: 'save-anyway', class: 'secondary', onclick: () => void save(true) }, 'Save anyway'),
            )
          : '',
      ),
    );
  }
  if (conflict) {
    const box = h('div', { class: 'conflict' }, h('strong', {}, 'Their change:'));
    for (const t of conflict.theirs) {
      const mine = draft.items.find((i) => i.id === t.id);
      box.append(
        h(
          'div',
          { class: 'clash' },
          h(
            'div',
            {},
            h('b', {}, t.id),
            ` theirs: ${t.item ? `${t.item.question} = ${t.item.answer}${t.item.retired ? ' (retired)' : ''} — ${t.item.author}` : 'removed'}`,
          ),
          h(
            'div',
            {},
            `yours: ${mine ? `${mine.question} = ${mine.answer}${mine.retired ? ' (retired)' : ''}` : 'removed'}`,
          ),
          h(
            'div',
            { class: 'row' },
            h('button', { class: 'secondary', onclick: () => resolveConflict(t.id, 'theirs') }, 'Take theirs'),
            h('button', { class: 'secondary', onclick: () => resolveConflict(t.id, 'mine') }, 'Keep mine'),
          ),
        ),
      );
    }
    app.append(box);
  }
  const main = h('div', { class: 'main' });
  const ul = h('ul', { class: 'items', tabindex: 0, role: 'listbox', 'aria-label': 'checklist items' });
  list.forEach((it, k) => {
    const li = h(
      'li',
      {
        class: `item-row${k === draft.sel ? ' sel' : ''}${it.retired ? ' retired' : ''}`,
        'data-index': k,
        role: 'option',
        'aria-selected': k === draft.sel ? 'true' : 'false',
        onclick: () => {
          draft.sel = k;
          keep();
          render();
        },
      },
      h('span', { class: 'id' }, it.id),
      h('span', { class: 'q' }, it.question || '(no text yet)'),
      h('span', { class: 'a' }, it.answer),
      h('span', { class: 'ev' }, it.evidence?.result ? '⛁' : it.evidence?.values ? '✎' : ''),
    );
    ul.append(li);
  });
  if (!list.length) {
    ul.append(h('li', { class: 'muted empty' }, viewing ? 'no items' : 'No items. Press a to add one.'));
  }
  const left = h('div', { class: 'left' }, ul);
  if (!viewing) {
    left.append(
      h(
        'div',
        { class: 'row' },
        h('button', { id: 'add-item', onclick: () => addItem() }, 'Add item (a)'),
        h(
          'button',
          { class: 'secondary', onclick: () => toggleRetired(), ...(cur() ? {} : { disabled: true }) },
          cur()?.retired ? 'Restore (r)' : 'Retire (r)',
        ),
      ),
    );
    const note = h('input', {
      id: 'f-note',
      type: 'text',
      placeholder: 'What changed and why (saved with the version)',
    });
    note.value = draft.note;
    note.addEventListener('input', () => {
      draft.note = note.value;
      keep();
    });
    left.append(
      h(
        'div',
        { class: 'save' },
        note,
        h('button', { id: 'save', onclick: () => void save() }, 'Save version (Ctrl+S)'),
      ),
    );
  } else {
    left.append(h('div', { class: 'row' }, h('button', { onclick: () => void viewVersion(null) }, 'Back to editing')));
  }
  main.append(left);
  const it = cur();
  main.append(h('div', { class: 'right' }, it ? itemForm(it) : h('div', { class: 'muted' }, 'Select an item.')));
  app.append(main);

  const hist = h(
    'details',
    { class: 'history', ...(showHistory ? { open: true } : {}) },
    h('summary', {}, `Versions (${s.versions.length}) — h`),
  );
  hist.addEventListener('toggle', () => {
    showHistory = (hist as HTMLDetailsElement).open;
  });
  const vl = h('ul', {});
  for (const v of [...s.versions].reverse()) {
    const c = v.changes;
    const parts = [
      c.added.length && `+${c.added.length} added`,
      c.changed.length && `${c.changed.length} changed (${c.changed.join(', ')})`,
      c.retired.length && `${c.retired.length} retired (${c.retired.join(', ')})`,
      c.restored.length && `${c.restored.length} restored`,
    ]
      .filter(Boolean)
      .join(', ');
    vl.append(
      h(
        'li',
        {},
        h('button', { class: 'link', onclick: () => void viewVersion(v.version) }, `v${v.version}`),
        ` ${new Date(v.createdAt).toLocaleString()} · ${v.author} · ${v.items} items · ${parts || 'no change'}${v.note ? ` — “${v.note}”` : ''} `,
        h('code', { class: 'muted' }, v.hash.slice(0, 12)),
      ),
    );
  }
  if (s.nativeCount) {
    vl.append(
      h(
        'li',
        {},
        h('button', { class: 'link', onclick: () => void viewVersion('native') }, 'native'),
        ` the suite\u2019s own checklist · ${s.nativeCount} items`,
      ),
    );
  }
  if (!vl.children.length) vl.append(h('li', { class: 'muted' }, 'No version saved yet.'));
  hist.append(vl);
  app.append(hist);

  if (s.runs.length) {
    const runSel = h(
      'select',
      { id: 'rescore-run' },
      ...s.runs.map((r) => h('option', { value: r.id }, `${r.model} · ${r.status} · ${r.id}`)),
    );
    const verSel = h(
      'select',
      { id: 'rescore-version' },
      ...[...s.versions].reverse().map((v) => h('option', { value: String(v.version) }, `version ${v.version}`)),
      h('option', { value: 'native' }, 'suite\u2019s own'),
    );
    app.append(
      h(
        'div',
        { class: 'rescore' },
        h('span', {}, 'Re-score run '),
        runSel,
        h('span', {}, ' against '),
        verSel,
        h('button', { id: 'rescore', class: 'secondary', onclick: () => void rescore() }, 'Re-score'),
        h(
          'div',
          { id: 'rescore-result', class: 'muted' },
          rescoreText,
          // issue 42: "(N pending)" leads to the items waiting for an expert
          rescorePending
            ? h(
                'button',
                {
                  id: 'open-pending',
                  class: 'secondary',
                  onclick: () =>
                    void host.rpc.request(ExecuteCommandRequest, {
                      command: 'loupe.openAnnotationQueue',
                      args: [{ kind: 'items' }],
                    }),
                },
                `Open the ${rescorePending} pending item${rescorePending === 1 ? '' : 's'}`,
              )
            : '',
        ),
        failedList(),
      ),
    );
  }
}

function inField(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return !!t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT');
}

document.addEventListener('keydown', (e) => {
  if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's') {
    e.preventDefault();
    void save();
    return;
  }
  if ((e.ctrlKey || e.metaKey) && e.key === 'Enter' && (e.target as HTMLElement | null)?.id === 'f-sql') {
    e.preventDefault();
    void runQuery();
    return;
  }
  if (e.key === 'Escape' && inField(e)) {
    (e.target as HTMLElement).blur();
    (document.querySelector('.items') as HTMLElement | null)?.focus();
    return;
  }
  if (inField(e) || e.ctrlKey || e.metaKey || e.altKey) return;
  const n = items().length;
  if ((e.key === 'ArrowDown' || e.key === 'j') && n) {
    draft.sel = Math.min(n - 1, draft.sel + 1);
  } else if ((e.key === 'ArrowUp' || e.key === 'k') && n) {
    draft.sel = Math.max(0, draft.sel - 1);
  } else if (e.key === 'Enter') {
    e.preventDefault();
    (document.getElementById('f-question') as HTMLElement | null)?.focus();
    return;
  } else if (e.key === 'a') {
    e.preventDefault();
    addItem();
    return;
  } else if (e.key === 'r') {
    toggleRetired();
    return;
  } else if (e.key === 'h') {
    showHistory = !showHistory;
  } else return;
  e.preventDefault();
  keep();
  render();
  (document.querySelector('.items') as HTMLElement | null)?.focus();
});

void (async () => {
  state = await ready<ChecklistEditorState & { panelKey: string }>(host, 'checklist');
  const saved = host.getViewState<Draft>();
  // An unsaved edit of this block survives a reload; otherwise start from the newest version.
  draft =
    saved && saved.panelKey === state.panelKey && saved.dirty
      ? saved
      : {
          panelKey: state.panelKey,
          base: state.base,
          items: structuredClone(state.items),
          note: '',
          dirty: false,
          sel: 0,
        };
  keep();
  render();
  (document.querySelector('.items') as HTMLElement | null)?.focus();
})();
