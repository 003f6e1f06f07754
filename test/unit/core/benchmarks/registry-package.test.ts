/**
 * Issue 40: a benchmark is its folder plus one registry line. The setting `loupe.suites` in package.json offers the
 * registered benchmarks' kinds: a shipped benchmark missing from its schema (or a kind no benchmark has) fails here;
 * every shipped benchmark shows each item type it loads and names its download sources through its definition.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { benchmarkKinds, benchmarks, FETCHABLE, getSource } from '../../../../src/core/benchmarks/registry.ts';
import { repoRoot } from '../../../helpers/shared.ts';

interface SuitesSetting {
  markdownDescription: string;
  items: { required: string[]; properties: { suite: { anyOf: Array<{ enum?: string[]; pattern?: string }> } } };
}

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  contributes: {
    configuration: { properties: Record<string, unknown> };
    viewsWelcome: Array<{ view: string; when?: string; contents: string }>;
  };
};
const suites = pkg.contributes.configuration.properties['loupe.suites'] as SuitesSetting;

describe('package.json follows the benchmark registry', () => {
  it('the loupe.suites schema offers exactly the shipped benchmarks, in registry order', () => {
    // imported without the test fixtures' registration: the registry holds the shipped benchmarks only
    const kinds = benchmarkKinds();
    const choices = suites.items.properties.suite.anyOf.find((a) => a.enum)?.enum;
    assert.deepEqual(
      choices,
      kinds,
      'contributes.configuration.properties["loupe.suites"].items.properties.suite: enum ≠ registry (src/core/benchmarks/registry.ts BUILTIN)',
    );
    // a benchmark registered by an extension of Loupe is still accepted by the pattern
    const pattern = new RegExp(suites.items.properties.suite.anyOf.find((a) => a.pattern)!.pattern!);
    for (const k of [...kinds, 'count-rows']) assert.match(k, pattern);
  });

  it('an entry may name only a root: a folder holding a benchmark manifest (issue 44)', () => {
    assert.deepEqual(suites.items.required, ['root']);
    assert.match(suites.markdownDescription, /loupe-benchmark\.yaml/);
  });

  it("the setting's description and the Benchmarks view's welcome text name every shipped benchmark", () => {
    for (const k of benchmarkKinds()) {
      assert.match(suites.markdownDescription, new RegExp(`"${k}"`), `loupe.suites description lacks ${k}`);
    }
    const welcome = pkg.contributes.viewsWelcome.find(
      (w) => w.view === 'loupe.benchmarks' && w.when === '!loupe.suitesConfigured',
    )!.contents;
    const listed = /\(suites: ([^)]*)\)/.exec(welcome)?.[1]?.split(', ');
    assert.deepEqual(listed, benchmarkKinds());
  });
});

describe('each benchmark reaches the surfaces through its definition', () => {
  it('names an icon, a label, a view and its hidden fields for each of its item types', () => {
    for (const def of benchmarks()) {
      const types = Object.keys(def.itemTypes);
      assert.ok(types.length > 0, `${def.kind} declares no item type`);
      for (const t of types) {
        const v = def.itemTypes[t]!;
        assert.match(v.icon, /^[a-z][a-z-]*$/, `${def.kind} ${t}: icon`);
        assert.ok(Array.isArray(v.hiddenFields));
      }
    }
  });

  it('download sources come from the definitions (loupe fetch names), in registry order', () => {
    assert.deepEqual([...FETCHABLE], ['longda', 'blade', 'blade-mcq', 'ddr', 'mimic-iv-demo']);
    for (const n of FETCHABLE) assert.ok(getSource(n).files.length > 0, n);
    assert.equal(getSource('blade-mcq'), getSource('blade'));
  });
});
