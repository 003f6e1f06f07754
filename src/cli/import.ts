import { resolve } from 'node:path';
import { importInspectLog, type InspectImportResult } from '../core/runs/inspect/import.ts';
import { listInspectLogs } from '../core/runs/inspect/read-log.ts';
import { openStoreAt } from '../core/store/open.ts';
import { oneLine } from '../core/util/text-safety.ts';
import { JSON_OPTIONS } from './option-groups.ts';
import { declareCommand, defineCommand, parseCommand } from './options.ts';
import { runsRootOf, STORE_OPTIONS, storeLocation } from './store-arg.ts';
import { UsageError } from './types.ts';

const IMPORT = declareCommand({
  synopsis: 'import inspect FILE|DIR…',
  positionals: true,
  groups: [STORE_OPTIONS, JSON_OPTIONS],
  notes: `  Imports Inspect AI logs (.eval zips and .json files; a folder: every log in it): each sample × epoch becomes a run
  of benchmark inspect:<task> (block = sample id), with its messages as steps, its scores as stored scores
  (judge inspect:<scorer>) and its images as run artefacts. Importing the same log again adds nothing.`,
});

/** `loupe import inspect`: Inspect AI logs into the run store (issue 45). */
export const importCommand = defineCommand({
  name: 'import',
  summary: 'import runs evaluated elsewhere (Inspect AI logs) into the run store',
  declarations: [IMPORT],
  async run(argv, io) {
    const { values: v, positionals } = parseCommand(IMPORT, argv);
    if (positionals[0] !== 'inspect') {
      throw new UsageError(`name the format: loupe import inspect FILE|DIR… (got '${positionals[0] ?? ''}')`);
    }
    if (positionals.length < 2) throw new UsageError('name at least one Inspect log file or folder');
    const files = listInspectLogs(positionals.slice(1).map((p) => resolve(io.cwd, p)));
    const store = await openStoreAt(storeLocation(io, v.store), { cwd: io.cwd, env: io.env });
    const results: InspectImportResult[] = [];
    try {
      const runsRoot = runsRootOf(io, v.store);
      for (const f of files) {
        const r = await importInspectLog(store, f, { runsRoot });
        results.push(r);
        if (!v.json) {
          io.out(
            `${oneLine(f)}: task ${oneLine(r.task)}, ${r.samples} sample${r.samples === 1 ? '' : 's'}: ${r.imported.length} imported, ${r.skipped.length} already in the store\n`,
          );
        }
      }
    } finally {
      await store.close();
    }
    if (v.json) io.out(JSON.stringify(results) + '\n');
    return 0;
  },
});
