// Runs every test/perf/*.perf.ts in sequence with this Node (TypeScript type stripping) and prints
// their output. Exit code 1 when any file fails to run. Usage: npm run perf [-- filter ...]: only the files whose name
// holds one of the filters (the store gates: npm run perf -- store annotation timeline-open).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const filters = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.perf.ts') && (!filters.length || filters.some((x) => f.includes(x))))
  .sort();
let failed = 0;
for (const f of files) {
  console.log(`\n=== ${f}`);
  const r = spawnSync(process.execPath, ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', join(here, f)], {
    stdio: 'inherit',
  });
  if (r.status !== 0) {
    failed++;
    console.log(`!!! ${f} exited with ${r.status ?? r.signal}`);
  }
}
console.log(`\n${files.length - failed}/${files.length} perf files ran`);
process.exitCode = failed ? 1 : 0;
