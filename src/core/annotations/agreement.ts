/**
 * Agreement report over the annotation store: per task and per criterion, human–human agreement (percent,
 * pairwise, Cohen's κ for two annotators, Krippendorff's α — nominal for labels, interval and ordinal for 1–5
 * scores — and Gwet's AC1 / AC2) with bootstrap 95% CIs, and judge–human agreement (the LLM judge against each
 * human and against the human resolution) with a confusion matrix.
 * Source: issue 14 "Agreement"; AnalystBench App. C (pairwise agreement, Gwet AC2, Krippendorff α; spec §4.3(e)).
 */
import {
  bootstrapAgreement,
  cohensKappa,
  gwetAC,
  krippendorffAlpha,
  pairwiseAgreement,
  type AgreementWeights,
  type BootstrapInterval,
  type Rating,
} from '../eval/agreement.ts';
import {
  currentAnnotations,
  facetsOf,
  rolesByAnnotator,
  isScaleTask,
  labelOf as itemLabel,
  resolveItem,
  type Annotation,
  type AnnotationItem,
} from './model.ts';
import type { AnnotationStore, ItemFilter } from './store.ts';

/** A statistic with its bootstrap interval. */
export interface Estimate {
  value: number | null;
  ci: { low: number | null; high: number | null } | null;
}

/** Agreement of the LLM judge with one reference (a human, or the human resolution). */
export interface JudgeHumanAgreement {
  against: string;
  items: number;
  agreement: number | null;
  kappa: number | null;
}

/** Agreement within one task (criterion null) or one task × criterion. */
export interface AgreementGroup {
  task: string;
  criterion: string | null;
  /** `nominal` labels, or `scale` (1–5 scores: interval/ordinal α, quadratic-weighted AC2). */
  level: 'nominal' | 'scale';
  annotators: string[];
  /** Per annotator: the database roles that wrote their annotations of these items (issue 26 "Identity"; sorted, [] when none is recorded, as on SQLite). */
  roles: Record<string, string[]>;
  /** Items with at least one human verdict / with at least two. */
  items: number;
  pairableItems: number;
  /** Share of items whose human labels are all equal, among items with ≥ 2. */
  percentAgreement: number | null;
  /** Mean pairwise agreement over items with ≥ 2 humans. */
  pairwiseAgreement: number | null;
  /** Cohen's κ when exactly two annotators rated; null otherwise. */
  cohensKappa: Estimate | null;
  alphaNominal: Estimate;
  alphaInterval: Estimate | null;
  alphaOrdinal: Estimate | null;
  /** Gwet AC1 (nominal) or AC2 with quadratic weights over 1–5 (scale). */
  gwet: Estimate & { weights: AgreementWeights };
  judgeHuman: JudgeHumanAgreement[];
  /** LLM label (rows) × human resolution label (columns) counts. */
  confusion: { labels: string[]; counts: number[][] } | null;
}

/** The whole report. */
export interface AgreementReport {
  groups: AgreementGroup[];
  /** Bootstrap settings used for every CI. */
  bootstrap: { resamples: number; seed: number; level: number };
  /** Items with a human verdict / adjudicated / decided by majority / tied. */
  totals: { items: number; adjudicated: number; majority: number; single: number; tied: number };
}

const num = (x: number): number | null => (Number.isFinite(x) ? x : null);
const est = (value: number, ci?: BootstrapInterval): Estimate => ({
  value: num(value),
  ci: ci ? { low: num(ci.low), high: num(ci.high) } : null,
});

/**
 * Computes the agreement report.
 * @param store the annotation store; `filter` restricts items (suite, run, task, criterion).
 * @param opts bootstrap resamples (default 1000) and seed (default 0); `perCriterion` adds a group per
 *   task × criterion having ≥ 2 pairable items (default true).
 */
export async function agreementReport(
  store: AnnotationStore,
  filter: ItemFilter = {},
  opts: { resamples?: number; seed?: number; perCriterion?: boolean } = {},
): Promise<AgreementReport> {
  const resamples = opts.resamples ?? 1000;
  const seed = opts.seed ?? 0;
  await store.syncFromJudgements();
  const items = await store.listItems(filter);
  const anns = await store.annotationsByItem(filter);
  const llm = await store.llmVerdicts(filter);
  const annotated = items.filter((i) => anns.has(i.id));
  const totals = { items: annotated.length, adjudicated: 0, majority: 0, single: 0, tied: 0 };
  for (const i of annotated) {
    const r = resolveItem(i, anns.get(i.id)!);
    if (r.decidedBy === 'adjudicated') totals.adjudicated++;
    else if (r.decidedBy === 'majority') totals.majority++;
    else if (r.decidedBy === 'single') totals.single++;
    if (r.tie) totals.tied++;
  }
  const byTask = new Map<string, AnnotationItem[]>();
  for (const i of annotated) {
    const l = byTask.get(i.task);
    if (l) l.push(i);
    else byTask.set(i.task, [i]);
  }
  const groups: AgreementGroup[] = [];
  for (const task of [...byTask.keys()].sort()) {
    const all = byTask.get(task)!;
    groups.push(group(task, null, all, anns, llm, resamples, seed));
    if (opts.perCriterion !== false) {
      const byCrit = new Map<string, AnnotationItem[]>();
      for (const i of all) if (i.criterion) byCrit.set(i.criterion, [...(byCrit.get(i.criterion) ?? []), i]);
      if (byCrit.size > 1) {
        for (const c of [...byCrit.keys()].sort()) {
          const g = group(task, c, byCrit.get(c)!, anns, llm, resamples, seed);
          if (g.pairableItems >= 2) groups.push(g);
        }
      }
      // item kinds whose verdicts have facets (a pairwise vote per criterion): a group per facet
      const facetNames = new Set<string>();
      for (const i of all) {
        for (const a of anns.get(i.id) ?? []) {
          for (const k of Object.keys(facetsOf(task, a.verdict) ?? {})) facetNames.add(k);
        }
      }
      for (const f of [...facetNames].sort()) {
        const g = group(task, f, all, anns, llm, resamples, seed, (t, v) => facetsOf(t, v)?.[f] ?? null);
        if (g.pairableItems >= 2) groups.push(g);
      }
    }
  }
  return { groups, bootstrap: { resamples, seed, level: 0.95 }, totals };
}

function group(
  task: string,
  criterion: string | null,
  items: AnnotationItem[],
  anns: Map<string, Annotation[]>,
  llm: Map<string, { verdict: unknown }>,
  resamples: number,
  seed: number,
  labelOf: (task: string, verdict: unknown) => string | null = itemLabel,
): AgreementGroup {
  const scale = isScaleTask(task);
  const current = items.map((i) => currentAnnotations(anns.get(i.id) ?? []).byAnnotator);
  const annotators = [...new Set(current.flatMap((m) => [...m.keys()]))].sort();
  const allRoles = rolesByAnnotator(items.flatMap((i) => anns.get(i.id) ?? []));
  const roles = Object.fromEntries(annotators.map((a) => [a, allRoles[a] ?? []]));
  const value = (a: Annotation | undefined): Rating => {
    const l = a ? labelOf(task, a.verdict) : null;
    return l === null ? null : scale ? Number(l) : l;
  };
  const data: Rating[][] = annotators.map((who) => current.map((m) => value(m.get(who))));
  const boot = (f: (m: Rating[][]) => number) => bootstrapAgreement(data, f, { resamples, seed });
  let pairable = 0;
  let unanimous = 0;
  for (let u = 0; u < items.length; u++) {
    const vs = data
      .map((r) => r[u])
      .filter((v) => v !== null && v !== undefined)
      .map(String);
    if (vs.length < 2) continue;
    pairable++;
    if (new Set(vs).size === 1) unanimous++;
  }
  const alphaN = (m: Rating[][]) => krippendorffAlpha(m, 'nominal').alpha;
  const alphaI = (m: Rating[][]) => krippendorffAlpha(m, 'interval').alpha;
  const alphaO = (m: Rating[][]) => krippendorffAlpha(m, 'ordinal').alpha;
  const weights: AgreementWeights = scale ? 'quadratic' : 'identity';
  const cats = task === 'checklist-score' ? [1, 2, 3, 4, 5] : undefined;
  const gw = (m: Rating[][]) => gwetAC(m, weights, cats).coefficient;
  const kappa = (m: Rating[][]) => cohensKappa(m[0]!, m[1]!).kappa;
  const judgeHuman: JudgeHumanAgreement[] = [];
  const llmLabels = items.map((i) => {
    const v = llm.get(i.id);
    return v ? labelOf(task, v.verdict) : null;
  });
  const pairUp = (against: string, ref: Array<string | null>): void => {
    const xs: Rating[] = [];
    const ys: Rating[] = [];
    for (let u = 0; u < items.length; u++) {
      if (llmLabels[u] !== null && ref[u] !== null && ref[u] !== undefined) {
        xs.push(llmLabels[u]);
        ys.push(ref[u]);
      }
    }
    const agree = xs.filter((x, k) => x === ys[k]).length;
    judgeHuman.push({
      against,
      items: xs.length,
      agreement: xs.length ? agree / xs.length : null,
      kappa: xs.length ? num(cohensKappa(xs, ys).kappa) : null,
    });
  };
  let confusion: AgreementGroup['confusion'] = null;
  if (llmLabels.some((l) => l !== null)) {
    for (let r = 0; r < annotators.length; r++) {
      pairUp(
        annotators[r]!,
        data[r]!.map((v) => (v === null || v === undefined ? null : String(v))),
      );
    }
    const resolved = items.map((i) => {
      const res = resolveItem(i, anns.get(i.id) ?? []);
      return res.decidedBy === 'pending' ? null : labelOf(task, res.verdict);
    });
    pairUp('human resolution', resolved);
    const labels = [...new Set([...llmLabels, ...resolved].filter((x): x is string => x !== null))].sort((a, b) =>
      scale ? Number(a) - Number(b) : a.localeCompare(b),
    );
    const counts = labels.map(() => labels.map(() => 0));
    for (let u = 0; u < items.length; u++) {
      const a = llmLabels[u];
      const b = resolved[u];
      if (a !== null && a !== undefined && b !== null && b !== undefined) {
        counts[labels.indexOf(a)]![labels.indexOf(b)]!++;
      }
    }
    confusion = { labels, counts };
  }
  return {
    task,
    criterion,
    level: scale ? 'scale' : 'nominal',
    annotators,
    roles,
    items: items.length,
    pairableItems: pairable,
    percentAgreement: pairable ? unanimous / pairable : null,
    pairwiseAgreement: num(pairwiseAgreement(data.length ? data : [[]])),
    cohensKappa: annotators.length === 2 ? est(kappa(data), boot(kappa)) : null,
    alphaNominal: est(alphaN(data), boot(alphaN)),
    alphaInterval: scale ? est(alphaI(data), boot(alphaI)) : null,
    alphaOrdinal: scale ? est(alphaO(data), boot(alphaO)) : null,
    gwet: { ...est(gw(data), boot(gw)), weights },
    judgeHuman,
    confusion,
  };
}
