/**
 * BLADE in side-by-side review (issue 16 "See both outputs aligned"): the final submitted analysis, one section
 * per decision type — conceptual variables, transforms, statistical model, conclusion — so two analyses align by
 * decision, as BLADE's own matching does (spec §1.4.5).
 */
import type { RunStore } from '../../store/types.ts';
import type { RunRecord, StepRecord } from '../../store/records.ts';
import type { ReviewSource } from '../types.ts';
import { bladeState, type BladeRunState } from './toolset.ts';

const fence = (s: string, lang: string) => '```' + lang + '\n' + s.replace(/\n+$/, '') + '\n```';

/**
 * The review sections of a BLADE run from what it recorded: the last valid `submit_analysis` (tool-set state
 * `extra.blade`: `final` and its `submissions` record) and the assistant text of the steps from that submission on.
 * Keys: `conceptual-variables` (IV / DV / controls, moderators, with their columns), `transforms` (transform code),
 * `model` (model code), `conclusion` (the agent's words when submitting and after, then the model's result as the
 * validation printed it; left out when there is neither).
 * @param state the run's `extra` state; `steps` its steps (for the conclusion; [] to leave the words out).
 * @returns the sections, or null when the run has no valid submission (BLADE's generation failure: nothing to review).
 */
export function bladeReviewSections(state: Record<string, unknown>, steps: readonly StepRecord[]): ReviewSource | null {
  const st: BladeRunState = bladeState({ ...state });
  const final = st.final;
  if (!final) return null;
  const cols = (c: string[]) => (c.length ? ` (columns: ${c.map((x) => `\`${x}\``).join(', ')})` : '');
  const cv = [
    ...final.cvars.ivs.map((v) => `- **IV**: ${v.description}${cols(v.columns)}`),
    `- **DV**: ${final.cvars.dv.description}${cols(final.cvars.dv.columns)}`,
    ...final.cvars.controls.map(
      (v) =>
        `- **Control${v.is_moderator ? `, moderator on ${v.moderator_on ?? '?'}` : ''}**: ${v.description}${cols(v.columns)}`,
    ),
  ].join('\n');
  const sections = [
    { key: 'conceptual-variables', title: 'Conceptual variables', markdown: cv },
    { key: 'transforms', title: 'Transforms', markdown: fence(final.transform_code, 'python') },
    { key: 'model', title: 'Model', markdown: fence(final.m_code, 'python') },
  ];
  const accepted = [...st.submissions].reverse().find((s) => s.valid);
  const from = accepted?.stepIndex ?? Infinity;
  const words = steps
    .filter((s) => s.index >= from)
    .map((s) => s.assistant.content?.trim() ?? '')
    .filter(Boolean);
  const result = accepted?.modelResult?.trim();
  const conclusion = [...words, ...(result ? [`Model result:\n\n${fence(result, 'text')}`] : [])].join('\n\n');
  if (conclusion) sections.push({ key: 'conclusion', title: 'Conclusion', markdown: conclusion });
  return { sections };
}

/** {@link bladeReviewSections} of a stored run (`BenchmarkReview.sectionsOf`). */
export async function bladeReviewSource(store: RunStore, run: RunRecord): Promise<ReviewSource | null> {
  const state = await store.getExtraState(run.id);
  if (!bladeState({ ...state }).final) return null;
  return bladeReviewSections(state, await store.getSteps(run.id));
}
