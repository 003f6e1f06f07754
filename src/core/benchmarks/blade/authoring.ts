/**
 * BLADE ground-truth authoring (issue 18): experts specify decisions in forms that match BLADE's spec classes —
 * conceptual variable (`ConceptualVarSpec`), transform (`TransformSpec` with `Branch`es) and model (`ModelSpec`) —
 * and every form is checked before it can be saved: static checks (names, verbs, referenced columns, dependencies
 * that exist, a DAG that stays acyclic) and executed checks (the transform run on `data.csv` along each of its
 * branches in the sandboxed Python kernel, with its limits: resulting columns, row counts, errors; a model's code
 * fitted on the transformed table). Saving writes the spec as a row of BLADE's `annotations.csv` and stores a new
 * ground-truth version in one step: a form whose check failed, or changed since its check, saves nothing.
 * Source: BLADE paper §3 and App. A.2 (the annotation interface and its sanity checks);
 * `blade_bench/data/datamodel/specs.py` (spec classes, `validate_msgs`); issue 18.
 */
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { findBubblewrap, PythonKernel, type SandboxMode } from '../../kernel/index.ts';
import type { BladeAnnotations, BladeTransformSpec } from './items.ts';
import { LoupeInputError } from '../../util/errors.ts';
import { DERIVED_COL_PREFIX, ORIG_COL_PREFIX, ROOT_SPEC_ID } from './annotations.ts';
import { editGtCsv, parseGtCsv, type BladeGtStore, type BladeGtVersion } from './gt-versions.ts';

/** BLADE's transform verbs (`TransformSpec.trans_verb` literals; any other string is allowed as in BLADE). */
export const TRANSFORM_VERBS = ['derive', 'filter', 'group', 'mutate', 'select', 'summarize', 'deduplicate'] as const;

/** `ConceptualVarSpec`: a conceptual variable and the columns that operationalise it. */
export interface CvarForm {
  kind: 'cvar';
  /** Set when editing an existing spec; a new spec gets a uuid hex like BLADE's. */
  specId?: string;
  /** BLADE's `variable_type` (a moderator is a Control with `interaction` and `on`). */
  variableType: 'IV' | 'DV' | 'Control';
  concept: string;
  /** `final_columns_orig`: columns of data.csv (without BLADE's 🟨 prefix). */
  columnsOrig: string[];
  /** `final_columns_derived`: columns produced by transforms of this ground truth (without the 🟩 prefix). */
  columnsDerived: string[];
  interaction: boolean;
  on: string;
  rationale: string;
}

/** `TransformSpec`: one transform unit with its alternative branches (`Branch`: dependencies + condition). */
export interface TransformForm {
  kind: 'transform';
  specId?: string;
  specName: string;
  specification: string;
  /** `trans_verb` (first one is the verb the evaluator uses). */
  transVerb: string[];
  code: string;
  rationale: string;
  /** `input_cols_to_output_col_mapping`: output '' = the whole table (filter, deduplicate). */
  mapping: Array<{ inputs: string[]; output: string }>;
  branches: Array<{ dependencies: string[]; condition: string }>;
}

/** `ModelSpec`: a statistical model with its code and the columns it uses. */
export interface ModelForm {
  kind: 'model';
  specId?: string;
  specification: string;
  specName: string;
  code: string;
  rationale: string;
  columnsOrig: string[];
  columnsDerived: string[];
  /** The transform specs whose output the model is fitted on (`associated_columns_leaf_spec_ids`); [] = data.csv as loaded. */
  onSpecIds: string[];
}

export type DecisionForm = CvarForm | TransformForm | ModelForm;

/** A problem of a form, with the field at fault (`code`, `branches[1]`, `mapping[0].inputs`, `columnsOrig`, …). */
export interface CheckProblem {
  field: string;
  message: string;
}

/** One executed step of a path. */
export interface StepRun {
  specId: string;
  name: string;
  columns?: string[];
  rows?: number;
  error?: string;
  skipped?: boolean;
}

/** The transform (or the model's table) executed along one branch. */
export interface BranchRun {
  /** Index of the branch (0 for a model's table). */
  branch: number;
  dependencies: string[];
  steps: StepRun[];
  /** Columns and rows after the authored step (or the table a model is fitted on). */
  columns?: string[];
  rows?: number;
  /** Columns the authored step added / removed relative to its input table. */
  added?: string[];
  removed?: string[];
  error?: string;
}

/** What a check found. `ok` only when there are no problems and every executed part ran. */
export interface CheckResult {
  ok: boolean;
  /** Hash of the form checked (a save refuses a form changed since its check). */
  formHash: string;
  problems: CheckProblem[];
  branches: BranchRun[];
  model?: { ok: boolean; type?: string; nobs?: number; params?: string[]; error?: string };
  data: { columns: string[]; rows: number };
  /** Wall time of the executed part, ms (measured). */
  durationMs: number;
}

/** Runs code on data.csv in the sandboxed kernel (one instance per checker; close it). */
export interface DecisionExecutor {
  /**
   * Executes `steps` cumulatively on `df` loaded from `dataPath` (BLADE's namespace: pd, np, stats, sm, smf), then
   * optionally `modelCode` on the result. A step that fails stops the path (later steps `skipped`).
   */
  run(
    dataPath: string,
    steps: Array<{ specId: string; name: string; code: string }>,
    modelCode?: string,
  ): Promise<{ steps: StepRun[]; model?: CheckResult['model']; error?: string }>;
  close(): Promise<void>;
}

const MARK = '<<<LOUPE_CHECK>>>';
const END = '<<<LOUPE_CHECK_END>>>';
const STEP = '<<<LOUPE_STEP ';

const CHECK_PY = `
import json as __j, io as __io, contextlib as __cl, sys as __sys
import pandas as __pd, numpy as __np
__BASE = {"pd": __pd, "np": __np}
for __mod, __name in (("scipy.stats", "stats"), ("statsmodels.api", "sm"), ("statsmodels.formula.api", "smf")):
    try:
        __BASE[__name] = __import__(__mod, fromlist=["_"])
    except Exception:
        pass
def __loupe_check(data_path, steps, model_code):
    pd = __pd
    ns = dict(__BASE)
    ns["df"] = pd.read_csv(data_path)
    out = {"steps": []}
    ok = True
    for s in steps:
        if not ok:
            out["steps"].append({"specId": s["specId"], "name": s["name"], "skipped": True})
            continue
        __sys.stdout.write("${STEP}" + s["specId"] + ">>>\\n"); __sys.stdout.flush()
        try:
            with __cl.redirect_stdout(__io.StringIO()):
                exec(compile(s["code"], "<spec " + s["name"] + ">", "exec"), ns)
            d = ns.get("df")
            if isinstance(d, pd.DataFrame):
                out["steps"].append({"specId": s["specId"], "name": s["name"], "columns": [str(c) for c in d.columns], "rows": int(len(d))})
            else:
                out["steps"].append({"specId": s["specId"], "name": s["name"], "error": "after this step df is a %s, not a DataFrame" % type(d).__name__})
                ok = False
        except BaseException as e:
            out["steps"].append({"specId": s["specId"], "name": s["name"], "error": "%s: %s" % (type(e).__name__, e)})
            ok = False
    if model_code is not None and ok:
        __sys.stdout.write("${STEP}__model__>>>\\n"); __sys.stdout.flush()
        try:
            before = set(ns)
            with __cl.redirect_stdout(__io.StringIO()):
                exec(compile(model_code, "<model>", "exec"), ns)
                m = ns.get("model")
                if callable(m) and not hasattr(m, "params") and not hasattr(m, "fit"):
                    m = m(ns["df"])
                if m is not None and hasattr(m, "fit") and not hasattr(m, "params"):
                    m = m.fit()
            if m is None:
                fresh = [k for k in ns if k not in before]
                raise NameError("the model code defines no 'model' (a fitted model, a model to fit, or def model(df)); it defined: %s" % (", ".join(fresh) or "nothing"))
            params = getattr(m, "params", None)
            names = [str(x) for x in getattr(params, "index", [])][:30] if params is not None else []
            nobs = getattr(m, "nobs", None)
            out["model"] = {"ok": True, "type": type(m).__name__, "nobs": int(nobs) if nobs is not None else None, "params": names}
        except BaseException as e:
            out["model"] = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
    __sys.stdout.write("${MARK}" + __j.dumps(out) + "${END}")
    __sys.stdout.flush()
`;

/**
 * Starts the executor of decision checks: a {@link PythonKernel} (bubblewrap sandbox by default, `off` when asked or
 * when bwrap is missing and `sandbox` is `auto`) that sees only the dataset folder, read-only, with the kernel's
 * limits: wall time per check (default 30 s), CPU time, memory (default 2048 MiB), processes. Code that hangs is
 * stopped and reported; the kernel restarts for the next check.
 * @param opts.dataDir the dataset folder (read-only inside the sandbox). @throws Error when the kernel cannot start.
 * Source: issue 18 "kernel limits apply"; kernel `src/core/kernel/python-kernel.ts`.
 */
export async function startDecisionExecutor(opts: {
  dataDir: string;
  sandbox?: SandboxMode | 'auto';
  timeoutMs?: number;
  memoryLimitMb?: number;
  python?: string;
}): Promise<DecisionExecutor> {
  const sandbox: SandboxMode =
    opts.sandbox === 'off'
      ? 'off'
      : opts.sandbox === 'bubblewrap'
        ? 'bubblewrap'
        : findBubblewrap()
          ? 'bubblewrap'
          : 'off';
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const kernel = await PythonKernel.start({
    ...(opts.python ? { python: opts.python } : {}),
    cwd: opts.dataDir,
    sandbox,
    readOnlyPaths: [opts.dataDir],
    writablePaths: [],
    preamble: CHECK_PY,
    cellTimeoutMs: Math.max(timeoutMs, 120_000),
    memoryLimitMb: opts.memoryLimitMb ?? 2048,
    maxOutputChars: 2_000_000,
    env: { MPLBACKEND: 'Agg' },
  });
  return {
    async run(dataPath, steps, modelCode) {
      const r = await kernel.execute(
        `__loupe_check(${JSON.stringify(dataPath)}, __j.loads(${JSON.stringify(JSON.stringify(steps))}), ${modelCode === undefined ? 'None' : JSON.stringify(modelCode)})`,
        { timeoutMs },
      );
      const a = r.stdout.lastIndexOf(MARK);
      const b = r.stdout.lastIndexOf(END);
      if (r.status === 'ok' && a >= 0 && b > a) {
        return JSON.parse(r.stdout.slice(a + MARK.length, b)) as Awaited<ReturnType<DecisionExecutor['run']>>;
      }
      // stopped by a limit (timeout, memory, crash): the last step marker names the step that was running
      const started = [...r.stdout.matchAll(/<<<LOUPE_STEP (.+?)>>>/g)].map((m) => m[1]!);
      const at = started[started.length - 1];
      const why =
        r.status === 'timeout'
          ? `ran longer than ${Math.round(timeoutMs / 1000)} s (the kernel's time limit) and was stopped`
          : r.status === 'crashed'
            ? `stopped the kernel (${(r.stderr || 'crashed').trim().split('\n').pop()!.slice(0, 300)}), e.g. by exceeding its memory limit`
            : `failed: ${r.error ? `${r.error.ename}: ${r.error.evalue}` : r.stderr.slice(-500)}`;
      const out: StepRun[] = [];
      let hit = false;
      for (const s of steps) {
        if (hit) out.push({ specId: s.specId, name: s.name, skipped: true });
        else if (s.specId === at) {
          out.push({ specId: s.specId, name: s.name, error: `the code ${why}` });
          hit = true;
        } else out.push({ specId: s.specId, name: s.name });
      }
      if (at === '__model__') return { steps: out, model: { ok: false, error: `the model code ${why}` } };
      return { steps: out, ...(hit ? {} : { error: `the check ${why}` }) };
    },
    close: () => kernel.close(),
  };
}

/** Hash of a form's content (12 hex), as a check records it. */
export function formHash(form: DecisionForm): string {
  return createHash('sha256').update(JSON.stringify(form)).digest('hex').slice(0, 12);
}

const uniq = (xs: readonly string[]) => [...new Set(xs.map((x) => x.trim()).filter(Boolean))];

/**
 * The ancestors of a set of transform specs, each followed along its first branch (BLADE's main path), in
 * execution order (dependencies first), ROOT excluded. Cycles are cut (reported by {@link staticProblems}).
 */
export function pathTo(specIds: readonly string[], transforms: readonly BladeTransformSpec[]): BladeTransformSpec[] {
  const byId = new Map(transforms.map((t) => [t.specId, t]));
  const out: BladeTransformSpec[] = [];
  const seen = new Set<string>();
  const visit = (id: string) => {
    if (id === ROOT_SPEC_ID || seen.has(id)) return;
    seen.add(id);
    const t = byId.get(id);
    if (!t || t.isRoot) return;
    for (const d of t.branches[0]?.dependencies ?? []) visit(d);
    out.push(t);
  };
  for (const id of specIds) visit(id);
  return out;
}

/** Output columns (mapping outputs) of the ground truth's transforms, by column. */
function derivedColumns(a: BladeAnnotations): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const t of a.transforms) {
    for (const c of t.columnMappings) if (c.output) m.set(c.output, [...(m.get(c.output) ?? []), t.specId]);
  }
  return m;
}

/**
 * Checks a form without running code: required fields (BLADE's `validate_msgs`: a spec name, unique; at least one
 * verb; an output column for `derive`; a concept that is not a number; a control's rationale; a model's
 * specification and code), columns that exist (data.csv columns for `*_orig`, outputs of this ground truth's
 * transforms for `*_derived`), dependencies that exist and a DAG that stays acyclic.
 * @param a the ground truth the form joins; `dataColumns` the columns of data.csv.
 * @returns problems, each naming its field; [] when the form is sound.
 */
export function staticProblems(
  form: DecisionForm,
  a: BladeAnnotations,
  dataColumns: readonly string[],
): CheckProblem[] {
  const p: CheckProblem[] = [];
  const data = new Set(dataColumns);
  const derived = derivedColumns(a);
  const transformIds = new Set(a.transforms.map((t) => t.specId));
  const checkCols = (orig: string[], der: string[], field: string) => {
    for (const c of orig) {
      if (!data.has(c)) {
        p.push({
          field: `${field}Orig`,
          message: `column '${c}' is not a column of data.csv${derived.has(c) ? ' (it is derived: list it under derived columns)' : ''}`,
        });
      }
    }
    for (const c of der) {
      if (!derived.has(c)) {
        p.push({
          field: `${field}Derived`,
          message: `column '${c}' is produced by no transform of this ground truth${data.has(c) ? ' (it is in data.csv: list it under original columns)' : ''}`,
        });
      }
    }
  };
  if (form.kind === 'cvar') {
    if (!['IV', 'DV', 'Control'].includes(form.variableType)) {
      p.push({ field: 'variableType', message: `must be IV, DV or Control, got '${String(form.variableType)}'` });
    }
    if (!form.concept.trim()) p.push({ field: 'concept', message: 'the conceptual variable needs a concept' });
    else if (Number.isFinite(Number(form.concept.trim()))) {
      p.push({ field: 'concept', message: 'the concept must not be a number' });
    }
    if (form.variableType === 'Control' && !form.rationale.trim()) {
      p.push({ field: 'rationale', message: 'a control variable needs a rationale' });
    }
    if (form.interaction && !form.on.trim()) {
      p.push({ field: 'on', message: 'a moderator (interaction) names the variable it moderates' });
    }
    if (!form.columnsOrig.length && !form.columnsDerived.length) {
      p.push({ field: 'columns', message: 'name at least one column that operationalises the variable' });
    }
    checkCols(form.columnsOrig, form.columnsDerived, 'columns');
    if (
      a.conceptualVars.some(
        (c) => c.specId !== form.specId && c.concept.trim().toLowerCase() === form.concept.trim().toLowerCase(),
      )
    ) {
      p.push({ field: 'concept', message: `a conceptual variable '${form.concept}' already exists` });
    }
    return p;
  }
  if (form.kind === 'model') {
    if (!form.specification.trim()) {
      p.push({ field: 'specification', message: 'the model needs a specification (e.g. Linear Regression)' });
    }
    if (!form.code.trim()) {
      p.push({ field: 'code', message: 'the model needs its code (e.g. model = smf.ols(...).fit())' });
    }
    checkCols(form.columnsOrig, form.columnsDerived, 'columns');
    for (const id of form.onSpecIds) {
      if (id !== ROOT_SPEC_ID && !transformIds.has(id)) {
        p.push({ field: 'onSpecIds', message: `transform ${id} is not a spec of this ground truth` });
      }
    }
    return p;
  }
  // transform
  if (!form.specName.trim()) p.push({ field: 'specName', message: 'the transform needs a spec name' });
  else if (a.transforms.some((t) => t.specId !== form.specId && t.specName === form.specName.trim())) {
    p.push({ field: 'specName', message: `a transform named '${form.specName}' already exists` });
  }
  if (!uniq(form.transVerb).length) {
    p.push({ field: 'transVerb', message: 'name at least one transform verb (derive, filter, …)' });
  }
  if (!form.code.trim()) p.push({ field: 'code', message: 'the transform needs its code (pandas on df)' });
  if (uniq(form.transVerb)[0] === 'derive' && !form.mapping.some((m) => m.output.trim())) {
    p.push({ field: 'mapping', message: 'a derive transform names at least one output column' });
  }
  if (!form.branches.length) {
    p.push({
      field: 'branches',
      message: 'a transform joins the graph through at least one branch (ROOT for the data as loaded)',
    });
  }
  const self = form.specId;
  form.branches.forEach((b, i) => {
    if (!b.dependencies.length) {
      p.push({
        field: `branches[${i}]`,
        message: 'a branch depends on at least one spec (ROOT for the data as loaded)',
      });
    }
    for (const d of b.dependencies) {
      if (d === self) p.push({ field: `branches[${i}]`, message: 'a transform cannot depend on itself' });
      else if (d !== ROOT_SPEC_ID && !transformIds.has(d)) {
        p.push({ field: `branches[${i}]`, message: `depends on ${d}, which is not a transform of this ground truth` });
      }
    }
  });
  // acyclic: the spec's new dependencies must not be among its descendants
  if (self && transformIds.has(self)) {
    const children = new Map<string, string[]>();
    for (const t of a.transforms) {
      for (const b of t.branches) {
        for (const d of b.dependencies) children.set(d, [...(children.get(d) ?? []), t.specId]);
      }
    }
    const below = new Set<string>();
    const stack = [...(children.get(self) ?? [])];
    while (stack.length) {
      const x = stack.pop()!;
      if (below.has(x)) continue;
      below.add(x);
      stack.push(...(children.get(x) ?? []));
    }
    const byId = new Map(a.transforms.map((t) => [t.specId, t]));
    form.branches.forEach((b, i) => {
      for (const d of b.dependencies) {
        if (below.has(d)) {
          p.push({
            field: `branches[${i}]`,
            message: `depending on ${byId.get(d)?.specName || d} would make a dependency cycle (it depends on this transform)`,
          });
        }
      }
    });
  }
  return p;
}

/**
 * Checks a form: {@link staticProblems}, then the executed checks. A transform runs on data.csv along each branch
 * (its dependencies' path, then its own code): the columns and rows after it, what it added or removed, errors;
 * its mapping's input columns must exist before it and its output columns after it. A model is fitted on the
 * table of its transforms' path. A conceptual variable has no code to run.
 * @param ctx the ground truth, data.csv and an executor ({@link startDecisionExecutor}).
 * @returns the result (never throws for bad code: errors are in the result).
 */
export async function checkDecision(
  form: DecisionForm,
  ctx: { annotations: BladeAnnotations; dataPath: string; executor: DecisionExecutor },
): Promise<CheckResult> {
  const t0 = Date.now();
  const data = { columns: [] as string[], rows: 0 };
  const probe = await ctx.executor.run(ctx.dataPath, [{ specId: ROOT_SPEC_ID, name: 'ROOT', code: 'df = df' }]);
  data.columns = probe.steps[0]?.columns ?? [];
  data.rows = probe.steps[0]?.rows ?? 0;
  const problems = staticProblems(form, ctx.annotations, data.columns);
  const branches: BranchRun[] = [];
  let model: CheckResult['model'];
  const stepOf = (t: BladeTransformSpec) => ({ specId: t.specId, name: t.specName || t.specId, code: t.code });
  if (form.kind === 'transform' && form.code.trim() && !problems.some((x) => x.field.startsWith('branches'))) {
    const self = form.specId ?? '__authored__';
    const others = ctx.annotations.transforms.filter((t) => t.specId !== form.specId);
    for (let i = 0; i < form.branches.length; i++) {
      const deps = form.branches[i]!.dependencies;
      const path = pathTo(deps, others);
      const r = await ctx.executor.run(ctx.dataPath, [
        ...path.map(stepOf),
        { specId: self, name: form.specName || 'this transform', code: form.code },
      ]);
      const mine = r.steps[r.steps.length - 1];
      const before = r.steps.length > 1 ? r.steps[r.steps.length - 2] : { columns: data.columns, rows: data.rows };
      const run: BranchRun = { branch: i, dependencies: deps, steps: r.steps };
      const failed = r.steps.find((s) => s.error);
      if (failed && failed.specId !== self) {
        run.error = `the branch's path fails before this transform, at ${failed.name}: ${failed.error}`;
      } else if (mine?.error) run.error = mine.error;
      else if (r.error) run.error = r.error;
      if (mine?.columns) {
        run.columns = mine.columns;
        run.rows = mine.rows!;
        run.added = mine.columns.filter((c) => !(before?.columns ?? []).includes(c));
        run.removed = (before?.columns ?? []).filter((c) => !mine.columns!.includes(c));
        form.mapping.forEach((m, k) => {
          for (const c of m.inputs) {
            if (!(before?.columns ?? []).includes(c)) {
              problems.push({
                field: `mapping[${k}].inputs`,
                message: `branch ${i + 1}: input column '${c}' does not exist before this transform (columns: ${(before?.columns ?? []).join(', ')})`,
              });
            }
          }
          if (m.output.trim() && !mine.columns!.includes(m.output.trim())) {
            problems.push({
              field: `mapping[${k}].output`,
              message: `branch ${i + 1}: the code does not produce output column '${m.output}'`,
            });
          }
        });
      }
      branches.push(run);
    }
  } else if (form.kind === 'model' && form.code.trim()) {
    const path = pathTo(form.onSpecIds, ctx.annotations.transforms);
    const r = await ctx.executor.run(ctx.dataPath, path.map(stepOf), form.code);
    const last = r.steps[r.steps.length - 1] ?? { columns: data.columns, rows: data.rows };
    const failed = r.steps.find((s) => s.error);
    const run: BranchRun = {
      branch: 0,
      dependencies: form.onSpecIds,
      steps: r.steps,
      ...(last.columns ? { columns: last.columns, rows: last.rows! } : {}),
    };
    if (failed) run.error = `the table's path fails at ${failed.name}: ${failed.error}`;
    else if (r.error) run.error = r.error;
    branches.push(run);
    model =
      r.model ?? (failed || r.error ? { ok: false, error: 'not fitted: the table could not be built' } : undefined);
    for (const c of [...form.columnsOrig, ...form.columnsDerived]) {
      if (last.columns && !last.columns.includes(c)) {
        problems.push({ field: 'columns', message: `column '${c}' is not in the table the model is fitted on` });
      }
    }
  } else if (form.kind === 'cvar' && form.columnsDerived.length) {
    // the derived columns must come out of their transforms' path
    const derived = derivedColumns(ctx.annotations);
    const producers = uniq(form.columnsDerived.flatMap((c) => (derived.get(c) ?? []).slice(0, 1)));
    const r = await ctx.executor.run(ctx.dataPath, pathTo(producers, ctx.annotations.transforms).map(stepOf));
    const last = r.steps[r.steps.length - 1];
    const failed = r.steps.find((s) => s.error);
    const run: BranchRun = {
      branch: 0,
      dependencies: producers,
      steps: r.steps,
      ...(last?.columns ? { columns: last.columns, rows: last.rows! } : {}),
    };
    if (failed) run.error = `the columns' path fails at ${failed.name}: ${failed.error}`;
    branches.push(run);
    for (const c of form.columnsDerived) {
      if (last?.columns && !last.columns.includes(c)) {
        problems.push({ field: 'columnsDerived', message: `column '${c}' is not produced when its transforms run` });
      }
    }
  }
  const ok = problems.length === 0 && branches.every((b) => !b.error) && (form.kind !== 'model' || !!model?.ok);
  return {
    ok,
    formHash: formHash(form),
    problems,
    branches,
    ...(model ? { model } : {}),
    data,
    durationMs: Date.now() - t0,
  };
}

/**
 * The `annotations.csv` cells of a form: `spec_id` and the spec JSON in BLADE's field names (columns with the 🟨 /
 * 🟩 prefixes, `branches` as `{dependencies, condition}`), with a `time_stamp` in BLADE's format and the author.
 * @param specId the spec's id (a new uuid hex when the form has none).
 */
export function formToRow(
  form: DecisionForm,
  specId: string,
  author: string,
  annotations: BladeAnnotations,
  now = new Date(),
): Record<string, string> {
  const pad = (n: number) => String(n).padStart(2, '0');
  const h12 = now.getUTCHours() % 12 || 12;
  const stamp = `${pad(now.getUTCMonth() + 1)}-${pad(now.getUTCDate())}-${now.getUTCFullYear()} at ${pad(h12)}:${pad(now.getUTCMinutes())}:${pad(now.getUTCSeconds())} ${now.getUTCHours() < 12 ? 'AM' : 'PM'}`;
  const base = { time_stamp: stamp, tags: [] as string[], read_only_tags: ['loupe'], is_negative: false };
  const derived = derivedColumns(annotations);
  const producersOf = (cols: string[]) => uniq(cols.flatMap((c) => derived.get(c) ?? []));
  if (form.kind === 'cvar') {
    const ids = producersOf(form.columnsDerived);
    return {
      spec_id: specId,
      conceptual_spec_json: JSON.stringify({
        ...base,
        variable_type: form.variableType,
        concept: form.concept.trim(),
        final_columns_derived_spec_ids: uniq([...ids, ...pathTo(ids, annotations.transforms).map((t) => t.specId)]),
        final_columns_orig: form.columnsOrig.map((c) => ORIG_COL_PREFIX + c),
        final_columns_derived: form.columnsDerived.map((c) => DERIVED_COL_PREFIX + c),
        final_columns_leaf_spec_ids: ids,
        column_rationales: {},
        interaction: form.interaction,
        rationale: form.rationale,
        on: form.interaction ? form.on : '',
        random_effect: false,
        annotator: author,
      }),
    };
  }
  if (form.kind === 'model') {
    const ids = producersOf(form.columnsDerived);
    return {
      spec_id: specId,
      model_spec_json: JSON.stringify({
        ...base,
        specification: form.specification.trim(),
        spec_name:
          form.specName.trim() ||
          form.specification
            .trim()
            .toLowerCase()
            .replace(/[^\w\s]/g, '')
            .split(/\s+/)
            .slice(0, 10)
            .join('_'),
        rationale: form.rationale,
        dependencies: [],
        code: form.code,
        associated_columns_derived_spec_ids: uniq([
          ...ids,
          ...pathTo(ids, annotations.transforms).map((t) => t.specId),
        ]),
        associated_columns_orig: form.columnsOrig.map((c) => ORIG_COL_PREFIX + c),
        associated_columns_derived: form.columnsDerived.map((c) => DERIVED_COL_PREFIX + c),
        associated_columns_leaf_spec_ids: uniq(form.onSpecIds.filter((x) => x !== ROOT_SPEC_ID)),
        associated_specified_spec_ids: ids,
        annotator: author,
      }),
    };
  }
  return {
    spec_id: specId,
    transform_spec_json: JSON.stringify({
      ...base,
      specification: form.specification,
      spec_name: form.specName.trim(),
      trans_verb: uniq(form.transVerb),
      code: form.code,
      rationale: form.rationale,
      conditions: '',
      input_cols_to_output_col_mapping: form.mapping.map((m) => [uniq(m.inputs), m.output.trim()]),
      branches: form.branches.map((b) => ({ dependencies: uniq(b.dependencies), condition: b.condition })),
    }),
  };
}

/** Adds a node and its dependency links to the `dependency_graph` cell (networkx node-link JSON), when it has one. */
function withGraphNode(cell: string, specId: string, deps: string[]): string {
  try {
    const g = JSON.parse(cell) as { nodes?: Array<{ id: string }>; links?: Array<{ source: string; target: string }> };
    if (!Array.isArray(g.nodes) || !Array.isArray(g.links)) return cell;
    if (!g.nodes.some((n) => n.id === specId)) g.nodes.push({ id: specId });
    g.links = g.links.filter((l) => l.target !== specId);
    for (const d of deps) g.links.push({ source: d, target: specId });
    return JSON.stringify(g, null, 2);
  } catch {
    return cell;
  }
}

/**
 * Saves an authored (or edited) decision as a new ground-truth version: the form's row is added (or replaces the
 * row of its spec id) in the parent version's CSV, and the whole text is stored as the next version in one
 * transaction ({@link BladeGtStore.save}).
 * @param check the result of {@link checkDecision} for exactly this form.
 * @returns the new version and the spec id.
 * @throws LoupeInputError (nothing saved) when the form was not checked, changed since its check, or its check
 *   found problems (each listed), or the new CSV does not parse as BLADE ground truth.
 */
export async function saveDecision(o: {
  gts: BladeGtStore;
  dataset: string;
  shippedCsv: string;
  parent: number;
  form: DecisionForm;
  check: CheckResult | undefined;
  author: string;
  note?: string;
}): Promise<{ version: BladeGtVersion; specId: string }> {
  const what = `the ${o.form.kind === 'cvar' ? 'conceptual variable' : o.form.kind}`;
  if (!o.check) throw new LoupeInputError(what, 'run its check before saving; nothing saved');
  if (o.check.formHash !== formHash(o.form)) {
    throw new LoupeInputError(what, 'changed since its check: run the check again; nothing saved');
  }
  if (!o.check.ok) {
    const msgs = [
      ...o.check.problems.map((p) => `${p.field}: ${p.message}`),
      ...o.check.branches.filter((b) => b.error).map((b) => `branch ${b.branch + 1}: ${b.error}`),
      ...(o.check.model && !o.check.model.ok ? [`model: ${o.check.model.error}`] : []),
    ];
    throw new LoupeInputError(what, `its check failed; nothing saved:\n  ${msgs.join('\n  ')}`);
  }
  if (!o.author.trim()) throw new LoupeInputError(what, 'a version needs an author; nothing saved');
  const parentCsv = o.parent === 0 ? o.shippedCsv : (await o.gts.get(o.dataset, o.parent))?.csv;
  if (parentCsv === undefined) {
    throw new LoupeInputError(
      `ground-truth version ${o.parent}`,
      `dataset ${o.dataset} has no such version; nothing saved`,
    );
  }
  const { annotations } = parseGtCsv(parentCsv, `${o.dataset}/annotations.csv@v${o.parent}`);
  const specId = o.form.specId ?? randomUUID().replace(/-/g, '');
  const row = formToRow(o.form, specId, o.author.trim(), annotations);
  const col = Object.keys(row).find((k) => k !== 'spec_id')!;
  const csv = editGtCsv(parentCsv, (rows) => {
    const at = rows.findIndex((r) => r.spec_id === specId && (r[col] ?? '') !== '');
    if (at >= 0) rows[at] = { ...rows[at], ...row };
    else rows.push(row);
    if (o.form.kind === 'transform') {
      const g = rows.find((r) => (r.dependency_graph ?? '').trim() !== '');
      if (g) {
        g.dependency_graph = withGraphNode(
          g.dependency_graph!,
          specId,
          uniq(o.form.branches.flatMap((b) => b.dependencies)),
        );
      }
    }
  });
  const label =
    o.form.kind === 'transform' ? o.form.specName : o.form.kind === 'cvar' ? o.form.concept : o.form.specification;
  const version = await o.gts.save({
    dataset: o.dataset,
    csv,
    author: o.author,
    note: o.note?.trim() || `${o.form.specId ? 'edited' : 'added'} ${o.form.kind} ${label}`,
    parent: o.parent,
    shippedCsv: o.shippedCsv,
  });
  return { version, specId };
}

/** The dataset folder of a data.csv path (the executor's read-only folder). @throws LoupeInputError when missing. */
export function dataDirOf(dataPath: string): string {
  if (!existsSync(dataPath)) throw new LoupeInputError(dataPath, 'data.csv is missing: the check runs the code on it');
  return dirname(dataPath);
}
