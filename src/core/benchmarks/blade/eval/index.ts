/**
 * BLADE evaluation (spec §1.4). Typical use:
 *
 * ```ts
 * const py = await startBladePython();
 * const gt = await loadBladeGroundTruth('/data/blade/datasets/hurricane', py);   // once per dataset
 * const run = await scoreBladeRun({ runId, analysis }, gt, { python: py, judge });  // per run
 * const agg = aggregateBlade([{ dataset: gt.dataset, gt: gt.counts, runs: [run, ...] }], { k: 10, seed: 0 });
 * await py.close();
 * ```
 * `analysis` is BLADE's `EntireAnalysis` (`parseBladeAnalysis` validates JSON); `judge` is a
 * {@link SemanticJudge} (`semanticJudgeFrom(projectJudge)`; default identical text only).
 * `agg.bootstrap.weightedF1` is the Table 2 number (fraction; ×100 for %), `agg.options` records
 * every paper-vs-code choice. MCQs: `scoreBladeMcqs(answers)`. Reference analyses:
 * `referencePath(annotations)` / `verifiedReferencePath(gt, py)` (reference-path.ts).
 */
export {
  startBladePython,
  type BladePythonOptions,
  type BladePython,
  type ExecutedUnit,
  type SplitResult,
  type StepState,
  type FrameState,
} from './python.ts';
export {
  loadBladeGroundTruth,
  groundTruthFrom,
  scoreBladeRun,
  parseBladeAnalysis,
  modelCvarsMatch,
  type BladeAnalysis,
  type BladeRunInput,
  type BladeGroundTruth,
  type BladeScoreOptions,
  type BladeRunScore,
  type TransformSplitFallback,
} from './score.ts';
export {
  aggregateBlade,
  bladeMetricBars,
  scoreBladeMcqs,
  parseMcqAnswer,
  decisionWeights,
  zeroRun,
  seededRandom,
  quantile,
  METRIC_TYPES,
  DEFAULT_AGGREGATE_OPTIONS,
  type BladeAggregate,
  type BladeMetricBars,
  type BladeAggregateOptions,
  type BladeDatasetRuns,
  type BladeRunMetrics,
  type BladeGtCounts,
  type BladeMcqScore,
  type McqAnswer,
  type MetricType,
  type RunMetric,
} from './metrics.ts';
export {
  semanticJudgeFrom,
  exactOnlySemanticJudge,
  identicalText,
  extractModel,
  gtCvarString,
  subCvarString,
  type SemanticJudge,
  type SemanticVerdict,
  type SubmittedCvar,
  type JudgeTally,
} from './semantic.ts';
export { referencePath, verifiedReferencePath, renameGroupbyTargets, type ReferencePath } from './reference-path.ts';
export { DEFAULT_DATAFLOW_OPTIONS, type DataflowOptions, type TransformDatasetState, type TSpec } from './dataflow.ts';
export {
  buildGroundTruthTransforms,
  buildSubmissionTransforms,
  matchTransforms,
  gtSpecsFromAnnotations,
  type TransformUnit,
  type TransformMatch,
} from './transforms.ts';
export { llmSplitFallback, parseSplitReply, SPLIT_VERBS, type LlmSplitConfig } from './llm-split.ts';
