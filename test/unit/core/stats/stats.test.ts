/**
 * Clustered means, paired differences and power (issue 48): equal to statsmodels to 1e-9 on fixtures with known
 * clusters (test/fixtures/stats, README there), and power formulas against a seeded Monte Carlo simulation.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LoupeInputError } from '../../../../src/core/util/errors.ts';
import { seededRandom } from '../../../../src/core/util/random.ts';
import {
  clusteredMean,
  designOfPaired,
  designOfProfile,
  itemMeans,
  minimumDetectableDifference,
  pairedDifference,
  powerOf,
  profileEstimate,
  requiredItems,
  requiredRepeats,
  type Observation,
  type PairedDesign,
} from '../../../../src/core/stats/index.ts';

const FIX = join(import.meta.dirname, '../../../fixtures/stats');
interface Ref {
  mean: number;
  se: number;
  ci: [number, number];
  se_miller_uncorrected: number;
  n: number;
  clusters: number;
  use_t: boolean;
}
function fixture(name: string): {
  obs: { A: Observation[]; B: Observation[] };
  ref: { statsmodels: string; difference: Ref; a: Ref };
} {
  return {
    obs: JSON.parse(readFileSync(join(FIX, `${name}.input.json`), 'utf8')),
    ref: JSON.parse(readFileSync(join(FIX, `${name}.statsmodels.json`), 'utf8')),
  };
}
function close(actual: number, expected: number, what: string, tol = 1e-9): void {
  assert.ok(
    Math.abs(actual - expected) <= tol,
    `${what}: ${actual} vs statsmodels ${expected} (|Δ| = ${Math.abs(actual - expected)})`,
  );
}

describe('clustered SE against statsmodels (cov_type=cluster, default correction, normal CI)', () => {
  for (const name of ['binary-12', 'fraction-7', 'longda-27']) {
    it(`${name}: paired difference and profile A's mean equal statsmodels to 1e-9`, () => {
      const { obs, ref } = fixture(name);
      assert.match(ref.statsmodels, /^0\.13/);
      assert.equal(ref.difference.use_t, false);
      const pd = pairedDifference(obs.A, obs.B, { bootstrap: 0, permutations: 0 });
      const d = pd.difference;
      assert.equal(d.n, ref.difference.n);
      assert.equal(d.clusters, ref.difference.clusters);
      close(d.mean, ref.difference.mean, 'mean difference');
      close(d.se, ref.difference.se, 'clustered SE (corrected)');
      close(d.seMillerUncorrected, ref.difference.se_miller_uncorrected, "Miller's uncorrected clustered SE");
      close(d.ci[0], ref.difference.ci[0], 'CI low');
      close(d.ci[1], ref.difference.ci[1], 'CI high');
      const shared = new Set(pd.items.map((i) => i.item));
      const a = profileEstimate(obs.A.filter((o) => shared.has(o.item)));
      close(a.mean, ref.a.mean, 'A mean');
      close(a.se, ref.a.se, 'A clustered SE');
      close(a.seMillerUncorrected, ref.a.se_miller_uncorrected, "A Miller's uncorrected SE");
      close(a.ci[0], ref.a.ci[0], 'A CI low');
      close(a.ci[1], ref.a.ci[1], 'A CI high');
      // The correction is what it says: se² = G/(G−1) · (N−1)/(N−K) · Miller² with K = 1.
      close(d.se ** 2, (d.clusters / (d.clusters - 1)) * d.seMillerUncorrected ** 2, 'correction factor', 1e-15);
    });
  }
});

describe('item means and clustered mean', () => {
  it('averages repeats within an item and reports the within-item sample variance', () => {
    const im = itemMeans([
      { item: 'q1', cluster: 'p1', value: 1 },
      { item: 'q1', cluster: 'p1', value: 0 },
      { item: 'q1', cluster: 'p1', value: 1 },
      { item: 'q2', cluster: 'p2', value: 0.5 },
    ]);
    assert.deepEqual(
      im.map((i) => [i.item, i.repeats]),
      [
        ['q1', 3],
        ['q2', 1],
      ],
    );
    close(im[0]!.mean, 2 / 3, 'mean', 1e-15);
    close(im[0]!.withinVariance!, 1 / 3, 'within variance', 1e-15);
    assert.equal(im[1]!.withinVariance, null);
  });
  it('an item in two clusters, a non-finite score, one cluster or one item are refused by name', () => {
    assert.throws(
      () =>
        itemMeans([
          { item: 'q1', cluster: 'p1', value: 1 },
          { item: 'q1', cluster: 'p2', value: 1 },
        ]),
      (e: unknown) => e instanceof LoupeInputError && /q1.*p1 and p2/.test(e.message),
    );
    assert.throws(() => itemMeans([{ item: 'q9', cluster: 'p1', value: Number.NaN }]), /item q9/);
    assert.throws(
      () =>
        clusteredMean([
          { value: 1, cluster: 'p' },
          { value: 0, cluster: 'p' },
        ]),
      /at least 2 clusters.*in p/,
    );
    assert.throws(() => clusteredMean([{ value: 1, cluster: 'p' }]), /at least 2 items/);
  });
  it('clusters widen the SE: perfectly correlated items within clusters count once', () => {
    const vals = ['a', 'b', 'c', 'd'].flatMap((c, k) =>
      Array.from({ length: 5 }, () => ({ value: k % 2, cluster: c })),
    );
    const cm = clusteredMean(vals);
    assert.ok(cm.se > 2 * cm.seIid, `${cm.se} vs iid ${cm.seIid}`);
  });
});

/** Standard normal draws (Box–Muller) from the seeded PRNG. */
function normals(rnd: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
}
/**
 * Simulates a paired design: G clusters × m items, K repeats per item and profile; the conditional-mean difference of
 * item i in cluster c is δ + u_c + v_i (u ~ N(0, τ²), v ~ N(0, ν²)); repeat noise N(0, σ²) for A and B.
 */
function simulate(
  seed: number,
  g: number,
  m: number,
  k: number,
  delta: number,
  tau: number,
  nu: number,
  sigma: number,
): { a: Observation[]; b: Observation[] } {
  const z = normals(seededRandom(seed));
  const a: Observation[] = [];
  const b: Observation[] = [];
  for (let c = 0; c < g; c++) {
    const u = tau * z();
    for (let j = 0; j < m; j++) {
      const d = delta + u + nu * z();
      const item = `c${c}i${j}`;
      const cluster = `c${c}`;
      for (let r = 0; r < k; r++) {
        a.push({ item, cluster, value: 0.5 + d / 2 + sigma * z() });
        b.push({ item, cluster, value: 0.5 - d / 2 + sigma * z() });
      }
    }
  }
  return { a, b };
}
/** Share of S simulated designs whose clustered z test rejects at 5%, and its simulation SE. */
function rejectionRate(
  s: number,
  g: number,
  m: number,
  k: number,
  delta: number,
  tau: number,
  nu: number,
  sigma: number,
): { rate: number; se: number } {
  let reject = 0;
  for (let r = 0; r < s; r++) {
    const { a, b } = simulate(1000 + r, g, m, k, delta, tau, nu, sigma);
    const d = pairedDifference(a, b, { bootstrap: 0, permutations: 0 }).difference;
    if (d.ci[0] > 0 || d.ci[1] < 0) reject++;
  }
  const rate = reject / s;
  return { rate, se: Math.sqrt((rate * (1 - rate)) / s) };
}

describe('power (Miller 2024 §5) against a seeded Monte Carlo simulation', () => {
  const tau = 0.06,
    nu = 0.1,
    sigma = 0.3,
    m = 4;
  const truth = (g: number, k: number): PairedDesign => ({
    omega2: m * tau ** 2 + nu ** 2,
    sigma2A: sigma ** 2,
    sigma2B: sigma ** 2,
    items: g * m,
    repeats: k,
    itemsPerCluster: m,
  });

  it('predicted power of a design agrees with the simulated rejection rate within 3 simulation SEs', () => {
    const g = 40,
      k = 2,
      delta = 0.04;
    const predicted = powerOf(truth(g, k), delta, g * m, k);
    const sim = rejectionRate(600, g, m, k, delta, tau, nu, sigma);
    assert.ok(predicted > 0.3 && predicted < 0.9, `a design with power in the informative range (${predicted})`);
    assert.ok(
      Math.abs(sim.rate - predicted) <= 3 * sim.se + 0.01,
      `simulated ${sim.rate} ± ${sim.se} vs predicted ${predicted}`,
    );
  });

  it('the repeats required for 80% power reach 80% in simulation, and one repeat fewer is predicted short of it', () => {
    const g = 40,
      delta = 0.05;
    const k = requiredRepeats(truth(g, 1), delta, g * m);
    assert.ok(k !== null && k >= 2, `k = ${k}`);
    assert.ok(powerOf(truth(g, k), delta, g * m, k) >= 0.8);
    assert.ok(powerOf(truth(g, k - 1), delta, g * m, k - 1) < 0.8);
    const sim = rejectionRate(600, g, m, k, delta, tau, nu, sigma);
    assert.ok(sim.rate >= 0.8 - 3 * sim.se - 0.01, `simulated power ${sim.rate} ± ${sim.se} at K = ${k}`);
  });

  it('the clusters required (items / items per cluster) give 80% power; the minimum detectable difference inverts it', () => {
    const delta = 0.05,
      k = 2;
    const { items, clusters } = requiredItems(truth(1, k), delta, k);
    assert.equal(clusters, Math.ceil(items / m));
    assert.ok(powerOf(truth(clusters, k), delta, clusters * m, k) >= 0.8);
    const mdd = minimumDetectableDifference(truth(clusters, k), clusters * m, k);
    assert.ok(mdd <= delta && mdd > 0.9 * delta, `mdd ${mdd}`);
    close(powerOf(truth(clusters, k), mdd, clusters * m, k), 0.8, 'power at the MDD', 1e-3);
    const sim = rejectionRate(400, clusters, m, k, delta, tau, nu, sigma);
    assert.ok(sim.rate >= 0.8 - 3 * sim.se - 0.01, `simulated ${sim.rate} ± ${sim.se} with ${clusters} clusters`);
  });

  it('no number of repeats helps when the items alone cannot reach the power', () => {
    assert.equal(requiredRepeats(truth(2, 1), 0.01, 8), null);
  });

  it('the observed design recovers the simulated variances', () => {
    const { a, b } = simulate(7, 200, m, 3, 0.02, tau, nu, sigma);
    const d = designOfPaired(pairedDifference(a, b, { bootstrap: 0, permutations: 0 }));
    assert.ok(Math.abs(d.sigma2A - sigma ** 2) < 0.1 * sigma ** 2, `σ²_A ${d.sigma2A}`);
    const omega = m * tau ** 2 + nu ** 2;
    assert.ok(Math.abs(d.omega2 - omega) < 0.5 * omega, `ω² ${d.omega2} vs ${omega}`);
    assert.equal(d.repeats, 3);
    const one = designOfProfile(profileEstimate(a));
    assert.ok(Math.abs(one.sigma2A - sigma ** 2) < 0.1 * sigma ** 2);
  });

  it('a design without repeats is refused: the within-item variance is unknown', () => {
    const { a, b } = simulate(8, 5, 2, 1, 0, tau, nu, sigma);
    assert.throws(() => designOfPaired(pairedDifference(a, b, { bootstrap: 0, permutations: 0 })), /repeats/);
  });
});

describe('paired checks: cluster bootstrap and sign-flip permutation', () => {
  it('are seeded (same seed, same numbers), agree with the clustered SE, and find a real difference', () => {
    const { obs } = fixture('longda-27');
    const p1 = pairedDifference(obs.A, obs.B, { seed: 3 });
    const p2 = pairedDifference(obs.A, obs.B, { seed: 3 });
    assert.deepEqual(p1.bootstrap, p2.bootstrap);
    assert.deepEqual(p1.permutation, p2.permutation);
    const ratio = p1.bootstrap!.se / p1.difference.seMillerUncorrected;
    assert.ok(ratio > 0.85 && ratio < 1.15, `bootstrap SE / clustered SE = ${ratio}`);
    assert.ok(Math.abs(p1.pairedT.t - p1.difference.mean / p1.difference.se) < 1e-12);
    assert.equal(p1.pairedT.df, 26);
    const sim = simulate(11, 30, 4, 2, 0.15, 0.03, 0.05, 0.2);
    const strong = pairedDifference(sim.a, sim.b, { seed: 1 });
    assert.ok(strong.permutation!.p < 0.01 && strong.pairedT.p < 0.01, `${strong.permutation!.p} ${strong.pairedT.p}`);
    const nul = simulate(12, 30, 4, 2, 0, 0.03, 0.05, 0.2);
    const none = pairedDifference(nul.a, nul.b, { seed: 1 });
    assert.ok(none.permutation!.p > 0.01, `${none.permutation!.p}`);
  });
  it('compares only the items both ran and lists the rest and the disagreements', () => {
    const a: Observation[] = [
      { item: 'x', cluster: 'p', value: 1 },
      { item: 'y', cluster: 'p', value: 0 },
      { item: 'z', cluster: 'q', value: 1 },
      { item: 'w', cluster: 'q', value: 1 },
      { item: 'only-a', cluster: 'q', value: 1 },
    ];
    const b: Observation[] = [
      { item: 'x', cluster: 'p', value: 1 },
      { item: 'y', cluster: 'p', value: 1 },
      { item: 'z', cluster: 'q', value: 0 },
      { item: 'w', cluster: 'q', value: 1 },
      { item: 'only-b', cluster: 'p', value: 0 },
    ];
    const pd = pairedDifference(a, b, { bootstrap: 10, permutations: 10 });
    assert.deepEqual(pd.onlyA, ['only-a']);
    assert.deepEqual(pd.onlyB, ['only-b']);
    assert.deepEqual(
      pd.disagreements.map((i) => [i.item, i.diff]),
      [
        ['y', -1],
        ['z', 1],
      ],
    );
    assert.throws(
      () => pairedDifference(a, [{ item: 'x', cluster: 'q', value: 1 }]),
      /item x.*cluster p for A and q for B/,
    );
  });
});
