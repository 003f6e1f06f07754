import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import ExcelJS from 'exceljs';
import { extractUnits, htmlToText, looksBinary, unitKindFor } from '../../../../src/core/docs/units.ts';
import { PDF_EXTRACTORS, pageTextFromItems, pageTextFromPdfium } from '../../../../src/core/docs/pdf.ts';
import { LoupeInputError } from '../../../../src/core/util/errors.ts';
import { makePdf } from './make-pdf.ts';

async function rejects(p: Promise<unknown>, re: RegExp) {
  await assert.rejects(p, (e: unknown) => e instanceof LoupeInputError && re.test(e.message));
}

for (const pdfExtractor of PDF_EXTRACTORS) {
  describe(`docs/units: PDF (${pdfExtractor})`, () => {
    it('one unit per page, reading order by line, hyphenation joined', async () => {
      const pdf = makePdf([
        [
          { text: 'Variable Name: BMXBMI', x: 72, y: 720 },
          { text: 'right part', x: 300, y: 680 }, // drawn before the left part of the same line
          { text: 'left part', x: 72, y: 680 },
          { text: 'the exami-', x: 72, y: 660 },
          { text: 'nation was done', x: 72, y: 646 },
        ],
        [{ text: 'Page two WTMEC2YR', x: 72, y: 720 }],
      ]);
      const doc = await extractUnits('codebook.pdf', pdf, { pdfExtractor });
      assert.equal(doc.kind, 'Page');
      assert.deepEqual(doc.units, [
        'Variable Name: BMXBMI left part right part the examination was done',
        'Page two WTMEC2YR',
      ]);
    });
    it('rejects an encrypted PDF with a reason', async () => {
      await rejects(
        extractUnits('enc.pdf', makePdf([[{ text: 'secret', x: 72, y: 720 }]], { encrypt: true }), { pdfExtractor }),
        /^enc\.pdf: encrypted PDF/,
      );
    });
    it('rejects an empty and a corrupt PDF with a reason', async () => {
      await rejects(extractUnits('empty.pdf', Buffer.alloc(0), { pdfExtractor }), /empty file/);
      await rejects(
        extractUnits('bad.pdf', Buffer.from('%PDF-1.4\nthis is not a pdf body'), { pdfExtractor }),
        /not a valid PDF/,
      );
      await rejects(
        extractUnits('cut.pdf', makePdf([[{ text: 'x', x: 1, y: 1 }]]).subarray(0, 150), { pdfExtractor }),
        /not a valid PDF/,
      );
    });
  });
}

describe('docs/units: PDF page text', () => {
  it('joins pdf.js items of one baseline left to right with spaces at gaps', () => {
    const t = (str: string, x: number, y: number, w: number) => ({
      str,
      transform: [10, 0, 0, 10, x, y],
      width: w,
      height: 10,
      hasEOL: false,
    });
    assert.equal(
      pageTextFromItems([t('Name', 0, 100, 20), t('Value', 50, 100, 25), t('next', 0, 80, 20)]),
      'Name Value\nnext',
    );
    assert.equal(
      pageTextFromItems([t('self-', 0, 100, 20), t('reported', 0, 88, 30)]),
      'self-reported',
      'compounds keep their hyphen',
    );
    assert.equal(pageTextFromItems([t('measure-', 0, 100, 20), t('ment', 0, 88, 30)]), 'measurement');
    assert.equal(pageTextFromItems([t('2021-', 0, 100, 20), t('2023', 0, 88, 30)]), '2021-\n2023');
  });
  it('PDFium text: CRLF lines, words it joined at U+FFFE, unmapped glyphs and control characters', () => {
    assert.equal(pageTextFromPdfium('the exami\uFFFEnation\r\nnext'), 'the examination\nnext');
    assert.equal(
      pageTextFromPdfium('self\uFFFEreported and Self\uFFFEcare'),
      'self-reported and Self-care',
      'compounds keep their hyphen',
    );
    assert.equal(pageTextFromPdfium('2021\uFFFE2023'), '2021-2023', 'no word before the mark: the hyphen stays');
    assert.equal(pageTextFromPdfium('Foreword \uFFFD\uFFFD\uFFFD\uFFFD 1\u0002x'), 'Foreword   1 x');
  });
});

describe('docs/units: text, JSON, CSV, XLSX', () => {
  it('text → lines (LongTA Line n), whitespace collapsed, empty lines kept', async () => {
    const doc = await extractUnits('notes.txt', Buffer.from('first  line\r\n\r\n\tthird\n'));
    assert.deepEqual(doc, { kind: 'Line', units: ['first line', '', 'third'], note: undefined });
  });
  it('JSON → pretty-printed lines', async () => {
    const doc = await extractUnits('x.json', Buffer.from('{"a":1,"b":[2]}'));
    assert.deepEqual(doc.units, ['{', '"a": 1,', '"b": [', '2', ']', '}']);
    await rejects(extractUnits('bad.json', Buffer.from('{nope')), /invalid JSON/);
  });
  it('CSV → rows "col: val | col: val"', async () => {
    const doc = await extractUnits(
      't.csv',
      Buffer.from('name,label\nBMXBMI,"Body Mass Index (kg/m**2)"\nRIAGENDR,Gender\n'),
    );
    assert.equal(doc.kind, 'Row');
    assert.deepEqual(doc.units, ['name: BMXBMI | label: Body Mass Index (kg/m**2)', 'name: RIAGENDR | label: Gender']);
  });
  it('XLSX → rows of every sheet', async () => {
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Codes');
    ws.addRow(['Item', 'Description']);
    ws.addRow(['T01', 'Property taxes']);
    const ws2 = wb.addWorksheet('More');
    ws2.addRow(['Item', 'Description']);
    ws2.addRow(['T09', 'General sales']);
    const buf = Buffer.from(await wb.xlsx.writeBuffer());
    const doc = await extractUnits('codes.xlsx', buf);
    assert.deepEqual(doc.units, [
      'Item: T01 | Description: Property taxes',
      '[More] Item: T09 | Description: General sales',
    ]);
    assert.match(doc.note ?? '', /2 sheets/);
    await rejects(extractUnits('fake.xlsx', Buffer.from('not a zip')), /not a readable \.xlsx/);
  });
  it('HTML → text lines without tags and scripts', () => {
    assert.equal(
      htmlToText(
        '<html><head><title>x</title></head><body><h1>Codebook</h1><script>bad()</script><table><tr><td>AGE</td><td>Age &amp; sex</td></tr></table></body>',
      ),
      'Codebook\nAGE \t Age & sex',
    );
  });
});

describe('docs/units: bad input', () => {
  it('a binary file named .txt is rejected with a reason', async () => {
    const bin = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0x03, 0xff, 0x00]);
    assert.equal(looksBinary(bin), true);
    await rejects(extractUnits('image.txt', bin), /binary content/);
  });
  it('non-UTF-8 text is decoded as Windows-1252 and says so', async () => {
    const doc = await extractUnits('old.sps', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x93, 0x71, 0x94]));
    assert.deepEqual(doc.units, ['café', '“q”']);
    assert.match(doc.note ?? '', /not valid UTF-8/);
  });
  it('a huge single-line text is rejected (size limit, then line limit)', async () => {
    const big = Buffer.alloc(50 * 1024 * 1024, 0x61); // 50 MiB of "a", no newline
    await rejects(extractUnits('one-line.txt', big), /too large \(50\.0 MiB > 20 MiB/);
    await rejects(extractUnits('one-line.txt', big.subarray(0, 2_000_000)), /single line of 2,000,000 characters/);
  });
  it('unknown types are reported', async () => {
    assert.equal(unitKindFor('x.odt'), undefined);
    await rejects(extractUnits('x.odt', Buffer.from('PK')), /unsupported file type "\.odt"/);
  });
});
