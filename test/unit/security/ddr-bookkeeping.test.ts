/**
 * Issue 36: Loupe's import bookkeeping (`_loupe_import`: imported table → host file path) is not in the database the
 * DDR agent queries. Both a fresh import and a database imported by an older Loupe (which carries the table) are
 * loaded as a suite, then the agent's own tools (`execute_query` in its sandboxed process, `get_database_info`,
 * `describe_table`) try to read it: nothing names a host path or the table. The database file itself holds no trace
 * (the table is dropped with secure_delete), and the bookkeeping lives on in the sidecar (reuse still works).
 * Only APIs that existed before the change are used, so this file fails on the code before it.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { loadSuite } from '../../../src/core/benchmarks/index.ts';
import { importCsvFolder } from '../../../src/core/benchmarks/ddr/import.ts';
import { closeDdrDatabases, createDdrToolSet } from '../../../src/core/benchmarks/ddr/toolset.ts';
import type { Block } from '../../../src/core/suites/types.ts';
import { toolContext } from '../../helpers/toolsets.ts';

let dir = '';
let tables = '';

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-ddr-bookkeeping-'));
  tables = join(dir, 'host-secret-folder', 'tables');
  mkdirSync(join(tables, 'hosp'), { recursive: true });
  writeFileSync(join(tables, 'hosp', 'patients.csv'), 'subject_id,gender\n1,F\n2,M\n');
  writeFileSync(join(tables, 'hosp', 'admissions.csv'), 'subject_id,hadm_id\n1,10\n1,11\n2,20\n');
});
after(() => {
  closeDdrDatabases();
  rmSync(dir, { recursive: true, force: true });
});

/** What an older Loupe left in an imported database: the bookkeeping table with host paths. */
function makeOld(db: string): void {
  const d = new Database(db);
  d.exec(
    'CREATE TABLE IF NOT EXISTS _loupe_import (table_name TEXT PRIMARY KEY, file TEXT, size INTEGER, mtime INTEGER, rows INTEGER, columns INTEGER)',
  );
  if (!(d.prepare('SELECT count(*) AS n FROM _loupe_import').get() as { n: number }).n) {
    d.prepare('INSERT INTO _loupe_import VALUES (?, ?, ?, ?, ?, ?)').run(
      'hosp_patients',
      join(tables, 'hosp', 'patients.csv'),
      1,
      1,
      2,
      2,
    );
  }
  d.close();
  rmSync(`${db}.import.json`, { force: true });
}

const TRICKS = [
  'SELECT * FROM _loupe_import',
  'SELECT * FROM "_LOUPE_IMPORT"',
  'SELECT file FROM main._loupe_import',
  'SELECT name, sql FROM sqlite_master',
  'SELECT group_concat(name) AS n FROM sqlite_schema',
  "SELECT name FROM sqlite_master WHERE name LIKE '%loupe%'",
  'SELECT * FROM pragma_table_list',
];

async function agentSees(block: Block): Promise<{ info: string; describe: string; bySql: Map<string, string> }> {
  const ts = createDdrToolSet({ python: false, queryTimeoutMs: 10_000 });
  const ctx = toolContext(block, dirname(block.visible.database!.path));
  const tool = (n: string) => ts.tools.find((t) => t.name === n)!;
  const info = JSON.stringify(await tool('get_database_info').run({}, ctx));
  const describe = JSON.stringify(await tool('describe_table').run({ table: '_loupe_import' }, ctx));
  const bySql = new Map<string, string>();
  for (const sql of TRICKS) bySql.set(sql, JSON.stringify(await tool('execute_query').run({ sql }, ctx)));
  return { info, describe, bySql };
}

describe("the DDR agent cannot read Loupe's import bookkeeping (issue 36)", () => {
  for (const kind of ['fresh import', 'database imported by an older Loupe'] as const) {
    it(`${kind}: no tool shows the table or a host path; the file holds none; the bookkeeping is in the sidecar`, async () => {
      const db = join(dir, kind.replace(/\W+/g, '-'), 'mimic.sqlite');
      await importCsvFolder(tables, db);
      if (kind !== 'fresh import') makeOld(db);
      const suite = await loadSuite('ddr', tables, { entities: 'patients.subject_id', database: db });
      const block = suite.blocks[0]!;
      assert.equal(block.runnable, true, block.problems.join('; '));
      const seen = await agentSees(block);
      // attempts: each tool call (get_database_info, describe_table, every SQL trick) must name neither a host path nor the table
      const calls = [seen.info, seen.describe, ...TRICKS.map((q) => seen.bySql.get(q)!)];
      const leaked = calls.filter(
        (o) => /host-secret-folder/.test(o) || (/_loupe/i.test(o) && !/no such table/i.test(o)),
      );
      if (process.env.LOUPE_RT_COUNT) {
        console.log(`[attempts] ${calls.length - leaked.length}/${calls.length} contained (${kind})`);
      }
      assert.deepEqual(leaked, [], "a tool showed Loupe's bookkeeping or a host path");
      for (const sql of TRICKS.slice(0, 3)) assert.match(seen.bySql.get(sql)!, /no such table/i, sql);
      assert.match(
        seen.bySql.get('SELECT name, sql FROM sqlite_master')!,
        /hosp_patients/,
        'the benchmark tables are there',
      );
      const d = new Database(db, { readonly: true });
      try {
        assert.deepEqual(
          (
            d.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{
              name: string;
            }>
          ).map((r) => r.name),
          ['hosp_admissions', 'hosp_patients'],
        );
      } finally {
        d.close();
      }
      assert.equal(
        readFileSync(db).includes(Buffer.from('host-secret-folder')),
        false,
        "the host path is still in the database file's pages",
      );
      // the bookkeeping is kept beside it: a second import of the same files reuses the database
      assert.ok(existsSync(`${db}.import.json`));
      assert.equal((await importCsvFolder(tables, db)).reused, true);
    });
  }
});
