/**
 * Minimal directed graph with insertion-ordered nodes and edges, the orderings networkx uses
 * (so topological orders, and therefore BLADE's tie-breaks, are reproduced), a
 * Weisfeiler–Lehman style hash and a labelled isomorphism test. Source: spec §1.4.2–§1.4.4
 * (BLADE uses networkx `topological_sort`, `weisfeiler_lehman_graph_hash`, VF2 `is_isomorphic`).
 */
import { createHash } from 'node:crypto';

export type Attrs = Record<string, string | undefined>;

/** Directed graph; node and successor order = insertion order (like networkx DiGraph). */
export class DiGraph {
  readonly nodes = new Map<string, Attrs>();
  readonly succ = new Map<string, Map<string, Attrs>>();
  readonly pred = new Map<string, Map<string, Attrs>>();

  addNode(n: string, attrs: Attrs = {}): void {
    const cur = this.nodes.get(n);
    if (cur) Object.assign(cur, attrs);
    else {
      this.nodes.set(n, { ...attrs });
      this.succ.set(n, new Map());
      this.pred.set(n, new Map());
    }
  }

  addEdge(u: string, v: string, attrs: Attrs = {}): void {
    if (!this.nodes.has(u)) this.addNode(u);
    if (!this.nodes.has(v)) this.addNode(v);
    const e = this.succ.get(u)!.get(v);
    if (e) Object.assign(e, attrs);
    else {
      const a = { ...attrs };
      this.succ.get(u)!.set(v, a);
      this.pred.get(v)!.set(u, a);
    }
  }

  hasNode(n: string): boolean {
    return this.nodes.has(n);
  }
  hasEdge(u: string, v: string): boolean {
    return this.succ.get(u)?.has(v) ?? false;
  }
  successors(n: string): string[] {
    return [...(this.succ.get(n)?.keys() ?? [])];
  }
  predecessors(n: string): string[] {
    return [...(this.pred.get(n)?.keys() ?? [])];
  }
  outDegree(n: string): number {
    return this.succ.get(n)?.size ?? 0;
  }
  inDegree(n: string): number {
    return this.pred.get(n)?.size ?? 0;
  }
  edgeCount(): number {
    let c = 0;
    for (const s of this.succ.values()) c += s.size;
    return c;
  }

  copy(): DiGraph {
    const g = new DiGraph();
    for (const [n, a] of this.nodes) g.addNode(n, a);
    for (const [u, s] of this.succ) for (const [v, a] of s) g.addEdge(u, v, a);
    return g;
  }

  /** Induced subgraph, nodes in this graph's order. */
  subgraph(keep: Set<string>): DiGraph {
    const g = new DiGraph();
    for (const [n, a] of this.nodes) if (keep.has(n)) g.addNode(n, a);
    for (const [u, s] of this.succ) if (keep.has(u)) for (const [v, a] of s) if (keep.has(v)) g.addEdge(u, v, a);
    return g;
  }

  /** All nodes with a path to `n` (excluding `n`). */
  ancestors(n: string): Set<string> {
    const seen = new Set<string>();
    const stack = [n];
    while (stack.length) {
      const x = stack.pop()!;
      for (const p of this.pred.get(x)?.keys() ?? []) {
        if (!seen.has(p)) {
          seen.add(p);
          stack.push(p);
        }
      }
    }
    seen.delete(n);
    return seen;
  }

  /** networkx `topological_sort` order (Kahn by generations, insertion order inside each). */
  topologicalSort(): string[] {
    const indeg = new Map<string, number>();
    for (const n of this.nodes.keys()) indeg.set(n, this.inDegree(n));
    let zero = [...this.nodes.keys()].filter((n) => indeg.get(n) === 0);
    const out: string[] = [];
    while (zero.length) {
      const gen = zero;
      zero = [];
      for (const n of gen) {
        for (const c of this.succ.get(n)!.keys()) {
          const d = indeg.get(c)! - 1;
          indeg.set(c, d);
          if (d === 0) zero.push(c);
        }
        out.push(n);
      }
    }
    if (out.length !== this.nodes.size) throw new Error('graph has a cycle');
    return out;
  }

  /** `{u: {v: attrs}}` like `networkx.to_dict_of_dicts` (for tests). */
  toDictOfDicts(): Record<string, Record<string, Attrs>> {
    const o: Record<string, Record<string, Attrs>> = {};
    for (const [u, s] of this.succ) {
      o[u] = {};
      for (const [v, a] of s) o[u][v] = { ...a };
    }
    return o;
  }
}

const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

/**
 * Weisfeiler–Lehman hash of a labelled digraph (node label `nodeAttr`, edge label `edgeAttr`),
 * 3 iterations over in-neighbourhoods as networkx does for DiGraphs. Used only as a bucket key;
 * equality is always confirmed with {@link isIsomorphic} (spec §1.4.3 note).
 * @returns a hex digest (stable for isomorphic graphs).
 */
export function wlHash(g: DiGraph, nodeAttr = 'val', edgeAttr = 'type', iterations = 3): string {
  let labels = new Map<string, string>();
  for (const [n, a] of g.nodes) labels.set(n, String(a[nodeAttr]));
  const counts: string[] = [];
  const histogram = (m: Map<string, string>) => [...m.values()].sort().join('|');
  counts.push(histogram(labels));
  for (let i = 0; i < iterations; i++) {
    const next = new Map<string, string>();
    for (const n of g.nodes.keys()) {
      const neigh = [...g.pred.get(n)!.entries()].map(([p, e]) => `${e[edgeAttr] ?? ''}:${labels.get(p)}`).sort();
      const outs = [...g.succ.get(n)!.entries()].map(([s, e]) => `${e[edgeAttr] ?? ''}>${labels.get(s)}`).sort();
      next.set(n, sha(`${labels.get(n)}[${neigh.join(',')}][${outs.join(',')}]`).slice(0, 32));
    }
    labels = next;
    counts.push(histogram(labels));
  }
  return sha(counts.join('#')).slice(0, 32);
}

/**
 * Labelled digraph isomorphism (backtracking with label and degree pruning; VF2's semantics:
 * node labels `nodeAttr` equal, edge labels `edgeAttr` equal, same edges both ways).
 * @param budget maximum search steps before giving up (counted as "not isomorphic", like BLADE's timeout).
 */
export function isIsomorphic(g1: DiGraph, g2: DiGraph, nodeAttr = 'val', edgeAttr = 'type', budget = 200_000): boolean {
  if (g1.nodes.size !== g2.nodes.size || g1.edgeCount() !== g2.edgeCount()) return false;
  const sig = (g: DiGraph, n: string) => `${g.nodes.get(n)![nodeAttr]}|${g.inDegree(n)}|${g.outDegree(n)}`;
  const byS2 = new Map<string, string[]>();
  for (const n of g2.nodes.keys()) {
    const s = sig(g2, n);
    byS2.set(s, [...(byS2.get(s) ?? []), n]);
  }
  const order1 = [...g1.nodes.keys()];
  for (const n of order1) if (!byS2.has(sig(g1, n))) return false;
  // visit g1 nodes in BFS order (undirected) so neighbours constrain early
  const seen = new Set<string>();
  const order: string[] = [];
  for (const start of order1) {
    if (seen.has(start)) continue;
    const q = [start];
    seen.add(start);
    while (q.length) {
      const x = q.shift()!;
      order.push(x);
      for (const y of [...g1.succ.get(x)!.keys(), ...g1.pred.get(x)!.keys()]) {
        if (!seen.has(y)) {
          seen.add(y);
          q.push(y);
        }
      }
    }
  }
  const m12 = new Map<string, string>();
  const used = new Set<string>();
  let steps = 0;
  const ok = (a: string, b: string): boolean => {
    for (const [p, e] of g1.pred.get(a)!) {
      const pb = m12.get(p);
      if (pb !== undefined) {
        const e2 = g2.pred.get(b)!.get(pb);
        if (!e2 || e2[edgeAttr] !== e[edgeAttr]) return false;
      }
    }
    for (const [s, e] of g1.succ.get(a)!) {
      const sb = m12.get(s);
      if (sb !== undefined) {
        const e2 = g2.succ.get(b)!.get(sb);
        if (!e2 || e2[edgeAttr] !== e[edgeAttr]) return false;
      }
    }
    // edges in g2 between b and already-mapped nodes must exist in g1
    let mappedPred = 0;
    for (const p of g1.pred.get(a)!.keys()) if (m12.has(p)) mappedPred++;
    let mappedPred2 = 0;
    for (const p of g2.pred.get(b)!.keys()) if (used.has(p)) mappedPred2++;
    if (mappedPred !== mappedPred2) return false;
    let mappedSucc = 0;
    for (const s of g1.succ.get(a)!.keys()) if (m12.has(s)) mappedSucc++;
    let mappedSucc2 = 0;
    for (const s of g2.succ.get(b)!.keys()) if (used.has(s)) mappedSucc2++;
    return mappedSucc === mappedSucc2;
  };
  const rec = (i: number): boolean => {
    if (i === order.length) return true;
    if (++steps > budget) return false;
    const a = order[i]!;
    for (const b of byS2.get(sig(g1, a)) ?? []) {
      if (used.has(b) || !ok(a, b)) continue;
      m12.set(a, b);
      used.add(b);
      if (rec(i + 1)) return true;
      m12.delete(a);
      used.delete(b);
    }
    return false;
  };
  return rec(0);
}
