/** How the surfaces show DDR's item type (issue 40): an entity to analyse and — on request — the block's checklist facts. */
import type { Block } from '../../suites/types.ts';
import type { ItemField, ItemTypeViews } from '../types.ts';
import type { DdrEntityItem } from './items.ts';

/** A block's checklist items as ground-truth fields (DDR facts, AnalystBench criteria). */
export function checklistFields(block: Block): ItemField[] {
  return (block.hidden.checklist ?? []).map((c, i) => ({ name: `Checklist ${i + 1}: ${c.question}`, value: c.answer }));
}

/** DDR's item view. */
export const DDR_ITEM_TYPES: ItemTypeViews<DdrEntityItem> = {
  'ddr-entity': {
    icon: 'person',
    describe: (item) => ({ label: `Entity ${item.entityId}`, detail: item.prompt }),
    view: (item) => ({ title: `Entity ${item.entityId}`, text: item.prompt, fields: [] }),
    groundTruth: (block) => checklistFields(block),
    hiddenFields: [],
  },
};
