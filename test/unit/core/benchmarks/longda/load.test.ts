import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadSuite, type LongdaQuery } from '../../../../../src/core/benchmarks/index.ts';
import { parseAnswerStructure, parseGroundTruth } from '../../../../../src/core/benchmarks/longda/parse.ts';
import { LoupeInputError } from '../../../../../src/core/util/errors.ts';
import { repoRoot, sharedData } from '../../../../helpers/shared.ts';

const tmp = mkdtempSync(join(tmpdir(), 'loupe-longda-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function makeRoot(name: string, csv: string | Buffer, withData = true): string {
  const root = join(tmp, name);
  mkdirSync(join(root, 'S1', 'docs'), { recursive: true });
  writeFileSync(join(root, 'S1', 'docs', 'doc.txt'), 'doc');
  if (withData) {
    mkdirSync(join(root, 'S1', 'data'), { recursive: true });
    writeFileSync(join(root, 'S1', 'data', 'd.csv'), 'a\n1\n');
  }
  writeFileSync(join(root, 'benchmark.csv'), csv);
  return root;
}
const HEADER = 'survey,source,internal_id,query,answer_structure,additional_info,answer\n';

describe('suites/longda on the real benchmark (../shared)', async () => {
  const suite = await loadSuite('longda', sharedData('longda', 'benchmark'));

  it('has 27 blocks and 474 queries (measured from benchmark.csv)', () => {
    assert.equal(suite.blocks.length, 27);
    assert.equal(
      suite.blocks.reduce((n, b) => n + b.items.length, 0),
      474,
    );
    assert.deepEqual(suite.problems, []);
  });

  it('marks exactly the surveys with data files runnable (NHANES, CPS-ASEC, STC)', () => {
    const runnable = suite.blocks.filter((b) => b.runnable).map((b) => b.longda!.survey);
    assert.deepEqual([...new Set(runnable)].sort(), ['CPS-ASEC', 'NHANES', 'STC']);
    assert.equal(runnable.length, 11);
    const gss = suite.blocks.find((b) => b.longda!.survey === 'GSS')!;
    assert.equal(gss.runnable, false);
    assert.ok(
      gss.problems.some((p) => /GSS\/data is (missing|empty): no data files, not runnable/.test(p)),
      gss.problems.join('\n'),
    );
  });

  it('loads NCHS Data Brief 508 as runnable with 9 queries, parsed structures and ground truth', () => {
    const b = suite.blocks.find((x) => x.longda?.source === 'NCHS Data Brief No. 508')!;
    assert.equal(b.id, 'NHANES_NCHS_Data_Brief_No._508');
    assert.equal(b.runnable, true);
    assert.equal(b.items.length, 9);
    const q = b.items as LongdaQuery[];
    assert.equal(q[0]!.groundTruth, 40.3);
    assert.deepEqual(q[0]!.answerStructure, { kind: 'single_number' });
    assert.match(q[0]!.additionalInfo, /BMI/);
    assert.deepEqual(q[1]!.answerStructure, { kind: 'list', labels: ['men', 'women'], length: 2 });
    assert.deepEqual(q[1]!.groundTruth, [39.2, 41.3]);
    assert.deepEqual(q[2]!.groundTruth, [35.5, 46.4, 38.9]);
    assert.equal(q[0]!.longdaId, 'NHANES_NCHS Data Brief No. 508_q1');
    assert.equal(b.hidden.answers!.q2, q[1]!.groundTruth);
    assert.equal(b.visible.data.length, 64);
    assert.equal(b.visible.docs.length, 80);
    assert.ok(b.visible.data.some((f) => f.rel === 'data/Examination/BMX_L.xpt'));
    assert.ok(b.visible.data.every((f) => f.path.startsWith(sharedData('longda', 'benchmark', 'NHANES'))));
    assert.match(basename(b.hidden.publication!), /^Obesity and Severe Obesity/);
    assert.equal(b.hidden.publications!.length, 7);
    assert.equal(b.visible.missing.length, 8, 'NHANES Dietary files listed in MISSING_FROM_SNAPSHOT.txt');
  });

  it('gives unique, filesystem-safe block ids and unique query uids', () => {
    const ids = suite.blocks.map((b) => b.id);
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids) assert.match(id, /^[A-Za-z0-9._-]+$/);
    const uids = suite.blocks.flatMap((b) => b.items.map((i) => (i as LongdaQuery).uid));
    assert.equal(new Set(uids).size, 474);
  });

  it('counts scalar vs list queries and answer elements', () => {
    const q = suite.blocks.flatMap((b) => b.items as LongdaQuery[]);
    assert.equal(q.filter((x) => x.answerStructure.kind === 'single_number').length, 211);
    assert.equal(q.filter((x) => x.additionalInfo === '').length, 215);
    const elements = q.reduce((n, x) => n + (Array.isArray(x.groundTruth) ? x.groundTruth.length : 1), 0);
    const expected = q.reduce((n, x) => n + (x.answerStructure.kind === 'list' ? x.answerStructure.length : 1), 0);
    assert.equal(elements, expected);
  });

  it('matches every block with a publication except NHANES 516 (not in the snapshot)', () => {
    const without = suite.blocks.filter((b) => !b.hidden.publication).map((b) => b.id);
    assert.deepEqual(without, ['NHANES_NCHS_Data_Brief_No._516']);
  });
});

describe('suites/longda on a benchmark folder not seen before (test/fixtures)', async () => {
  const root = join(repoRoot, 'test', 'fixtures', 'suites', 'longda-unseen');
  const suite = await loadSuite('longda', root, {
    publications: join(repoRoot, 'test', 'fixtures', 'suites', 'publications-unseen'),
  });
  it('reads a survey with xlsx data, another NHANES cycle with markdown codebooks, and a docs-only survey', () => {
    assert.deepEqual(
      suite.blocks.map((b) => [b.id, b.items.length, b.runnable]),
      [
        ['ACS_ACS_Brief_Commuting_2030', 2, true],
        ['NHANES1718_NCHS_Data_Brief_No._9001', 3, true],
        ['BRFSS_BRFSS_Report_2031', 1, false],
      ],
    );
    const acs = suite.blocks[0]!;
    assert.deepEqual(
      acs.visible.data.map((f) => f.rel),
      ['data/acs_commute_2030.xlsx'],
    );
    const nh = suite.blocks[1]!;
    assert.deepEqual(
      nh.visible.docs.map((f) => f.rel),
      ['docs/analytic-guidelines.md', 'docs/codebooks/BMX_J.md'],
    );
    assert.equal(basename(nh.hidden.publication!), 'db9001.pdf');
    assert.deepEqual((nh.items[1] as LongdaQuery).answerStructure, {
      kind: 'list',
      labels: ['age20_39', 'age40_59', 'age60plus'],
      length: 3,
    });
  });
});

describe('suites/longda bad input', () => {
  it('reports a malformed CSV row with file and line, keeps the other rows', async () => {
    const root = makeRoot(
      'malformed',
      HEADER +
        'S1,Pub,1,Q1,single_number,,1.5\nS1,Pub,2,"Q2 has "bad" quotes,single_number,,2\nS1,Pub,3,Q3,single_number,,3\n',
    );
    const s = await loadSuite('longda', root);
    assert.ok(
      s.problems.some((p) => p.includes(`${join(root, 'benchmark.csv')}:3`)),
      s.problems.join('\n'),
    );
    assert.ok(s.blocks[0]!.items.length >= 1);
    assert.equal((s.blocks[0]!.items[0] as LongdaQuery).groundTruth, 1.5);
  });

  it('reports a row with the wrong number of fields by line', async () => {
    const root = makeRoot(
      'fields',
      HEADER + 'S1,Pub,1,Q1,single_number,,1.5\nS1,Pub,2,Q2,single_number\nS1,Pub,3,Q3,single_number,,3\n',
    );
    const s = await loadSuite('longda', root);
    assert.ok(
      s.problems.some((p) => p.startsWith(`${join(root, 'benchmark.csv')}:3`)),
      s.problems.join('\n'),
    );
    assert.equal(s.blocks[0]!.items.length, 2);
  });

  it('rejects an unknown answer-structure syntax naming file, row and column, other blocks usable', async () => {
    const root = makeRoot(
      'structure',
      HEADER + 'S1,Pub,1,Q1,one number please,,1\nS1,Pub,2,Q2,"[a, b]",,"[1, 2]"\nS1,Other,1,Q,single_number,,7\n',
    );
    const s = await loadSuite('longda', root);
    const b = s.blocks[0]!;
    assert.equal(b.items.length, 1);
    assert.ok(
      b.problems.some((p) => p.includes('benchmark.csv:2 column answer_structure: unknown answer structure')),
      b.problems.join('\n'),
    );
    assert.equal(s.blocks[1]!.items.length, 1);
    assert.equal(s.blocks[1]!.runnable, true);
  });

  it('a skipped query keeps its position: later queries keep their LongTA ids (q_id = row position in block)', async () => {
    const root = makeRoot(
      'stable-ids',
      HEADER + 'S1,Pub,1,Q1,single_number,,1\nS1,Pub,2,Q2,{a: b},,2\nS1,Pub,3,Q3,"[x, y]",,"[3, 4]"\n',
    );
    const s = await loadSuite('longda', root);
    const b = s.blocks[0]!;
    const qs = b.items as LongdaQuery[];
    assert.deepEqual(
      qs.map((q) => [q.id, q.longdaId, q.question]),
      [
        ['q1', 'S1_Pub_q1', 'Q1'],
        ['q3', 'S1_Pub_q3', 'Q3'],
      ],
    );
    assert.ok(
      b.problems.some((p) => p.includes('benchmark.csv:3 column answer_structure') && p.includes('q2 skipped')),
      b.problems.join('\n'),
    );
    assert.ok(!b.problems.some((p) => p.includes('differs from position')), b.problems.join('\n'));
  });

  it('a row dropped as malformed CSV keeps its position: later queries of its block keep their LongTA ids', async () => {
    // Row 3 (S1/Pub q2) is not UTF-8, row 6 (S1/Other q2) has too few fields: both are dropped by
    // the CSV reader, but LongTA numbers questions by position in the block, so they keep theirs.
    const csvText = Buffer.concat([
      Buffer.from(HEADER + 'S1,Pub,1,Q1,single_number,,1\nS1,Pub,2,Caf'),
      Buffer.from([0xe9]),
      Buffer.from(
        ',single_number,,2\n' +
          'S1,Pub,3,Q3,single_number,,3\n' +
          'S1,Other,1,O1,single_number,,7\n' +
          'S1,Other,2,O2,single_number\n' +
          'S1,Other,3,O3,single_number,,9\n' +
          'S1,Other,4,O4,single_number,,10\n',
      ),
    ]);
    const root = makeRoot('dropped-ids', csvText);
    const s = await loadSuite('longda', root);
    const ids = s.blocks.map((b) => (b.items as LongdaQuery[]).map((q) => [q.id, q.longdaId, q.question]));
    assert.deepEqual(ids, [
      [
        ['q1', 'S1_Pub_q1', 'Q1'],
        ['q3', 'S1_Pub_q3', 'Q3'],
      ],
      [
        ['q1', 'S1_Other_q1', 'O1'],
        ['q3', 'S1_Other_q3', 'O3'],
        ['q4', 'S1_Other_q4', 'O4'],
      ],
    ]);
    const csv = join(root, 'benchmark.csv');
    assert.ok(s.problems.includes(`${csv}:3: not valid UTF-8; record skipped`), s.problems.join('\n'));
    assert.ok(
      s.problems.some((p) => p.startsWith(`${csv}:6: malformed CSV record`)),
      s.problems.join('\n'),
    );
    assert.ok(
      !s.blocks.some((b) => b.problems.some((p) => p.includes('differs from position'))),
      s.blocks.flatMap((b) => b.problems).join('\n'),
    );
  });

  it('a dropped record that cannot be placed in a block is reported, not silently counted', async () => {
    const root = makeRoot(
      'dropped-unplaced',
      HEADER + 'S1,Pub,1,Q1,single_number,,1\nS1,Mystery,2,Q2,single_number\nS1,Other,1,O1,single_number,,7\n',
    );
    const s = await loadSuite('longda', root);
    assert.deepEqual(
      s.blocks.map((b) => (b.items as LongdaQuery[]).map((q) => q.id)),
      [['q1'], ['q1']],
    );
    assert.ok(
      s.problems.some((p) => p.startsWith(`${join(root, 'benchmark.csv')}:3: cannot tell which block`)),
      s.problems.join('\n'),
    );
  });

  it('skips a row with non-UTF-8 bytes naming the file and line; other rows and blocks stay usable', async () => {
    const csv = Buffer.concat([
      Buffer.from(HEADER + 'S1,Pub,1,Q1,single_number,,1\nS1,Pub,2,Caf'),
      Buffer.from([0xe9]),
      Buffer.from(',single_number,,2\nS1,Other,1,Q,single_number,,7\n'),
    ]);
    const root = makeRoot('latin1', csv);
    const s = await loadSuite('longda', root);
    assert.ok(
      s.problems.includes(`${join(root, 'benchmark.csv')}:3: not valid UTF-8; record skipped`),
      s.problems.join('\n'),
    );
    assert.deepEqual(
      s.blocks.map((b) => b.items.length),
      [1, 1],
    );
  });

  it('rejects a benchmark.csv whose header is not UTF-8', async () => {
    const root = makeRoot(
      'latin1-header',
      Buffer.concat([Buffer.from('survey,s'), Buffer.from([0xf6]), Buffer.from('urce\n')]),
    );
    await assert.rejects(
      loadSuite('longda', root),
      (e: unknown) =>
        e instanceof LoupeInputError && e.subject === `${join(root, 'benchmark.csv')}:1` && /UTF-8/.test(e.message),
    );
  });

  it('rejects an empty folder and a root that is not LongDA', async () => {
    const empty = join(tmp, 'empty');
    mkdirSync(empty);
    await assert.rejects(
      loadSuite('longda', empty),
      (e: unknown) => e instanceof LoupeInputError && /empty folder/.test(e.message),
    );
    await assert.rejects(
      loadSuite('longda', sharedData('blade', 'datasets')),
      (e: unknown) => e instanceof LoupeInputError && /not a LongDA root/.test(e.message),
    );
    await assert.rejects(loadSuite('longda', join(tmp, 'nope')), LoupeInputError);
  });

  it('rejects a benchmark.csv without the required columns', async () => {
    const root = makeRoot('cols', 'survey,source,question\nS1,P,Q\n');
    await assert.rejects(
      loadSuite('longda', root),
      (e: unknown) =>
        e instanceof LoupeInputError && /benchmark.csv:1/.test(e.subject) && /missing column 'query'/.test(e.message),
    );
  });

  it('reports a non-numeric answer and a length mismatch without dropping the query', async () => {
    const root = makeRoot(
      'answers',
      HEADER + 'S1,Pub,1,Q1,single_number,,about ten\nS1,Pub,2,Q2,"[a, b]",,"[1, 2, 3]"\n',
    );
    const s = await loadSuite('longda', root);
    const b = s.blocks[0]!;
    assert.equal(b.items.length, 2);
    assert.equal((b.items[0] as LongdaQuery).groundTruth, null);
    assert.ok(
      b.problems.some((p) => /benchmark.csv:2 column answer: ground truth 'about ten' is not a number/.test(p)),
    );
    assert.ok(b.problems.some((p) => /benchmark.csv:3 column answer: 3 value\(s\) for 2 label\(s\)/.test(p)));
  });

  it('finds a survey folder whose name differs only in case', async () => {
    const root = makeRoot('case', HEADER + 's1,Pub,1,Q1,single_number,,1\n');
    const s = await loadSuite('longda', root);
    assert.equal(s.blocks[0]!.runnable, true);
    assert.deepEqual(
      s.blocks[0]!.visible.data.map((f) => f.rel),
      ['data/d.csv'],
    );
  });

  it('treats <SURVEY>/pubs/ as hidden publications, never as docs', async () => {
    const root = makeRoot('pubs-inside', HEADER + 'S1,NSF 25-999,1,Q1,single_number,,1\n');
    mkdirSync(join(root, 'S1', 'pubs'));
    writeFileSync(join(root, 'S1', 'pubs', 'nsf25999.pdf'), '%PDF');
    const s = await loadSuite('longda', root);
    const b = s.blocks[0]!;
    assert.deepEqual(b.hidden.publications, [join(root, 'S1', 'pubs', 'nsf25999.pdf')]);
    assert.equal(b.hidden.publication, join(root, 'S1', 'pubs', 'nsf25999.pdf'));
    assert.ok(![...b.visible.data, ...b.visible.docs].some((f) => f.path.includes(`${join('S1', 'pubs')}`)));
  });

  it('marks a survey whose data folder is empty as not runnable with the reason', async () => {
    const root = makeRoot('nodata', HEADER + 'S1,Pub,1,Q1,single_number,,1\n', false);
    mkdirSync(join(root, 'S1', 'data'));
    const s = await loadSuite('longda', root);
    assert.equal(s.blocks[0]!.runnable, false);
    assert.ok(s.blocks[0]!.problems.some((p) => /data is empty/.test(p)));
  });
});

describe('suites/longda parsers', () => {
  it('parses answer structures', () => {
    assert.deepEqual(parseAnswerStructure(' single_number '), { ok: true, value: { kind: 'single_number' } });
    assert.deepEqual(parseAnswerStructure('[unit1, unit2_4]'), {
      ok: true,
      value: { kind: 'list', labels: ['unit1', 'unit2_4'], length: 2 },
    });
    assert.equal(parseAnswerStructure('number').ok, false);
    assert.equal(parseAnswerStructure('[]').ok, false);
    assert.equal(parseAnswerStructure('[a, a]').ok, false);
    assert.equal(parseAnswerStructure('[[a], b]').ok, false);
  });
  it('parses ground truth', () => {
    assert.deepEqual(parseGroundTruth('3.1'), { ok: true, value: 3.1 });
    assert.deepEqual(parseGroundTruth('[32.0, 12.8]'), { ok: true, value: [32, 12.8] });
    assert.deepEqual(parseGroundTruth('1,234.5'), { ok: true, value: 1234.5 });
    assert.deepEqual(parseGroundTruth('-0.5'), { ok: true, value: -0.5 });
    assert.deepEqual(parseGroundTruth(''), { ok: true, value: null });
    assert.equal(parseGroundTruth('[1, x]').ok, false);
  });
});
