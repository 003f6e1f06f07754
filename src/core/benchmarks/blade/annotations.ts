/**
 * BLADE ground truth: parses `annotations.csv` (every spec type) and `mcq_dataset.json`.
 * Source: spec §1.2.3–1.2.4; BLADE `blade_bench/data/annotation.py::get_annotation_data_from_df`,
 * `data/datamodel/specs.py`, `data/datamodel/mcq.py`.
 */
import type {
  BladeAnnotations,
  BladeBranch,
  BladeConceptualVarSpec,
  BladeCvarReview,
  BladeDecisionCounts,
  BladeMcq,
  BladeMcqSet,
  BladeModelSpec,
  BladeTransformReview,
  BladeTransformSpec,
  BladeVariableType,
  ReviewLabel,
} from './items.ts';
import { parseCsvFile, readUtf8 } from '../../suites/util.ts';
import { LoupeInputError } from '../../util/errors.ts';

/** Prefix BLADE puts on original columns in cvar/model specs. */
export const ORIG_COL_PREFIX = '🟨 ';
/** Prefix BLADE puts on derived columns (`DERIVED_COL_PREFIX`). */
export const DERIVED_COL_PREFIX = '🟩 ';
export const ROOT_SPEC_ID = 'ROOT_SPEC_ID';

const JSON_COLUMNS = [
  'dependency_graph',
  'conceptual_spec_json',
  'transform_spec_json',
  'model_spec_json',
  'tisane_spec_json',
  'annotate_cvar_spec_json',
  'annotate_transform_spec_json',
] as const;

type Obj = Record<string, unknown>;

const str = (v: unknown): string => (typeof v === 'string' ? v : v === null || v === undefined ? '' : String(v));
const strList = (v: unknown): string[] =>
  Array.isArray(v) ? v.map(str) : typeof v === 'string' && v !== '' ? [v] : [];
const bool = (v: unknown): boolean => v === true || v === 'true' || v === 'True';
const label = (v: unknown): ReviewLabel => {
  const s = str(v).trim();
  return s === 'Yes' || s === 'No' || s === 'Unsure' ? s : '';
};
/** Removes the 🟨 / 🟩 prefix BLADE puts on column names. */
export function stripColumnPrefix(c: string): string {
  return c.replace(/^(🟨|🟩)\s*/u, '');
}

/**
 * Parses one dataset's `annotations.csv`.
 * @param file absolute path (with `text`: the name rows are reported under); `text` the CSV itself (a stored
 *   ground-truth version) instead of reading `file`.
 * @returns parsed specs plus problems (`file:LINE column C: ...`) for rows that could not be used;
 *   a bad row never stops the others.
 * @throws LoupeInputError when the file is unreadable, not UTF-8, empty, or has no `spec_id` column.
 */
export function parseBladeAnnotations(
  file: string,
  text?: string,
): { annotations: BladeAnnotations; problems: string[] } {
  const { header, rows, problems } = parseCsvFile(file, {
    requiredColumns: ['spec_id'],
    ...(text !== undefined ? { text } : {}),
  });
  if (!JSON_COLUMNS.some((c) => header.includes(c))) {
    throw new LoupeInputError(`${file}:1`, `no BLADE spec columns (expected some of ${JSON_COLUMNS.join(', ')})`);
  }
  const out: BladeAnnotations = {
    file,
    transforms: [],
    conceptualVars: [],
    models: [],
    transformReviews: [],
    cvarReviews: [],
  };
  for (const r of rows) {
    const specId = (r.cells.spec_id ?? '').trim();
    for (const col of JSON_COLUMNS) {
      const cell = (r.cells[col] ?? '').trim();
      if (cell === '') continue;
      const at = `${file}:${r.line} column ${col}`;
      let j: unknown;
      try {
        j = JSON.parse(cell);
      } catch (e) {
        problems.push(`${at}: invalid JSON (${(e as Error).message}); spec ${specId || '?'} skipped`);
        continue;
      }
      if (col === 'dependency_graph') {
        out.dependencyGraph = j;
        continue;
      }
      if (typeof j !== 'object' || j === null || Array.isArray(j)) {
        problems.push(`${at}: expected a JSON object; spec ${specId || '?'} skipped`);
        continue;
      }
      const o = j as Obj;
      if (!specId && col !== 'tisane_spec_json') {
        problems.push(`${file}:${r.line} column spec_id: empty spec_id; spec skipped`);
        continue;
      }
      try {
        switch (col) {
          case 'transform_spec_json': {
            const warn: string[] = [];
            out.transforms.push(transformSpec(specId, o, warn));
            for (const w of warn) problems.push(`${at}: ${w}`);
            break;
          }
          case 'conceptual_spec_json':
            out.conceptualVars.push(cvarSpec(specId, o));
            break;
          case 'model_spec_json':
            out.models.push(modelSpec(specId, o));
            break;
          case 'annotate_transform_spec_json':
            out.transformReviews.push(transformReview(specId, o));
            break;
          case 'annotate_cvar_spec_json':
            out.cvarReviews.push(cvarReview(specId, o));
            break;
          case 'tisane_spec_json':
            break; // always empty in BLADE (spec §1.2.3)
        }
      } catch (e) {
        problems.push(`${at}: ${(e as Error).message}; spec ${specId} skipped`);
      }
    }
  }
  // Branch dependencies must name known transform specs.
  const ids = new Set(out.transforms.map((t) => t.specId));
  ids.add(ROOT_SPEC_ID);
  for (const t of out.transforms) {
    for (const b of t.branches) {
      for (const d of b.dependencies) {
        if (!ids.has(d)) problems.push(`${file}: transform ${t.specId} depends on unknown spec ${d}`);
      }
    }
  }
  return { annotations: out, problems };
}

function transformSpec(specId: string, o: Obj, warn: string[]): BladeTransformSpec {
  const isRoot = specId === ROOT_SPEC_ID || o.spec_name === 'ROOT';
  const transVerb = strList(o.trans_verb);
  const mappingRaw = o.input_cols_to_output_col_mapping ?? [];
  if (!Array.isArray(mappingRaw)) throw new Error('input_cols_to_output_col_mapping is not a list');
  const columnMappings: { inputs: string[]; output: string }[] = [];
  mappingRaw.forEach((m, i) => {
    if (!Array.isArray(m) || m.length !== 2) {
      warn.push(`input_cols_to_output_col_mapping[${i}] is not [[inputs], output]; entry ignored`);
    } else columnMappings.push({ inputs: strList(m[0]), output: str(m[1]) });
  });
  const branchesRaw = o.branches ?? [];
  if (!Array.isArray(branchesRaw)) throw new Error('branches is not a list');
  const branches: BladeBranch[] = [];
  branchesRaw.forEach((b, i) => {
    // Old format: a list of lists of dependency ids (converted like annotation.py does).
    if (Array.isArray(b)) branches.push({ dependencies: strList(b), condition: '' });
    else if (typeof b === 'object' && b !== null) {
      branches.push({ dependencies: strList((b as Obj).dependencies), condition: str((b as Obj).condition) });
    } else warn.push(`branches[${i}] is neither {dependencies, condition} nor a list; branch ignored`);
  });
  return {
    specId,
    specName: str(o.spec_name),
    specification: str(o.specification),
    verb: isRoot ? '' : (transVerb[0] ?? ''),
    transVerb,
    code: str(o.code),
    rationale: str(o.rationale),
    columnMappings,
    branches,
    isRoot,
    raw: o,
  };
}

function cvarSpec(specId: string, o: Obj): BladeConceptualVarSpec {
  const given = str(o.variable_type).trim();
  const canon: Record<string, BladeVariableType> = { iv: 'IV', dv: 'DV', control: 'Control', moderator: 'Moderator' };
  const variableType = canon[given.toLowerCase()];
  if (!variableType) throw new Error(`unknown variable_type '${given}' (expected IV, DV, Control)`);
  const interaction = bool(o.interaction);
  return {
    specId,
    variableType,
    effectiveType: variableType === 'Control' && interaction ? 'Moderator' : variableType,
    concept: str(o.concept),
    interaction,
    on: str(o.on),
    columnsOrig: strList(o.final_columns_orig).map(stripColumnPrefix),
    columnsDerived: strList(o.final_columns_derived).map(stripColumnPrefix),
    derivedSpecIds: strList(o.final_columns_derived_spec_ids),
    leafSpecIds: strList(o.final_columns_leaf_spec_ids),
    rationale: str(o.rationale),
    raw: o,
  };
}

function modelSpec(specId: string, o: Obj): BladeModelSpec {
  return {
    specId,
    specification: str(o.specification),
    specName: str(o.spec_name),
    code: str(o.code),
    rationale: str(o.rationale),
    columnsOrig: strList(o.associated_columns_orig).map(stripColumnPrefix),
    columnsDerived: strList(o.associated_columns_derived).map(stripColumnPrefix),
    derivedSpecIds: strList(o.associated_columns_derived_spec_ids),
    leafSpecIds: strList(o.associated_columns_leaf_spec_ids),
    specifiedSpecIds: strList(o.associated_specified_spec_ids),
    raw: o,
  };
}

/** justifiable: every given label Yes; unjustifiable: a majority of given labels No; else unsure (paper §4.1). */
export function judge(labels: ReviewLabel[]): 'justifiable' | 'unjustifiable' | 'unsure' {
  const given = labels.filter((l) => l !== '');
  if (given.length === 0) return 'unsure';
  if (given.every((l) => l === 'Yes')) return 'justifiable';
  if (given.filter((l) => l === 'No').length * 2 > given.length) return 'unjustifiable';
  return 'unsure';
}

function transformReview(specId: string, o: Obj): BladeTransformReview {
  const isSuitedToCv = label(o.is_suited_to_cv);
  const isStepsReasonable = label(o.is_steps_reasonable);
  const isRationaleReasonable = label(o.annotator_is_rationale_reasonable);
  return {
    specId,
    code: str(o.code),
    outputCol: str(o.output_col),
    rationale: str(o.rationale),
    associatedCvarSpecId: str(o.associated_cvar_spec_id),
    isSuitedToCv,
    isStepsReasonable,
    isRationaleReasonable,
    explanation: str(o.annotator_explanation),
    judgement: judge([isSuitedToCv, isStepsReasonable, isRationaleReasonable]),
    raw: o,
  };
}

function cvarReview(specId: string, o: Obj): BladeCvarReview {
  const canDeriveFromData = label(o.can_derive_from_data);
  const isReasonable = label(o.is_reasonable);
  return {
    specId,
    concept: str(o.concept),
    variableType: str(o.variable_type),
    columns: strList(o.columns).map(stripColumnPrefix),
    interaction: bool(o.interaction),
    on: str(o.on),
    canDeriveFromData,
    isReasonable,
    judgement: judge([canDeriveFromData, isReasonable, label(o.annotator_is_rationale_reasonable)]),
    raw: o,
  };
}

/**
 * Parses `mcq_dataset.json` (spec §1.2.4). Options are labelled A–D in order; the correct answer
 * is located by its text (cvar string or code).
 * @returns the MCQs and problems naming `file` and the question (`mcqs_cvar[3]`).
 * @throws LoupeInputError when the file is unreadable, not UTF-8 or not JSON, or lacks both MCQ keys.
 */
export function parseBladeMcqs(file: string): { mcqs: BladeMcqSet; problems: string[] } {
  let j: unknown;
  const text = readUtf8(file);
  try {
    j = JSON.parse(text);
  } catch (e) {
    throw new LoupeInputError(file, `invalid JSON: ${(e as Error).message}`);
  }
  if (typeof j !== 'object' || j === null || (!('mcqs_cvar' in j) && !('mcqs_transform' in j))) {
    throw new LoupeInputError(file, 'not a BLADE MCQ file (no mcqs_cvar / mcqs_transform)');
  }
  const o = j as Obj;
  const problems: string[] = [];
  const mcqs: BladeMcq[] = [];
  const one = (q: unknown, family: 'cvar' | 'transform', where: string, concept: string) => {
    if (typeof q !== 'object' || q === null) return void problems.push(`${file} ${where}: not an object`);
    const qo = q as Obj;
    const mcType = str(qo.mc_type);
    if (mcType !== 'select_pos' && mcType !== 'select_neg') {
      return void problems.push(`${file} ${where}: unknown mc_type '${mcType}'`);
    }
    if (!Array.isArray(qo.options) || qo.options.length < 2 || qo.options.length > 4) {
      return void problems.push(`${file} ${where}: expected 2–4 options`);
    }
    const textOf = (op: Obj) => str(family === 'cvar' ? op.cvar_str : op.code);
    const options = (qo.options as Obj[]).map((op, i) => ({
      label: 'ABCD'[i]!,
      text: textOf(op),
      rationale: str(op.rationale),
      isLlmGenerated: bool(op.is_llm_generated),
    }));
    const correct =
      typeof qo.correct_answer === 'object' && qo.correct_answer !== null ? textOf(qo.correct_answer as Obj) : '';
    const idx = options.findIndex((op) => op.text === correct);
    if (idx < 0) return void problems.push(`${file} ${where}: correct_answer is not one of the options`);
    const n = mcqs.filter((m) => m.family === family).length + 1;
    mcqs.push({
      id: `${family}-${n}`,
      family,
      mcType,
      conceptualVariable: family === 'transform' ? str(qo.coneptual_var_str ?? qo.conceptual_var_str) || concept : '',
      options,
      correctLabel: options[idx]!.label,
    });
  };
  const cv = o.mcqs_cvar ?? [];
  if (!Array.isArray(cv)) problems.push(`${file} mcqs_cvar: not a list`);
  else cv.forEach((q, i) => one(q, 'cvar', `mcqs_cvar[${i}]`, ''));
  const tr = o.mcqs_transform ?? {};
  if (typeof tr !== 'object' || tr === null || Array.isArray(tr)) {
    problems.push(`${file} mcqs_transform: not an object`);
  } else {
    for (const [concept, list] of Object.entries(tr as Obj)) {
      if (!Array.isArray(list)) problems.push(`${file} mcqs_transform["${concept}"]: not a list`);
      else list.forEach((q, i) => one(q, 'transform', `mcqs_transform["${concept}"][${i}]`, concept));
    }
  }
  return { mcqs: { file, mcqs }, problems };
}

/**
 * Counts ground-truth decisions per type (spec §1.2 table).
 * @returns cvars by effective type, non-ROOT transforms, models, distinct model names, reviews, MCQs.
 */
export function countDecisions(a: BladeAnnotations | undefined, m: BladeMcqSet | undefined): BladeDecisionCounts {
  const cv = { IV: 0, DV: 0, Control: 0, Moderator: 0, total: 0 };
  for (const c of a?.conceptualVars ?? []) {
    cv[c.effectiveType]++;
    cv.total++;
  }
  return {
    cvars: cv,
    transforms: (a?.transforms ?? []).filter((t) => !t.isRoot).length,
    models: a?.models.length ?? 0,
    uniqueModelNames: new Set((a?.models ?? []).map((x) => x.specification.trim().toLowerCase())).size,
    transformReviews: a?.transformReviews.length ?? 0,
    cvarReviews: a?.cvarReviews.length ?? 0,
    mcqCvar: (m?.mcqs ?? []).filter((q) => q.family === 'cvar').length,
    mcqTransform: (m?.mcqs ?? []).filter((q) => q.family === 'transform').length,
  };
}
