/**
 * Suites layer perf (gates per issue 23). Gates (verdict lines; a FAIL exits 1):
 *  - full MIMIC-IV demo import (31 CSV.gz tables, ~740k rows) into SQLite ≤ 3× the baseline: streaming gunzip +
 *    csv-parse of the same files without any SQLite work (the floor for any importer). Baseline and import alternate,
 *    ROUNDS pairs, medians;
 *  - reuse of an up-to-date import (the `importCsvFolder` call that finds the database current) ≤ 50 ms, median of the
 *    ROUNDS reuses that follow each import (absolute; ratio to the goal);
 *  - loading the LongDA and BLADE suites from $LOUPE_SHARED ≤ 500 ms each, first touch: each sample is a fresh process
 *    (modules loaded, then `loadSuite` timed), LongDA and BLADE alternating, ROUNDS of each, medians (absolute; ratio
 *    to the goal).
 * Usage: node test/perf/suites.perf.ts   (exit 1 on a FAIL)
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createGunzip } from 'node:zlib';
import { parse } from 'csv-parse';
import { findTableFiles, importCsvFolder } from '../../src/core/benchmarks/ddr/import.ts';
import { loadSuite } from '../../src/core/benchmarks/index.ts';
import { sharedData } from '../helpers/shared.ts';
import { verdict } from './verdict.ts';

const ROUNDS = 3;
const IMPORT_GOAL_RATIO = 3;
const REUSE_GOAL_MS = 50;
const LOAD_GOAL_MS = 500;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Suites loaded first-touch in a child process, and where their data is. */
const LOADS = {
  longda: { label: 'LongDA', root: () => sharedData('longda', 'benchmark') },
  blade: { label: 'BLADE', root: () => sharedData('blade', 'datasets') },
} as const;

if (process.argv[2] === 'load-child') {
  const kind = process.argv[3] as keyof typeof LOADS;
  const root = LOADS[kind].root();
  const t = performance.now();
  const suite = await loadSuite(kind, root);
  console.log(JSON.stringify({ ms: performance.now() - t, blocks: suite.blocks.length }));
  process.exit(0);
}

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
  const base: number[] = [];
  const imp: number[] = [];
  const reuse: number[] = [];
  let rows = 0;
  let imported = 0;
  let tables = 0;
  for (let r = 0; r < ROUNDS; r++) {
    let t = performance.now();
    rows = await parseOnly();
    base.push(performance.now() - t);
    t = performance.now();
    const res = await importCsvFolder(demo, join(tmp, 'demo.sqlite'), { force: true });
    imp.push(performance.now() - t);
    imported = res.tables.reduce((n, x) => n + x.rows, 0);
    tables = res.tables.length;
    t = performance.now();
    const again = await importCsvFolder(demo, join(tmp, 'demo.sqlite'));
    reuse.push(performance.now() - t);
    if (!again.reused) throw new Error('the second import of an up-to-date database did not reuse it');
  }
  const b = median(base);
  const m = median(imp);
  verdict(
    `MIMIC-IV demo import into SQLite, ${tables} tables, ${imported.toLocaleString('en')} rows (${rows.toLocaleString('en')} CSV records incl. headers), median of ${ROUNDS} alternating pairs`,
    `≤ ${IMPORT_GOAL_RATIO}× parse-only`,
    `${(m / 1000).toFixed(2)} s`,
    `gunzip + csv-parse only ${(b / 1000).toFixed(2)} s`,
    m / b,
    m / b <= IMPORT_GOAL_RATIO,
  );
  const ru = median(reuse);
  verdict(
    `reuse of an up-to-date MIMIC-IV demo import (median of ${ROUNDS}, one after each import)`,
    `≤ ${REUSE_GOAL_MS} ms`,
    `${ru.toFixed(1)} ms`,
    'the goal (absolute)',
    ru / REUSE_GOAL_MS,
    ru <= REUSE_GOAL_MS,
  );

  const me = fileURLToPath(import.meta.url);
  const loads: Record<keyof typeof LOADS, { ms: number; blocks: number }[]> = { longda: [], blade: [] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const kind of Object.keys(LOADS) as (keyof typeof LOADS)[]) {
      const c = spawnSync(
        process.execPath,
        ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', me, 'load-child', kind],
        { encoding: 'utf8' },
      );
      if (c.status !== 0) throw new Error(`load child (${kind}) failed: ${c.stderr}`);
      loads[kind].push(JSON.parse(c.stdout.trim().split('\n').at(-1)!) as { ms: number; blocks: number });
    }
  }
  for (const kind of Object.keys(loads) as (keyof typeof LOADS)[]) {
    const xs = loads[kind];
    const ms = median(xs.map((x) => x.ms));
    verdict(
      `load the ${LOADS[kind].label} suite (${xs[0]!.blocks} blocks), first touch in a fresh process (median of ${ROUNDS}, alternating with the other suite)`,
      `≤ ${LOAD_GOAL_MS} ms`,
      `${ms.toFixed(1)} ms`,
      'the goal (absolute)',
      ms / LOAD_GOAL_MS,
      ms <= LOAD_GOAL_MS,
    );
  }
  console.log(
    JSON.stringify({
      importMs: imp.map(Math.round),
      parseOnlyMs: base.map(Math.round),
      reuseMs: reuse.map((x) => +x.toFixed(1)),
      loadMs: Object.fromEntries(Object.entries(loads).map(([k, xs]) => [k, xs.map((x) => +x.ms.toFixed(1))])),
    }),
  );
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
