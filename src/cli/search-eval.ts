import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { docsFolderFiles, openDocIndex, type DocIndex, type SearchMode } from '../core/docs/index.ts';
import { defaultDocsCacheDir } from '../core/docs/roots.ts';
import { surveyCatalog } from '../core/docs/survey-catalog.ts';
import { QuestionRetriever } from '../core/docs/question.ts';
import {
  evaluateRetrieval,
  loadRetrievalLabels,
  type RetrievalLabel,
  type RetrievalMetrics,
} from '../core/docs/retrieval-eval.ts';
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

type Metrics = RetrievalMetrics & { withoutDesignFiles: RetrievalMetrics };
interface SurveyEval {
  family: string | null;
  designFiles: string[];
  parts: Record<string, Record<string, Metrics>>;
  latency: number[];
}

/** Averages metrics of disjoint question sets, each question counting once. */
function poolMetrics(xs: readonly Metrics[]): Metrics {
  const pool = (ms: readonly RetrievalMetrics[]): RetrievalMetrics => {
    const n = ms.reduce((a, m) => a + m.questions, 0);
    const avg = (f: (m: RetrievalMetrics) => number) =>
      n ? Number((ms.reduce((a, m) => a + f(m) * m.questions, 0) / n).toFixed(3)) : 0;
    return {
      questions: n,
      k: ms[0]?.k ?? 0,
      recallAtK: avg((m) => m.recallAtK),
      mrr: avg((m) => m.mrr),
      ndcgAtK: avg((m) => m.ndcgAtK),
    };
  };
  return { ...pool(xs), withoutDesignFiles: pool(xs.map((x) => x.withoutDesignFiles)) };
}

async function evaluateSurvey(
  root: string,
  survey: string,
  parts: Record<string, RetrievalLabel[]>,
  modes: readonly EvalMode[],
  k: number,
  cacheDir: string,
  pdfExtractor: string | undefined,
): Promise<SurveyEval> {
  const files = docsFolderFiles(root, survey);
  const folder = files[0]!.startsWith('docs/') ? '' : files[0]!.split('/')[0]!;
  const idx = await openDocIndex({ root, cacheDir, files, ...pdfExtractorOption(pdfExtractor) });
  try {
    await idx.build();
    const cat = surveyCatalog(idx, join(root, folder, 'data'), root);
    const qr = new QuestionRetriever(idx, cat.variables);
    const design = new Set(qr.designDocs());
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
    const report: Record<string, Record<string, Metrics>> = {};
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
    const latency: number[] = [];
    if (modes.includes('question')) {
      for (const l of parts.all ?? []) {
        const t0 = performance.now();
        qr.ask(l.q, { top: k });
        latency.push(performance.now() - t0);
      }
    }
    return { family: qr.family, designFiles: [...design], parts: report, latency };
  } finally {
    idx.close();
  }
}

const DECL = declareCommand({
  synopsis: 'search-eval',
  groups: [
    optionGroup('evaluation', {
      labels: { type: 'string', value: 'FILE', help: 'the labelled questions (required)' },
      root: {
        type: 'string',
        value: 'DIR',
        help: "the documentation folder the labels' paths are relative to (required)",
      },
      survey: { type: 'string', value: 'NAME', help: 'the survey (required unless --all-surveys)' },
      'all-surveys': {
        type: 'boolean',
        help: 'evaluate every survey the labels name (one index each): metrics per survey and over all questions',
      },
      split: { type: 'string', value: 'FILE', help: 'a JSON split file: the metrics per part as well' },
      modes: {
        type: 'string',
        value: 'bm25,longta,question',
        default: MODES.join(','),
        help: 'the retrieval modes compared',
      },
      k: { type: 'string', value: 'N', default: '10', help: 'the cut-off of recall@k and nDCG@k' },
      benchmark: { type: 'string', value: 'DIR', help: 'the benchmark folder of the labels (default --root)' },
      text: {
        type: 'string',
        value: 'query+info|query',
        default: 'query+info',
        help: 'what of a question is searched',
      },
    }),
    DOCS_OPTIONS,
    JSON_OPTIONS,
  ],
});

/** `loupe search-eval`: recall@k, MRR and nDCG of the files labelled questions need, per retrieval mode. */
export const searchEvalCommand = defineCommand({
  name: 'search-eval',
  summary: 'evaluate documentation retrieval on labelled questions (recall@k, MRR, nDCG; bm25 | longta | question)',
  declarations: [DECL],
  async run(argv, io) {
    const { values } = parseCommand(DECL, argv);
    if (!values.labels) throw new UsageError('--labels is required');
    if (!values.root) {
      throw new UsageError("--root is required (the documentation folder the labels' paths are relative to)");
    }
    const all = values['all-surveys'] === true;
    if (!values.survey && !all) throw new UsageError('--survey is required (e.g. --survey NHANES), or --all-surveys');
    if (values.survey && all) throw new UsageError('--survey and --all-surveys exclude each other');
    const k = Number(values.k);
    if (!Number.isInteger(k) || k < 1) throw new UsageError('--k must be a positive integer');
    const modes = values.modes.split(',').map((m) => m.trim()) as EvalMode[];
    for (const m of modes) {
      if (!MODES.includes(m)) throw new UsageError(`--modes: unknown mode "${m}" (one of ${MODES.join(', ')})`);
    }
    if (values.text !== 'query+info' && values.text !== 'query') {
      throw new UsageError('--text must be query+info or query');
    }
    const labels = loadRetrievalLabels(values.labels, values.benchmark ?? values.root, values.text);
    const partNames: Record<string, Set<string> | null> = { all: null };
    if (values.split) {
      let split: Record<string, unknown>;
      try {
        split = JSON.parse(readFileSync(values.split, 'utf8')) as Record<string, unknown>;
      } catch (e) {
        throw new LoupeInputError(values.split, `not a readable JSON split file (${(e as Error).message})`);
      }
      for (const [name, sources] of Object.entries(split)) {
        if (!Array.isArray(sources) || !sources.every((s) => typeof s === 'string')) continue;
        partNames[name] = new Set(sources as string[]);
      }
      if (Object.keys(partNames).length === 1) {
        throw new LoupeInputError(
          values.split,
          'no part (an array of sources or question ids) found in the split file',
        );
      }
    }
    const inPart = (l: RetrievalLabel, set: Set<string> | null) =>
      !set || (l.source !== undefined && set.has(l.source)) || (l.id !== undefined && set.has(l.id));
    const surveys = all ? [...new Set(labels.map((l) => l.survey ?? ''))].filter(Boolean).sort() : [values.survey!];
    const perSurvey: Record<string, SurveyEval> = {};
    for (const survey of surveys) {
      const mine = all ? labels.filter((l) => l.survey === survey) : labels;
      const parts: Record<string, RetrievalLabel[]> = {};
      for (const [name, set] of Object.entries(partNames)) parts[name] = mine.filter((l) => inPart(l, set));
      perSurvey[survey] = await evaluateSurvey(
        values.root,
        survey,
        parts,
        modes,
        k,
        values.cache ?? defaultDocsCacheDir(io.env),
        values['pdf-extractor'],
      );
    }
    // over all surveys: each question counts once (macro-average over questions)
    const pooled: Record<string, Record<string, unknown>> = {};
    for (const part of Object.keys(partNames)) {
      pooled[part] = {};
      for (const m of modes) pooled[part][m] = poolMetrics(Object.values(perSurvey).map((e) => e.parts[part]![m]!));
    }
    const latency = Object.values(perSurvey).flatMap((e) => e.latency);
    const out = all
      ? {
          labels: values.labels,
          split: values.split ?? null,
          text: values.text,
          k,
          parts: pooled,
          surveys: Object.fromEntries(
            Object.entries(perSurvey).map(([s, e]) => [
              s,
              { family: e.family, designFiles: e.designFiles, parts: e.parts },
            ]),
          ),
          ...(latency.length
            ? { questionLatencyMs: { p50: percentile(latency, 50), p95: percentile(latency, 95), n: latency.length } }
            : {}),
        }
      : {
          labels: values.labels,
          split: values.split ?? null,
          text: values.text,
          k,
          family: perSurvey[surveys[0]!]!.family,
          designFiles: perSurvey[surveys[0]!]!.designFiles,
          parts: perSurvey[surveys[0]!]!.parts,
          ...(latency.length
            ? { questionLatencyMs: { p50: percentile(latency, 50), p95: percentile(latency, 95), n: latency.length } }
            : {}),
        };
    if (values.json) {
      io.out(JSON.stringify(out, null, 2) + '\n');
      return 0;
    }
    const printParts = (report: Record<string, Record<string, Metrics>>, indent: string) => {
      for (const [part, r] of Object.entries(report)) {
        const n = Object.values(r)[0]?.questions ?? 0;
        io.out(`${indent}${part} (${n} questions)\n`);
        for (const m of modes) {
          const x = r[m]!;
          io.out(
            `${indent}  ${m.padEnd(9)} recall@${k} ${x.recallAtK.toFixed(3)}  MRR ${x.mrr.toFixed(3)}  nDCG@${k} ${x.ndcgAtK.toFixed(3)}   | without design files: recall@${k} ${x.withoutDesignFiles.recallAtK.toFixed(3)} (${x.withoutDesignFiles.questions} q)\n`,
          );
        }
      }
    };
    if (all) {
      io.out(`k = ${k}; all ${surveys.length} surveys (each question counts once)\n`);
      printParts(pooled as Record<string, Record<string, Metrics>>, '');
      for (const [s, e] of Object.entries(perSurvey)) {
        io.out(`${s}: design files ${e.designFiles.join(', ') || 'none'}\n`);
        printParts(e.parts, '  ');
      }
    } else {
      const e = perSurvey[surveys[0]!]!;
      io.out(`k = ${k}; design files (left out in the second column): ${e.designFiles.join(', ') || 'none'}\n`);
      printParts(e.parts, '');
    }
    if (out.questionLatencyMs) {
      io.out(
        `question mode latency: p50 ${out.questionLatencyMs.p50} ms, p95 ${out.questionLatencyMs.p95} ms (${out.questionLatencyMs.n} calls after a warm-up pass, in-process)\n`,
      );
    }
    return 0;
  },
});
