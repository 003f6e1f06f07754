/**
 * VS Code commands of queue instructions and assignment (issue 43): write a queue's labelling instructions (typed,
 * or from a Markdown file) and assign its items to a named annotator. The annotation panel shows both.
 */
import { readFile } from 'node:fs/promises';
import * as vscode from 'vscode';
import { annotationStoreOf } from '../core/annotations/index.ts';
import { INSTRUCTIONS_MAX_CHARS, queueAssignmentStoreOf } from '../core/annotations/queues.ts';
import { oneLine } from '../core/util/text-safety.ts';
import { currentAnnotator } from './config.ts';
import type { LoupeContext } from './context.ts';
import { showInformationMessage } from './messages.ts';
import { AnnotationPanel } from './panels/annotation-panel.ts';

async function pickQueue(ctx: LoupeContext, arg: unknown): Promise<string | undefined> {
  const a = arg as { queueId?: unknown } | undefined;
  if (a && typeof a.queueId === 'string') return a.queueId;
  const queues = await annotationStoreOf(ctx.store()).listQueues();
  if (!queues.length) {
    void showInformationMessage('There is no annotation queue yet: open one first (Open Annotation Queue).');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    queues.map((q) => ({ label: oneLine(q.name, 100), description: q.spec.kind, detail: q.id, id: q.id })),
    { title: 'Choose an annotation queue', matchOnDetail: true },
  );
  return pick?.id;
}

/** Re-serves the open panels of a queue so they show the change. */
async function refreshPanel(queueId: string): Promise<void> {
  const p = AnnotationPanel.get(queueId);
  if (p) p.reload();
}

/**
 * `loupe.setQueueInstructions`: the labelling instructions of a queue. Arg `{ queueId, text }` sets them without
 * asking; otherwise the user picks the queue, then types them or picks a Markdown file.
 */
export async function setQueueInstructionsCommand(ctx: LoupeContext, arg?: unknown): Promise<boolean> {
  const queueId = await pickQueue(ctx, arg);
  if (!queueId) return false;
  let text =
    typeof (arg as { text?: unknown } | undefined)?.text === 'string' ? (arg as { text: string }).text : undefined;
  if (text === undefined) {
    const FILE = 'From a Markdown file…';
    const TYPE = 'Type them…';
    const how = await vscode.window.showQuickPick([TYPE, FILE, 'Clear the instructions'], {
      title: 'Queue Instructions',
    });
    if (!how) return false;
    if (how === FILE) {
      const f = await vscode.window.showOpenDialog({
        canSelectMany: false,
        filters: { Markdown: ['md', 'markdown', 'txt'] },
        title: 'Instructions (Markdown)',
      });
      if (!f?.[0]) return false;
      const st = await vscode.workspace.fs.stat(f[0]);
      if (st.size > INSTRUCTIONS_MAX_CHARS * 4) {
        throw new Error(
          `The file ${f[0].fsPath} is too large for instructions (at most ${INSTRUCTIONS_MAX_CHARS} characters).`,
        );
      }
      text = await readFile(f[0].fsPath, 'utf8');
    } else if (how === TYPE) {
      const now = (await queueAssignmentStoreOf(ctx.store()).instructions(queueId))?.text ?? '';
      text = await vscode.window.showInputBox({
        title: 'Queue Instructions (Markdown)',
        prompt: 'What annotators should look for; shown beside every item',
        value: now,
      });
      if (text === undefined) return false;
    } else text = '';
  }
  await queueAssignmentStoreOf(ctx.store()).setInstructions(queueId, text, currentAnnotator());
  await refreshPanel(queueId);
  return true;
}

/**
 * `loupe.assignQueueItems`: assigns items of a queue to a named annotator. Arg `{ queueId, annotator, count }`,
 * `{ queueId, annotator, itemIds }` or `{ queueId, annotator, all: true }` (annotator null: unassign) assigns without
 * asking; otherwise the user picks the queue, names the annotator and chooses how many.
 * @returns the number of items assigned, or undefined when cancelled.
 */
export async function assignQueueItemsCommand(ctx: LoupeContext, arg?: unknown): Promise<number | undefined> {
  const queueId = await pickQueue(ctx, arg);
  if (!queueId) return undefined;
  const a = (arg ?? {}) as { annotator?: unknown; count?: unknown; itemIds?: unknown; all?: unknown };
  let who: string | null | undefined =
    typeof a.annotator === 'string' || a.annotator === null ? a.annotator : undefined;
  const qs = queueAssignmentStoreOf(ctx.store());
  if (who === undefined) {
    who = await vscode.window.showInputBox({
      title: 'Assign Queue Items',
      prompt: 'Annotator to assign items to (their name as set in loupe.annotator)',
      validateInput: (v) => (v.trim() ? null : 'Name the annotator'),
    });
    if (who === undefined) return undefined;
  }
  let which: readonly string[] | 'all' | { unassigned: number } | undefined;
  if (Array.isArray(a.itemIds)) which = a.itemIds.filter((x): x is string => typeof x === 'string');
  else if (typeof a.count === 'number') which = { unassigned: a.count };
  else if (a.all === true) which = 'all';
  else {
    const p = await qs.progress(queueId);
    const pick = await vscode.window.showQuickPick(
      [
        { label: 'Next 10 unassigned items', w: { unassigned: 10 } as const },
        { label: 'Next 25 unassigned items', w: { unassigned: 25 } as const },
        { label: `Every unassigned item (${p.unassigned})`, w: { unassigned: Math.max(1, p.unassigned) } as const },
        { label: `Every item of the queue (${p.total}), reassigning`, w: 'all' as const },
      ],
      { title: `Assign to ${who ? oneLine(who, 60) : 'nobody'}` },
    );
    if (!pick) return undefined;
    which = pick.w;
  }
  const ids = await qs.assign(queueId, which, who, currentAnnotator());
  await refreshPanel(queueId);
  return ids.length;
}
