/**
 * Keeping a run's evidence in the store (issue 26 "Artefacts in the store"): the files its benchmark's score and
 * review read (the definition's `evidenceFiles`, asked through the registry: no suite is named here) are captured
 * first, then whatever else the agent wrote, within the bounds of `captureRunArtefacts` (`store/artefacts.ts`).
 * Called by the runner whenever a run ends — finished, out of budget, failed, cancelled or crashed — and by scoring
 * for a run that ended before the store kept its files.
 */
import { findBenchmark } from '../benchmarks/registry.ts';
import { captureRunArtefacts, type ArtefactCapture } from '../store/artefacts.ts';
import type { RunRecord } from '../store/records.ts';
import type { RunFolder } from '../store/run-folder.ts';
import type { RunStore } from '../store/types.ts';
import { errorMessage } from '../util/errors.ts';
import { nullLogger, type Logger } from '../util/log.ts';

/**
 * Captures a run's workspace files into the store, its benchmark's evidence files first.
 * @param store the run store holding `run`; `folder` the run's folder checked against the runs folder this user
 *   configured (`runFolderOf`, issue 36: a recorded workspace outside it is never read); `log` gets one line with what
 *   was kept.
 * @param limits bounds overridden (tests): bytes per file, bytes per run, files per run.
 * @returns the capture (stored paths in capture order, skipped files with their reason), or null when it failed: a
 *   failure (the database unreachable, the benchmark's evidence list unreadable) becomes a `warning` event of the
 *   run and a log line, never an exception, so it cannot turn an ended run into a failed one.
 */
export async function captureRunEvidence(
  store: RunStore,
  run: RunRecord,
  folder: RunFolder,
  log: Logger = nullLogger,
  limits: { fileBytes?: number; runBytes?: number; runFiles?: number } = {},
): Promise<ArtefactCapture | null> {
  try {
    const def = findBenchmark(run.suite);
    let first: string[] = [];
    if (def?.evidenceFiles) {
      try {
        first = await def.evidenceFiles(store, run);
      } catch (e) {
        await store.addEvent(
          run.id,
          'warning',
          `artefacts: the files ${def.title} scores and reviews could not be listed (${errorMessage(e)}); captured smallest first`,
        );
      }
    }
    const c = await captureRunArtefacts(store, run, folder, { ...limits, first });
    log.info(
      `run ${run.id}: ${c.stored.length} artefact file(s), ${c.bytes} bytes kept in the store${c.skipped.length ? `; ${c.skipped.length} skipped (see the run's events)` : ''}`,
    );
    return c;
  } catch (e) {
    log.warn(`run ${run.id}: its files were not kept in the store: ${errorMessage(e)}`);
    await store
      .addEvent(run.id, 'warning', `artefacts: the run's files were not kept in the store: ${errorMessage(e)}`)
      .catch(() => undefined);
    return null;
  }
}
