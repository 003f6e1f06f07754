/**
 * Issue 42 defect 5: before a checklist version is saved, every evidence query runs again in the block's database
 * (DDR's own `evidenceQuery`, on a real SQLite file, no sandbox): a refused `DELETE` is a problem naming the item, so it
 * is never saved; an expected answer its query contradicts (expected 5, COUNT = 10) needs the expert's confirmation.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { getBenchmark } from '../../../../src/core/benchmarks/registry.ts';
import type { Block } from '../../../../src/core/suites/types.ts';
import type { EditorItem } from '../../../../src/protocol/checklist.ts';
import { checkEvidence, evidenceContradiction } from '../../../../src/app/checklist/evidence.ts';

let dir = '';
let run: (sql: string) => Promise<{ columns: string[]; rows: unknown[][]; rowCount: number; truncated: boolean }>;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'loupe-evidence-'));
  const path = join(dir, 'db.sqlite');
  const db = new Database(path);
  db.exec('CREATE TABLE admissions (subject_id INTEGER, hadm_id INTEGER)');
  const ins = db.prepare('INSERT INTO admissions VALUES (?, ?)');
  for (let i = 0; i < 10; i++) ins.run(10502319, 1000 + i);
  db.close();
  const block = {
    id: 'b',
    visible: {
      database: { path, tables: [{ name: 'admissions', columns: [{ name: 'subject_id' }, { name: 'hadm_id' }] }] },
    },
  } as unknown as Block;
  const q = getBenchmark('ddr', 'test').checklist!.evidenceQuery!;
  run = (sql) => q(block, sql, { sandbox: 'off' });
});
after(() => rmSync(dir, { recursive: true, force: true }));

const item = (id: string, answer: string, sql?: string): EditorItem => ({
  id,
  kind: 'fact',
  question: `${id}?`,
  answer,
  author: 'ana',
  updatedAt: '',
  ...(sql ? { evidence: { sql } } : {}),
});
const COUNT = 'SELECT COUNT(*) AS n FROM admissions WHERE subject_id = 10502319';

describe('checklist evidence before a save (issue 42 defect 5)', () => {
  it('an expected answer its evidence query contradicts is reported (expected 5, COUNT = 10); a matching one is not', async () => {
    const r = await checkEvidence(
      [item('f1', '5 admissions', COUNT), item('f2', 'The patient had 10 admissions', COUNT), item('f3', 'female')],
      run,
    );
    assert.deepEqual(r.problems, []);
    assert.deepEqual(
      r.contradictions.map((c) => c.id),
      ['f1'],
    );
    assert.match(r.contradictions[0]!.message, /expected “5 admissions”, but its evidence query returned n = 10/);
    assert.deepEqual(
      r.items[0]!.evidence?.result?.rows?.map((row) => row.map(Number)),
      [[10]],
      "the saved result is the saved query's, run now",
    );
  });

  it('a refused query (DELETE) is a problem naming the item: nothing is saved', async () => {
    const r = await checkEvidence([item('f1', '10', COUNT), item('f2', '3', 'DELETE FROM admissions')], run);
    assert.equal(r.problems.length, 1);
    assert.match(r.problems[0]!, /^f2: its evidence query was refused/);
    // the stale result the webview may still hold does not make it pass
    const stale = {
      ...item('f2', '10', 'DELETE FROM admissions'),
      evidence: {
        sql: 'DELETE FROM admissions',
        result: { columns: ['n'], rows: [[10]], rowCount: 1, truncated: false },
      },
    };
    assert.equal((await checkEvidence([stale], run)).problems.length, 1);
    assert.equal((await checkEvidence([stale], null)).problems.length, 1, 'a block without a database keeps no query');
  });

  it('the rule: numbers only, the precision written, percent ↔ fraction', () => {
    const res = (rows: unknown[][]) => ({ columns: ['x'], rows, rowCount: rows.length, truncated: false });
    const c = (answer: string, rows: unknown[][]) =>
      evidenceContradiction({ id: 'i', answer, evidence: { result: res(rows) } });
    assert.equal(c('40.3%', [[0.4031]]), null);
    assert.equal(c('about 61 years', [['61']]), null);
    assert.equal(c('female', [['F']]), null, "words are the expert's to compare");
    assert.equal(c('12', [['none']]), null, 'no numeric cell: not judged');
    assert.ok(c('12', [[13]]));
    assert.equal(
      evidenceContradiction({ id: 'i', answer: '5', retired: true, evidence: { result: res([[10]]) } }),
      null,
    );
  });
});
