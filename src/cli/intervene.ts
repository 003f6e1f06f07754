/**
 * `loupe intervene`: adds a hint or a correction to a run that no process drives now (stopped while paused, failed, or
 * out of budget) as a human step under the run's lease; `loupe run --resume RUN` then sends it with the next model
 * request. A run driven by another process is refused, naming it. Source: issue 20.
 */
import { userInfo } from 'node:os';
import { interveneStoredRun } from '../core/runs/intervene.ts';
import { openExistingStore, STORE_OPTIONS } from './store-arg.ts';
import { UsageError, type CliIo } from './types.ts';
import { JSON_OPTIONS } from './option-groups.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';

const DECL = declareCommand({
  synopsis: 'intervene',
  groups: [
    optionGroup('intervention', {
      run: { type: 'string', value: 'RUN', help: 'the run (required)' },
      text: { type: 'string', value: 'TEXT', help: 'the hint or correction (required)' },
      kind: { type: 'string', value: 'hint|correction', help: 'what it is (default hint)' },
      who: { type: 'string', value: 'NAME', help: 'who gives it (default your user name)' },
    }),
    STORE_OPTIONS,
    JSON_OPTIONS,
  ],
  notes: `  Records TEXT as a human step of RUN (who, when, text): the run becomes 'assisted' and its scores are reported apart.
  Nothing already recorded changes. Resume the run (loupe run --resume RUN) to send it to the model.
  A run being driven by another process is refused (that process is named); pause it there and add the hint in
  its transcript (key i in VS Code). Runs of the reference agent or of external clients cannot be intervened on.
  To continue a finished run with a hint, fork it: loupe run --fork RUN@STEP --hint TEXT.`,
});

/** The analyst's name as the CLI knows it. */
export function cliWho(io: CliIo): string {
  try {
    return io.env.LOUPE_USER ?? io.env.USER ?? userInfo().username;
  } catch {
    return 'unknown';
  }
}

export const interveneCommand = defineCommand({
  name: 'intervene',
  summary: 'add a hint or correction to a stopped run (a human step; the run becomes assisted)',
  declarations: [DECL],
  async run(argv, io) {
    const { values: v } = parseCommand(DECL, argv);
    if (!v.run) throw new UsageError('--run RUN is required');
    if (v.text === undefined) throw new UsageError('--text TEXT is required');
    if (v.kind !== undefined && v.kind !== 'hint' && v.kind !== 'correction') {
      throw new UsageError(`--kind must be hint or correction, got '${v.kind}'`);
    }
    const store = await openExistingStore(io, v.store);
    try {
      const rec = await interveneStoredRun(store, v.run, {
        who: v.who ?? cliWho(io),
        kind: (v.kind as 'hint' | 'correction' | undefined) ?? 'hint',
        text: v.text,
      });
      if (v.json) io.out(JSON.stringify(rec) + '\n');
      else {
        io.out(
          `run ${rec.runId}: ${rec.kind} #${rec.seq} by ${rec.who} recorded before step ${rec.beforeStep + 1}; resume the run to send it (loupe run --resume ${rec.runId})\n`,
        );
      }
      return 0;
    } finally {
      await store.close();
    }
  },
});
