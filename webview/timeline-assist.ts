/**
 * The timeline's view of stepping into a run (issue 20): the run's assistance label, fork links, run controls (Pause,
 * Add hint…, Resume) and its human steps — a strip of rows above the steps (click one to open the step it preceded) and,
 * in a step's detail, the human steps sent before it and "Fork from this step".
 */
import {
  DidChangeAssistanceNotification,
  GetAssistanceRequest,
  RunActionRequest,
  type TimelineAssistance,
  type TimelineIntervention,
} from '../src/protocol/intervention.ts';
import { h, type HostApi } from './shared/host.ts';
import css from './timeline-assist.css';
import { adoptCss } from './shared/styles.ts';

/** What the timeline embeds. */
export interface AssistView {
  /** The bar and the human-step strip, placed under the header. */
  readonly element: HTMLElement;
  /** Extra content at the top of a step's detail: its human steps and the fork button (`last`: the last step's index). */
  detail(index: number, last: number): HTMLElement[];
}

const time = (iso: string) => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
};

/**
 * Mounts the assistance view of a run.
 * @param select opens a step (0-based) in the timeline; `redrawDetail` re-renders the open step's detail.
 */
export function mountAssistance(
  host: HostApi,
  runId: string,
  select: (index: number) => void,
  redrawDetail: () => void,
): AssistView {
  adoptCss(css);
  const bar = h('div', { class: 'tl-assist', id: 'assist', role: 'group', 'aria-label': 'Step into this run' });
  const strip = h('div', { class: 'tl-human', id: 'human-steps', role: 'list', 'aria-label': 'Human steps' });
  const root = h('section', { class: 'tl-assist-root' }, bar, strip);
  let state: TimelineAssistance | undefined;
  const note = h('span', { class: 'why', id: 'assist-message', 'aria-live': 'polite' });

  const act = async (
    action: 'pause' | 'resume' | 'intervene' | 'fork' | 'compareForks' | 'compareForkWithParent',
    step?: number,
  ) => {
    note.textContent = '';
    try {
      const r = await host.rpc.request(RunActionRequest, { runId, action, ...(step !== undefined ? { step } : {}) });
      if (r.message) note.textContent = r.message;
    } catch (e) {
      note.textContent = e instanceof Error ? e.message : String(e);
    }
  };
  const button = (
    id: string,
    label: string,
    onClick: () => void,
    o: { disabled?: boolean; title?: string; secondary?: boolean } = {},
  ) => {
    const b = h(
      'vscode-button',
      { id, secondary: o.secondary ?? false, disabled: o.disabled ?? false, title: o.title },
      label,
    );
    b.addEventListener('click', () => {
      if (!b.hasAttribute('disabled')) onClick();
    });
    return b;
  };

  const humanRow = (i: TimelineIntervention) => {
    const row = h(
      'div',
      {
        class: 'tl-human-row',
        role: 'listitem',
        tabindex: 0,
        'data-seq': i.seq,
        title: `${i.kind} by ${i.who} at ${i.at}: sent before step ${i.beforeStep + 1}`,
      },
      h('span', { class: 'tl-idx' }, `→${i.beforeStep + 1}`),
      h('span', { class: 'tl-icons' }, h('span', { class: 'tl-icon tool-human' }, 'human')),
      h('span', { class: 'text' }, `${i.kind === 'correction' ? 'Correction' : 'Hint'}: ${i.text}`),
      h('span', { class: 'who' }, `${i.who} · ${time(i.at)}`),
    );
    const open = () => select(i.beforeStep);
    row.addEventListener('click', open);
    row.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter' || ev.key === ' ') {
        ev.preventDefault();
        open();
      }
    });
    return row;
  };

  const render = () => {
    if (!state) return;
    const s = state;
    const parts: (HTMLElement | string)[] = [];
    if (s.label) {
      parts.push(
        h(
          'span',
          {
            class: 'status assisted',
            id: 'assist-label',
            title: s.analystCode ? "an analyst also ran code in the agent's kernel while it ran" : '',
          },
          s.label,
        ),
      );
    }
    if (s.interventions.length) {
      parts.push(
        h('span', { class: 'muted' }, `${s.interventions.length} human step${s.interventions.length === 1 ? '' : 's'}`),
      );
    }
    if (s.forkOf) {
      parts.push(
        h('span', { class: 'muted', id: 'fork-of' }, `fork of ${s.forkOf.runId} at step ${s.forkOf.step}`),
        button('compare-parent', 'Compare with parent', () => void act('compareForkWithParent'), {
          secondary: true,
          title: 'The fork diff: hint, steps after the fork point, code diff, answers and score',
        }),
      );
    }
    if (s.forks.length) {
      parts.push(
        h(
          'span',
          { class: 'muted', id: 'forks' },
          `${s.forks.length} fork${s.forks.length === 1 ? '' : 's'}: ${s.forks.map((f) => `${f.model}@${f.step}`).join(', ')}`,
        ),
      );
      const steps = s.forks.map((f) => f.step);
      if (steps.some((x, k) => steps.indexOf(x) !== k)) {
        parts.push(button('compare-forks', 'Compare forks', () => void act('compareForks'), { secondary: true }));
      }
    }
    if (s.live) {
      if (s.paused) parts.push(h('span', { class: 'state status warn', id: 'run-paused' }, 'paused'));
      else if (s.pausing) {
        parts.push(h('span', { class: 'state muted', id: 'run-pausing' }, 'pausing after the current step…'));
      }
      if (!s.paused && !s.pausing) {
        parts.push(
          button('pause-run', 'Pause', () => void act('pause'), {
            secondary: true,
            title: 'Pause after the current step (key p in the transcript)',
          }),
        );
      }
    }
    parts.push(
      button('add-hint', 'Add hint…', () => void act('intervene'), {
        disabled: s.cannotIntervene !== null,
        title:
          s.cannotIntervene ??
          'Add a hint or correction for the agent, sent with the next model request (key i in the transcript)',
      }),
    );
    if (s.live && (s.paused || s.pausing)) {
      parts.push(
        button('resume-run', 'Resume', () => void act('resume'), { title: 'Resume (key r in the transcript)' }),
      );
    }
    if (s.cannotIntervene && !s.live) parts.push(h('span', { class: 'why', id: 'assist-why' }, s.cannotIntervene));
    bar.replaceChildren(...parts, note);
    strip.replaceChildren(...[...s.interventions].sort((a, b) => a.seq - b.seq).map(humanRow));
    strip.hidden = !s.interventions.length;
  };

  host.rpc.onNotification(DidChangeAssistanceNotification, (s) => {
    if (s.runId !== runId) return;
    state = s;
    render();
    redrawDetail();
  });
  void host.rpc.request(GetAssistanceRequest, { runId }).then(
    (s) => {
      state = s;
      render();
      redrawDetail();
    },
    (e: unknown) => {
      bar.replaceChildren(
        h('span', { class: 'error' }, `Run controls unavailable: ${e instanceof Error ? e.message : String(e)}`),
      );
    },
  );

  return {
    element: root,
    detail(index: number, last: number): HTMLElement[] {
      const out: HTMLElement[] = [];
      const fork = button('fork-step', 'Fork from this step', () => void act('fork', index + 1), {
        secondary: true,
        title: `A new run that replays steps 1–${index + 1} without model calls, then continues with a model you pick (and an optional hint)`,
      });
      out.push(
        h(
          'div',
          { class: 'tl-fork' },
          fork,
          h('span', { class: 'muted' }, `keeps steps 1–${index + 1}; no model calls for them`),
        ),
      );
      for (const i of (state?.interventions ?? []).filter(
        (x) => x.beforeStep === index || (index === last && x.beforeStep > last),
      )) {
        const where = i.beforeStep > index ? 'after this step (sent with the next model request)' : 'before this step';
        out.push(
          h(
            'article',
            { class: 'human', 'data-seq': i.seq },
            h(
              'h3',
              {},
              h('span', { class: 'tl-icon tool-human' }, 'human'),
              ` ${i.kind === 'correction' ? 'Correction' : 'Hint'} ${where}`,
              h('span', { class: 'muted' }, ` · ${i.who} · ${i.at}`),
            ),
            h('p', {}, i.text),
          ),
        );
      }
      return out;
    },
  };
}
