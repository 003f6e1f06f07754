/**
 * Protocol of the "Compare two profiles" panel (issue 48): the paired difference A − B of two run profiles of a suite
 * with its clustered SE and CI, the paired t, the cluster bootstrap and sign-flip permutation, n items / clusters /
 * repeats, the runs each figure rests on, the items where the profiles disagree, and the minimum detectable difference
 * — the same numbers as `loupe compare --json` (built by `src/app/compare/compare-view.ts`).
 *
 * Flow: the webview sends `WebviewReadyRequest` and receives a {@link CompareViewState}; a new comparison comes as
 * `DidChangeStateNotification`. A run id or a disagreeing item opens its runs through `OpenRunsRequest`
 * (`src/protocol/results.ts`).
 */

/** A run profile (the Bradley–Terry player): `agent · model · hash` and its short label. */
export interface CompareProfile {
  player: string;
  label: string;
  agent: string;
  model: string | null;
}

/** One profile's headline over the shared items: clustered mean, SE, normal 95% CI, and what it rests on. */
export interface CompareFigure {
  profile: CompareProfile;
  metric: string;
  /** `items`: per-item credits clustered by block; `blocks`: one run-summary value per block. */
  unit: 'items' | 'blocks';
  clusterUnit: string;
  judgeId: string;
  mean: number;
  se: number;
  ci: [number, number];
  n: number;
  clusters: number;
  repeats: { min: number; max: number; total: number };
  /** Mean within-item variance over items with ≥ 2 repeats; null with one repeat. */
  withinItemVariance: number | null;
  runIds: string[];
}

/** An item where A and B disagree (their item means differ), with the runs of either side on it. */
export interface CompareDisagreement {
  item: string;
  cluster: string;
  a: number;
  b: number;
  diff: number;
  repeatsA: number;
  repeatsB: number;
  runIdsA: string[];
  runIdsB: string[];
}

/** The comparison as the panel shows it (numbers in metric units, fractions unscaled). */
export interface CompareResult {
  suite: string;
  a: CompareFigure;
  b: CompareFigure;
  difference: {
    mean: number;
    se: number;
    seMillerUncorrected: number;
    seIid: number;
    ci: [number, number];
    level: number;
    n: number;
    clusters: number;
    /** The differences are equal up to rounding: SEs are exactly 0 and no test exists. */
    noVariation: boolean;
  };
  /** `degenerate`: why there is no test (the differences have no variation); t and p are then NaN. */
  pairedT: { t: number; df: number; p: number; ci: [number, number]; degenerate?: string };
  bootstrap: { resamples: number; seed: number; se: number; ci: [number, number] } | null;
  permutation: { permutations: number; seed: number; p: number } | null;
  /** Minimum detectable difference at 80% power, α = 0.05 (Miller 2024 §5); null when no item has repeats from both. */
  minimumDetectable: number | null;
  onlyA: number;
  onlyB: number;
  disagreements: CompareDisagreement[];
}

export interface CompareViewState {
  /** The comparison; absent before one is chosen. */
  result?: CompareResult;
  /** Why there is no comparison (the profile not scored, too few shared items, ...), in the words of the panel. */
  message?: string;
  /** The store shown (path or redacted URL). */
  source?: string;
  /** What is compared (suite kind, profiles A and B as `loupe compare --a/--b` take them); saved by the webview for restore. */
  target?: { suite: string; a: string; b: string };
}
