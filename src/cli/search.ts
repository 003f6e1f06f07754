import { parseArgs } from 'node:util';
import { openDocIndex, type SearchMode } from '../core/docs/index.ts';
import { defaultDocsCacheDir } from '../core/docs/roots.ts';
import { suiteDocFiles } from '../core/benchmarks/index.ts';
import { UsageError, type CliCommand } from './types.ts';

const MODES: SearchMode[] = ['bm25', 'keyword', 'longta'];

/** `loupe search`: ranked documentation hits `[{ file, unit, score, snippet }]` (file relative to --root). */
export const searchCommand: CliCommand = {
  name: 'search',
  summary: 'search the documentation of a folder (bm25 | keyword | longta) and print the top hits',
  usage: 'loupe search --root DIR [--suite longda] [--survey NAME] [--mode bm25|keyword|longta] [--top K] [--cache DIR] [--json] "query"',
  async run(argv, io) {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        root: { type: 'string' },
        suite: { type: 'string' },
        survey: { type: 'string' },
        mode: { type: 'string', default: 'bm25' },
        top: { type: 'string', default: '10' },
        cache: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    if (!values.root) throw new UsageError('--root is required');
    const query = positionals.join(' ').trim();
    if (!query) throw new UsageError('a query is required');
    const mode = values.mode as SearchMode;
    if (!MODES.includes(mode)) throw new UsageError(`--mode must be one of ${MODES.join(', ')}`);
    const top = Number(values.top);
    if (!Number.isInteger(top) || top < 1) throw new UsageError('--top must be a positive integer');
    // --survey alone implies the LongDA layout
    const files = suiteDocFiles(values.root, values.suite, values.survey);
    const idx = await openDocIndex({ root: values.root, cacheDir: values.cache ?? defaultDocsCacheDir(io.env), files });
    try {
      await idx.build();
      const hits = idx.search(query, { mode, top }).map((h) => ({ file: h.file, unit: h.unit, score: Number(h.score.toFixed(4)), snippet: h.snippet }));
      if (values.json) io.out(JSON.stringify(hits, null, 2) + '\n');
      else if (!hits.length) io.out('no results\n');
      else for (const [i, h] of hits.entries()) io.out(`${i + 1}. ${h.file} — ${h.unit} (${h.score})\n   ${h.snippet}\n`);
      return 0;
    } finally {
      idx.close();
    }
  },
};
