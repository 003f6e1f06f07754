/**
 * A path read from the run store is never trusted (issue 36). A colleague with write access to the team store, or a
 * crafted SQLite file brought in with `loupe store copy`, can set a run's recorded `workspace` to any folder
 * (`/home/you`); scoring, exporting, replaying or deleting that run must not then read, write or remove files there.
 *
 * The recorded path is `RunRecord.storedWorkspace` (ESLint forbids reading it anywhere but here and in the store
 * engines): every consumer asks {@link trustedRunFolder} (or {@link runFolderOf}, which also records why on the run)
 * with the runs folder this user configured (CLI: `runs/` next to the `--store` file, or `./.loupe/runs` for a team
 * store; VS Code: `loupe.runsDirectory`). The folder is used only when, by real path, it lies inside that runs folder
 * as `<runs folder>/<run>/<workspace>`, every component below the runs folder is a real directory (no link on the
 * way) owned by this user. Otherwise the run's files are read only from the store's artefact copy (`readRunFile`).
 */
import { lstatSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { LoupeInputError } from '../util/errors.ts';
import { nullLogger, type Logger } from '../util/log.ts';
import type { RunRecord } from './records.ts';
import type { RunStore } from './types.ts';

/** A run's folder on this machine, checked (issue 36). */
export interface RunFolder {
  readonly runId: string;
  /** Real path of the run's workspace folder when it is a trusted folder of this machine; null: read the store's copy. */
  readonly workspace: string | null;
  /** Real path of the run folder (the workspace's parent: `notebook.ipynb`, `blobs/`, `export/`), or null. */
  readonly runDir: string | null;
  /**
   * Why the recorded workspace is not used ("workspace /home/x is outside the runs folder /…"); null when it is used,
   * when it does not exist on this machine (another machine's run) or when no runs folder was given.
   */
  readonly refused: string | null;
  /**
   * The workspace path inside the runs folder when it passed the checks but (a part of it) does not exist on this
   * machine yet (a worker's resume recreates it); null otherwise.
   */
  readonly absent: string | null;
}

/** A folder that reads nothing from disk: the run's files come from the store's copy only. */
export function storeCopyOnly(runId: string): RunFolder {
  return { runId, workspace: null, runDir: null, refused: null, absent: null };
}

/** The path of `p` below `root` (components), or undefined when it is not strictly inside. */
function below(root: string, p: string): string[] | undefined {
  const r = relative(root, p);
  if (!r || r === '..' || r.startsWith(`..${sep}`) || isAbsolute(r)) return undefined;
  return r.split(sep);
}

/**
 * Checks a run's recorded workspace against the runs folder this user configured (see the module comment).
 * @param run the run as stored (`storedWorkspace`: the path recorded, untrusted).
 * @param runsRoot the runs folder this user configured (absolute, or relative to the process cwd); null/undefined:
 *   none (the run's files are read from the store's copy, nothing is refused).
 * @returns the folder (real paths) when trusted; `workspace: null` and `refused` saying why when the path is not a
 *   folder of `<runs folder>/<run>/<workspace>` reached without links and owned by this user; `workspace: null`,
 *   `refused: null` when it is inside but absent. Never throws; never follows a link. A runs folder named `runs`
 *   (the CLI's, next to a SQLite store) also trusts exactly `<its parent>/<run id>/workspace` (VS Code's layout of the
 *   same store folder), nothing else beside it.
 * Source: issue 36 "A path read from the store is never trusted".
 */
export function trustedRunFolder(
  run: Pick<RunRecord, 'id' | 'storedWorkspace'>,
  runsRoot: string | null | undefined,
): RunFolder {
  const stored = run.storedWorkspace;
  const no = (refused: string | null, absent: string | null = null): RunFolder => ({
    runId: run.id,
    workspace: null,
    runDir: null,
    refused,
    absent,
  });
  if (!runsRoot) return no(null);
  if (typeof stored !== 'string' || !stored || stored.includes('\u0000') || !isAbsolute(stored)) {
    return no(
      `workspace ${JSON.stringify(stored)} is not an absolute path inside the runs folder ${resolve(runsRoot)}`,
    );
  }
  const given = resolve(runsRoot);
  let root: string;
  try {
    root = realpathSync(given);
  } catch {
    root = given;
  }
  const ws = resolve(stored);
  let parts = below(root, ws) ?? below(given, ws);
  if (!parts && basename(root) === 'runs') {
    // The one other layout Loupe writes: VS Code keeps the store in `loupe.runsDirectory` itself and each run in
    // `<that folder>/<run id>/workspace`, while the CLI given that store (`--store <folder>/runs.sqlite`) takes
    // `<folder>/runs` as its runs folder. Trusted only in exactly that shape (never any folder beside the store).
    const up = dirname(root);
    const p2 = below(up, ws) ?? below(dirname(given), ws);
    if (
      p2 &&
      p2.length === 2 &&
      p2[0] === run.id &&
      p2[1] === 'workspace' &&
      /^[A-Za-z0-9._-]{1,200}$/.test(run.id) &&
      !/^\.+$/.test(run.id)
    ) {
      root = up;
      parts = p2;
    }
  }
  if (!parts) return no(`workspace ${stored} is outside the runs folder ${root}`);
  if (parts.length < 2) {
    return no(
      `workspace ${stored} is not a run's workspace (<runs folder>/<run>/<workspace>) of the runs folder ${root}`,
    );
  }
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  let cur = root;
  for (const p of parts) {
    cur = join(cur, p);
    let st;
    try {
      st = lstatSync(cur);
    } catch {
      return no(null, join(root, ...parts)); // absent on this machine: another machine's run, nothing to read
    }
    if (st.isSymbolicLink()) return no(`workspace ${stored} passes through the link ${cur} (links are never followed)`);
    if (!st.isDirectory()) return no(`workspace ${stored}: ${cur} is not a folder`);
    if (uid !== undefined && st.uid !== uid) {
      return no(`workspace ${stored}: ${cur} is owned by another user (uid ${st.uid})`);
    }
  }
  return { runId: run.id, workspace: cur, runDir: dirname(cur), refused: null, absent: null };
}

/**
 * {@link trustedRunFolder}, and when the recorded workspace is refused, a `warning` event on the run saying why
 * ("workspace /home/x is outside the runs folder /…; read from the store's copy"; recorded once per reason) and a
 * log line.
 * @param store the run store holding `run`; `runsRoot` the runs folder this user configured (see `trustedRunFolder`).
 * @returns the checked folder. Never throws for the check; a failing event write is only logged.
 * Source: issue 36.
 */
export async function runFolderOf(
  store: RunStore,
  run: Pick<RunRecord, 'id' | 'storedWorkspace'>,
  runsRoot: string | null | undefined,
  log: Logger = nullLogger,
): Promise<RunFolder> {
  const f = trustedRunFolder(run, runsRoot);
  if (f.refused) {
    const message = `${f.refused}; read from the store's copy`;
    log.warn(`run ${run.id}: ${message}`);
    try {
      if (!(await store.getEvents(run.id)).some((e) => e.message === message)) {
        await store.addEvent(run.id, 'warning', message);
      }
    } catch (e) {
      log.warn(`run ${run.id}: the event could not be recorded: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return f;
}

/** Thrown when a run whose recorded folder is not trusted would be driven or written (resume, replay, export, delete). */
export class RunFolderRefusedError extends LoupeInputError {
  readonly runId: string;
  readonly reason: string;
  constructor(runId: string, reason: string, what: string) {
    super(`run ${runId}`, `${reason}; ${what}`);
    this.name = 'RunFolderRefusedError';
    this.runId = runId;
    this.reason = reason;
  }
}

/**
 * The run's trusted folder for a use that writes or drives it (resume, replay, notebook, export next to the run,
 * delete), or an error.
 * @param what what is refused, in the words of the surface ("it is not resumed").
 * @param o `allowAbsent`: a workspace inside the runs folder that does not exist yet is returned (as the path it
 *   will have) rather than refused (resume recreates it).
 * @returns `workspace` and `runDir` (real paths inside the runs folder).
 * @throws RunFolderRefusedError (a LoupeInputError naming the run) when the recorded workspace is refused or absent.
 * Source: issue 36.
 */
export function requireRunFolder(
  run: Pick<RunRecord, 'id' | 'storedWorkspace'>,
  runsRoot: string | null | undefined,
  what: string,
  o: { allowAbsent?: boolean } = {},
): { workspace: string; runDir: string } {
  const f = trustedRunFolder(run, runsRoot);
  if (f.workspace && f.runDir) return { workspace: f.workspace, runDir: f.runDir };
  if (o.allowAbsent && f.absent) return { workspace: f.absent, runDir: dirname(f.absent) };
  throw new RunFolderRefusedError(
    run.id,
    f.refused ??
      (runsRoot
        ? `its workspace ${run.storedWorkspace} does not exist on this machine`
        : 'no runs folder is configured'),
    what,
  );
}

/**
 * A run id read from the store, as one path segment (a run folder `<runs folder>/<id>`, an export file `<id>.jsonl`):
 * letters, digits, `.`, `_`, `-`, at most 200 characters, not `.`/`..` (a colleague's store cannot name `../x`).
 * @returns the id. @throws LoupeInputError naming the run when it is not a safe segment. Source: issue 36.
 */
export function runIdSegment(id: string): string {
  if (typeof id !== 'string' || !/^[A-Za-z0-9._-]{1,200}$/.test(id) || /^\.+$/.test(id)) {
    throw new LoupeInputError(
      `run ${JSON.stringify(id)}`,
      'the run id read from the store is not a plain name (letters, digits, . _ -); no file is named after it',
    );
  }
  return id;
}

/**
 * A workspace-relative path read from the store (a figure or report path of a tool set's state, an artefact path),
 * normalised to `a/b.png`, or null when it would leave the folder it is joined to (absolute, `..`, NUL, backslash,
 * empty). Source: issue 36.
 */
export function storedRelPath(p: unknown): string | null {
  if (typeof p !== 'string' || !p || p.includes('\u0000') || p.includes('\\') || p.startsWith('/')) return null;
  const parts = p.split('/').filter((x) => x && x !== '.');
  if (!parts.length || parts.some((x) => x === '..')) return null;
  return parts.join('/');
}
