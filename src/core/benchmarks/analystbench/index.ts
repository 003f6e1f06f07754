/**
 * AnalystBench as one benchmark definition: a long analytical report from many sources; scored by a 15-item
 * checklist (1–5 rubric), claim groundedness and figure coverage/quality. Tasks are Loupe manifests
 * (`benchmarks/analystbench/README.md`). Source: AnalystBench paper §3–4, App. C; spec §4; issues 3, 6, 8, 12.
 */
import { ANALYST_ITEM_TYPES } from './item-views.ts';
import { analystEvidenceFiles, analystReviewCriteria, analystReviewSource } from './review.ts';
import { basename, dirname, join } from 'node:path';
import { ensureFolder, writeContainedFile } from '../../util/contained.ts';
import { readUtf8 } from '../../suites/util.ts';
import type { ToolSet } from '../../agent/types.ts';
import { meanSummaries, aggregateBase } from '../../eval/run-score.ts';
import { readRunFile } from '../../store/artefacts.ts';
import { runFolderOf, storedRelPath } from '../../store/run-folder.ts';
import type { OptionSpec } from '../options.ts';
import { CLAIMS_MODES, FACT_SPLIT_MODES } from '../../eval/atomic-claims.ts';
import type { BenchmarkDefinition } from '../types.ts';
import { DEFAULT_ANALYST_OPTIONS, type CaptionEmbedder } from './eval.ts';
import { loadAnalystBench } from './load.ts';
import { scoreAnalystRun } from './score.ts';
import { ANALYST_INPUT_SETTINGS, analystState, createAnalystToolSet, type AnalystInputSetting } from './toolset.ts';
import { ANALYSTBENCH_FAILURE_ANALYSIS, analystItemOutcomes } from './failures.ts';

const num = (x: number | null | undefined, d = 2) => (x === null || x === undefined ? '—' : x.toFixed(d));
const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : (100 * x).toFixed(2));
const PAPER = 'AnalystBench paper §4, App. C; spec §4.3';

/** AnalystBench tool-set options (`--tool-option`). */
export const ANALYST_TOOL_OPTIONS: readonly OptionSpec[] = [
  {
    name: 'input',
    type: 'enum',
    values: ANALYST_INPUT_SETTINGS,
    help: 'what the agent gets: the instruction only, the sources, the table of contents, or a template report (default toc when the task has one, else sources)',
    source: 'AnalystBench paper §3 (input configurations); spec §4.1',
  },
  { name: 'template', type: 'path', help: 'the template report for input=template', source: 'AnalystBench paper §3' },
];

/** AnalystBench scoring options (`--option`). */
export const ANALYST_SCORE_OPTIONS: readonly OptionSpec[] = [
  {
    name: 'checklist_normalisation',
    type: 'enum',
    values: ['mean20', 'rescaled'],
    default: DEFAULT_ANALYST_OPTIONS.checklist_normalisation,
    help: '1–5 scores to percent: 20 × mean (paper tables) or (mean − 1)/4',
    source: PAPER,
  },
  {
    name: 'hallucination_aggregate',
    type: 'enum',
    values: ['micro', 'macro'],
    default: DEFAULT_ANALYST_OPTIONS.hallucination_aggregate,
    help: 'unsupported claims pooled (micro) or averaged per report (macro)',
    source: PAPER,
  },
  {
    name: 'figure_threshold',
    type: 'number',
    min: -1,
    max: 1,
    default: DEFAULT_ANALYST_OPTIONS.figure_threshold,
    help: 'caption similarity at which a generated figure matches a reference figure',
    source: PAPER,
  },
  {
    name: 'figure_assignment',
    type: 'enum',
    values: ['any', 'one-to-one'],
    default: DEFAULT_ANALYST_OPTIONS.figure_assignment,
    help: 'a generated figure may match several reference figures, or one',
    source: PAPER,
  },
  {
    name: 'source_chars',
    type: 'number',
    min: 100,
    max: 10_000_000,
    default: DEFAULT_ANALYST_OPTIONS.source_chars,
    help: 'characters of source text given to the judge per claim',
    source: 'Loupe',
  },
  {
    name: 'concurrency',
    type: 'number',
    min: 1,
    max: 64,
    default: DEFAULT_ANALYST_OPTIONS.concurrency,
    help: 'parallel judge calls',
    source: 'Loupe',
  },
  {
    name: 'claims',
    type: 'enum',
    values: CLAIMS_MODES,
    default: DEFAULT_ANALYST_OPTIONS.claims,
    help: "what the hallucination rate counts: the claims as extracted from the report (the benchmark's unit) or their atomic facts, each checked against the sources and linked to the notebook cells that support it (an expert's split first)",
    source: `${PAPER} (claims as extracted) vs FActScore atomic facts (issue 43)`,
    presets: { official: 'whole', paper: 'whole' },
  },
  {
    name: 'fact_split',
    type: 'enum',
    values: FACT_SPLIT_MODES,
    default: DEFAULT_ANALYST_OPTIONS.fact_split,
    help: 'with claims=atomic: who splits a claim no expert split — the judge (fact-decomposition) or the list-marker rule (no model call)',
    source: 'Loupe (issue 43)',
  },
];

export const analystbench: BenchmarkDefinition = {
  kind: 'analystbench',
  title: 'AnalystBench',
  description: 'a long report from many sources; 15-item checklist, claim groundedness, figure coverage',
  async load(root, opts) {
    return loadAnalystBench(root, opts);
  },
  taskText(block) {
    const v = block.visible;
    const out = [
      v.instruction ?? '',
      '',
      'Write the report as `report.md` in this folder, with any figures beside it.',
      '',
    ];
    if (v.tableOfContents) out.push('## Table of contents to follow', '', v.tableOfContents.trim(), '');
    return out;
  },
  listingFields: () => ({}),
  blockSummary: null,
  docFiles: null,
  replayTools: [],
  itemTypes: ANALYST_ITEM_TYPES,
  downloadSources: {},
  loadOptions: [],
  judgeFree: false,
  clusterUnit: 'task',
  toolOptions: ANALYST_TOOL_OPTIONS,
  scoreOptions: ANALYST_SCORE_OPTIONS,
  toolSet: (ctx) =>
    createAnalystToolSet({
      maxSteps: ctx.maxSteps,
      block: ctx.block,
      input:
        (ctx.options.input as AnalystInputSetting | undefined) ??
        (ctx.block.visible.tableOfContents ? 'toc' : 'sources'),
      ...(ctx.options.template ? { templateReport: readUtf8(ctx.options.template as string) } : {}),
    }) as ToolSet,
  referenceAgent: null,
  kernelImportAllowlist: null,
  // "Instruction only" (spec §4.1): no source tools AND no source files in the workspace, so python cannot open them either.
  workspaceBlock: (block, options) =>
    options.input === 'instruction' ? { ...block, visible: { ...block.visible, data: [], docs: [] } } : block,
  prepareModel: null,
  completeRun: null,
  runWithoutLoop: null,
  score: (ctx) =>
    scoreAnalystRun({
      store: ctx.store,
      run: ctx.run,
      folder: ctx.folder,
      block: ctx.block,
      judge: ctx.judge,
      options: ctx.options,
      log: ctx.log,
      ...(ctx.extras.embedder ? { embedder: ctx.extras.embedder as CaptionEmbedder } : {}),
    }),
  aggregate: async (groups) =>
    groups.map(({ model, scores }) => ({
      ...aggregateBase('analystbench', model, scores),
      metrics: meanSummaries(scores),
    })),
  scoreLine(s) {
    const m = s.summary;
    return `checklist ${num(m.checklistPercent)}%  halluc ${pct(m.hallucinationRate)}%  fig cov ${num(m.figureCoveragePercent)}%  fig quality ${num(m.figureQualityPercent)}${s.pending ? `  (${s.pending} pending)` : ''}`;
  },
  scoreJson: null,
  runLineScore: null,
  checklist: {
    kind: 'criterion',
    entityOf: () => undefined,
    exportNative(_block, items, file) {
      // the checklist file a task manifest names (`checklist`): a JSON list of {id, question, answer, sourceText?}
      writeContainedFile(
        ensureFolder(dirname(file)),
        basename(file),
        JSON.stringify(
          items.map((i) => ({
            id: i.id,
            question: i.question,
            answer: i.answer,
            ...(i.sourceText ? { sourceText: i.sourceText } : {}),
          })),
          null,
          2,
        ) + '\n',
      );
      return file;
    },
    nativeItems: (block) => block.hidden.checklist ?? [],
    withItems: (block, items) => ({ ...block, hidden: { ...block.hidden, checklist: [...items] } }),
    evidenceTables: () => null,
    loadWith: null,
    evidenceQuery: null,
    checkItems: () => [],
  },
  presentation: {
    tableTitle: 'AnalystBench',
    mainMetric: { key: 'checklistPercent', label: 'AnalystBench checklist (%)', percent: false },
    resultsColumns: null,
    tokenEfficiency: null,
    toolUsage: null,
    categoryCis: null,
    itemOutcomes: analystItemOutcomes,
  },
  review: {
    sectionsOf: async (store, _run, folder) => analystReviewSource(store, folder),
    criteria: analystReviewCriteria,
  },
  evidenceFiles: analystEvidenceFiles,
  groundTruth: null,
  failureAnalysis: ANALYSTBENCH_FAILURE_ANALYSIS,
  importNativeOutputs: null,
  async exportResults(store, runs, dir, runsRoot) {
    // <block>/report.md and its figures, copied from the run's workspace (read contained: a planted link, FIFO or hard
    // link is never followed; a recorded workspace outside the runs folder is never read), else from the copies kept in
    // the store (a colleague's run on the team store); written contained below the user's results folder (a figure
    // path of the run's state cannot leave it, issue 36)
    const files: string[] = [];
    ensureFolder(dir);
    for (const r of runs) {
      const run = await store.getRun(r.runId);
      const st = analystState(await store.getExtraState(r.runId));
      if (!run || !st.report) continue;
      const folder = await runFolderOf(store, run, runsRoot);
      const sub =
        runs.filter((x) => x.block.id === r.block.id).length > 1 ? join(r.block.id, `repeat-${r.repeat}`) : r.block.id;
      // Issue 36: paths read from the store never leave the export folder.
      const reportPath = storedRelPath(st.report.path);
      if (!reportPath) continue;
      let report: string;
      try {
        report = await readRunFile(store, folder, reportPath, 'utf8');
      } catch {
        continue;
      }
      files.push(writeContainedFile(dir, join(sub, 'report.md'), report));
      for (const fig of st.report.figures) {
        const f = storedRelPath(fig);
        if (!f) continue;
        let bytes: Buffer;
        try {
          bytes = await readRunFile(store, folder, f, null);
        } catch {
          continue;
        }
        try {
          files.push(writeContainedFile(dir, join(sub, f), bytes));
        } catch {
          continue; // a figure path leaving the folder (a crafted state): not exported
        }
      }
    }
    return files;
  },
};
