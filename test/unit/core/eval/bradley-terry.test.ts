/**
 * Bradley–Terry ratings (issue 16): the fit against an independent one (statsmodels GLM Binomial), recovery of known
 * strengths, bootstrap interval coverage, active sampling, separated data and bad input, and the Elo scale.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  bootstrapBradleyTerry,
  ELO_SCALE,
  eloOf,
  fitBradleyTerry,
  mostUncertainPair,
  orderUncertainty,
  winRateMatrix,
  type Battle,
} from '../../../../src/core/eval/bradley-terry.ts';
import { LoupeInputError } from '../../../../src/core/util/errors.ts';
import { seededRandom } from '../../../../src/core/util/random.ts';

/** Battles drawn from known θ: uniform random pairs, a tie with probability `tieRate`, else the BT winner. */
function synthetic(theta: readonly number[], count: number, seed: number, tieRate = 0): Battle[] {
  const rand = seededRandom(seed);
  const names = theta.map((_, i) => `p${i}`);
  const out: Battle[] = [];
  for (let k = 0; k < count; k++) {
    const i = Math.floor(rand() * theta.length);
    let j = Math.floor(rand() * (theta.length - 1));
    if (j >= i) j++;
    const pWin = 1 / (1 + Math.exp(theta[j]! - theta[i]!));
    const winner = rand() < tieRate ? 'tie' : rand() < pWin ? 'a' : 'b';
    out.push({ a: names[i]!, b: names[j]!, winner });
  }
  return out;
}

const centred = (xs: readonly number[]) => {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  return xs.map((x) => x - mean);
};

const STATSMODELS = String.raw`
import json, sys
import numpy as np
import statsmodels.api as sm
battles = json.load(open(sys.argv[1]))
ties = sys.argv[2]
players = sorted({p for b in battles for p in (b['a'], b['b'])})
idx = {p: i for i, p in enumerate(players)}
m = len(players)
X, y, w = [], [], []
for b in battles:
    row = np.zeros(m)
    row[idx[b['a']]] += 1
    row[idx[b['b']]] -= 1
    if b['winner'] == 'tie':
        if ties == 'ignore':
            continue
        X += [row, row]; y += [1, 0]; w += [0.5, 0.5]
    else:
        X.append(row); y.append(1 if b['winner'] == 'a' else 0); w.append(1.0)
X = np.array(X)[:, 1:]  # player 0 is the reference (theta 0), no intercept
res = sm.GLM(np.array(y, float), X, family=sm.families.Binomial(), freq_weights=np.array(w)).fit(tol=1e-14, maxiter=200)
beta = np.concatenate([[0.0], res.params])
# sum-to-zero parameterisation: theta = Q beta, Q = I - 11'/m; cov(theta) = Q E cov(beta) E' Q
E = np.vstack([np.zeros((1, m - 1)), np.eye(m - 1)])
Q = np.eye(m) - np.ones((m, m)) / m
cov = Q @ E @ np.asarray(res.cov_params()) @ E.T @ Q
print(json.dumps({'players': players, 'theta': list(Q @ beta), 'cov': cov.tolist()}))
`;

describe('eval/bradley-terry', () => {
  it('equals an independent maximum-likelihood fit (statsmodels GLM Binomial), ties half or ignored, θ and covariance', () => {
    const battles = synthetic([0.8, 0.3, 0, -0.2, -0.5, 0.9], 600, 11, 0.12);
    assert.ok(battles.filter((b) => b.winner === 'tie').length > 30, 'the data has ties');
    const dir = mkdtempSync(join(tmpdir(), 'loupe-bt-'));
    try {
      const file = join(dir, 'battles.json');
      writeFileSync(file, JSON.stringify(battles));
      for (const ties of ['half', 'ignore'] as const) {
        const r = spawnSync('/usr/bin/python3', ['-c', STATSMODELS, file, ties], { encoding: 'utf8', timeout: 60_000 });
        assert.equal(r.status, 0, r.stderr);
        const ref = JSON.parse(r.stdout) as { players: string[]; theta: number[]; cov: number[][] };
        const fit = fitBradleyTerry(battles, { ties });
        assert.ok(fit.converged && !fit.separated);
        assert.deepEqual(fit.players, ref.players);
        let maxDiff = 0;
        let maxCovDiff = 0;
        ref.players.forEach((p, i) => {
          maxDiff = Math.max(maxDiff, Math.abs(fit.logStrengths[p]! - ref.theta[i]!));
          ref.players.forEach(
            (_, j) => (maxCovDiff = Math.max(maxCovDiff, Math.abs(fit.covariance[i]![j]! - ref.cov[i]![j]!))),
          );
        });
        assert.ok(maxDiff < 1e-6, `ties ${ties}: max |Δθ| vs statsmodels ${maxDiff}`);
        assert.ok(maxCovDiff < 1e-6, `ties ${ties}: max |Δcov| vs statsmodels ${maxCovDiff}`);
        console.log(
          `# ties ${ties}: max |Δθ| vs statsmodels ${maxDiff.toExponential(2)}, max |Δcov| ${maxCovDiff.toExponential(2)}`,
        );
      }
      // the two rules differ on this data, so each comparison above checks its own rule
      assert.notEqual(
        fitBradleyTerry(battles, { ties: 'half' }).logStrengths.p0,
        fitBradleyTerry(battles, { ties: 'ignore' }).logStrengths.p0,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('recovers known strengths from 20,000 battles among 8 players (within 0.1, and within 4 standard errors)', () => {
    const truth = centred([1.5, 1.0, 0.6, 0.2, -0.1, -0.5, -1.0, -1.4]);
    const fit = fitBradleyTerry(synthetic(truth, 20_000, 3));
    assert.ok(fit.converged);
    truth.forEach((t, i) => {
      const p = `p${i}`;
      const se = Math.sqrt(fit.covariance[i]![i]!);
      const err = Math.abs(fit.logStrengths[p]! - t);
      assert.ok(err < 0.1, `${p}: θ ${fit.logStrengths[p]} vs true ${t}`);
      assert.ok(err < 4 * se, `${p}: error ${err} vs se ${se}`);
      assert.ok(se > 0.01 && se < 0.06, `${p}: se ${se}`);
    });
    assert.ok(Math.abs(Object.values(fit.logStrengths).reduce((a, b) => a + b, 0)) < 1e-12, 'Σθ = 0');
  });

  it('bootstrap percentile intervals cover the true θ about 95% of the time (200 data sets × 200 resamples)', () => {
    const truth = centred([0.9, 0.4, 0, -0.3, -1.0]);
    let covered = 0;
    let total = 0;
    for (let rep = 0; rep < 200; rep++) {
      const boot = bootstrapBradleyTerry(synthetic(truth, 300, 1000 + rep), { samples: 200, seed: rep });
      truth.forEach((t, i) => {
        const ci = boot.logStrengthCi[`p${i}`]!;
        total++;
        if (ci.ciLow <= t && t <= ci.ciHigh) covered++;
      });
    }
    const coverage = covered / total;
    console.log(`# bootstrap 95% interval coverage ${coverage.toFixed(3)} (${covered}/${total})`);
    assert.ok(
      coverage >= 0.88 && coverage <= 0.99,
      `measured coverage ${coverage.toFixed(3)} (${covered}/${total}) outside [0.88, 0.99]`,
    );
  });

  it('bootstrap: same seed same intervals, another seed other intervals; Elo intervals follow θ', () => {
    const battles = synthetic([0.5, 0, -0.5], 200, 5, 0.1);
    const a = bootstrapBradleyTerry(battles, { samples: 100, seed: 4 });
    const b = bootstrapBradleyTerry(battles, { samples: 100, seed: 4 });
    const c = bootstrapBradleyTerry(battles, { samples: 100, seed: 5 });
    assert.deepEqual(a.logStrengthCi, b.logStrengthCi);
    assert.notDeepEqual(a.logStrengthCi, c.logStrengthCi);
    assert.equal(a.samples, 100);
    for (const p of a.fit.players) {
      const ci = a.logStrengthCi[p]!;
      assert.ok(ci.ciLow < a.fit.logStrengths[p]! && a.fit.logStrengths[p]! < ci.ciHigh, p);
      assert.ok(
        Math.abs(a.eloCi[p]!.ciLow - eloOf(ci.ciLow)) < 1e-9 && Math.abs(a.eloCi[p]!.ciHigh - eloOf(ci.ciHigh)) < 1e-9,
        p,
      );
    }
    assert.throws(
      () => bootstrapBradleyTerry(battles, { level: 1 }),
      (e: unknown) => e instanceof LoupeInputError && e.subject === 'level',
    );
    assert.throws(
      () => bootstrapBradleyTerry(battles, { samples: 0 }),
      (e: unknown) => e instanceof LoupeInputError && e.subject === 'samples',
    );
  });

  it('active sampling serves the nearly tied, rarely compared pair; an unseen player has order uncertainty 0.5', () => {
    const battles: Battle[] = [];
    const add = (a: string, b: string, aWins: number, bWins: number) => {
      for (let k = 0; k < aWins; k++) battles.push({ a, b, winner: 'a' });
      for (let k = 0; k < bWins; k++) battles.push({ a, b, winner: 'b' });
    };
    add('A', 'B', 40, 10);
    add('B', 'C', 40, 10);
    add('A', 'C', 45, 5);
    add('C', 'D', 3, 2); // nearly tied, five battles
    add('B', 'D', 40, 10); // D about as strong as C
    const fit = fitBradleyTerry(battles);
    const candidates: Array<[string, string]> = [
      ['A', 'B'],
      ['B', 'C'],
      ['C', 'D'],
      ['A', 'D'],
      ['B', 'D'],
    ];
    const u = candidates.map(([a, b]) => orderUncertainty(fit, a, b));
    assert.equal(mostUncertainPair(fit, candidates), 2, `uncertainties ${u.map((x) => x.toFixed(3)).join(' ')}`);
    assert.ok(u[2]! > 0.2 && u[2]! < 0.5, String(u[2]));
    u.forEach((x, k) => k === 2 || assert.ok(x < 0.1, `${candidates[k]!.join('–')}: ${x}`));
    assert.equal(orderUncertainty(fit, 'A', 'Z'), 0.5);
    assert.equal(mostUncertainPair(fit, [...candidates, ['Z', 'A']]), candidates.length);
    // ties on uncertainty: fewer battles first, then input order
    const even = fitBradleyTerry([
      { a: 'P', b: 'Q', winner: 'a' },
      { a: 'P', b: 'Q', winner: 'b' },
    ]);
    assert.equal(orderUncertainty(even, 'P', 'Q'), 0.5);
    assert.equal(
      mostUncertainPair(even, [
        ['P', 'Q'],
        ['P', 'Z'],
      ]),
      1,
    );
    assert.equal(
      mostUncertainPair(even, [
        ['P', 'Z'],
        ['P', 'Q'],
      ]),
      0,
    );
    assert.equal(
      mostUncertainPair(even, [
        ['Y', 'Q'],
        ['P', 'Z'],
      ]),
      0,
    );
    assert.throws(() => mostUncertainPair(even, []), LoupeInputError);
  });

  it('l2 keeps separated data finite; the pure MLE stops quickly, not converged and marked separated', () => {
    const battles: Battle[] = [
      ...Array.from({ length: 5 }, () => ({ a: 'A', b: 'B', winner: 'a' as const })),
      ...Array.from({ length: 5 }, () => ({ a: 'B', b: 'C', winner: 'a' as const })),
      { a: 'C', b: 'D', winner: 'a' },
      { a: 'D', b: 'C', winner: 'a' },
    ];
    const t0 = performance.now();
    const mle = fitBradleyTerry(battles, { maxIter: 100 });
    const ms = performance.now() - t0;
    assert.equal(mle.separated, true);
    assert.equal(mle.converged, false);
    assert.equal(mle.iterations, 100);
    assert.ok(ms < 200, `${ms} ms`);
    assert.ok(mle.logStrengths.A! - mle.logStrengths.B! > 20, 'the MLE runs off to infinity');
    const ridge = fitBradleyTerry(battles, { l2: 0.1 });
    assert.equal(ridge.converged, true);
    assert.equal(ridge.separated, true);
    for (const p of ridge.players) {
      assert.ok(
        Number.isFinite(ridge.logStrengths[p]!) && Math.abs(ridge.logStrengths[p]!) < 5,
        `${p}: ${ridge.logStrengths[p]}`,
      );
    }
    assert.ok(ridge.logStrengths.A! > ridge.logStrengths.B! && ridge.logStrengths.B! > ridge.logStrengths.C!);
    assert.ok(
      Math.abs(Object.values(ridge.logStrengths).reduce((a, b) => a + b, 0)) < 1e-12,
      'Σθ = 0 under the penalty too',
    );
    // a data set whose MLE exists is not marked
    assert.equal(
      fitBradleyTerry([
        { a: 'A', b: 'B', winner: 'a' },
        { a: 'A', b: 'B', winner: 'b' },
      ]).separated,
      false,
    );
  });

  it('bad input throws LoupeInputError naming the battle', () => {
    const ok: Battle = { a: 'A', b: 'B', winner: 'a' };
    const cases: Array<[unknown, RegExp]> = [
      [{ a: '', b: 'B', winner: 'a' }, /player a/],
      [{ a: 'A', b: 'A', winner: 'a' }, /itself/],
      [{ a: 'A', b: 'B', winner: 'x' }, /winner/],
      [{ a: 'A', b: 'B', winner: 'a', weight: -1 }, /weight/],
      [{ a: 'A', b: 'B', winner: 'a', weight: NaN }, /weight/],
    ];
    for (const [bad, msg] of cases) {
      assert.throws(
        () => fitBradleyTerry([ok, ok, bad as Battle]),
        (e: unknown) => e instanceof LoupeInputError && e.subject === 'battle 2' && msg.test(e.message),
        JSON.stringify(bad),
      );
    }
    assert.throws(
      () => fitBradleyTerry([ok], { l2: -1 }),
      (e: unknown) => e instanceof LoupeInputError && e.subject === 'l2',
    );
    assert.throws(
      () => fitBradleyTerry([ok], { ties: 'drop' as never }),
      (e: unknown) => e instanceof LoupeInputError && e.subject === 'ties',
    );
  });

  it('Elo scale: 1000 + θ·400/ln 10, mean 1000; weights count as repeated battles', () => {
    const battles = synthetic([1, 0.2, -0.4, -0.8], 400, 9, 0.1);
    const fit = fitBradleyTerry(battles);
    assert.equal(ELO_SCALE, 400 / Math.LN10);
    for (const p of fit.players) {
      assert.ok(Math.abs(fit.elo[p]! - (1000 + (fit.logStrengths[p]! * 400) / Math.log(10))) < 1e-9, p);
    }
    const mean = Object.values(fit.elo).reduce((a, b) => a + b, 0) / fit.players.length;
    assert.ok(Math.abs(mean - 1000) < 1e-9, String(mean));
    // 10:1 odds are 400 points: A beats B 10 times, B beats A once
    const ten = fitBradleyTerry([
      ...Array.from({ length: 10 }, () => ({ a: 'A', b: 'B', winner: 'a' as const })),
      { a: 'A', b: 'B', winner: 'b' },
    ]);
    assert.ok(Math.abs(ten.elo.A! - ten.elo.B! - 400) < 1e-6, String(ten.elo.A! - ten.elo.B!));
    const weighted = fitBradleyTerry([
      { a: 'A', b: 'B', winner: 'a', weight: 10 },
      { a: 'A', b: 'B', winner: 'b' },
    ]);
    assert.ok(Math.abs(weighted.logStrengths.A! - ten.logStrengths.A!) < 1e-9);
  });

  it('win-rate matrix: ties half or ignored, row order as asked, null without battles', () => {
    const battles: Battle[] = [
      { a: 'A', b: 'B', winner: 'a' },
      { a: 'B', b: 'A', winner: 'tie' },
      { a: 'A', b: 'B', winner: 'b' },
      { a: 'C', b: 'A', winner: 'a' },
    ];
    const m = winRateMatrix(battles, { players: ['C', 'A'] });
    assert.deepEqual(m.players, ['C', 'A', 'B']);
    assert.deepEqual(m.wins[1], [0, 0, 1.5]);
    assert.deepEqual(m.battles[1], [1, 0, 3]);
    assert.deepEqual(m.rate[1], [0, null, 0.5]);
    assert.deepEqual(m.rate[0], [null, 1, null]);
    const ig = winRateMatrix(battles, { ties: 'ignore' });
    assert.deepEqual(ig.players, ['A', 'B', 'C']);
    assert.deepEqual(ig.battles[0], [0, 2, 1]);
    assert.deepEqual(ig.rate[0], [null, 0.5, 0]);
  });
});
