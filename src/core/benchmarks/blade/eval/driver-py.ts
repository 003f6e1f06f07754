/**
 * Where BLADE's Python driver lives: `blade_driver.py` beside this file when running from source, a copy at
 * `dist/blade/blade_driver.py` in the bundles and the `.vsix` (esbuild.js copies it). A real Python file, so
 * it is compiled and linted as Python (`npm test` runs `python3 -m py_compile` on it).
 * Source: issue 13 (Python drivers as files); the driver itself documents its protocol.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Finds `blade_driver.py` from source or from the bundles. `$LOUPE_BLADE_DRIVER` overrides.
 * @returns absolute path of the driver.
 * @throws Error listing the places looked at when none exists.
 */
export function bladeDriverPath(): string {
  const env = process.env.LOUPE_BLADE_DRIVER;
  if (env && existsSync(env)) return resolve(env);
  const here = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
  // beside this file (source), dist/blade/ of a bundle, and the same from the folders above (test bundles live in out/test/...)
  const candidates = [join(here, 'blade_driver.py'), join(here, 'blade', 'blade_driver.py')];
  for (let up = here, i = 0; i < 4; i++, up = dirname(up)) {
    candidates.push(
      join(up, 'dist', 'blade', 'blade_driver.py'),
      join(up, 'src', 'core', 'benchmarks', 'blade', 'eval', 'blade_driver.py'),
    );
  }
  for (const c of candidates) if (existsSync(c)) return resolve(c);
  throw new Error(`Loupe's BLADE driver (blade_driver.py) not found. Looked at:\n  ${candidates.join('\n  ')}`);
}

let cached: string | undefined;

/** The driver's source text (read once), for the kernel backend that loads its definitions as a preamble. */
export function bladeDriverSource(): string {
  cached ??= readFileSync(bladeDriverPath(), 'utf8');
  return cached;
}
