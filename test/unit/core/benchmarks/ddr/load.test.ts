import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { loadSuite, type DdrEntityItem, type Progress } from '../../../../../src/core/benchmarks/index.ts';
import { importCsvFolder } from '../../../../../src/core/benchmarks/ddr/import.ts';
import { saveChecklist } from '../../../../../src/core/benchmarks/ddr/checklist.ts';
import { LoupeInputError } from '../../../../../src/core/util/errors.ts';
import { sharedData } from '../../../../helpers/shared.ts';

const tmp = mkdtempSync(join(tmpdir(), 'loupe-ddr-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const demo = sharedData('mimic-iv-demo');
const FEW = new Set(['hosp_patients', 'hosp_admissions', 'icu_icustays', 'hosp_services']);

describe('suites/ddr checklists and entity files from ../shared/data/ddr', () => {
  for (const [scenario, entities, items, first, prompt] of [
    ['mimic', 100, 774, 'patient_10502319', 'Analyze patient 10502319'],
    ['10k', 100, 849, 'company_6201', 'Analyze company with CIK 6201'],
    ['globem', 91, 435, 'user_INS-W_001', 'Analyze user INS-W_001'],
  ] as const) {
    it(`${scenario}: ${entities} entities, ${items} checklist items, not runnable without a database`, async () => {
      const s = await loadSuite('ddr', sharedData('ddr', scenario));
      assert.equal(s.blocks.length, entities);
      assert.equal(
        s.blocks.reduce((n, b) => n + b.ddr!.checklistCount, 0),
        items,
      );
      assert.equal(s.blocks[0]!.id, first);
      assert.equal((s.blocks[0]!.items[0] as DdrEntityItem).prompt, prompt);
      assert.ok(s.blocks.every((b) => !b.runnable && b.problems.some((p) => /no database/.test(p))));
      assert.ok(s.blocks[0]!.hidden.files[0]!.endsWith('qa.json'));
      assert.deepEqual(s.problems, []);
    });
  }
  it('per-entity checklist sizes are within the documented 3–10 (MIMIC)', async () => {
    const s = await loadSuite('ddr', sharedData('ddr', 'mimic'));
    const n = s.blocks.map((b) => b.ddr!.checklistCount);
    assert.equal(Math.min(...n), 3);
    assert.equal(Math.max(...n), 10);
    assert.equal(s.blocks[0]!.hidden.checklist![0]!.question, 'What service was the patient on?');
  });
});

describe('suites/ddr on the MIMIC-IV demo (CSV.gz folder imported into SQLite)', async () => {
  const progress: Progress[] = [];
  const db = join(tmp, 'demo-few.sqlite');
  const s = await loadSuite('ddr', demo, {
    entities: 'patients.subject_id',
    database: db,
    metadataDir: sharedData('ddr', 'mimic'),
    tableFilter: (t) => FEW.has(t),
    onProgress: (p) => progress.push(p),
  });
  it('imports the tables with progress and row counts', () => {
    const t = s.blocks[0]!.visible.database!.tables;
    assert.deepEqual(
      t.map((x) => [x.name, x.rows]),
      [
        ['hosp_admissions', 275],
        ['hosp_patients', 100],
        ['hosp_services', 319],
        ['icu_icustays', 140],
      ],
    );
    assert.ok(progress.length >= 4);
    assert.equal(progress.at(-1)!.done, progress.at(-1)!.total);
    assert.ok(progress.every((p, i) => i === 0 || p.done >= progress[i - 1]!.done));
  });
  it('makes one runnable block per patient from --entities, with table/column comments from metadata.json', () => {
    assert.equal(s.blocks.length, 100);
    assert.ok(
      s.blocks.every(
        (b) => b.runnable && b.ddr!.checklistCount === 0 && b.ddr!.entityColumn === 'hosp_patients.subject_id',
      ),
    );
    assert.equal(s.blocks[0]!.id, 'patient_10000032');
    const p = s.blocks[0]!.visible.database!.tables.find((x) => x.name === 'hosp_patients')!;
    assert.match(p.comment!, /Patient demographics/);
    assert.deepEqual(
      p.columns.map((c) => `${c.name}:${c.type}`),
      [
        'subject_id:INTEGER',
        'gender:TEXT',
        'anchor_age:INTEGER',
        'anchor_year:INTEGER',
        'anchor_year_group:TEXT',
        'dod:TEXT',
      ],
    );
    assert.ok(p.columns[0]!.comment);
  });
  it('stores typed values and NULLs', () => {
    const d = new Database(db, { readonly: true });
    const r = d.prepare('SELECT subject_id, gender, dod FROM hosp_patients WHERE subject_id = 10014729').get() as {
      subject_id: number;
      gender: string;
      dod: null;
    };
    d.close();
    assert.deepEqual(r, { subject_id: 10014729, gender: 'F', dod: null });
  });
  it('reuses an up-to-date import instead of importing again', async () => {
    const r = await importCsvFolder(demo, db, { tableFilter: (t) => FEW.has(t) });
    assert.equal(r.reused, true);
    assert.equal(r.tables.find((t) => t.table === 'hosp_patients')!.rows, 100);
  });
  it('authors a checklist for a block that had none; the block then carries it', async () => {
    const qa = join(tmp, 'demo-qa.json');
    assert.equal(
      saveChecklist(qa, '10000032', [
        { question: "What is the patient's sex?", answer: 'Female' },
        { question: 'How many admissions?', answer: '4', sourceText: 'hosp_admissions' },
      ]),
      1,
    );
    const s2 = await loadSuite('ddr', demo, {
      entities: 'patients.subject_id',
      database: db,
      tableFilter: (t) => FEW.has(t),
      checklist: qa,
    });
    const b = s2.blocks.find((x) => x.ddr!.entityId === '10000032')!;
    assert.equal(b.ddr!.checklistCount, 2);
    assert.equal(b.hidden.checklist![1]!.sourceText, 'hosp_admissions');
    assert.ok(b.hidden.files.includes(qa));
    saveChecklist(qa, '10000032', [{ question: 'Sex?', answer: 'F' }]);
    const s3 = await loadSuite('ddr', demo, {
      entities: 'patients.subject_id',
      database: db,
      tableFilter: (t) => FEW.has(t),
      checklist: qa,
    });
    assert.equal(s3.blocks.find((x) => x.ddr!.entityId === '10000032')!.ddr!.checklistCount, 1);
    assert.throws(() => saveChecklist(qa, '1', [{ question: '', answer: 'x' }]), LoupeInputError);
  });
  it('entity ids from entity_ids.json that are not in the database make their blocks not runnable, naming id and table.column', async () => {
    const meta = join(tmp, 'mimic-mixed');
    mkdirSync(meta);
    writeFileSync(join(meta, 'entity_ids.json'), '["10000032", 99999999, "10014729"]');
    const m = await loadSuite('ddr', db, { metadataDir: meta });
    assert.deepEqual(
      m.blocks.map((b) => [b.ddr!.entityId, b.runnable]),
      [
        ['10000032', true],
        ['99999999', false],
        ['10014729', true],
      ],
    );
    const bad = m.blocks[1]!;
    assert.ok(
      bad.problems.some(
        (p) =>
          p.includes("entity id '99999999'") && p.includes('hosp_patients.subject_id') && p.includes('not runnable'),
      ),
      bad.problems.join('\n'),
    );
    assert.deepEqual(m.blocks[0]!.problems, []);
    assert.ok(
      m.problems.some((p) => p.includes('1 entity id(s) not found in hosp_patients.subject_id (99999999)')),
      m.problems.join('\n'),
    );
  });
  it('the real DDR MIMIC entity_ids.json against the demo database: none of its patients is in the demo, none runnable', async () => {
    const m = await loadSuite('ddr', db, { metadataDir: sharedData('ddr', 'mimic') });
    assert.equal(m.blocks.length, 100);
    assert.ok(
      m.blocks.every(
        (b) =>
          !b.runnable &&
          b.problems.some(
            (p) => p.includes(`entity id '${b.ddr!.entityId}'`) && p.includes('hosp_patients.subject_id'),
          ),
      ),
    );
    assert.ok(
      m.problems.some((p) => /100 entity id\(s\) not found in hosp_patients\.subject_id/.test(p)),
      m.problems.join('\n'),
    );
  });
  it('reports that the DDR MIMIC checklist entities are not in the demo', () => {
    assert.ok(s.problems.some((p) => /qa\.json: 100 checklist entities are not in the entity list/.test(p)));
  });
});

describe('suites/ddr bad input', () => {
  it('rejects an empty folder and a folder that is not DDR', async () => {
    const empty = join(tmp, 'empty');
    mkdirSync(empty);
    await assert.rejects(
      loadSuite('ddr', empty),
      (e: unknown) => e instanceof LoupeInputError && /empty folder/.test(e.message),
    );
    await assert.rejects(
      loadSuite('ddr', sharedData('longda', 'publications')),
      (e: unknown) => e instanceof LoupeInputError && /not a DDR root/.test(e.message),
    );
    await assert.rejects(
      loadSuite('ddr', sharedData('longda', 'benchmark', 'benchmark.csv')),
      (e: unknown) => e instanceof LoupeInputError && /SQLite/.test(e.message),
    );
  });
  it('asks for --entities when there is no entity file, and rejects a bad TABLE.COLUMN', async () => {
    const dir = join(tmp, 'tables');
    mkdirSync(dir);
    writeFileSync(join(dir, 'people.csv'), 'pid,age\nA,3\nB,4\nA,5\n');
    const dbp = join(tmp, 'tables.sqlite');
    await assert.rejects(
      loadSuite('ddr', dir, { database: dbp }),
      (e: unknown) => e instanceof LoupeInputError && e.subject === '--entities' && /entity_ids\.json/.test(e.message),
    );
    await assert.rejects(
      loadSuite('ddr', dir, { database: dbp, entities: 'people' }),
      (e: unknown) => e instanceof LoupeInputError && /TABLE\.COLUMN/.test(e.message),
    );
    await assert.rejects(
      loadSuite('ddr', dir, { database: dbp, entities: 'persons.pid' }),
      (e: unknown) => e instanceof LoupeInputError && /no table 'persons'/.test(e.message),
    );
    await assert.rejects(
      loadSuite('ddr', dir, { database: dbp, entities: 'people.id' }),
      (e: unknown) => e instanceof LoupeInputError && /no column 'id'/.test(e.message),
    );
    const s = await loadSuite('ddr', dir, { database: dbp, entities: 'people.pid' });
    assert.deepEqual(
      s.blocks.map((b) => b.id),
      ['user_A', 'user_B'],
    );
  });
  it('reads GLOBEM-style <table>_fields.json descriptions as column comments; a broken one is reported', async () => {
    const dir = join(tmp, 'globemlike');
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'sleep_allday_raw.csv'),
      ',pid,date,duration\n0,INS-W_001,2020-01-01,420\n1,INS-W_002,2020-01-01,380\n',
    );
    writeFileSync(join(dir, 'sleep_allday_raw_fields.json'), JSON.stringify({ duration: 'Minutes asleep in the day' }));
    writeFileSync(join(dir, 'steps_allday_raw_fields.json'), '{ nope');
    const s = await loadSuite('ddr', dir, {
      database: join(tmp, 'globemlike.sqlite'),
      entities: 'sleep_allday_raw.pid',
    });
    assert.deepEqual(
      s.blocks.map((b) => b.id),
      ['user_INS-W_001', 'user_INS-W_002'],
    );
    const t = s.blocks[0]!.visible.database!.tables[0]!;
    assert.deepEqual(
      t.columns.map((c) => [c.name, c.comment ?? '']),
      [
        ['column_1', ''],
        ['pid', ''],
        ['date', ''],
        ['duration', 'Minutes asleep in the day'],
      ],
    );
    assert.ok(s.problems.some((p) => p.includes('steps_allday_raw_fields.json')));
  });
  it('reports a malformed CSV row in a table by file and line, imports the rest', async () => {
    const dir = join(tmp, 'badrow');
    mkdirSync(dir);
    writeFileSync(join(dir, 'things.csv'), 'id,name\n1,a\n2,b,extra\n3,c\n');
    const s = await loadSuite('ddr', dir, { database: join(tmp, 'badrow.sqlite'), entities: 'things.id' });
    assert.ok(
      s.problems.some((p) => p.startsWith(`${join(dir, 'things.csv')}:3`)),
      s.problems.join('\n'),
    );
    assert.equal(s.blocks.length, 2);
  });
  it('a quote never closed ends that table only; non-UTF-8 bytes are reported; problems survive reuse; stale partials go', async () => {
    const dir = join(tmp, 'badquote');
    mkdirSync(dir);
    writeFileSync(join(dir, 'things.csv'), 'id,name\n1,a\n2,"b\n3,c\n');
    writeFileSync(
      join(dir, 'other.csv'),
      Buffer.concat([Buffer.from('id,city\n1,x\n2,Caf'), Buffer.from([0xe9]), Buffer.from('\n')]),
    );
    const db = join(tmp, 'badquote.sqlite');
    writeFileSync(`${db}.999999999.partial`, 'left by a killed import');
    const s = await loadSuite('ddr', dir, { database: db, entities: 'other.id' });
    assert.deepEqual(
      s.blocks.map((b) => b.runnable),
      [true, true],
    );
    const want = [
      `${join(dir, 'things.csv')}:3: malformed CSV (Quote Not Closed`,
      `${join(dir, 'other.csv')}:3: not valid UTF-8`,
    ];
    for (const w of want) {
      assert.ok(
        s.problems.some((p) => p.startsWith(w)),
        `${w}\n${s.problems.join('\n')}`,
      );
    }
    assert.ok(!existsSync(`${db}.999999999.partial`));
    const again = await loadSuite('ddr', dir, { database: db, entities: 'other.id' });
    for (const w of want) {
      assert.ok(
        again.problems.some((p) => p.startsWith(w)),
        `reused: ${w}\n${again.problems.join('\n')}`,
      );
    }
  });
  it('refuses a LongDA or BLADE root instead of importing its answers into a database', async () => {
    const ld = join(tmp, 'ld-as-ddr');
    mkdirSync(join(ld, 'S1', 'data'), { recursive: true });
    writeFileSync(
      join(ld, 'benchmark.csv'),
      'survey,source,internal_id,query,answer_structure,additional_info,answer\nS1,P,1,Q,single_number,,42\n',
    );
    writeFileSync(join(ld, 'S1', 'data', 'd.csv'), 'a\n1\n');
    const db = join(tmp, 'ld-as-ddr.sqlite');
    await assert.rejects(
      loadSuite('ddr', ld, { database: db, entities: 'benchmark.survey' }),
      (e: unknown) => e instanceof LoupeInputError && /not a DDR root: this is a LongDA root/.test(e.message),
    );
    assert.ok(!existsSync(db));
    await assert.rejects(
      loadSuite('ddr', sharedData('blade', 'datasets'), { database: db, entities: 'x.y' }),
      (e: unknown) => e instanceof LoupeInputError && /not a DDR root: this is a BLADE datasets/.test(e.message),
    );
  });
  it('rejects a corrupt .csv.gz naming the file', async () => {
    const dir = join(tmp, 'badgz');
    mkdirSync(dir);
    writeFileSync(join(dir, 't.csv.gz'), 'this is not gzip');
    await assert.rejects(
      loadSuite('ddr', dir, { database: join(tmp, 'badgz.sqlite'), entities: 't.x' }),
      (e: unknown) => e instanceof LoupeInputError && e.subject.startsWith(join(dir, 't.csv.gz')),
    );
  });
  it('rejects broken or non-UTF-8 entity and checklist files naming the file', async () => {
    const dir = join(tmp, 'meta');
    mkdirSync(dir);
    writeFileSync(join(dir, 'entity_ids.json'), '["1", "2"');
    await assert.rejects(
      loadSuite('ddr', dir),
      (e: unknown) => e instanceof LoupeInputError && e.subject === join(dir, 'entity_ids.json'),
    );
    writeFileSync(join(dir, 'entity_ids.json'), '["1", "2"]');
    writeFileSync(join(dir, 'qa.json'), Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]));
    // A broken checklist file is reported, and the entities stay listed (their checklists can be authored later).
    const broken = await loadSuite('ddr', dir);
    assert.equal(broken.blocks.length, 2);
    assert.ok(
      broken.problems.some((p) => p.startsWith(`${join(dir, 'qa.json')}:1: not valid UTF-8 (byte offset 2)`)),
      broken.problems.join('\n'),
    );
    assert.ok(broken.blocks.every((b) => b.problems.some((p) => p.includes('qa.json could not be read'))));
    writeFileSync(
      join(dir, 'qa.json'),
      JSON.stringify({
        results: [{ entity_id: '1', qa_pairs: [{ question: 'q', answer: 'a' }, { question: 3 }] }, 'junk'],
      }),
    );
    const s = await loadSuite('ddr', dir);
    assert.equal(s.blocks[0]!.ddr!.checklistCount, 1);
    assert.equal(s.blocks[1]!.ddr!.checklistCount, 0);
    assert.ok(s.problems.some((p) => p.includes('qa.json results[0].qa_pairs[1]')));
    assert.ok(s.problems.some((p) => p.includes('qa.json results[1]')));
  });
  it('accepts a SQLite file root with entity_ids.json beside it', async () => {
    const dir = join(tmp, 'sqliteroot');
    mkdirSync(dir);
    copyFileSync(join(tmp, 'tables.sqlite'), join(dir, 'db.sqlite'));
    writeFileSync(join(dir, 'entity_ids.json'), '["A"]');
    const s = await loadSuite('ddr', join(dir, 'db.sqlite'));
    assert.equal(s.blocks.length, 1);
    assert.equal(s.blocks[0]!.runnable, true);
    assert.ok(!s.blocks[0]!.visible.database!.tables.some((t) => t.name.startsWith('_loupe')));
    // No way to tell which column holds the ids: said so rather than listing them as checked.
    assert.ok(
      s.problems.some(
        (p) =>
          p.startsWith(join(dir, 'entity_ids.json')) &&
          /not checked against the database: the entity column is unknown/.test(p),
      ),
      s.problems.join('\n'),
    );
  });
});
