// Issue 40: no import cycle between the folders of src, of src/core and of src/app. Every import counts, `import type`
// and `export ... from` included (a type cycle is still a cycle of meaning). The test reads the sources, so it needs no
// build; it names each cycle it finds, folder by folder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const SRC = path.join(ROOT, 'src');

/** Edges still allowed while another change removes them; each names its importing and imported file. Keep empty. */
const TEMPORARY_EXCEPTIONS: ReadonlyArray<{ from: string; to: string; why: string }> = [];

/** Every `.ts` file under `dir`, as absolute paths. */
function tsFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => path.join(e.parentPath, e.name));
}

/** The module specifiers a TypeScript file imports or re-exports: static, type-only, side-effect and dynamic imports. */
export function importsOf(source: string): string[] {
  const text = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const specs: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\bfrom\s*)?['"]([^'"]+)['"]/gm)) {
    specs.push(m[1]!);
  }
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) specs.push(m[1]!);
  return specs;
}

/** A file's folder at one level: the first path segment under `base` (a file directly in `base` is its own node). */
function folderOf(file: string, base: string): string | null {
  const rel = path.relative(base, file);
  if (rel.startsWith('..')) return null;
  const parts = rel.split(path.sep);
  return parts.length > 1 ? parts[0]! : rel;
}

interface Edge {
  from: string;
  to: string;
  file: string;
  target: string;
}

/** The folder graph at one level (folders of `base`), each edge with one file import that makes it. */
function folderGraph(files: readonly string[], base: string): Map<string, Map<string, Edge>> {
  const graph = new Map<string, Map<string, Edge>>();
  for (const file of files) {
    const from = folderOf(file, base);
    if (from == null) continue;
    for (const spec of importsOf(fs.readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const target = path.resolve(path.dirname(file), spec);
      const to = folderOf(target, base);
      if (to == null || to === from) continue;
      const relFrom = path.relative(ROOT, file),
        relTo = path.relative(ROOT, target);
      if (TEMPORARY_EXCEPTIONS.some((x) => x.from === relFrom && x.to === relTo)) continue;
      const out = graph.get(from) ?? new Map<string, Edge>();
      graph.set(from, out);
      if (!out.has(to)) out.set(to, { from, to, file: relFrom, target: relTo });
    }
  }
  return graph;
}

/** The strongly connected components with more than one folder (Tarjan), each as a cycle of edges through it. */
export function cyclesOf(graph: Map<string, Map<string, Edge>>): string[] {
  let index = 0;
  const idx = new Map<string, number>(),
    low = new Map<string, number>(),
    stack: string[] = [],
    on = new Set<string>();
  const comps: string[][] = [];
  const nodes = new Set<string>([...graph.keys(), ...[...graph.values()].flatMap((m) => [...m.keys()])]);
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1) comps.push(comp.sort());
    }
  };
  for (const v of [...nodes].sort()) if (!idx.has(v)) visit(v);
  // Name one concrete cycle per component: a shortest path back from its first folder, with the file of each edge.
  return comps.map((comp) => {
    const inComp = new Set(comp);
    const start = comp[0]!;
    const prev = new Map<string, Edge>();
    const queue = [start];
    let closing: Edge | undefined;
    while (queue.length && !closing) {
      const v = queue.shift()!;
      for (const [w, e] of graph.get(v) ?? []) {
        if (!inComp.has(w)) continue;
        if (w === start) {
          closing = e;
          break;
        }
        if (!prev.has(w)) {
          prev.set(w, e);
          queue.push(w);
        }
      }
    }
    const edges: Edge[] = [closing!];
    for (let v = closing!.from; v !== start; v = prev.get(v)!.from) edges.unshift(prev.get(v)!);
    return (
      `{${comp.join(', ')}}: ` + edges.map((e) => `${e.from} → ${e.to} (${e.file} imports ${e.target})`).join('; ')
    );
  });
}

const files = tsFiles(SRC);

for (const [name, base] of [
  ['src', SRC],
  ['src/core', path.join(SRC, 'core')],
  ['src/app', path.join(SRC, 'app')],
] as const) {
  test(`no import cycle between the folders of ${name}`, () => {
    if (!fs.existsSync(base)) return;
    const cycles = cyclesOf(
      folderGraph(
        files.filter((f) => !path.relative(base, f).startsWith('..')),
        base,
      ),
    );
    assert.deepEqual(cycles, [], `import cycles between folders of ${name}:\n${cycles.join('\n')}`);
  });
}

test('importsOf counts type imports, re-exports, side-effect and dynamic imports', () => {
  const src = [
    "import type { A } from './a.ts';",
    'import {\n  B,\n  type C,\n} from "../b.ts";',
    "export { D } from './d.ts';",
    "export type * from './e.ts';",
    "import './f.ts';",
    "const g = await import('./g.ts');",
    "// import { no } from './comment.ts';",
  ].join('\n');
  assert.deepEqual(importsOf(src).sort(), ['../b.ts', './a.ts', './d.ts', './e.ts', './f.ts', './g.ts']);
});

test('cyclesOf names a cycle between two folders and ignores a chain', () => {
  const e = (from: string, to: string): [string, Edge] => [
    to,
    { from, to, file: `src/${from}/x.ts`, target: `src/${to}/y.ts` },
  ];
  const cyclic = new Map([
    ['a', new Map([e('a', 'b')])],
    ['b', new Map([e('b', 'a')])],
    ['c', new Map([e('c', 'a')])],
  ]);
  assert.deepEqual(cyclesOf(cyclic), [
    '{a, b}: a → b (src/a/x.ts imports src/b/y.ts); b → a (src/b/x.ts imports src/a/y.ts)',
  ]);
  const chain = new Map([
    ['a', new Map([e('a', 'b')])],
    ['b', new Map([e('b', 'c')])],
  ]);
  assert.deepEqual(cyclesOf(chain), []);
});
