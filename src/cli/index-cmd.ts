import { plural } from './plural.ts';
import { openDocIndex } from '../core/docs/index.ts';
import { defaultDocsCacheDir } from '../core/docs/roots.ts';
import { suiteDocFiles } from '../core/benchmarks/index.ts';
import { pdfExtractorOption } from './pdf-extractor-option.ts';
import { DOCS_OPTIONS, JSON_OPTIONS, SUITE_OPTIONS } from './option-groups.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';
import { UsageError } from './types.ts';

const INDEX = declareCommand({
  synopsis: 'index',
  groups: [
    SUITE_OPTIONS,
    optionGroup('index', {
      survey: { type: 'string', value: 'NAME', help: "only this survey's documentation (the LongDA layout)" },
      workers: { type: 'string', value: 'N', default: '1', help: 'extraction workers' },
    }),
    DOCS_OPTIONS,
    JSON_OPTIONS,
  ],
  notes: '  --root is required; --suite (the layout of the documentation under it) is optional.',
});

/** `loupe index`: builds (or refreshes) the documentation index of a folder and prints its report. */
export const indexCommand = defineCommand({
  name: 'index',
  summary: 'build the documentation index of a folder (PDF/text/CSV/XLSX units, BM25) and report skipped files',
  declarations: [INDEX],
  async run(argv, io) {
    const { values } = parseCommand(INDEX, argv);
    if (!values.root) throw new UsageError('--root is required');
    const workers = Number(values.workers);
    if (!Number.isInteger(workers) || workers < 1) throw new UsageError('--workers must be a positive integer');
    const files = suiteDocFiles(values.root, values.suite, values.survey);
    const idx = await openDocIndex({
      root: values.root,
      cacheDir: values.cache ?? defaultDocsCacheDir(io.env),
      files,
      extractWorkers: workers,
      ...pdfExtractorOption(values['pdf-extractor']),
    });
    try {
      let last = 0;
      const rep = await idx.build({
        onProgress: (p) => {
          if (values.json || p.phase !== 'extract') return;
          const now = Date.now();
          if (now - last > 1000) {
            last = now;
            io.err(`indexing ${p.done}/${p.total} ${p.file ?? ''}\n`);
          }
        },
      });
      if (values.json) {
        io.out(JSON.stringify(rep, null, 2) + '\n');
      } else {
        io.out(`root: ${rep.root}\ncache: ${rep.cachePath}\nPDF extractor: ${rep.pdfExtractor ?? 'pdfium'}\n`);
        const skippedSet = new Set(rep.skipped.map((s) => s.file));
        const indexed = rep.files.filter((f) => !skippedSet.has(f.file)).length;
        io.out(
          `${plural(indexed, 'file')} indexed${rep.skipped.length ? ` (${rep.skipped.length} skipped)` : ''}, ${rep.units} units, ${rep.chunks} chunks (${rep.extracted} extracted, ${rep.reused} reused) in ${(rep.ms / 1000).toFixed(1)} s\n`,
        );
        for (const f of rep.files) if (f.note) io.out(`  note ${f.file}: ${f.note}\n`);
        if (rep.skipped.length) {
          io.out(`skipped ${rep.skipped.length}:\n`);
          for (const s of rep.skipped) io.out(`  ${s.file}: ${s.reason}\n`);
        }
      }
      return 0;
    } finally {
      idx.close();
    }
  },
});
