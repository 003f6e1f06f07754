/**
 * The DOM of a structured tool-call argument (a BLADE submission: conceptual variables as a table, transform and
 * model code as code with real line breaks), built from {@link argSections}. One renderer for every view that shows
 * a submission: the timeline's step detail and the side-by-side review (a submission an agent wrote into its
 * message, which would otherwise read as raw JSON with escaped `\n`).
 */
import { h } from './host.ts';
import { argSections, type ArgSection } from './timeline-model.ts';
import css from './arg-sections.css';
import { adoptCss } from './styles.ts';

let styled = false;
const style = () => {
  if (styled) return;
  styled = true;
  adoptCss(css);
};

/** The sections as DOM (`div.args-sections` of `section.arg-section`, each a label and a code / text / table body). */
export function argSectionsView(sections: readonly ArgSection[]): HTMLElement {
  style();
  return h(
    'div',
    { class: 'args-sections' },
    ...sections.map((sec) => {
      const body =
        sec.kind === 'code'
          ? h('pre', { class: 'args code' }, sec.text)
          : sec.kind === 'text'
            ? h('div', { class: 'args text' }, sec.text)
            : h(
                'table',
                { class: 'args table' },
                h('thead', {}, h('tr', {}, ...sec.columns.map((c) => h('th', {}, c)))),
                h('tbody', {}, ...sec.rows.map((r) => h('tr', {}, ...r.map((x) => h('td', {}, x))))),
              );
      return h('section', { class: 'arg-section' }, h('div', { class: 'label' }, sec.title), body);
    }),
  );
}

/**
 * Replaces, inside rendered Markdown, each code block or paragraph whose whole text is a structured JSON object (a
 * submission an agent pasted into its message) by its readable sections. @returns how many were replaced.
 */
export function renderStructuredJson(root: HTMLElement): number {
  let n = 0;
  for (const el of [...root.querySelectorAll<HTMLElement>('pre, p')]) {
    if (el.tagName === 'P' && el.closest('pre')) continue;
    const text = (el.textContent ?? '').trim();
    if (!text.startsWith('{')) continue;
    const sections = argSections(text);
    if (!sections) continue;
    el.replaceWith(argSectionsView(sections));
    n++;
  }
  return n;
}
