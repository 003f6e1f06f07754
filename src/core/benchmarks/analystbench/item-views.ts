/** How the surfaces show AnalystBench's item type (issue 40): the report task and — on request — the block's checklist criteria. */
import type { ItemTypeViews } from '../types.ts';
import type { AnalystTaskItem } from './items.ts';

/** AnalystBench's item view. */
export const ANALYST_ITEM_TYPES: ItemTypeViews<AnalystTaskItem> = {
  'analyst-task': {
    icon: 'question',
    describe: (item) => ({
      label: item.instruction.split('\n')[0]?.slice(0, 120) ?? item.id,
      detail: item.instruction,
    }),
    view: (item) => ({ title: 'Report task', text: item.instruction, fields: [] }),
    groundTruth: (block) =>
      (block.hidden.checklist ?? []).map((c, i) => ({ name: `Checklist ${i + 1}: ${c.question}`, value: c.answer })),
    hiddenFields: [],
  },
};
