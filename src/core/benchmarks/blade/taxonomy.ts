/**
 * A failure taxonomy for BLADE analyses. LOUPE'S OWN: BLADE's authors read 56 outputs for case studies but publish
 * no taxonomy (spec §7.3); these classes follow BLADE's three decision types (conceptual variables, transforms,
 * statistical models). Source: Loupe, issue 19 (not the BLADE paper).
 */
import type { Taxonomy } from '../../failures/taxonomy.ts';

export const BLADE_TAXONOMY: Taxonomy = {
  id: 'blade',
  title: "BLADE analysis decisions (Loupe's own)",
  origin: 'loupe',
  source: "Loupe, issue 19: Loupe's own taxonomy; BLADE publishes none (spec §7.3)",
  unit: 'both',
  classes: [
    {
      id: 'unjustified-conceptual-variable',
      label: 'Unjustified conceptual variable',
      definition:
        'A conceptual variable (IV, DV, control, moderator) is chosen or operationalised without a justification the data or the research question supports.',
    },
    {
      id: 'unjustified-transform',
      label: 'Unjustified transform',
      definition:
        'A data transform (filter, derive, recode, aggregate) that is not justified, or a needed one that is missing.',
    },
    {
      id: 'unjustified-model',
      label: 'Unjustified model choice',
      definition: 'A statistical model whose family or specification does not fit the question or the data.',
    },
  ],
};
