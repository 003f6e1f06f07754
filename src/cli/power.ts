/** `loupe power`: repeats and items needed to detect a difference, from a profile's observed variances (issue 48). */
import { profilePower, type PowerFigure } from '../app/compare/compare.ts';
import { oneLine } from '../core/util/text-safety.ts';
import { JSON_OPTIONS } from './option-groups.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';
import { openExistingStore, STORE_OPTIONS } from './store-arg.ts';
import { UsageError } from './types.ts';

const DECL = declareCommand({
  synopsis: 'power --suite S --profile PROFILE --delta D',
  groups: [
    optionGroup('design', {
      suite: { type: 'string', value: 'S', help: 'the benchmark' },
      profile: {
        type: 'string',
        value: 'PROFILE',
        help: 'the profile whose variances are used (agent · model · hash, its label, or a model naming one profile)',
      },
      delta: {
        type: 'string',
        value: 'D',
        help: 'the difference to detect, in metric units (0.03 = 3 points of a rate)',
      },
      metric: {
        type: 'string',
        value: 'M',
        help: 'credit (per item) or a key of the run summary, as in loupe compare',
      },
      correlation: {
        type: 'string',
        value: 'R',
        help: "assumed correlation of the two profiles' item means, in [-1, 1] (default 0)",
      },
    }),
    STORE_OPTIONS,
    JSON_OPTIONS,
  ],
  notes: `  80% power, two-sided α = 0.05, for comparing the profile with a second of the same variances (Miller 2024,
  arXiv:2411.00640 §5): n = (z₀.₉₇₅ + z₀.₈)² (ω² + 2σ²/K) / δ², with ω² the clustered variance of item-mean differences
  and σ² the within-item variance of repeats (the profile must have items run at least twice).
  --json: { profile, basis, estimate, design, delta, repeatsNeeded, itemsNeeded, minimumDetectable, correlation }.`,
});

function num(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n) || v.trim() === '') throw new UsageError(`${flag} must be a number, got '${v}'`);
  return n;
}

/** The power figure as text. */
export function formatPower(p: PowerFigure): string {
  const d = p.design;
  return (
    `${oneLine(p.profile.player)} (${oneLine(p.profile.label)}): ${p.basis.metric} over ${p.estimate.n} ${p.basis.unit} in ${p.estimate.clusters} ${p.basis.clusterUnit}s, ${d.repeats.toFixed(2)} repeats per item (runs: ${p.basis.runIds.length})\n` +
    `variances: ω² ${d.omega2.toPrecision(4)} (clustered, ρ = ${p.correlation}), within-item σ² ${d.sigma2A.toPrecision(4)}\n` +
    `to detect δ = ${p.delta} at 80% power (α = 0.05):\n` +
    `  repeats per item with these ${d.items} items: ${p.repeatsNeeded === null ? 'none suffices (add items)' : p.repeatsNeeded}\n` +
    `  items with ${d.repeats.toFixed(2)} repeats: ${p.itemsNeeded.items} (${p.itemsNeeded.clusters} ${p.basis.clusterUnit}s of ${d.itemsPerCluster.toFixed(1)} items)\n` +
    `this design could detect differences ≥ ${p.minimumDetectable.toFixed(4)}\n`
  );
}

export const powerCommand = defineCommand({
  name: 'power',
  summary: "repeats and items needed to detect a difference at 80% power, from a profile's observed variances",
  declarations: [DECL],
  async run(argv, io) {
    const { values: v } = parseCommand(DECL, argv);
    if (!v.suite || !v.profile || v.delta === undefined) {
      throw new UsageError('power needs --suite, --profile and --delta');
    }
    const delta = num(v.delta, '--delta')!;
    if (!(delta > 0)) throw new UsageError(`--delta must be positive, got '${v.delta}'`);
    const correlation = num(v.correlation, '--correlation');
    const store = await openExistingStore(io, v.store);
    try {
      const p = await profilePower(store, {
        suite: v.suite,
        profile: v.profile,
        delta,
        ...(v.metric ? { metric: v.metric } : {}),
        ...(correlation !== undefined ? { correlation } : {}),
      });
      io.out(v.json ? JSON.stringify(p) + '\n' : formatPower(p));
      return 0;
    } finally {
      await store.close();
    }
  },
});
