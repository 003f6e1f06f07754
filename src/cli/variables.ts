import { join } from 'node:path';
import { docsFolderFiles, openDocIndex } from '../core/docs/index.ts';
import { defaultDocsCacheDir } from '../core/docs/roots.ts';
import { filterCatalog, surveyCatalog } from '../core/docs/survey-catalog.ts';
import { pdfExtractorOption } from './pdf-extractor-option.ts';
import { UsageError } from './types.ts';
import { DOCS_OPTIONS, JSON_OPTIONS } from './option-groups.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';

const DECL = declareCommand({
  synopsis: 'variables [query]',
  positionals: true,
  groups: [
    optionGroup('variables', {
      root: { type: 'string', value: 'DIR', help: 'the documentation folder (required)' },
      survey: { type: 'string', value: 'NAME', help: 'the survey (required)' },
      limit: { type: 'string', value: 'N', help: 'at most N variables' },
    }),
    DOCS_OPTIONS,
    JSON_OPTIONS,
  ],
});

/** `loupe variables`: lists or searches a survey's variable catalog (name, label, file, doc, page, values). */
export const variablesCommand = defineCommand({
  name: 'variables',
  summary:
    "list or search a survey's variable catalog (from its codebooks; data columns without documentation are marked)",
  declarations: [DECL],
  async run(argv, io) {
    const { values, positionals } = parseCommand(DECL, argv);
    if (!values.root) throw new UsageError('--root is required');
    if (!values.survey) throw new UsageError('--survey is required (e.g. --survey NHANES)');
    const limit = values.limit === undefined ? Infinity : Number(values.limit);
    if (!(limit >= 1) || (limit !== Infinity && !Number.isInteger(limit))) {
      throw new UsageError('--limit must be a positive integer');
    }
    const files = docsFolderFiles(values.root, values.survey);
    // the survey folder as spelled on disk (`--survey nhanes` finds `NHANES`)
    const folder = files[0]!.startsWith('docs/') ? '' : files[0]!.split('/')[0]!;
    const idx = await openDocIndex({
      root: values.root,
      cacheDir: values.cache ?? defaultDocsCacheDir(io.env),
      files,
      ...pdfExtractorOption(values['pdf-extractor']),
    });
    try {
      await idx.build();
      const cat = surveyCatalog(idx, join(values.root, folder, 'data'), values.root);
      const query = positionals.join(' ').trim();
      const hits = filterCatalog(cat.variables, query).slice(0, limit);
      if (values.json) {
        const entries = hits.map((v) => ({
          name: v.name,
          label: v.label,
          file: v.file,
          doc: v.doc,
          page: v.page,
          universe: v.universe,
          values: v.values,
          documented: v.documented,
          ...(v.dataLabel !== undefined ? { dataLabel: v.dataLabel } : {}),
        }));
        io.out(
          JSON.stringify(
            {
              survey: folder || values.survey,
              query,
              total: cat.variables.length,
              coverage: cat.coverage,
              skipped: cat.problems,
              variables: entries,
            },
            null,
            2,
          ) + '\n',
        );
        return 0;
      }
      for (const p of cat.problems) io.err(`skipped ${p.file}: ${p.reason}\n`);
      if (!hits.length) {
        io.out(query ? `no variables match "${query}"\n` : 'no variables found in this documentation\n');
      }
      for (const v of hits) {
        const where = v.documented ? `${v.doc} — ${v.page}` : 'undocumented (data file header only)';
        const codes = v.values.length
          ? `  [${v.values
              .slice(0, 6)
              .map((x) => `${x.code}=${x.label}`)
              .join('; ')}${v.values.length > 6 ? '; …' : ''}]`
          : '';
        io.out(
          `${v.name.padEnd(10)} ${v.file.padEnd(10)} ${v.label ?? '(no documentation)'}\n           ${where}${codes}\n`,
        );
      }
      io.out(
        `${hits.length} of ${cat.variables.length} variables; data columns documented: ${cat.coverage.documented}/${cat.coverage.columns}\n`,
      );
      return 0;
    } finally {
      idx.close();
    }
  },
});
