/**
 * DDR-Bench's failure taxonomy: the eight classes in three groups that the paper's experts used on 206 checklist
 * items judged incorrectly supported (Fig. 8). Definitions paraphrase the paper. Source: DDR-Bench paper §6
 * "Failure Modes", Fig. 8; `../shared/spec/benchmarks.md` §7.1.
 */
import type { Taxonomy } from '../../failures/taxonomy.ts';

const SRC = 'DDR-Bench paper §6 "Failure Modes", Fig. 8';
const EXPLORATION = 'Failure in exploration';
const INSIGHT = 'Poor data-to-insight ability';
const CONTEXT = 'Lost in the context';

export const DDR_TAXONOMY: Taxonomy = {
  id: 'ddr',
  title: 'DDR-Bench failure modes',
  origin: 'paper',
  source: SRC,
  unit: 'both',
  classes: [
    {
      id: 'insufficient-breadth',
      label: 'Insufficient breadth',
      group: EXPLORATION,
      definition:
        'The tables or fields needed for the item were never covered, mostly because the agent stopped exploring early.',
    },
    {
      id: 'insufficient-depth',
      label: 'Insufficient depth',
      group: EXPLORATION,
      definition: 'The relevant data was found but not followed up with the more complex queries the item needed.',
    },
    {
      id: 'superficial-analysis',
      label: 'Superficial analysis',
      group: INSIGHT,
      definition: 'The analysis stops at descriptive statistics without interpreting them.',
    },
    {
      id: 'insight-misinterpretation',
      label: 'Insight misinterpretation',
      group: INSIGHT,
      definition: 'A wrong conclusion is drawn from correct statistics (e.g. a downward trend read as upward).',
    },
    {
      id: 'over-reasoning',
      label: 'Over-reasoning',
      group: INSIGHT,
      definition: 'Strong assumptions or causal claims that the data does not support.',
    },
    {
      id: 'debugging-in-function-calls',
      label: 'Debugging in function calls',
      group: CONTEXT,
      definition: 'Repeated, unproductive debugging of tool calls.',
    },
    {
      id: 'instruction-following-failure',
      label: 'Instruction-following failure',
      group: CONTEXT,
      definition: 'The agent does not follow the task instructions.',
    },
    {
      id: 'fail-in-summarisation',
      label: 'Fail in summarisation',
      group: CONTEXT,
      definition: 'The final summary misses key points that were found during exploration.',
    },
  ],
};
