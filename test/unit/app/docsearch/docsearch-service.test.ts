/** The Documentation Search panel's host logic on real NHANES codebooks from $LOUPE_SHARED. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadSuite, type Block, type Suite } from '../../../../src/core/benchmarks/index.ts';
import {
  blockDocTarget,
  DocSearchService,
  runSearchHistory,
  suiteDocTarget,
} from '../../../../src/app/docsearch/docsearch-service.ts';
import type { IndexStatus } from '../../../../src/protocol/docsearch.ts';
import { sharedData } from '../../../helpers/shared.ts';

describe('docsearch service', () => {
  let suite: Suite;
  let block: Block;
  let cache: string;
  let svc: DocSearchService;
  const updates: IndexStatus[] = [];

  before(async () => {
    suite = await loadSuite('longda', sharedData('longda', 'benchmark'));
    const b = suite.blocks.find(
      (x) => x.longda?.survey === 'NHANES' && x.visible.docs.some((d) => d.rel.endsWith('BMX_L.pdf')),
    );
    assert.ok(b, 'an NHANES block with BMX_L.pdf');
    block = b;
    cache = mkdtempSync(join(tmpdir(), 'loupe-docsearch-'));
    const t = blockDocTarget(suite, block);
    // Two codebooks keep the test fast; the allowlist is what the panel passes for a block.
    const files = (t.files ?? []).filter((f) => /\/(BMX_L|DEMO_L)\.pdf$/.test(f));
    assert.equal(files.length, 2);
    svc = new DocSearchService(t.target, { cacheDir: cache, files, onIndex: (s) => updates.push(s) });
    await svc.build();
  });
  after(() => {
    svc?.dispose();
    if (cache) rmSync(cache, { recursive: true, force: true });
  });

  it("targets a block with the agent's own root and workspace-relative names", () => {
    const t = blockDocTarget(suite, block);
    assert.ok(t.target.root.endsWith('/NHANES'), t.target.root);
    assert.equal(t.target.suiteRoot, suite.root);
    assert.ok(
      t.files?.every((f) => f.startsWith('docs/')),
      'files are docs/...',
    );
    const all = suiteDocTarget(suite);
    assert.ok((all.files ?? []).some((f) => f.startsWith('NHANES/docs/')));
    assert.ok(
      !(all.files ?? []).some((f) => /benchmark\.csv$|publications/.test(f)),
      'no hidden files in the suite target',
    );
  });

  it('reports build progress and ends ready with both files', () => {
    assert.equal(updates[0]?.state, 'building');
    assert.equal(updates.at(-1)?.state, 'ready');
    const st = svc.state();
    assert.deepEqual(
      st.files.map((f) => f.file),
      ['docs/Examination/BMX_L.pdf', 'docs/Demographics/DEMO_L.pdf'].sort(),
    );
    assert.ok(st.files.every((f) => f.kind === 'pdf' && f.units > 1));
  });

  it('finds the BMI variable in the body measures codebook, in every mode', async () => {
    for (const mode of ['bm25', 'keyword', 'longta'] as const) {
      const r = await svc.search({ query: 'BMXBMI', mode, top: 5 });
      assert.ok(r.hits.length > 0, mode);
      assert.equal(r.hits[0]?.file, 'docs/Examination/BMX_L.pdf', mode);
      assert.match(r.hits[0]?.unit ?? '', /^Page \d+$/);
    }
    const filtered = await svc.search({ query: 'BMXBMI', mode: 'bm25', files: ['docs/Demographics/DEMO_L.pdf'] });
    assert.ok(filtered.hits.every((h) => h.file === 'docs/Demographics/DEMO_L.pdf'));
  });

  it('reads the whole unit of a hit and serves the PDF bytes of indexed files only', async () => {
    const [hit] = (await svc.search({ query: 'BMXBMI', mode: 'keyword', top: 1 })).hits;
    assert.ok(hit);
    const u = await svc.readUnit(hit.file, hit.unit);
    assert.match(u.text, /BMXBMI/);
    assert.equal(u.page, Number(hit.unit.split(' ')[1]));
    const bytes = await svc.pdfBytes(hit.file);
    assert.equal(new TextDecoder().decode(new Uint8Array(bytes, 0, 5)), '%PDF-');
    await assert.rejects(svc.pdfBytes('docs/Examination/BPXO_L.pdf'), /not a file of this documentation index/);
    await assert.rejects(svc.readUnit('../benchmark.csv', 'Line 1'), /not a file of this documentation index/);
  });

  it('runs a prebuild first (reporting its progress) and falls back to the in-process build when it fails', async () => {
    const t = blockDocTarget(suite, block);
    const files = (t.files ?? []).filter((f) => /\/BMX_L\.pdf$/.test(f));
    const seen: IndexStatus[] = [];
    const ok = new DocSearchService(t.target, {
      cacheDir: cache,
      files,
      onIndex: (st) => seen.push(st),
      prebuild: async (progress) => progress(1, 1, 'docs/Examination/BMX_L.pdf'),
    });
    await ok.build();
    assert.ok(seen.some((x) => x.state === 'building' && x.message === 'extract docs/Examination/BMX_L.pdf'));
    assert.equal(ok.state().index.state, 'ready');
    ok.dispose();
    const errors: unknown[] = [];
    const fallback = new DocSearchService(t.target, {
      cacheDir: cache,
      files,
      prebuild: async () => {
        throw new Error('no cli');
      },
      onPrebuildError: (e) => errors.push(e),
    });
    await fallback.build();
    assert.equal(errors.length, 1);
    assert.equal(fallback.state().index.state, 'ready');
    assert.ok((await fallback.search({ query: 'BMXBMI', mode: 'keyword' })).hits.length > 0);
    fallback.dispose();
  });

  it("lists a run's documentation searches for replay", () => {
    const h = runSearchHistory([
      {
        index: 0,
        toolCalls: [
          {
            name: 'search_doc',
            argumentsText: JSON.stringify({ keyword: 'WTMEC2YR', doc_path: 'docs/Demographics/DEMO_L.pdf' }),
          },
        ],
      },
      {
        index: 1,
        toolCalls: [
          { name: 'retriever', argumentsText: JSON.stringify({ query: 'obesity prevalence' }) },
          { name: 'python', argumentsText: '{}' },
        ],
      },
      { index: 2, toolCalls: [{ name: 'search_doc', argumentsText: 'not json' }] },
    ]);
    assert.deepEqual(h, [
      { label: 'step 1 · search_doc', query: 'WTMEC2YR', mode: 'keyword', files: ['docs/Demographics/DEMO_L.pdf'] },
      { label: 'step 2 · retriever', query: 'obesity prevalence', mode: 'longta', files: undefined },
    ]);
  });
});

describe('docsearch panel results', () => {
  it('collapses near-duplicate hits (the same passage in several files) into the best one, listing the others', async () => {
    const { collapseNearDuplicates } = await import('../../../../src/app/docsearch/docsearch-service.ts');
    const para = 'Obesity is defined as a body mass index of 30 or higher among adults aged 20 and over in the survey';
    const hits: {
      file: string;
      unit: string;
      score: number;
      snippet: string;
      alsoIn?: { file: string; unit: string; score: number }[];
    }[] = [
      { file: 'docs/DR1IFF_L.pdf', unit: 'Page 2', score: 9, snippet: para },
      {
        file: 'docs/BMX_L.pdf',
        unit: 'Page 4',
        score: 8,
        snippet: 'BMXBMI Body Mass Index (kg/m**2) computed from measured weight and height',
      },
      { file: 'docs/DR2IFF_L.pdf', unit: 'Page 2', score: 7, snippet: `${para}.` },
      { file: 'docs/DR1TOT_L.pdf', unit: 'Page 3', score: 6, snippet: para.replace('survey', 'surveys') },
    ];
    const out = collapseNearDuplicates(hits);
    assert.deepEqual(
      out.map((h) => h.file),
      ['docs/DR1IFF_L.pdf', 'docs/BMX_L.pdf'],
    );
    assert.deepEqual(
      out[0]!.alsoIn!.map((a) => a.file),
      ['docs/DR2IFF_L.pdf', 'docs/DR1TOT_L.pdf'],
    );
    assert.equal(out[1]!.alsoIn, undefined);
  });
});

describe('docsearch panel snippets', () => {
  it('are cut on word boundaries of the unit text, with an ellipsis where cut', async () => {
    const { wordAlignedSnippet } = await import('../../../../src/app/docsearch/docsearch-service.ts');
    const unit =
      'Full sample 2 year MEC exam weight. Target: Both males and females 0 YEARS - 150 YEARS WTMEC2YR - Full sample';
    const cut = unit.slice(8, 70); // "mple 2 year MEC exam weight. Target: Both males and females 0 Y"
    assert.equal(wordAlignedSnippet(cut, unit), '…2 year MEC exam weight. Target: Both males and females 0…');
    assert.equal(wordAlignedSnippet(unit.slice(0, 20), unit), 'Full sample 2 year…');
    assert.equal(wordAlignedSnippet(unit.slice(12, 34), unit), '2 year MEC exam weight.'.slice(0, 22));
    assert.equal(wordAlignedSnippet('not in the unit', unit), 'not in the unit');
  });
});
