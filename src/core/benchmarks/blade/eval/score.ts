/**
 * BLADE scoring entry points: load a dataset's ground truth once, score each run (transforms,
 * conceptual variables, model, model + cvars), then aggregate with `aggregateBlade` (metrics.ts).
 * Source: spec §1.2.5 (submission format), §1.4 (evaluation), §1.7 (bugs fixed, each an option).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoupeInputError, errorMessage } from '../../../util/errors.ts';
import { nullLogger, type Logger } from '../../../util/log.ts';
import { parseBladeAnnotations } from '../annotations.ts';
import type { BladeAnnotations, BladeConceptualVarSpec } from '../items.ts';
import {
  DEFAULT_DATAFLOW_OPTIONS,
  ROOT_SPEC_ID,
  type DataflowOptions,
  type TransformDatasetState,
  type TSpec,
} from './dataflow.ts';
import type { BladeGtCounts, BladeRunMetrics, RunMetric } from './metrics.ts';
import { zeroRun } from './metrics.ts';
import type { BladePython, SplitResult } from './python.ts';
import {
  countingJudge,
  exactOnlySemanticJudge,
  extractModel,
  gtCvarString,
  gtModelCvars,
  matchCvarsByType,
  newTally,
  subCvarString,
  uniqueModelNames,
  type ExtractedModel,
  type JudgeTally,
  type SemanticJudge,
  type SubmittedCvar,
} from './semantic.ts';
import {
  buildGroundTruthTransforms,
  buildSubmissionTransforms,
  gtSpecsFromAnnotations,
  matchTransforms,
  unitsFromExecution,
  type TransformUnit,
} from './transforms.ts';

export type { BladeAnalysis } from '../analysis.ts';
import type { BladeAnalysis } from '../analysis.ts';

/** One run to score: an analysis, or a generation failure (BLADE pads those as zeros). */
export type BladeRunInput = { runId?: string; analysis: BladeAnalysis } | { runId?: string; generationFailed: string };

/**
 * Validates an `EntireAnalysis` JSON value.
 * @param subject names the file / run in errors. @throws LoupeInputError naming the bad field.
 */
export function parseBladeAnalysis(v: unknown, subject: string): BladeAnalysis {
  const o = v as Record<string, unknown> | null;
  if (!o || typeof o !== 'object') throw new LoupeInputError(subject, 'analysis must be a JSON object');
  const cv = o.cvars as Record<string, unknown> | undefined;
  if (!cv || typeof cv !== 'object') throw new LoupeInputError(`${subject}: cvars`, 'missing or not an object');
  const col = (x: unknown, where: string): string[] => {
    if (x === undefined) return [];
    if (!Array.isArray(x) || x.some((c) => typeof c !== 'string')) {
      throw new LoupeInputError(`${subject}: ${where}.columns`, 'must be a list of strings');
    }
    return x as string[];
  };
  const desc = (x: unknown, where: string): string => {
    if (typeof x !== 'string') throw new LoupeInputError(`${subject}: ${where}.description`, 'must be a string');
    return x;
  };
  const ivsRaw = cv.ivs ?? [];
  if (!Array.isArray(ivsRaw)) throw new LoupeInputError(`${subject}: cvars.ivs`, 'must be a list');
  const ctrlRaw = cv.controls ?? [];
  if (!Array.isArray(ctrlRaw)) throw new LoupeInputError(`${subject}: cvars.controls`, 'must be a list');
  const dv = cv.dv as Record<string, unknown> | undefined;
  if (!dv || typeof dv !== 'object') throw new LoupeInputError(`${subject}: cvars.dv`, 'missing or not an object');
  if (typeof o.transform_code !== 'string') throw new LoupeInputError(`${subject}: transform_code`, 'must be a string');
  if (typeof o.m_code !== 'string') throw new LoupeInputError(`${subject}: m_code`, 'must be a string');
  return {
    cvars: {
      ivs: ivsRaw.map((x: Record<string, unknown>, i) => ({
        description: desc(x?.description, `cvars.ivs[${i}]`),
        columns: col(x?.columns, `cvars.ivs[${i}]`),
      })),
      dv: { description: desc(dv.description, 'cvars.dv'), columns: col(dv.columns, 'cvars.dv') },
      controls: ctrlRaw.map((x: Record<string, unknown>, i) => ({
        description: desc(x?.description, `cvars.controls[${i}]`),
        is_moderator: x?.is_moderator === true,
        moderator_on: typeof x?.moderator_on === 'string' ? x.moderator_on : undefined,
        columns: col(x?.columns, `cvars.controls[${i}]`),
      })),
    },
    transform_code: o.transform_code,
    m_code: o.m_code,
  };
}

/** Everything scoring needs about one dataset, computed once (executes every GT path). */
export interface BladeGroundTruth {
  dataset: string;
  dataPath: string;
  researchQuestion: string;
  annotations: BladeAnnotations;
  origCols: string[];
  specs: Map<string, TSpec>;
  transforms: TransformDatasetState;
  counts: BladeGtCounts;
  /** Annotation rows that could not be used and GT specs whose code failed. */
  problems: string[];
  dataflow: DataflowOptions;
}

/**
 * Loads and executes a dataset's ground truth (spec §1.4.2).
 * @param dir a BLADE dataset folder with `data.csv`, `annotations.csv`, `info.json`.
 * @throws LoupeInputError when a file is missing (e.g. soccer's data.csv is not in the mirror).
 */
export async function loadBladeGroundTruth(
  dir: string,
  py: BladePython,
  opts: { dataflow?: Partial<DataflowOptions>; log?: Logger } = {},
): Promise<BladeGroundTruth> {
  const dataPath = join(dir, 'data.csv');
  const annPath = join(dir, 'annotations.csv');
  for (const f of [dataPath, annPath]) {
    if (!existsSync(f)) {
      throw new LoupeInputError(f, 'missing: BLADE scoring needs the dataset folder with data.csv and annotations.csv');
    }
  }
  const { annotations, problems } = parseBladeAnnotations(annPath);
  let researchQuestion = '';
  const infoPath = join(dir, 'info.json');
  if (existsSync(infoPath)) {
    try {
      const info = JSON.parse(readFileSync(infoPath, 'utf8')) as { research_questions?: string[] };
      researchQuestion = info.research_questions?.[0] ?? '';
    } catch (e) {
      throw new LoupeInputError(infoPath, `not valid JSON: ${errorMessage(e)}`);
    }
  }
  const name = dir.replace(/\/+$/, '').split('/').pop() ?? dir;
  return groundTruthFrom({ dataset: name, dataPath, annotations, researchQuestion, problems }, py, opts);
}

/** Same as {@link loadBladeGroundTruth} from already parsed annotations (e.g. the suites loader's hidden resources). */
export async function groundTruthFrom(
  src: {
    dataset: string;
    dataPath: string;
    annotations: BladeAnnotations;
    researchQuestion?: string;
    problems?: string[];
  },
  py: BladePython,
  opts: { dataflow?: Partial<DataflowOptions>; log?: Logger } = {},
): Promise<BladeGroundTruth> {
  const log = opts.log ?? nullLogger;
  const dataflow = { ...DEFAULT_DATAFLOW_OPTIONS, ...opts.dataflow };
  if (!existsSync(src.dataPath)) {
    throw new LoupeInputError(src.dataPath, 'missing: BLADE scoring executes code on data.csv');
  }
  const origCols = (await py.columns(src.dataPath)).columns;
  const specs = gtSpecsFromAnnotations(src.annotations);
  const t0 = Date.now();
  const transforms = await buildGroundTruthTransforms(py, src.dataPath, specs, origCols, dataflow);
  log.debug(
    `blade ${src.dataset}: GT ${transforms.paths.length} paths, ${transforms.expandedIdToSpec.size} expanded specs in ${Date.now() - t0} ms`,
  );
  const problems = [
    ...(src.problems ?? []),
    ...transforms.failures.map((f) => `transform spec ${f.specId}: ${f.message}`),
  ];
  return {
    dataset: src.dataset,
    dataPath: src.dataPath,
    researchQuestion: src.researchQuestion ?? '',
    annotations: src.annotations,
    origCols,
    specs,
    transforms,
    counts: {
      numCvars: src.annotations.conceptualVars.length,
      numMspecs: src.annotations.models.length,
      numMspecsUnique: uniqueModelNames(src.annotations.models).length,
      numTspecs: transforms.expandedIdToSpec.size - 1,
    },
    problems,
    dataflow,
  };
}

/** Splits code the statement executor could not attribute (LLM fallback, e.g. through the judge endpoint). */
export type TransformSplitFallback = (
  transformCode: string,
  reason: string,
) => Promise<{ code: string; verb: string; mapping: [string[], string][]; groupbyCols: string[] }[]>;

/** Options of {@link scoreBladeRun}; defaults fix BLADE's bugs (spec §1.7). */
export interface BladeScoreOptions {
  python: BladePython;
  /** Semantic judge for cvars and models (default: identical text only). */
  judge?: SemanticJudge;
  /** LLM fallback for statements execution cannot split. */
  splitFallback?: TransformSplitFallback;
  /** §1.7 #6 / §5.3 #4: compare cvars of `all-specs` sharing a matched model name (paper) or only the `representative` (code). */
  modelCvarAlternatives?: 'all-specs' | 'representative';
  /** §1.7 #7: `strict` (a model with no cvars, or a GT type missing on the submission side, fails) or `blade` (skipped / passes vacuously). */
  modelCvarCheck?: 'strict' | 'blade';
  log?: Logger;
}

/** Per-run score: the metrics aggregation needs plus every detail behind them. */
export interface BladeRunScore extends BladeRunMetrics {
  dataset: string;
  transform: {
    status: SplitResult['status'] | 'not-run';
    error?: string;
    /** `execution`: statement-level; `llm-fallback` when the fallback was used. */
    conversion: 'execution' | 'execution+llm-fallback' | 'execution-with-unsplit-statements' | 'none';
    units: {
      verb: string;
      mapping: [string[], string][];
      groupbyCols: string[];
      source: TransformUnit['source'];
      code: string;
      note?: string;
    }[];
    submissionExpandedSpecs: number;
    sharedValueHashes: number;
    sharedGraphHashes: number;
  };
  cvarPairs: { gt: string; sub: string }[];
  model: { extracted: ExtractedModel; matchedGtNames: string[]; modelCvarMatchedSpec?: string };
  judges: JudgeTally;
  options: {
    modelCvarAlternatives: 'all-specs' | 'representative';
    modelCvarCheck: 'strict' | 'blade';
    dataflow: DataflowOptions;
    cvarMatching: 'pairwise';
    modelExtraction: 'static';
  };
}

const metric = (gtItems: string[], matched: number, denominator: number, gtNames?: string[]): RunMetric => ({
  gtItems,
  gtNames,
  matched,
  denominator,
  precision: matched / Math.max(denominator, 1),
});

function submittedCvars(a: BladeAnalysis): SubmittedCvar[] {
  return [
    ...a.cvars.ivs.map((v) => ({ type: 'IV' as const, description: v.description, columns: v.columns })),
    { type: 'DV' as const, description: a.cvars.dv.description, columns: a.cvars.dv.columns },
    ...a.cvars.controls.map((v) => ({
      type: v.is_moderator ? ('Moderator' as const) : ('Control' as const),
      description: v.description,
      columns: v.columns,
      moderatorOn: v.moderator_on,
    })),
  ];
}

/** Raw columns each transformed column descends from, read from the submission's column graph. */
function columnOrigins(sub: TransformDatasetState | undefined): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const p = sub?.paths[sub.paths.length - 1];
  if (!p) return out;
  const g = p.colGraph;
  for (const nid of g.topologicalSort()) {
    const a = g.nodes.get(nid)!;
    const col = a.col;
    if (!col) continue;
    const anc = g.ancestors(nid);
    const origins = new Set<string>();
    for (const x of [...anc, nid]) {
      if (g.nodes.get(x)!.expanded_spec_id === ROOT_SPEC_ID) origins.add(g.nodes.get(x)!.col!);
    }
    out.set(col, origins); // later pointers of the same column overwrite earlier ones
  }
  return out;
}

/**
 * Scores one BLADE run against a dataset's ground truth (spec §1.4).
 * Transforms: the code is executed statement by statement into units (fallback for unsplittable
 * code when `splitFallback` is given); a failed transform keeps cvars and model scored (BLADE).
 * @returns a {@link BladeRunScore}; status `generation_failed` for generation failures.
 */
export async function scoreBladeRun(
  run: BladeRunInput,
  gt: BladeGroundTruth,
  opts: BladeScoreOptions,
): Promise<BladeRunScore> {
  const tally = newTally();
  const judge = countingJudge(opts.judge ?? exactOnlySemanticJudge, tally);
  const modelCvarAlternatives = opts.modelCvarAlternatives ?? 'all-specs';
  const modelCvarCheck = opts.modelCvarCheck ?? 'strict';
  const base = {
    dataset: gt.dataset,
    options: {
      modelCvarAlternatives,
      modelCvarCheck,
      dataflow: gt.dataflow,
      cvarMatching: 'pairwise' as const,
      modelExtraction: 'static' as const,
    },
  };
  if ('generationFailed' in run) {
    return {
      ...zeroRun('generation_failed', run.runId),
      ...base,
      transform: {
        status: 'not-run',
        error: run.generationFailed,
        conversion: 'none',
        units: [],
        submissionExpandedSpecs: 0,
        sharedValueHashes: 0,
        sharedGraphHashes: 0,
      },
      cvarPairs: [],
      model: { extracted: { name: '', columns: [], how: 'unknown' }, matchedGtNames: [] },
      judges: tally,
    };
  }
  const a = run.analysis;
  const context = gt.researchQuestion || undefined;

  // ---- transforms (spec §1.4.1, §1.4.3–1.4.4)
  let split: SplitResult;
  try {
    split = await opts.python.split(gt.dataPath, a.transform_code);
  } catch (e) {
    // a hang (timeout) or a crash of the interpreter counts as a failed execution of the submission
    split = { status: 'execution_failed', error: errorMessage(e), units: [] };
  }
  let units: TransformUnit[] = split.status === 'ok' ? unitsFromExecution(split.units) : [];
  let conversion: BladeRunScore['transform']['conversion'] = split.status === 'ok' ? 'execution' : 'none';
  const unsplit = units.filter((u) => u.source === 'execution-unsplit');
  if (unsplit.length && opts.splitFallback) {
    try {
      const fb = await opts.splitFallback(a.transform_code, unsplit.map((u) => u.note).join('; '));
      const states = await opts.python.runUnits(gt.dataPath, fb);
      units = fb.map((u, i) => {
        const s = states[i];
        const state =
          s && s.kind === 'frame' ? { columns: s.columns, hashes: s.hashes, catHashes: s.catHashes } : undefined;
        return { ...u, state, source: 'llm-fallback' as const };
      });
      conversion = 'execution+llm-fallback';
    } catch (e) {
      opts.log?.warn(`blade ${gt.dataset}: split fallback failed: ${errorMessage(e)}`);
      conversion = 'execution-with-unsplit-statements';
    }
  } else if (unsplit.length) conversion = 'execution-with-unsplit-statements';
  let subState: TransformDatasetState | undefined;
  let tv = metric([], 0, 0, []);
  let tg = metric([], 0, 0, []);
  let shared = { v: 0, g: 0 };
  if (units.length) {
    subState = await buildSubmissionTransforms(units, gt.origCols, gt.dataflow);
    const m = matchTransforms(gt.transforms, subState);
    const n2 = subState.expandedIdToSpec.size - 1;
    const ids1 = (s: Set<string>) => [...s].filter((x) => x !== ROOT_SPEC_ID);
    const names = (ids: string[]) => ids.map((id) => gt.transforms.expandedIdToSpec.get(id)?.name ?? id);
    const v1 = ids1(m.vspecs1);
    const g1 = ids1(m.gspecs1);
    tv = metric(v1, ids1(m.vspecs2).length, n2, names(v1));
    tg = metric(g1, ids1(m.gspecs2).length, n2, names(g1));
    shared = { v: m.valueHashes.length, g: m.graphHashes.length };
  }

  // ---- conceptual variables (spec §1.4.5)
  const gtCvars = gt.annotations.conceptualVars;
  const subCvars = submittedCvars(a);
  const cm = await matchCvarsByType(
    gtCvars,
    subCvars,
    (g) => g.effectiveType,
    (s) => s.type,
    gtCvarString,
    subCvarString,
    judge,
    context,
  );
  const matchedGt = [...new Set(cm.pairs.map((p) => gtCvarString(gtCvars[p.gt]!)))];
  const matchedSub = new Set(cm.pairs.map((p) => subCvarString(subCvars[p.sub]!)));
  const cvar = metric(matchedGt, matchedSub.size, cm.sent);

  // ---- model (spec §1.4.6)
  const finalCols = [...new Set([...(split.finalColumns ?? []), ...gt.origCols])];
  const extracted = extractModel(a.m_code, finalCols);
  const groups = uniqueModelNames(gt.annotations.models);
  const nameVerdicts = await Promise.all(
    groups.map((g) => judge.same('model', g.name, extracted.name.toLowerCase(), context)),
  );
  const matchedGroups = groups.filter((_, i) => nameVerdicts[i]!.match === true);
  const model = metric(
    matchedGroups.length ? [matchedGroups[0]!.specs[0]!.specification] : [],
    matchedGroups.length ? 1 : 0,
    1,
  );

  // ---- model + its conceptual variables (spec §1.4.6 steps 4–5)
  const origins = columnOrigins(subState);
  const modelCols = new Set(extracted.columns);
  const subModelCvars = subCvars.filter((c) => {
    if (c.columns.some((x) => modelCols.has(x))) return true;
    for (const mc of modelCols) {
      const o = origins.get(mc);
      if (o && c.columns.length && c.columns.every((x) => o.has(x))) return true;
    }
    return c.columns.some((x) => {
      const o = origins.get(x);
      return o !== undefined && o.size === 1 && modelCols.has([...o][0]!);
    });
  });
  const cvType = (t: string) => (t === 'Moderator' ? 'Control' : t);
  let modelCvarItem: string | undefined;
  let modelCvarSpec: string | undefined;
  outer: for (const g of matchedGroups) {
    const candidates = modelCvarAlternatives === 'all-specs' ? g.specs : g.specs.slice(0, 1);
    for (const spec of candidates) {
      const mc = gtModelCvars(spec, gtCvars);
      if (!(await modelCvarsMatch(mc, subModelCvars, judge, context, modelCvarCheck, cvType))) continue;
      const cvStrings = mc.map(gtCvarString).sort();
      const key = modelCvarAlternatives === 'all-specs' ? spec.specId : spec.specName;
      modelCvarItem = `${key} | ${JSON.stringify(cvStrings)}`;
      modelCvarSpec = spec.specId;
      break outer;
    }
  }
  const modelCvar = metric(modelCvarItem ? [modelCvarItem] : [], modelCvarItem ? 1 : 0, 1);

  return {
    runId: run.runId,
    status: 'ok',
    ...base,
    metrics: { cvar, model, modelCvar, transformValue: tv, transformGraph: tg },
    transform: {
      status: split.status,
      error: split.error,
      conversion,
      units: units.map((u) => ({
        verb: u.verb,
        mapping: u.mapping,
        groupbyCols: u.groupbyCols,
        source: u.source,
        code: u.code,
        note: u.note,
      })),
      submissionExpandedSpecs: subState ? subState.expandedIdToSpec.size - 1 : 0,
      sharedValueHashes: shared.v,
      sharedGraphHashes: shared.g,
    },
    cvarPairs: cm.pairs.map((p) => ({ gt: gtCvarString(gtCvars[p.gt]!), sub: subCvarString(subCvars[p.sub]!) })),
    model: { extracted, matchedGtNames: matchedGroups.map((g) => g.name), modelCvarMatchedSpec: modelCvarSpec },
    judges: tally,
  };
}

/**
 * BLADE `MatchModel.is_cvar_all_matched` per variable type (IV / DV / Control): every GT and every
 * submission variable of each compared type takes part in a matched pair. `blade` skips GT types
 * the submission lacks and passes when nothing was compared (§1.7 #7); `strict` fails both.
 */
export async function modelCvarsMatch(
  gtCvars: BladeConceptualVarSpec[],
  subCvars: SubmittedCvar[],
  judge: SemanticJudge,
  context: string | undefined,
  check: 'strict' | 'blade',
  cvType: (t: string) => string = (t) => (t === 'Moderator' ? 'Control' : t),
): Promise<boolean> {
  if (check === 'strict' && (!subCvars.length || !gtCvars.length)) return false;
  const types = [...new Set(gtCvars.map((c) => c.variableType))];
  let compared = 0;
  for (const t of types) {
    const g = gtCvars.filter((c) => c.variableType === t);
    const s = subCvars.filter((c) => cvType(c.type) === t);
    if (!s.length) {
      if (check === 'strict') return false;
      continue;
    }
    compared++;
    const r = await matchCvarsByType(
      g,
      s,
      () => t,
      () => t,
      gtCvarString,
      subCvarString,
      judge,
      context,
    );
    const gi = new Set(r.pairs.map((p) => p.gt));
    const si = new Set(r.pairs.map((p) => p.sub));
    if (gi.size !== g.length || si.size !== s.length) return false;
  }
  return check === 'blade' || compared > 0;
}
