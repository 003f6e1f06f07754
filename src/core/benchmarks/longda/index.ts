/**
 * LongDA as one benchmark definition: numeric questions about US government surveys, answered from long
 * codebooks and microdata; blocks per publication; scored by tolerance match (LongTA `metric.py`).
 * Source: LongDA paper; LongTA repository (`main.py`, `metric.py`, `tools.py`); issues 3, 5, 8, 12.
 */
import type { SuiteSourceDef } from '../../suites/fetch.ts';
import longdaSource from '../../../../benchmarks/longda/source.json' with { type: 'json' };
import { LONGDA_ITEM_TYPES } from './item-views.ts';
import { longdaReviewSource } from './review.ts';
import { join } from 'node:path';
import { docsFolderFiles } from '../../docs/roots.ts';
import { LoupeInputError } from '../../util/errors.ts';
import { LONGTA_IMPORT_ALLOWLIST } from '../../kernel/allowlists.ts';
import { exportLongdaResults } from './results-export.ts';
import type { Block } from '../../suites/types.ts';
import { defaultReferenceDir } from '../paths.ts';
import type { OptionSpec } from '../options.ts';
import type { BenchmarkDefinition, ToolSetContext } from '../types.ts';
import { DEFAULT_LONGDA_OPTIONS } from './eval.ts';
import { loadLongda } from './load.ts';
import { ReferenceModel, findReferenceScript } from './reference.ts';
import {
  aggregateLongda,
  longdaInterventionsUntilWithinTolerance,
  longdaJsonScore,
  scoreLongdaRun,
  type LongdaRunDetail,
} from './score.ts';
import { createLongdaToolSet, type LongdaDocs } from './toolset.ts';
import { docIndexLease } from './docs.ts';
import { LONGDA_PRESENTATION } from './presentation.ts';
import { LONGDA_FAILURE_ANALYSIS } from './failures.ts';
import { longdaNativeOutputs } from './native-outputs.ts';

const LONGTA = 'LongTA metric.py (MATCH_TOLERANCE, is_match)';

/** LongDA scoring options (`--option`). */
export const LONGDA_SCORE_OPTIONS: readonly OptionSpec[] = [
  {
    name: 'tolerance',
    type: 'number',
    min: 0,
    default: DEFAULT_LONGDA_OPTIONS.tolerance,
    help: 'relative tolerance ε of τ = max(ε·|truth|, floor)',
    source: LONGTA,
  },
  {
    name: 'tolerance_floor',
    type: 'number',
    min: 0,
    default: DEFAULT_LONGDA_OPTIONS.tolerance_floor,
    help: "absolute floor of τ in the answer's own units",
    source: `${LONGTA}; spec §2.7 item 3`,
  },
  {
    name: 'list_scoring',
    type: 'enum',
    values: ['partial', 'strict'],
    default: DEFAULT_LONGDA_OPTIONS.list_scoring,
    help: 'lists: mean of element hits (code, published numbers) or all elements (paper)',
    source: 'LongTA metric.py vs LongDA paper §4',
    presets: { official: 'partial', paper: 'strict' },
  },
  {
    name: 'coverage',
    type: 'enum',
    values: ['comparable', 'structural'],
    default: DEFAULT_LONGDA_OPTIONS.coverage,
    help: 'headline coverage: answers the code can compare, or answers of the right shape (paper)',
    source: 'LongTA metric.py vs LongDA paper §4',
    presets: { official: 'comparable', paper: 'structural' },
  },
  {
    name: 'infinite_mae',
    type: 'enum',
    values: ['inf', 'exclude'],
    default: DEFAULT_LONGDA_OPTIONS.infinite_mae,
    help: 'an infinite answer makes MAE/MPE infinite (code) or its row leaves the MAE/MPE means',
    source: 'LongDA metric.py generate_evaluation_summary (issue 21 item 4)',
    presets: { official: 'inf', paper: 'exclude' },
  },
  {
    name: 'literals',
    type: 'enum',
    values: ['cpython', 'readable'],
    default: DEFAULT_LONGDA_OPTIONS.literals,
    help: 'Python literals in answers: as ast.literal_eval builds them (sets deduplicated in CPython order, complex = no answer, an integer past the double range aborts the official run: Loupe leaves that row out and names it) or readable (source order, 5j reads 5)',
    source: 'LongDA utils.py normalize_answer_value (issue 47 items 1, 2, 7)',
    presets: { official: 'cpython', paper: 'readable' },
  },
  {
    name: 'summation',
    type: 'enum',
    values: ['numpy', 'left-to-right'],
    default: DEFAULT_LONGDA_OPTIONS.summation,
    help: 'means and sums as numpy computes them (pairwise over float64 arrays, left to right over object columns; NaN errors skipped) or left to right',
    source: 'LongDA metric.py np.mean / Series.sum / Series.mean (issue 47 item 4)',
    presets: { official: 'numpy', paper: 'left-to-right' },
  },
  {
    name: 'by_source',
    type: 'enum',
    values: ['source', 'survey-source'],
    default: DEFAULT_LONGDA_OPTIONS.by_source,
    help: 'per-source figures grouped by the source column only (code) or by survey and source (one publication)',
    source: 'LongDA metric.py generate_evaluation_summary groupby("source") (issue 47 item 6)',
    presets: { official: 'source', paper: 'survey-source' },
  },
  {
    name: 'answers_csv',
    type: 'enum',
    values: ['pandas', 'text'],
    default: DEFAULT_LONGDA_OPTIONS.answers_csv,
    help: "a LongTA results file read as pandas.read_csv reads it (NA tokens, numeric columns as float64 with pandas' float parser, inf words) or as text",
    source: 'LongDA evaluate_results.py pd.read_csv, pandas 1.5.3 (issue 47 items 3, 5)',
    presets: { official: 'pandas', paper: 'text' },
  },
];

const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : (100 * x).toFixed(2));

export const longda: BenchmarkDefinition = {
  kind: 'longda',
  title: 'LongDA',
  description: 'numeric questions about US government surveys from long codebooks and microdata; tolerance match',
  async load(root, opts) {
    return loadLongda(root, opts);
  },
  taskText(block) {
    const out = [
      'Answer every question below from the survey data files and their documentation in this folder.',
      'Read the documentation first: weights, variable codes, universes and exclusions matter.',
      'Give each answer as a number (or a list of numbers in the order of the labels shown), in the units asked for.',
      'Working by hand? Record the answers in `answers.json` as `{"q1": <number>, "q2": [<number>, <number>], ...}`.',
      '',
      '## Questions',
      '',
    ];
    for (const q of block.items) {
      if (q.type !== 'longda-query') continue;
      const shape =
        q.answerStructure.kind === 'single_number'
          ? 'one number'
          : `a list of ${q.answerStructure.length} numbers: [${q.answerStructure.labels.join(', ')}]`;
      out.push(`### ${q.id}`, '', q.question, '', `- Answer: ${shape}`);
      if (q.additionalInfo) out.push(`- Notes: ${q.additionalInfo}`);
      out.push('');
    }
    return out;
  },
  listingFields: (b) => (b.longda ? { survey: b.longda.survey, source: b.longda.source } : {}),
  blockSummary: null,
  docFiles: (root, survey) => docsFolderFiles(root, survey),
  replayTools: [],
  itemTypes: LONGDA_ITEM_TYPES,
  downloadSources: { longda: longdaSource as SuiteSourceDef },
  loadOptions: [
    {
      name: 'publications',
      key: 'publications',
      type: 'path',
      value: 'DIR',
      help: 'the publications folder (default <root>/../publications when it exists)',
    },
  ],
  judgeFree: true,
  clusterUnit: 'publication',
  toolOptions: [
    {
      name: 'findVariables',
      type: 'bool',
      default: false,
      help: "add Loupe's find_variables tool (variables and files a question needs, from the codebooks' variable catalog); off keeps LongTA's tools exactly",
      source: 'Loupe (issue 25); not part of LongTA',
    },
    {
      name: 'findVariablesDecompose',
      type: 'enum',
      values: ['off', 'run-model'],
      default: 'off',
      help: "find_variables retrieval: off = from the question's own words; run-model = the run's own model first breaks the question into concepts (one extra model call per find_variables call); needs findVariables=true and a run with a model",
      source: 'Loupe (issue 25): optional LLM-assisted question decomposition; not part of LongTA',
    },
  ],
  scoreOptions: LONGDA_SCORE_OPTIONS,
  toolSet(ctx) {
    const block = ctx.block;
    const first = block.visible.docs[0];
    const docs =
      (ctx.docs as (() => Promise<LongdaDocs>) | undefined) ??
      (() => Promise.reject(new Error('this block has no documentation files')));
    // the block's documentation build starts when the run starts and each doc tool waits only for what it reads (issue 23)
    const docIndex =
      !ctx.docs && first
        ? () =>
            docIndexLease(
              first.path.slice(0, first.path.length - first.rel.length),
              block.visible.docs.map((d) => d.rel),
              ctx.docsCacheDir,
            )
        : undefined;
    let decompose: ToolSetContext['complete'];
    if (ctx.options.findVariablesDecompose === 'run-model') {
      const subject = 'tool option findVariablesDecompose';
      if (ctx.options.findVariables !== true) {
        throw new LoupeInputError(
          subject,
          "'run-model' decomposes the questions of the find_variables tool: turn the tool on with findVariables=true",
        );
      }
      if (!ctx.complete) {
        throw new LoupeInputError(
          subject,
          "'run-model' asks the run's own model, and this run has none (the reference agent and MCP clients have no model of Loupe's): use findVariablesDecompose=off",
        );
      }
      decompose = ctx.complete;
    }
    return createLongdaToolSet(block, {
      docs,
      ...(docIndex ? { docIndex } : {}),
      maxSteps: ctx.maxSteps,
      findVariables: ctx.options.findVariables === true,
      ...(decompose ? { decompose } : {}),
    });
  },
  referenceAgent: (block: Block, o) =>
    new ReferenceModel(block, findReferenceScript(o.referenceDir ?? defaultReferenceDir('longda'), block)),
  kernelImportAllowlist: LONGTA_IMPORT_ALLOWLIST,
  workspaceBlock: null,
  prepareModel: null,
  completeRun: null,
  runWithoutLoop: null,
  async score(ctx) {
    return await scoreLongdaRun(ctx.store, ctx.run, ctx.block, ctx.options);
  },
  async aggregate(groups, ctx) {
    return aggregateLongda(groups, ctx.options);
  },
  scoreLine(s) {
    const m = s.summary;
    return `match ${pct(m.match)}%  coverage ${pct(m.coverage)}% (structural ${pct(m.coverageStructural)}%)  ${m.answered}/${m.queries} answered  tokens ${m.inputTokens == null ? 'unknown' : `${m.inputTokens}+${m.outputTokens}`}  steps ${m.steps}`;
  },
  scoreJson(s) {
    const d = s.detail as LongdaRunDetail;
    return {
      coverage: d.score.coverage,
      match: d.score.match,
      queries: d.score.rows.map((r) => ({
        qId: r.qId,
        answerStructure: r.answerStructure,
        rawAnswer: r.rawAnswer,
        given: r.given,
        expected: r.expected,
        coverage: r.coverage,
        coverageComparable: r.coverageComparable,
        coverageStructural: r.coverageStructural,
        match: r.match,
        matchPartial: r.matchPartial,
        matchStrict: r.matchStrict,
        absErr: r.absErr ?? null,
        hits: r.hits ?? null,
      })),
      unknownQIds: d.score.unknownQIds,
      efficiency: d.efficiency,
      heatmap: d.heatmap,
    };
  },
  runLineScore: (store, runId, block) => longdaJsonScore(store, runId, block),
  solvedAfterInterventions: {
    metric: 'interventionsUntilWithinTolerance',
    label: 'interventions until every answer is within tolerance',
    count: (ctx, interventions) =>
      longdaInterventionsUntilWithinTolerance(ctx.store, ctx.run, ctx.block, ctx.options, interventions),
  },
  checklist: null,
  presentation: LONGDA_PRESENTATION,
  review: { sectionsOf: longdaReviewSource, criteria: () => null },
  groundTruth: null,
  evidenceFiles: null,
  failureAnalysis: LONGDA_FAILURE_ANALYSIS,
  importNativeOutputs: longdaNativeOutputs(LONGDA_SCORE_OPTIONS),
  async exportResults(store, runs, dir) {
    // LongTA's results folder per repeat: answers_progress.csv, run_summary.json, codes, notes, tool usage
    const files: string[] = [];
    const repeats = [...new Set(runs.map((d) => d.repeat))].sort((a, b) => a - b);
    for (const r of repeats) {
      const out = repeats.length > 1 ? join(dir, `repeat-${r}`) : dir;
      await exportLongdaResults(
        store,
        runs.filter((d) => d.repeat === r),
        out,
      );
      files.push(join(out, 'answers_progress.csv'));
    }
    return files;
  },
};
