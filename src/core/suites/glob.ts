/**
 * Glob matching for manifests, `--only`, `--tables` and the AnalystBench `list_files` tool, on the platform's
 * own matcher (`path.posix.matchesGlob`, Node ≥ 22: `*`, `**`, `?`, `{a,b}`, `[...]`; dot files only when the
 * pattern names them). Loupe adds only the checks: patterns are POSIX, relative, and may not contain `..`.
 */
import { posix } from 'node:path';
import { LoupeInputError } from '../util/errors.ts';
import { listFilesRecursive, posixRelative } from './util.ts';

/**
 * A matcher for one glob over POSIX relative paths.
 * @param opts.matchBase a pattern without `/` matches the file name in any folder (like `find -name`).
 * @throws LoupeInputError(subject) for an absolute pattern, one containing `..`, or an unclosed `{`.
 */
export function globMatcher(
  pattern: string,
  subject = 'glob',
  opts: { matchBase?: boolean } = {},
): (rel: string) => boolean {
  const p = pattern.replace(/\\/g, '/').replace(/^\.\//, '').trim();
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) {
    throw new LoupeInputError(subject, `glob '${pattern}' must be relative`);
  }
  if (p.split('/').includes('..')) throw new LoupeInputError(subject, `glob '${pattern}' may not contain '..'`);
  if ((p.match(/{/g) ?? []).length > (p.match(/}/g) ?? []).length) {
    throw new LoupeInputError(subject, `glob '${pattern}' has an unclosed '{'`);
  }
  const g = p || '**';
  const base = opts.matchBase && !g.includes('/');
  return (rel: string) => posix.matchesGlob(base ? posix.basename(rel) : rel, g);
}

/**
 * Files under `base` matching any of `patterns` (sorted like {@link listFilesRecursive}).
 * @returns absolute paths.
 */
export function globFiles(base: string, patterns: string[], subject = 'glob'): string[] {
  const ms = patterns.map((p) => globMatcher(p, subject));
  return listFilesRecursive(base).filter((f) => {
    const rel = posixRelative(base, f);
    return ms.some((m) => m(rel));
  });
}
