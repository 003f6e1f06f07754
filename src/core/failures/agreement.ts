/**
 * Agreement on failure tags computed on units, as issue 19 asks: a trajectory's units are its steps, a report's are
 * its sentences; each annotator who read a document gives each of its units the set of classes of their tags
 * covering it (empty when they tagged nothing there). Per class, each (annotator, unit) is "has the class" or not,
 * and the usual statistics apply: percent agreement over units read by ≥ 2 annotators, Cohen's κ (two annotators),
 * Krippendorff's α (nominal). An annotator "read" a trajectory when they tagged anything on it or gave a verdict on
 * one of its failure cases; a report artefact when they tagged a span of it.
 * Source: issue 19 "Agreement per class is computed on units"; Krippendorff 2011; `../eval/agreement.ts`.
 */
import { cohensKappa, krippendorffAlpha, type Rating } from '../eval/agreement.ts';
import { currentAnnotations, rolesByAnnotator, type AnnotationItem } from '../annotations/model.ts';
import type { AnnotationStore } from '../annotations/store.ts';
import type { RunStore } from '../store/types.ts';
import type { Taxonomy } from './taxonomy.ts';
import { FAILURE_CASE_TASK, FAILURE_TAG_TASK, type FailureTagInput, type FailureTagVerdict } from './tags.ts';

/** One document (a trajectory, or a report artefact) with its units and what each reader tagged on it. */
export interface UnitDocument {
  /** `run <id>` or `run <id> report`. */
  doc: string;
  /** Number of units (steps, sentences). */
  units: number;
  /** Per annotator who read the document: tagged unit ranges (0-based, inclusive) with their classes. */
  readers: Map<string, Array<{ from: number; to: number; classes: readonly string[] }>>;
}

/** Agreement on one class. */
export interface ClassAgreement {
  classId: string;
  label: string;
  /** Units given the class, per annotator. */
  positives: Record<string, number>;
  /** Units read by ≥ 2 annotators. */
  pairableUnits: number;
  /** Share of pairable units where all readers agree on the class. */
  percentAgreement: number | null;
  /** Cohen's κ when exactly two annotators read documents; null otherwise or when undefined. */
  cohensKappa: number | null;
  /** Krippendorff's α (nominal); null when undefined (fewer than 2 values or no variation). */
  alpha: number | null;
}

/** Unit-based agreement of one taxonomy over a set of documents. */
export interface UnitAgreement {
  taxonomy: string;
  unit: 'step' | 'sentence';
  documents: number;
  units: number;
  annotators: string[];
  /** Per annotator: the database roles that wrote their tags and verdicts (issue 26 "Identity"; sorted, [] when none is recorded, as on SQLite). */
  roles: Record<string, string[]>;
  classes: ClassAgreement[];
}

const num = (x: number): number | null => (Number.isFinite(x) ? x : null);

/**
 * Per-class agreement over unit documents.
 * @param docs documents with their readers' tags; `unit` is recorded in the result; `roles` the database roles per
 *   annotator (kept for the annotators of `docs`; default none).
 * @returns one entry per class of the taxonomy, in its order.
 */
export function unitAgreement(
  docs: readonly UnitDocument[],
  taxonomy: Taxonomy,
  unit: 'step' | 'sentence',
  roles: Readonly<Record<string, readonly string[]>> = {},
): UnitAgreement {
  const annotators = [...new Set(docs.flatMap((d) => [...d.readers.keys()]))].sort();
  const total = docs.reduce((s, d) => s + d.units, 0);
  // sets[annotator][unit] = classes, or null when the annotator did not read the unit's document
  const sets: Array<Array<Set<string> | null>> = annotators.map(() => []);
  for (const d of docs) {
    annotators.forEach((who, r) => {
      const tags = d.readers.get(who);
      for (let u = 0; u < d.units; u++) {
        if (!tags) {
          sets[r]!.push(null);
          continue;
        }
        const s = new Set<string>();
        for (const t of tags) if (u >= t.from && u <= t.to) for (const c of t.classes) s.add(c);
        sets[r]!.push(s);
      }
    });
  }
  const classes = taxonomy.classes.map((c): ClassAgreement => {
    const data: Rating[][] = sets.map((row) => row.map((s) => (s === null ? null : s.has(c.id) ? 'yes' : 'no')));
    let pairable = 0;
    let unanimous = 0;
    for (let u = 0; u < total; u++) {
      const vs = data.map((r) => r[u]).filter((v): v is string => v !== null && v !== undefined);
      if (vs.length < 2) continue;
      pairable++;
      if (new Set(vs).size === 1) unanimous++;
    }
    const positives = Object.fromEntries(annotators.map((a, r) => [a, data[r]!.filter((v) => v === 'yes').length]));
    return {
      classId: c.id,
      label: c.label,
      positives,
      pairableUnits: pairable,
      percentAgreement: pairable ? unanimous / pairable : null,
      cohensKappa: annotators.length === 2 ? num(cohensKappa(data[0]!, data[1]!).kappa) : null,
      alpha: annotators.length >= 2 && total ? num(krippendorffAlpha(data, 'nominal').alpha) : null,
    };
  });
  return {
    taxonomy: taxonomy.id,
    unit,
    documents: docs.length,
    units: total,
    annotators,
    roles: Object.fromEntries(annotators.map((a) => [a, [...(roles[a] ?? [])].sort()])),
    classes,
  };
}

/**
 * Unit-based agreement of a taxonomy's tags in the store: trajectories (units = steps, documents = runs with a
 * step tag or a failure-case verdict) and reports (units = sentences, documents = run artefacts with a span tag);
 * each names its annotators with the database roles that wrote their tags (`roles`, team store).
 * @param filter restricts to a suite or runs.
 */
export async function failureTagAgreement(
  ann: AnnotationStore,
  runs: RunStore,
  taxonomy: Taxonomy,
  filter: { suite?: string; runIds?: string[] } = {},
): Promise<{ steps: UnitAgreement; sentences: UnitAgreement }> {
  const tags = (await ann.listItems({ ...filter, task: FAILURE_TAG_TASK })).filter(
    (i) => (i.input as FailureTagInput).taxonomy === taxonomy.id,
  );
  const tagAnns = await ann.annotationsByItem({ ...filter, task: FAILURE_TAG_TASK });
  const stepDocs = new Map<string, UnitDocument>();
  const spanDocs = new Map<string, UnitDocument>();
  const stepsOf = async (runId: string): Promise<number> => (await runs.getRun(runId))?.steps ?? 0;
  const reader = (d: UnitDocument, who: string) => {
    let l = d.readers.get(who);
    if (!l) d.readers.set(who, (l = []));
    return l;
  };
  const docOf = async (item: AnnotationItem): Promise<{ d: UnitDocument; from: number; to: number } | undefined> => {
    const s = item.subject;
    if (s.kind === 'step') {
      let d = stepDocs.get(s.runId);
      if (!d) stepDocs.set(s.runId, (d = { doc: `run ${s.runId}`, units: await stepsOf(s.runId), readers: new Map() }));
      return { d, from: s.from, to: s.to };
    }
    if (s.kind === 'span') {
      const sent = (item.input as FailureTagInput).sentences;
      if (!sent) return undefined;
      const k = `${s.runId}\u0000${s.artefact}`;
      let d = spanDocs.get(k);
      if (!d) spanDocs.set(k, (d = { doc: `run ${s.runId} ${s.artefact}`, units: sent.count, readers: new Map() }));
      return { d, from: sent.first, to: sent.last };
    }
    return undefined;
  };
  for (const item of tags) {
    const where = await docOf(item);
    if (!where) continue;
    for (const [who, a] of currentAnnotations(tagAnns.get(item.id) ?? []).byAnnotator) {
      reader(where.d, who).push({
        from: where.from,
        to: Math.min(where.to, Math.max(0, where.d.units - 1)),
        classes: (a.verdict as FailureTagVerdict).classes,
      });
    }
  }
  // a failure-case verdict means its annotator read that trajectory (possibly tagging nothing)
  const cases = (await ann.listItems({ ...filter, task: FAILURE_CASE_TASK })).filter(
    (i) => (i.input as { taxonomy?: string }).taxonomy === taxonomy.id,
  );
  const caseAnns = await ann.annotationsByItem({ ...filter, task: FAILURE_CASE_TASK });
  for (const c of cases) {
    const who = [...currentAnnotations(caseAnns.get(c.id) ?? []).byAnnotator.keys()];
    if (!who.length || c.subject.kind !== 'step') continue;
    const where = await docOf(c);
    if (where) for (const w of who) reader(where.d, w);
  }
  const roles = rolesByAnnotator([...tagAnns.values(), ...caseAnns.values()].flat());
  return {
    steps: unitAgreement([...stepDocs.values()], taxonomy, 'step', roles),
    sentences: unitAgreement([...spanDocs.values()], taxonomy, 'sentence', roles),
  };
}
