/**
 * The BLADE ground truth of a dataset as the ground-truth view shows it (issue 17): conceptual variables (IV / DV /
 * control / moderator with their columns), the transform DAG with its alternative branches (node = transform spec,
 * edge = dependency; branches after the first drawn as alternatives), models with code and variables, and the review
 * rows (LM-generated candidates with the annotators' labels) apart. Any stored version, or the shipped file (0).
 * Source: BLADE `annotations.csv` (spec §1.2.3; `blade_bench/data/datamodel/specs.py`).
 */
import { readFileSync } from 'node:fs';
import type { RunStore } from '../../store/types.ts';
import type { Block } from '../../suites/types.ts';
import type { BladeAnnotations } from './items.ts';
import { LoupeInputError } from '../../util/errors.ts';
import type { GroundTruthView } from '../types.ts';
import { ROOT_SPEC_ID } from './annotations.ts';
import { bladeGtStoreOf, diffGroundTruth, parseGtCsv } from './gt-versions.ts';

/**
 * Places the transform DAG in layers: a node's layer is one more than the deepest of its dependencies over all its
 * branches (ROOT is layer 0); rows in order of appearance. Cycles and dependencies on missing specs are reported.
 * @returns nodes, edges (`alternative` for branches after the first) and problems.
 */
export function transformGraph(a: BladeAnnotations): {
  nodes: NonNullable<GroundTruthView['graph']>['nodes'];
  edges: NonNullable<GroundTruthView['graph']>['edges'];
  problems: string[];
} {
  const ids = new Set(a.transforms.map((t) => t.specId));
  const problems: string[] = [];
  const edges: NonNullable<GroundTruthView['graph']>['edges'] = [];
  const deps = new Map<string, string[]>();
  for (const t of a.transforms) {
    const all: string[] = [];
    t.branches.forEach((b, bi) => {
      for (const d of b.dependencies) {
        if (!ids.has(d) && d !== ROOT_SPEC_ID) {
          problems.push(
            `transform ${t.specId} (${t.specName}) depends on ${d}, which is not a spec of this ground truth`,
          );
          continue;
        }
        edges.push({ from: d, to: t.specId, alternative: bi > 0 });
        all.push(d);
      }
    });
    deps.set(t.specId, all);
  }
  const layer = new Map<string, number>();
  const visiting = new Set<string>();
  const depth = (id: string): number => {
    if (id === ROOT_SPEC_ID) return 0;
    const known = layer.get(id);
    if (known !== undefined) return known;
    if (visiting.has(id)) {
      problems.push(`transform ${id} is part of a dependency cycle`);
      return 0;
    }
    visiting.add(id);
    const ds = (deps.get(id) ?? []).filter((d) => d !== id);
    const l = ds.length ? 1 + Math.max(...ds.map(depth)) : 1;
    visiting.delete(id);
    layer.set(id, l);
    return l;
  };
  const rows = new Map<number, number>();
  const nodes = [{ id: ROOT_SPEC_ID, label: 'ROOT (the data)', layer: 0, row: 0 }];
  rows.set(0, 1);
  for (const t of a.transforms) {
    if (t.specId === ROOT_SPEC_ID || t.isRoot) continue;
    const l = depth(t.specId);
    const r = rows.get(l) ?? 0;
    rows.set(l, r + 1);
    nodes.push({ id: t.specId, label: t.specName || t.specId.slice(0, 8), layer: l, row: r });
  }
  return { nodes, edges, problems: [...new Set(problems)] };
}

/**
 * The view of a BLADE block's ground truth at a version.
 * @param version `latest` (the newest stored version, else the shipped file), 0 (shipped) or a stored version.
 * @throws LoupeInputError for a block without annotations or a version that does not exist.
 */
export async function bladeGroundTruthView(
  store: RunStore,
  block: Block,
  version: number | 'latest',
): Promise<GroundTruthView> {
  const shipped = block.hidden.annotations;
  const dataset = block.blade?.dataset ?? block.id;
  if (!shipped) {
    throw new LoupeInputError(`BLADE dataset ${dataset}`, 'has no annotations.csv: no ground truth to show');
  }
  const gts = bladeGtStoreOf(store);
  const stored = await gts.versions(dataset);
  const v =
    version === 'latest' ? stored.at(-1) : version === 0 ? undefined : stored.find((x) => x.version === version);
  if (typeof version === 'number' && version !== 0 && !v) {
    throw new LoupeInputError(
      `ground-truth version ${version}`,
      `dataset ${dataset} has ${stored.length ? `versions 0 (shipped), ${stored.map((x) => x.version).join(', ')}` : 'only version 0 (the shipped file)'}`,
    );
  }
  let shippedCsv = '';
  try {
    shippedCsv = readFileSync(shipped.file, 'utf8');
  } catch {
    // the view still shows the loader's parse of it
  }
  const parsed = v
    ? parseGtCsv(v.csv, `${dataset}/annotations.csv@v${v.version}`)
    : shippedCsv
      ? parseGtCsv(shippedCsv, shipped.file)
      : { annotations: shipped, problems: [] };
  const a = parsed.annotations;
  const byVersion = new Map<number, BladeAnnotations>([
    [0, shippedCsv ? parseGtCsv(shippedCsv, shipped.file).annotations : shipped],
  ]);
  for (const x of stored) byVersion.set(x.version, parseGtCsv(x.csv, `${dataset}@v${x.version}`).annotations);
  const g = transformGraph(a);
  const cols = (c: string[]) => c.join(', ');
  return {
    title: `${dataset} · BLADE ground truth`,
    version: v?.version ?? 0,
    versions: [
      { version: 0, author: 'BLADE', createdAt: '', note: 'shipped annotations.csv', hash: '', changes: '' },
      ...stored.map((x) => {
        const d = diffGroundTruth(byVersion.get(x.parent) ?? byVersion.get(0)!, byVersion.get(x.version)!);
        return {
          version: x.version,
          author: x.author,
          createdAt: x.createdAt,
          note: x.note,
          hash: x.hash,
          changes: `from v${x.parent}: +${d.added.length} −${d.removed.length} ~${d.changed.length}`,
        };
      }),
    ],
    groups: [
      {
        title: 'Conceptual variables',
        decisions: a.conceptualVars.map((c) => ({
          id: c.specId,
          label: c.concept,
          kind: c.effectiveType,
          fields: [
            {
              name: 'Type',
              value: c.effectiveType === 'Moderator' ? `Moderator (on ${c.on || '?'})` : c.effectiveType,
            },
            { name: 'Columns', value: cols(c.columnsOrig) || '—' },
            { name: 'Derived columns', value: cols(c.columnsDerived) || '—' },
            { name: 'Rationale', value: c.rationale || '—' },
          ],
        })),
      },
      {
        title: 'Transforms',
        decisions: a.transforms
          .filter((t) => !t.isRoot && t.specId !== ROOT_SPEC_ID)
          .map((t) => ({
            id: t.specId,
            label: t.specName,
            kind: t.verb,
            fields: [
              { name: 'Verb', value: t.transVerb.join(', ') || '—' },
              { name: 'Specification', value: t.specification || '—' },
              {
                name: 'Columns',
                value:
                  t.columnMappings
                    .map((m) => `${m.inputs.join(', ') || '—'} → ${m.output || 'the whole table'}`)
                    .join('; ') || '—',
              },
              { name: 'Code', value: t.code, code: true },
              { name: 'Rationale', value: t.rationale || '—' },
              {
                name: 'Branches',
                value:
                  t.branches
                    .map(
                      (b, i) =>
                        `${i ? 'or ' : ''}after ${b.dependencies.map((d) => (d === ROOT_SPEC_ID ? 'ROOT' : (a.transforms.find((x) => x.specId === d)?.specName ?? d))).join(' + ') || 'nothing'}${b.condition ? ` if ${b.condition}` : ''}`,
                    )
                    .join('; ') || '—',
              },
            ],
          })),
      },
      {
        title: 'Models',
        decisions: a.models.map((m) => ({
          id: m.specId,
          label: m.specName || m.specification,
          kind: m.specification,
          fields: [
            { name: 'Model', value: m.specification },
            { name: 'Columns', value: cols([...m.columnsOrig, ...m.columnsDerived]) || '—' },
            { name: 'Code', value: m.code, code: true },
            { name: 'Rationale', value: m.rationale || '—' },
          ],
        })),
      },
    ],
    graph: { nodes: g.nodes, edges: g.edges },
    reviews: [
      ...a.cvarReviews.map((r) => ({
        id: r.specId,
        kind: 'conceptual variable',
        label: `${r.variableType}: ${r.concept} [${r.columns.join(', ')}] · derivable ${r.canDeriveFromData || '?'}, reasonable ${r.isReasonable || '?'}`,
        verdict: r.judgement,
      })),
      ...a.transformReviews.map((r) => ({
        id: r.specId,
        kind: 'transform',
        label: `${r.outputCol || '(table)'} · ${r.code.split('\n')[0]!.slice(0, 90)} · suited ${r.isSuitedToCv || '?'}, steps ${r.isStepsReasonable || '?'}, rationale ${r.isRationaleReasonable || '?'}`,
        verdict: r.judgement,
      })),
    ],
    problems: [...parsed.problems, ...g.problems],
  };
}
