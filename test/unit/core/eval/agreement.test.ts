import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cohensKappa, krippendorffAlpha, pairwiseAgreement } from '../../../../src/core/eval/agreement.ts';

const close = (a: number, b: number, eps = 5e-4) => assert.ok(Math.abs(a - b) < eps, `${a} ≉ ${b}`);

describe('eval/agreement', () => {
  it("Cohen's κ on the textbook 2×2 example (20/5/10/15 of 50 → κ = 0.4)", () => {
    const a: string[] = [];
    const b: string[] = [];
    const add = (x: string, y: string, n: number) => { for (let i = 0; i < n; i++) { a.push(x); b.push(y); } };
    add('yes', 'yes', 20); add('yes', 'no', 5); add('no', 'yes', 10); add('no', 'no', 15);
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

  // Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", 4 observers × 12 units with missing data:
  // published α nominal = 0.743, interval = 0.849.
  const K = null;
  const data = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, K, K, K],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, K, 3],
    [K, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, K],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, K],
  ];
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
    close(krippendorffAlpha([['a', 'a', 'b'], ['a', 'b', 'b']]).alpha, 4 / 9, 1e-12);
  });
  it('pairwise agreement', () => {
    close(pairwiseAgreement([['a', 'a', 'b'], ['a', 'b', 'b'], ['a', 'b', null]]), (1 + 1 / 3 + 1) / 3, 1e-12);
  });
});

describe('eval/agreement between judges', () => {
  it('matches items by task and input hash, ignores unjudged ones', async () => {
    const { judgeAgreement } = await import('../../../../src/core/eval/agreement.ts');
    const j = (task: string, h: string, verdict: unknown, status = 'done') => ({ task, inputHash: h, status, verdict });
    const llm = [j('claim-support', 'a', { supported: true }), j('claim-support', 'b', { supported: false }), j('claim-support', 'c', { supported: true }), j('claim-support', 'd', { supported: true }), j('hallucination', 'a', { hallucinated: true })];
    const human = [j('claim-support', 'a', { supported: true }), j('claim-support', 'b', { supported: true }), j('claim-support', 'c', { supported: true }), j('claim-support', 'd', null, 'pending')];
    const r = judgeAgreement(llm, human);
    assert.equal(r.items, 3);
    close(r.agreement, 2 / 3, 1e-12);
    // A: T F T, B: T T T → p_o = 2/3, p_e = (2/3)(1) = 2/3 → κ = 0
    close(r.kappa, 0, 1e-12);
    const s = judgeAgreement([j('checklist-score', 'x', { score: 4 }), j('checklist-score', 'y', { score: 2 })], [j('checklist-score', 'x', { score: 4 }), j('checklist-score', 'y', { score: 2 })], 'interval');
    assert.equal(s.alpha, 1);
  });
});
