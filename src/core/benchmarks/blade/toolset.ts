/**
 * BLADE tool set (Task 2, analysis generation): `python(code)` in a kernel where the dataset is
 * loaded as `df`, and `submit_analysis(conceptual_variables, transform_code, model_code)` validated by
 * running the transform then the model on a fresh copy of the data. Also: BLADE submission JSON
 * export (spec §1.2.5) and the one-turn MCQ task (`blade-mcq`, spec §1.3.4) with strict parsing.
 *
 * Source: spec §1.3 (BLADE harnesses: `baselines/agent/react_agent.py`, `baselines/lm/mcq.py`),
 * §1.2.5 (`example/submission_schema.json`). The ReAct text protocol of the original is replaced by
 * native function calling; the step budget (10) and the pre-imported libraries are kept.
 */
import type { BladeAnalysis } from './analysis.ts';
import type { Block } from '../../suites/types.ts';
import type { BladeMcqItem, ColumnInfo } from './items.ts';
import { LoupeInputError } from '../../util/errors.ts';
import type { ToolContext, ToolDefinition, ToolResult, ToolSet } from '../../agent/types.ts';
import { formatKernelResult, ensurePreamble, pyStr, runPythonTool } from '../../agent/kernel-output.ts';

/** BLADE's agent takes at most 10 model calls (`max_turns=10`, spec §1.3.3). */
export const BLADE_DEFAULT_MAX_STEPS = 10;

/** Variable roles accepted by `submit_analysis`. */
export const BLADE_VARIABLE_TYPES = ['IV', 'DV', 'Control', 'Moderator'] as const;
export type BladeVarType = (typeof BLADE_VARIABLE_TYPES)[number];

/** One conceptual variable as submitted by the agent. */
export interface SubmittedVariable {
  description: string;
  type: BladeVarType;
  /** Columns of the TRANSFORMED table that operationalise the variable. */
  columns: string[];
  /** Moderator only: the variable it moderates (free text). */
  moderator_on?: string;
}

/** A submission as the agent sent it. */
export interface BladeSubmissionInput {
  conceptual_variables: SubmittedVariable[];
  transform_code: string;
  model_code: string;
}

/** The submitted analysis: BLADE's `EntireAnalysis`, the same type the scorer reads. */
export type BladeEntireAnalysis = BladeAnalysis;

/** What one `submit_analysis` call produced (kept in `state.extra.blade.submissions`). */
export interface BladeSubmissionRecord {
  stepIndex: number;
  valid: boolean;
  errors: string[];
  input: BladeSubmissionInput;
  /** Columns of the transformed table (when the transform ran). */
  transformedColumns?: string[];
  /** repr of the model's return value (cut to 2000 chars), when the model ran. */
  modelResult?: string;
}

/** Per-run BLADE state under `state.extra.blade`. */
export interface BladeRunState {
  submissions: BladeSubmissionRecord[];
  /** The last valid submission, as BLADE `EntireAnalysis`. */
  final: BladeEntireAnalysis | null;
}

/** Options of {@link createBladeToolSet}. */
export interface BladeToolSetOptions {
  /** Step budget (default 10, BLADE's agent). */
  maxSteps?: number;
  /** Include `info.json`'s dataset description in the prompt (BLADE `use_data_desc`, default true). */
  useDataDescription?: boolean;
}

function bladeDataRel(block: Block): string {
  const f = block.visible.data.find((d) => /\.csv$/i.test(d.rel)) ?? block.visible.data[0];
  if (!f) throw new LoupeInputError(block.id, 'BLADE block has no data file (data.csv missing); it cannot be run');
  return f.rel;
}

/**
 * The kernel preamble of a BLADE block: the libraries BLADE pre-imports and `df = pd.read_csv(...)`.
 * Source: spec §1.3.3 "Sandbox" (init cell of the original agent).
 * @param block a BLADE block (its first CSV data file is loaded, path relative to the workspace).
 * @throws LoupeInputError when the block has no data file.
 */
export function bladePreamble(block: Block): string {
  return [
    'import warnings',
    'warnings.filterwarnings("ignore")',
    'import matplotlib',
    'matplotlib.use("Agg")',
    'import pandas as pd',
    'import numpy as np',
    'import scipy',
    'import scipy.stats',
    'import sklearn',
    'import statsmodels.api as sm',
    'import statsmodels.formula.api as smf',
    'import matplotlib.pyplot as plt',
    `df = pd.read_csv(${pyStr(bladeDataRel(block))})`,
  ].join('\n');
}

function schemaLines(columns: ColumnInfo[] | undefined): string {
  if (!columns?.length) return '(no column descriptions available; inspect `df` yourself)';
  return columns
    .map((c) => {
      const p = c.properties ?? {};
      const bits: string[] = [];
      if (c.dtype) bits.push(c.dtype);
      if (p.min !== undefined && p.max !== undefined) bits.push(`range ${String(p.min)}–${String(p.max)}`);
      if (p.num_unique_values !== undefined) bits.push(`${String(p.num_unique_values)} distinct`);
      if (Array.isArray(p.samples)) {
        bits.push(
          `e.g. ${(p.samples as unknown[])
            .slice(0, 3)
            .map((s) => JSON.stringify(s))
            .join(', ')}`,
        );
      }
      return `- ${c.name} (${bits.join('; ')}): ${c.description || 'no description'}`;
    })
    .join('\n');
}

/**
 * The task text for a BLADE block: research question, dataset description and schema, how the data
 * is loaded, and what a submission must contain. Written in Loupe's own words.
 * @param block a BLADE block; `opts.useDataDescription` false drops the free-text description.
 */
export function buildBladeBlockPrompt(block: Block, opts: BladeToolSetOptions = {}): string {
  const q =
    block.visible.researchQuestions?.[0] ?? block.items.find((i) => i.type === 'blade-question')?.question ?? '';
  const lines = [`Research question: ${q}`, ''];
  if (opts.useDataDescription !== false && block.visible.datasetDescription) {
    lines.push('About the dataset:', block.visible.datasetDescription.trim(), '');
  }
  lines.push(
    `The data file is ${bladeDataRel(block)}. It is already loaded in the Python kernel as the DataFrame \`df\`; pandas (pd), numpy (np), scipy, sklearn, statsmodels.api (sm), statsmodels.formula.api (smf) and matplotlib.pyplot (plt) are imported.`,
    '',
    'Columns:',
    schemaLines(block.visible.columns),
    '',
    'Build a justified analysis that answers the research question:',
    '1. the conceptual variables: exactly one dependent variable (DV), at least one independent variable (IV), and any controls or moderators, each tied to the columns that measure it;',
    '2. `transform_code` defining `def transform(df: pd.DataFrame) -> pd.DataFrame` that returns the table the model uses;',
    '3. `model_code` defining `def model(df: pd.DataFrame)` that fits the statistical model on that table and returns the fitted result.',
    'Explore with `python` first. When ready, call `submit_analysis`. The columns you name must be columns of the table `transform` returns. If the submission is rejected, read the error, fix it and submit again.',
  );
  return lines.join('\n');
}

const SYSTEM_PROMPT = [
  'You are an expert data scientist who answers research questions with careful, defensible statistical analyses.',
  'You formalise the question as a conceptual model (which variables matter and how they relate), decide how to operationalise each variable from the data, choose the transformations the data needs, and pick a statistical model that tests the hypothesis.',
  'Tools: `python` runs code in a persistent Python kernel (state is kept between calls); `submit_analysis` hands in your final analysis and checks that it runs.',
  'Call one tool at a time, think about each result before the next step, and finish by calling `submit_analysis`.',
].join('\n');

function validateShape(args: Record<string, unknown>): { input: BladeSubmissionInput; errors: string[] } {
  const errors: string[] = [];
  const cvRaw = args.conceptual_variables;
  const vars: SubmittedVariable[] = [];
  if (!Array.isArray(cvRaw)) errors.push('`conceptual_variables` must be a list of {description, type, columns}.');
  else {
    cvRaw.forEach((v, i) => {
      const o = (v ?? {}) as Record<string, unknown>;
      const where = `conceptual_variables[${i}]`;
      const type = typeof o.type === 'string' ? o.type.trim() : '';
      const canon = BLADE_VARIABLE_TYPES.find((t) => t.toLowerCase() === type.toLowerCase());
      if (!canon) {
        errors.push(`${where}.type must be one of ${BLADE_VARIABLE_TYPES.join(', ')} (got ${JSON.stringify(o.type)}).`);
      }
      if (typeof o.description !== 'string' || !o.description.trim()) {
        errors.push(`${where}.description must be a non-empty string.`);
      }
      const cols = Array.isArray(o.columns)
        ? o.columns.filter((c): c is string => typeof c === 'string' && c.length > 0)
        : [];
      if (!Array.isArray(o.columns) || cols.length === 0 || cols.length !== o.columns.length) {
        errors.push(`${where}.columns must be a non-empty list of column names.`);
      }
      vars.push({
        description: String(o.description ?? ''),
        type: (canon ?? 'Control') as BladeVarType,
        columns: cols,
        ...(typeof o.moderator_on === 'string' && o.moderator_on ? { moderator_on: o.moderator_on } : {}),
      });
    });
    if (errors.length === 0) {
      const dv = vars.filter((v) => v.type === 'DV').length;
      if (dv !== 1) errors.push(`There must be exactly one DV (found ${dv}).`);
      if (!vars.some((v) => v.type === 'IV')) errors.push('There must be at least one IV.');
    }
  }
  const transform = typeof args.transform_code === 'string' ? args.transform_code : '';
  const model = typeof args.model_code === 'string' ? args.model_code : '';
  if (!transform.trim()) {
    errors.push(
      '`transform_code` is empty. If no transformation is needed, submit `def transform(df):\\n    return df`.',
    );
  } else if (!/def\s+transform\s*\(/.test(transform)) {
    errors.push('`transform_code` must define `def transform(df: pd.DataFrame) -> pd.DataFrame`.');
  }
  if (!model.trim()) errors.push('`model_code` is empty.');
  else if (!/def\s+model\s*\(/.test(model)) errors.push('`model_code` must define `def model(df: pd.DataFrame)`.');
  return { input: { conceptual_variables: vars, transform_code: transform, model_code: model }, errors };
}

const VALIDATION_MARK = '__LOUPE_BLADE_VALIDATION__';

/**
 * Python code that validates a submission on a fresh copy of the data, in its own namespace (the
 * agent's variables are neither used nor changed), and prints one marked JSON line:
 * `{stage, ok, error, columns, missing, model_repr}`.
 * @param dataRel data file path relative to the kernel's working directory.
 */
export function bladeValidationCode(dataRel: string, input: BladeSubmissionInput): string {
  const wanted = input.conceptual_variables.map((v) => ({ name: `${v.type}: ${v.description}`, columns: v.columns }));
  return `
def __loupe_validate(_data_path, _transform_code, _model_code, _wanted):
    import io, json, traceback, contextlib, typing
    import pandas as pd, numpy as np, scipy, scipy.stats, sklearn
    import statsmodels.api as sm, statsmodels.formula.api as smf
    out = {"stage": "load", "ok": False, "error": "", "columns": [], "missing": [], "model_repr": ""}
    base = {"pd": pd, "np": np, "scipy": scipy, "sklearn": sklearn, "sm": sm, "smf": smf, "Any": typing.Any, "__name__": "__submission__"}
    buf = io.StringIO()
    def tb():
        lines = traceback.format_exc().strip().splitlines()
        return "\\n".join(lines[-12:])
    try:
        with contextlib.redirect_stdout(buf):
            raw = pd.read_csv(_data_path)
            out["stage"] = "transform_code"
            ns = dict(base)
            exec(compile(_transform_code, "<transform_code>", "exec"), ns)
            fn = ns.get("transform")
            if not callable(fn):
                raise NameError("transform_code does not define a function named transform")
            out["stage"] = "transform"
            t = fn(raw.copy())
            if not isinstance(t, pd.DataFrame):
                raise TypeError("transform(df) must return a pandas DataFrame, got " + type(t).__name__)
            out["columns"] = [str(c) for c in t.columns]
            cols = set(out["columns"])
            for w in _wanted:
                miss = [c for c in w["columns"] if c not in cols]
                if miss:
                    out["missing"].append({"variable": w["name"], "columns": miss})
            out["stage"] = "model_code"
            ns2 = dict(base)
            exec(compile(_model_code, "<model_code>", "exec"), ns2)
            mfn = ns2.get("model")
            if not callable(mfn):
                raise NameError("model_code does not define a function named model")
            out["stage"] = "model"
            printed_before = len(buf.getvalue())
            res = mfn(t.copy())
            if res is None:
                # model() printed its result (or nothing) instead of returning it: show what it printed
                out["model_returned_none"] = True
                r = buf.getvalue()[printed_before:].strip()
            else:
                r = repr(res)
                try:
                    if hasattr(res, "summary"):
                        r = str(res.summary())
                except Exception:
                    pass
            out["model_repr"] = r[:2000]
            out["stage"] = "done"
            out["ok"] = not out["missing"]
    except BaseException as e:
        out["error"] = tb()
        # patsy reports ONE undefined name, picked by set order (differs between processes): report
        # every formula name that is not a column instead, sorted, so the message is deterministic.
        lines = str(e).splitlines()
        if type(e).__name__ == "PatsyError" and "is not defined" in (lines[0] if lines else "") and len(lines) > 1 and out["columns"]:
            import re, builtins
            known = set(out["columns"]) | set(dir(builtins)) | {"C", "I", "Q", "np", "pd", "center", "standardize", "scale", "bs", "cr", "cc", "te", "Treatment", "Sum", "Poly", "Helmert", "Diff", "log", "exp", "sqrt"}
            names = sorted({n for n in re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", lines[1]) if n.split(".")[0] not in known})
            out["error"] = "PatsyError: the model formula uses names that are not columns of the transformed table: " + ", ".join(names) + "\\n" + lines[1].strip()
    print(${pyStr(VALIDATION_MARK)} + json.dumps(out))
__loupe_validate(${pyStr(dataRel)}, ${pyStr(input.transform_code)}, ${pyStr(input.model_code)}, ${JSON.stringify(wanted)})
del __loupe_validate
`;
}

/** Parsed validation output. */
interface ValidationOutput {
  stage: string;
  ok: boolean;
  error: string;
  columns: string[];
  missing: { variable: string; columns: string[] }[];
  model_repr: string;
  /** model(df) returned None: `model_repr` is what it printed ('' when nothing). */
  model_returned_none?: boolean;
}

/**
 * The "model result" part of an accepted submission's observation: the result's first 25 lines; when model(df)
 * returned None, what it printed, or a plain note that it returned nothing (never the text "None").
 */
export function modelResultText(v: Pick<ValidationOutput, 'model_repr' | 'model_returned_none'>): string {
  const first = (t: string) => t.split('\n').slice(0, 25).join('\n');
  if (v.model_returned_none) {
    return v.model_repr.trim()
      ? `model(df) returned nothing; what it printed (first lines):\n${first(v.model_repr)}`
      : 'model(df) returned nothing and printed nothing (return the fitted model to see its result here).';
  }
  return `Model result (first lines):\n${first(v.model_repr)}`;
}

/**
 * Converts a submission to BLADE's `EntireAnalysis` (IV → ivs, DV → dv, Control → controls,
 * Moderator → controls with `is_moderator: true`). Source: spec §1.2.5.
 */
export function toEntireAnalysis(input: BladeSubmissionInput): BladeEntireAnalysis {
  const dv = input.conceptual_variables.find((v) => v.type === 'DV');
  return {
    cvars: {
      ivs: input.conceptual_variables
        .filter((v) => v.type === 'IV')
        .map((v) => ({ description: v.description, columns: v.columns })),
      dv: { description: dv?.description ?? '', columns: dv?.columns ?? [] },
      controls: input.conceptual_variables
        .filter((v) => v.type === 'Control' || v.type === 'Moderator')
        .map((v) => ({
          description: v.description,
          is_moderator: v.type === 'Moderator',
          ...(v.type === 'Moderator' && v.moderator_on ? { moderator_on: v.moderator_on } : {}),
          columns: v.columns,
        })),
    },
    transform_code: input.transform_code,
    m_code: input.model_code,
  };
}

/** Reads (creating) the BLADE state of a run. */
export function bladeState(extra: Record<string, unknown>): BladeRunState {
  const s = extra.blade as BladeRunState | undefined;
  if (s && Array.isArray(s.submissions)) return s;
  const fresh: BladeRunState = { submissions: [], final: null };
  extra.blade = fresh;
  return fresh;
}

/**
 * Validates a submission in the run's kernel and records it. Valid → `finish: true`.
 * @returns the tool result; errors (shape, Python traceback, missing columns) come back as an error
 *   observation so the agent can fix them.
 */
export async function submitAnalysis(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const block = ctx.block as Block;
  const state = bladeState(ctx.state.extra);
  const { input, errors } = validateShape(args);
  const record: BladeSubmissionRecord = { stepIndex: ctx.stepIndex, valid: false, errors, input };
  if (errors.length) {
    state.submissions.push(record);
    return {
      observation: `Submission rejected:\n- ${errors.join('\n- ')}\nFix these and call submit_analysis again.`,
      isError: true,
      data: record,
    };
  }
  const pre = await ensurePreamble(ctx, 'bladePreamble', bladePreamble(block));
  if (pre) return pre;
  const r = await ctx.execute(bladeValidationCode(bladeDataRel(block), input));
  const line = r.stdout.split('\n').find((l) => l.startsWith(VALIDATION_MARK));
  if (!line) {
    record.errors.push(`validation did not complete: ${formatKernelResult(r)}`);
    state.submissions.push(record);
    if (r.restarted) ctx.state.extra.bladePreamble = false;
    return { observation: `Submission could not be validated:\n${formatKernelResult(r)}`, isError: true, data: record };
  }
  const v = JSON.parse(line.slice(VALIDATION_MARK.length)) as ValidationOutput;
  record.transformedColumns = v.columns;
  if (v.model_repr) record.modelResult = v.model_repr;
  if (v.error) record.errors.push(`error in ${v.stage}:\n${v.error}`);
  for (const m of v.missing) {
    record.errors.push(
      `${m.variable}: column${m.columns.length > 1 ? 's' : ''} ${m.columns.map((c) => `'${c}'`).join(', ')} not in the transformed table`,
    );
  }
  record.valid = v.ok && !v.error;
  state.submissions.push(record);
  if (!record.valid) {
    const colsNote = v.columns.length ? `\nColumns of the transformed table: ${v.columns.join(', ')}` : '';
    return {
      observation: `Submission rejected:\n- ${record.errors.join('\n- ')}${colsNote}\nFix the problem and call submit_analysis again.`,
      isError: true,
      data: record,
    };
  }
  state.final = toEntireAnalysis(input);
  return {
    observation: `Submission accepted: the transform returned ${v.columns.length} columns and the model ran.\n${modelResultText(v)}`,
    finish: true,
    data: record,
  };
}

const conceptualVariableSchema = {
  type: 'object' as const,
  properties: {
    description: {
      type: 'string' as const,
      description: 'What the variable means conceptually, e.g. "femininity of the hurricane name".',
    },
    type: { type: 'string' as const, enum: [...BLADE_VARIABLE_TYPES], description: 'IV, DV, Control or Moderator.' },
    columns: {
      type: 'array' as const,
      items: { type: 'string' as const },
      description: 'Columns of the TRANSFORMED table that measure it.',
    },
    moderator_on: { type: 'string' as const, description: 'Moderator only: the variable whose effect it moderates.' },
  },
  required: ['description', 'type', 'columns'],
};

/**
 * The BLADE tool set: `python` and `submit_analysis`; default budget 10 steps.
 * @param opts see {@link BladeToolSetOptions}.
 * @returns a {@link ToolSet} over BLADE {@link Block}s (`id` = `blade-agent`).
 */
export function createBladeToolSet(opts: BladeToolSetOptions = {}): ToolSet<Block> {
  const python: ToolDefinition = {
    name: 'python',
    description:
      'Run Python code in a persistent kernel. The dataset is loaded as `df`; pandas, numpy, scipy, sklearn, statsmodels (sm, smf) are imported. Returns printed output and the value of the last expression.',
    parameters: {
      type: 'object',
      properties: { code: { type: 'string', description: 'Python code to run.' } },
      required: ['code'],
    },
    run: async (args, ctx) => runPythonTool(ctx, 'bladePreamble', bladePreamble(ctx.block as Block), String(args.code)),
  };
  const submit: ToolDefinition = {
    name: 'submit_analysis',
    description:
      'Submit the final analysis. It is validated by running transform_code then model_code on a fresh copy of the data and checking that every named column exists in the transformed table. Errors are returned so you can fix them.',
    parameters: {
      type: 'object',
      properties: {
        conceptual_variables: {
          type: 'array',
          items: conceptualVariableSchema,
          description: 'The conceptual model: one DV, at least one IV, and any Controls / Moderators.',
        },
        transform_code: {
          type: 'string',
          description: 'Python defining `def transform(df: pd.DataFrame) -> pd.DataFrame`.',
        },
        model_code: {
          type: 'string',
          description: 'Python defining `def model(df: pd.DataFrame)` returning the fitted model / result.',
        },
      },
      required: ['conceptual_variables', 'transform_code', 'model_code'],
    },
    run: submitAnalysis,
  };
  return {
    id: 'blade-agent',
    tools: [python, submit],
    // the submission is a row of the store (tool-set state); python runs in the kernel's sandbox (issue 36)
    hostPaths: [],
    systemPrompt: SYSTEM_PROMPT,
    buildBlockPrompt: (block) => buildBladeBlockPrompt(block, opts),
    noToolCallMessage: 'Please continue: call `python` to explore or `submit_analysis` to hand in your analysis.',
    defaultMaxSteps: opts.maxSteps ?? BLADE_DEFAULT_MAX_STEPS,
  };
}

// ------------------------------------------------------------------------ submission JSON export

/** BLADE `RunResultModes` (spec §1.2.5). */
export const BLADE_RUN_RESULT_MODES = {
  LM_SUBMISSION_EXECUTION_FAILED: 0,
  LM_SUBMISSION_CONVERSION_FAILED: 1,
  LM_GENERATION_FAILED: 2,
  LOAD_GND_TRUTH_FAILED: 3,
  LM_SUBMISSION_TRANSFORM_CODE_EMPTY: 4,
  FINISHED_SUCCESSFULLY: 5,
  MATCHING_FAILED: 6,
  GETTING_METRICS_FAILED: 7,
} as const;

/**
 * BLADE `DatasetSubmission` (`{dataset_name, analyses}`), the format its evaluator reads.
 * @param dataset BLADE dataset name; `analyses` the final analyses of the runs (one per run).
 */
export function bladeDatasetSubmission(
  dataset: string,
  analyses: BladeEntireAnalysis[],
): { dataset_name: string; analyses: BladeEntireAnalysis[] } {
  return { dataset_name: dataset, analyses };
}

/**
 * BLADE `MultiRunResults` (`multirun_analyses.json`): per run index, the analysis, or
 * `[RunResultMode, message]` when the run produced none (no valid submission → LM_GENERATION_FAILED).
 * Source: spec §1.2.5.
 */
export function bladeMultiRunResults(
  dataset: string,
  runs: { final: BladeEntireAnalysis | null; message?: string }[],
): { dataset_name: string; n: number; analyses: Record<string, BladeEntireAnalysis | [number, string]> } {
  const analyses: Record<string, BladeEntireAnalysis | [number, string]> = {};
  runs.forEach((r, i) => {
    analyses[String(i)] = r.final ?? [BLADE_RUN_RESULT_MODES.LM_GENERATION_FAILED, r.message ?? 'no valid submission'];
  });
  return { dataset_name: dataset, n: runs.length, analyses };
}

// ------------------------------------------------------------------------ MCQ (Task 1)

/**
 * The one-turn MCQ prompt: instruction (MOST / LEAST justifiable), research question, dataset
 * summary, the labelled options, and the valid letters. Source: spec §1.3.4 (own wording).
 * @returns `[system, user]` message texts.
 */
export function buildBladeMcqPrompt(block: Block, item: BladeMcqItem): { system: string; user: string } {
  const which = item.mcType === 'select_pos' ? 'MOST' : 'LEAST';
  const what =
    item.family === 'cvar'
      ? 'conceptual variable'
      : `transformation for the conceptual variable "${item.conceptualVariable}"`;
  const q = block.visible.researchQuestions?.[0] ?? '';
  const opts = item.options
    .map((o) =>
      item.family === 'transform' ? `${o.label}.\n\`\`\`python\n${o.text}\n\`\`\`` : `${o.label}. ${o.text}`,
    )
    .join('\n');
  const letters = item.options.map((o) => o.label);
  const user = [
    `Choose the ${which} justifiable ${what} for answering the research question with this dataset.`,
    `Reply with a JSON object {"answer": "<letter>", "rationale": "<one or two sentences>"} and nothing else.`,
    '',
    `Research question: ${q}`,
    block.visible.datasetDescription ? `Dataset: ${block.visible.datasetDescription.trim()}` : '',
    `Columns: ${(block.visible.columns ?? []).map((c) => c.name).join(', ')}`,
    '',
    'Options:',
    opts,
    '',
    `The valid answers are: ${letters.join(', ')}.`,
    'Answer:',
  ].join('\n');
  return {
    system:
      'You are an expert data scientist who judges which analysis decisions are justified by the research question and the data.',
    user,
  };
}

/**
 * Strict MCQ answer parsing: a JSON object whose `answer` is exactly one valid letter, or a reply whose
 * first non-empty line is just that letter (optionally "Answer:", brackets, a period). Anything else,
 * including several letters or a letter outside `valid`, is unparsed (counts as wrong).
 * @param text the model's reply; `valid` the option letters, e.g. `['A','B','C']`.
 * @returns the letter, or null.
 */
export function parseBladeMcqAnswer(text: string, valid: string[]): string | null {
  const t = text.trim().replace(/^```(?:json)?\s*|\s*```$/g, '');
  const ok = (s: unknown) =>
    typeof s === 'string' && valid.includes(s.trim().toUpperCase()) && s.trim().length === 1
      ? s.trim().toUpperCase()
      : null;
  if (t.startsWith('{')) {
    try {
      const o = JSON.parse(t) as Record<string, unknown>;
      return ok(o.answer);
    } catch {
      return null;
    }
  }
  const first = t.split('\n').find((l) => l.trim()) ?? '';
  const m = /^\s*(?:answer\s*[:=-]?\s*)?[([]?([A-Za-z])[)\]]?\.?\s*$/i.exec(first);
  return m ? ok(m[1]) : null;
}
