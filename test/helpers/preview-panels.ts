/**
 * Renders the Results and Documentation Search webviews in headless chromium with Node-side hosts and saves PNGs
 * under test-results/preview/. Documentation Search uses the real docs index over $LOUPE_SHARED's NHANES docs.
 *   node esbuild.js && node test/helpers/preview-panels.ts [results|docsearch]
 */
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { preview } from './webview-preview.ts';
import { previewResultsState } from '../fixtures/results/preview-state.ts';

const which = process.argv[2];
const out = join(process.cwd(), 'test-results', 'preview');

if (!which || which === 'results') {
  const opened: string[] = [];
  const r = await preview({
    panel: 'results',
    theme: process.env.LIGHT ? 'light' : 'dark',
    png: join(out, process.env.LIGHT ? 'results-light.png' : 'results.png'),
    height: 1500,
    waitFor: '#chart-blade[data-rendered]',
    handle: (method, params) => {
      if (method === 'webview/ready') return { state: previewResultsState };
      if (method === 'results/openRuns') {
        opened.push((params as { runIds: string[] }).runIds.join(','));
        return undefined;
      }
      throw new Error(`Method not found: ${method}`);
    },
    act: async (_page, frame) => {
      await frame.locator('#chart-scatter[data-rendered]').waitFor({ timeout: 20_000 });
      await frame.locator('a.metric').first().click();
    },
  });
  console.log('results text:\n', r.text.slice(0, 600));
  console.log('opened runs:', opened);
  console.log('console errors:', r.errors);
}

if (!which || which === 'docsearch') {
  const { sharedData } = await import('./shared.ts');
  const { DocSearchService, blockDocTarget } = await import('../../src/app/docsearch/docsearch-service.ts');
  const { loadSuite } = await import('../../src/core/benchmarks/index.ts');
  const suite = await loadSuite('longda', sharedData('longda', 'benchmark'));
  const block = suite.blocks.find((b) => b.longda?.survey === 'NHANES' && b.visible.docs.length);
  if (!block) throw new Error('no NHANES block with docs');
  const t = blockDocTarget(suite, block);
  console.log(`target ${t.target.title}: ${t.files?.length} files`);
  const svc = new DocSearchService(t.target, { cacheDir: join(tmpdir(), 'loupe-preview-docs'), files: t.files });
  const r = await preview({
    panel: 'docsearch',
    png: join(
      out,
      process.env.PAGE ? 'docsearch-page.png' : process.env.HISTORY ? 'docsearch-history.png' : 'docsearch.png',
    ),
    handle: async (method, params) => {
      const p = params as Record<string, string>;
      switch (method) {
        case 'webview/ready':
          await svc.build();
          return {
            state: {
              ...svc.state(),
              prefill: {
                query: process.env.Q ?? 'BMXBMI body mass index',
                mode: 'bm25',
                history: process.env.HISTORY
                  ? [
                      {
                        label: 'step 1 · search_doc',
                        query: 'WTMEC2YR',
                        mode: 'keyword' as const,
                        files: ['docs/Demographics/DEMO_L.pdf'],
                      },
                      {
                        label: 'step 3 · retriever',
                        query: 'obesity prevalence adults 20 and over',
                        mode: 'longta' as const,
                      },
                      {
                        label: 'step 5 · search_doc',
                        query: 'BMXBMI',
                        mode: 'keyword' as const,
                        opened: [{ file: 'docs/Examination/BMX_L.pdf', unit: 'Page 14' }],
                      },
                    ]
                  : undefined,
              },
            },
          };
        case 'docs/search':
          return svc.search(params as never);
        case 'docs/readUnit':
          return svc.readUnit(p.file as string, p.unit as string);
        case 'docs/getPdf':
          return { file: p.file, data: await svc.pdfBytes(p.file as string) };
        default:
          throw new Error(`Method not found: ${method}`);
      }
    },
    waitFor: process.env.PAGE ? '#detail[data-rendered="pdf"]' : '#unit-text',
    act: async (_page, frame) => {
      if (!process.env.PAGE) return;
      await frame.locator('#open-page').click({ timeout: 20_000 });
    },
  });
  console.log('docsearch text:\n', r.text.slice(0, 800));
  console.log('console errors:', r.errors);
  svc.dispose();
}
