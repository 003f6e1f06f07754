/** `loupe compare`: two run profiles of a benchmark, each with a clustered CI, and their paired difference (issue 48). */
import { compareProfiles, type Comparison, type ProfileFigure } from '../app/compare/compare.ts';
import { oneLine } from '../core/util/text-safety.ts';
import { JSON_OPTIONS } from './option-groups.ts';
import { declareCommand, defineCommand, optionGroup, parseCommand } from './options.ts';
import { openExistingStore, STORE_OPTIONS } from './store-arg.ts';
import { UsageError } from './types.ts';

const DECL = declareCommand({
  synopsis: 'compare --suite S --a PROFILE --b PROFILE',
  groups: [
    optionGroup('comparison', {
      suite: { type: 'string', value: 'S', help: 'the benchmark whose scored runs are compared' },
      a: {
        type: 'string',
        value: 'PROFILE',
        help: 'profile A: agent · model · hash as listed, its label, or a model name naming one profile',
      },
      b: { type: 'string', value: 'PROFILE', help: 'profile B (as --a)' },
      metric: {
        type: 'string',
        value: 'M',
        help: 'credit (per item, default where the benchmark scores items) or a key of the run summary (one value per block)',
      },
      resamples: {
        type: 'string',
        value: 'N',
        help: 'cluster-bootstrap resamples and sign-flip permutations (default 2000)',
      },
      seed: { type: 'string', value: 'N', help: 'seed of the resampling (default 0)' },
    }),
    STORE_OPTIONS,
    JSON_OPTIONS,
  ],
  notes: `  Items are the score's items (LongDA queries, checklist items) or blocks; repeats of an item are averaged first;
  standard errors are clustered on the benchmark's cluster unit (its blocks). The difference is A − B over the items
  both ran: clustered SE (statsmodels' small-sample correction) and normal 95% CI, Miller's uncorrected SE, a paired t
  on item means (G − 1 df), a seeded paired cluster bootstrap and sign-flip permutation. Every run of a profile must be
  scored (no pending judgements) with one judge and one set of options.
  --json: { suite, a, b, paired, design, minimumDetectable } (the objects of src/app/compare/compare.ts).`,
});

/** A non-negative integer option. @throws UsageError naming the flag. */
export function intOption(v: string | undefined, flag: string, dflt: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`${flag} must be a non-negative integer, got '${v}'`);
  return n;
}

const f4 = (x: number): string => x.toFixed(4);
function figureLine(name: string, f: ProfileFigure): string {
  const e = f.estimate;
  const w = e.withinItemVariance === null ? 'n/a (one repeat)' : f4(e.withinItemVariance);
  return (
    `${name} ${oneLine(f.profile.player)} (${oneLine(f.profile.label)}): ${f.basis.metric} ${f4(e.mean)} ± ${f4(e.se)} [${f4(e.ci[0])}, ${f4(e.ci[1])}]` +
    `  ${e.n} ${f.basis.unit} in ${e.clusters} ${f.basis.clusterUnit}s, repeats ${e.repeats.min}–${e.repeats.max}, within-item variance ${w}\n` +
    `  runs (${f.basis.runIds.length}, judge ${oneLine(f.basis.judgeId)}): ${f.basis.runIds.map((r) => oneLine(r)).join(', ')}\n`
  );
}

/** The comparison as text (one figure per line, the runs each rests on, the disagreeing items). */
export function formatComparison(c: Comparison): string {
  const p = c.paired;
  const d = p.difference;
  const lines = [
    figureLine('A', c.a),
    figureLine('B', c.b),
    `A − B: ${f4(d.mean)}  clustered SE ${f4(d.se)} (Miller uncorrected ${f4(d.seMillerUncorrected)}, iid ${f4(d.seIid)})  95% CI [${f4(d.ci[0])}, ${f4(d.ci[1])}]  over ${d.n} shared ${c.a.basis.unit} in ${d.clusters} ${c.a.basis.clusterUnit}s\n`,
    p.pairedT.degenerate
      ? `paired t: none — ${p.pairedT.degenerate}\n`
      : `paired t ${p.pairedT.t.toFixed(3)} (${p.pairedT.df} df) p = ${p.pairedT.p.toPrecision(3)}  t-CI [${f4(p.pairedT.ci[0])}, ${f4(p.pairedT.ci[1])}]\n`,
  ];
  if (p.bootstrap) {
    lines.push(
      `cluster bootstrap (${p.bootstrap.resamples}, seed ${p.bootstrap.seed}): SE ${f4(p.bootstrap.se)} CI [${f4(p.bootstrap.ci[0])}, ${f4(p.bootstrap.ci[1])}]\n`,
    );
  }
  if (p.permutation) {
    lines.push(
      `sign-flip permutation over clusters (${p.permutation.permutations}, seed ${p.permutation.seed}): p = ${p.permutation.p.toPrecision(3)}\n`,
    );
  }
  lines.push(
    c.minimumDetectable === null
      ? 'power: no item has repeats from both profiles, so the within-item variance (and the detectable difference) is unknown\n'
      : `this comparison could detect differences ≥ ${f4(c.minimumDetectable)} (80% power, α = 0.05; Miller 2024 §5)\n`,
  );
  if (p.onlyA.length || p.onlyB.length) {
    lines.push(`left out: ${p.onlyA.length} items only A ran, ${p.onlyB.length} only B ran\n`);
  }
  lines.push(`disagreements (${p.disagreements.length}):\n`);
  for (const i of p.disagreements.slice(0, 20)) {
    lines.push(`  ${oneLine(i.item)}  A ${f4(i.a)} (${i.repeatsA}×)  B ${f4(i.b)} (${i.repeatsB}×)\n`);
  }
  if (p.disagreements.length > 20) lines.push(`  … ${p.disagreements.length - 20} more (--json lists all)\n`);
  return lines.join('');
}

export const compareCommand = defineCommand({
  name: 'compare',
  summary: 'two run profiles with clustered CIs and their paired difference (paired t, cluster bootstrap, permutation)',
  declarations: [DECL],
  async run(argv, io) {
    const { values: v } = parseCommand(DECL, argv);
    if (!v.suite || !v.a || !v.b) throw new UsageError('compare needs --suite, --a and --b');
    const resamples = intOption(v.resamples, '--resamples', 2000);
    const seed = intOption(v.seed, '--seed', 0);
    const store = await openExistingStore(io, v.store);
    try {
      const c = await compareProfiles(store, {
        suite: v.suite,
        a: v.a,
        b: v.b,
        ...(v.metric ? { metric: v.metric } : {}),
        bootstrap: resamples,
        seed,
      });
      io.out(v.json ? JSON.stringify(c) + '\n' : formatComparison(c));
      return 0;
    } finally {
      await store.close();
    }
  },
});
