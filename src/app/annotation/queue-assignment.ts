/**
 * Queue instructions, assignment and experiment scope in the annotation panel (issue 43), host-neutral: what the
 * panel's header and side show (instructions, progress per annotator) and which item is served next — items assigned
 * to the annotator first, then unassigned ones; never an item assigned to someone else; only items of the selected
 * experiment's runs.
 */
import { annotationStoreOf, type QueueEntry } from '../../core/annotations/index.ts';
import { queueAssignmentStoreOf } from '../../core/annotations/queues.ts';
import type { RunStore } from '../../core/store/types.ts';
import type { AnnotationState, QueueView } from '../../protocol/annotation.ts';
import type { RunScope } from '../experiments/scope.ts';

/** The ids of the annotation items about runs in scope, or undefined for every item (no experiment selected). */
export async function itemsInScope(rs: RunStore, scope: RunScope): Promise<Set<string> | undefined> {
  if (!scope.runIds) return undefined;
  if (!scope.runIds.size) return new Set();
  return new Set((await annotationStoreOf(rs).listItems({ runIds: [...scope.runIds] })).map((i) => i.id));
}

/** What the panel adds to a queue's header: instructions, assignment progress, experiment. */
export async function queueExtras(
  rs: RunStore,
  queueId: string,
  scope: RunScope,
  within?: Set<string>,
): Promise<Required<Pick<QueueView, 'instructions' | 'assignment' | 'experiment'>>> {
  const qs = queueAssignmentStoreOf(rs);
  const ins = await qs.instructions(queueId);
  const p = await qs.progress(queueId, within);
  return {
    instructions: ins ? { text: ins.text, version: ins.version, author: ins.author, createdAt: ins.createdAt } : null,
    assignment:
      p.annotators.some((a) => a.assigned) || p.unassigned < p.total
        ? { total: p.total, unassigned: p.unassigned, annotators: p.annotators }
        : null,
    experiment: scope.experiment,
  };
}

/**
 * The chooser of the next item for `me` (the annotation store's `nextItem` `pick`): the first item assigned to them,
 * else the first unassigned one; items assigned to others and items outside `within` are never served. "First" is in
 * queue order after `afterPos`, wrapping (as the store serves without a chooser: skip moves on).
 */
export function assignedPick(
  assigned: ReadonlyMap<string, string>,
  me: string,
  within?: ReadonlySet<string>,
  afterPos = -1,
): (entries: QueueEntry[]) => QueueEntry | undefined {
  return (entries) => {
    const inScope = entries.filter((e) => !within || within.has(e.item.id));
    const open = [...inScope.filter((e) => e.pos > afterPos), ...inScope.filter((e) => e.pos <= afterPos)];
    return open.find((e) => assigned.get(e.item.id) === me) ?? open.find((e) => !assigned.has(e.item.id));
  };
}

/**
 * The panel state with the queue's instructions, assignment and scope added (and who the shown item is assigned to).
 * @param within the items in scope (see {@link itemsInScope}).
 */
export async function withQueueExtras(
  rs: RunStore,
  state: AnnotationState,
  scope: RunScope,
  within?: Set<string>,
): Promise<AnnotationState> {
  const extras = await queueExtras(rs, state.queue.queueId, scope, within);
  const assigned = state.item
    ? ((await queueAssignmentStoreOf(rs).assignments(state.queue.queueId)).get(state.item.itemId) ?? null)
    : null;
  return { queue: { ...state.queue, ...extras }, item: state.item ? { ...state.item, assignedTo: assigned } : null };
}
