import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  bootstrapAgreement,
  cohensKappa,
  gwetAC,
  krippendorffAlpha,
  pairwiseAgreement,
} from '../../../../src/core/eval/agreement.ts';

const close = (a: number, b: number, eps = 5e-4) => assert.ok(Math.abs(a - b) < eps, `${a} ≉ ${b}`);

// Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", 4 observers × 12 units with missing data:
// published α nominal = 0.743, interval = 0.849.
const K = null;
const data = [
  [1, 2, 3, 3, 2, 1, 4, 1, 2, K, K, K],
  [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, K, 3],
  [K, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, K],
  [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, K],
];

describe('eval/agreement', () => {
  it("Cohen's κ on the textbook 2×2 example (20/5/10/15 of 50 → κ = 0.4)", () => {
    const a: string[] = [];
    const b: string[] = [];
    const add = (x: string, y: string, n: number) => {
      for (let i = 0; i < n; i++) {
        a.push(x);
        b.push(y);
      }
    };
    add('yes', 'yes', 20);
    add('yes', 'no', 5);
    add('no', 'yes', 10);
    add('no', 'no', 15);
    const k = cohensKappa(a, b);
    close(k.observed, 0.7);
    close(k.expected, 0.5);
    close(k.kappa, 0.4);
  });

  it("Cohen's κ drops missing pairs and handles perfect agreement", () => {
    assert.equal(cohensKappa(['a', 'b', null], ['a', 'b', 'c']).kappa, 1);
    assert.equal(cohensKappa(['a', 'a'], ['a', 'a']).kappa, 1);
    assert.throws(() => cohensKappa(['a'], []), /differ in length/);
  });

  it("Krippendorff's α nominal = 0.743 on Krippendorff's example", () => {
    const r = krippendorffAlpha(data, 'nominal');
    close(r.alpha, 0.743);
    assert.equal(r.units, 11, 'unit 12 has one value and is not pairable');
    assert.equal(r.n, 40);
  });
  it("Krippendorff's α interval = 0.849 on Krippendorff's example", () => {
    close(krippendorffAlpha(data, 'interval').alpha, 0.849);
  });
  it("Krippendorff's α for two raters without missing values is close to Scott's π form", () => {
    // 2 raters, nominal: α = 1 − (n−1)·D_o/D_e; check a hand-computed case.
    // values: unit1 (a,a), unit2 (a,b), unit3 (b,b) → o_ab = o_ba = 1, n_a = 3, n_b = 3, n = 6 → α = 1 − 5·2/(2·9) = 4/9
    close(
      krippendorffAlpha([
        ['a', 'a', 'b'],
        ['a', 'b', 'b'],
      ]).alpha,
      4 / 9,
      1e-12,
    );
  });
  it('pairwise agreement', () => {
    close(
      pairwiseAgreement([
        ['a', 'a', 'b'],
        ['a', 'b', 'b'],
        ['a', 'b', null],
      ]),
      (1 + 1 / 3 + 1) / 3,
      1e-12,
    );
  });
});

describe('eval/agreement between judges', () => {
  it('matches items by task and input hash, ignores unjudged ones', async () => {
    const { judgeAgreement } = await import('../../../../src/core/eval/agreement.ts');
    const j = (task: string, h: string, verdict: unknown, status = 'done') => ({ task, inputHash: h, status, verdict });
    const llm = [
      j('claim-support', 'a', { supported: true }),
      j('claim-support', 'b', { supported: false }),
      j('claim-support', 'c', { supported: true }),
      j('claim-support', 'd', { supported: true }),
      j('hallucination', 'a', { hallucinated: true }),
    ];
    const human = [
      j('claim-support', 'a', { supported: true }),
      j('claim-support', 'b', { supported: true }),
      j('claim-support', 'c', { supported: true }),
      j('claim-support', 'd', null, 'pending'),
    ];
    const r = judgeAgreement(llm, human);
    assert.equal(r.items, 3);
    close(r.agreement, 2 / 3, 1e-12);
    // A: T F T, B: T T T → p_o = 2/3, p_e = (2/3)(1) = 2/3 → κ = 0
    close(r.kappa, 0, 1e-12);
    const s = judgeAgreement(
      [j('checklist-score', 'x', { score: 4 }), j('checklist-score', 'y', { score: 2 })],
      [j('checklist-score', 'x', { score: 4 }), j('checklist-score', 'y', { score: 2 })],
      'interval',
    );
    assert.equal(s.alpha, 1);
  });
});

describe('eval/agreement: ordinal α, Gwet AC1/AC2, bootstrap CIs', () => {
  it("Krippendorff's α ordinal = 0.815 (Krippendorff 2011, the same data as nominal 0.743 / interval 0.849)", () => {
    close(krippendorffAlpha(data, 'ordinal').alpha, 0.815);
    close(krippendorffAlpha(data, 'nominal').alpha, 0.743);
    close(krippendorffAlpha(data, 'interval').alpha, 0.849);
  });
  it("Gwet's AC1 = 0.77544 with p_a 0.8181818, p_e 0.1903212 (irrCAC README, gwet.ac1.raw(cac.raw4raters))", () => {
    const r = gwetAC(data);
    close(r.coefficient, 0.77544, 5e-6);
    close(r.pa, 0.8181818, 1e-7);
    close(r.pe, 0.1903212, 1e-7);
    assert.equal(r.units, 11);
  });
  it('AC2 with weights: perfect agreement is 1; quadratic weights credit near misses more than identity', () => {
    assert.equal(
      gwetAC(
        [
          [1, 2, 3, 4, 5],
          [1, 2, 3, 4, 5],
        ],
        'quadratic',
        [1, 2, 3, 4, 5],
      ).coefficient,
      1,
    );
    const near = [
      [1, 2, 3, 4, 5, 5],
      [2, 3, 4, 5, 4, 5],
    ];
    assert.ok(
      gwetAC(near, 'quadratic', [1, 2, 3, 4, 5]).coefficient > gwetAC(near, 'identity', [1, 2, 3, 4, 5]).coefficient,
    );
    assert.throws(
      () =>
        gwetAC(
          [
            ['a', 'b'],
            ['a', 'a'],
          ],
          'quadratic',
        ),
      /numeric ratings/,
    );
    assert.throws(() => gwetAC([[1, 7]], 'identity', [1, 2, 3]), /not one of the categories/);
  });
  it('bootstrap CIs are reproducible by seed and bracket the estimate', () => {
    const f = (m: Array<Array<number | null | undefined | string | boolean>>) => krippendorffAlpha(m, 'nominal').alpha;
    const a = bootstrapAgreement(data, f, { seed: 7, resamples: 500 });
    const b = bootstrapAgreement(data, f, { seed: 7, resamples: 500 });
    assert.deepEqual(a, b);
    assert.ok(a.low <= 0.743 && 0.743 <= a.high, `${a.low}..${a.high}`);
    assert.ok(Number.isNaN(bootstrapAgreement([[]], f).low));
  });
});
