/**
 * Minimal, safe glob matching for manifests: `*` (within a path segment), `**` (any number of
 * segments), `?`, `{a,b}` alternatives. Patterns are POSIX, relative, and may not contain `..`.
 */
import { LoupeInputError } from '../util/errors.ts';
import { listFilesRecursive, posixRelative } from './util.ts';

/**
 * Compiles a glob to a RegExp matching POSIX relative paths.
 * @throws LoupeInputError(subject) for an absolute pattern or one containing `..`.
 */
export function globToRegExp(pattern: string, subject = 'glob'): RegExp {
  const p = pattern.replace(/\\/g, '/').replace(/^\.\//, '');
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) throw new LoupeInputError(subject, `glob '${pattern}' must be relative`);
  if (p.split('/').includes('..')) throw new LoupeInputError(subject, `glob '${pattern}' may not contain '..'`);
  let re = '';
  let i = 0;
  let inAlt = 0;
  while (i < p.length) {
    const c = p[i]!;
    if (c === '*') {
      if (p[i + 1] === '*') {
        const atStart = i === 0 || p[i - 1] === '/';
        const atEnd = i + 2 === p.length || p[i + 2] === '/';
        if (atStart && atEnd) {
          re += p[i + 2] === '/' ? '(?:[^/]+/)*' : '.*';
          i += p[i + 2] === '/' ? 3 : 2;
          continue;
        }
      }
      re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '{') {
      re += '(?:';
      inAlt++;
    } else if (c === '}' && inAlt > 0) {
      re += ')';
      inAlt--;
    } else if (c === ',' && inAlt > 0) re += '|';
    else re += c.replace(/[.+^$()|[\]\\]/g, '\\$&');
    i++;
  }
  if (inAlt) throw new LoupeInputError(subject, `glob '${pattern}' has an unclosed '{'`);
  return new RegExp(`^${re}$`);
}

/**
 * Files under `base` matching any of `patterns` (sorted like {@link listFilesRecursive}).
 * @returns absolute paths.
 */
export function globFiles(base: string, patterns: string[], subject = 'glob'): string[] {
  const res = patterns.map((p) => globToRegExp(p, subject));
  return listFilesRecursive(base).filter((f) => {
    const rel = posixRelative(base, f);
    return res.some((r) => r.test(rel));
  });
}
