import { resolve } from 'node:path';
import { writeInspectLog } from '../core/runs/inspect/write-log.ts';
import { oneLine } from '../core/util/text-safety.ts';
import { declareCommand, optionGroup, parseCommand } from './options.ts';
import { openExistingStore, STORE_OPTIONS } from './store-arg.ts';
import { UsageError, type CliIo } from './types.ts';

/** `loupe export inspect`'s options. */
export const EXPORT_INSPECT = declareCommand({
  synopsis: 'export inspect (--run ID | --sweep ID | --block ID) --out FILE.eval|FILE.json',
  groups: [
    optionGroup('selection', {
      run: { type: 'string', multiple: true, value: 'ID', help: 'this run (repeatable; one sample each)' },
      sweep: { type: 'string', value: 'ID', help: 'every unit of this sweep' },
      block: { type: 'string', value: 'ID', help: 'every run of this block' },
      suite: { type: 'string', value: 'S', help: 'with --block: only runs of this benchmark' },
      out: { type: 'string', value: 'FILE', help: 'the log to write: .eval (zip) or .json' },
    }),
    STORE_OPTIONS,
  ],
  notes: `  Writes stored runs as one Inspect AI evaluation log (format version 2) that Inspect's log viewer opens and
  loupe import inspect reads back: one sample per run, its steps as messages, its scores, token use and errors.`,
});

/** `loupe export inspect`: runs as an Inspect AI log (issue 45). @param argv the arguments after `inspect`. */
export async function exportInspect(argv: string[], io: CliIo): Promise<number> {
  const { values: v } = parseCommand(EXPORT_INSPECT, argv);
  if (!v.out) throw new UsageError('--out FILE.eval|FILE.json is required');
  if (!/\.(eval|json)$/.test(v.out)) throw new UsageError(`--out ${v.out}: an Inspect log ends in .eval or .json`);
  const chosen = [v.run?.length ? 1 : 0, v.sweep ? 1 : 0, v.block ? 1 : 0].reduce((a, b) => a + b, 0);
  if (chosen !== 1) throw new UsageError('choose the runs with exactly one of --run, --sweep, --block');
  const store = await openExistingStore(io, v.store);
  try {
    const ids = v.run?.length
      ? v.run
      : (
          await store.listRuns(
            v.sweep ? { sweepId: v.sweep } : { blockId: v.block!, ...(v.suite ? { suite: v.suite } : {}) },
          )
        )
          .reverse()
          .map((r) => r.id);
    if (!ids.length) {
      throw new UsageError(`no run matches ${v.sweep ? `--sweep ${v.sweep}` : `--block ${v.block}`}`, {
        showUsage: false,
      });
    }
    const out = resolve(io.cwd, v.out);
    const r = await writeInspectLog(store, ids, out);
    io.out(`${oneLine(out)}: ${r.samples} sample${r.samples === 1 ? '' : 's'}\n`);
  } finally {
    await store.close();
  }
  return 0;
}
