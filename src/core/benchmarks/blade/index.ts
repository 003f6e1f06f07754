/**
 * BLADE as two benchmark definitions over the same datasets: `blade` (research question + dataset →
 * conceptual variables, transforms, a statistical model; scored against expert ground-truth decisions) and
 * `blade-mcq` (Task 1: multiple-choice questions on analysis decisions; accuracy).
 * Source: BLADE paper (Gu et al. 2024) §3–4; `blade_bench`; spec §1; issues 3, 6, 8, 12.
 */
import type { SuiteSourceDef } from '../../suites/fetch.ts';
import bladeSource from '../../../../benchmarks/blade/source.json' with { type: 'json' };
import { BLADE_ITEM_TYPES, BLADE_MCQ_ITEM_TYPES } from './item-views.ts';
import { bladeGroundTruthView } from './gt-view.ts';
import type { GtChoice } from './gt-versions.ts';
import { bladeReviewSource } from './review.ts';
import { answerSections } from '../answer-sections.ts';
import { join } from 'node:path';
import { ensureFolder, writeContainedFile } from '../../util/contained.ts';
import type { Block } from '../../suites/types.ts';
import type { ToolSet } from '../../agent/types.ts';

import type { OptionSpec } from '../options.ts';
import type { BenchmarkDefinition } from '../types.ts';
import { loadBlade } from './load.ts';
import { BladeReferenceModel } from './reference.ts';
import { bladeDatasetSubmission, bladeMultiRunResults, bladeState, createBladeToolSet } from './toolset.ts';
import { bladeMcqAccuracy, runBladeMcqBlock, type BladeMcqState } from './mcq.ts';
import { BLADE_MCQ_PRESENTATION, BLADE_PRESENTATION } from './presentation.ts';
import { BLADE_OFFICIAL_AGGREGATE } from './eval/metrics.ts';
import { aggregateBladeGroups, aggregateBladeMcq, scoreBladeMcqRun, scoreBladeStoredRun } from './score.ts';
import { BLADE_FAILURE_ANALYSIS } from './failures.ts';
import { bladeNativeOutputs } from './native-outputs.ts';

/** Step budget of the BLADE reference agent (one step per candidate ground-truth path). */
export const BLADE_REFERENCE_MAX_STEPS = 40;

const num = (x: number | null | undefined, d = 2) => (x === null || x === undefined ? '—' : x.toFixed(d));
const pct = (x: number | null | undefined) => (x === null || x === undefined ? '—' : (100 * x).toFixed(2));

/** BLADE scoring options (`--option`). */
export const BLADE_SCORE_OPTIONS: readonly OptionSpec[] = [
  {
    name: 'model_cvar_alternatives',
    type: 'enum',
    values: ['all-specs', 'representative'],
    default: 'all-specs',
    help: 'which ground-truth model specs count as alternatives when matching model conceptual variables',
    source: 'blade_bench eval (model matching); spec §1.7',
  },
  {
    name: 'model_cvar_check',
    type: 'enum',
    values: ['strict', 'blade'],
    default: 'strict',
    help: 'a model matches only if its variables were compared (strict) or as blade_bench does (blade)',
    source: 'blade_bench eval; spec §1.7',
    presets: { official: 'blade', paper: 'strict' },
  },
  {
    name: 'failed_runs',
    type: 'enum',
    values: ['zero', 'drop'],
    default: 'zero',
    help: 'runs whose scoring failed score 0 and count (zero) or are left out (drop) of the aggregate; runs without a submission count as 0 either way',
    source: 'blade_bench eval/metrics (MultiRunResults); spec §1.7 #12',
    presets: { official: BLADE_OFFICIAL_AGGREGATE.failedRuns, paper: 'zero' },
  },
  {
    name: 'generation_failures',
    type: 'enum',
    values: ['append', 'in-place'],
    default: 'in-place',
    help: 'runs without a submission move after the successful runs of their dataset before coverage@k takes the first k (code: ret + empty) or keep their place',
    source: 'blade_bench eval/datamodel/run.py get_single_run_metrics (issue 21 item 5)',
    presets: { official: BLADE_OFFICIAL_AGGREGATE.generationFailures, paper: 'in-place' },
  },
  {
    name: 'f1_zero',
    type: 'enum',
    values: ['nan', 'zero'],
    default: 'zero',
    help: 'F1 when precision = coverage = 0: NaN as numpy gives (code) or 0',
    source: 'blade_bench eval/metrics/final_metrics.py harmonic_mean (issue 21 item 6)',
    presets: { official: 'nan', paper: 'zero' },
  },
  {
    name: 'unweighted_formula',
    type: 'enum',
    values: ['code', 'paper'],
    default: 'paper',
    help: 'unweighted score with the code\'s "+ 0.5 +" term or the paper\'s 0.5 × transform-value F1',
    source: 'blade_bench eval/metrics/final_metrics.py vs BLADE paper §4 (issue 21 item 7)',
    presets: { official: BLADE_OFFICIAL_AGGREGATE.unweightedFormula, paper: 'paper' },
  },
  {
    name: 'summation',
    type: 'enum',
    values: ['numpy', 'left-to-right'],
    default: 'left-to-right',
    help: "means and sums as BLADE computes them (numpy: pairwise np.mean, the weighted score adding the graph term before the value term, the bootstrap CI by numpy's default quantile) or left to right (sequential); they differ in the last bits",
    source:
      'blade_bench eval/metrics/final_metrics.py, eval/get_model_metrics.py; numpy loops_utils.h.src pairwise_sum (issue 47 item 8)',
    presets: { official: BLADE_OFFICIAL_AGGREGATE.summation, paper: 'left-to-right' },
  },
  {
    name: 'coverage_key',
    type: 'enum',
    values: ['id', 'name'],
    default: 'id',
    help: 'ground-truth decisions are counted by spec id or by name (code) for coverage@k',
    source: 'blade_bench eval/metrics',
    presets: { official: BLADE_OFFICIAL_AGGREGATE.coverageKey, paper: 'id' },
  },
  {
    name: 'model_coverage_denominator',
    type: 'enum',
    values: ['code', 'paper'],
    default: 'code',
    help: 'denominator of model coverage: min(|G|, runs in the window) (code) or min(|G|, k) (paper Eq. 11)',
    source: 'blade_bench eval/metrics vs BLADE paper §4',
    presets: { official: 'code', paper: 'paper' },
  },
  {
    name: 'whole_table_verbs',
    type: 'enum',
    values: ['fixed', 'blade'],
    default: 'fixed',
    help: 'orderby / deduplicate transforms are whole-table nodes like filter (fixed) or expand as blade_bench does (blade)',
    source: 'blade_bench eval/datamodel transform graph; spec §1.7 #15',
    presets: { official: 'blade', paper: 'fixed' },
  },
  {
    name: 'graph_hash_collisions',
    type: 'enum',
    values: ['keep-all', 'keep-last'],
    default: 'keep-all',
    help: 'non-isomorphic transform graphs sharing a WL hash are all kept, or only the last (blade_bench)',
    source: 'blade_bench graph hashing; spec §1.7 #9',
    presets: { official: 'keep-last', paper: 'keep-all' },
  },
  {
    name: 'value_hashing',
    type: 'enum',
    values: ['blade', 'vectorised'],
    default: 'blade',
    help: 'column values before hashing: floats rounded per value with Python round(x, 5) and a date column\'s missing values as "nan" (blade), or Series.round(5) and raw values of dates with missing values (vectorised, Loupe 0.1)',
    source: 'blade_bench nb/df_hash.py DFValueHasher._prep_series (issue 21 item 8)',
    presets: { official: 'blade', paper: 'blade' },
  },
  {
    name: 'unit_outputs',
    type: 'enum',
    values: ['one-per-input-set', 'all'],
    default: 'all',
    help: "a submitted transform unit mapping one input set to several outputs (get_dummies) keeps one output per input set as BLADE's unit format does, the last one (one-per-input-set), or every output (all)",
    source: 'blade_bench data/datamodel/transforms.py TransformDataReturn.column_mapping (issue 21 item 9)',
    presets: { official: 'one-per-input-set', paper: 'all' },
  },
  {
    name: 'k',
    type: 'integer',
    min: 1,
    default: 10,
    help: 'k of coverage@k (runs sampled per dataset)',
    source: 'BLADE paper §4.2',
  },
  {
    name: 'samples',
    type: 'integer',
    min: 1,
    default: 1000,
    help: 'bootstrap samples',
    source: 'blade_bench eval/metrics',
  },
  {
    name: 'seed',
    type: 'number',
    default: 0,
    help: "bootstrap seed (Loupe's generator: the bootstrap interval is sampled differently from numpy's)",
    source: 'Loupe (reproducible bootstrap)',
  },
];

/** BLADE tool-set options (`--tool-option`). */
export const BLADE_TOOL_OPTIONS: readonly OptionSpec[] = [
  {
    name: 'useDataDescription',
    type: 'bool',
    default: true,
    help: 'give the agent the dataset description of info.json',
    source: 'blade_bench prompts (use_data_desc)',
  },
];

function bladeTaskText(block: Block): string[] {
  const v = block.visible;
  const out: string[] = [
    'Plan and carry out a statistical analysis that answers the research question with the dataset in `data.csv`.',
    '',
  ];
  out.push('## Research question', '', v.researchQuestions?.[0] ?? '(none)', '');
  if (v.datasetDescription) out.push('## Dataset', '', v.datasetDescription, '');
  if (v.columns?.length) {
    out.push('| column | type | description |', '|---|---|---|');
    for (const c of v.columns) {
      out.push(`| ${c.name} | ${c.dtype ?? ''} | ${c.description.replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`);
    }
    out.push('');
  }
  out.push(
    '## Deliverables',
    '',
    '1. The conceptual variables: the independent variable(s), the dependent variable and the controls (say which control moderates which variable), each tied to the columns that operationalise it.',
    '2. A Python function `transform(df: pd.DataFrame) -> pd.DataFrame` with every data transformation.',
    '3. A Python function `model(df: pd.DataFrame)` that fits the statistical model on the transformed data.',
    '',
  );
  return out;
}

function mcqTaskText(block: Block): string[] {
  const v = block.visible;
  const out: string[] = [
    'Each question offers alternative analysis decisions for the research question. Pick one option per question and explain why.',
    '',
  ];
  if (v.researchQuestions?.[0]) out.push('## Research question', '', v.researchQuestions[0], '');
  for (const q of block.items) {
    if (q.type !== 'blade-mcq') continue;
    const what =
      q.family === 'cvar'
        ? 'conceptual variable'
        : `transformation${q.conceptualVariable ? ` for "${q.conceptualVariable}"` : ''}`;
    out.push(
      `### ${q.id}`,
      '',
      `Which ${what} is the ${q.mcType === 'select_pos' ? 'MOST' : 'LEAST'} justifiable?`,
      '',
    );
    for (const o of q.options) {
      out.push(q.family === 'cvar' ? `${o.label}. ${o.text}` : `${o.label}.\n\n\`\`\`python\n${o.text}\n\`\`\``, '');
    }
  }
  return out;
}

const dsOf = (b: Block) => b.blade?.dataset ?? b.id;
/** `loupe blocks`' line of a BLADE block (its ground truth's decision counts) and its dataset name as a second name. */
const bladeBlockSummary = (b: Block): { text: string; names: readonly string[] } =>
  b.blade
    ? {
        text: `${b.blade.counts.cvars.total} cvars/${b.blade.counts.transforms} transforms/${b.blade.counts.models} models`,
        names: [b.blade.dataset],
      }
    : { text: '', names: [] };
const writeJson = (dir: string, rel: string, v: unknown, files: string[]) => {
  // the results folder is the user's; what is written below it follows no link (issue 36)
  files.push(writeContainedFile(ensureFolder(dir), rel, JSON.stringify(v, null, 2)));
};

export const blade: BenchmarkDefinition = {
  kind: 'blade',
  title: 'BLADE',
  description:
    'research question + dataset → conceptual variables, transforms and a model, scored against expert ground-truth decisions',
  async load(root, opts) {
    return loadBlade(root, opts, 'blade');
  },
  taskText: bladeTaskText,
  listingFields: (b) => (b.blade ? { decisions: b.blade.counts } : {}),
  blockSummary: bladeBlockSummary,
  docFiles: null,
  itemTypes: BLADE_ITEM_TYPES,
  replayTools: [],
  downloadSources: { blade: bladeSource as SuiteSourceDef },
  loadOptions: [],
  judgeFree: false,
  clusterUnit: 'dataset',
  toolOptions: BLADE_TOOL_OPTIONS,
  scoreOptions: BLADE_SCORE_OPTIONS,
  // The reference agent tries ground-truth paths until one validates: it gets one step per candidate.
  toolSet: (ctx) =>
    createBladeToolSet({
      maxSteps: ctx.maxSteps ?? (ctx.agent === 'reference' ? BLADE_REFERENCE_MAX_STEPS : undefined),
      useDataDescription: ctx.options.useDataDescription !== false,
    }) as ToolSet,
  referenceAgent: (block) => new BladeReferenceModel(block),
  kernelImportAllowlist: null,
  workspaceBlock: null,
  prepareModel: null,
  completeRun: null,
  runWithoutLoop: null,
  score: (ctx) =>
    scoreBladeStoredRun({
      store: ctx.store,
      run: ctx.run,
      block: ctx.block,
      judge: ctx.judge,
      options: ctx.options,
      session: ctx.session,
      log: ctx.log,
      groundTruth: (ctx.extras.groundTruthVersion as GtChoice | undefined) ?? 'latest',
    }),
  aggregate: (groups, ctx) => aggregateBladeGroups(groups, ctx.options),
  scoreLine: (s) => {
    const m = s.summary;
    return `precision cvar ${num(m.cvarPrecision, 3)} model ${num(m.modelPrecision, 3)} transform(value) ${num(m.transformValuePrecision, 3)} transform(graph) ${num(m.transformGraphPrecision, 3)}`;
  },
  scoreJson: null,
  runLineScore: null,
  checklist: null,
  presentation: BLADE_PRESENTATION,
  review: { sectionsOf: bladeReviewSource, criteria: () => null },
  groundTruth: {
    view: bladeGroundTruthView,
    available: (b) => !!b.hidden.annotations,
    summary: (b) =>
      b.blade
        ? `Ground truth: ${b.blade.counts.transforms} transforms, ${b.blade.counts.cvars.total} conceptual variables, ${b.blade.counts.models} models`
        : '',
  },
  evidenceFiles: null,
  failureAnalysis: BLADE_FAILURE_ANALYSIS,
  importNativeOutputs: bladeNativeOutputs(BLADE_SCORE_OPTIONS),
  async exportResults(store, runs, dir) {
    // <dataset>/multirun_analyses.json (BLADE MultiRunResults, repeat order; runs without a valid submission →
    // [LM_GENERATION_FAILED, reason]) and <dataset>/submission.json (DatasetSubmission of the valid ones), spec §1.2.5
    const files: string[] = [];
    const rs = [...runs].sort((a, b) => a.repeat - b.repeat);
    for (const ds of [...new Set(rs.map((r) => dsOf(r.block)))]) {
      const mine = rs.filter((r) => dsOf(r.block) === ds);
      const finals: { final: ReturnType<typeof bladeState>['final']; message: string }[] = [];
      for (const r of mine) {
        finals.push({
          final: bladeState(await store.getExtraState(r.runId)).final,
          message: (await store.getRun(r.runId))?.statusReason ?? 'no valid submission',
        });
      }
      writeJson(dir, join(ds, 'multirun_analyses.json'), bladeMultiRunResults(ds, finals), files);
      writeJson(
        dir,
        join(ds, 'submission.json'),
        bladeDatasetSubmission(
          ds,
          finals.flatMap((f) => (f.final ? [f.final] : [])),
        ),
        files,
      );
    }
    return files;
  },
};

export const bladeMcq: BenchmarkDefinition = {
  kind: 'blade-mcq',
  title: 'BLADE MCQ',
  description: 'multiple-choice questions on analysis decisions of a BLADE dataset; accuracy',
  async load(root, opts) {
    return loadBlade(root, opts, 'blade-mcq');
  },
  taskText: mcqTaskText,
  listingFields: (b) => (b.blade ? { decisions: b.blade.counts } : {}),
  blockSummary: bladeBlockSummary,
  docFiles: null,
  itemTypes: BLADE_MCQ_ITEM_TYPES,
  replayTools: [],
  downloadSources: { 'blade-mcq': bladeSource as SuiteSourceDef },
  loadOptions: [],
  judgeFree: true,
  clusterUnit: 'dataset',
  toolOptions: [],
  scoreOptions: [
    {
      name: 'mcq_parsing',
      type: 'enum',
      values: ['strict', 'blade'],
      default: 'strict',
      help: 'reading the chosen letter: strict (JSON answer, a lone letter or "answer: B") or as blade_bench does (the first of A-D anywhere in the first line)',
      source: 'blade_bench eval/datamodel/run_mcq.py; spec §1.7 #11',
      presets: { official: 'blade', paper: 'strict' },
    },
  ],
  // One call per question, no tools (runWithoutLoop); the tool set only names the prompt.
  toolSet: (ctx) => ({
    id: 'blade-mcq',
    tools: [],
    hostPaths: [],
    systemPrompt: 'blade-mcq: one call per question',
    buildBlockPrompt: (b) => (b as Block).items.map((i) => i.id).join(','),
    defaultMaxSteps: ctx.block.items.length,
  }),
  referenceAgent: null,
  kernelImportAllowlist: null,
  workspaceBlock: null,
  prepareModel: null,
  completeRun: null,
  runWithoutLoop: (o) => runBladeMcqBlock(o),
  score: async (ctx) =>
    await scoreBladeMcqRun(ctx.store, ctx.run, ctx.block, ctx.options.mcq_parsing === 'blade' ? 'blade' : 'strict'),
  aggregate: async (groups) => aggregateBladeMcq(groups),
  scoreLine: (s) => {
    const m = s.summary;
    return `MCQ accuracy ${pct(m.mcqAccuracy)}% (${m.correct}/${m.total}, ${m.unparsed} unparsed)`;
  },
  scoreJson: null,
  runLineScore: null,
  checklist: null,
  presentation: BLADE_MCQ_PRESENTATION,
  review: { sectionsOf: async (store, run) => answerSections(await store.getAnswers(run.id)), criteria: () => null },
  groundTruth: null,
  evidenceFiles: null,
  failureAnalysis: BLADE_FAILURE_ANALYSIS,
  importNativeOutputs: null,
  async exportResults(store, runs, dir) {
    const files: string[] = [];
    const out = [];
    for (const r of [...runs].sort((a, b) => a.repeat - b.repeat)) {
      const answers = ((await store.getExtraState(r.runId)).bladeMcq as BladeMcqState | undefined)?.answers ?? [];
      out.push({
        runId: r.runId,
        dataset: dsOf(r.block),
        repeat: r.repeat,
        ...bladeMcqAccuracy(r.block, answers),
        answers,
      });
    }
    if (out.length) writeJson(dir, 'mcq_results.json', out, files);
    return files;
  },
};
