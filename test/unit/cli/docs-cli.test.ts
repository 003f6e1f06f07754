import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { main } from '../../../src/cli/main.ts';

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { out: (s: string) => out.push(s), err: (s: string) => err.push(s), env: process.env, cwd: process.cwd() },
  };
}

describe('cli: loupe index / loupe search', () => {
  const root = mkdtempSync(join(tmpdir(), 'loupe-cli-docs-'));
  const cache = mkdtempSync(join(tmpdir(), 'loupe-cli-cache-'));
  after(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
  });
  // LongDA layout: <SURVEY>/docs and <SURVEY>/data (data must not be indexed)
  mkdirSync(join(root, 'NHANES', 'docs'), { recursive: true });
  mkdirSync(join(root, 'NHANES', 'data'), { recursive: true });
  mkdirSync(join(root, 'GSS', 'docs'), { recursive: true });
  writeFileSync(join(root, 'NHANES', 'docs', 'demo.txt'), 'Variable Name: WTMEC2YR\nFull sample MEC exam weight\n');
  writeFileSync(join(root, 'NHANES', 'docs', 'bin.txt'), Buffer.from([0, 1, 2, 3]));
  writeFileSync(join(root, 'NHANES', 'data', 'answers.csv'), 'q,answer\n1,WTMEC2YR is 40.3\n');
  writeFileSync(join(root, 'GSS', 'docs', 'guide.txt'), 'Graduate students by field. WTMEC2YR is not here.\n');

  it('index --suite longda --json reports files, units and skipped files with reasons', async () => {
    const t = io();
    assert.equal(
      await main(['index', '--root', root, '--suite', 'longda', '--cache', cache, '--json'], t.io),
      0,
      t.err.join(''),
    );
    const rep = JSON.parse(t.out.join('')) as {
      files: { file: string; units: number }[];
      skipped: { file: string; reason: string }[];
    };
    assert.deepEqual(rep.files.map((f) => f.file).sort(), ['GSS/docs/guide.txt', 'NHANES/docs/demo.txt']);
    assert.deepEqual(rep.skipped, [
      { file: 'NHANES/docs/bin.txt', reason: 'binary content in a ".txt" file (NUL or control bytes)' },
    ]);
  });

  it('search --survey --json prints [{file, unit, score, snippet}] relative to the root', async () => {
    const t = io();
    assert.equal(
      await main(['search', '--root', root, '--survey', 'NHANES', '--cache', cache, '--json', 'wtmec2yr'], t.io),
      0,
      t.err.join(''),
    );
    const hits = JSON.parse(t.out.join('')) as { file: string; unit: string; score: number; snippet: string }[];
    assert.equal(hits.length, 1);
    assert.deepEqual(Object.keys(hits[0]!), ['file', 'unit', 'score', 'snippet']);
    assert.equal(hits[0]!.file, 'NHANES/docs/demo.txt');
    assert.equal(hits[0]!.unit, 'Line 1');
    assert.ok(hits[0]!.score > 0);
  });

  it('search --mode keyword across all surveys; bad mode is a usage error', async () => {
    const t = io();
    assert.equal(
      await main(
        ['search', '--root', root, '--suite', 'longda', '--cache', cache, '--mode', 'keyword', '--json', 'WTMEC2YR'],
        t.io,
      ),
      0,
    );
    const files = (JSON.parse(t.out.join('')) as { file: string }[]).map((h) => h.file).sort();
    assert.deepEqual(files, ['GSS/docs/guide.txt', 'NHANES/docs/demo.txt']);
    const u = io();
    assert.equal(await main(['search', '--root', root, '--mode', 'fuzzy', 'x'], u.io), 2);
    assert.match(u.err.join(''), /--mode must be one of bm25, keyword, longta/);
  });

  it('index --pdf-extractor: the report names the extractor; an unknown one is refused naming the option', async () => {
    const t = io();
    assert.equal(
      await main(['index', '--root', root, '--suite', 'longda', '--cache', cache, '--pdf-extractor', 'pdfjs'], t.io),
      0,
      t.err.join(''),
    );
    assert.match(t.out.join(''), /^PDF extractor: pdfjs$/m);
    const u = io();
    assert.notEqual(await main(['index', '--root', root, '--cache', cache, '--pdf-extractor', 'poppler'], u.io), 0);
    assert.match(u.err.join(''), /--pdf-extractor: unknown PDF extractor "poppler": use "pdfium" or "pdfjs"/);
  });
});
