/**
 * `loupe annotations instructions | assign | progress | pending` (issue 43): a queue's labelling instructions, items
 * assigned to named annotators and progress per annotator, through the same store as the annotation panel.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { annotationStoreOf } from '../core/annotations/index.ts';
import { queueAssignmentStoreOf, type AssignmentProgress } from '../core/annotations/queues.ts';
import type { RunStore } from '../core/store/types.ts';
import { LoupeInputError } from '../core/util/errors.ts';
import { oneLine } from '../core/util/text-safety.ts';
import { runScope } from '../app/experiments/scope.ts';
import { UsageError, type CliIo } from './types.ts';

/** The options these subcommands read. */
export interface QueueArgs {
  queue?: string | undefined;
  text?: string | undefined;
  file?: string | undefined;
  to?: string | undefined;
  item?: string | undefined;
  count?: string | undefined;
  unassign?: boolean | undefined;
  'all-items'?: boolean | undefined;
  experiment?: string | undefined;
  json?: boolean | undefined;
}

/** A progress table: one line per annotator, `ana  2 / 3 assigned done  (+1 unassigned)`. */
export function formatAssignmentProgress(p: AssignmentProgress, name: string): string {
  const lines = [`${oneLine(name)} (${p.queueId}): ${p.total} item(s), ${p.unassigned} unassigned`];
  for (const a of p.annotators) {
    lines.push(
      `  ${oneLine(a.annotator)}  ${a.done} / ${a.assigned} assigned done${a.extra ? `  (+${a.extra} not assigned to them)` : ''}`,
    );
  }
  if (!p.annotators.length) lines.push('  nobody is assigned or has labelled an item yet');
  return lines.join('\n') + '\n';
}

/**
 * The items of a queue that are about runs of the experiment, or undefined when no experiment is given.
 * @throws UsageError when no run carries the tag.
 */
export async function experimentItems(rs: RunStore, experiment: string | undefined): Promise<Set<string> | undefined> {
  if (experiment === undefined) return undefined;
  const scope = await runScope(rs, experiment);
  if (!scope.runIds?.size) throw new UsageError(`--experiment: no run is tagged '${experiment}'`, { showUsage: false });
  return new Set((await annotationStoreOf(rs).listItems({ runIds: [...scope.runIds] })).map((i) => i.id));
}

/**
 * Runs one of the subcommands.
 * @returns the exit code, or undefined when `sub` is not one of them.
 */
export async function queueSubcommand(
  sub: string,
  rs: RunStore,
  v: QueueArgs,
  who: string,
  io: CliIo,
): Promise<number | undefined> {
  if (!['instructions', 'assign', 'progress', 'pending'].includes(sub)) return undefined;
  const qs = queueAssignmentStoreOf(rs);
  if (sub === 'pending') {
    const within = await experimentItems(rs, v.experiment);
    const rows = (await qs.pendingFor(who, v.queue)).filter((p) => !within || within.has(p.itemId));
    if (v.json) io.out(JSON.stringify({ annotator: who, pending: rows }) + '\n');
    else {
      io.out(
        rows.length
          ? rows.map((r) => `${r.queueId}  #${r.pos + 1}  ${r.itemId}${r.runId ? `  run ${r.runId}` : ''}\n`).join('') +
              `${rows.length} item(s) pending for ${oneLine(who)}\n`
          : `nothing pending for ${oneLine(who)}\n`,
      );
    }
    return 0;
  }
  if (!v.queue) throw new UsageError(`${sub}: --queue ID is required (loupe annotations queue prints queue ids)`);
  const q = await annotationStoreOf(rs).getQueue(v.queue);
  if (!q) throw new UsageError(`--queue: no queue '${v.queue}'`, { showUsage: false });
  if (sub === 'instructions') {
    if (v.text !== undefined && v.file !== undefined) throw new UsageError('give --text or --file, not both');
    if (v.text !== undefined || v.file !== undefined) {
      let text = v.text ?? '';
      if (v.file !== undefined) {
        const f = resolve(io.cwd, v.file);
        try {
          text = readFileSync(f, 'utf8');
        } catch (e) {
          throw new LoupeInputError(f, `cannot read: ${(e as Error).message}`);
        }
      }
      const saved = await qs.setInstructions(q.id, text, who);
      io.out(
        text.trim()
          ? `instructions of ${oneLine(q.name)}: version ${saved.version}\n`
          : `instructions of ${oneLine(q.name)} cleared\n`,
      );
      return 0;
    }
    const ins = await qs.instructions(q.id);
    if (v.json) io.out(JSON.stringify({ queue: q.id, instructions: ins ?? null }) + '\n');
    else {
      io.out(
        ins
          ? `${oneLine(q.name)}: instructions v${ins.version} by ${oneLine(ins.author)}\n${ins.text
              .split('\n')
              .map((l) => oneLine(l, 2000))
              .join('\n')}\n`
          : `${oneLine(q.name)} has no instructions (set them: --text TEXT or --file FILE.md)\n`,
      );
    }
    return 0;
  }
  if (sub === 'assign') {
    if (!v.unassign && !v.to) throw new UsageError('assign: --to NAME (or --unassign) is required');
    const count =
      v.count === undefined
        ? undefined
        : /^\d+$/.test(v.count) && Number(v.count) > 0
          ? Number(v.count)
          : (() => {
              throw new UsageError(`--count must be a positive whole number, got '${v.count}'`);
            })();
    const picks = [v.item !== undefined, count !== undefined, !!v['all-items']].filter(Boolean).length;
    if (picks !== 1) {
      throw new UsageError('assign: say which items: --item ID, --count N (the next N unassigned) or --all-items');
    }
    const ids = await qs.assign(
      q.id,
      v.item !== undefined
        ? v.item
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : count !== undefined
          ? { unassigned: count }
          : 'all',
      v.unassign ? null : v.to!,
      who,
    );
    io.out(
      `${ids.length} item(s) of ${oneLine(q.name)} ${v.unassign ? 'unassigned' : `assigned to ${oneLine(v.to!)}`}\n`,
    );
    return 0;
  }
  const p = await qs.progress(q.id, await experimentItems(rs, v.experiment));
  if (v.json) io.out(JSON.stringify(p) + '\n');
  else io.out(formatAssignmentProgress(p, q.name));
  return 0;
}
