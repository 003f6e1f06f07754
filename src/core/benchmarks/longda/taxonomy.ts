/**
 * A failure taxonomy for LongDA answers. LOUPE'S OWN: the LongDA paper publishes no failure taxonomy; these classes
 * name the ways a survey query can be answered wrong in LongDA's setting (survey documentation, weights, universes,
 * survey years and files). Source: Loupe, issue 19 (not the LongDA paper).
 */
import type { Taxonomy } from '../../failures/taxonomy.ts';

export const LONGDA_TAXONOMY: Taxonomy = {
  id: 'longda',
  title: "LongDA answer failures (Loupe's own)",
  origin: 'loupe',
  source: "Loupe, issue 19: Loupe's own taxonomy, not from the LongDA paper",
  unit: 'step',
  classes: [
    {
      id: 'wrong-variable',
      label: 'Wrong variable',
      definition:
        'The answer is computed from a variable other than the one the query asks about (a similarly named or recoded variable).',
    },
    {
      id: 'wrong-weight-or-design',
      label: 'Wrong weight or design variable',
      definition:
        'The survey weight, or a design variable (strata, PSU, replicate weights), is missing or the wrong one.',
    },
    {
      id: 'wrong-universe',
      label: 'Wrong universe or subpopulation',
      definition:
        "The estimate is over another population than the query's (filters, age range, skip patterns, missing codes kept).",
    },
    {
      id: 'wrong-year-or-file',
      label: 'Wrong survey year or file',
      definition: 'The data comes from another survey year, wave or data file than the query names.',
    },
    {
      id: 'unit-or-rounding',
      label: 'Unit or rounding',
      definition:
        'The right quantity in the wrong unit or scale (percent vs fraction, thousands), or rounded differently than asked.',
    },
    { id: 'arithmetic', label: 'Arithmetic', definition: 'The inputs are right but the computation on them is wrong.' },
    { id: 'gave-up', label: 'Gave up', definition: 'No answer, or an answer that says it could not be determined.' },
  ],
};
