/**
 * What the Benchmarks view shows of one block item (issue 22): the question as the agent sees it, and — only when a
 * reviewer asks — its ground truth (LongDA answer, BLADE MCQ correct option, DDR / AnalystBench checklist facts).
 * Shaped per item type of the common block model (`suites/types.ts`), never per benchmark name.
 */
import type { Block, BlockItem } from '../../core/suites/types.ts';
import type { ItemViewState } from '../../protocol/item.ts';

type Field = ItemViewState['fields'][number];

/** The item as the agent sees it: title, text and named fields. Never a hidden value. */
function visibleView(item: BlockItem): { title: string; text: string; fields: Field[] } {
  switch (item.type) {
    case 'longda-query': {
      const s = item.answerStructure;
      return {
        title: `Query ${item.id}`, text: item.question,
        fields: [
          { name: 'Answer structure', value: s.kind === 'single_number' ? 'a single number' : `a list of ${s.length}: ${s.labels.join(', ')}` },
          ...(item.additionalInfo ? [{ name: 'Additional information', value: item.additionalInfo }] : []),
          { name: 'Query id', value: item.longdaId },
        ],
      };
    }
    case 'blade-question':
      return { title: 'Research question', text: item.question, fields: [] };
    case 'blade-mcq':
      return {
        title: item.family === 'cvar' ? `Conceptual variable MCQ (${item.mcType})` : `Transform MCQ: ${item.conceptualVariable}`,
        text: item.options.map((o) => `${o.label}. ${o.text}`).join('\n'), fields: [{ name: 'Question type', value: item.mcType }],
      };
    case 'ddr-entity':
      return { title: `Entity ${item.entityId}`, text: item.prompt, fields: [] };
    case 'analyst-task':
      return { title: 'Report task', text: item.instruction, fields: [] };
    case 'task':
      return { title: item.id, text: item.text, fields: [] };
  }
}

/**
 * The hidden ground truth of an item, as named fields; empty when the block holds none for it.
 * @param block the item's block (its `hidden` resources); `item` one of `block.items`.
 */
export function itemGroundTruth(block: Block, item: BlockItem): Field[] {
  switch (item.type) {
    case 'longda-query':
      return [{ name: 'Answer', value: item.answerText || '(empty in benchmark.csv)', code: true }];
    case 'blade-mcq': {
      const q = block.hidden.mcqs?.mcqs.find((m) => m.family === item.family && m.conceptualVariable === item.conceptualVariable && m.mcType === item.mcType && m.options.map((o) => o.text).join('\u0000') === item.options.map((o) => o.text).join('\u0000'));
      if (!q) return [];
      const right = q.options.find((o) => o.label === q.correctLabel);
      return [{ name: 'Correct option', value: `${q.correctLabel}. ${right?.text ?? ''}` }, ...(right?.rationale ? [{ name: 'Rationale', value: right.rationale }] : [])];
    }
    case 'ddr-entity':
    case 'analyst-task': {
      const list = block.hidden.checklist ?? [];
      return list.map((c, i) => ({ name: `Checklist ${i + 1}: ${c.question}`, value: c.answer }));
    }
    case 'blade-question':
      return []; // a dataset's decisions are in the ground-truth view (`groundTruthView`)
    case 'task': {
      const a = block.hidden.answers?.[item.id];
      return a === undefined ? [] : [{ name: 'Answer', value: JSON.stringify(a), code: true }];
    }
  }
}

/**
 * The item view: the question always; the ground truth only when `reveal` (a reviewer's explicit request).
 * @param o.hasGroundTruthView the benchmark keeps versioned ground truth of the block (BLADE decisions): the view
 *   offers to open it.
 * @throws Error when `itemId` is not an item of the block.
 */
export function itemView(block: Block, itemId: string, o: { reveal: boolean; suiteTitle: string; hasGroundTruthView: boolean }): ItemViewState {
  const item = block.items.find((i) => i.id === itemId);
  if (!item) throw new Error(`${block.id} has no item ${itemId}`);
  const v = visibleView(item);
  const truth = itemGroundTruth(block, item);
  return {
    suite: o.suiteTitle, blockId: block.id, blockTitle: block.title, itemId, ...v,
    hasGroundTruth: truth.length > 0, groundTruth: o.reveal ? truth : null, groundTruthView: o.hasGroundTruthView && !!block.hidden.annotations,
  };
}
