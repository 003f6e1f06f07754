/** How the surfaces show LongDA's item type (issue 40): a query, its answer structure and — on request — its answer. */
import type { ItemTypeViews } from '../types.ts';
import type { AnswerStructure, LongdaQuery } from './items.ts';

const structureText = (s: AnswerStructure, long: boolean) =>
  s.kind === 'single_number'
    ? long
      ? 'a single number'
      : 'single number'
    : `${long ? 'a ' : ''}list of ${s.length}: ${s.labels.join(', ')}`;

/** LongDA's item views: one per item type (the compiler checks it). */
export const LONGDA_ITEM_TYPES: ItemTypeViews<LongdaQuery> = {
  'longda-query': {
    icon: 'question',
    describe: (item) => ({
      label: item.question,
      detail: `${item.question}\n\nAnswer: ${structureText(item.answerStructure, false)}${item.additionalInfo ? `\nNote: ${item.additionalInfo}` : ''}`,
    }),
    view: (item) => ({
      title: `Query ${item.id}`,
      text: item.question,
      fields: [
        { name: 'Answer structure', value: structureText(item.answerStructure, true) },
        ...(item.additionalInfo ? [{ name: 'Additional information', value: item.additionalInfo }] : []),
        { name: 'Query id', value: item.longdaId },
      ],
    }),
    groundTruth: (_block, item) => [
      { name: 'Answer', value: item.answerText || '(empty in benchmark.csv)', code: true },
    ],
    hiddenFields: ['groundTruth', 'answerText'],
  },
};
