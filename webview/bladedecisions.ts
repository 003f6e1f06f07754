/**
 * BLADE decisions panel (issue 18): Author — a spec form (transform / conceptual variable / model, BLADE's fields)
 * whose check runs on data.csv in the sandboxed kernel and shows, per branch, the rows and columns after the step or
 * the error, and Save (a new ground-truth version) once the check of exactly this form passed; Review — one sampled
 * decision at a time with BLADE's review fields, by keyboard (y / n / u answer the current field and move on, j / k
 * move, e explanation, Ctrl+Enter submit, Enter next item); Agreement — per decision type, expert and agent decisions
 * judged justifiable and the annotators' agreement, and the decisions offered for acceptance by consensus.
 */
import '@vscode-elements/elements/dist/vscode-button/index.js';
import {
  AcceptDecisionRequest,
  CheckFormRequest,
  NewFormRequest,
  NextDecisionRequest,
  SaveFormRequest,
  SetModeRequest,
  SubmitDecisionRequest,
  type BladeDecisionsState,
  type CheckResult,
  type DecisionForm,
  type DecisionsMode,
} from '../src/protocol/blade-decisions.ts';
import { DidChangeStateNotification } from '../src/protocol/webview.ts';
import { connectHost, h, ready } from './shared/host.ts';
import { adoptCss } from './shared/styles.ts';

const host = connectHost();
const app = document.getElementById('app') as HTMLElement;
adoptCss(`
body { padding: 0 12px; }
.muted { color: var(--vscode-descriptionForeground); }
.error { color: var(--vscode-errorForeground); }
.ok { color: var(--vscode-testing-iconPassed, #3fb950); }
.warn { color: var(--vscode-editorWarning-foreground, #d29922); }
.top { display: flex; gap: 12px; align-items: baseline; flex-wrap: wrap; }
.tabs button, .kinds button, .answers button { background: transparent; color: var(--vscode-foreground); border: 1px solid var(--vscode-panel-border, #555); padding: 2px 10px; cursor: pointer; }
.tabs button.on, .kinds button.on { background: var(--vscode-button-background); color: var(--vscode-button-foreground); }
.form { display: grid; grid-template-columns: 160px minmax(0, 1fr); gap: 6px 10px; max-width: 1100px; align-items: start; }
.form label { font-weight: 600; padding-top: 3px; }
input, textarea, select { background: var(--vscode-input-background); color: var(--vscode-input-foreground); border: 1px solid var(--vscode-input-border, #555); font-family: inherit; padding: 3px 5px; }
textarea.code { font-family: var(--vscode-editor-font-family); font-size: var(--vscode-editor-font-size); min-height: 28px; width: 100%; box-sizing: border-box; }
input.wide, textarea.wide { width: 100%; box-sizing: border-box; }
.hint { font-size: 11px; }
.check { margin-top: 10px; border-left: 3px solid var(--vscode-panel-border, #555); padding: 4px 10px; max-width: 1100px; }
.check.pass { border-color: var(--vscode-testing-iconPassed, #3fb950); }
.check.fail { border-color: var(--vscode-errorForeground); }
.check .cols { font-family: var(--vscode-editor-font-family); }
.check .cols .new { color: var(--vscode-testing-iconPassed, #3fb950); font-weight: 600; }
.check ol { margin: 2px 0; }
pre { background: var(--vscode-textCodeBlock-background); padding: 6px; overflow-x: auto; margin: 2px 0; white-space: pre-wrap; }
.card { border: 1px solid var(--vscode-panel-border, #555); padding: 8px 12px; margin: 8px 0; max-width: 1100px; }
.fields { border-collapse: collapse; margin: 6px 0; }
.fields td { padding: 4px 8px; border-bottom: 1px solid var(--vscode-panel-border, rgba(128,128,128,.3)); }
.fields tr.cur { outline: 2px solid var(--vscode-focusBorder); }
.answers button.on { background: var(--vscode-button-background); color: var(--vscode-button-foreground); }
.badge { font-size: 11px; padding: 1px 6px; border-radius: 8px; background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); }
.ext { background: var(--vscode-editorWarning-foreground, #d29922); color: #000; }
.fig { display: grid; grid-template-columns: 130px 70px minmax(200px, 520px) 260px; gap: 4px 8px; align-items: center; margin: 8px 0 14px; }
.bar { height: 16px; background: var(--vscode-panel-border, #444); position: relative; }
.bar > span { position: absolute; left: 0; top: 0; bottom: 0; }
.bar.expert > span { background: var(--vscode-charts-blue, #3794ff); }
.bar.agent > span { background: var(--vscode-charts-orange, #d18616); }
table.stats { border-collapse: collapse; }
table.stats td, table.stats th { padding: 2px 8px; border-bottom: 1px solid var(--vscode-panel-border, rgba(128,128,128,.3)); text-align: left; }
.cands tr.sel { background: var(--vscode-list-activeSelectionBackground); color: var(--vscode-list-activeSelectionForeground); }
`);

let state: BladeDecisionsState | undefined;
let check: CheckResult | null = null;
let checkedHash = '';
let busy = '';
let message = '';
let note = '';
let field = 0;
let labels: Record<string, string> = {};
let explanation = '';
let submitted = false;
let cand = 0;

const hashOf = (f: DecisionForm) => JSON.stringify(f);
const list = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
const nameOf = (id: string) => state?.context.transforms.find((t) => t.id === id)?.name ?? id;
const idOf = (name: string) => {
  const n = name.trim();
  const t = state?.context.transforms.find(
    (x) => x.id === n || x.name === n || x.id.startsWith(n) || (n.toUpperCase() === 'ROOT' && x.id === 'ROOT_SPEC_ID'),
  );
  return t ? t.id : n;
};
const pct = (x: number | null) => (x === null ? '—' : `${Math.round(x * 100)}%`);
const num = (x: number | null) => (x === null ? '—' : x.toFixed(2));

function apply(s: BladeDecisionsState): void {
  const itemBefore = state?.review?.item?.id;
  const annotatorBefore = state?.annotator;
  state = s;
  if (s.review?.item?.id !== itemBefore || s.annotator !== annotatorBefore) {
    if (message.startsWith('Saved. Enter')) message = '';
    field = 0;
    labels = { ...(s.review?.item?.mine?.labels ?? {}) };
    explanation = s.review?.item?.mine?.explanation ?? '';
    submitted = !!s.review?.item?.mine;
  }
  host.setViewState({ key: s.key });
  render();
}

async function call<T>(what: string, f: () => Promise<T>): Promise<T | undefined> {
  busy = what;
  message = '';
  render();
  try {
    return await f();
  } catch (e) {
    message = e instanceof Error ? e.message : String(e);
    return undefined;
  } finally {
    busy = '';
    render();
  }
}

/** Reads the form from the inputs on screen. */
function readForm(): DecisionForm {
  const f = state!.form;
  const v = (id: string) => (document.getElementById(id) as HTMLInputElement | HTMLTextAreaElement | null)?.value ?? '';
  if (f.kind === 'transform') {
    return {
      kind: 'transform',
      ...(f.specId ? { specId: f.specId } : {}),
      specName: v('f-specName'),
      specification: v('f-specification'),
      transVerb: list(v('f-transVerb')),
      code: v('f-code'),
      rationale: v('f-rationale'),
      mapping: v('f-mapping')
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .map((l) => {
          const [a, b] = l.split('->');
          return { inputs: list(a ?? ''), output: (b ?? '').trim() };
        }),
      branches: v('f-branches')
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .map((l) => {
          const [deps, cond] = l.split('|');
          return {
            dependencies: (deps ?? '')
              .split('+')
              .map((x) => x.trim())
              .filter(Boolean)
              .map(idOf),
            condition: (cond ?? '').trim(),
          };
        }),
    };
  }
  if (f.kind === 'cvar') {
    return {
      kind: 'cvar',
      ...(f.specId ? { specId: f.specId } : {}),
      variableType: v('f-variableType') as 'IV' | 'DV' | 'Control',
      concept: v('f-concept'),
      columnsOrig: list(v('f-columnsOrig')),
      columnsDerived: list(v('f-columnsDerived')),
      interaction: (document.getElementById('f-interaction') as HTMLInputElement | null)?.checked ?? false,
      on: v('f-on'),
      rationale: v('f-rationale'),
    };
  }
  return {
    kind: 'model',
    ...(f.specId ? { specId: f.specId } : {}),
    specification: v('f-specification'),
    specName: v('f-specName'),
    code: v('f-code'),
    rationale: v('f-rationale'),
    columnsOrig: list(v('f-columnsOrig')),
    columnsDerived: list(v('f-columnsDerived')),
    onSpecIds: list(v('f-onSpecIds')).map(idOf),
  };
}

function row(label: string, input: HTMLElement, hint?: string): HTMLElement[] {
  return [
    h('label', { for: input.id }, label),
    h('div', {}, input, hint ? h('div', { class: 'hint muted' }, hint) : null),
  ];
}
const inp = (id: string, value: string, wide = true) =>
  h('input', { id, value, class: wide ? 'wide' : '', spellcheck: 'false' });
const area = (id: string, value: string, code = false, rows = 3) =>
  h('textarea', { id, class: code ? 'code' : 'wide', rows, spellcheck: 'false' }, value);

function formView(): HTMLElement {
  const f = state!.form;
  const c = state!.context;
  const fields: HTMLElement[] = [];
  if (f.kind === 'transform') {
    fields.push(
      ...row('Spec name', inp('f-specName', f.specName), 'spec_name (unique)'),
      ...row('Specification', inp('f-specification', f.specification)),
      ...row(
        'Verbs',
        inp('f-transVerb', f.transVerb.join(', ')),
        'trans_verb: derive, filter, group, mutate, select, summarize, deduplicate',
      ),
      ...row('Code', area('f-code', f.code, true, 5), 'pandas on df (BLADE: pd, np, stats, sm, smf)'),
      ...row(
        'Columns in → out',
        area(
          'f-mapping',
          f.mapping.map((m) => `${m.inputs.join(', ')} -> ${m.output}`).join('\n'),
          true,
          Math.max(1, f.mapping.length),
        ),
        'input_cols_to_output_col_mapping, one per line: a, b -> out (empty out: the whole table)',
      ),
      ...row(
        'Branches',
        area(
          'f-branches',
          f.branches
            .map((b) => `${b.dependencies.map(nameOf).join(' + ')}${b.condition ? ` | ${b.condition}` : ''}`)
            .join('\n'),
          true,
          Math.max(1, f.branches.length),
        ),
        `one branch per line: dependencies joined by + (names or ids), | condition. Transforms: ${c.transforms.map((t) => t.name).join(', ')}`,
      ),
      ...row('Rationale', area('f-rationale', f.rationale, false, 1)),
    );
  } else if (f.kind === 'cvar') {
    const sel = h(
      'select',
      { id: 'f-variableType' },
      ...['IV', 'DV', 'Control'].map((t) =>
        h('option', { value: t, ...(f.variableType === t ? { selected: true } : {}) }, t),
      ),
    );
    const ia = h('input', { id: 'f-interaction', type: 'checkbox', ...(f.interaction ? { checked: true } : {}) });
    fields.push(
      ...row('Variable type', sel, 'variable_type (a moderator is a Control with interaction)'),
      ...row('Concept', inp('f-concept', f.concept)),
      ...row(
        'Original columns',
        inp('f-columnsOrig', f.columnsOrig.join(', ')),
        `final_columns_orig — data.csv: ${c.dataColumns.join(', ')}`,
      ),
      ...row(
        'Derived columns',
        inp('f-columnsDerived', f.columnsDerived.join(', ')),
        `final_columns_derived — from the transforms: ${c.derivedColumns.join(', ') || 'none'}`,
      ),
      ...row('Interaction', ia),
      ...row('On', inp('f-on', f.on), 'the variable it moderates'),
      ...row('Rationale', area('f-rationale', f.rationale)),
    );
  } else {
    fields.push(
      ...row('Specification', inp('f-specification', f.specification), 'e.g. Linear Regression'),
      ...row('Spec name', inp('f-specName', f.specName)),
      ...row('Code', area('f-code', f.code, true, 4), 'defines model (fitted, or to fit) or def model(df)'),
      ...row('Original columns', inp('f-columnsOrig', f.columnsOrig.join(', '))),
      ...row('Derived columns', inp('f-columnsDerived', f.columnsDerived.join(', '))),
      ...row(
        'Fitted on',
        inp('f-onSpecIds', f.onSpecIds.map(nameOf).join(', ')),
        'the transforms whose table the model is fitted on (empty: data.csv as loaded)',
      ),
      ...row('Rationale', area('f-rationale', f.rationale)),
    );
  }
  const form = h('div', { class: 'form', id: 'form' }, ...fields, ...row('Version note', inp('f-note', note)));
  form.addEventListener('input', () => {
    note = (document.getElementById('f-note') as HTMLInputElement | null)?.value ?? note;
    const stale = check && hashOf(readForm()) !== checkedHash;
    const s = document.getElementById('save');
    if (s) s.toggleAttribute('disabled', !check?.ok || !!stale);
    const st = document.getElementById('stale');
    if (st) st.textContent = stale ? 'The form changed since its check: check again before saving.' : '';
  });
  return form;
}

function checkView(): HTMLElement {
  if (!check) {
    return h(
      'section',
      { class: 'check', id: 'check-result' },
      h('p', { class: 'muted' }, 'Not checked yet. Ctrl+Enter runs the check on data.csv in the sandboxed kernel.'),
    );
  }
  const c = check;
  const branchLabel = (deps: string[]) => deps.map(nameOf).join(' + ') || 'ROOT';
  return h(
    'section',
    { class: `check ${c.ok ? 'pass' : 'fail'}`, id: 'check-result' },
    h(
      'p',
      { class: c.ok ? 'ok' : 'error', id: 'check-status' },
      c.ok
        ? `✓ Check passed (${c.durationMs} ms): the decision can be saved.`
        : '✗ Check failed: nothing can be saved until it passes.',
    ),
    h('p', { class: 'muted' }, `data.csv: ${c.data.rows} rows, ${c.data.columns.length} columns`),
    ...c.branches.map((b) =>
      h(
        'div',
        { class: 'branch' },
        h(
          'strong',
          {},
          state!.form.kind === 'transform' ? `Branch ${b.branch + 1} (after ${branchLabel(b.dependencies)})` : 'Table',
        ),
        b.error
          ? h('p', { class: 'error' }, b.error)
          : h(
              'p',
              {},
              `${b.rows} rows, ${b.columns?.length ?? 0} columns`,
              b.added?.length ? ` · added: ${b.added.join(', ')}` : '',
              b.removed?.length ? ` · removed: ${b.removed.join(', ')}` : '',
            ),
        b.columns
          ? h(
              'div',
              { class: 'cols' },
              'Columns: ',
              ...b.columns.flatMap((col, i) => [
                i ? ', ' : '',
                b.added?.includes(col) ? h('span', { class: 'new' }, col) : col,
              ]),
            )
          : null,
        b.steps.length > 1
          ? h(
              'ol',
              { class: 'muted' },
              ...b.steps.map((s) =>
                h('li', {}, `${s.name}: ${s.error ? `error: ${s.error}` : s.skipped ? 'skipped' : `${s.rows} rows`}`),
              ),
            )
          : null,
      ),
    ),
    c.model
      ? h(
          'p',
          { class: c.model.ok ? 'ok' : 'error', id: 'model-result' },
          c.model.ok
            ? `Model fitted: ${c.model.type}, ${c.model.nobs ?? '?'} observations; parameters ${c.model.params?.join(', ')}`
            : `Model: ${c.model.error}`,
        )
      : null,
    c.problems.length
      ? h('ul', { class: 'error', id: 'problems' }, ...c.problems.map((p) => h('li', {}, `${p.field}: ${p.message}`)))
      : null,
  );
}

function authorView(): HTMLElement[] {
  const kinds = h(
    'div',
    { class: 'kinds' },
    ...(['transform', 'cvar', 'model'] as const).map((k) => {
      const b = h(
        'button',
        { class: state!.form.kind === k ? 'on' : '', 'data-kind': k },
        k === 'cvar' ? 'Conceptual variable' : k === 'transform' ? 'Transform' : 'Model',
      );
      b.addEventListener(
        'click',
        () =>
          void call('new form', async () => {
            check = null;
            apply(await host.rpc.request(NewFormRequest, { kind: k }));
          }),
      );
      return b;
    }),
  );
  const checkBtn = h('vscode-button', { id: 'check' }, 'Run check (Ctrl+Enter)');
  checkBtn.addEventListener('click', () => void runCheck());
  const saveBtn = h(
    'vscode-button',
    { id: 'save', ...(!check?.ok || hashOf(state!.form) !== checkedHash ? { disabled: true } : {}) },
    state!.acceptItemId ? 'Accept into a new version (Ctrl+S)' : 'Save as new version (Ctrl+S)',
  );
  saveBtn.addEventListener('click', () => void save());
  return [
    h('div', { class: 'top' }, kinds, h('span', { class: 'muted' }, `joins ground truth v${state!.context.version}`)),
    state!.acceptItemId
      ? h(
          'p',
          { class: 'warn', id: 'accepting' },
          `Accepting a decision judged justifiable by consensus (review item ${state!.acceptItemId}): the form is prefilled from it — complete it, check it, save it.`,
        )
      : h('span', {}),
    formView(),
    h('p', {}, checkBtn, ' ', saveBtn, ' ', h('span', { class: 'warn', id: 'stale' }, '')),
    checkView(),
  ];
}

async function runCheck(): Promise<void> {
  const form = readForm();
  state!.form = form;
  const r = await call('checking on data.csv…', () => host.rpc.request(CheckFormRequest, { form }));
  if (r) {
    check = r;
    checkedHash = hashOf(form);
  }
  render();
  document.getElementById('check-result')?.scrollIntoView({ block: 'start' });
}

async function save(): Promise<void> {
  const form = readForm();
  note = (document.getElementById('f-note') as HTMLInputElement | null)?.value ?? note;
  const r = await call('saving…', () =>
    host.rpc.request(SaveFormRequest, {
      form,
      check: hashOf(form) === checkedHash ? check : null,
      note,
      acceptItemId: state!.acceptItemId,
    }),
  );
  if (r) {
    check = null;
    note = '';
    apply(r.state);
    message = r.message;
    render();
  }
}

function decisionView(): HTMLElement {
  const it = state!.review!.item!;
  const d = it.input.decision;
  const body: HTMLElement[] = [];
  if (d.type === 'cvar') {
    body.push(
      h('p', {}, h('strong', {}, `${d.variableType}: `), d.description),
      h('p', {}, 'Columns: ', d.columns.join(', ') || '—', d.moderatorOn ? ` · moderates: ${d.moderatorOn}` : ''),
    );
  } else if (d.type === 'transform') {
    body.push(
      h(
        'p',
        {},
        h('strong', {}, d.verb || 'transform'),
        ` · ${d.mapping.map(([a, b]) => `${a.join(', ')} → ${b || '(table)'}`).join('; ')}`,
      ),
      h('pre', { id: 'decision-code' }, d.code),
      d.rationale ? h('p', {}, 'Rationale: ', d.rationale) : h('span', {}),
    );
  } else {
    body.push(
      h('p', {}, h('strong', {}, d.specification)),
      h('pre', { id: 'decision-code' }, d.code),
      h('p', {}, 'Columns: ', d.columns.join(', ') || '—'),
    );
  }
  if (it.input.transformCode && d.type !== 'transform') {
    body.push(
      h('details', {}, h('summary', {}, "The analysis's transform code"), h('pre', {}, it.input.transformCode)),
    );
  }
  return h(
    'section',
    { class: 'card', id: 'decision' },
    h(
      'p',
      { class: 'muted' },
      h('span', { class: 'badge' }, d.type === 'cvar' ? 'conceptual variable' : d.type),
      ` ${it.input.source === 'agent' ? "an agent's decision (agent and model hidden)" : 'an expert decision of the ground truth'} · ${it.input.dataset}`,
    ),
    it.input.researchQuestion
      ? h('p', { class: 'muted' }, `Research question: ${it.input.researchQuestion}`)
      : h('span', {}),
    ...body,
  );
}

function reviewView(): HTMLElement[] {
  const r = state!.review;
  if (!r) {
    return [
      h(
        'p',
        { class: 'muted' },
        'No review queue is open. Run “Loupe: Review BLADE Decisions” to sample decisions of recorded runs.',
      ),
    ];
  }
  const head = h(
    'p',
    { id: 'progress' },
    `${r.queueName} · ${r.item ? `item ${r.item.pos + 1} of ${r.total}` : 'nothing left for you'} · ${r.done} / ${r.total} done · annotating as ${r.annotator}`,
    h(
      'span',
      { class: 'muted', id: 'by-annotator' },
      ` · ${Object.entries(r.byAnnotator)
        .map(([k, v]) => `${r.labels?.[k] ?? k}: ${v}`)
        .join(', ')}`,
    ),
  );
  if (!r.item) return [head, h('p', { id: 'done' }, 'Every sampled decision has its reviewers. See Agreement (3).')];
  const it = r.item;
  const table = h(
    'table',
    { class: 'fields', id: 'fields' },
    ...it.fields.map((f, i) => {
      const answers = h(
        'span',
        { class: 'answers' },
        ...(['Yes', 'No', 'Unsure'] as const).map((a) => {
          const b = h(
            'button',
            { class: labels[f.name] === a ? 'on' : '', 'data-field': f.name, 'data-answer': a },
            `${a[0]!.toLowerCase()} ${a}`,
          );
          b.addEventListener('click', () => {
            labels[f.name] = a;
            field = i;
            submitted = false;
            render();
          });
          return b;
        }),
      );
      return h(
        'tr',
        { class: i === field ? 'cur' : '' },
        h(
          'td',
          {},
          f.question,
          f.loupeExtension
            ? h(
                'span',
                { class: 'badge ext', title: "BLADE reviews no models; this field is Loupe's" },
                ' Loupe extension',
              )
            : null,
          h('div', { class: 'hint muted' }, f.name),
        ),
        h('td', {}, answers),
      );
    }),
  );
  const ex = h(
    'textarea',
    { id: 'explanation', class: 'wide', rows: 2, placeholder: 'Explanation (e: write, Esc: back to the keys)' },
    explanation,
  );
  ex.addEventListener('input', () => {
    explanation = (ex as HTMLTextAreaElement).value;
    submitted = false;
  });
  const sum = h(
    'p',
    { id: 'draft-summary' },
    'Your verdict: ',
    it.fields.map((f) => `${f.name} = ${labels[f.name] ?? '?'}`).join(', '),
  );
  const others = it.others?.length
    ? h(
        'section',
        { class: 'card', id: 'others' },
        h('strong', {}, 'Other verdicts'),
        ...it.others.map((o) =>
          h(
            'p',
            {},
            `${r.labels?.[o.annotator] ?? o.annotator}: ${Object.entries(o.verdict.labels)
              .map(([k, v]) => `${k} = ${v}`)
              .join(', ')}${o.verdict.explanation ? ` — ${o.verdict.explanation}` : ''}`,
          ),
        ),
      )
    : h('span', {});
  return [
    head,
    decisionView(),
    table,
    ex,
    sum,
    h(
      'p',
      { class: 'muted' },
      'y / n / u answer the current field · j / k move · e explanation · Ctrl+Enter submit · Enter next item',
    ),
    others,
  ];
}

function agreementView(): HTMLElement[] {
  const a = state!.agreement;
  if (!a) return [h('p', { class: 'muted' }, 'Loading…')];
  const rule = h(
    'select',
    { id: 'rule', 'aria-label': 'consensus rule' },
    h(
      'option',
      { value: 'all-yes', ...(a.rule.kind === 'all-yes' ? { selected: true } : {}) },
      'all annotators say Yes to every field (paper)',
    ),
    h(
      'option',
      { value: 'majority', ...(a.rule.kind === 'majority' ? { selected: true } : {}) },
      'a majority of annotators judge it justifiable',
    ),
  );
  rule.addEventListener(
    'change',
    () =>
      void call('agreement', async () =>
        apply(
          await host.rpc.request(SetModeRequest, {
            mode: 'agreement',
            rule: {
              kind: (rule as HTMLSelectElement).value as 'all-yes' | 'majority',
              minAnnotators: a.rule.minAnnotators,
            },
          }),
        ),
      ),
  );
  const typeName = { cvar: 'Conceptual variables', transform: 'Transforms', model: 'Models' } as const;
  const fig = h(
    'div',
    {
      class: 'fig',
      id: 'figure',
      role: 'img',
      'aria-label': 'decisions judged justifiable per decision type, expert vs agent',
    },
    ...(['cvar', 'transform', 'model'] as const)
      .flatMap((t) => a.rows.filter((r) => r.type === t))
      .flatMap((r) => [
        h('span', {}, r.source === 'expert' ? typeName[r.type] : ''),
        h('span', { class: 'muted' }, r.source),
        h(
          'div',
          { class: `bar ${r.source}` },
          h('span', { style: `width:${Math.round((r.justifiable ?? 0) * 100)}%` }),
        ),
        h('span', {}, `${pct(r.justifiable)} justifiable · n = ${r.pairable}`),
      ]),
  );
  const stats = h(
    'table',
    { class: 'stats', id: 'stats' },
    h(
      'tr',
      {},
      ...[
        'type',
        'source',
        'reviewed (≥ 2)',
        'justifiable',
        'same judgement',
        "Cohen's κ",
        "Krippendorff's α",
        'annotators',
        'Yes per field',
      ].map((x) => h('th', {}, x)),
    ),
    ...a.rows.map((r) =>
      h(
        'tr',
        {},
        h('td', {}, r.type),
        h('td', {}, r.source),
        h('td', {}, `${r.items} (${r.pairable})`),
        h('td', {}, pct(r.justifiable)),
        h('td', {}, pct(r.percentAgreement)),
        h('td', {}, num(r.cohensKappa)),
        h('td', {}, num(r.alpha)),
        h('td', { class: 'annotators' }, r.annotators.map((w) => a.labels?.[w] ?? w).join(', ') || '—'),
        h(
          'td',
          { class: 'muted' },
          Object.entries(r.fieldYes)
            .map(([k, v]) => `${k} ${pct(v)}`)
            .join(' · '),
        ),
      ),
    ),
  );
  const cands = h(
    'table',
    { class: 'cands', id: 'candidates' },
    ...a.candidates.map((c, i) => {
      const b =
        c.acceptedIn !== null
          ? h('span', { class: 'ok' }, `accepted in v${c.acceptedIn}`)
          : h('vscode-button', { class: 'accept', 'data-item': c.itemId }, 'Accept…');
      b.addEventListener('click', () => {
        if (c.acceptedIn === null) void accept(c.itemId);
      });
      return h(
        'tr',
        { class: i === cand ? 'sel' : '' },
        h('td', {}, c.type),
        h('td', {}, c.summary),
        h('td', { class: 'muted' }, c.annotators.map((w) => a.labels?.[w] ?? w).join(', ')),
        h('td', {}, b),
      );
    }),
  );
  return [
    h('p', {}, 'Consensus rule: ', rule),
    h('h2', {}, 'Decisions judged justifiable, per decision type'),
    h(
      'p',
      { class: 'muted' },
      "As in the paper's figure: expert decisions (the ground truth, reviewed by other experts) against agent decisions; among decisions with at least two verdicts.",
    ),
    fig,
    stats,
    h('h2', {}, `Offered for acceptance (${a.candidates.filter((c) => c.acceptedIn === null).length})`),
    a.candidates.length ? cands : h('p', { class: 'muted' }, 'No agent decision is justifiable under this rule yet.'),
    h('p', { class: 'muted' }, 'j / k select · a accept the selected decision (opens its prefilled spec form)'),
  ];
}

async function accept(itemId: string): Promise<void> {
  const s = await call('prefilling…', () => host.rpc.request(AcceptDecisionRequest, { itemId }));
  if (s) {
    check = null;
    apply(s);
  }
}

function render(): void {
  if (!state) return;
  const tabs = h(
    'div',
    { class: 'tabs', role: 'tablist' },
    ...(
      [
        ['author', 'Author (1)'],
        ['review', 'Review (2)'],
        ['agreement', 'Agreement (3)'],
      ] as const
    ).map(([m, l]) => {
      const b = h('button', { class: state!.mode === m ? 'on' : '', id: `tab-${m}`, role: 'tab' }, l);
      b.addEventListener('click', () => void setMode(m));
      return b;
    }),
  );
  const body = state.mode === 'author' ? authorView() : state.mode === 'review' ? reviewView() : agreementView();
  app.replaceChildren(
    h(
      'div',
      { class: 'top' },
      h('h1', { id: 'title' }, `BLADE decisions · ${state.context.dataset}`),
      tabs,
      h('span', { class: 'muted' }, `ground truth v${state.context.version} · ${state.annotator}`),
    ),
    busy ? h('p', { class: 'muted', id: 'busy' }, busy) : h('span', {}),
    message
      ? h('p', { class: /^Saved|Saved\./.test(message) ? 'ok' : 'error', id: 'message' }, message)
      : h('span', { id: 'message' }),
    ...body,
  );
  app.removeAttribute('aria-busy');
}

async function setMode(m: DecisionsMode): Promise<void> {
  if (state?.mode === 'author') state.form = readForm();
  message = '';
  const s = await call('', () => host.rpc.request(SetModeRequest, { mode: m }));
  if (s) apply(s);
}

async function submit(): Promise<void> {
  const it = state?.review?.item;
  if (!it) return;
  const s = await call('saving…', () =>
    host.rpc.request(SubmitDecisionRequest, { itemId: it.id, labels, explanation }),
  );
  if (s) {
    apply(s);
    submitted = true;
    message = 'Saved. Enter: next item';
    render();
  }
}

document.addEventListener('keydown', (ev) => {
  if (!state) return;
  const t = ev.target as HTMLElement | null;
  const typing = !!t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT');
  if (state.mode === 'author') {
    if ((ev.ctrlKey || ev.metaKey) && ev.key === 'Enter') {
      ev.preventDefault();
      void runCheck();
    } else if ((ev.ctrlKey || ev.metaKey) && (ev.key === 's' || ev.key === 'S')) {
      ev.preventDefault();
      if (check?.ok) void save();
    }
    return;
  }
  if (typing) {
    if (ev.key === 'Escape') {
      (t as HTMLElement).blur();
      ev.preventDefault();
    } else if ((ev.ctrlKey || ev.metaKey) && ev.key === 'Enter' && state.mode === 'review') {
      ev.preventDefault();
      void submit();
    }
    return;
  }
  if (ev.key === '1' || ev.key === '2' || ev.key === '3') {
    ev.preventDefault();
    void setMode((['author', 'review', 'agreement'] as const)[Number(ev.key) - 1]!);
    return;
  }
  if (state.mode === 'review' && state.review?.item) {
    const fs = state.review.item.fields;
    const ans = { y: 'Yes', n: 'No', u: 'Unsure' }[ev.key];
    if (ans) {
      ev.preventDefault();
      labels[fs[field]!.name] = ans;
      submitted = false;
      field = Math.min(fs.length - 1, field + 1);
      render();
    } else if (ev.key === 'j' || ev.key === 'ArrowDown') {
      ev.preventDefault();
      field = Math.min(fs.length - 1, field + 1);
      render();
    } else if (ev.key === 'k' || ev.key === 'ArrowUp') {
      ev.preventDefault();
      field = Math.max(0, field - 1);
      render();
    } else if (ev.key === 'e') {
      ev.preventDefault();
      document.getElementById('explanation')?.focus();
    } else if ((ev.ctrlKey || ev.metaKey) && ev.key === 'Enter') {
      ev.preventDefault();
      void submit();
    } else if (ev.key === 'Enter' && submitted) {
      ev.preventDefault();
      void call('next item…', async () => {
        const s = await host.rpc.request(NextDecisionRequest, { afterPos: state!.review!.item!.pos });
        message = '';
        apply(s);
      });
    }
  } else if (state.mode === 'agreement' && state.agreement) {
    const n = state.agreement.candidates.length;
    if (ev.key === 'j' || ev.key === 'ArrowDown') {
      ev.preventDefault();
      cand = Math.min(n - 1, cand + 1);
      render();
    } else if (ev.key === 'k' || ev.key === 'ArrowUp') {
      ev.preventDefault();
      cand = Math.max(0, cand - 1);
      render();
    } else if (ev.key === 'a') {
      const c = state.agreement.candidates[cand];
      if (c && c.acceptedIn === null) {
        ev.preventDefault();
        void accept(c.itemId);
      }
    }
  }
});

host.rpc.onNotification(DidChangeStateNotification, ({ state: s }) => {
  check = null;
  message = '';
  apply(s as BladeDecisionsState);
});

ready<BladeDecisionsState>(host, 'bladedecisions').then(apply, (e: unknown) => {
  app.replaceChildren(
    h(
      'p',
      { class: 'error' },
      `Could not open the BLADE decisions panel: ${e instanceof Error ? e.message : String(e)}`,
    ),
  );
});
