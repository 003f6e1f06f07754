/**
 * BLADE in side-by-side review (issue 16): the final submitted analysis, one section per decision type
 * (conceptual variables, transforms, statistical model) so two analyses align by decision, as BLADE's own matching
 * does (spec §1.4.5).
 */
import type { RunStore } from '../../store/types.ts';
import type { RunRecord } from '../../store/records.ts';
import type { ReviewSource } from '../types.ts';
import { bladeState } from './toolset.ts';

const code = (s: string) => '```python\n' + s.replace(/\n+$/, '') + '\n```';

/** Sections of the run's final analysis (`conceptual-variables`, `transforms`, `model`), or null without a valid submission. */
export async function bladeReviewSource(store: RunStore, run: RunRecord): Promise<ReviewSource | null> {
  const final = bladeState(await store.getExtraState(run.id)).final;
  if (!final) return null;
  const cols = (c: string[]) => (c.length ? ` (columns: ${c.map((x) => `\`${x}\``).join(', ')})` : '');
  const cv = [
    ...final.cvars.ivs.map((v) => `- **IV**: ${v.description}${cols(v.columns)}`),
    `- **DV**: ${final.cvars.dv.description}${cols(final.cvars.dv.columns)}`,
    ...final.cvars.controls.map((v) => `- **Control${v.is_moderator ? `, moderator on ${v.moderator_on ?? '?'}` : ''}**: ${v.description}${cols(v.columns)}`),
  ].join('\n');
  return {
    sections: [
      { key: 'conceptual-variables', title: 'Conceptual variables', markdown: cv },
      { key: 'transforms', title: 'Transforms', markdown: code(final.transform_code) },
      { key: 'model', title: 'Model', markdown: code(final.m_code) },
    ],
  };
}
