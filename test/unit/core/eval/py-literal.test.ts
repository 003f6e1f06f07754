/**
 * The Python-literal reader under `{ python: true }` (issue 47 items 1, 2, 7): a set literal gives the elements
 * CPython keeps, in CPython's iteration order, on 300 random sets of ints, floats, bools, big ints and complex numbers
 * (fixture test/fixtures/official-parity/python-sets/, written by CPython 3.11's `ast.literal_eval`); complex values,
 * exact big integers, comments.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parsePyLiteral } from '../../../../src/core/eval/py-literal.ts';

const pyFloat = (r: string) => (r === 'inf' ? Infinity : r === '-inf' ? -Infinity : Number(r));
type Item = boolean | { int: string } | { float: string } | { complex: [string, string] };
const canon = (v: unknown): string => {
  if (typeof v === 'boolean') return `b:${v}`;
  if (typeof v === 'bigint') return `n:${v}`;
  if (typeof v === 'number') return `n:${Number.isInteger(v) ? BigInt(v) : Object.is(v, -0) ? '-0' : v}`;
  const c = v as { re: number; im: number };
  return `c:${c.re}:${c.im}`;
};
const canonItem = (x: Item): string => {
  if (typeof x === 'boolean') return `b:${x}`;
  if ('int' in x) return `n:${x.int}`;
  if ('float' in x) return canon(pyFloat(x.float));
  return canon({ re: pyFloat(x.complex[0]), im: pyFloat(x.complex[1]) });
};

describe('Python literals with CPython semantics', () => {
  it('set literals iterate as CPython 3.11 iterates them (300 random sets)', () => {
    const fx = JSON.parse(
      readFileSync(join(import.meta.dirname, '../../../fixtures/official-parity/python-sets/sets.json'), 'utf8'),
    ) as { cases: Array<{ src: string; iterates: Item[] }> };
    let equal = 0;
    for (const c of fx.cases) {
      const got = parsePyLiteral(c.src, { python: true }) as unknown[];
      if (JSON.stringify(got.map(canon)) === JSON.stringify(c.iterates.map(canonItem))) equal++;
      else assert.deepEqual(got.map(canon), c.iterates.map(canonItem), c.src);
    }
    assert.equal(equal, fx.cases.length);
  });

  it('keeps the readable reader unchanged: source order, duplicates, complex refused', () => {
    assert.deepEqual(parsePyLiteral('{2, 1, 1}'), [2, 1, 1]);
    assert.equal(parsePyLiteral('5j'), undefined);
    assert.deepEqual(parsePyLiteral('{2, 1, 1}', { python: true }), [1, 2]);
    assert.deepEqual(parsePyLiteral('{1, True}', { python: true }), [1]);
    assert.deepEqual(parsePyLiteral('{True, 1}', { python: true }), [true]);
  });

  it('reads complex numbers, big integers and comments as literal_eval does', () => {
    assert.deepEqual(parsePyLiteral('5j', { python: true }), { kind: 'complex', re: 0, im: 5 });
    assert.deepEqual(parsePyLiteral('1 - 2j', { python: true }), { kind: 'complex', re: 1, im: -2 });
    assert.equal(parsePyLiteral('1 + 2', { python: true }), undefined, 'only real ± complex is a literal');
    assert.equal(parsePyLiteral('1' + '0'.repeat(400), { python: true }), 10n ** 400n);
    assert.equal(parsePyLiteral('1'.repeat(4301), { python: true }), undefined, "CPython 3.11's 4,300-digit limit");
    assert.equal(parsePyLiteral('1.#IND', { python: true }), 1);
    assert.equal(parsePyLiteral('1.#IND'), undefined);
  });
});
