/**
 * Issue 40: a benchmark's block fields, visible and hidden resources are declared in its folder (declaration merging
 * into `suites/types.ts`) and generic code reaches them only through its `BenchmarkDefinition` (`blockSummary`,
 * `checklist.nativeItems` / `evidenceTables`, `otherVisibleFiles`, ...). This reads every benchmark's declarations and
 * fails naming each file outside the benchmark folders that reads one of them as if every block had it.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { repoRoot } from '../../helpers/shared.ts';

const SRC = join(repoRoot, 'src');
const BENCHMARKS = join(SRC, 'core', 'benchmarks');

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

/** Members a benchmark folder declares on `interface NAME` inside its `declare module` blocks. */
function declared(iface: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const kind of readdirSync(BENCHMARKS, { withFileTypes: true }).filter((e) => e.isDirectory())) {
    for (const f of tsFiles(join(BENCHMARKS, kind.name))) {
      const text = readFileSync(f, 'utf8');
      for (const m of text.matchAll(new RegExp(`interface ${iface} \\{([\\s\\S]*?)\\n  \\}`, 'g'))) {
        for (const p of m[1]!.matchAll(/^\s{4}(\w+)\??:/gm)) out.set(p[1]!, kind.name);
      }
    }
  }
  return out;
}

const isGeneric = (f: string) => !/^core\/benchmarks\/[^/]+\//.test(relative(SRC, f).split('\\').join('/'));

describe('benchmark-owned block fields stay in their benchmark folders', () => {
  const visible = declared('VisibleResources');
  const hidden = declared('HiddenResources');
  const ext = declared('BlockExtensions');

  it('finds the declarations it checks (the scan itself works)', () => {
    assert.ok(
      visible.has('database') &&
        hidden.has('checklist') &&
        hidden.has('answers') &&
        ext.has('blade') &&
        ext.has('longda'),
      JSON.stringify({ visible: [...visible.keys()], hidden: [...hidden.keys()], ext: [...ext.keys()] }),
    );
  });

  it("no generic file of src/ reads a benchmark's visible or hidden resource or block field", () => {
    const res = (names: Map<string, string>, where: string) =>
      new RegExp(`\\.${where}\\??\\.(${[...names.keys()].join('|')})\\b`, 'g');
    const checks: Array<[RegExp, Map<string, string>]> = [
      [res(visible, 'visible'), visible],
      [res(hidden, 'hidden'), hidden],
      // a block's extension field: `b.blade`, `block.longda?.survey`, `found.block.ddr`
      [new RegExp(`\\b(?:b|blk|block|\\w+Block)\\??\\.(${[...ext.keys()].join('|')})\\b`, 'g'), ext],
    ];
    const hits: string[] = [];
    for (const f of tsFiles(SRC).filter(isGeneric)) {
      const lines = readFileSync(f, 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (/^\s*(\*|\/\/)/.test(line)) return; // prose
        for (const [re, names] of checks) {
          for (const m of line.matchAll(re)) {
            hits.push(`${relative(repoRoot, f)}:${i + 1}: ${m[0]} (${names.get(m[1]!)}'s)`);
          }
        }
      });
    }
    assert.deepEqual(hits, []);
  });
});
