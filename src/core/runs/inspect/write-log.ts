/**
 * Writes an Inspect `EvalLog` to a file: `.json` (the whole log, samples written one at a time) or `.eval` (zip with
 * yazl: `_journal/start.json`, `samples/<id>_epoch_<n>.json`, `summaries.json`, `reductions.json`, `header.json`, as
 * Inspect's `EvalRecorder` writes them). The file is written beside its destination and renamed into place.
 * Source: Inspect AI `log/_recorders/eval.py`, `log/_recorders/json.py`.
 */
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import yazl from 'yazl';
import type { RunStore } from '../../store/types.ts';
import { LoupeInputError } from '../../util/errors.ts';
import { evalLogOf, loadRunForExport, type RunForExport } from './export.ts';

/**
 * Writes runs as one Inspect log.
 * @param out a path ending in `.eval` or `.json` (the user's own file). @returns the number of samples written.
 * @throws LoupeInputError for another extension or an unknown run.
 */
export async function writeInspectLog(
  store: RunStore,
  runIds: readonly string[],
  out: string,
  extra?: (r: RunForExport) => Promise<RunForExport>,
): Promise<{ samples: number }> {
  if (!/\.(eval|json)$/.test(out)) throw new LoupeInputError(out, 'an Inspect log is written to a .eval or .json file');
  const runs: RunForExport[] = [];
  for (const id of runIds) {
    const r = await loadRunForExport(store, id);
    runs.push(extra ? await extra(r) : r);
  }
  const log = evalLogOf(runs, { location: out });
  await writeEvalLog(log, out);
  return { samples: runs.length };
}

/** Writes an `EvalLog` JSON value to `.json` or `.eval` (see the module comment). */
export async function writeEvalLog(log: Record<string, unknown>, out: string): Promise<void> {
  const tmp = `${out}.${process.pid}.tmp`;
  try {
    if (out.endsWith('.json')) await writeJson(log, tmp);
    else await writeZip(log, tmp);
    renameSync(tmp, out);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

async function writeJson(log: Record<string, unknown>, file: string): Promise<void> {
  const ws = createWriteStream(file);
  const write = async (s: string): Promise<void> => {
    if (!ws.write(s)) await once(ws, 'drain');
  };
  const { samples, ...head } = log;
  const headText = JSON.stringify(head, null, 2);
  await write(headText.slice(0, -2) + ',\n  "samples": [');
  const list = (samples as unknown[]) ?? [];
  for (const [i, s] of list.entries()) await write((i ? ',' : '') + '\n' + JSON.stringify(s));
  await write('\n  ]\n}\n');
  ws.end();
  await finished(ws);
}

async function writeZip(log: Record<string, unknown>, file: string): Promise<void> {
  const zip = new yazl.ZipFile();
  const ws = createWriteStream(file);
  zip.outputStream.pipe(ws);
  const { samples, reductions, ...head } = log;
  const list = (samples as Array<Record<string, unknown>>) ?? [];
  const add = (name: string, v: unknown): void => zip.addBuffer(Buffer.from(JSON.stringify(v)), name);
  add('_journal/start.json', { version: head.version, eval: head.eval, plan: head.plan });
  for (const s of list) {
    add(`samples/${String(s.id).replace(/[^A-Za-z0-9._-]/g, '_')}_epoch_${String(s.epoch)}.json`, s);
  }
  add(
    'summaries.json',
    list.map((s) => ({
      id: s.id,
      epoch: s.epoch,
      input: s.input,
      target: s.target,
      metadata: s.metadata,
      scores: s.scores,
      model_usage: s.model_usage,
      error: (s.error as { message?: string } | null)?.message ?? null,
      completed: true,
      message_count: (s.messages as unknown[]).length,
    })),
  );
  add('reductions.json', reductions ?? []);
  add('header.json', head);
  zip.end();
  await finished(ws);
}
