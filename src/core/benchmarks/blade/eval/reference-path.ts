/**
 * One complete ground-truth analysis of a BLADE dataset — the transforms along one branch of the
 * spec DAG, one annotated model and its conceptual variables — rendered in BLADE's submission
 * format (`EntireAnalysis`, spec §1.2.5). The BLADE reference agent submits it; scoring it must give
 * transform precision 1.0.
 */
import type { BladeAnnotations, BladeModelSpec } from '../items.ts';
import { LoupeInputError } from '../../../util/errors.ts';
import { DiGraph } from './graph.ts';
import { allPathGraphs, leafSpecs, pathGraphsFromLeaf, ROOT_SPEC_ID, type TSpec } from './dataflow.ts';
import { gtModelCvars } from './semantic.ts';
import { gtSpecsFromAnnotations } from './transforms.ts';
import { scoreBladeRun, type BladeAnalysis, type BladeGroundTruth } from './score.ts';
import type { BladePython } from './python.ts';

export interface ReferencePath {
  /** Which scope produced it (`auto` resolves to one of these). */
  scope: 'model' | 'single-path';
  /** The analysis in BLADE's submission format. */
  analysis: BladeAnalysis;
  /** GT transform spec ids used, in execution order (ROOT excluded). */
  specIds: string[];
  /** GT model spec used. */
  modelSpecId: string;
  /** GT cvar spec ids whose descriptions were used. */
  cvarSpecIds: string[];
}

/**
 * BLADE's ground-truth execution renames `dfX = ….groupby(…)` targets to `dfX_grp` for later specs
 * (BLADE `parse_code.process_groupby_code`); the reference code does the same so that later specs
 * that use `df_grp` run.
 */
export function renameGroupbyTargets(code: string): string {
  return code.replace(/^(\s*)(df\w*)(\s*=\s*[^\n]*\.groupby\()/gm, (m, ind: string, name: string, rest: string) =>
    name.endsWith('_grp') ? m : `${ind}${name}_grp${rest}`,
  );
}

const indent = (code: string) =>
  code
    .split('\n')
    .map((l) => (l.trim() ? `    ${l}` : ''))
    .join('\n');

/**
 * Builds one ground-truth path as a submission.
 * @param opts.model index (or spec id) of the GT model to use; default: the first model whose
 *   variables have exactly one DV and an IV (a submission has one DV) and whose leaf specs exist. `scope`: `model` (every spec the model's columns need, which may
 *   span several GT paths), `single-path` (exactly one GT path: always transform precision 1.0, but
 *   it may miss some model columns) or `auto` (default: `model` when no row-changing spec in it
 *   runs beside specs that the GT computes without it — so its states are GT states — else
 *   `single-path`). `path`: index of the alternative to use
 *   (default: the one covering most of the model's annotated specs).
 *   Use {@link verifiedReferencePath} to get the `model` scope when it scores 1.0 and `single-path` otherwise.
 * @throws LoupeInputError when the annotations have no model spec.
 */
export function referencePath(
  annotations: BladeAnnotations,
  opts: { model?: number | string; path?: number; scope?: 'auto' | 'model' | 'single-path' } = {},
): ReferencePath {
  const specs = gtSpecsFromAnnotations(annotations);
  const models = annotations.models;
  if (!models.length) throw new LoupeInputError(annotations.file, 'no model specs: cannot build a reference path');
  let model: BladeModelSpec | undefined;
  if (typeof opts.model === 'string') model = models.find((m) => m.specId === opts.model);
  else if (typeof opts.model === 'number') model = models[opts.model];
  else {
    // a submission has exactly one DV: prefer models whose variables have one DV and an IV
    const oneDv = (m: BladeModelSpec) => {
      const cv = gtModelCvars(m, annotations.conceptualVars);
      return cv.filter((c) => c.effectiveType === 'DV').length === 1 && cv.some((c) => c.effectiveType === 'IV');
    };
    const hasPath = (m: BladeModelSpec) => m.leafSpecIds.some((id) => specs.has(id));
    model = models.find((m) => hasPath(m) && oneDv(m)) ?? models.find(oneDv) ?? models.find(hasPath) ?? models[0];
  }
  if (!model) throw new LoupeInputError(`model ${String(opts.model)}`, 'no such model spec');
  const wanted = new Set([...model.derivedSpecIds, ...model.leafSpecIds].filter((id) => id !== ROOT_SPEC_ID));

  const singlePath = (): string[] => {
    // One alternative path of the GT (exactly one of the graphs the evaluator executes), chosen to
    // cover the specs annotated for this model best. Value matching is path-dependent (spec
    // §1.4.2), so this always reproduces GT states: transform precision 1.0.
    const graphs = allPathGraphs(leafSpecs(specs), specs);
    if (!graphs.length) throw new LoupeInputError(annotations.file, 'no transform paths');
    const pick = opts.path !== undefined ? graphs[opts.path] : bestCover(graphs, wanted);
    if (!pick) throw new LoupeInputError(`path ${String(opts.path)}`, `only ${graphs.length} alternative paths`);
    return pick.topologicalSort().filter((n) => n !== ROOT_SPEC_ID);
  };
  const modelPath = (): { order: string[]; graph: DiGraph } => {
    // Everything the model uses: the model's leaf specs joined under a virtual leaf, one branch per
    // multi-branch spec, alternatives writing the same column dropped (e.g. fill with mean vs median).
    const leaves = model.leafSpecIds.filter((id) => specs.has(id) && id !== ROOT_SPEC_ID);
    const withLeaf = new Map(specs);
    withLeaf.set(VIRTUAL, {
      id: VIRTUAL,
      name: VIRTUAL,
      verb: 'derive',
      code: '',
      mapping: [],
      branches: [leaves.length ? leaves : leafSpecs(specs).map((l) => l.id)],
    });
    const graphs = pathGraphsFromLeaf(withLeaf.get(VIRTUAL)!, withLeaf);
    const pick = opts.path !== undefined ? graphs[opts.path] : bestCover(graphs, wanted);
    if (!pick) throw new LoupeInputError(`path ${String(opts.path)}`, `only ${graphs.length} alternative paths`);
    const order: string[] = [];
    const dropped = new Set<string>();
    for (const id of pick.topologicalSort()) {
      if (id === VIRTUAL || id === ROOT_SPEC_ID) continue;
      const s = specs.get(id) as TSpec;
      if (pick.predecessors(id).some((p) => dropped.has(p))) {
        dropped.add(id);
        continue;
      }
      const outs = new Set(s.mapping.map(([, o]) => o).filter((o) => o));
      const anc = pick.ancestors(id);
      if (order.some((k) => !anc.has(k) && (specs.get(k) as TSpec).mapping.some(([, o]) => o && outs.has(o)))) {
        dropped.add(id);
      } else order.push(id);
    }
    return { order, graph: pick };
  };

  const scope = opts.scope ?? 'auto';
  let order: string[];
  let used: 'model' | 'single-path';
  if (scope === 'single-path') {
    order = singlePath();
    used = 'single-path';
  } else {
    const m = modelPath();
    if (scope === 'model' || rowSafe(m.order, m.graph, specs)) {
      order = m.order;
      used = 'model';
    } else {
      order = singlePath();
      used = 'single-path';
    }
  }
  const codes = order.map((id) => (specs.get(id) as TSpec).code).filter((c) => c.trim());
  const body = codes.map(renameGroupbyTargets).join('\n');
  const transformCode = `def transform(df):\n${indent(body || 'df = df')}\n    return df\n`;
  let modelBody = model.code.trim() || 'pass';
  // some annotations call the frame `data`
  if (/\bdata\b/.test(modelBody) && !/\bdata\s*=/.test(modelBody)) modelBody = `data = df\n${modelBody}`;
  const modelCode = `def model(df):\n${indent(modelBody)}\n    return None\n`;

  const cvars = gtModelCvars(model, annotations.conceptualVars);
  const modelCols = new Set([...model.columnsOrig, ...model.columnsDerived]);
  const colsOf = (c: (typeof cvars)[number]) => {
    const all = [...c.columnsDerived, ...c.columnsOrig];
    const used = all.filter((x) => modelCols.has(x));
    return used.length ? used : all;
  };
  const ivs = cvars.filter((c) => c.effectiveType === 'IV');
  const dv =
    cvars.find((c) => c.effectiveType === 'DV') ?? annotations.conceptualVars.find((c) => c.effectiveType === 'DV');
  const controls = cvars.filter((c) => c.effectiveType === 'Control' || c.effectiveType === 'Moderator');
  return {
    analysis: {
      cvars: {
        ivs: ivs.map((c) => ({ description: c.concept, columns: colsOf(c) })),
        dv: { description: dv?.concept ?? '', columns: dv ? colsOf(dv) : [] },
        controls: controls.map((c) => ({
          description: c.concept,
          is_moderator: c.effectiveType === 'Moderator',
          moderator_on: c.effectiveType === 'Moderator' ? c.on : undefined,
          columns: colsOf(c),
        })),
      },
      transform_code: transformCode,
      m_code: modelCode,
    },
    scope: used,
    specIds: order,
    modelSpecId: model.specId,
    cvarSpecIds: [...ivs, ...(dv ? [dv] : []), ...controls].map((c) => c.specId),
  };
}

const VIRTUAL = '__reference_leaf__';
const ROW_VERBS = new Set(['filter', 'groupby', 'deduplicate', 'orderby', 'other', 'join', 'other_impact_rows']);

/**
 * True when every row-changing spec of `order` is an ancestor or a descendant of every other spec
 * of it in `graph`: then each spec runs on the same rows as in some GT path.
 */
function rowSafe(order: string[], graph: DiGraph, specs: Map<string, TSpec>): boolean {
  const anc = new Map(order.map((id) => [id, graph.ancestors(id)]));
  for (const w of order) {
    if (!ROW_VERBS.has((specs.get(w) as TSpec).verb)) continue;
    for (const x of order) if (x !== w && !anc.get(x)!.has(w) && !anc.get(w)!.has(x)) return false;
  }
  return true;
}

function bestCover(graphs: DiGraph[], wanted: Set<string>): DiGraph | undefined {
  const score = (g: DiGraph) => {
    const nodes = [...g.nodes.keys()].filter((n) => n !== ROOT_SPEC_ID && !n.startsWith('__'));
    return 1000 * nodes.filter((n) => wanted.has(n)).length - nodes.filter((n) => !wanted.has(n)).length;
  };
  return graphs.map((g, i) => ({ g, i, s: score(g) })).sort((a, b) => b.s - a.s || a.i - b.i)[0]?.g;
}

/**
 * The reference path to submit: the `model` scope when its transforms score value precision 1.0
 * against the ground truth, else the `single-path` scope (which always does).
 * @returns the path, the scope used and the measured transform-value precision.
 */
export async function verifiedReferencePath(
  gt: BladeGroundTruth,
  python: BladePython,
  opts: { model?: number | string } = {},
): Promise<ReferencePath & { transformValuePrecision: number }> {
  let last: (ReferencePath & { transformValuePrecision: number }) | undefined;
  for (const scope of ['model', 'single-path'] as const) {
    const rp = referencePath(gt.annotations, { ...opts, scope });
    const s = await scoreBladeRun({ analysis: rp.analysis }, gt, { python });
    last = { ...rp, transformValuePrecision: s.metrics.transformValue.precision };
    if (s.metrics.transformValue.precision === 1) return last;
  }
  return last!;
}
