/**
 * Bradley–Terry ratings from pairwise battles, shared by the side-by-side report review (issue 16) and the DDR-Bench
 * novelty ranking: P(i beats j) = σ(θᵢ − θⱼ) = 1 / (1 + exp(θⱼ − θᵢ)), fitted by maximum likelihood (optionally with a
 * Gaussian ridge penalty), with the sum-to-zero constraint Σθ = 0, shown on the Elo scale 1000 + θ·400/ln 10, with
 * percentile bootstrap intervals and the order uncertainty of a pair used to serve the next pair to a reviewer.
 *
 * Battles are first aggregated into win counts per unordered pair, so a fit costs O(pairs + players³) per Newton
 * step whatever the number of battles; the bootstrap resamples battles by drawing indices into those cells.
 *
 * Sources: R. A. Bradley and M. E. Terry (1952), "Rank analysis of incomplete block designs: I. The method of paired
 * comparisons", Biometrika 39; D. R. Hunter (2004), "MM algorithms for generalized Bradley–Terry models", Ann. Stat.
 * 32 (existence of the MLE: Assumption 1 — the "beats" graph is strongly connected); W.-L. Chiang et al. (2024),
 * "Chatbot Arena: an open platform for evaluating LLMs by human preference", §4–5 (BT with ties as half wins,
 * bootstrap CIs, active sampling of the pairs whose order is least certain) and their notebook's Elo scale
 * (SCALE 400, BASE 10, INIT_RATING 1000, i.e. 400/ln 10 rating points per unit of θ); B. Efron (1979), "Bootstrap
 * methods: another look at the jackknife" (percentile intervals).
 */
import { LoupeInputError } from '../util/errors.ts';
import { seededRandom } from '../util/random.ts';

/** One pairwise comparison: `a` against `b`; `weight` (default 1, finite, ≥ 0) multiplies its count. */
export interface Battle {
  a: string;
  b: string;
  winner: 'a' | 'b' | 'tie';
  weight?: number;
}

/** How a tie counts: `half` = half a win for each side (Chatbot Arena), `ignore` = left out of the fit. */
export type TieRule = 'half' | 'ignore';

/** Options of {@link fitBradleyTerry}. */
export interface BradleyTerryOptions {
  /** Default `half`. */
  ties?: TieRule;
  /**
   * Ridge penalty λ ≥ 0 on the log-likelihood, −λ·Σθᵢ² (a Gaussian prior θᵢ ~ N(0, 1/(2λ))). Default 0: pure
   * maximum likelihood. λ > 0 keeps the fit finite when the MLE does not exist (a player won or lost every battle).
   */
  l2?: number;
  /** Newton iterations at most (default 100). */
  maxIter?: number;
  /** Convergence: largest |Δθᵢ| of a Newton step (default 1e-10). */
  tol?: number;
  /** Players to include even without battles (θ = 0 under the fit); the rest come from the battles. */
  players?: readonly string[];
}

/** A fitted Bradley–Terry model. Per-player records are keyed by player name; matrices follow `players`. */
export interface BradleyTerryFit {
  /** Players, sorted (code-unit order). */
  players: string[];
  /** θᵢ (natural-log strength), Σθ = 0 (per connected component when l2 = 0). */
  logStrengths: Record<string, number>;
  /** 1000 + θᵢ·400/ln 10: mean 1000; a 400-point gap is 10:1 odds. */
  elo: Record<string, number>;
  /**
   * Covariance of θ (players × players, units θ²): the Moore–Penrose inverse of the Fisher information under Σθ = 0
   * (l2 = 0; block-wise per connected component) or the projected inverse of the penalised information (l2 > 0).
   */
  covariance: number[][];
  /** Battles per player, wins, ties and losses (weighted counts of all battles, ties counted whatever `ties` is). */
  battles: Record<string, number>;
  wins: Record<string, number>;
  ties: Record<string, number>;
  losses: Record<string, number>;
  /** Battles between players i and j (weighted, ties included), players × players. */
  pairBattles: number[][];
  /** Unpenalised log-likelihood (natural log) of the counted battles at θ. */
  logLikelihood: number;
  /** Newton steps taken. */
  iterations: number;
  /** The step fell under `tol` (always false when the MLE does not exist and l2 = 0). */
  converged: boolean;
  /** The MLE does not exist: some set of players never lost (or never won) against the rest (Hunter 2004, Assumption 1). */
  separated: boolean;
  /** Players linked by counted battles; with l2 = 0 the order across components is unknown. */
  components: string[][];
  options: { ties: TieRule; l2: number; maxIter: number; tol: number };
}

/** A two-sided interval. */
export interface Interval {
  ciLow: number;
  ciHigh: number;
}

/** Options of {@link bootstrapBradleyTerry}. */
export interface BootstrapOptions extends BradleyTerryOptions {
  /** Bootstrap resamples (default 1000). */
  samples?: number;
  /** Seed of {@link seededRandom} (default 0): the same seed gives the same intervals. */
  seed?: number;
  /** Coverage of the percentile intervals, in (0, 1) (default 0.95). */
  level?: number;
}

/** A fit with percentile bootstrap intervals. */
export interface BradleyTerryBootstrap {
  fit: BradleyTerryFit;
  /** Percentile interval of θ per player. */
  logStrengthCi: Record<string, Interval>;
  /** The same interval on the Elo scale. */
  eloCi: Record<string, Interval>;
  samples: number;
  seed: number;
  level: number;
  /** Resamples whose MLE does not exist (their θ is where the Newton steps stopped, unless l2 > 0). */
  separatedSamples: number;
  /** Resamples whose fit did not converge. */
  unconvergedSamples: number;
}

/** Elo points per unit of θ: 400 / ln 10 (Chatbot Arena: SCALE 400, BASE 10). */
export const ELO_SCALE = 400 / Math.LN10;
/** Elo of θ = 0 (Chatbot Arena: INIT_RATING 1000). */
export const ELO_BASE = 1000;

/**
 * θ on the Elo scale.
 * @param theta a log-strength (natural log).
 * @returns 1000 + θ·400/ln 10.
 * Source: Chatbot Arena notebook (`compute_mle_elo`: SCALE 400, BASE 10, INIT_RATING 1000).
 */
export function eloOf(theta: number): number {
  return ELO_BASE + theta * ELO_SCALE;
}

// ------------------------------------------------------------------ aggregation

/** Battles aggregated per unordered pair (i < j): cells 3k (i beat j), 3k+1 (j beat i), 3k+2 (tie). */
interface Aggregate {
  players: string[];
  m: number;
  pi: Int32Array;
  pj: Int32Array;
  /** Weighted count per cell, 3 per pair. */
  cells: Float64Array;
  /** Cell of each battle, and its weight (for resampling). */
  cellOf: Int32Array;
  weightOf: Float64Array;
  battles: Float64Array;
  wins: Float64Array;
  ties: Float64Array;
  losses: Float64Array;
}

function checkOptions(opts: BradleyTerryOptions): { ties: TieRule; l2: number; maxIter: number; tol: number } {
  const ties = opts.ties ?? 'half';
  if (ties !== 'half' && ties !== 'ignore') {
    throw new LoupeInputError('ties', `must be half or ignore, got '${String(ties)}'`);
  }
  const l2 = opts.l2 ?? 0;
  if (typeof l2 !== 'number' || !Number.isFinite(l2) || l2 < 0) {
    throw new LoupeInputError('l2', `must be a finite number ≥ 0, got ${String(l2)}`);
  }
  const maxIter = opts.maxIter ?? 100;
  if (!Number.isInteger(maxIter) || maxIter < 1) {
    throw new LoupeInputError('maxIter', `must be an integer ≥ 1, got ${String(maxIter)}`);
  }
  const tol = opts.tol ?? 1e-10;
  if (typeof tol !== 'number' || !Number.isFinite(tol) || tol <= 0) {
    throw new LoupeInputError('tol', `must be a finite number > 0, got ${String(tol)}`);
  }
  return { ties, l2, maxIter, tol };
}

function aggregate(battles: readonly Battle[], extra: readonly string[] | undefined): Aggregate {
  if (!Array.isArray(battles)) throw new LoupeInputError('battles', 'must be an array');
  const n = battles.length;
  // first pass: validate, number the players in order of appearance
  const first = new Map<string, number>();
  const names: string[] = [];
  const ra = new Int32Array(n);
  const rb = new Int32Array(n);
  const at = (k: number) => `battle ${k}`;
  const id = (p: string): number => {
    let i = first.get(p);
    if (i === undefined) {
      i = names.length;
      first.set(p, i);
      names.push(p);
    }
    return i;
  };
  for (let k = 0; k < n; k++) {
    const b = battles[k];
    if (!b || typeof b !== 'object') throw new LoupeInputError(at(k), 'must be an object { a, b, winner }');
    if (typeof b.a !== 'string' || b.a === '') {
      throw new LoupeInputError(at(k), `player a must be a non-empty string, got ${JSON.stringify(b.a)}`);
    }
    if (typeof b.b !== 'string' || b.b === '') {
      throw new LoupeInputError(at(k), `player b must be a non-empty string, got ${JSON.stringify(b.b)}`);
    }
    if (b.a === b.b) throw new LoupeInputError(at(k), `a player cannot battle itself ('${b.a}')`);
    if (b.winner !== 'a' && b.winner !== 'b' && b.winner !== 'tie') {
      throw new LoupeInputError(at(k), `winner must be a, b or tie, got ${JSON.stringify(b.winner)}`);
    }
    if (b.weight !== undefined && (typeof b.weight !== 'number' || !Number.isFinite(b.weight) || b.weight < 0)) {
      throw new LoupeInputError(at(k), `weight must be a finite number ≥ 0, got ${String(b.weight)}`);
    }
    ra[k] = id(b.a);
    rb[k] = id(b.b);
  }
  for (const p of extra ?? []) {
    if (typeof p !== 'string' || p === '') {
      throw new LoupeInputError('players', `names must be non-empty strings, got ${JSON.stringify(p)}`);
    }
    id(p);
  }
  const players = [...names].sort();
  const m = players.length;
  const sorted = new Map(players.map((p, i) => [p, i]));
  const rank = Int32Array.from(names, (p) => sorted.get(p)!);
  // second pass: cells per unordered pair
  const pairOf = new Int32Array(m * m).fill(-1);
  const pi: number[] = [];
  const pj: number[] = [];
  const cellOf = new Int32Array(n);
  const weightOf = new Float64Array(n);
  const stat = {
    battles: new Float64Array(m),
    wins: new Float64Array(m),
    ties: new Float64Array(m),
    losses: new Float64Array(m),
  };
  for (let k = 0; k < n; k++) {
    const b = battles[k]!;
    const ia = rank[ra[k]!]!;
    const ib = rank[rb[k]!]!;
    const i = ia < ib ? ia : ib;
    const j = ia < ib ? ib : ia;
    let p = pairOf[i * m + j]!;
    if (p < 0) {
      p = pi.length;
      pairOf[i * m + j] = p;
      pi.push(i);
      pj.push(j);
    }
    const w = b.weight ?? 1;
    weightOf[k] = w;
    stat.battles[ia]! += w;
    stat.battles[ib]! += w;
    if (b.winner === 'tie') {
      cellOf[k] = 3 * p + 2;
      stat.ties[ia]! += w;
      stat.ties[ib]! += w;
    } else {
      const winner = b.winner === 'a' ? ia : ib;
      cellOf[k] = 3 * p + (winner === i ? 0 : 1);
      stat.wins[winner]! += w;
      stat.losses[winner === ia ? ib : ia]! += w;
    }
  }
  const cells = new Float64Array(3 * pi.length);
  for (let k = 0; k < n; k++) cells[cellOf[k]!]! += weightOf[k]!;
  return { players, m, pi: Int32Array.from(pi), pj: Int32Array.from(pj), cells, cellOf, weightOf, ...stat };
}

/** Cells → wins of i over j (`w`) and counted battles (`n`) per pair, ties per the rule. */
function pairCounts(cells: Float64Array, ties: TieRule, w: Float64Array, n: Float64Array): void {
  const half = ties === 'half';
  for (let k = 0; k < w.length; k++) {
    const t = half ? cells[3 * k + 2]! : 0;
    w[k] = cells[3 * k]! + 0.5 * t;
    n[k] = cells[3 * k]! + cells[3 * k + 1]! + t;
  }
}

// ------------------------------------------------------------------ the solver

interface Work {
  m: number;
  pi: Int32Array;
  pj: Int32Array;
  w: Float64Array;
  n: Float64Array;
  l2: number;
  /** Component of each player (counted battles), and component sizes. */
  comp: Int32Array;
  compSize: Int32Array;
  compCount: number;
  /** Scale of each component's projector added to the information (l2 = 0). */
  scale: Float64Array;
  separated: boolean;
  // scratch
  H: Float64Array;
  Hc: Float64Array;
  g: Float64Array;
  d: Float64Array;
  next: Float64Array;
}

function workFor(m: number, pi: Int32Array, pj: Int32Array, w: Float64Array, n: Float64Array, l2: number): Work {
  return {
    m,
    pi,
    pj,
    w,
    n,
    l2,
    comp: new Int32Array(m),
    compSize: new Int32Array(m),
    compCount: 0,
    scale: new Float64Array(m),
    separated: false,
    H: new Float64Array(m * m),
    Hc: new Float64Array(m * m),
    g: new Float64Array(m),
    d: new Float64Array(m),
    next: new Float64Array(m),
  };
}

/** Components of the counted-battle graph and whether any is not strongly connected under "beats" (no MLE). */
function analyse(wk: Work): void {
  const { m, pi, pj, w, n, comp, compSize } = wk;
  for (let i = 0; i < m; i++) comp[i] = i;
  const find = (x: number): number => {
    while (comp[x] !== x) {
      comp[x] = comp[comp[x]!]!;
      x = comp[x]!;
    }
    return x;
  };
  for (let k = 0; k < pi.length; k++) {
    if (!(n[k]! > 0)) continue;
    const a = find(pi[k]!);
    const b = find(pj[k]!);
    if (a !== b) comp[a < b ? b : a] = a < b ? a : b;
  }
  const label = new Int32Array(m).fill(-1);
  let c = 0;
  compSize.fill(0);
  for (let i = 0; i < m; i++) {
    const r = find(i);
    if (label[r] === -1) label[r] = c++;
  }
  for (let i = 0; i < m; i++) comp[i] = label[find(i)]!;
  for (let i = 0; i < m; i++) compSize[comp[i]!]!++;
  wk.compCount = c;
  // strong connectivity: from the first player of each component, reach everyone along "beat" edges and along reversed ones
  const fwd = new Uint8Array(m);
  const bwd = new Uint8Array(m);
  const seen = new Uint8Array(c);
  for (let i = 0; i < m; i++) {
    if (!seen[comp[i]!]) {
      seen[comp[i]!] = 1;
      fwd[i] = 1;
      bwd[i] = 1;
    }
  }
  for (let changed = true; changed;) {
    changed = false;
    for (let k = 0; k < pi.length; k++) {
      const i = pi[k]!;
      const j = pj[k]!;
      const iBeatJ = w[k]! > 0;
      const jBeatI = n[k]! - w[k]! > 0;
      if (iBeatJ) {
        if (fwd[i] && !fwd[j]) {
          fwd[j] = 1;
          changed = true;
        }
        if (bwd[j] && !bwd[i]) {
          bwd[i] = 1;
          changed = true;
        }
      }
      if (jBeatI) {
        if (fwd[j] && !fwd[i]) {
          fwd[i] = 1;
          changed = true;
        }
        if (bwd[i] && !bwd[j]) {
          bwd[j] = 1;
          changed = true;
        }
      }
    }
  }
  wk.separated = false;
  for (let i = 0; i < m; i++) if (!fwd[i] || !bwd[i]) wk.separated = true;
}

/** log(1 + eˣ) without overflow. */
function softplus(x: number): number {
  return x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x));
}

/** Penalised log-likelihood at θ. */
function objective(wk: Work, theta: Float64Array): number {
  const { pi, pj, w, n, l2, m } = wk;
  let f = 0;
  for (let k = 0; k < pi.length; k++) {
    const nk = n[k]!;
    if (!(nk > 0)) continue;
    const d = theta[pi[k]!]! - theta[pj[k]!]!;
    f += w[k]! * d - nk * softplus(d);
  }
  if (l2 > 0) for (let i = 0; i < m; i++) f -= l2 * theta[i]! * theta[i]!;
  return f;
}

/**
 * Fisher information (negative Hessian) at θ into wk.H, plus the component projectors when l2 = 0 (so the matrix is
 * invertible and the Newton step keeps each component's mean); the gradient into wk.g; returns the objective.
 */
function information(wk: Work, theta: Float64Array): number {
  const { m, pi, pj, w, n, l2, H, g, comp, compSize } = wk;
  H.fill(0);
  g.fill(0);
  let f = 0;
  for (let k = 0; k < pi.length; k++) {
    const nk = n[k]!;
    if (!(nk > 0)) continue;
    const i = pi[k]!;
    const j = pj[k]!;
    const d = theta[i]! - theta[j]!;
    let s: number; // σ(d)
    let sm: number; // σ(−d)
    if (d >= 0) {
      const e = Math.exp(-d);
      s = 1 / (1 + e);
      sm = e / (1 + e);
    } else {
      const e = Math.exp(d);
      s = e / (1 + e);
      sm = 1 / (1 + e);
    }
    const wk_ = w[k]!;
    f += wk_ * d - nk * softplus(d);
    const gk = wk_ * sm - (nk - wk_) * s;
    g[i]! += gk;
    g[j]! -= gk;
    const h = nk * s * sm;
    H[i * m + i]! += h;
    H[j * m + j]! += h;
    H[i * m + j]! -= h;
    H[j * m + i]! -= h;
  }
  if (l2 > 0) {
    for (let i = 0; i < m; i++) {
      f -= l2 * theta[i]! * theta[i]!;
      g[i]! -= 2 * l2 * theta[i]!;
      H[i * m + i]! += 2 * l2;
    }
  } else {
    // cᶜ·1ᶜ1ᶜᵀ/|C| per component C, cᶜ = mean diagonal of C's block: the step is the same for any cᶜ > 0 (g ⊥ 1ᶜ,
    // H·1ᶜ = 0), and this scale keeps the Cholesky well conditioned when the information is tiny (separated data)
    const { scale } = wk;
    scale.fill(0);
    for (let i = 0; i < m; i++) scale[comp[i]!]! += H[i * m + i]!;
    for (let c = 0; c < wk.compCount; c++) scale[c] = scale[c]! > 0 ? scale[c]! / compSize[c]! : 1;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < m; j++) if (comp[i] === comp[j]) H[i * m + j]! += scale[comp[i]!]! / compSize[comp[i]!]!;
    }
  }
  return f;
}

/** In-place Cholesky (lower triangle) of the m×m matrix A; false when A is not positive definite. */
function cholesky(A: Float64Array, m: number): boolean {
  for (let j = 0; j < m; j++) {
    let s = A[j * m + j]!;
    for (let k = 0; k < j; k++) s -= A[j * m + k]! * A[j * m + k]!;
    if (!(s > 0) || !Number.isFinite(s)) return false;
    const l = Math.sqrt(s);
    A[j * m + j] = l;
    for (let i = j + 1; i < m; i++) {
      let t = A[i * m + j]!;
      for (let k = 0; k < j; k++) t -= A[i * m + k]! * A[j * m + k]!;
      A[i * m + j] = t / l;
    }
  }
  return true;
}

/** Solves L Lᵀ x = b in place (b becomes x), L from {@link cholesky}. */
function cholSolve(L: Float64Array, m: number, b: Float64Array): void {
  for (let i = 0; i < m; i++) {
    let t = b[i]!;
    for (let k = 0; k < i; k++) t -= L[i * m + k]! * b[k]!;
    b[i] = t / L[i * m + i]!;
  }
  for (let i = m - 1; i >= 0; i--) {
    let t = b[i]!;
    for (let k = i + 1; k < m; k++) t -= L[k * m + i]! * b[k]!;
    b[i] = t / L[i * m + i]!;
  }
}

/**
 * Cholesky of wk.H in place. When rounding makes it fail (information spanning many orders of magnitude, as on
 * separated data far out), damps it Levenberg–Marquardt style, H + μ·diag(H), μ = 1e-12, 1e-10, … (still an ascent
 * step). False when nothing works.
 */
function factor(wk: Work): boolean {
  const { H, Hc, m } = wk;
  Hc.set(H);
  if (cholesky(H, m)) return true;
  for (let mu = 1e-12; mu <= 1e12; mu *= 100) {
    H.set(Hc);
    for (let i = 0; i < m; i++) H[i * m + i]! += mu * Math.max(Hc[i * m + i]!, 1e-300);
    if (cholesky(H, m)) return true;
  }
  return false;
}

/** Newton–Raphson with step halving from θ (in place). */
function newton(
  wk: Work,
  theta: Float64Array,
  maxIter: number,
  tol: number,
): { iterations: number; converged: boolean } {
  const { m, H, g, d, next } = wk;
  let it = 0;
  let converged = false;
  while (it < maxIter) {
    const f = information(wk, theta);
    if (!factor(wk)) break;
    d.set(g);
    cholSolve(H, m, d);
    let t = 1;
    let fNew = -Infinity;
    const slack = 1e-12 * Math.max(1, Math.abs(f));
    for (let h = 0; h < 40; h++, t /= 2) {
      for (let i = 0; i < m; i++) next[i] = theta[i]! + t * d[i]!;
      fNew = objective(wk, next);
      if (fNew >= f - slack) break;
    }
    if (!(fNew >= f - slack)) break;
    let step = 0;
    for (let i = 0; i < m; i++) {
      step = Math.max(step, Math.abs(next[i]! - theta[i]!));
      theta[i] = next[i]!;
    }
    it++;
    if (!Number.isFinite(step)) break;
    if (step < tol) {
      converged = true;
      break;
    }
  }
  // centre: per component with l2 = 0 (the likelihood fixes nothing else), overall otherwise
  const sums = new Float64Array(m);
  if (wk.l2 > 0) {
    let s = 0;
    for (let i = 0; i < m; i++) s += theta[i]!;
    for (let i = 0; i < m; i++) theta[i]! -= s / m;
  } else {
    for (let i = 0; i < m; i++) sums[wk.comp[i]!]! += theta[i]!;
    for (let i = 0; i < m; i++) theta[i]! -= sums[wk.comp[i]!]! / wk.compSize[wk.comp[i]!]!;
  }
  return { iterations: it, converged: converged && !(wk.separated && wk.l2 === 0) };
}

/** Covariance of θ at the fit (see {@link BradleyTerryFit.covariance}). */
function covarianceAt(wk: Work, theta: Float64Array): number[][] {
  const { m, H, comp, compSize, l2 } = wk;
  information(wk, theta);
  const ok = cholesky(H, m);
  const M: number[][] = [];
  const col = new Float64Array(m);
  for (let j = 0; j < m; j++) {
    col.fill(0);
    col[j] = 1;
    if (ok) cholSolve(H, m, col);
    else col.fill(NaN);
    M.push(Array.from(col));
  }
  // M is symmetric; M[j] is column j = row j
  if (l2 === 0) {
    const { scale } = wk;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < m; j++) if (comp[i] === comp[j]) M[i]![j]! -= 1 / (scale[comp[i]!]! * compSize[comp[i]!]!);
    }
    return M;
  }
  // Q M Q with Q = I − 11ᵀ/m
  const rowMean = M.map((r) => r.reduce((a, b) => a + b, 0) / m);
  const all = rowMean.reduce((a, b) => a + b, 0) / m;
  return M.map((r, i) => r.map((x, j) => x - rowMean[i]! - rowMean[j]! + all));
}

function record(players: readonly string[], xs: ArrayLike<number>): Record<string, number> {
  const out: Record<string, number> = {};
  players.forEach((p, i) => (out[p] = xs[i]!));
  return out;
}

function fitAggregate(
  agg: Aggregate,
  o: { ties: TieRule; l2: number; maxIter: number; tol: number },
): { fit: BradleyTerryFit; theta: Float64Array } {
  const K = agg.pi.length;
  const w = new Float64Array(K);
  const n = new Float64Array(K);
  pairCounts(agg.cells, o.ties, w, n);
  const wk = workFor(agg.m, agg.pi, agg.pj, w, n, o.l2);
  analyse(wk);
  const theta = new Float64Array(agg.m);
  const r = newton(wk, theta, o.maxIter, o.tol);
  const { players, m } = agg;
  const pairBattles = Array.from({ length: m }, () => new Array<number>(m).fill(0));
  for (let k = 0; k < K; k++) {
    const t = agg.cells[3 * k]! + agg.cells[3 * k + 1]! + agg.cells[3 * k + 2]!;
    pairBattles[agg.pi[k]!]![agg.pj[k]!] = t;
    pairBattles[agg.pj[k]!]![agg.pi[k]!] = t;
  }
  const components: string[][] = Array.from({ length: wk.compCount }, () => []);
  for (let i = 0; i < m; i++) components[wk.comp[i]!]!.push(players[i]!);
  let logLikelihood = 0;
  for (let k = 0; k < K; k++) {
    if (!(n[k]! > 0)) continue;
    const d = theta[agg.pi[k]!]! - theta[agg.pj[k]!]!;
    logLikelihood += w[k]! * d - n[k]! * softplus(d);
  }
  const fit: BradleyTerryFit = {
    players: [...players],
    logStrengths: record(players, theta),
    elo: record(players, Array.from(theta, eloOf)),
    covariance: m ? covarianceAt(wk, theta) : [],
    battles: record(players, agg.battles),
    wins: record(players, agg.wins),
    ties: record(players, agg.ties),
    losses: record(players, agg.losses),
    pairBattles,
    logLikelihood,
    iterations: r.iterations,
    converged: r.converged,
    separated: wk.separated,
    components,
    options: { ...o },
  };
  return { fit, theta };
}

// ------------------------------------------------------------------ public API

/**
 * Fits the Bradley–Terry model P(a beats b) = σ(θa − θb) to battles by Newton–Raphson (with step halving) on the
 * win counts per pair, maximising Σ [wᵢⱼ(θᵢ − θⱼ) − nᵢⱼ log(1 + e^(θᵢ−θⱼ))] − λΣθᵢ² subject to Σθ = 0.
 * @param battles pairwise outcomes (any order of a / b; weights multiply counts).
 * @param opts `ties` (`half` default: half a win each; `ignore`), `l2` λ ≥ 0 (default 0), `maxIter` (default 100
 *   Newton steps), `tol` (default 1e-10 on max |Δθ|), `players` to include without battles.
 * @returns θ (mean 0; natural-log units), Elo (1000 + θ·400/ln 10), the covariance of θ, counts, and how the fit
 *   went. When the MLE does not exist (`separated`, some players won or lost every battle against the rest) and
 *   λ = 0 the steps run to `maxIter` (θ grows by about 1 per step) and `converged` is false; λ > 0 keeps it finite.
 *   No battles → no players (unless `opts.players`).
 * @throws LoupeInputError naming `battle <index>` for an empty player name, a == b, a winner other than a / b / tie,
 *   or a negative / non-finite weight; naming the option for a bad option.
 * Source: Bradley & Terry (1952); Hunter (2004) for existence of the MLE; Chatbot Arena (Chiang et al. 2024, §4) for
 * ties as half wins and the Elo scale.
 */
export function fitBradleyTerry(battles: readonly Battle[], opts: BradleyTerryOptions = {}): BradleyTerryFit {
  const o = checkOptions(opts);
  return fitAggregate(aggregate(battles, opts.players), o).fit;
}

/** numpy's default (linear) quantile of a sorted sample. */
function sortedQuantile(xs: Float64Array, q: number): number {
  const n = xs.length;
  if (!n) return NaN;
  const pos = q * (n - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(n - 1, lo + 1);
  return xs[lo]! + (pos - lo) * (xs[hi]! - xs[lo]!);
}

/**
 * The fit plus percentile bootstrap intervals: `samples` times, draws as many battles as there are, uniformly with
 * replacement (seeded), and refits from the full-data θ (warm start). Resampling draws battle indices into the
 * aggregated (pair, outcome) cells, so a resample costs one pass of random draws and a few Newton steps.
 * @param battles as for {@link fitBradleyTerry}.
 * @param opts fit options, plus `samples` (integer ≥ 1, default 1000), `seed` (integer, default 0), `level` in
 *   (0, 1) (default 0.95).
 * @returns the full-data fit, per player the (1 − level)/2 and (1 + level)/2 linear-interpolated quantiles of the
 *   resampled θ (and of Elo), and how many resamples were separated / did not converge.
 * @throws LoupeInputError as {@link fitBradleyTerry}, or naming `samples` / `seed` / `level`.
 * Source: Efron (1979) percentile bootstrap; Chatbot Arena (Chiang et al. 2024, §5, bootstrap over battles).
 */
export function bootstrapBradleyTerry(battles: readonly Battle[], opts: BootstrapOptions = {}): BradleyTerryBootstrap {
  const o = checkOptions(opts);
  const samples = opts.samples ?? 1000;
  if (!Number.isInteger(samples) || samples < 1) {
    throw new LoupeInputError('samples', `must be an integer ≥ 1, got ${String(samples)}`);
  }
  const seed = opts.seed ?? 0;
  if (!Number.isInteger(seed)) throw new LoupeInputError('seed', `must be an integer, got ${String(seed)}`);
  const level = opts.level ?? 0.95;
  if (typeof level !== 'number' || !(level > 0 && level < 1)) {
    throw new LoupeInputError('level', `must be in (0, 1), got ${String(level)}`);
  }
  const agg = aggregate(battles, opts.players);
  const { fit, theta: full } = fitAggregate(agg, o);
  const { m, cellOf, weightOf } = agg;
  const K = agg.pi.length;
  const N = cellOf.length;
  const draws = Array.from({ length: m }, () => new Float64Array(samples));
  let separatedSamples = 0;
  let unconvergedSamples = 0;
  if (m) {
    const rand = seededRandom(seed);
    const cells = new Float64Array(3 * K);
    const w = new Float64Array(K);
    const n = new Float64Array(K);
    const wk = workFor(m, agg.pi, agg.pj, w, n, o.l2);
    const theta = new Float64Array(m);
    for (let s = 0; s < samples; s++) {
      cells.fill(0);
      for (let r = 0; r < N; r++) {
        const k = (rand() * N) | 0;
        cells[cellOf[k]!]! += weightOf[k]!;
      }
      pairCounts(cells, o.ties, w, n);
      analyse(wk);
      theta.set(full);
      const r = newton(wk, theta, o.maxIter, o.tol);
      if (wk.separated) separatedSamples++;
      if (!r.converged) unconvergedSamples++;
      for (let i = 0; i < m; i++) draws[i]![s] = theta[i]!;
    }
  }
  const logStrengthCi: Record<string, Interval> = {};
  const eloCi: Record<string, Interval> = {};
  agg.players.forEach((p, i) => {
    const xs = draws[i]!.sort();
    const ciLow = sortedQuantile(xs, (1 - level) / 2);
    const ciHigh = sortedQuantile(xs, (1 + level) / 2);
    logStrengthCi[p] = { ciLow, ciHigh };
    eloCi[p] = { ciLow: eloOf(ciLow), ciHigh: eloOf(ciHigh) };
  });
  return { fit, logStrengthCi, eloCi, samples, seed, level, separatedSamples, unconvergedSamples };
}

/** ln √(2π). */
const LN_SQRT_2PI = 0.5 * Math.log(2 * Math.PI);

/**
 * Standard normal CDF Φ(x) by Marsaglia's Taylor series Φ(x) = ½ + φ(x)·(x + x³/3 + x⁵/(3·5) + …), absolute error
 * about 1e-15; 0 / 1 beyond ∓8. Source: G. Marsaglia (2004), "Evaluating the normal distribution", J. Stat. Softw. 11(4).
 */
function normalCdf(x: number): number {
  if (x < -8) return 0;
  if (x > 8) return 1;
  const q = x * x;
  let s = x;
  let t = 0;
  let b = x;
  for (let i = 1; s !== t;) {
    t = s;
    i += 2;
    b *= q / i;
    s = t + b;
  }
  return 0.5 + s * Math.exp(-0.5 * q - LN_SQRT_2PI);
}

/**
 * Probability that the fit orders players a and b wrongly: Φ(−|θa − θb| / se), se² = Var θa + Var θb − 2 Cov(θa, θb)
 * from `fit.covariance` (normal approximation of the MLE).
 * @param fit a {@link fitBradleyTerry} result.
 * @param a a player name.
 * @param b another player name.
 * @returns a number in [0, 0.5]; 0.5 when either player is unknown to the fit, a == b, they are in different
 *   components of a pure-MLE fit (their order is not identified), or the variance is not a finite number.
 * Source: Chatbot Arena (Chiang et al. 2024, §5 "active sampling": sample the pairs whose ranking is least certain).
 */
export function orderUncertainty(fit: BradleyTerryFit, a: string, b: string): number {
  const i = fit.players.indexOf(a);
  const j = fit.players.indexOf(b);
  if (i < 0 || j < 0 || i === j) return 0.5;
  if (
    fit.options.l2 === 0 &&
    fit.components.length > 1 &&
    !fit.components.some((c) => c.includes(a) && c.includes(b))
  ) {
    return 0.5;
  }
  const C = fit.covariance;
  const v = C[i]![i]! + C[j]![j]! - 2 * C[i]![j]!;
  const d = fit.logStrengths[a]! - fit.logStrengths[b]!;
  if (!Number.isFinite(v) || !Number.isFinite(d)) return 0.5;
  if (v <= 0) return d === 0 ? 0.5 : 0;
  return normalCdf(-Math.abs(d) / Math.sqrt(v));
}

/**
 * The candidate pair to compare next: highest {@link orderUncertainty}; ties go to the pair with fewer battles
 * between its two players (`fit.pairBattles`, 0 for unseen players), then to the earlier candidate.
 * @param fit a {@link fitBradleyTerry} result.
 * @param candidates [a, b] player-name pairs (unknown names allowed: uncertainty 0.5, no battles).
 * @returns the index into `candidates`.
 * @throws LoupeInputError naming `candidates` when there are none.
 * Source: Chatbot Arena (Chiang et al. 2024, §5, active sampling).
 */
export function mostUncertainPair(fit: BradleyTerryFit, candidates: ReadonlyArray<readonly [string, string]>): number {
  if (!candidates.length) throw new LoupeInputError('candidates', 'no pair to choose from');
  const pos = new Map(fit.players.map((p, i) => [p, i]));
  let best = -1;
  let bestU = -Infinity;
  let bestN = Infinity;
  candidates.forEach(([a, b], k) => {
    const u = orderUncertainty(fit, a, b);
    const i = pos.get(a);
    const j = pos.get(b);
    const nb = i !== undefined && j !== undefined ? fit.pairBattles[i]![j]! : 0;
    if (u > bestU || (u === bestU && nb < bestN)) {
      best = k;
      bestU = u;
      bestN = nb;
    }
  });
  return best;
}

/** Pairwise win rates for a heatmap (see {@link winRateMatrix}). */
export interface WinRateMatrix {
  players: string[];
  /** wins[i][j]: weighted wins of i over j (ties as half a win each with `half`). */
  wins: number[][];
  /** battles[i][j]: weighted battles between i and j counted (ties left out with `ignore`). */
  battles: number[][];
  /** wins / battles, null when there are none (and on the diagonal). */
  rate: Array<Array<number | null>>;
}

/**
 * Win rate of each player over each other, for a heatmap.
 * @param battles as for {@link fitBradleyTerry}.
 * @param opts `ties` (`half` default, `ignore`), `players` row / column order: those listed first, in that order,
 *   then the others from the battles, sorted.
 * @returns players × players matrices (rows: the winner's side).
 * @throws LoupeInputError as {@link fitBradleyTerry}.
 * Source: Chatbot Arena (Chiang et al. 2024, Fig. "fraction of model A wins for all non-tied A vs. B battles").
 */
export function winRateMatrix(
  battles: readonly Battle[],
  opts: { ties?: TieRule; players?: readonly string[] } = {},
): WinRateMatrix {
  const { ties } = checkOptions({ ...(opts.ties !== undefined ? { ties: opts.ties } : {}) });
  const agg = aggregate(battles, opts.players);
  const first = [...new Set(opts.players ?? [])];
  const listed = new Set(first);
  const players = [...first, ...agg.players.filter((p) => !listed.has(p))];
  const at = new Map(agg.players.map((p, i) => [i, players.indexOf(p)]));
  const m = players.length;
  const wins = Array.from({ length: m }, () => new Array<number>(m).fill(0));
  const count = Array.from({ length: m }, () => new Array<number>(m).fill(0));
  for (let k = 0; k < agg.pi.length; k++) {
    const i = at.get(agg.pi[k]!)!;
    const j = at.get(agg.pj[k]!)!;
    const t = ties === 'half' ? agg.cells[3 * k + 2]! : 0;
    wins[i]![j] = agg.cells[3 * k]! + t / 2;
    wins[j]![i] = agg.cells[3 * k + 1]! + t / 2;
    count[i]![j] = count[j]![i] = agg.cells[3 * k]! + agg.cells[3 * k + 1]! + t;
  }
  const rate = wins.map((r, i) => r.map((x, j) => (i !== j && count[i]![j]! > 0 ? x / count[i]![j]! : null)));
  return { players, wins, battles: count, rate };
}
