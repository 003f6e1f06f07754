/**
 * BLADE transform data flow: alternative path graphs of the ground-truth spec DAG, expansion into
 * one node per column mapping, column graphs (with and without input edges), per-column value
 * states and graph hashes. Source: spec §1.4.2–§1.4.3, BLADE
 * `data/process/transforms/{graph_paths,expand_graph,dataflow}.py` (re-implemented, not copied).
 */
import { DiGraph, isIsomorphic, wlHash } from './graph.ts';
import type { StepState } from './python.ts';

export const ROOT_SPEC_ID = 'ROOT_SPEC_ID';
export const POST_GROUPBY = 'post_groupby';

/** A transform spec as the evaluator needs it (ground truth or submission unit). */
export interface TSpec {
  id: string;
  /** Expanded names derive from this for filter/groupby (coverage keys on names, spec §1.4.8). */
  name: string;
  /** First `trans_verb`; '' for ROOT. */
  verb: string;
  code: string;
  /** `[inputs, output]`, output '' = whole table. */
  mapping: [string[], string][];
  /** Alternative dependency sets; `[]` for ROOT. */
  branches: string[][];
}

/** Hashes of the df a spec produced (`hashes` null when the result was a pandas GroupBy). */
export interface NodeState {
  columns: string[];
  hashes: Record<string, string> | null;
  catHashes: Record<string, string> | null;
}

/** One column pointer with a value state. */
export interface ColState {
  col: string;
  /** Column-graph node id `{col}__{expandedSpecId}`. */
  nid: string;
  expandedSpecId: string;
  valueHash: string;
  catHash: string;
  /** Index of the path graph in {@link TransformDatasetState.paths}. */
  pathIndex: number;
  graphHash?: string;
}

export interface PathInfo {
  /** Spec ids of this alternative path in topological order. */
  specIds: string[];
  colGraph: DiGraph;
  colGraphWithInput: DiGraph;
  states: ColState[];
}

/** Everything matched for one side (GT or submission), like BLADE's `TransformDatasetState`. */
export interface TransformDatasetState {
  expandedIdToSpec: Map<string, TSpec>;
  valueHashes: Map<string, ColState[]>;
  catHashes: Map<string, ColState[]>;
  /** WL hash → entries; each entry holds one representative subgraph and the states isomorphic to it. */
  graphHashes: Map<string, { graph: DiGraph; states: ColState[] }[]>;
  paths: PathInfo[];
  /** Spec ids whose code failed to run (GT annotation problems), with the error. */
  failures: { specId: string; message: string }[];
}

/** Behaviour switches for the BLADE quirks of spec §1.7 (defaults = fixed). */
export interface DataflowOptions {
  /**
   * §1.7 #15: treat `orderby` and `deduplicate` as whole-table nodes like `filter` (fixed), or
   * reproduce BLADE (`orderby` expands to one node per column, `deduplicate` to no node).
   */
  wholeTableVerbs: 'fixed' | 'blade';
  /** §1.7 #9: keep every non-isomorphic subgraph under a WL hash (fixed) or only the last one (BLADE). */
  graphHashCollisions: 'keep-all' | 'keep-last';
  /**
   * Issue 21 item 9: a submitted unit mapping one input set to several outputs (`pd.get_dummies`) keeps every
   * output (`all`), or one per input set as BLADE's unit format does (`one-per-input-set`:
   * `TransformDataReturn.column_mapping: Dict[FrozenSet[str], str]`, the last output wins at the first one's place).
   * Ground-truth specs are not affected (BLADE reads them as a list). Absent = `all`.
   */
  unitOutputs?: 'all' | 'one-per-input-set';
}

export const DEFAULT_DATAFLOW_OPTIONS: DataflowOptions = {
  wholeTableVerbs: 'fixed',
  graphHashCollisions: 'keep-all',
  unitOutputs: 'all',
};

const inputCols = (s: TSpec): string[] => s.mapping.flatMap(([ins]) => ins);

function wholeTable(verb: string, o: DataflowOptions): boolean {
  return (
    verb === 'filter' ||
    verb === 'groupby' ||
    (o.wholeTableVerbs === 'fixed' && (verb === 'orderby' || verb === 'deduplicate'))
  );
}
function affectsWholeDf(verb: string, o: DataflowOptions): boolean {
  return (
    verb === 'groupby' ||
    verb === 'filter' ||
    verb === 'other_impact_rows' ||
    (o.wholeTableVerbs === 'fixed' && (verb === 'orderby' || verb === 'deduplicate'))
  );
}

/** Spec DAG: an edge dependency → spec for every dependency of every branch. */
export function specDag(specs: Map<string, TSpec>): DiGraph {
  const g = new DiGraph();
  for (const s of specs.values()) {
    g.addNode(s.id);
    for (const b of s.branches) for (const d of b) g.addEdge(d, s.id);
  }
  return g;
}

/** Leaves: out-degree 0 and in-degree > 0 (spec §1.4.2). */
export function leafSpecs(specs: Map<string, TSpec>): TSpec[] {
  const g = specDag(specs);
  return [...g.nodes.keys()]
    .filter((n) => g.outDegree(n) === 0 && g.inDegree(n) > 0 && specs.has(n))
    .map((n) => specs.get(n)!);
}

/**
 * Alternative path graphs from one leaf: walking up, a spec with k > 1 branches forks the partial
 * graph k ways (BLADE `GraphPaths.get_unserialized_graphs_from_leaf_spec`).
 * @throws Error when a dependency names an unknown spec.
 */
export function pathGraphsFromLeaf(leaf: TSpec, specs: Map<string, TSpec>): DiGraph[] {
  const graphs: DiGraph[] = [];
  const recur = (graph: DiGraph, stack: string[]): void => {
    while (stack.length) {
      const node = stack.pop()!;
      const spec = specs.get(node);
      if (!spec) throw new Error(`transform spec ${node} is referenced as a dependency but does not exist`);
      graph.addNode(node);
      const branches = spec.branches;
      const snapshot = branches.length > 1 ? { g: graph.copy(), s: [...stack] } : undefined;
      branches.forEach((deps, i) => {
        if (i === 0) {
          for (const d of deps) {
            if (!graph.hasNode(d)) stack.push(d);
            graph.addEdge(d, node);
          }
        } else {
          const bg = snapshot!.g.copy();
          const bs = [...snapshot!.s];
          for (const d of deps) {
            if (!bg.hasNode(d)) bs.push(d);
            bg.addEdge(d, node);
          }
          recur(bg, bs);
        }
      });
    }
    graphs.push(graph);
  };
  recur(new DiGraph(), [leaf.id]);
  return graphs;
}

/** Path graphs for all leaves, dropping those whose leaf verb is groupby or join (spec §1.4.2). */
export function allPathGraphs(leaves: TSpec[], specs: Map<string, TSpec>): DiGraph[] {
  const out: DiGraph[] = [];
  for (const leaf of leaves) {
    if (leaf.verb === 'groupby' || leaf.verb === 'join') continue;
    out.push(...pathGraphsFromLeaf(leaf, specs));
  }
  return out;
}

/** Verb of each spec on this path: `post_groupby` when a parent is a groupby (BLADE `update_post_groupby_transverb`). */
export function effectiveVerbs(g: DiGraph, specs: Map<string, TSpec>): Map<string, string> {
  const m = new Map<string, string>();
  for (const n of g.nodes.keys()) {
    const s = specs.get(n)!;
    const afterGroupby = g.predecessors(n).some((p) => specs.get(p)?.verb === 'groupby');
    m.set(n, afterGroupby ? POST_GROUPBY : s.verb);
  }
  return m;
}

export interface ExpandedGraph {
  g: DiGraph;
  idToSpec: Map<string, TSpec>;
  idToTs: Map<string, NodeState>;
  dataOutputCols: Map<string, Set<string>>;
}

function restrict(ts: NodeState, cols: string[]): NodeState {
  const pick = (h: Record<string, string> | null) =>
    h ? Object.fromEntries(cols.filter((c) => c in h).map((c) => [c, h[c]!])) : null;
  return { columns: cols, hashes: pick(ts.hashes), catHashes: pick(ts.catHashes) };
}

/**
 * Expands a path graph into one node per column mapping (BLADE `ProcessGraph.get_expand_g`).
 * @param states spec id → state of the df after that spec (may be missing).
 */
export function expandGraph(
  path: DiGraph,
  specs: Map<string, TSpec>,
  origCols: string[],
  states: Map<string, NodeState>,
  opts: DataflowOptions = DEFAULT_DATAFLOW_OPTIONS,
): ExpandedGraph {
  const verbs = effectiveVerbs(path, specs);
  const nodes = path.topologicalSort();
  const g = new DiGraph();
  const root = nodes[0]!;
  g.addNode(root);
  const colProducer = new Map<string, string>(origCols.map((c) => [c, root]));
  const idToSpec = new Map<string, TSpec>([[root, specs.get(root)!]]);
  const idToTs = new Map<string, NodeState>();
  const out = new Map<string, Set<string>>([[root, new Set(origCols)]]);
  for (const n of nodes.slice(1)) {
    const spec0 = specs.get(n)!;
    const verb = verbs.get(n)!;
    const spec: TSpec = { ...spec0, verb };
    const ts = states.get(n);
    if (wholeTable(verb, opts)) {
      const leaves = [...g.nodes.keys()].filter((x) => g.outDegree(x) === 0);
      let cols = new Set(origCols);
      for (const l of leaves) {
        g.addEdge(l, n);
        for (const c of out.get(l) ?? []) cols.add(c);
      }
      if (verb === 'groupby') for (const c of inputCols(spec)) cols.delete(c);
      else for (const c of cols) colProducer.set(c, n);
      if (ts) {
        cols = new Set([...cols].filter((c) => ts.columns.includes(c)));
        idToTs.set(n, restrict(ts, [...cols]));
      }
      idToSpec.set(n, spec);
      out.set(n, cols);
    } else if (verb === POST_GROUPBY) {
      for (const parent of path.predecessors(n)) {
        for (const [ins, outCol] of spec.mapping) {
          const name = `${POST_GROUPBY}_${outCol}`;
          const id = `${spec.id}__${name}`;
          g.addEdge(parent, id);
          colProducer.set(outCol, id);
          idToSpec.set(id, {
            id,
            name,
            verb: POST_GROUPBY,
            code: spec.code,
            mapping: [[ins, outCol]],
            branches: [[parent]],
          });
          out.set(id, new Set([outCol]));
          if (ts) idToTs.set(id, restrict(ts, [outCol]));
        }
      }
    } else {
      const parents = path.predecessors(n);
      const p0 = parents[0];
      if (parents.length === 1 && p0 !== ROOT_SPEC_ID && p0 !== undefined && verbs.get(p0) === 'filter') {
        for (const [ins, outCol] of spec.mapping) {
          const name = `${verb}_${outCol}`;
          const id = `${spec.id}__${name}`;
          g.addEdge(p0, id);
          colProducer.set(outCol, id);
          idToSpec.set(id, { id, name, verb, code: spec.code, mapping: [[ins, outCol]], branches: [[p0]] });
          let cols = out.get(p0) ?? new Set<string>();
          if (ts) {
            cols = new Set([...cols].filter((c) => ts.columns.includes(c)));
            idToTs.set(id, restrict(ts, [outCol]));
          }
          out.set(id, new Set([outCol, ...cols]));
        }
      } else {
        for (const [ins, outCol0] of spec.mapping) {
          const name = `${verb}_${outCol0}`;
          const outCol = outCol0 === '' ? (ins[0] ?? '') : outCol0;
          const id = `${spec.id}__${name}`;
          const deps = ins.map((c) => colProducer.get(c)).filter((x): x is string => x !== undefined);
          idToSpec.set(id, { id, name, verb, code: spec.code, mapping: [[ins, outCol]], branches: [deps] });
          g.addNode(id);
          let cols = new Set<string>();
          for (const c of ins) {
            const parent = colProducer.get(c);
            if (parent === undefined) continue; // input column unknown on this path (annotation gap)
            g.addEdge(parent, id);
            for (const x of out.get(parent) ?? []) cols.add(x);
          }
          cols.add(outCol);
          colProducer.set(outCol, id);
          if (ts) {
            cols = new Set([...cols].filter((c) => ts.columns.includes(c)));
            idToTs.set(id, restrict(ts, [outCol]));
          }
          out.set(id, cols);
        }
      }
    }
  }
  return { g, idToSpec, idToTs, dataOutputCols: out };
}

/**
 * Column data-flow graph (BLADE `ProcessGraph.get_col_g`; paper App. A.3): nodes `{col}__{expandedId}`
 * with `val` = verb (or the node id for raw columns), `data` edges from the latest pointer of each
 * input column and, with `withInput`, `input` edges from filter/groupby key columns.
 */
export function columnGraph(
  ex: ExpandedGraph,
  withInput: boolean,
  pathIndex: number,
  opts: DataflowOptions = DEFAULT_DATAFLOW_OPTIONS,
): { g: DiGraph; states: Map<string, ColState> } {
  const order = ex.g.topologicalSort();
  const rank = new Map(order.map((n, i) => [n, i]));
  const g = new DiGraph();
  const root = order[0]!;
  const ptr = new Map<string, Map<string, string>>(); // expanded id → col → col-graph node
  const ptrOf = (n: string) => {
    let m = ptr.get(n);
    if (!m) ptr.set(n, (m = new Map()));
    return m;
  };
  const states = new Map<string, ColState>();
  const addState = (nid: string, col: string, exId: string) => {
    const ts = ex.idToTs.get(exId);
    if (!ts || !ts.hashes || !(col in ts.hashes)) return;
    states.set(nid, {
      col,
      nid,
      expandedSpecId: exId,
      valueHash: ts.hashes[col]!,
      catHash: ts.catHashes?.[col] ?? ts.hashes[col]!,
      pathIndex,
    });
  };
  for (const c of ex.dataOutputCols.get(root) ?? []) {
    const nid = `${c}__${root}`;
    g.addNode(nid, { col: c, expanded_spec_id: root, expanded_spec_name: ex.idToSpec.get(root)!.name, val: nid });
    ptrOf(root).set(c, nid);
  }
  for (const n of order.slice(1)) {
    const spec = ex.idToSpec.get(n)!;
    const verb = spec.verb;
    if (wholeTable(verb, opts)) {
      const anc = ex.g.subgraph(ex.g.ancestors(n)).topologicalSort().reverse();
      for (const col of ex.dataOutputCols.get(n) ?? []) {
        const added = new Set<string>();
        for (const p of anc) {
          const pv = ex.idToSpec.get(p)!.verb;
          if (pv === 'groupby') break;
          const pm = ptr.get(p);
          if (pm?.has(col)) {
            const nid = `${col}__${n}`;
            if (!g.hasNode(nid) && !added.has(col)) {
              added.add(col);
              g.addNode(nid, { col, expanded_spec_id: n, expanded_spec_name: spec.name, val: verb });
              g.addEdge(pm.get(col)!, nid, { type: 'data' });
              ptrOf(n).set(col, nid);
              addState(nid, col, n);
            }
          }
          if (pv && affectsWholeDf(pv, opts)) break;
        }
      }
      if (withInput) {
        const keys = new Set(inputCols(spec));
        const preds = ex.g.predecessors(n);
        const allCols = new Set<string>();
        for (const p of preds) for (const c of ptr.get(p)?.keys() ?? []) allCols.add(c);
        for (const p of preds) {
          for (const [c, nid] of ptr.get(p) ?? []) {
            if (!keys.has(c)) continue;
            for (const oc of allCols) {
              const target = `${oc}__${n}`;
              g.addEdge(nid, target, { type: g.hasEdge(nid, target) ? 'input + data' : 'input' });
            }
          }
        }
      }
    } else {
      const [ins, outCol] = spec.mapping[0] ?? [[], ''];
      const nid = `${outCol}__${n}`;
      g.addNode(nid, { col: outCol, expanded_spec_id: n, expanded_spec_name: spec.name, val: verb });
      const parents = ex.g.predecessors(n).sort((a, b) => rank.get(b)! - rank.get(a)!);
      for (const c of ins) {
        for (const p of parents) {
          const pn = ptr.get(p)?.get(c);
          if (pn !== undefined) {
            g.addEdge(pn, nid, { type: 'data' });
            break;
          }
        }
      }
      ptrOf(n).set(outCol, nid);
      addState(nid, outCol, n);
    }
  }
  return { g, states };
}

/**
 * Adds one column's ancestor-subgraph to the WL-hash table, merging with an isomorphic entry.
 * BLADE kept only the last entry per hash (§1.7 #9); `keep-all` keeps every non-isomorphic one.
 */
export function addGraphHash(
  table: Map<string, { graph: DiGraph; states: ColState[] }[]>,
  hash: string,
  sub: DiGraph,
  st: ColState,
  opts: DataflowOptions,
): void {
  const entries = table.get(hash);
  if (!entries) {
    table.set(hash, [{ graph: sub, states: [st] }]);
    return;
  }
  for (const e of entries) {
    if (isIsomorphic(e.graph, sub)) {
      e.states.push(st);
      return;
    }
  }
  if (opts.graphHashCollisions === 'keep-last') entries.splice(0, entries.length, { graph: sub, states: [st] });
  else entries.push({ graph: sub, states: [st] });
}

/**
 * Builds the dataset state for a set of path graphs (BLADE `AnnotationDataTransforms.build_state_data`).
 * @param statesFor returns spec id → state for one path graph (executes code, or gives unit states).
 */
export async function buildDatasetState(
  paths: DiGraph[],
  specs: Map<string, TSpec>,
  origCols: string[],
  statesFor: (
    path: DiGraph,
    specIds: string[],
  ) => Promise<{ states: Map<string, NodeState>; failures: { specId: string; message: string }[] }>,
  opts: DataflowOptions = DEFAULT_DATAFLOW_OPTIONS,
): Promise<TransformDatasetState> {
  const result: TransformDatasetState = {
    expandedIdToSpec: new Map(),
    valueHashes: new Map(),
    catHashes: new Map(),
    graphHashes: new Map(),
    paths: [],
    failures: [],
  };
  const failed = new Map<string, string>();
  for (const path of paths) {
    const specIds = path.topologicalSort();
    const { states, failures } = await statesFor(path, specIds);
    for (const f of failures) failed.set(f.specId, f.message);
    const ex = expandGraph(path, specs, origCols, states, opts);
    for (const [k, v] of ex.idToSpec) result.expandedIdToSpec.set(k, v);
    const idx = result.paths.length;
    const plain = columnGraph(ex, false, idx, opts);
    const withInput = columnGraph(ex, true, idx, opts);
    const colStates = [...plain.states.values()];
    for (const st of colStates) {
      push(result.valueHashes, st.valueHash, st);
      push(result.catHashes, st.catHash, st);
    }
    for (const nid of withInput.g.nodes.keys()) {
      const st = plain.states.get(nid);
      if (!st) continue;
      const sub = withInput.g.subgraph(new Set([...withInput.g.ancestors(nid), nid]));
      const h = wlHash(sub);
      st.graphHash = h;
      addGraphHash(result.graphHashes, h, sub, st, opts);
    }
    result.paths.push({ specIds, colGraph: plain.g, colGraphWithInput: withInput.g, states: colStates });
  }
  result.failures = [...failed].map(([specId, message]) => ({ specId, message }));
  return result;
}

function push<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const a = m.get(k);
  if (a) a.push(v);
  else m.set(k, [v]);
}

/** Converts a driver step state into a {@link NodeState} (undefined when there is nothing to hash). */
export function nodeStateFrom(s: StepState | null): NodeState | undefined {
  if (!s) return undefined;
  if (s.kind === 'frame') return { columns: s.columns, hashes: s.hashes, catHashes: s.catHashes };
  if (s.kind === 'groupby') return { columns: s.columns, hashes: null, catHashes: null };
  return undefined;
}
