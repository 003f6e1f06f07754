/**
 * Ground-truth and submission transform states and their matching (value hashes and fuzzy graph
 * isomorphism). Source: spec §1.4.1–§1.4.4, BLADE `dataflow.py::build_state_data(_from_transform_return)`
 * and `eval/match/transform.py::TransformMatcher`.
 */
import type { BladeAnnotations } from '../items.ts';
import { DiGraph, isIsomorphic } from './graph.ts';
import {
  allPathGraphs,
  buildDatasetState,
  DEFAULT_DATAFLOW_OPTIONS,
  leafSpecs,
  nodeStateFrom,
  POST_GROUPBY,
  ROOT_SPEC_ID,
  type ColState,
  type DataflowOptions,
  type NodeState,
  type TransformDatasetState,
  type TSpec,
} from './dataflow.ts';
import type { BladePython, ExecutedUnit } from './python.ts';

/** Converts parsed annotations (suites parser) to evaluator specs; ROOT gets id `ROOT_SPEC_ID`. */
export function gtSpecsFromAnnotations(a: BladeAnnotations): Map<string, TSpec> {
  const m = new Map<string, TSpec>();
  for (const t of a.transforms) {
    const id = t.isRoot ? ROOT_SPEC_ID : t.specId;
    m.set(id, {
      id,
      name: t.isRoot ? 'ROOT' : t.specName || t.specId,
      verb: t.isRoot ? '' : t.verb,
      code: t.isRoot ? '' : t.code,
      mapping: t.columnMappings.map((c) => [c.inputs, c.output] as [string[], string]),
      branches: t.branches.map((b) => b.dependencies),
    });
  }
  if (!m.has(ROOT_SPEC_ID)) {
    m.set(ROOT_SPEC_ID, { id: ROOT_SPEC_ID, name: 'ROOT', verb: '', code: '', mapping: [], branches: [] });
  }
  return m;
}

/** States of one path graph by executing its specs' code cumulatively (spec §1.4.2 "Execution"). */
function pathExecutor(py: BladePython, dataPath: string, specs: Map<string, TSpec>) {
  return async (_path: DiGraph, specIds: string[]) => {
    const withCode = specIds.filter((id) => specs.get(id)?.code.trim());
    const res = await py.runPath(
      dataPath,
      withCode.map((id) => ({ id, code: specs.get(id)!.code })),
    );
    const states = new Map<string, NodeState>();
    const failures: { specId: string; message: string }[] = [];
    withCode.forEach((id, i) => {
      const r = res[i] ?? null;
      if (r && r.kind === 'error') failures.push({ specId: id, message: r.message });
      const ns = nodeStateFrom(r);
      if (ns) states.set(id, ns);
    });
    return { states, failures };
  };
}

/**
 * Ground-truth transform state over every alternative path (spec §1.4.2).
 * @param leaves default: the DAG's leaves. `origCols`: data.csv columns.
 */
export async function buildGroundTruthTransforms(
  py: BladePython,
  dataPath: string,
  specs: Map<string, TSpec>,
  origCols: string[],
  opts: DataflowOptions = DEFAULT_DATAFLOW_OPTIONS,
  leaves?: TSpec[],
): Promise<TransformDatasetState> {
  const paths = allPathGraphs(leaves ?? leafSpecs(specs), specs);
  return buildDatasetState(paths, specs, origCols, pathExecutor(py, dataPath, specs), opts);
}

/** A unit as the matcher sees it: BLADE's `TransformDataReturn` plus our provenance. */
export interface TransformUnit {
  verb: string;
  code: string;
  mapping: [string[], string][];
  groupbyCols: string[];
  state: NodeState | undefined;
  /** How the unit was obtained. */
  source: 'execution' | 'llm-fallback' | 'execution-unsplit';
  note?: string;
}

/** Converts driver units to {@link TransformUnit}s. */
export function unitsFromExecution(units: ExecutedUnit[]): TransformUnit[] {
  return units.map((u) => ({
    verb: u.verb,
    code: u.code,
    mapping: u.mapping,
    groupbyCols: u.groupbyCols,
    state: nodeStateFrom(u.state),
    source: u.unsplittable ? 'execution-unsplit' : 'execution',
    note: u.unsplittable ?? u.note,
  }));
}

/**
 * The submission's linear spec chain (BLADE `build_state_data_from_transform_return`): node
 * `node_{i}_{verb}`; a groupby unit (or one with group keys) becomes `node_i_groupby` +
 * `node_i_post_groupby`.
 */
export function submissionSpecs(
  units: TransformUnit[],
  opts: DataflowOptions = DEFAULT_DATAFLOW_OPTIONS,
): { specs: Map<string, TSpec>; states: Map<string, NodeState>; leaf: TSpec } {
  const chain: TSpec[] = [{ id: ROOT_SPEC_ID, name: 'ROOT', verb: '', code: '', mapping: [], branches: [] }];
  const states = new Map<string, NodeState>();
  const last = () => chain[chain.length - 1]!.id;
  units.forEach((unit, i) => {
    const u = opts.unitOutputs === 'one-per-input-set' ? { ...unit, mapping: onePerInputSet(unit.mapping) } : unit;
    if (u.verb === 'groupby' || u.groupbyCols.length) {
      const gid = `node_${i}_groupby`;
      chain.push({
        id: gid,
        name: gid,
        verb: 'groupby',
        code: '',
        mapping: [[u.groupbyCols, '']],
        branches: [[last()]],
      });
      const pid = `node_${i}_${POST_GROUPBY}`;
      chain.push({
        id: pid,
        name: pid,
        verb: POST_GROUPBY,
        code: u.code,
        mapping: u.mapping.map(([a, b]) => [a, b === 'ALL' ? '' : b]),
        branches: [[gid]],
      });
      if (u.state) states.set(pid, u.state);
      return;
    }
    let mapping: [string[], string][];
    const wholeTable =
      u.verb === 'filter' || (opts.wholeTableVerbs === 'fixed' && (u.verb === 'orderby' || u.verb === 'deduplicate'));
    if (wholeTable) mapping = u.mapping.map(([a, b]) => [a, b === 'ALL' ? '' : b]);
    else if (u.verb === 'orderby' || u.verb === 'deduplicate') {
      // BLADE (§1.7 #15): orderby {keys: 'ALL'} → one unit per df column; deduplicate → empty mapping.
      mapping = u.verb === 'orderby' ? (u.state?.columns ?? []).map((c) => [u.mapping[0]?.[0] ?? [], c]) : [];
    } else mapping = u.mapping.filter(([, b]) => b !== '');
    const id = `node_${i}_${u.verb}`;
    chain.push({ id, name: id, verb: u.verb, code: u.code, mapping, branches: [[last()]] });
    if (u.state) states.set(id, u.state);
  });
  const specs = new Map(chain.map((s) => [s.id, s]));
  return { specs, states, leaf: chain[chain.length - 1]! };
}

/**
 * A unit's mapping as BLADE's `column_mapping: Dict[FrozenSet[str], str]` holds it: one output per input set, the
 * last output written at the place of the first (Python dict semantics). Issue 21 item 9.
 * @param mapping `[inputColumns, outputColumn]` pairs in the unit's order.
 * @returns the pairs left, in first-occurrence order of their input sets.
 */
export function onePerInputSet(mapping: readonly [string[], string][]): [string[], string][] {
  const byKey = new Map<string, [string[], string]>();
  for (const [ins, out] of mapping) {
    const key = [...new Set(ins)].sort().join('\u0000');
    const had = byKey.get(key);
    if (had) had[1] = out;
    else byKey.set(key, [ins, out]);
  }
  return [...byKey.values()];
}

/** Submission transform state from its units (one linear path). */
export async function buildSubmissionTransforms(
  units: TransformUnit[],
  origCols: string[],
  opts: DataflowOptions = DEFAULT_DATAFLOW_OPTIONS,
): Promise<TransformDatasetState> {
  const { specs, states, leaf } = submissionSpecs(units, opts);
  const paths = leaf.id === ROOT_SPEC_ID ? [] : allPathGraphs([leaf], specs);
  return buildDatasetState(paths, specs, origCols, async () => ({ states, failures: [] }), opts);
}

/** Matched expanded spec ids on each side (ROOT included, as BLADE's sets are). */
export interface TransformMatch {
  /** Shared value hashes / graph hashes. */
  valueHashes: string[];
  graphHashes: string[];
  vspecs1: Set<string>;
  vspecs2: Set<string>;
  gspecs1: Set<string>;
  gspecs2: Set<string>;
}

const ancestorMemo = new WeakMap<DiGraph, Map<string, string[]>>();

/** Expanded spec ids of a column pointer and all its ancestors (memoised per column graph). */
function specIdsUpstream(g: DiGraph, nid: string): string[] {
  let m = ancestorMemo.get(g);
  if (!m) ancestorMemo.set(g, (m = new Map()));
  let ids = m.get(nid);
  if (!ids) {
    const set = new Set<string>();
    for (const a of g.ancestors(nid)) {
      const id = g.nodes.get(a)!.expanded_spec_id;
      if (id) set.add(id);
    }
    const own = g.nodes.get(nid)?.expanded_spec_id;
    if (own) set.add(own);
    ids = [...set];
    m.set(nid, ids);
  }
  return ids;
}

function matchedIds(states: ColState[], side: TransformDatasetState, withInput: boolean, into: Set<string>): void {
  for (const st of states) {
    const p = side.paths[st.pathIndex]!;
    for (const id of specIdsUpstream(withInput ? p.colGraphWithInput : p.colGraph, st.nid)) into.add(id);
    into.add(st.expandedSpecId);
  }
}

/**
 * Value match and fuzzy graph match (spec §1.4.4, paper App. A.4.1): a shared value hash marks the
 * column's spec and all its ancestors (column graph without input edges); a shared graph hash
 * whose subgraphs are isomorphic (same verbs, same data-flow shape from the same raw columns)
 * marks them in the graph with input edges. With `keep-all` collisions every isomorphic pair of
 * entries counts (BLADE: only the first pair of the one stored entry).
 */
export function matchTransforms(gt: TransformDatasetState, sub: TransformDatasetState): TransformMatch {
  const valueHashes = [...gt.valueHashes.keys()].filter((h) => sub.valueHashes.has(h));
  const graphHashes = [...gt.graphHashes.keys()].filter((h) => sub.graphHashes.has(h));
  const vspecs1 = new Set<string>();
  const vspecs2 = new Set<string>();
  for (const h of valueHashes) {
    matchedIds(gt.valueHashes.get(h)!, gt, false, vspecs1);
    matchedIds(sub.valueHashes.get(h)!, sub, false, vspecs2);
  }
  const gspecs1 = new Set<string>();
  const gspecs2 = new Set<string>();
  for (const h of graphHashes) {
    for (const e1 of gt.graphHashes.get(h)!) {
      for (const e2 of sub.graphHashes.get(h)!) {
        if (!isIsomorphic(e1.graph, e2.graph)) continue;
        matchedIds(e1.states, gt, true, gspecs1);
        matchedIds(e2.states, sub, true, gspecs2);
      }
    }
  }
  return { valueHashes, graphHashes, vspecs1, vspecs2, gspecs1, gspecs2 };
}
