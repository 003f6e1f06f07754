import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { docsFolderFiles, openDocIndex, type DocIndex } from '../../../../src/core/docs/index.ts';
import { parseDoc, parseNhanesValueTable, parseSasFormats, readXptColumns } from '../../../../src/core/docs/catalog.ts';
import { filterCatalog, surveyCatalog, type SurveyCatalog } from '../../../../src/core/docs/survey-catalog.ts';
import { repoRoot, sharedData } from '../../../helpers/shared.ts';

function tmp(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `loupe-catalog-${prefix}-`));
}

describe('variable catalog: parsers on small fixtures', () => {
  it('reads an NHANES value table row by row from count + cumulative, skip targets and ranges included', () => {
    const vals = parseNhanesValueTable(
      '1 Born in 50 US states or Washington, 10039 10039 DMDEDUC2 2 Others 1875 11914 77 Refused 0 11914 End of Section 0 to 79 Range of Values 5 11919 . Missing 14 11933',
    );
    assert.deepEqual(vals, [
      { code: '1', label: 'Born in 50 US states or Washington,' },
      { code: '2', label: 'Others' },
      { code: '77', label: 'Refused' },
      { code: '0 to 79', label: 'Range of Values' },
      { code: '.', label: 'Missing' },
    ]);
  });

  it('parses a Markdown codebook (CDC HTML codebook saved as Markdown) with line labels', () => {
    const md = [
      '# Demographic Variables (DEMO_X)',
      '',
      '## RIAGENDR - Gender',
      '',
      '**Variable Name:** RIAGENDR',
      '**SAS Label:** Gender',
      '**English Text:** Gender of the participant.',
      '**Target:** Both males and females 0 YEARS - 150 YEARS',
      '',
      '| Code or Value | Value Description | Count | Cumulative | Skip to Item |',
      '|---|---|---|---|---|',
      '| 1 | Male | 10 | 10 | |',
      '| 2 | Female | 12 | 22 | |',
      '| . | Missing | 0 | 22 | |',
    ];
    const p = parseDoc('X/docs/DEMO_X.md', md, 'Line');
    assert.equal(p.parser, 'nhanes-codebook');
    assert.equal(p.variables.length, 1);
    const v = p.variables[0]!;
    assert.equal(v.name, 'RIAGENDR');
    assert.equal(v.label, 'Gender');
    assert.equal(v.file, 'DEMO_X');
    assert.equal(v.page, 'Line 5');
    assert.equal(v.universe, 'Both males and females 0 YEARS - 150 YEARS');
    assert.deepEqual(v.values, [
      { code: '1', label: 'Male' },
      { code: '2', label: 'Female' },
      { code: '.', label: 'Missing' },
    ]);
  });

  it('reports a file named like a codebook that no parser understands, and ignores other documents', () => {
    const bad = parseDoc('S/docs/adult-codebook.txt', ['Question AGE_A: how old are you', 'Values 18-85'], 'Line');
    assert.equal(bad.parser, null);
    assert.match(bad.error ?? '', /looks like a codebook/);
    const other = parseDoc('S/docs/methodology.txt', ['Survey design and weighting.'], 'Line');
    assert.equal(other.error, undefined);
    assert.equal(other.variables.length, 0);
  });

  it('parses SAS PROC FORMAT value statements (quoted, numeric and blank codes)', () => {
    const f = parseSasFormats([
      'PROC FORMAT;',
      '   VALUE $YESNO',
      '      "Y"\t= "Yes"',
      '      "N"\t= "No"',
      '      " " \t= "Missing"',
      '   ;',
      '   VALUE AGEF',
      '      16 \t= "16: 16 to 24"',
      '   ;',
    ]);
    assert.deepEqual(f.YESNO, [
      { code: 'Y', label: 'Yes' },
      { code: 'N', label: 'No' },
      { code: '(blank)', label: 'Missing' },
    ]);
    assert.deepEqual(f.AGEF, [{ code: '16', label: '16: 16 to 24' }]);
  });

  it('rejects a file that is not SAS transport, naming it', () => {
    const dir = tmp('xpt');
    try {
      const p = join(dir, 'FAKE.xpt');
      writeFileSync(p, 'not a transport file'.padEnd(800, ' '));
      assert.throws(
        () => readXptColumns(p),
        (e: Error) =>
          e.name === 'LoupeInputError' && e.message.includes('FAKE.xpt') && /not a SAS transport/.test(e.message),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('variable catalog: NHANES (real shared codebooks and XPT files)', () => {
  const root = sharedData('longda', 'benchmark');
  const cache = tmp('nhanes-cache');
  let idx: DocIndex;
  let cat: SurveyCatalog;
  before(async () => {
    idx = await openDocIndex({ root, cacheDir: cache, files: docsFolderFiles(root, 'NHANES') });
    await idx.build();
    cat = surveyCatalog(idx, join(root, 'NHANES', 'data'), root);
  });
  after(() => {
    idx?.close();
    rmSync(cache, { recursive: true, force: true });
  });

  /** The codebook page a catalog entry points at must define the variable and show each of its value labels. */
  function checkAgainstCodebook(name: string) {
    const v = cat.variables.find((x) => x.name === name && x.documented)!;
    assert.ok(v, `${name} in the catalog`);
    const page = idx.units(v.doc!)[v.unitIndex!]!;
    assert.equal(page.label, v.page);
    assert.ok(page.text.includes(`Variable Name: ${name}`), `${v.doc} ${v.page} defines ${name}`);
    assert.ok(page.text.includes(`SAS Label: ${v.label}`));
    for (const x of v.values) {
      assert.ok(page.text.includes(`${x.code} ${x.label}`), `${name}: "${x.code} ${x.label}" is on ${v.page}`);
    }
    return v;
  }

  it('RIAGENDR: Gender, 1 Male / 2 Female / . Missing, from DEMO_L.pdf', () => {
    const v = checkAgainstCodebook('RIAGENDR');
    assert.equal(v.doc, 'NHANES/docs/Demographics/DEMO_L.pdf');
    assert.equal(v.file, 'DEMO_L');
    assert.deepEqual(
      v.values.map((x) => x.code),
      ['1', '2', '.'],
    );
    assert.deepEqual(
      v.values.map((x) => x.label),
      ['Male', 'Female', 'Missing'],
    );
  });

  it("DMDEDUC2: five education levels plus refused / don't know / missing, adults 20+", () => {
    const v = checkAgainstCodebook('DMDEDUC2');
    assert.deepEqual(
      v.values.map((x) => x.code),
      ['1', '2', '3', '4', '5', '7', '9', '.'],
    );
    assert.equal(v.values[4]!.label, 'College graduate or above');
    assert.match(v.universe ?? '', /20 YEARS/);
  });

  it('INDFMPIR: ratio of family income to poverty, a range and the top-coded value', () => {
    const v = checkAgainstCodebook('INDFMPIR');
    assert.equal(v.label, 'Ratio of family income to poverty');
    assert.deepEqual(
      v.values.map((x) => x.code),
      ['0 to 4.99', '5', '.'],
    );
    assert.equal(v.values[1]!.label, 'Value greater than or equal to 5.00');
  });

  it('documents at least 95% of the columns of the shared XPT files, each with a page', () => {
    assert.ok(cat.coverage.columns > 500, `columns read: ${cat.coverage.columns}`);
    assert.ok(
      cat.coverage.documented / cat.coverage.columns >= 0.95,
      `documented ${cat.coverage.documented}/${cat.coverage.columns}`,
    );
    for (const v of cat.variables.filter((x) => x.documented)) {
      assert.ok(v.doc && v.page, `${v.name} has a doc and page`);
    }
  });

  it('lists a column without documentation as undocumented, with no invented label', () => {
    // FOLFMS_L.pdf does not define the phlebotomy weight its data file carries
    const u = cat.variables.find((x) => x.file === 'FOLFMS_L' && x.name === 'WTPH2YR')!;
    assert.ok(u, 'FOLFMS_L WTPH2YR listed');
    assert.equal(u.documented, false);
    assert.equal(u.label, null);
    assert.equal(u.doc, null);
    const cols = readXptColumns(join(root, 'NHANES', 'data', 'Laboratory', 'FOLFMS_L.xpt'));
    assert.equal(u.dataLabel, cols.find((c) => c.name === 'WTPH2YR')!.label);
  });

  it('matches codebook names case-insensitively to the data spelling (MCQ160a in the PDF is MCQ160A)', () => {
    const v = cat.variables.find((x) => x.file === 'MCQ_L' && x.name === 'MCQ160A')!;
    assert.equal(v.documented, true);
    assert.match(v.label ?? '', /arthritis/i);
  });

  it('filters by words in name, label or value labels; exact names first', () => {
    const hits = filterCatalog(cat.variables, 'RIAGENDR');
    assert.equal(hits[0]!.name, 'RIAGENDR');
    assert.ok(filterCatalog(cat.variables, 'hemoglobin').some((v) => v.name === 'LBXHGB'));
  });

  it('keeps the catalog in the docs index: a second open reads it without re-parsing', async () => {
    const again = await openDocIndex({ root, cacheDir: cache, files: docsFolderFiles(root, 'NHANES') });
    try {
      const rep = await again.build();
      assert.equal(rep.extracted, 0);
      const parsed = again.catalog();
      assert.ok(
        parsed.some(
          (p) => p.doc === 'NHANES/docs/Demographics/DEMO_L.pdf' && p.variables.some((v) => v.name === 'RIAGENDR'),
        ),
      );
    } finally {
      again.close();
    }
  });
});

describe('variable catalog: NCSES data dictionaries (NTEWS, real shared files)', () => {
  const root = sharedData('longda', 'benchmark');
  const cache = tmp('ntews-cache');
  let cat: SurveyCatalog;
  before(async () => {
    const idx = await openDocIndex({ root, cacheDir: cache, files: docsFolderFiles(root, 'NTEWS') });
    try {
      await idx.build();
      cat = surveyCatalog(idx, join(root, 'NTEWS', 'data'), root);
    } finally {
      idx.close();
    }
  });
  after(() => rmSync(cache, { recursive: true, force: true }));

  it('reads every SAS_NAME row of Dntews22.xlsx with description, domain and the row it is on', () => {
    assert.equal(cat.parsers['ncses-dictionary'], 1);
    const v = cat.variables.find((x) => x.name === 'EDLEVL')!;
    assert.equal(v.doc, 'NTEWS/docs/Dntews22.xlsx');
    assert.equal(v.file, 'ntews22');
    assert.equal(v.label, 'Highest degree type');
    assert.match(v.page ?? '', /^Row \d+$/);
    assert.equal(v.universe, 'All respondents');
  });

  it("attaches value labels from the survey's PROC FORMAT file (Pntews22.sas) through SAS_FMT", () => {
    assert.equal(cat.parsers['sas-formats'], 1);
    const v = cat.variables.find((x) => x.name === 'ACDG')!;
    assert.deepEqual(v.values.slice(0, 2), [
      { code: '1', label: '1: Yes, currently enrolled in a degree program' },
      { code: '2', label: '2: No, but I plan to transfer to a degree program' },
    ]);
  });
});

describe('variable catalog: unparseable codebooks are reported and skipped', () => {
  it('NHIS adult-codebook.pdf (a layout no parser knows) is reported per file; the catalog is still built', async () => {
    const root = sharedData('longda', 'benchmark');
    const cache = tmp('nhis-cache');
    const dir = tmp('nhis-root');
    try {
      mkdirSync(join(dir, 'NHIS', 'docs'), { recursive: true });
      copyFileSync(join(root, 'NHIS', 'docs', 'adult-codebook.pdf'), join(dir, 'NHIS', 'docs', 'adult-codebook.pdf'));
      writeFileSync(
        join(dir, 'NHIS', 'docs', 'notes.txt'),
        'Variable Name: AGEP_A SAS Label: Age of sample adult English Text: How old are you? Target: All sample adults\n',
      );
      const idx = await openDocIndex({ root: dir, cacheDir: cache, files: docsFolderFiles(dir, 'NHIS') });
      try {
        await idx.build();
        const cat = surveyCatalog(idx, join(dir, 'NHIS', 'data'), dir);
        assert.deepEqual(
          cat.problems.map((p) => p.file),
          ['NHIS/docs/adult-codebook.pdf'],
        );
        assert.match(cat.problems[0]!.reason, /no variable definitions were recognised/);
        assert.deepEqual(
          cat.variables.map((v) => v.name),
          ['AGEP_A'],
        );
      } finally {
        idx.close();
      }
    } finally {
      rmSync(cache, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('variable catalog: Markdown variable tables and CSV data headers (unseen-survey fixture)', () => {
  it('reads `| Variable | Label |` rows and lists CSV columns without documentation as undocumented', async () => {
    const root = join(repoRoot, 'test', 'fixtures', 'suites', 'longda-unseen');
    const cache = tmp('md-cache');
    const idx = await openDocIndex({ root, cacheDir: cache, files: docsFolderFiles(root, 'NHANES1718') });
    try {
      await idx.build();
      const cat = surveyCatalog(idx, join(root, 'NHANES1718', 'data'), root);
      assert.equal(cat.parsers['markdown-table'], 1);
      const bmi = cat.variables.find((v) => v.name === 'BMXBMI')!;
      assert.deepEqual(
        [bmi.label, bmi.file, bmi.doc, bmi.documented],
        ['Body Mass Index (kg/m**2)', 'BMX_J', 'NHANES1718/docs/codebooks/BMX_J.md', true],
      );
      assert.equal(idx.units(bmi.doc!)[bmi.unitIndex!]!.label, bmi.page);
      assert.ok(idx.units(bmi.doc!)[bmi.unitIndex!]!.text.includes('BMXBMI'));
      assert.deepEqual(
        cat.variables.filter((v) => !v.documented).map((v) => [v.name, v.label]),
        [
          ['RIDAGEYR', null],
          ['WTMEC2YR', null],
        ],
      );
      assert.deepEqual(cat.coverage, { columns: 4, documented: 2 });
    } finally {
      idx.close();
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it('parses value codes of a Values column', () => {
    const p = parseDoc(
      'S/docs/DEMO_X.md',
      ['| Variable | Label | Values |', '|---|---|---|', '| RIAGENDR | Gender | 1=Male; 2=Female |', 'after the table'],
      'Line',
    );
    assert.equal(p.parser, 'markdown-table');
    assert.deepEqual(p.variables[0]!.values, [
      { code: '1', label: 'Male' },
      { code: '2', label: 'Female' },
    ]);
    assert.equal(p.variables[0]!.page, 'Line 3');
  });
});
