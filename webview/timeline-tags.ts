/**
 * Failure tagging in the Trajectory Timeline (issue 19): the selected step or step range is tagged with one or more
 * classes of a taxonomy (the run's benchmark's preselected), a severity and a note — saved by the host through the
 * same failure-tag code and annotation store as the Failure Analysis panel, so a tag made here is listed there and
 * the other way round. Tagged steps carry a mark in the step list; a step's detail lists its tags.
 * Keys in the form: digits toggle classes, `s` cycles the severity, `n` writes the note, Enter saves (Ctrl+Enter in
 * the note), Escape cancels.
 */
import { TagStepsRequest, type TimelineFailures } from '../src/protocol/timeline.ts';
import type { FailureTagView, SeverityName } from '../src/protocol/failures.ts';
import { h, type HostApi } from './shared/host.ts';

const SEVERITIES: SeverityName[] = ['minor', 'major', 'critical'];

/** What the timeline embeds. */
export interface FailureTagging {
  /** The form and the message line, placed under the toolbar. */
  readonly element: HTMLElement;
  /** The marks of the tags covering step `index` (for its row). */
  marks(index: number): HTMLElement[];
  /** The tags of step `index` for its detail pane. */
  detail(index: number): HTMLElement[];
  /** Opens the tag form on the selected range. */
  open(): void;
  /** The selection moved: the open form follows it. */
  selectionChanged(): void;
  /** New tags from the host (saved elsewhere). */
  update(f: TimelineFailures): void;
  /** The form's keys while it is open (wherever the panel's focus is, but typing in the note): true when handled. */
  handleKey(ev: KeyboardEvent): boolean;
}

const where = (a: number, b: number) => (a === b ? `step ${a + 1}` : `steps ${a + 1}–${b + 1}`);

/**
 * Mounts failure tagging for a run.
 * @param failures the tags and taxonomies from the host (undefined: tagging unavailable, the button says why).
 * @param view `range` the selected steps [first, last] (-1 when none), `redraw` repaints rows and detail, `focusList`
 *   gives the keyboard back to the step list.
 */
export function mountFailureTagging(
  host: HostApi,
  runId: string,
  failures: TimelineFailures | undefined,
  view: { range: () => [number, number]; redraw: () => void; focusList: () => void },
): FailureTagging {
  let f = failures;
  let form: { taxonomy: string; classes: Set<string>; severity: SeverityName; note: string } | null = null;
  const message = h('div', { class: 'tl-tag-message', id: 'tag-message', 'aria-live': 'polite' });
  const formEl = h('div', { id: 'tl-tag-form-wrap' });
  const attachedEl = h('div', { id: 'tl-attached' });
  const root = h('section', { class: 'tl-tagging' }, attachedEl, message, formEl);
  const renderAttached = () => {
    const a = f?.attached;
    attachedEl.replaceChildren(
      ...(a
        ? [
            h(
              'div',
              { class: 'tl-attached' },
              h('span', { class: 'muted' }, 'Failed item attached (tags are linked to it): '),
              h('strong', {}, `${a.ref}: ${a.question}`),
              h('span', { class: 'muted' }, ` · ${a.detail}`),
            ),
          ]
        : []),
    );
  };
  renderAttached();
  const say = (text: string, error = false) => {
    message.textContent = text;
    message.className = `tl-tag-message${error ? ' error' : ''}`;
  };
  if (f?.errors.length) say(`Taxonomy files not loaded: ${f.errors.join(' · ')}`, true);

  const tax = (id: string) => f?.taxonomies.find((t) => t.id === id);
  const label = (t: FailureTagView) =>
    t.classes.map((c) => tax(t.taxonomy)?.classes.find((x) => x.id === c)?.label ?? c).join(', ');
  const stepTags = (i: number) => (f?.tags ?? []).filter((t) => t.kind === 'step' && i >= t.from && i <= t.to);

  const focusForm = () => formEl.querySelector<HTMLElement>('#tl-tag-form')?.focus();

  const render = () => {
    if (!form || !f) {
      formEl.replaceChildren();
      return;
    }
    const fm = form;
    const [a, b] = view.range();
    const t = tax(fm.taxonomy);
    const sel = h(
      'select',
      { id: 'tl-taxonomy', 'aria-label': 'Taxonomy' },
      ...f.taxonomies.map((x) =>
        h(
          'option',
          { value: x.id, selected: x.id === fm.taxonomy },
          `${x.title}${x.origin === 'loupe' ? " — Loupe's own" : x.origin === 'workspace' ? ' — workspace' : ''}`,
        ),
      ),
    );
    sel.addEventListener('change', () => {
      fm.taxonomy = (sel as HTMLSelectElement).value;
      fm.classes.clear();
      render();
    });
    const note = h('textarea', {
      id: 'tl-tag-note',
      rows: 2,
      placeholder: 'Why (n to write, Ctrl+Enter to save)',
    }) as HTMLTextAreaElement;
    note.value = fm.note;
    const summary = () =>
      `${fm.classes.size ? [...fm.classes].join(', ') : 'no class yet'} · ${fm.severity}${fm.note.trim() ? ` · note “${fm.note.trim().slice(0, 60)}”` : ''}`;
    note.addEventListener('input', () => {
      fm.note = note.value;
      const el = formEl.querySelector('#tl-tag-summary');
      if (el) el.textContent = summary();
    });
    const save = h('vscode-button', { id: 'tl-tag-save' }, 'Save tag (Enter)');
    save.addEventListener('click', () => void submit());
    const cancel = h('vscode-button', { id: 'tl-tag-cancel', secondary: true }, 'Cancel (Esc)');
    cancel.addEventListener('click', close);
    formEl.replaceChildren(
      h(
        'div',
        { class: 'tl-tag-form', id: 'tl-tag-form', tabindex: 0, role: 'group', 'aria-label': 'Tag failure' },
        h(
          'div',
          {},
          h('strong', { id: 'tl-tag-where' }, `Tag ${a < 0 ? 'no step selected' : where(a, b)}`),
          ' ',
          sel,
          h('span', { class: 'muted' }, t ? ` source: ${t.source}` : ''),
        ),
        h(
          'div',
          { class: 'tl-tag-classes' },
          ...(t?.classes ?? []).map((c, i) => {
            const box = h('input', {
              type: 'checkbox',
              'data-class': c.id,
              checked: fm.classes.has(c.id),
            }) as HTMLInputElement;
            box.addEventListener('change', () => {
              if (box.checked) fm.classes.add(c.id);
              else fm.classes.delete(c.id);
              render();
              focusForm();
            });
            return h(
              'label',
              { title: c.definition },
              box,
              h('kbd', {}, i < 9 ? String(i + 1) : ''),
              ` ${c.group ? `${c.group} › ` : ''}${c.label}`,
            );
          }),
        ),
        h(
          'div',
          { id: 'tl-tag-severity' },
          'Severity (s): ',
          ...SEVERITIES.map((s) => h('strong', { class: s === fm.severity ? 'on' : 'muted' }, ` ${s} `)),
        ),
        note,
        h(
          'div',
          { class: 'tl-tag-actions' },
          save,
          cancel,
          h('span', { class: 'muted', id: 'tl-tag-summary' }, summary()),
        ),
      ),
    );
  };

  function close(): void {
    form = null;
    render();
    view.focusList();
  }

  async function submit(): Promise<void> {
    if (!form) return;
    const [a, b] = view.range();
    if (a < 0) {
      say('Select a step first (click, or ↑/↓ in the step list).', true);
      return;
    }
    if (!form.classes.size) {
      say('Choose at least one class (its number key).', true);
      return;
    }
    try {
      const r = await host.rpc.request(TagStepsRequest, {
        runId,
        from: a,
        to: b,
        taxonomy: form.taxonomy,
        classes: [...form.classes],
        severity: form.severity,
        note: form.note,
      });
      f = r.failures;
      renderAttached();
      form = null;
      render();
      say(r.message);
      view.redraw();
      view.focusList();
    } catch (e) {
      say(e instanceof Error ? e.message : String(e), true);
    }
  }

  function onFormKey(ev: KeyboardEvent): boolean {
    if (!form) return false;
    const target = ev.target as HTMLElement;
    const inNote = target.tagName === 'TEXTAREA';
    let handled = true;
    if (ev.key === 'Escape') close();
    else if (ev.key === 'Enter' && (!inNote || ev.ctrlKey || ev.metaKey)) void submit();
    else if (inNote || target.tagName === 'SELECT') handled = false;
    else if (ev.key === 'n') formEl.querySelector<HTMLTextAreaElement>('#tl-tag-note')?.focus();
    else if (ev.key === 's') {
      form.severity = SEVERITIES[(SEVERITIES.indexOf(form.severity) + 1) % SEVERITIES.length]!;
      render();
      focusForm();
    } else if (/^[1-9]$/.test(ev.key)) {
      const c = tax(form.taxonomy)?.classes[Number(ev.key) - 1];
      if (c) {
        if (form.classes.has(c.id)) form.classes.delete(c.id);
        else form.classes.add(c.id);
        render();
        focusForm();
      }
    } else handled = false;
    if (handled) ev.preventDefault();
    return handled;
  }

  return {
    element: root,
    marks(index) {
      // the flag never shrinks; the label gives way (ellipsis) when the step column is narrow, the title keeps it whole
      return stepTags(index).map((t) =>
        h(
          'span',
          {
            class: `tl-tagmark ${t.severity}`,
            title: `${t.annotatorLabel}: ${label(t)} (${t.severity}, ${where(t.from, t.to)})${t.note ? ` — ${t.note}` : ''}`,
          },
          h('span', { class: 'tl-flag' }, '⚑'),
          h('span', { class: 'tl-flag-label' }, ` ${label(t)}`),
        ),
      );
    },
    detail(index) {
      const tags = stepTags(index);
      if (!tags.length) return [];
      return [
        h(
          'section',
          { class: 'tl-step-tags', id: 'step-tags' },
          h('div', { class: 'label' }, `Failure tags on this step (${tags.length})`),
          ...tags.map((t) =>
            h(
              'div',
              { class: 'tl-step-tag' },
              h('span', { class: `tl-tagmark ${t.severity}` }, `⚑ ${label(t)}`),
              ` ${t.severity} · ${where(t.from, t.to)} · ${t.annotatorLabel}`,
              t.note ? h('span', { class: 'muted' }, ` — ${t.note}`) : '',
            ),
          ),
        ),
      ];
    },
    open() {
      if (!f) {
        say("Failure tagging is unavailable: the run's tags could not be read (see the Loupe log).", true);
        return;
      }
      if (view.range()[0] < 0) {
        say('Select a step first (click, or ↑/↓ in the step list); Shift+↑/↓ or Shift+J/K extends the range.', true);
        return;
      }
      form ??= { taxonomy: f.taxonomy, classes: new Set(), severity: 'major', note: '' };
      say('');
      render();
      focusForm();
    },
    selectionChanged() {
      if (form) {
        const [a, b] = view.range();
        const w = formEl.querySelector('#tl-tag-where');
        if (w) w.textContent = `Tag ${a < 0 ? 'no step selected' : where(a, b)}`;
      }
    },
    update(next) {
      f = next;
      renderAttached();
      view.redraw();
    },
    handleKey: onFormKey,
  };
}
