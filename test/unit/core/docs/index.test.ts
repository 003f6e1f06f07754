import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { openDocIndex } from '../../../../src/core/docs/index.ts';
import { EXTRACTOR_VERSION, EXTRACTOR_VERSIONS } from '../../../../src/core/docs/doc-index.ts';
import { LoupeInputError } from '../../../../src/core/util/errors.ts';
import { okapiScores } from '../../../../src/core/docs/bm25.ts';
import { longtaTokens, splitChunks } from '../../../../src/core/docs/text.ts';
import { sharedData } from '../../../helpers/shared.ts';
import { makePdf } from './make-pdf.ts';

const child = fileURLToPath(new URL('./build-child.ts', import.meta.url));

function tmp(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `loupe-docs-${prefix}-`));
}

function writeFixture(root: string): void {
  mkdirSync(join(root, 'Examination'), { recursive: true });
  writeFileSync(
    join(root, 'Examination', 'BMX_L.pdf'),
    makePdf([
      [
        { text: 'Body Measures (BMX_L)', x: 72, y: 720 },
        { text: 'Data File: BMX_L.xpt', x: 72, y: 700 },
      ],
      [
        { text: 'Variable Name: BMXBMI', x: 72, y: 720 },
        { text: 'SAS Label: Body Mass Index (kg/m**2)', x: 72, y: 700 },
      ],
    ]),
  );
  writeFileSync(
    join(root, 'DEMO_L.pdf'),
    makePdf([
      [{ text: 'Demographic Variables and Sample Weights (DEMO_L)', x: 72, y: 720 }],
      [
        { text: 'Variable Name: RIDAGEYR', x: 72, y: 720 },
        { text: 'SAS Label: Age in years at screening', x: 72, y: 700 },
      ],
      [
        { text: 'Variable Name: WTMEC2YR', x: 72, y: 720 },
        { text: 'SAS Label: Full sample MEC exam weight', x: 72, y: 700 },
      ],
    ]),
  );
  writeFileSync(
    join(root, 'readme.txt'),
    'Use WTMEC2YR for examination estimates.\nAge is RIDAGEYR.\nbody mass index is in BMX_L\n',
  );
  writeFileSync(join(root, 'layout.csv'), 'name,start,label\nRIAGENDR,5,Gender\nRIDAGEYR,6,Age in years\n');
  writeFileSync(join(root, 'hidden-answers.txt'), 'The answer is 40.3 percent.\n');
  // bad input
  writeFileSync(join(root, 'encrypted.pdf'), makePdf([[{ text: 'secret', x: 72, y: 720 }]], { encrypt: true }));
  writeFileSync(join(root, 'corrupt.pdf'), Buffer.from('%PDF-1.7\n1 0 obj <<< broken'));
  writeFileSync(join(root, 'empty.pdf'), Buffer.alloc(0));
  writeFileSync(join(root, 'binary.txt'), Buffer.from([0x00, 0x01, 0x02, 0xff, 0xfe, 0x00, 0x10]));
  writeFileSync(
    join(root, 'latin1.txt'),
    Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x57, 0x54, 0x4d, 0x45, 0x43, 0x32, 0x59, 0x52, 0x0a]),
  );
  writeFileSync(join(root, 'one-line.txt'), Buffer.alloc(50 * 1024 * 1024, 0x61));
  writeFileSync(join(root, 'picture.gif'), Buffer.from('GIF89a'));
}

describe('docs/index: build, report, tools', () => {
  let root: string;
  let cache: string;
  before(() => {
    root = tmp('root');
    cache = tmp('cache');
    writeFixture(root);
  });
  after(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  });

  it('indexes good files and skips every bad one with a reason', async () => {
    const idx = await openDocIndex({ root, cacheDir: cache });
    const progress: string[] = [];
    const rep = await idx.build({ onProgress: (p) => progress.push(p.phase) });
    idx.close();
    const reasons = Object.fromEntries(rep.skipped.map((s) => [s.file, s.reason]));
    assert.match(reasons['encrypted.pdf'] ?? '', /encrypted PDF needs a password/);
    assert.match(reasons['corrupt.pdf'] ?? '', /not a valid PDF|cannot open PDF/);
    assert.match(reasons['empty.pdf'] ?? '', /empty file/);
    assert.match(reasons['binary.txt'] ?? '', /binary content/);
    assert.match(reasons['one-line.txt'] ?? '', /too large/);
    assert.match(reasons['picture.gif'] ?? '', /unsupported file type "\.gif"/);
    const files = Object.fromEntries(rep.files.map((f) => [f.file, f]));
    assert.deepEqual(Object.keys(files).sort(), [
      'DEMO_L.pdf',
      'Examination/BMX_L.pdf',
      'hidden-answers.txt',
      'latin1.txt',
      'layout.csv',
      'readme.txt',
    ]);
    assert.equal(files['DEMO_L.pdf']!.units, 3);
    assert.equal(files['layout.csv']!.kind, 'Row');
    assert.match(files['latin1.txt']!.note ?? '', /Windows-1252/);
    assert.equal(rep.extracted, 11); // every file but the .gif was read
    assert.ok(progress.includes('extract') && progress.at(-1) === 'done');
  });

  it('re-opening reuses everything; a changed file is the only one re-extracted', async () => {
    let idx = await openDocIndex({ root, cacheDir: cache });
    let rep = await idx.build();
    idx.close();
    assert.equal(rep.extracted, 0);
    writeFileSync(
      join(root, 'readme.txt'),
      'Use WTMEC2YR for examination estimates.\nNew line about WTPH2YR.\nAge is RIDAGEYR.\n',
    );
    idx = await openDocIndex({ root, cacheDir: cache });
    rep = await idx.build();
    assert.equal(rep.extracted, 1);
    assert.match(idx.searchDoc('wtph2yr', 'readme.txt').text, /Line 2: \.\.\.New line about WTPH2YR\.\.\./);
    idx.close();
  });

  it('read_doc: preview, ranges, bad range, LongTA format', async () => {
    const idx = await openDocIndex({ root, cacheDir: cache });
    await idx.build();
    const prev = idx.readDoc('DEMO_L.pdf');
    assert.equal(
      prev.text,
      '[DEMO_L.pdf] Pages available: 1-3\nSample:\nPage 1: Demographic Variables and Sample Weights (DEMO_L)\nPage 2: Variable Name: RIDAGEYR SAS Label: Age in years at screening\nPage 3: Variable Name: WTMEC2YR SAS Label: Full sample MEC exam weight',
    );
    const r = idx.readDoc('DEMO_L.pdf', '3,1-1,9');
    assert.equal(
      r.text,
      '[DEMO_L.pdf] Pages: 3, 1\nPage 3: Variable Name: WTMEC2YR SAS Label: Full sample MEC exam weight\nPage 1: Demographic Variables and Sample Weights (DEMO_L)',
    );
    assert.deepEqual(
      r.hits.map((h) => h.unit),
      ['Page 3', 'Page 1'],
    );
    assert.match(idx.readDoc('DEMO_L.pdf', 'x-y').text, /^Error: invalid range/);
    assert.match(
      idx.readDoc('layout.csv', '2').text,
      /^\[layout\.csv\] Rows: 2\nRow 2: name: RIDAGEYR \| start: 6 \| label: Age in years$/,
    );
    assert.match(idx.readDoc('encrypted.pdf').text, /cannot read encrypted\.pdf: encrypted PDF/);
    assert.equal(idx.readDoc('picture.gif').text, 'Unsupported file type: picture.gif');
    idx.close();
  });

  it('search_doc: one doc or all docs, case-insensitive, limits and context', async () => {
    const idx = await openDocIndex({ root, cacheDir: cache });
    await idx.build();
    const one = idx.searchDoc('wtmec2yr', 'DEMO_L.pdf', 5, 10);
    assert.equal(one.text, "[DEMO_L.pdf] Found 1 matches for 'wtmec2yr'.\nPage 3: ...ble Name: WTMEC2YR SAS Label...");
    assert.deepEqual(one.hits[0], {
      file: 'DEMO_L.pdf',
      unit: 'Page 3',
      unitIndex: 2,
      start: 15,
      end: 23,
      score: 1,
      snippet: 'ble Name: WTMEC2YR SAS Label',
    });
    const all = idx.searchDoc('WTMEC2YR', undefined, 10, 5);
    assert.deepEqual(all.hits.map((h) => h.file).sort(), ['DEMO_L.pdf', 'latin1.txt', 'readme.txt']);
    assert.match(all.text, /^Found 3 matches for 'WTMEC2YR' across 3 documents\./);
    const limited = idx.searchDoc('WTMEC2YR', undefined, 1, 5);
    assert.match(limited.text, /showing the first 1 of 3/);
    assert.match(
      idx.searchDoc('no such thing', 'DEMO_L.pdf').text,
      /^\[DEMO_L\.pdf\] No matches for 'no such thing'\.$/,
    );
    idx.close();
  });

  it('the allowlist hides files from every tool and from search', async () => {
    const visible = ['DEMO_L.pdf', 'Examination/BMX_L.pdf', 'readme.txt'];
    const idx = await openDocIndex({ root, cacheDir: cache, files: visible });
    const rep = await idx.build();
    assert.deepEqual(rep.files.map((f) => f.file).sort(), visible.slice().sort());
    assert.equal(idx.readDoc('hidden-answers.txt').text, 'Error: document not found: hidden-answers.txt');
    assert.equal(idx.readDoc('../x/hidden-answers.txt').text, 'Error: document not found: ../x/hidden-answers.txt');
    assert.equal(idx.searchDoc('answer', 'hidden-answers.txt').text, 'Error: document not found: hidden-answers.txt');
    assert.equal(idx.searchDoc('40.3').hits.length, 0);
    assert.equal(idx.search('answer 40.3', { mode: 'bm25' }).length, 0);
    assert.equal(
      idx.retrieve('answer').hits.some((h) => h.file === 'hidden-answers.txt'),
      false,
    );
    assert.throws(() => idx.units('hidden-answers.txt'), /not an indexed document/);
    // per-call scope narrows further
    assert.equal(
      idx.readDoc('readme.txt', undefined, { files: ['DEMO_L.pdf'] }).text,
      'Error: document not found: readme.txt',
    );
    assert.deepEqual(
      [...new Set(idx.search('WTMEC2YR', { mode: 'keyword', files: ['readme.txt'] }).map((h) => h.file))],
      ['readme.txt'],
    );
    idx.close();
  });

  it("retriever (longta) on one doc equals rank_bm25 over that doc's 500/100 chunks", async () => {
    const lines = Array.from(
      { length: 60 },
      (_, i) =>
        `Line ${i} about ${i % 3 === 0 ? 'Body Mass Index' : 'weight and height'} value ${i % 7} ${'x'.repeat(i * 11)}`,
    );
    writeFileSync(join(root, 'long.txt'), lines.join('\n') + '\n');
    const idx = await openDocIndex({ root, cacheDir: cache });
    await idx.build();
    const query = 'Body Mass Index value 3';
    const res = idx.retrieve(query, 'long.txt', 5);
    // reference: chunks of every line, tokenised by whitespace, scored by rank_bm25
    const chunks: { unit: number; text: string; no: number }[] = [];
    const units = idx.units('long.txt');
    for (const u of units) {
      splitChunks(u.text, 500, 100).forEach((s, no) =>
        chunks.push({ unit: u.index, text: u.text.slice(s.start, s.end), no }),
      );
    }
    const scores = okapiScores(
      chunks.map((c) => longtaTokens(c.text)),
      longtaTokens(query),
    );
    const order = [...scores.keys()].sort((a, b) => scores[b]! - scores[a]! || b - a).slice(0, 5);
    assert.deepEqual(
      res.hits.map((h) => [h.unitIndex, h.chunk, Number(h.score.toFixed(9))]),
      order.map((i) => [chunks[i]!.unit, chunks[i]!.no, Number(scores[i]!.toFixed(9))]),
    );
    assert.match(res.text, /^Line \d+ \(chunk \d+\): \.\.\./);
    // the snippet rule: literal query absent → first 200 chars of the chunk
    assert.equal(res.hits[0]!.snippet, chunks[order[0]!]!.text.slice(0, 200));
    idx.close();
  });

  it('default bm25 finds variable names case-insensitively and ranks the defining codebook first', async () => {
    const idx = await openDocIndex({ root, cacheDir: cache });
    await idx.build();
    const hits = idx.search('ridageyr', { mode: 'bm25', top: 5 });
    assert.ok(hits.length >= 2);
    assert.deepEqual(new Set(hits.map((h) => h.file)), new Set(['DEMO_L.pdf', 'readme.txt', 'layout.csv']));
    assert.equal(
      idx.search('ridageyr', { mode: 'longta', top: 5 }).filter((h) => h.score > 0).length,
      0,
      'longta is case-sensitive',
    );
    const bmi = idx.search('body mass index', {
      mode: 'bm25',
      top: 3,
      files: ['Examination/BMX_L.pdf', 'DEMO_L.pdf', 'readme.txt', 'layout.csv'],
    });
    assert.equal(bmi[0]!.file, 'Examination/BMX_L.pdf');
    assert.equal(bmi[0]!.unit, 'Page 2');
    idx.close();
  });

  it('indexes of the same root with different allowlists share the cache without re-extracting', async () => {
    const a = await openDocIndex({ root, cacheDir: cache, files: ['DEMO_L.pdf'] });
    assert.equal((await a.build()).extracted, 0);
    a.close();
    const all = await openDocIndex({ root, cacheDir: cache });
    const rep = await all.build();
    all.close();
    assert.equal(rep.extracted, 0, 'the allowlisted build did not forget the other files');
    const b = await openDocIndex({ root, cacheDir: cache, files: ['DEMO_L.pdf'] });
    const repB = await b.build();
    assert.equal(repB.extracted, 0);
    assert.deepEqual(
      b.report().files.map((f) => f.file),
      ['DEMO_L.pdf'],
    );
    b.close();
  });

  it('extraction in worker threads gives the same report as in this thread', async () => {
    const cache2 = tmp('workers');
    const idx = await openDocIndex({ root, cacheDir: cache2, extractWorkers: 2 });
    const rep = await idx.build();
    idx.close();
    const cache3 = tmp('in-thread');
    const ref = await openDocIndex({ root, cacheDir: cache3, extractWorkers: 0 });
    const refRep = await ref.build();
    ref.close();
    rmSync(cache3, { recursive: true, force: true });
    const strip = (r: typeof rep) => ({ files: r.files, skipped: r.skipped, units: r.units, chunks: r.chunks });
    assert.deepEqual(strip(rep), strip(refRep));
    assert.equal(rep.extracted, refRep.files.length + refRep.skipped.length - 1); // all but the .gif
    rmSync(cache2, { recursive: true, force: true });
  });

  it('cancel: an aborted build rejects and the next build finishes the work', async () => {
    const root2 = tmp('cancel');
    const cache2 = tmp('cache2');
    for (let i = 0; i < 30; i++) {
      writeFileSync(join(root2, `f${String(i).padStart(2, '0')}.txt`), `file ${i} WTMEC2YR\n`);
    }
    const ac = new AbortController();
    // in the calling thread, so "10 files done" is exact when the progress says 10 (with a worker the 10th may still be
    // in flight and is dropped by the abort: 'cancelled build' in shared-build.test.ts covers that)
    let idx = await openDocIndex({ root: root2, cacheDir: cache2, extractWorkers: 0 });
    await assert.rejects(
      idx.build({ signal: ac.signal, onProgress: (p) => p.phase === 'extract' && p.done === 10 && ac.abort() }),
      (e: unknown) => (e as Error).name === 'AbortError',
    );
    idx.close();
    idx = await openDocIndex({ root: root2, cacheDir: cache2 });
    const rep = await idx.build();
    assert.equal(rep.files.length, 30);
    assert.equal(rep.reused, 10, 'the 10 files done before the abort are kept');
    assert.equal(idx.searchDoc('wtmec2yr').text.startsWith('Found 5 matches'), true);
    idx.close();
    rmSync(root2, { recursive: true, force: true });
    rmSync(cache2, { recursive: true, force: true });
  });
});

function runChild(
  root: string,
  cache: string,
  slowMs = 0,
  killAt = -1,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [child, root, cache, slowMs ? String(slowMs) : ''], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (killAt >= 0 && out.includes(`progress ${killAt}\n`)) p.kill('SIGKILL');
    });
    let err = '';
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, out, err }));
  });
}

describe('docs/index: keyword search edge cases', () => {
  it('case-insensitive search is right when lowercasing changes lengths (İ) and across units', async () => {
    const root = tmp('unicode');
    const cache = tmp('unicode-cache');
    writeFileSync(join(root, 'u.txt'), 'İstanbul survey WEIGHT\nsecond line weight\nİİ weight at end\n');
    const idx = await openDocIndex({ root, cacheDir: cache });
    await idx.build();
    const r = idx.searchDoc('weight', 'u.txt', 10, 3);
    assert.deepEqual(
      r.hits.map((h) => [h.unit, h.start, h.end]),
      [
        ['Line 1', 16, 22],
        ['Line 2', 12, 18],
        ['Line 3', 3, 9],
      ],
    );
    assert.deepEqual(
      r.hits.map((h) => h.snippet),
      ['ey WEIGHT', 'ne weight', 'İİ weight at'],
    );
    assert.equal(idx.searchDoc('line weight', 'u.txt').hits.length, 1);
    assert.equal(idx.searchDoc('weight\nsecond', 'u.txt').hits.length, 0, 'no match across unit boundaries');
    idx.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  });
});

describe('docs/index: crash safety and two processes', () => {
  it('a build killed halfway leaves a usable index; the next build completes it', async () => {
    const root = tmp('crash');
    const cache = tmp('crash-cache');
    for (let i = 0; i < 40; i++) {
      writeFileSync(join(root, `doc${String(i).padStart(2, '0')}.txt`), `document ${i}\nmentions BMXBMI ${i}\n`);
    }
    const killed = await runChild(root, cache, 30, 12);
    assert.equal(killed.code, null, 'child was killed');
    assert.ok(!killed.out.includes('done'));
    const idx = await openDocIndex({ root, cacheDir: cache });
    const rep = await idx.build();
    assert.equal(rep.files.length, 40);
    assert.ok(rep.reused >= 10 && rep.extracted <= 30, `kept work from the killed build (reused ${rep.reused})`);
    assert.equal(idx.searchDoc('bmxbmi', undefined, 100).hits.length, 40);
    idx.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  });

  it('a corrupt cache file is replaced on open', async () => {
    const root = tmp('corrupt');
    const cache = tmp('corrupt-cache');
    writeFileSync(join(root, 'a.txt'), 'alpha WTMEC2YR\n');
    let idx = await openDocIndex({ root, cacheDir: cache });
    const path = idx.cachePath;
    await idx.build();
    idx.close();
    writeFileSync(path, Buffer.alloc(8192, 0x42)); // garbage over the database
    rmSync(`${path}-wal`, { force: true });
    idx = await openDocIndex({ root, cacheDir: cache });
    const rep = await idx.build();
    assert.equal(rep.files.length, 1);
    assert.equal(idx.searchDoc('wtmec2yr', 'a.txt').hits.length, 1);
    idx.close();
    assert.ok(existsSync(path));
    rmSync(root, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  });

  it('two processes building the same index at once both succeed with the same result', async () => {
    const root = tmp('two');
    const cache = tmp('two-cache');
    for (let i = 0; i < 25; i++) writeFileSync(join(root, `d${i}.txt`), `row ${i} RIAGENDR\n`.repeat(50));
    const [a, b] = await Promise.all([runChild(root, cache, 5), runChild(root, cache, 5)]);
    assert.equal(a.code, 0, `${a.out}\n${a.err}`);
    assert.equal(b.code, 0, `${b.out}\n${b.err}`);
    const doneA = a.out.split('\n').find((l) => l.startsWith('done'));
    const doneB = b.out.split('\n').find((l) => l.startsWith('done'));
    assert.equal(doneA, doneB);
    assert.match(doneA ?? '', /"files":25,"units":1250/);
    rmSync(root, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  });
});

describe('docs/index: real NHANES codebooks', () => {
  it('extracts BMX_L.pdf pages and finds the variables where they are defined', async () => {
    const docs = sharedData('longda', 'benchmark', 'NHANES', 'docs');
    const cache = tmp('nhanes');
    const files = ['Examination/BMX_L.pdf', 'Demographics/DEMO_L.pdf'];
    const idx = await openDocIndex({ root: docs, cacheDir: cache, files });
    const rep = await idx.build();
    assert.deepEqual(rep.skipped, []);
    const bmx = rep.files.find((f) => f.file === 'Examination/BMX_L.pdf')!;
    assert.equal(bmx.kind, 'Page');
    assert.ok(bmx.units > 10);
    const units = idx.units('Examination/BMX_L.pdf');
    assert.match(
      units[0]!.text,
      /^National Health and Nutrition Examination Survey August 2021-August 2023 Data Documentation, Codebook, and Frequencies Body Measures \(BMX_L\)/,
    );
    const def = idx.searchDoc('Variable Name: BMXBMI', 'Examination/BMX_L.pdf');
    assert.equal(def.hits.length, 1);
    assert.match(def.text, /SAS Label: Body Mass Index \(kg\/m\*\*2\)/);
    const bmi = idx.search('body mass index', { mode: 'bm25', top: 10 });
    assert.equal(new Set(bmi.map((h) => `${h.file}#${h.unit}`)).size, bmi.length, 'default mode: one hit per unit');
    assert.equal(bmi[0]!.file, 'Examination/BMX_L.pdf');
    const w = idx.search('WTMEC2YR', { mode: 'bm25', top: 3 });
    assert.equal(w[0]!.file, 'Demographics/DEMO_L.pdf');
    const r = idx.retrieve('Body Mass Index', 'Examination/BMX_L.pdf', 3);
    assert.ok(r.hits.length === 3 && r.hits.every((h) => h.file === 'Examination/BMX_L.pdf'));
    assert.match(r.text, /^Page \d+ \(chunk \d+\): \.\.\.[\s\S]*Body Mass Index/);
    idx.close();
    rmSync(cache, { recursive: true, force: true });
  });
});

describe('docs/index: PDF extractors (pdfium default, pdfjs)', () => {
  it('switching the extractor re-extracts the PDFs, rebuilds the rankers and the catalog; the same one reuses all', async () => {
    const docs = sharedData('longda', 'benchmark', 'NHANES', 'docs');
    const cache = tmp('extractors');
    const files = ['Examination/BMX_L.pdf', 'Demographics/DEMO_L.pdf'];
    const build = async (pdfExtractor?: 'pdfium' | 'pdfjs') => {
      const idx = await openDocIndex({ root: docs, cacheDir: cache, files, ...(pdfExtractor ? { pdfExtractor } : {}) });
      const rep = await idx.build();
      const out = {
        rep,
        page1: idx.units('Examination/BMX_L.pdf')[0]!.text,
        vars: idx
          .catalog()
          .flatMap((d) => d.variables.map((v) => v.name))
          .sort(),
        top: idx.search('body mass index', { mode: 'bm25', top: 1 })[0]!.file,
      };
      idx.close();
      return out;
    };
    const js = await build('pdfjs');
    assert.equal(js.rep.pdfExtractor, 'pdfjs');
    assert.equal(js.rep.extracted, 2);
    const db = () =>
      new Database(
        join(
          cache,
          readdirSync(cache).find((f) => f.endsWith('.sqlite'))!,
        ),
        { readonly: true },
      );
    const versions = () => {
      const d = db();
      const v = (d.prepare('SELECT DISTINCT version FROM contents').all() as { version: number }[]).map(
        (r) => r.version,
      );
      const rankers = (d.prepare('SELECT count(*) AS n FROM rankers').get() as { n: number }).n;
      d.close();
      return { v, rankers };
    };
    assert.deepEqual(versions(), { v: [EXTRACTOR_VERSIONS.pdfjs], rankers: 2 });
    const pd = await build(); // default: pdfium
    assert.equal(pd.rep.pdfExtractor, 'pdfium');
    assert.equal(pd.rep.extracted, 2, "the other extractor's units are not reused");
    // new rankers (bm25 + longta) for the new text, although the files' content hashes are unchanged
    assert.deepEqual(versions(), { v: [EXTRACTOR_VERSIONS.pdfium], rankers: 4 });
    for (const r of [js, pd]) {
      assert.match(
        r.page1,
        /^National Health and Nutrition Examination Survey August 2021-August 2023 Data Documentation, Codebook, and Frequencies Body Measures \(BMX_L\)/,
      );
      assert.equal(r.top, 'Examination/BMX_L.pdf');
    }
    assert.ok(pd.vars.includes('BMXBMI') && pd.vars.includes('WTMEC2YR'));
    assert.deepEqual(pd.vars, js.vars, "the variable catalog parses both extractors' text alike");
    const again = await build('pdfium');
    assert.equal(again.rep.extracted, 0);
    assert.equal(again.rep.reused, 2);
    rmSync(cache, { recursive: true, force: true });
  });

  it('an unknown extractor is refused naming the option', async () => {
    const root = tmp('badx');
    await assert.rejects(
      openDocIndex({ root, cacheDir: root, pdfExtractor: 'poppler' as 'pdfjs' }),
      (e: unknown) =>
        e instanceof LoupeInputError &&
        /^pdfExtractor: unknown PDF extractor "poppler": use "pdfium" or "pdfjs"/.test(e.message),
    );
    rmSync(root, { recursive: true, force: true });
  });
});

describe('docs/index: extraction stays in its worker thread', () => {
  const withEnv = async (env: Record<string, string>, fn: () => Promise<void>) => {
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    try {
      await fn();
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  };
  const fixture = () => {
    const root = tmp('wroot');
    writeFileSync(join(root, 'a.pdf'), makePdf([[{ text: 'Variable Name: BMXBMI', x: 72, y: 720 }]]));
    writeFileSync(join(root, 'notes.txt'), 'WTMEC2YR\n');
    return root;
  };
  it('a file that crashes its worker is reported failed, not read again on the calling thread', async () => {
    const root = fixture();
    const worker = join(root, '..', `crash-worker-${process.pid}.mjs`);
    writeFileSync(
      worker,
      "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => process.exit(3));\n",
    );
    await withEnv({ LOUPE_EXTRACT_WORKER: worker }, async () => {
      const idx = await openDocIndex({ root, cacheDir: join(root, '.cache') }); // default: one worker
      const rep = await idx.build();
      idx.close();
      assert.deepEqual(rep.files, []);
      assert.deepEqual(rep.skipped.map((s) => [s.file, s.reason]).sort(), [
        ['a.pdf', 'extraction worker crashed (out of memory?): the file was not read'],
        ['notes.txt', 'extraction worker crashed (out of memory?): the file was not read'],
      ]);
    });
    rmSync(worker, { force: true });
    rmSync(root, { recursive: true, force: true });
  });
  it('a file that stalls its worker past the time limit is stopped and reported', async () => {
    const root = fixture();
    const worker = join(root, '..', `stall-worker-${process.pid}.mjs`);
    writeFileSync(worker, "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => {});\n");
    await withEnv({ LOUPE_EXTRACT_WORKER: worker, LOUPE_EXTRACT_FILE_MS: '200' }, async () => {
      const idx = await openDocIndex({ root, cacheDir: join(root, '.cache') });
      const rep = await idx.build();
      idx.close();
      assert.deepEqual(
        rep.skipped.map((s) => s.reason),
        ['extraction took longer than 200 ms and was stopped', 'extraction took longer than 200 ms and was stopped'],
      );
    });
    rmSync(worker, { force: true });
    rmSync(root, { recursive: true, force: true });
  });
});

describe('docs/index: skipped / failed files of another extractor version', () => {
  it('re-extracts a file whose skip record is from an older extractor, also under an unchanged content hash', async () => {
    const root = tmp('reskip');
    const cache = tmp('reskip-cache');
    writeFileSync(join(root, 'notes.txt'), 'Use WTMEC2YR for examination estimates.\n');
    writeFileSync(join(root, 'layout.tsv'), 'name\tlabel\nRIDAGEYR\tAge in years\n');
    writeFileSync(join(root, 'corrupt.pdf'), Buffer.from('%PDF-1.7\n1 0 obj <<< broken'));
    let idx = await openDocIndex({ root, cacheDir: cache });
    const first = await idx.build();
    idx.close();
    assert.deepEqual(first.files.map((f) => f.file).sort(), ['layout.tsv', 'notes.txt']);
    const notesHash = first.files.find((f) => f.file === 'notes.txt')!.hash;
    const tsvHash = first.files.find((f) => f.file === 'layout.tsv')!.hash;
    // What an older extractor left: the .tsv skipped as an unsupported type (no content hash), and
    // notes.txt failed under its content hash (the contents record itself says the current version).
    const db = new Database(first.cachePath);
    const old = EXTRACTOR_VERSION - 1;
    db.prepare(
      `UPDATE files SET hash = '', kind = NULL, n_units = 0, skipped = 'unsupported file type ".tsv"', version = ? WHERE path = 'layout.tsv'`,
    ).run(old);
    db.prepare(
      `UPDATE files SET kind = NULL, n_units = 0, skipped = 'extraction failed: old bug', version = ? WHERE path = 'notes.txt'`,
    ).run(old);
    db.prepare(`UPDATE contents SET kind = NULL, n_units = 0, error = 'extraction failed: old bug' WHERE hash = ?`).run(
      notesHash,
    );
    db.prepare('DELETE FROM units WHERE hash = ?').run(notesHash);
    db.prepare('DELETE FROM units WHERE hash = ?').run(tsvHash);
    db.prepare('DELETE FROM contents WHERE hash = ?').run(tsvHash);
    db.close();

    idx = await openDocIndex({ root, cacheDir: cache });
    const second = await idx.build();
    assert.deepEqual(second.files.map((f) => [f.file, f.units]).sort(), [
      ['layout.tsv', 1],
      ['notes.txt', 1],
    ]);
    assert.deepEqual(
      second.skipped.map((s) => s.file),
      ['corrupt.pdf'],
    );
    assert.equal(second.extracted, 2); // the two stale skips; corrupt.pdf failed under this version: reused
    assert.equal(idx.search('WTMEC2YR', { mode: 'bm25', top: 1 })[0]?.file, 'notes.txt');
    const third = await idx.build();
    idx.close();
    assert.equal(third.extracted, 0);
    rmSync(root, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  });

  it('opens a cache made before files carried a version: adds the column, retries its skipped files once', async () => {
    const root = tmp('oldcache');
    const cache = tmp('oldcache-cache');
    writeFileSync(join(root, 'notes.txt'), 'Age is RIDAGEYR.\n');
    writeFileSync(join(root, 'corrupt.pdf'), Buffer.from('%PDF-1.7\n1 0 obj <<< broken'));
    let idx = await openDocIndex({ root, cacheDir: cache });
    const first = await idx.build();
    idx.close();
    const db = new Database(first.cachePath);
    db.exec('ALTER TABLE files DROP COLUMN version');
    db.close();
    idx = await openDocIndex({ root, cacheDir: cache });
    const second = await idx.build();
    assert.deepEqual(
      second.files.map((f) => f.file),
      ['notes.txt'],
    );
    assert.deepEqual(
      second.skipped.map((s) => s.file),
      ['corrupt.pdf'],
    );
    assert.equal(second.extracted, 1); // only the failed PDF, of unknown version, is tried again
    const third = await idx.build();
    idx.close();
    assert.equal(third.extracted, 0);
    const cols = new Database(first.cachePath, { readonly: true });
    assert.ok((cols.prepare('PRAGMA table_info(files)').all() as { name: string }[]).some((c) => c.name === 'version'));
    cols.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  });
});
