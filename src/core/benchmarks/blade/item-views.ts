/** How the surfaces show BLADE's item types (issue 40): the research question, and an MCQ with — on request — its correct option. */
import type { ItemTypeViews } from '../types.ts';
import type { BladeMcqItem, BladeQuestion } from './items.ts';

const mcqTitle = (item: BladeMcqItem) =>
  item.family === 'cvar' ? `Conceptual variable MCQ (${item.mcType})` : `Transform MCQ: ${item.conceptualVariable}`;
const mcqText = (item: BladeMcqItem) => item.options.map((o) => `${o.label}. ${o.text}`).join('\n');

/** BLADE Task 2's item view. */
export const BLADE_ITEM_TYPES: ItemTypeViews<BladeQuestion> = {
  'blade-question': {
    icon: 'question',
    describe: (item) => ({ label: item.question, detail: item.question }),
    view: (item) => ({ title: 'Research question', text: item.question, fields: [] }),
    groundTruth: () => [], // a dataset's decisions are in the ground-truth view (`groundTruthView`)
    hiddenFields: [],
  },
};

/** BLADE Task 1's item view (MCQs; the correct option is in the block's hidden `mcqs`). */
export const BLADE_MCQ_ITEM_TYPES: ItemTypeViews<BladeMcqItem> = {
  'blade-mcq': {
    icon: 'checklist',
    describe: (item) => ({ label: mcqTitle(item), detail: mcqText(item) }),
    view: (item) => ({
      title: mcqTitle(item),
      text: mcqText(item),
      fields: [{ name: 'Question type', value: item.mcType }],
    }),
    groundTruth: (block, item) => {
      const q = block.hidden.mcqs?.mcqs.find(
        (m) =>
          m.family === item.family &&
          m.conceptualVariable === item.conceptualVariable &&
          m.mcType === item.mcType &&
          m.options.map((o) => o.text).join('\u0000') === item.options.map((o) => o.text).join('\u0000'),
      );
      if (!q) return [];
      const right = q.options.find((o) => o.label === q.correctLabel);
      return [
        { name: 'Correct option', value: `${q.correctLabel}. ${right?.text ?? ''}` },
        ...(right?.rationale ? [{ name: 'Rationale', value: right.rationale }] : []),
      ];
    },
    hiddenFields: [],
  },
};
