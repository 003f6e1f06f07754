/**
 * Run artefacts in the store (issue 26 "Artefacts in the store"): the files an agent wrote in its run workspace —
 * AnalystBench's `report.md` and `figures/*.png` (read by scoring, side-by-side review, the failure-tagging report
 * pane and exports), and anything else it wrote there — are kept in the run store, content-addressed (tables
 * `artefact_blobs` and `run_artefacts`, migration 16), so an expert whose machine does not hold the run folder (a
 * colleague on the team store, a store copied with `loupe store copy`) reads the same evidence. Cell outputs and
 * figures are already rows (`kernel_cells`, `cell_figures`).
 *
 * Bounds: an agent may try to fill the disk (or the team database). A capture keeps files of at most
 * {@link ARTEFACT_FILE_MAX_BYTES} each and {@link ARTEFACT_RUN_MAX_BYTES} / {@link ARTEFACT_RUN_MAX_FILES} per run:
 * first the files a score or review reads (the benchmark's `evidenceFiles`, given by the caller as `first`, in that
 * order: an agent that writes thousands of files cannot push its report out), then the rest smallest first (a
 * figure before a dumped data file); what it skips is named in the result and in a `warning` run event, never
 * silently. Links are never followed and empty files (the sandbox's mount points) are
 * not stored; files of the block's inputs (`dataChecksums`) are not outputs.
 */
import { extname, join, sep } from 'node:path';
import { listContained, readContainedFile } from '../util/contained.ts';
import { LoupeInputError } from '../util/errors.ts';
import { isHeldDatabaseFile } from '../util/held-files.ts';
import type { RunRecord } from './records.ts';
import type { RunFolder } from './run-folder.ts';
import type { RunStore } from './types.ts';

/** Largest file kept (bytes): 16 MiB. */
export const ARTEFACT_FILE_MAX_BYTES = 16 * 1024 * 1024;
/** Most bytes kept per run (sum of its files): 64 MiB. */
export const ARTEFACT_RUN_MAX_BYTES = 64 * 1024 * 1024;
/** Most files kept per run. */
export const ARTEFACT_RUN_MAX_FILES = 1000;
/** Workspace entries looked at per capture (a planted tree of millions of files cannot stall the host). */
const WALK_MAX_ENTRIES = 100_000;

const MEDIA: Record<string, string> = {
  '.md': 'text/markdown',
  '.markdown': 'text/markdown',
  '.txt': 'text/plain',
  '.log': 'text/plain',
  '.csv': 'text/csv',
  '.tsv': 'text/tab-separated-values',
  '.json': 'application/json',
  '.jsonl': 'application/x-ndjson',
  '.py': 'text/x-python',
  '.html': 'text/html',
  '.htm': 'text/html',
  '.xml': 'application/xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.svg': 'image/svg+xml',
  '.webp': 'image/webp',
  '.pdf': 'application/pdf',
  '.ipynb': 'application/x-ipynb+json',
};

/**
 * The media type of a file by its name's extension.
 * @param path a file name or path. @returns e.g. `text/markdown`; `application/octet-stream` when unknown.
 */
export function mediaTypeOf(path: string): string {
  return MEDIA[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

/** What a capture stored and skipped. */
export interface ArtefactCapture {
  /** Files stored (paths relative to the workspace). */
  stored: string[];
  /** Bytes of the stored files. */
  bytes: number;
  /** Files not stored, with their size (bytes) and why. */
  skipped: Array<{
    path: string;
    size: number;
    reason: 'file too large' | 'run byte limit' | 'run file limit' | 'unreadable';
  }>;
  /** True when the workspace holds more entries than a capture looks at. */
  truncatedWalk: boolean;
}

/**
 * Stores the files an agent wrote in a run's workspace into the run store (see the module comment), replacing what
 * an earlier capture stored under the same paths. Called when a run ends, however it ends (the runner, through
 * `captureRunEvidence` of `runs/evidence.ts`), and when a run is first scored.
 * @param store the run store holding the run; `run` the run; `folder` its folder checked by `trustedRunFolder` /
 *   `runFolderOf` (`run-folder.ts`, issue 36): only a trusted `folder.workspace` is read (links never followed); a
 *   recorded path outside the runs folder is never touched.
 * @param limits `first`: workspace-relative paths captured before every other file, in this order (the benchmark's
 *   evidence files; paths that are not files of the workspace are ignored); the bounds can be overridden (tests):
 *   bytes per file, bytes per run, files per run.
 * @returns what was stored (in capture order) and skipped; nothing when the folder is not trusted or absent (another
 *   machine's run).
 * @throws Error from the store (the run is gone, the database is unreachable).
 */
export async function captureRunArtefacts(
  store: RunStore,
  run: Pick<RunRecord, 'id' | 'dataChecksums'>,
  folder: RunFolder,
  limits: { fileBytes?: number; runBytes?: number; runFiles?: number; first?: readonly string[] } = {},
): Promise<ArtefactCapture> {
  const fileMax = limits.fileBytes ?? ARTEFACT_FILE_MAX_BYTES;
  const runMax = limits.runBytes ?? ARTEFACT_RUN_MAX_BYTES;
  const filesMax = limits.runFiles ?? ARTEFACT_RUN_MAX_FILES;
  const out: ArtefactCapture = { stored: [], bytes: 0, skipped: [], truncatedWalk: false };
  const ws = folder.runId === run.id ? folder.workspace : null;
  let listing: ReturnType<typeof listContained> | null;
  try {
    // no trusted workspace (outside the runs folder, another machine's run), a link or not a folder: nothing to capture
    listing = ws ? listContained(ws, WALK_MAX_ENTRIES) : null;
  } catch {
    listing = null;
  }
  if (!ws || !listing) return out;
  const inputs = new Set(Object.keys(run.dataChecksums ?? {}));
  out.truncatedWalk = listing.truncated;
  const found: Array<{ path: string; size: number }> = [];
  for (const e of listing.entries) {
    // links, folders, FIFOs, sockets, devices: never stored (never followed or opened); hard links are refused by the read
    if (e.kind !== 'file') continue;
    if (inputs.has(e.path)) continue;
    // the run store itself (a workspace holding the store folder): never opened outside SQLite, issue 39
    if (isHeldDatabaseFile(join(ws, ...e.path.split('/')))) continue;
    if (e.size === 0) continue; // the sandbox's empty mount points; an empty file is no evidence
    found.push({ path: e.path, size: e.size });
  }
  const rank = new Map<string, number>();
  (limits.first ?? []).forEach((p, i) => {
    const k = p.split(sep).join('/').replace(/^\.\//, '');
    if (!rank.has(k)) rank.set(k, i);
  });
  const ranked = (f: { path: string }) => rank.get(f.path) ?? Infinity;
  found.sort((a, b) => ranked(a) - ranked(b) || a.size - b.size || a.path.localeCompare(b.path));
  const files: Array<{ path: string; bytes: Buffer; mediaType: string }> = [];
  for (const f of found) {
    if (f.size > fileMax) {
      out.skipped.push({ ...f, reason: 'file too large' });
      continue;
    }
    if (files.length >= filesMax) {
      out.skipped.push({ ...f, reason: 'run file limit' });
      continue;
    }
    if (out.bytes + f.size > runMax) {
      out.skipped.push({ ...f, reason: 'run byte limit' });
      continue;
    }
    let bytes: Buffer;
    try {
      bytes = readContainedFile(ws, f.path, null, { maxBytes: fileMax });
    } catch {
      out.skipped.push({ ...f, reason: 'unreadable' });
      continue;
    }
    if (bytes.byteLength > fileMax || out.bytes + bytes.byteLength > runMax) {
      out.skipped.push({
        path: f.path,
        size: bytes.byteLength,
        reason: bytes.byteLength > fileMax ? 'file too large' : 'run byte limit',
      });
      continue;
    }
    files.push({ path: f.path, bytes, mediaType: mediaTypeOf(f.path) });
    out.bytes += bytes.byteLength;
  }
  for (let i = 0; i < files.length; i += 50) await store.artefacts.put(run.id, files.slice(i, i + 50));
  out.stored = files.map((f) => f.path);
  if (out.skipped.length || out.truncatedWalk) {
    const list = out.skipped
      .slice(0, 10)
      .map((s) => `${s.path} (${s.size} bytes, ${s.reason})`)
      .join(', ');
    await store.addEvent(
      run.id,
      'warning',
      `artefacts: ${out.skipped.length} file(s) of the workspace not kept in the store (limits: ${fileMax} bytes per file, ${runMax} bytes and ${filesMax} files per run)${list ? `: ${list}${out.skipped.length > 10 ? ', ...' : ''}` : ''}${out.truncatedWalk ? `; only the first ${WALK_MAX_ENTRIES} workspace entries were looked at` : ''}`,
    );
  }
  return out;
}

/**
 * Reads a file of a run: from its workspace folder when this machine has it and it is trusted (`folder` from
 * `trustedRunFolder` / `runFolderOf`, issue 36), contained (`readContainedFile` of `util/contained.ts`, issue 36:
 * links, FIFOs, sockets, devices, hard-linked files and paths leaving the workspace are refused, reads bounded to
 * {@link ARTEFACT_FILE_MAX_BYTES}), else the copy kept in the store by {@link captureRunArtefacts}.
 * @param store the run store; `folder` the run's checked folder (its `runId` names the run); `rel` the path relative
 *   to the workspace (`report.md`).
 * @returns the text (UTF-8) or the bytes (`encoding` null).
 * @throws LoupeInputError (a `ContainedPathError` naming `rel` and why) when neither the folder nor the store has the file.
 */
export async function readRunFile(store: RunStore, folder: RunFolder, rel: string, encoding: 'utf8'): Promise<string>;
export async function readRunFile(store: RunStore, folder: RunFolder, rel: string, encoding: null): Promise<Buffer>;
export async function readRunFile(
  store: RunStore,
  folder: RunFolder,
  rel: string,
  encoding: 'utf8' | null,
): Promise<string | Buffer> {
  try {
    if (!folder.workspace) throw new LoupeInputError(rel, `no such file in the store's copy of run ${folder.runId}`);
    const opts = { maxBytes: ARTEFACT_FILE_MAX_BYTES };
    return encoding
      ? readContainedFile(folder.workspace, rel, encoding, opts)
      : readContainedFile(folder.workspace, rel, null, opts);
  } catch (e) {
    const key = rel.split(sep).join('/').replace(/^\.\//, '');
    const kept = await store.artefacts.get(folder.runId, key).catch(() => undefined);
    if (!kept) throw e;
    return encoding ? kept.bytes.toString(encoding) : kept.bytes;
  }
}
