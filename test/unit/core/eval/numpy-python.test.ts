/**
 * Issue 47: numpy's and Python's arithmetic (src/core/eval/numpy-python.ts) equal numpy 1.24.2 / CPython 3.11.2 bit for
 * bit on inputs written for this test (test/fixtures/official-parity/numpy-python/, produced by its
 * official_expected.py on the Debian Python).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  npMean,
  npQuantile,
  npSum,
  pairwiseSum,
  pyJsonLoads,
  PyJsonError,
  pyMax,
  pyStatisticsMean,
  pyStrip,
  ratioToDouble,
  type PyJson,
} from '../../../../src/core/eval/numpy-python.ts';

const FIX = join(import.meta.dirname, '../../../fixtures/official-parity/numpy-python/expected.json');
type Num = number | 'NaN' | 'Infinity' | '-Infinity';
type Tagged = null | boolean | number | string | Tagged[] | { float: string } | { object: Record<string, Tagged> };
const exp = JSON.parse(readFileSync(FIX, 'utf8')) as {
  lists: Array<{ xs: Num[]; out: Array<Num | string> }>;
  long: Array<{ formula: number; out: Num[] }>;
  loads: Array<{ text: string; ok?: Tagged; error?: string; pos?: number }>;
  strip: Array<{ s: string; out: string }>;
  max: Array<{ xs: Array<Num | boolean>; out: Num }>;
};
const dec = (x: Num | boolean): number => (typeof x === 'boolean' ? Number(x) : typeof x === 'string' ? Number(x) : x);
const untag = (v: Tagged): PyJson => {
  if (Array.isArray(v)) return v.map(untag);
  if (v !== null && typeof v === 'object') {
    return 'float' in v ? Number(v.float) : Object.fromEntries(Object.entries(v.object).map(([k, x]) => [k, untag(x)]));
  }
  return v;
};
const formula = (n: number) => Array.from({ length: n }, (_, i) => ((i * 7919) % 1009) / 13 + 1 / (i + 1) - 40);
const mine = (xs: number[]) => [
  npSum(xs),
  npMean(xs),
  npMean(xs),
  npQuantile(xs, 0.025),
  npQuantile(xs, 0.5),
  npQuantile(xs, 0.975),
];
const NAMES = ['np.sum', 'np.mean', 'ndarray.mean', 'quantile .025', 'quantile .5', 'quantile .975', 'statistics.mean'];

describe('numpy-python arithmetic equals numpy 1.24.2 / Python 3.11.2 (fixture numpy-python/)', () => {
  it('np.sum, np.mean, np.quantile and statistics.mean: === on every list', () => {
    let equal = 0;
    let total = 0;
    let leftToRightDiffers = 0;
    for (const c of exp.lists) {
      const xs = c.xs.map(dec);
      const got = [...mine(xs), pyStatisticsMean(xs)];
      got.forEach((g, i) => {
        total++;
        assert.ok(
          Object.is(g, dec(c.out[i] as Num)),
          `${NAMES[i]} of ${xs.length} values: ${g} vs ${String(c.out[i])}`,
        );
        equal++;
      });
      if (
        !Object.is(
          xs.reduce((a, b) => a + b, 0),
          dec(c.out[0] as Num),
        )
      ) {
        leftToRightDiffers++;
      }
    }
    assert.equal(equal, total);
    assert.ok(
      leftToRightDiffers > 10,
      `the fixture must tell pairwise from left-to-right summation (${leftToRightDiffers} lists do)`,
    );
  });

  it('long lists past the 8192-element reduction buffer', () => {
    for (const c of exp.long) {
      const xs = formula(c.formula);
      const got = [...mine(xs), pyStatisticsMean(xs)];
      got.forEach((g, i) =>
        assert.ok(Object.is(g, dec(c.out[i]!)), `${NAMES[i]} of ${c.formula}: ${g} vs ${String(c.out[i])}`),
      );
    }
    const xs = formula(9000);
    assert.notEqual(pairwiseSum(xs), npSum(xs), "one pairwise pass over 9000 values is not numpy's buffered order");
  });

  it('json.loads: NaN / Infinity / -Infinity accepted, every malformed text refused where Python refuses (same position)', () => {
    for (const c of exp.loads) {
      if (c.error) {
        assert.throws(
          () => pyJsonLoads(c.text),
          (e: unknown) => e instanceof PyJsonError && e.kind === c.error && (c.pos === undefined || e.pos === c.pos),
          `${JSON.stringify(c.text.slice(0, 40))} should fail (${c.error} at ${c.pos})`,
        );
      } else {
        const v = pyJsonLoads(c.text);
        assert.deepEqual(
          JSON.parse(
            JSON.stringify(v, (_k, x: unknown) => (typeof x === 'number' && !Number.isFinite(x) ? `float:${x}` : x)),
          ),
          JSON.parse(
            JSON.stringify(untag(c.ok!), (_k, x: unknown) =>
              typeof x === 'number' && !Number.isFinite(x) ? `float:${x}` : x,
            ),
          ),
          c.text,
        );
      }
    }
    assert.ok(Object.is((pyJsonLoads('{"x": -0}') as Record<string, number>).x, 0), 'a Python int -0 is 0');
    assert.ok(Object.is((pyJsonLoads('{"x": -0.0}') as Record<string, number>).x, -0));
    assert.equal(Object.getPrototypeOf(pyJsonLoads('{"__proto__": 5}')), null);
  });

  it('str.strip and max() as Python', () => {
    for (const c of exp.strip) assert.equal(pyStrip(c.s), c.out, JSON.stringify(c.s));
    for (const c of exp.max) {
      assert.ok(
        Object.is(pyMax(c.xs.map((x) => (typeof x === 'boolean' ? x : dec(x)))), dec(c.out)),
        JSON.stringify(c.xs),
      );
    }
  });

  it('ratioToDouble rounds half to even, into subnormals and to infinity', () => {
    assert.equal(ratioToDouble(1n, 3n), 1 / 3);
    assert.equal(ratioToDouble((1n << 53n) + 1n, 1n), 2 ** 53, 'a tie rounds to even');
    assert.equal(ratioToDouble((1n << 53n) + 3n, 1n), 2 ** 53 + 4);
    assert.equal(ratioToDouble(1n, 1n << 1074n), 5e-324);
    assert.equal(ratioToDouble(1n, 1n << 1075n), 0, 'half the smallest subnormal ties to 0');
    assert.equal(ratioToDouble(3n, 1n << 1076n), 5e-324);
    assert.equal(ratioToDouble(1n << 1024n, 1n), Infinity);
    assert.equal(ratioToDouble(-7n, 2n), -3.5);
    assert.throws(() => ratioToDouble(1n, 0n), RangeError);
    assert.throws(() => pyStatisticsMean([]), RangeError);
  });
});
