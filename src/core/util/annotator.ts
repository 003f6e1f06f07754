/**
 * Who is annotating: the id stored with every verdict. Source: issue 14 "Who" (a `loupe.annotator` setting,
 * defaulting to git `user.name`, else the OS user).
 */
import { execFileSync } from 'node:child_process';
import { userInfo } from 'node:os';

let gitName: string | null | undefined;

/**
 * The annotator id: `configured` (the `loupe.annotator` setting) when non-empty, else `$LOUPE_ANNOTATOR`, else git's
 * `user.name` (read once, 2 s limit), else the OS user name, else `unknown`.
 * @param env the environment to read `LOUPE_ANNOTATOR` from.
 * @returns a trimmed, non-empty id. Never throws.
 */
export function annotatorId(env: NodeJS.ProcessEnv = process.env, configured?: string): string {
  if (configured?.trim()) return configured.trim();
  if (env.LOUPE_ANNOTATOR?.trim()) return env.LOUPE_ANNOTATOR.trim();
  if (gitName === undefined) {
    try {
      gitName =
        execFileSync('git', ['config', 'user.name'], {
          encoding: 'utf8',
          timeout: 2000,
          stdio: ['ignore', 'pipe', 'ignore'],
        }).trim() || null;
    } catch {
      gitName = null;
    }
  }
  if (gitName) return gitName;
  try {
    return userInfo().username || 'unknown';
  } catch {
    return 'unknown';
  }
}
