// Where the integration tests get the real VS Code: code-server from the npm registry, installed once into
// .cache/code-server with the node running this script (code-server's postinstall checks the node major).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CS_VERSION = '4.139.1';
export const CS_DIR = join(ROOT, '.cache', 'code-server');
export const CS_ENTRY = join(CS_DIR, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const lap = (m) => console.log(`[code-server] ${m}`);

/** Installs code-server from npm into .cache/code-server with this node (its postinstall checks the node major). */
export function ensureCodeServer() {
  if (existsSync(CS_ENTRY)) return;
  lap(`installing code-server@${CS_VERSION} into ${CS_DIR}`);
  mkdirSync(CS_DIR, { recursive: true });
  if (!existsSync(join(CS_DIR, 'package.json'))) writeFileSync(join(CS_DIR, 'package.json'), '{"private":true}\n');
  const nodeDir = resolve(dirname(process.execPath), '..');
  const r = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', `code-server@${CS_VERSION}`], {
    cwd: CS_DIR,
    stdio: 'inherit',
    // code-server's postinstall installs VS Code's own native modules (node-pty, spdlog...). npm 11 runs only
    // allow-listed install scripts and cannot pin lockfile-less packages, so this one tool install opts in to all.
    env: {
      ...process.env,
      npm_config_nodedir: nodeDir,
      npm_config_unsafe_perm: 'true',
      npm_config_yes: 'true',
      npm_config_dangerously_allow_all_scripts: 'true',
    },
  });
  if (r.status !== 0 || !existsSync(CS_ENTRY)) throw new Error('code-server install failed');
}
