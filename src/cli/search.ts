import { openDocIndex, type SearchMode } from '../core/docs/index.ts';
import { defaultDocsCacheDir } from '../core/docs/roots.ts';
import { suiteDocFiles } from '../core/benchmarks/index.ts';
import { surveyCatalog } from '../core/docs/survey-catalog.ts';
import { QuestionRetriever, decomposeWithModel, type LlmDecomposition } from '../core/docs/question.ts';
import { LlmClient } from '../core/agent/llm.ts';
import { join } from 'node:path';
import { pdfExtractorOption } from './pdf-extractor-option.ts';
import { UsageError } from './types.ts';
import { DOCS_OPTIONS, JSON_OPTIONS, MODEL_OPTIONS, SUITE_OPTIONS } from './option-groups.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';

const MODES: Array<SearchMode | 'question'> = ['bm25', 'keyword', 'longta', 'question'];

const DECL = declareCommand({
  synopsis: 'search "query"',
  positionals: true,
  groups: [
    SUITE_OPTIONS,
    optionGroup('search', {
      survey: { type: 'string', value: 'NAME', help: "only this survey's documentation (the LongDA layout)" },
      mode: { type: 'string', value: MODES.join('|'), default: 'bm25', help: 'how hits are ranked' },
      top: { type: 'string', value: 'K', default: '10', help: 'how many hits' },
    }),
    DOCS_OPTIONS,
    MODEL_OPTIONS,
    JSON_OPTIONS,
  ],
  notes: '  --root is required. --model with --base-url: in question mode the model decomposes the question first.',
});

/** `loupe search`: ranked documentation hits `[{ file, unit, score, snippet }]` (file relative to --root). */
export const searchCommand = defineCommand({
  name: 'search',
  summary: 'search the documentation of a folder (bm25 | keyword | longta | question) and print the top hits',
  declarations: [DECL],
  async run(argv, io) {
    const { values, positionals } = parseCommand(DECL, argv);
    if (!values.root) throw new UsageError('--root is required');
    const query = positionals.join(' ').trim();
    if (!query) throw new UsageError('a query is required');
    const mode = values.mode as SearchMode | 'question';
    if (!MODES.includes(mode)) throw new UsageError(`--mode must be one of ${MODES.join(', ')}`);
    if ((values.model || values['base-url']) && mode !== 'question') {
      throw new UsageError('--model / --base-url apply to --mode question only');
    }
    if (!!values.model !== !!values['base-url']) throw new UsageError('--model and --base-url go together');
    const top = Number(values.top);
    if (!Number.isInteger(top) || top < 1) throw new UsageError('--top must be a positive integer');
    // --survey alone implies the LongDA layout
    const files = suiteDocFiles(values.root, values.suite, values.survey);
    const idx = await openDocIndex({
      root: values.root,
      cacheDir: values.cache ?? defaultDocsCacheDir(io.env),
      files,
      ...pdfExtractorOption(values['pdf-extractor']),
    });
    try {
      await idx.build();
      if (mode === 'question') {
        // files ranked for an analyst's question, with the candidate variables from the survey's catalog
        const folder = files?.[0] && !files[0].startsWith('docs/') ? files[0].split('/')[0]! : '';
        const cat = surveyCatalog(idx, join(values.root, folder, 'data'), values.root);
        let llm: LlmDecomposition | undefined;
        if (values.model && values['base-url']) {
          const client = new LlmClient({
            baseUrl: values['base-url'],
            model: values.model,
            apiKey: io.env[values['api-key-env']] ?? '',
            temperature: 0,
            maxRetries: 2,
          });
          llm = await decomposeWithModel(query, async (system, user) => {
            const r = await client.complete(
              [
                { role: 'system', content: system },
                { role: 'user', content: user },
              ],
              [],
            );
            return r.message.content ?? '';
          });
        }
        const r = new QuestionRetriever(idx, cat.variables).ask(query, {
          top,
          ...(llm ? { extraMeasures: [...llm.measures, ...llm.population] } : {}),
        });
        if (values.json) io.out(JSON.stringify(llm ? { ...r, llm } : r, null, 2) + '\n');
        else {
          if (llm) {
            io.out(
              `model decomposition: measures ${llm.measures.join('; ') || 'none'}; population ${llm.population.join('; ') || 'none'}\n`,
            );
          }
          io.out(
            `concepts: groupings ${r.concepts.groupings.join(', ') || 'none'}; measures ${r.concepts.measures.join(' ') || 'none'}${r.concepts.family ? `; design data: ${r.concepts.family}` : ''}\n`,
          );
          for (const [i, f] of r.files.entries()) io.out(`${i + 1}. ${f.file} (${f.from.join(', ')})\n`);
          io.out('variables:\n');
          for (const v of r.variables.slice(0, top)) {
            io.out(
              `  ${v.name.padEnd(10)} ${v.file.padEnd(10)} ${v.label ?? ''} — ${v.doc} ${v.page ?? ''} [${v.why}]\n`,
            );
          }
        }
        return 0;
      }
      const hits = idx
        .search(query, { mode, top })
        .map((h) => ({ file: h.file, unit: h.unit, score: Number(h.score.toFixed(4)), snippet: h.snippet }));
      if (values.json) io.out(JSON.stringify(hits, null, 2) + '\n');
      else if (!hits.length) io.out('no results\n');
      else {
        for (const [i, h] of hits.entries()) io.out(`${i + 1}. ${h.file} — ${h.unit} (${h.score})\n   ${h.snippet}\n`);
      }
      return 0;
    } finally {
      idx.close();
    }
  },
});
