/**
 * AnalystBench's nine report failure modes: domain experts' free-form comments on reports (paired with checklist
 * criteria scoring below 3/5) coded into nine modes. Definitions paraphrase the paper. Source: AnalystBench paper
 * Table 4; `../shared/spec/benchmarks.md` §7.2.
 */
import type { Taxonomy } from '../../failures/taxonomy.ts';

export const ANALYSTBENCH_TAXONOMY: Taxonomy = {
  id: 'analystbench-report',
  title: 'AnalystBench report failure modes',
  origin: 'paper',
  source: 'AnalystBench paper Table 4',
  unit: 'sentence',
  classes: [
    {
      id: 'inappropriate-structure',
      label: 'Inappropriate structure',
      definition: 'Required sections are missing or out of order, or there are extra off-task sections.',
    },
    {
      id: 'missing-incorrect-tables',
      label: 'Missing/incorrect tables',
      definition: 'Required tables are absent, unparsable or off-schema.',
    },
    {
      id: 'missing-incorrect-figures',
      label: 'Missing/incorrect figures',
      definition: 'Required charts are absent or off-spec (axes, labels, chart type).',
    },
    {
      id: 'missing-quantitative-facts',
      label: 'Missing quantitative facts',
      definition: 'Dates, values or units are omitted or wrong (placeholders, bad rounding).',
    },
    {
      id: 'missing-incorrect-citations',
      label: 'Missing/incorrect citations',
      definition: 'Required identifiers are omitted or misassigned.',
    },
    {
      id: 'undefined-terminology',
      label: 'Undefined terminology',
      definition: 'Acronyms or terms are used without definition.',
    },
    {
      id: 'missing-analysis',
      label: 'Missing analysis',
      definition: 'Required comparisons, trends or grounding are omitted.',
    },
    {
      id: 'low-actionability',
      label: 'Low actionability',
      definition: 'Findings are not turned into implications, affected parties or next steps.',
    },
    {
      id: 'scope-and-nuance-errors',
      label: 'Scope and nuance errors',
      definition: 'The scope or strength of evidence is blurred; takeaways are over-generalised.',
    },
  ],
};
