/**
 * Perf helper: builds the user docs cache of the LongDA suite with the shipped CLI before a part that runs LongDA
 * blocks through it. A run starts indexing its block's documentation when it starts (issue 23, `ToolSet.prepare`):
 * parts that measure something else (Python cells at concurrency, process exit) measure it on a complete cache, as a
 * user's second run finds it, instead of paying the first-ever extraction in whichever sample comes first.
 * First-run indexing has its own gates (docs.perf.ts cold, first-search.perf.ts).
 */
import { spawnSync } from 'node:child_process';

/**
 * Runs `loupe index --suite longda` on `root` into the default docs cache (`$LOUPE_CACHE/docs` or `~/.cache/loupe/docs`).
 * @throws Error with the CLI's stderr when the index command fails.
 */
export function warmLongdaDocs(cli: string, root: string, env: NodeJS.ProcessEnv = process.env): void {
  const r = spawnSync(
    process.execPath,
    [cli, 'index', '--root', root, '--suite', 'longda', '--workers', '2', '--json'],
    { env, encoding: 'utf8', timeout: 600_000 },
  );
  if (r.status !== 0) throw new Error(`loupe index failed (${r.status ?? r.signal}): ${r.stderr.slice(-2000)}`);
}
