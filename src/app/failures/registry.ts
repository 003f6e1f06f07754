/**
 * The taxonomies Loupe knows: each benchmark's (declared in its folder) and the workspace's
 * (`.loupe/taxonomies/*.json`). Source: issue 19.
 */
import { benchmarks } from '../../core/benchmarks/registry.ts';
import { LoupeInputError } from '../../core/util/errors.ts';
import { loadWorkspaceTaxonomies, type Taxonomy } from '../../core/failures/taxonomy.ts';

/** The benchmarks' taxonomies, with the kinds of the benchmarks declaring each (BLADE and BLADE MCQ share one). */
export function builtinTaxonomies(): Array<Taxonomy & { benchmarks: string[] }> {
  const out = new Map<string, Taxonomy & { benchmarks: string[] }>();
  for (const b of benchmarks()) {
    const t = b.failureAnalysis?.taxonomy;
    if (!t) continue;
    const x = out.get(t.id);
    if (x) x.benchmarks.push(b.kind);
    else out.set(t.id, { ...t, benchmarks: [b.kind] });
  }
  return [...out.values()];
}

/** Every taxonomy and the workspace files that did not load (each with its message). */
export interface TaxonomyCatalog {
  taxonomies: Taxonomy[];
  errors: Array<{ file: string; message: string }>;
}

/**
 * The benchmarks' taxonomies then the workspace's. A workspace taxonomy reusing a benchmark's id is refused (an
 * error for its file); the others still load.
 * @param workspace the workspace folder, or undefined for the benchmarks' only.
 */
export function taxonomyCatalog(workspace?: string): TaxonomyCatalog {
  const builtin: Taxonomy[] = builtinTaxonomies().map(({ benchmarks: _b, ...t }) => t);
  if (!workspace) return { taxonomies: builtin, errors: [] };
  const ws = loadWorkspaceTaxonomies(workspace);
  const errors = [...ws.errors];
  const taxonomies = [...builtin];
  for (const t of ws.taxonomies) {
    if (builtin.some((b) => b.id === t.id)) {
      errors.push({
        file: t.source,
        message: `${t.source}: taxonomy id '${t.id}' is a benchmark's taxonomy; give the workspace taxonomy another id`,
      });
    } else taxonomies.push(t);
  }
  return { taxonomies, errors };
}

/**
 * The taxonomy of an id. @throws LoupeInputError naming the id and the known ones.
 */
export function findTaxonomy(catalog: TaxonomyCatalog | readonly Taxonomy[], id: string): Taxonomy {
  const list = Array.isArray(catalog) ? catalog : (catalog as TaxonomyCatalog).taxonomies;
  const t = list.find((x) => x.id === id);
  if (!t) throw new LoupeInputError(`taxonomy ${id}`, `is not known (known: ${list.map((x) => x.id).join(', ')})`);
  return t;
}
