import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { docsFolderFiles, openDocIndex, type DocIndex, type SearchMode } from '../core/docs/index.ts';
import { defaultDocsCacheDir } from '../core/docs/roots.ts';
import { surveyCatalog } from '../core/docs/survey-catalog.ts';
import { QuestionRetriever } from '../core/docs/question.ts';
import { evaluateRetrieval, loadRetrievalLabels, type RetrievalLabel } from '../core/docs/retrieval-eval.ts';
import { LoupeInputError } from '../core/util/errors.ts';
import { pdfExtractorOption } from './pdf-extractor-option.ts';
import { UsageError } from './types.ts';
import { DOCS_OPTIONS, JSON_OPTIONS } from './option-groups.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';

const MODES = ['bm25', 'longta', 'question'] as const;
type EvalMode = (typeof MODES)[number];

function pageFiles(idx: DocIndex, q: string, mode: SearchMode, k: number): string[] {
  const seen: string[] = [];
  for (const h of idx.search(q, { mode, top: 300 })) {
    if (!seen.includes(h.file)) seen.push(h.file);
    if (seen.length >= k) break;
  }
  return seen;
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Number(s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!.toFixed(2)) : 0;
}

const DECL = declareCommand({
  synopsis: 'search-eval',
  groups: [optionGroup('evaluation', {
    labels: { type: 'string', value: 'FILE', help: 'the labelled questions (required)' },
    root: { type: 'string', value: 'DIR', help: 'the documentation folder the labels\' paths are relative to (required)' },
    survey: { type: 'string', value: 'NAME', help: 'the survey (required)' },
    split: { type: 'string', value: 'FILE', help: 'a JSON split file: the metrics per part as well' },
    modes: { type: 'string', value: 'bm25,longta,question', default: MODES.join(','), help: 'the retrieval modes compared' },
    k: { type: 'string', value: 'N', default: '10', help: 'the cut-off of recall@k and nDCG@k' },
    benchmark: { type: 'string', value: 'DIR', help: 'the benchmark folder of the labels (default --root)' },
    text: { type: 'string', value: 'query+info|query', default: 'query+info', help: 'what of a question is searched' },
  }), DOCS_OPTIONS, JSON_OPTIONS],
});

/** `loupe search-eval`: recall@k, MRR and nDCG of the files labelled questions need, per retrieval mode. */
export const searchEvalCommand = defineCommand({
  name: 'search-eval',
  summary: 'evaluate documentation retrieval on labelled questions (recall@k, MRR, nDCG; bm25 | longta | question)',
  declarations: [DECL],
  async run(argv, io) {
    const { values } = parseCommand(DECL, argv);
    if (!values.labels) throw new UsageError('--labels is required');
    if (!values.root) throw new UsageError('--root is required (the documentation folder the labels\' paths are relative to)');
    if (!values.survey) throw new UsageError('--survey is required (e.g. --survey NHANES)');
    const k = Number(values.k);
    if (!Number.isInteger(k) || k < 1) throw new UsageError('--k must be a positive integer');
    const modes = values.modes.split(',').map((m) => m.trim()) as EvalMode[];
    for (const m of modes) if (!MODES.includes(m)) throw new UsageError(`--modes: unknown mode "${m}" (one of ${MODES.join(', ')})`);
    if (values.text !== 'query+info' && values.text !== 'query') throw new UsageError('--text must be query+info or query');
    const labels = loadRetrievalLabels(values.labels, values.benchmark ?? values.root, values.text);
    const parts: Record<string, RetrievalLabel[]> = { all: labels };
    if (values.split) {
      let split: Record<string, unknown>;
      try {
        split = JSON.parse(readFileSync(values.split, 'utf8')) as Record<string, unknown>;
      } catch (e) {
        throw new LoupeInputError(values.split, `not a readable JSON split file (${(e as Error).message})`);
      }
      for (const [name, sources] of Object.entries(split)) {
        if (!Array.isArray(sources) || !sources.every((s) => typeof s === 'string')) continue;
        const set = new Set(sources as string[]);
        parts[name] = labels.filter((l) => l.source !== undefined && set.has(l.source));
      }
      if (Object.keys(parts).length === 1) throw new LoupeInputError(values.split, 'no part (an array of sources) found in the split file');
    }
    const files = docsFolderFiles(values.root, values.survey);
    const folder = files[0]!.startsWith('docs/') ? '' : files[0]!.split('/')[0]!;
    const idx = await openDocIndex({ root: values.root, cacheDir: values.cache ?? defaultDocsCacheDir(io.env), files, ...pdfExtractorOption(values['pdf-extractor']) });
    try {
      await idx.build();
      const cat = surveyCatalog(idx, join(values.root, folder, 'data'), values.root);
      const qr = new QuestionRetriever(idx, cat.variables);
      const design = new Set(qr.designDocs());
      const latency: number[] = [];
      const memo = new Map<string, string[]>();
      const once = (m: EvalMode, f: (q: string) => string[]) => (q: string) => {
        const key = `${m}\u0000${q}`;
        let r = memo.get(key);
        if (!r) memo.set(key, (r = f(q)));
        return r;
      };
      const rankers: Record<EvalMode, (q: string) => string[]> = {
        bm25: (q) => pageFiles(idx, q, 'bm25', k),
        longta: (q) => pageFiles(idx, q, 'longta', k),
        question: (q) => qr.ask(q, { top: k }).files.map((f) => f.file),
      };
      const report: Record<string, Record<string, unknown>> = {};
      for (const [part, ls] of Object.entries(parts)) {
        report[part] = {};
        for (const m of modes) {
          const rank = once(m, rankers[m]);
          report[part][m] = {
            ...evaluateRetrieval(ls, rank, k),
            withoutDesignFiles: evaluateRetrieval(ls, rank, k, (f) => design.has(f)),
          };
        }
      }
      // latency in steady state: a second pass over every question (the first pass above warmed the index caches)
      if (modes.includes('question')) {
        for (const l of labels) {
          const t0 = performance.now();
          qr.ask(l.q, { top: k });
          latency.push(performance.now() - t0);
        }
      }
      const out = {
        labels: values.labels,
        split: values.split ?? null,
        text: values.text,
        k,
        family: qr.family,
        designFiles: [...design],
        parts: report,
        ...(latency.length ? { questionLatencyMs: { p50: percentile(latency, 50), p95: percentile(latency, 95), n: latency.length } } : {}),
      };
      if (values.json) {
        io.out(JSON.stringify(out, null, 2) + '\n');
        return 0;
      }
      io.out(`k = ${k}; design files (left out in the second column): ${[...design].join(', ') || 'none'}\n`);
      for (const [part, r] of Object.entries(report)) {
        io.out(`${part} (${parts[part]!.length} questions)\n`);
        for (const m of modes) {
          const x = r[m] as ReturnType<typeof evaluateRetrieval> & { withoutDesignFiles: ReturnType<typeof evaluateRetrieval> };
          io.out(
            `  ${m.padEnd(9)} recall@${k} ${x.recallAtK.toFixed(3)}  MRR ${x.mrr.toFixed(3)}  nDCG@${k} ${x.ndcgAtK.toFixed(3)}   | without design files: recall@${k} ${x.withoutDesignFiles.recallAtK.toFixed(3)} (${x.withoutDesignFiles.questions} q)\n`,
          );
        }
      }
      if (out.questionLatencyMs) io.out(`question mode latency: p50 ${out.questionLatencyMs.p50} ms, p95 ${out.questionLatencyMs.p95} ms (${out.questionLatencyMs.n} calls after a warm-up pass, in-process)\n`);
      return 0;
    } finally {
      idx.close();
    }
  },
});
