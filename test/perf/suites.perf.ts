/**
 * Suites layer: full MIMIC-IV demo import (31 CSV.gz tables, ~740k rows) into SQLite, against a
 * baseline measured in the same run: streaming gunzip + csv-parse of the same files without any
 * SQLite work (the floor for any importer). Also times loading LongDA and BLADE from ../shared.
 */
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGunzip } from 'node:zlib';
import { parse } from 'csv-parse';
import { findTableFiles, importCsvFolder } from '../../src/core/benchmarks/ddr/import.ts';
import { loadSuite } from '../../src/core/benchmarks/index.ts';
import { sharedData } from '../helpers/shared.ts';

const demo = sharedData('mimic-iv-demo');
const tmp = mkdtempSync(join(tmpdir(), 'loupe-perf-suites-'));

async function parseOnly(): Promise<number> {
  let rows = 0;
  for (const f of findTableFiles(demo)) {
    const raw = createReadStream(f.file);
    const src = f.file.endsWith('.gz') ? raw.pipe(createGunzip()) : raw;
    const p = src.pipe(parse({ relax_column_count: true }));
    for await (const _ of p) rows++;
  }
  return rows;
}

try {
  let t = performance.now();
  const rows = await parseOnly();
  const base = performance.now() - t;
  t = performance.now();
  const r = await importCsvFolder(demo, join(tmp, 'demo.sqlite'), { force: true });
  const imp = performance.now() - t;
  const imported = r.tables.reduce((n, x) => n + x.rows, 0);
  t = performance.now();
  await importCsvFolder(demo, join(tmp, 'demo.sqlite'));
  const reuse = performance.now() - t;
  console.log(`suites: MIMIC-IV demo ${r.tables.length} tables, ${imported} rows imported (${rows} CSV records incl. headers)`);
  console.log(`suites: baseline parse-only ${base.toFixed(0)} ms; import ${imp.toFixed(0)} ms; ratio import/parse ${(imp / base).toFixed(2)}x; reuse of an up-to-date import ${reuse.toFixed(1)} ms`);
  t = performance.now();
  await loadSuite('longda', sharedData('longda', 'benchmark'));
  const ld = performance.now() - t;
  t = performance.now();
  await loadSuite('blade', sharedData('blade', 'datasets'));
  const bl = performance.now() - t;
  console.log(`suites: load LongDA ${ld.toFixed(0)} ms, BLADE ${bl.toFixed(0)} ms`);
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
