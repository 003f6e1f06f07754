/**
 * The run folders VS Code touches (notebook, Open Run Workspace, export, delete, resume): only a run's recorded
 * workspace that lies inside the runs folder of the setting `loupe.runsDirectory` (issue 36, `trustedRunFolder`);
 * messages in VS Code's terms.
 */
import { join } from 'node:path';
import type { RunRecord } from '../../core/store/records.ts';
import { trustedRunFolder, type RunFolder } from '../../core/store/run-folder.ts';
import type { LoupeContext } from '../context.ts';

/** The run's checked folder against `loupe.runsDirectory`. */
export function runFolderIn(ctx: LoupeContext, run: RunRecord): RunFolder {
  return trustedRunFolder(run, ctx.runsDirectory);
}

/**
 * The run's trusted folder, or an error in VS Code's terms.
 * @param what what is refused ("it is not resumed").
 * @throws Error naming the run, the recorded folder and the setting.
 */
export function requireRunFolderIn(
  ctx: LoupeContext,
  run: RunRecord,
  what: string,
  o: { allowAbsent?: boolean } = {},
): { workspace: string; runDir: string } {
  const f = runFolderIn(ctx, run);
  if (f.workspace && f.runDir) return { workspace: f.workspace, runDir: f.runDir };
  if (o.allowAbsent && f.absent) return { workspace: f.absent, runDir: join(f.absent, '..') };
  const why = f.refused ?? 'its folder is not on this machine';
  throw new Error(
    `Run ${run.id}: ${why}; ${what}. Loupe uses only run folders inside the runs folder (setting loupe.runsDirectory: ${ctx.runsDirectory}).`,
  );
}

/** Where a run's notebook file goes: its run folder when trusted, else `<runs folder>/notebooks/<run id>.ipynb`. */
export function notebookPathIn(ctx: LoupeContext, run: RunRecord): string {
  const f = runFolderIn(ctx, run);
  return f.runDir
    ? join(f.runDir, 'notebook.ipynb')
    : join(ctx.runsDirectory, 'notebooks', `${run.id.replace(/[^A-Za-z0-9._-]/g, '_')}.ipynb`);
}
