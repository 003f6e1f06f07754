/**
 * What the Benchmarks view shows of one block item (issue 22): the question as the agent sees it, and — only when a
 * reviewer asks — its ground truth (LongDA answer, BLADE MCQ correct option, DDR / AnalystBench checklist facts).
 * Each benchmark shapes its own item types (`BenchmarkDefinition.itemTypes`, issue 40); this file names none.
 */
import type { Block, BlockItem } from '../../core/suites/types.ts';
import { findBenchmark, itemTypeView } from '../../core/benchmarks/registry.ts';
import type { ItemViewState } from '../../protocol/item.ts';

type Field = ItemViewState['fields'][number];

/** The item as the agent sees it: title, text and named fields. Never a hidden value. An item type its benchmark does not describe shows its id. */
function visibleView(block: Block, item: BlockItem): { title: string; text: string; fields: Field[] } {
  return itemTypeView(block.suite, item)?.view(item) ?? { title: item.id, text: '', fields: [] };
}

/**
 * The hidden ground truth of an item, as named fields (its benchmark's `itemTypes`); empty when the block holds none
 * for it or its benchmark does not describe the item's type.
 * @param block the item's block (its `hidden` resources); `item` one of `block.items`.
 */
export function itemGroundTruth(block: Block, item: BlockItem): Field[] {
  return itemTypeView(block.suite, item)?.groundTruth(block, item) ?? [];
}

/**
 * The item view: the question always; the ground truth only when `reveal` (a reviewer's explicit request).
 * @param o.hasGroundTruthView the benchmark keeps versioned ground truth of the block (BLADE decisions): the view
 *   offers to open it.
 * @throws Error when `itemId` is not an item of the block.
 */
export function itemView(
  block: Block,
  itemId: string,
  o: { reveal: boolean; suiteTitle: string; hasGroundTruthView: boolean },
): ItemViewState {
  const item = block.items.find((i) => i.id === itemId);
  if (!item) throw new Error(`${block.id} has no item ${itemId}`);
  const v = visibleView(block, item);
  const truth = itemGroundTruth(block, item);
  return {
    suite: o.suiteTitle,
    blockId: block.id,
    blockTitle: block.title,
    itemId,
    ...v,
    hasGroundTruth: truth.length > 0,
    groundTruth: o.reveal ? truth : null,
    groundTruthView: o.hasGroundTruthView && !!findBenchmark(block.suite)?.groundTruth?.available(block),
  };
}
