/**
 * Child of docs.perf.ts: one cold build of the LongDA docs index in a fresh process, so peak RSS
 * (process.resourceUsage().maxRSS, all threads) belongs to this build alone. Prints one JSON line.
 * argv: BENCH_DIR CACHE_DIR WORKERS
 */
import { openDocIndex } from '../../src/core/docs/index.ts';
import { suiteDocFiles } from '../../src/core/benchmarks/index.ts';

const [bench, cache, workers] = process.argv.slice(2) as [string, string, string];
const files = suiteDocFiles(bench, 'longda');
const c0 = process.cpuUsage();
const t0 = performance.now();
const idx = await openDocIndex({ root: bench, cacheDir: cache, files, extractWorkers: Number(workers) });
const rep = await idx.build();
const ms = performance.now() - t0;
const cpu = process.cpuUsage(c0);
idx.close();
console.log(
  JSON.stringify({
    ms: Math.round(ms),
    cpuS: Number(((cpu.user + cpu.system) / 1e6).toFixed(2)),
    peakRssMB: Math.round(process.resourceUsage().maxRSS / 1024),
    files: rep.files.length,
    skipped: rep.skipped,
    units: rep.units,
    chunks: rep.chunks,
    phases: rep.phases,
  }),
);
