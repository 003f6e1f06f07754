/**
 * The figures of the papers' expert analyses, from resolved failure annotations: failure classes per model and
 * scenario (DDR-Bench Fig. 8), hallucination rate per model and domain (DDR-Bench Table 6), and the report
 * failure-mode table with counts and examples (AnalystBench Table 4); plus their Vega-Lite specs.
 * A verdict counts once resolved (adjudicated > majority > single annotator); pending and tied items are reported
 * as such, never counted. Source: DDR-Bench paper §6 Fig. 8, §7 Table 6; AnalystBench Table 4; issue 19.
 */
import { resolveItem, type Annotation, type AnnotationItem } from '../annotations/model.ts';
import type { AnnotationStore, ItemFilter } from '../annotations/store.ts';
import type { Taxonomy } from './taxonomy.ts';
import {
  FAILURE_CASE_TASK,
  FAILURE_TAG_TASK,
  HALLUCINATION_CHECK_TASK,
  isHallucinated,
  type FailureCaseInput,
  type FailureCaseVerdict,
  type FailureTagVerdict,
  type HallucinationInput,
  type HallucinationVerdict,
} from './tags.ts';

/** One bar segment of Fig. 8: a class's count among the annotated failure cases of a model × scenario. */
export interface FailureClassRow {
  model: string;
  scenario: string;
  taxonomy: string;
  classId: string;
  label: string;
  group: string | null;
  /** Cases given this class. */
  count: number;
  /** Annotated failure cases of the model × scenario (the denominator; a case may have several classes). */
  cases: number;
  /** count / cases. */
  share: number;
}

/** A resolved failure case as the figure counts it. */
export interface ResolvedCase {
  model: string;
  scenario: string;
  taxonomy: string;
  classes: readonly string[];
  judgeWrong?: boolean;
}

/**
 * Fig. 8 rows: per model × scenario × class of the case's taxonomy, how many resolved cases carry the class.
 * Cases the expert found were not failures (`judgeWrong`) are left out of counts and denominators.
 * @returns rows for every class of the taxonomy (zeros included), sorted by model, scenario, then taxonomy order.
 */
export function failureClassRows(cases: readonly ResolvedCase[], taxonomies: readonly Taxonomy[]): FailureClassRow[] {
  const groups = new Map<string, ResolvedCase[]>();
  for (const c of cases) {
    if (c.judgeWrong) continue;
    const k = `${c.model}\u0000${c.scenario}\u0000${c.taxonomy}`;
    const l = groups.get(k);
    if (l) l.push(c);
    else groups.set(k, [c]);
  }
  const out: FailureClassRow[] = [];
  for (const k of [...groups.keys()].sort()) {
    const cs = groups.get(k)!;
    const [model, scenario, tax] = k.split('\u0000') as [string, string, string];
    const t = taxonomies.find((x) => x.id === tax);
    const classes =
      t?.classes ??
      [...new Set(cs.flatMap((c) => c.classes))].sort().map((id) => ({ id, label: id, group: undefined }));
    for (const cl of classes) {
      const count = cs.filter((c) => c.classes.includes(cl.id)).length;
      out.push({
        model,
        scenario,
        taxonomy: tax,
        classId: cl.id,
        label: cl.label,
        group: cl.group ?? null,
        count,
        cases: cs.length,
        share: count / cs.length,
      });
    }
  }
  return out;
}

/** One cell of Table 6. */
export interface HallucinationRow {
  model: string;
  /** The scenario / domain (10-K, GLOBEM, MIMIC), or `Avg` for the mean over a model's domains. */
  domain: string;
  checked: number;
  hallucinated: number;
  /** hallucinated / checked (fraction); for `Avg`, the mean of the model's domain rates as the paper averages. */
  rate: number;
}

/**
 * Table 6 rows: per model × domain, the share of checked insights that are hallucinated (correct but not
 * derivable, {@link isHallucinated}), then per model an `Avg` row: the unweighted mean of its domain rates (the
 * paper's Avg column: Claude 4.5 Sonnet (4.98 + 1.11 + 6.15) / 3 = 4.08).
 */
export function hallucinationRows(
  checks: ReadonlyArray<{ model: string; domain: string; hallucinated: boolean }>,
): HallucinationRow[] {
  const by = new Map<string, { checked: number; hallucinated: number }>();
  for (const c of checks) {
    const k = `${c.model}\u0000${c.domain}`;
    const x = by.get(k) ?? { checked: 0, hallucinated: 0 };
    x.checked++;
    if (c.hallucinated) x.hallucinated++;
    by.set(k, x);
  }
  const rows: HallucinationRow[] = [...by.entries()]
    .map(([k, v]) => {
      const [model, domain] = k.split('\u0000') as [string, string];
      return { model, domain, ...v, rate: v.hallucinated / v.checked };
    })
    .sort((a, b) => a.model.localeCompare(b.model) || a.domain.localeCompare(b.domain));
  const out: HallucinationRow[] = [];
  for (const model of [...new Set(rows.map((r) => r.model))]) {
    const mine = rows.filter((r) => r.model === model);
    out.push(...mine, {
      model,
      domain: 'Avg',
      checked: mine.reduce((s, r) => s + r.checked, 0),
      hallucinated: mine.reduce((s, r) => s + r.hallucinated, 0),
      rate: mine.reduce((s, r) => s + r.rate, 0) / mine.length,
    });
  }
  return out;
}

/** One row of the Table 4 form. */
export interface FailureModeRow {
  classId: string;
  label: string;
  definition: string;
  /** Tags and cases carrying the class. */
  count: number;
  /** count / all tagged failures of the taxonomy (a failure may carry several classes). */
  share: number;
  /** Up to `examples` of them: the quoted text (span tags), the item (cases) or the steps, with the note. */
  examples: Array<{ runId: string; where: string; text: string; note: string | null }>;
}

/** A resolved tag or case as the table counts it. */
export interface ResolvedFailure {
  taxonomy: string;
  classes: readonly string[];
  runId: string;
  where: string;
  text: string;
  note: string | null;
}

/**
 * Table 4 rows for one taxonomy: every class with how many resolved failures (tags and cases) carry it, its share,
 * its definition and up to `examples` examples (first recorded first).
 */
export function failureModeRows(
  failures: readonly ResolvedFailure[],
  taxonomy: Taxonomy,
  examples = 2,
): FailureModeRow[] {
  const mine = failures.filter((f) => f.taxonomy === taxonomy.id);
  return taxonomy.classes.map((c) => {
    const hits = mine.filter((f) => f.classes.includes(c.id));
    return {
      classId: c.id,
      label: c.label,
      definition: c.definition,
      count: hits.length,
      share: mine.length ? hits.length / mine.length : 0,
      examples: hits.slice(0, examples).map((f) => ({ runId: f.runId, where: f.where, text: f.text, note: f.note })),
    };
  });
}

/** Everything the figures need, read from the annotation store. */
export interface FailureFigures {
  fig8: FailureClassRow[];
  table6: HallucinationRow[];
  /** Table 4 form per taxonomy that has resolved failures. */
  table4: Array<{ taxonomy: Taxonomy; rows: FailureModeRow[]; failures: number }>;
  counts: {
    cases: number;
    casesResolved: number;
    judgeWrong: number;
    checks: number;
    checksResolved: number;
    tags: number;
    tagsResolved: number;
  };
}

/**
 * Reads failure cases, hallucination checks and failure tags from the annotation store, resolves each (human
 * resolution) and builds the three figures.
 * @param taxonomies the taxonomies known (benchmarks' and workspace's); `filter` restricts items (suite, runs).
 */
export async function failureFigures(
  ann: AnnotationStore,
  taxonomies: readonly Taxonomy[],
  filter: Omit<ItemFilter, 'task'> = {},
): Promise<FailureFigures> {
  const load = async (
    task: string,
  ): Promise<Array<{ item: AnnotationItem; verdict: unknown; note: string | null }>> => {
    const items = await ann.listItems({ ...filter, task });
    const anns = await ann.annotationsByItem({ ...filter, task });
    return items.map((item) => {
      const a: Annotation[] = anns.get(item.id) ?? [];
      const r = resolveItem(item, a);
      const note =
        a
          .filter((x) => x.note)
          .map((x) => x.note!)
          .pop() ?? null;
      return { item, verdict: r.decidedBy === 'pending' ? undefined : r.verdict, note };
    });
  };
  const cases = await load(FAILURE_CASE_TASK);
  const checks = await load(HALLUCINATION_CHECK_TASK);
  const tags = await load(FAILURE_TAG_TASK);
  const resolvedCases = cases.filter((c) => c.verdict !== undefined);
  const fig8 = failureClassRows(
    resolvedCases.map((c) => {
      const i = c.item.input as FailureCaseInput;
      const v = c.verdict as FailureCaseVerdict;
      return {
        model: i.model,
        scenario: i.scenario,
        taxonomy: v.taxonomy,
        classes: v.classes,
        ...(v.judgeWrong ? { judgeWrong: true } : {}),
      };
    }),
    taxonomies,
  );
  const resolvedChecks = checks.filter((c) => c.verdict !== undefined);
  const table6 = hallucinationRows(
    resolvedChecks.map((c) => {
      const i = c.item.input as HallucinationInput;
      return { model: i.model, domain: i.scenario, hallucinated: isHallucinated(c.verdict as HallucinationVerdict) };
    }),
  );
  const failures: ResolvedFailure[] = [
    ...tags
      .filter((t) => t.verdict !== undefined)
      .map((t) => {
        const v = t.verdict as FailureTagVerdict;
        const s = t.item.subject;
        return {
          taxonomy: v.taxonomy,
          classes: v.classes,
          runId: t.item.runId ?? '',
          where: t.item.itemRef ?? '',
          text: s.kind === 'span' ? s.quote : (t.item.itemRef ?? ''),
          note: t.note,
        };
      }),
    ...resolvedCases
      .filter((c) => !(c.verdict as FailureCaseVerdict).judgeWrong)
      .map((c) => {
        const i = c.item.input as FailureCaseInput;
        return {
          taxonomy: (c.verdict as FailureCaseVerdict).taxonomy,
          classes: (c.verdict as FailureCaseVerdict).classes,
          runId: i.runId,
          where: i.ref,
          text: i.question,
          note: c.note,
        };
      }),
  ];
  const table4 = taxonomies
    .map((t) => ({
      taxonomy: t,
      failures: failures.filter((f) => f.taxonomy === t.id).length,
      rows: failureModeRows(failures, t),
    }))
    .filter((x) => x.failures > 0);
  return {
    fig8,
    table6,
    table4,
    counts: {
      cases: cases.length,
      casesResolved: resolvedCases.length,
      judgeWrong: resolvedCases.filter((c) => (c.verdict as FailureCaseVerdict).judgeWrong).length,
      checks: checks.length,
      checksResolved: resolvedChecks.length,
      tags: tags.length,
      tagsResolved: tags.filter((t) => t.verdict !== undefined).length,
    },
  };
}

/** A Vega-Lite spec as plain JSON (the surfaces render it with vega-embed). */
export type VegaLiteSpec = Record<string, unknown>;

/**
 * Fig. 8 as Vega-Lite: per scenario (columns) a horizontal bar per model, stacked by failure class, length = the
 * share of the model's annotated cases with the class (a case may have several classes), colour by class.
 */
export function failureClassSpec(
  rows: readonly FailureClassRow[],
  title = 'Failure classes per model and scenario (DDR-Bench Fig. 8 form)',
): VegaLiteSpec {
  const order = [...new Set(rows.map((r) => r.label))];
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    data: {
      values: rows
        .filter((r) => r.count > 0)
        .map((r) => ({
          model: r.model,
          scenario: r.scenario,
          class: r.label,
          group: r.group ?? '',
          count: r.count,
          cases: r.cases,
          share: r.share,
        })),
    },
    facet: { column: { field: 'scenario', type: 'nominal', title: 'Scenario' } },
    spec: {
      width: 260,
      height: { step: 22 },
      mark: { type: 'bar', tooltip: true },
      encoding: {
        y: { field: 'model', type: 'nominal', title: null },
        x: {
          field: 'count',
          type: 'quantitative',
          stack: 'normalize',
          title: 'Share of class assignments',
          axis: { format: '%' },
        },
        color: { field: 'class', type: 'nominal', title: 'Failure class', sort: order },
        order: { field: 'class', sort: 'ascending' },
        tooltip: [
          { field: 'model' },
          { field: 'scenario' },
          { field: 'group', title: 'group' },
          { field: 'class' },
          { field: 'count', title: 'cases with the class' },
          { field: 'cases', title: 'annotated cases' },
          { field: 'share', format: '.0%', title: 'share of cases' },
        ],
      },
    },
  };
}

/** Table 6 as Vega-Lite: a model × domain heat map of hallucination rates (percent labels). */
export function hallucinationSpec(rows: readonly HallucinationRow[]): VegaLiteSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: 'Hallucination rate per model and domain (DDR-Bench Table 6 form)',
    data: { values: rows.map((r) => ({ ...r, pct: Math.round(r.rate * 10000) / 100 })) },
    width: { step: 70 },
    height: { step: 24 },
    encoding: {
      x: {
        field: 'domain',
        type: 'nominal',
        title: null,
        sort: [...new Set(rows.map((r) => r.domain).filter((d) => d !== 'Avg')), 'Avg'],
      },
      y: { field: 'model', type: 'nominal', title: null },
    },
    layer: [
      {
        mark: { type: 'rect', tooltip: true },
        encoding: {
          color: {
            field: 'rate',
            type: 'quantitative',
            title: 'Hallucination rate',
            scale: { scheme: 'oranges', domainMin: 0 },
            legend: { format: '%' },
          },
        },
      },
      { mark: { type: 'text' }, encoding: { text: { field: 'pct', type: 'quantitative', format: '.2f' } } },
    ],
  };
}
