/**
 * Which files of a folder are documentation. For a LongDA root (`benchmark/` with `<SURVEY>/docs/`,
 * spec §2.2) only the `docs/` trees count: `data/` holds survey microdata, not documentation.
 */
import { readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { homedir } from 'node:os';
import { LoupeInputError } from '../util/errors.ts';

function walk(dir: string, root: string, out: string[]): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    if (e.name.startsWith('.')) continue;
    const abs = join(dir, e.name);
    if (e.isDirectory()) walk(abs, root, out);
    else if (e.isFile()) out.push(relative(root, abs).split(sep).join('/'));
  }
}

/**
 * Lists the documentation files of a root laid out as `<SURVEY>/docs/**` (or `docs/**` when `root` is one survey),
 * relative to the root. The LongDA benchmark uses this layout (its definition's `docFiles`).
 * @param root the folder given to `loupe index --root`; `survey` optional survey name restricting the list to `<survey>/docs/**`.
 * @returns relative paths.
 * @throws LoupeInputError when the root has no docs folder for the survey(s).
 */
export function docsFolderFiles(root: string, survey?: string): string[] {
  const out: string[] = [];
  const isDir = (p: string) => {
    try {
      return statSync(p).isDirectory();
    } catch {
      return false;
    }
  };
  if (isDir(join(root, 'docs')) && !survey) {
    walk(join(root, 'docs'), root, out);
    return out;
  }
  const all = readdirSync(root).filter((s) => isDir(join(root, s, 'docs')));
  // --survey in any case (`nhanes` finds `NHANES`)
  const surveys = survey
    ? [all.find((s) => s === survey) ?? all.find((s) => s.toLowerCase() === survey.toLowerCase()) ?? survey]
    : all;
  for (const s of surveys) {
    const d = join(root, s, 'docs');
    if (!isDir(d)) {
      throw new LoupeInputError(
        survey ? `--survey ${s}` : root,
        `no docs folder at ${d} (surveys with documentation: ${all.join(', ') || 'none'})`,
      );
    }
    walk(d, root, out);
  }
  if (!out.length) throw new LoupeInputError(root, 'no documentation files found (expected <SURVEY>/docs/ folders)');
  return out;
}

/** Default cache folder for documentation indexes: $LOUPE_CACHE/docs or ~/.cache/loupe/docs. */
export function defaultDocsCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LOUPE_CACHE) return join(env.LOUPE_CACHE, 'docs');
  const xdg = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(xdg, 'loupe', 'docs');
}
