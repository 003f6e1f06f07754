/**
 * Review of BLADE decisions as items of the annotation model (issue 18): each conceptual variable, transform unit and
 * model of a recorded run's final analysis (or of the ground truth, for expert–expert review) is a `blade-decision`
 * subject under the item kind `blade-decision-review`, whose verdict carries BLADE's own review fields — conceptual
 * variables: `is_reasonable`, `can_derive_from_data`; transforms: `is_suited_to_cv`, `is_steps_reasonable`,
 * `annotator_is_rationale_reasonable` — each Yes / No / Unsure, plus the annotator's explanation; models get Loupe's
 * own `is_reasonable` (BLADE has no model review fields: a Loupe extension, marked so). A seeded sample of N
 * decisions per dataset forms a queue (kind `blade-decisions`), served to several annotators with the store's
 * reservations; the agent and model of a run are never part of an item's input. A consensus rule (default: every
 * annotator says Yes to every field, the paper's rule; option: a majority of annotators judge it justifiable) offers
 * decisions for acceptance; {@link prefillForm} turns a decision into a spec form, and the review rows export to
 * BLADE's `annotate_*` columns.
 * Source: BLADE paper §3 and App. A.2 (review of LM-generated decisions, consensus); `annotations.csv` columns
 * `annotate_cvar_spec_json` / `annotate_transform_spec_json`; issue 18.
 */
import { randomUUID } from 'node:crypto';
import { canonicalJson, sha256 } from '../../eval/judges/canonical.ts';
import { cohensKappa, krippendorffAlpha, type Rating } from '../../eval/agreement.ts';
import {
  currentAnnotations,
  registerItemSchema,
  rolesByAnnotator,
  type Annotation,
  type AnnotationItem,
  type QueueSpec,
} from '../../annotations/model.ts';
import { registerQueueKind, suiteVersionOf, type AnnotationStore } from '../../annotations/store.ts';
import type { RunRecord } from '../../store/records.ts';
import type { RunStore } from '../../store/types.ts';
import type { BladeAnnotations } from './items.ts';
import { LoupeInputError } from '../../util/errors.ts';
import { seededRandom } from '../../util/random.ts';
import type { BladeAnalysis } from './analysis.ts';
import { judge, ROOT_SPEC_ID } from './annotations.ts';
import type { CvarForm, DecisionForm, ModelForm, TransformForm } from './authoring.ts';
import { editGtCsv } from './gt-versions.ts';
import { extractModel } from './eval/semantic.ts';
import type { SplitResult } from './eval/python.ts';
import { bladeState } from './toolset.ts';

/** The item kind of a BLADE decision review. */
export const BLADE_REVIEW_TASK = 'blade-decision-review';
/** The queue kind of a seeded sample of BLADE decisions. */
export const BLADE_REVIEW_QUEUE = 'blade-decisions';

export type DecisionType = 'cvar' | 'transform' | 'model';
export const DECISION_TYPES: readonly DecisionType[] = ['cvar', 'transform', 'model'];
export type ReviewAnswer = 'Yes' | 'No' | 'Unsure';

/** A review field: BLADE's name, the question shown, and whether it is Loupe's own (not in BLADE). */
export interface ReviewField {
  name: string;
  question: string;
  loupeExtension: boolean;
}

/** The review fields per decision type (BLADE's names; the model's is a Loupe extension). */
export const REVIEW_FIELDS: Record<DecisionType, readonly ReviewField[]> = {
  cvar: [
    {
      name: 'is_reasonable',
      question: 'Is this conceptual variable reasonable for the research question?',
      loupeExtension: false,
    },
    { name: 'can_derive_from_data', question: 'Can it be derived from the data?', loupeExtension: false },
  ],
  transform: [
    {
      name: 'is_suited_to_cv',
      question: 'Is the transform suited to the conceptual variable it serves?',
      loupeExtension: false,
    },
    { name: 'is_steps_reasonable', question: 'Are the steps reasonable?', loupeExtension: false },
    { name: 'annotator_is_rationale_reasonable', question: 'Is the rationale reasonable?', loupeExtension: false },
  ],
  model: [
    {
      name: 'is_reasonable',
      question: 'Is this model reasonable for the research question? (Loupe extension: BLADE reviews no models)',
      loupeExtension: true,
    },
  ],
};

/** A decision as shown to a reviewer (no agent, no model). */
export type ReviewDecision =
  | {
      type: 'cvar';
      variableType: 'IV' | 'DV' | 'Control' | 'Moderator';
      description: string;
      columns: string[];
      moderatorOn?: string;
    }
  | {
      type: 'transform';
      verb: string;
      code: string;
      mapping: Array<[string[], string]>;
      groupbyCols: string[];
      rationale: string;
    }
  | { type: 'model'; specification: string; code: string; columns: string[] };

/** What a review item holds. */
export interface DecisionInput {
  dataset: string;
  researchQuestion: string;
  /** `agent`: taken from a recorded run (which one is hidden); `expert`: a ground-truth spec. */
  source: 'agent' | 'expert';
  decision: ReviewDecision;
  /** The run's whole transform code (context for a transform unit, and the table a model runs on). */
  transformCode?: string;
  /** Columns of data.csv (to tell original from derived columns). */
  dataColumns: string[];
}

/** A reviewer's verdict: one answer per field of the decision type, and an explanation. */
export interface DecisionVerdict {
  decisionType: DecisionType;
  labels: Record<string, ReviewAnswer>;
  explanation: string;
}

const answer = { type: 'string' as const, enum: ['Yes', 'No', 'Unsure'] };
registerItemSchema(
  BLADE_REVIEW_TASK,
  {
    type: 'object',
    required: ['decisionType', 'labels', 'explanation'],
    properties: {
      decisionType: { type: 'string', enum: DECISION_TYPES },
      labels: {
        type: 'object',
        properties: Object.fromEntries(
          [
            ...new Set(
              Object.values(REVIEW_FIELDS)
                .flat()
                .map((f) => f.name),
            ),
          ].map((n) => [n, answer]),
        ),
      },
      explanation: { type: 'string' },
    },
  },
  (v) => judge(Object.values((v as DecisionVerdict).labels)),
  (v) =>
    Object.fromEntries(
      Object.entries((v as DecisionVerdict).labels).map(([k, x]) => [`${(v as DecisionVerdict).decisionType}.${k}`, x]),
    ),
);

/**
 * Builds a verdict from a reviewer's answers.
 * @throws LoupeInputError naming the first field without an answer, or an unknown field / answer.
 */
export function decisionVerdict(
  type: DecisionType,
  labels: Readonly<Record<string, string>>,
  explanation: string,
): DecisionVerdict {
  const fields = REVIEW_FIELDS[type];
  if (!fields) throw new LoupeInputError('decision type', `must be cvar, transform or model, got '${String(type)}'`);
  for (const k of Object.keys(labels)) {
    if (!fields.some((f) => f.name === k)) {
      throw new LoupeInputError(
        `review field ${k}`,
        `is not a field of a ${type} review (${fields.map((f) => f.name).join(', ')})`,
      );
    }
  }
  const out: Record<string, ReviewAnswer> = {};
  for (const f of fields) {
    const v = labels[f.name];
    if (v === undefined || v === '') {
      throw new LoupeInputError(`review field ${f.name}`, 'answer Yes, No or Unsure before submitting');
    }
    if (v !== 'Yes' && v !== 'No' && v !== 'Unsure') {
      throw new LoupeInputError(`review field ${f.name}`, `'${v}' is not Yes, No or Unsure`);
    }
    out[f.name] = v;
  }
  return { decisionType: type, labels: out, explanation: explanation ?? '' };
}

/** Where a run's data lives (resolved by the caller from its block). */
export interface RunDataset {
  dataset: string;
  dataPath: string;
  researchQuestion: string;
  dataColumns: string[];
}

/**
 * The decisions of a run's final analysis: each conceptual variable, each transform unit (the transform code split
 * by executing it, BLADE's way: `split` is the sandboxed driver's), and the model.
 * @returns decisions in submission order, each with a stable key (`cvar:0`, `transform:2`, `model`); [] when the run
 *   has no valid submission.
 */
export async function runDecisions(
  analysis: BladeAnalysis | null,
  split: (code: string) => Promise<SplitResult>,
  dataColumns: readonly string[],
): Promise<Array<{ key: string; decision: ReviewDecision }>> {
  if (!analysis) return [];
  const out: Array<{ key: string; decision: ReviewDecision }> = [];
  const cv = analysis.cvars;
  const cvars: ReviewDecision[] = [
    ...cv.ivs.map((x) => ({
      type: 'cvar' as const,
      variableType: 'IV' as const,
      description: x.description,
      columns: x.columns,
    })),
    { type: 'cvar', variableType: 'DV', description: cv.dv.description, columns: cv.dv.columns },
    ...cv.controls.map((x) => ({
      type: 'cvar' as const,
      variableType: x.is_moderator ? ('Moderator' as const) : ('Control' as const),
      description: x.description,
      columns: x.columns,
      ...(x.is_moderator && x.moderator_on ? { moderatorOn: x.moderator_on } : {}),
    })),
  ];
  cvars.forEach((d, i) => out.push({ key: `cvar:${i}`, decision: d }));
  if (analysis.transform_code.trim()) {
    const s = await split(analysis.transform_code);
    if (s.status === 'ok') {
      s.units.forEach((u, i) =>
        out.push({
          key: `transform:${i}`,
          decision: {
            type: 'transform',
            verb: u.verb,
            code: u.code,
            mapping: u.mapping,
            groupbyCols: u.groupbyCols,
            rationale: '',
          },
        }),
      );
    } else {
      out.push({
        key: 'transform:all',
        decision: {
          type: 'transform',
          verb: '',
          code: analysis.transform_code,
          mapping: [],
          groupbyCols: [],
          rationale: `(not split: ${s.status}${s.error ? ` — ${s.error.slice(0, 200)}` : ''})`,
        },
      });
    }
  }
  if (analysis.m_code.trim()) {
    const cols = [
      ...dataColumns,
      ...out.flatMap((d) => (d.decision.type === 'transform' ? d.decision.mapping.map(([, o]) => o) : [])),
    ];
    const m = extractModel(analysis.m_code, cols);
    out.push({
      key: 'model',
      decision: { type: 'model', specification: m.name, code: analysis.m_code, columns: m.columns },
    });
  }
  return out;
}

/** Id of a decision's review item. */
export function decisionItemId(dataset: string, origin: string, key: string): string {
  return `bd:${sha256(`${dataset}\u0000${origin}\u0000${key}`).slice(0, 16)}`;
}

/**
 * Creates the review items of every decision of the given BLADE runs (idempotent by id).
 * @param datasetOf where a run's data lives (its block); `split` splits transform code in the sandbox.
 * @returns the items, and the runs skipped with their reason (no valid submission, not a BLADE run).
 */
export async function ensureRunDecisionItems(
  ann: AnnotationStore,
  runs: readonly RunRecord[],
  store: RunStore,
  datasetOf: (run: RunRecord) => Promise<RunDataset>,
  split: (dataPath: string, code: string) => Promise<SplitResult>,
): Promise<{ items: AnnotationItem[]; skipped: Array<{ runId: string; reason: string }> }> {
  const items: AnnotationItem[] = [];
  const skipped: Array<{ runId: string; reason: string }> = [];
  for (const run of runs) {
    const final = bladeState(await store.getExtraState(run.id)).final;
    if (!final) {
      skipped.push({ runId: run.id, reason: 'no valid submit_analysis' });
      continue;
    }
    const ds = await datasetOf(run);
    for (const { key, decision } of await runDecisions(final, (code) => split(ds.dataPath, code), ds.dataColumns)) {
      const input: DecisionInput = {
        dataset: ds.dataset,
        researchQuestion: ds.researchQuestion,
        source: 'agent',
        decision,
        transformCode: final.transform_code,
        dataColumns: ds.dataColumns,
      };
      const id = decisionItemId(ds.dataset, `run:${run.id}`, key);
      items.push(
        (await ann.getItem(id)) ??
          (await ann.putItem({
            id,
            subject: { kind: 'blade-decision', dataset: ds.dataset, gtVersion: 'latest', runId: run.id, decision: key },
            task: BLADE_REVIEW_TASK,
            input,
            inputHash: sha256(canonicalJson(input)).slice(0, 32),
            criterion: decision.type,
            suite: run.suite,
            runId: run.id,
            itemRef: `${ds.dataset} ${key}`,
            suiteVersion: suiteVersionOf(JSON.stringify(run.dataChecksums ?? {})),
          })),
      );
    }
  }
  return { items, skipped };
}

/**
 * Creates review items for the decisions of a ground truth (expert–expert review: experts judge each other's
 * specs). @param version the ground-truth version the specs come from (0 = shipped).
 */
export async function ensureExpertDecisionItems(
  ann: AnnotationStore,
  ds: Omit<RunDataset, 'dataPath'>,
  a: BladeAnnotations,
  version: number,
  suite: string,
): Promise<AnnotationItem[]> {
  const out: AnnotationItem[] = [];
  const decisions: Array<{ specId: string; decision: ReviewDecision; rationale?: string }> = [
    ...a.conceptualVars.map((c) => ({
      specId: c.specId,
      decision: {
        type: 'cvar' as const,
        variableType: c.effectiveType,
        description: c.concept,
        columns: [...c.columnsOrig, ...c.columnsDerived],
        ...(c.interaction ? { moderatorOn: c.on } : {}),
      },
    })),
    ...a.transforms
      .filter((t) => !t.isRoot)
      .map((t) => ({
        specId: t.specId,
        decision: {
          type: 'transform' as const,
          verb: t.verb,
          code: t.code,
          mapping: t.columnMappings.map((m) => [m.inputs, m.output] as [string[], string]),
          groupbyCols: [],
          rationale: t.rationale,
        },
      })),
    ...a.models.map((m) => ({
      specId: m.specId,
      decision: {
        type: 'model' as const,
        specification: m.specification,
        code: m.code,
        columns: [...m.columnsOrig, ...m.columnsDerived],
      },
    })),
  ];
  for (const d of decisions) {
    const input: DecisionInput = {
      dataset: ds.dataset,
      researchQuestion: ds.researchQuestion,
      source: 'expert',
      decision: d.decision,
      dataColumns: ds.dataColumns,
    };
    const id = decisionItemId(ds.dataset, `gt:${version}`, d.specId);
    out.push(
      (await ann.getItem(id)) ??
        (await ann.putItem({
          id,
          subject: { kind: 'blade-decision', dataset: ds.dataset, gtVersion: String(version), specId: d.specId },
          task: BLADE_REVIEW_TASK,
          input,
          inputHash: sha256(canonicalJson(input)).slice(0, 32),
          criterion: d.decision.type,
          suite,
          runId: null,
          itemRef: `${ds.dataset} gt v${version} ${d.decision.type} ${d.specId.slice(0, 8)}`,
          suiteVersion: 'unknown',
        })),
    );
  }
  return out;
}

/**
 * A seeded sample of N items per dataset (and per source: agent decisions and expert decisions are sampled apart),
 * in a stable order: items sorted by id, shuffled by the seed (Fisher–Yates), the first N kept.
 * @returns item ids in queue order (dataset, source, then sample order).
 */
export function sampleDecisionItems(
  items: ReadonlyArray<Pick<AnnotationItem, 'id' | 'input'>>,
  perDataset: number,
  seed: number,
): string[] {
  if (!Number.isInteger(perDataset) || perDataset < 1) {
    throw new LoupeInputError('decisions per dataset', `must be a whole number ≥ 1, got ${String(perDataset)}`);
  }
  const groups = new Map<string, string[]>();
  for (const i of items) {
    const inp = i.input as DecisionInput;
    const k = `${inp.dataset}\u0000${inp.source}`;
    groups.set(k, [...(groups.get(k) ?? []), i.id]);
  }
  const out: string[] = [];
  for (const k of [...groups.keys()].sort()) {
    const ids = [...new Set(groups.get(k)!)].sort();
    const rnd = seededRandom(seed);
    for (let i = ids.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [ids[i], ids[j]] = [ids[j]!, ids[i]!];
    }
    out.push(...ids.slice(0, perDataset));
  }
  return out;
}

// The queue kind: items of the runs (and, with `includeExpert`, the ground truth's) sampled per dataset.
registerQueueKind(BLADE_REVIEW_QUEUE, async (store, spec) => {
  const all = await store.listItems({ task: BLADE_REVIEW_TASK });
  const runs = new Set(spec.runIds ?? []);
  const datasets = spec.criterion ? new Set(spec.criterion.split(',')) : undefined;
  const chosen = all.filter(
    (i) =>
      ((i.input as DecisionInput).source === 'expert'
        ? spec.includeResolved === true
        : !runs.size || runs.has(i.runId ?? '')) &&
      (!datasets || datasets.has((i.input as DecisionInput).dataset)),
  );
  return sampleDecisionItems(chosen, spec.perCriterion ?? 10, spec.seed ?? 0);
});

/**
 * The queue spec of a review sample. `includeExpert` also samples the ground truth's decisions (expert–expert review);
 * `datasets` restricts to some datasets.
 */
export function reviewQueueSpec(o: {
  runIds: readonly string[];
  perDataset: number;
  seed: number;
  includeExpert?: boolean;
  datasets?: readonly string[];
}): QueueSpec {
  return {
    kind: BLADE_REVIEW_QUEUE,
    runIds: [...o.runIds].sort(),
    perCriterion: o.perDataset,
    seed: o.seed,
    ...(o.includeExpert ? { includeResolved: true } : {}),
    ...(o.datasets?.length ? { criterion: [...o.datasets].sort().join(',') } : {}),
  };
}

/** The consensus rule: `all-yes` (every annotator answers Yes to every field; the paper's rule) or `majority` (more than half of the annotators judge it justifiable). */
export interface ConsensusRule {
  kind: 'all-yes' | 'majority';
  /** Annotators needed before a consensus is reached (default 2). */
  minAnnotators: number;
}
export const DEFAULT_CONSENSUS: ConsensusRule = { kind: 'all-yes', minAnnotators: 2 };

/** A decision's consensus under a rule. */
export interface Consensus {
  status: 'justifiable' | 'not-justifiable' | 'pending';
  annotators: string[];
  /** Annotators whose verdict is justifiable (every field Yes). */
  yes: string[];
  rule: ConsensusRule;
}

/**
 * The consensus on one item from its current verdicts (superseded ones excluded; an adjudicated verdict decides).
 * @throws LoupeInputError for an unknown rule or a minimum below 1.
 * Source: BLADE paper App. A.2 (a decision enters the ground truth when all annotators judge it justifiable); `majority` is Loupe's option.
 */
export function consensusOf(annotations: readonly Annotation[], rule: ConsensusRule = DEFAULT_CONSENSUS): Consensus {
  if (rule.kind !== 'all-yes' && rule.kind !== 'majority') {
    throw new LoupeInputError('consensus rule', `must be all-yes or majority, got '${String(rule.kind)}'`);
  }
  if (!Number.isInteger(rule.minAnnotators) || rule.minAnnotators < 1) {
    throw new LoupeInputError(
      'annotators needed for consensus',
      `must be a whole number ≥ 1, got ${String(rule.minAnnotators)}`,
    );
  }
  const { byAnnotator, final } = currentAnnotations(annotations);
  const justifiable = (a: Annotation) => judge(Object.values((a.verdict as DecisionVerdict).labels)) === 'justifiable';
  if (final) {
    return {
      status: justifiable(final) ? 'justifiable' : 'not-justifiable',
      annotators: [final.annotator],
      yes: justifiable(final) ? [final.annotator] : [],
      rule,
    };
  }
  const who = [...byAnnotator.keys()].sort();
  const yes = who.filter((w) => justifiable(byAnnotator.get(w)!));
  if (who.length < rule.minAnnotators) return { status: 'pending', annotators: who, yes, rule };
  const ok = rule.kind === 'all-yes' ? yes.length === who.length : yes.length * 2 > who.length;
  return { status: ok ? 'justifiable' : 'not-justifiable', annotators: who, yes, rule };
}

/** Splits columns into data.csv columns and derived ones. */
function splitColumns(cols: readonly string[], dataColumns: readonly string[]): { orig: string[]; derived: string[] } {
  const d = new Set(dataColumns);
  return { orig: cols.filter((c) => d.has(c)), derived: cols.filter((c) => !d.has(c)) };
}

/**
 * A spec form prefilled from a reviewed decision, for the expert to complete and accept: a conceptual variable's type
 * (a moderator becomes a Control with `interaction` and `on`, as in BLADE), concept and columns (original vs derived);
 * a transform unit's verb, code and column mapping, joining the graph after the ground-truth transforms that produce
 * its input columns (ROOT when it reads data.csv only); a model's specification, code, columns and the transforms its
 * derived columns come from.
 * @param a the ground truth the decision would join.
 */
export function prefillForm(input: DecisionInput, a: BladeAnnotations): DecisionForm {
  const producers = new Map<string, string>();
  for (const t of a.transforms) {
    for (const m of t.columnMappings) if (m.output && !producers.has(m.output)) producers.set(m.output, t.specId);
  }
  const d = input.decision;
  if (d.type === 'cvar') {
    const { orig, derived } = splitColumns(d.columns, input.dataColumns);
    const f: CvarForm = {
      kind: 'cvar',
      variableType: d.variableType === 'Moderator' ? 'Control' : d.variableType,
      concept: d.description,
      columnsOrig: orig,
      columnsDerived: derived,
      interaction: d.variableType === 'Moderator',
      on: d.moderatorOn ?? '',
      rationale: '',
    };
    return f;
  }
  if (d.type === 'model') {
    const { orig, derived } = splitColumns(d.columns, input.dataColumns);
    const f: ModelForm = {
      kind: 'model',
      specification: d.specification === 'Unknown model' ? '' : d.specification,
      specName: '',
      code: d.code,
      rationale: '',
      columnsOrig: orig,
      columnsDerived: derived,
      onSpecIds: [...new Set(derived.map((c) => producers.get(c)).filter((x): x is string => !!x))],
    };
    return f;
  }
  const data = new Set(input.dataColumns);
  const inputs = [...new Set(d.mapping.flatMap(([ins]) => ins))];
  const deps = [
    ...new Set(
      inputs
        .filter((c) => !data.has(c))
        .map((c) => producers.get(c))
        .filter((x): x is string => !!x),
    ),
  ];
  const outputs = d.mapping.map(([, o]) => o).filter((o) => o && o !== 'ALL');
  const verb = d.verb === 'post_groupby' ? 'group' : d.verb;
  const name = (outputs.length ? outputs.join('_') : `${verb}_${inputs.join('_')}`)
    .replace(/[^\w]+/g, '_')
    .slice(0, 60);
  const f: TransformForm = {
    kind: 'transform',
    specName: a.transforms.some((t) => t.specName === name) ? `${name}_2` : name,
    specification: '',
    transVerb: verb ? [verb] : [],
    code: d.code,
    rationale: d.rationale,
    mapping: d.mapping.map(([ins, o]) => ({ inputs: ins, output: o === 'ALL' ? '' : o })),
    branches: [{ dependencies: deps.length ? deps : [ROOT_SPEC_ID], condition: '' }],
  };
  return f;
}

/** One bar of the agreement figure: a decision type and a source of decisions. */
export interface DecisionAgreementRow {
  type: DecisionType;
  source: 'agent' | 'expert';
  /** Decisions with at least one verdict / with at least two. */
  items: number;
  pairable: number;
  annotators: string[];
  /** Per annotator: the database roles that wrote their verdicts on these decisions (issue 26 "Identity"; sorted, [] when none is recorded, as on SQLite). */
  roles: Record<string, string[]>;
  /** Share of decisions with ≥ 2 verdicts judged justifiable by the consensus rule (the paper's "agreement"). */
  justifiable: number | null;
  /** Share of those whose annotators gave the same judgement (justifiable / unjustifiable / unsure). */
  percentAgreement: number | null;
  /** Cohen's κ on the judgement when exactly two annotators rated; Krippendorff's α (nominal) otherwise too. */
  cohensKappa: number | null;
  alpha: number | null;
  /** Per review field: share of Yes among the answers. */
  fieldYes: Record<string, number | null>;
}

/**
 * Agreement per decision type and source, in the form of the paper's figure (share of decisions judged justifiable,
 * expert decisions vs agent decisions), with the inter-annotator agreement of the judgements (percent, Cohen's κ,
 * Krippendorff's α) and the share of Yes per field; each row names its annotators with the database roles that wrote
 * their verdicts (team store).
 * @param filter restrict to some items (e.g. a queue's). Source: BLADE paper §3 ("agreement 75% / 80% among experts,
 *   27% / 13% on LM decisions"); statistics from `src/core/eval/agreement.ts`.
 */
export async function decisionAgreement(
  ann: AnnotationStore,
  opts: { itemIds?: readonly string[]; rule?: ConsensusRule } = {},
): Promise<DecisionAgreementRow[]> {
  const rule = opts.rule ?? DEFAULT_CONSENSUS;
  let items = await ann.listItems({ task: BLADE_REVIEW_TASK });
  if (opts.itemIds) {
    const s = new Set(opts.itemIds);
    items = items.filter((i) => s.has(i.id));
  }
  const anns = await ann.annotationsByItem({ task: BLADE_REVIEW_TASK });
  const rows: DecisionAgreementRow[] = [];
  for (const source of ['expert', 'agent'] as const) {
    for (const type of DECISION_TYPES) {
      const group = items.filter(
        (i) =>
          (i.input as DecisionInput).source === source &&
          (i.input as DecisionInput).decision.type === type &&
          anns.has(i.id),
      );
      const current = group.map((i) => currentAnnotations(anns.get(i.id)!).byAnnotator);
      const annotators = [...new Set(current.flatMap((m) => [...m.keys()]))].sort();
      const allRoles = rolesByAnnotator(group.flatMap((i) => anns.get(i.id)!));
      const roles = Object.fromEntries(annotators.map((a) => [a, allRoles[a] ?? []]));
      const data: Rating[][] = annotators.map((w) =>
        current.map((m) => {
          const a = m.get(w);
          return a ? judge(Object.values((a.verdict as DecisionVerdict).labels)) : null;
        }),
      );
      let pairable = 0;
      let same = 0;
      let just = 0;
      group.forEach((i, u) => {
        const vs = data.map((r) => r[u]).filter((v) => v !== null && v !== undefined);
        if (vs.length < 2) return;
        pairable++;
        if (new Set(vs).size === 1) same++;
        if (
          consensusOf(anns.get(i.id)!, { ...rule, minAnnotators: Math.max(2, rule.minAnnotators) }).status ===
          'justifiable'
        ) {
          just++;
        }
      });
      const fieldYes: Record<string, number | null> = {};
      for (const f of REVIEW_FIELDS[type]) {
        const answers = current
          .flatMap((m) => [...m.values()].map((a) => (a.verdict as DecisionVerdict).labels[f.name]))
          .filter(Boolean);
        fieldYes[f.name] = answers.length ? answers.filter((x) => x === 'Yes').length / answers.length : null;
      }
      const fin = (x: number) => (Number.isFinite(x) ? x : null);
      let kappa: number | null = null;
      if (annotators.length === 2) {
        const both = data[0]!.map((x, u) => [x, data[1]![u]] as const).filter(([x, y]) => x != null && y != null);
        if (both.length) {
          kappa = fin(
            cohensKappa(
              both.map((b) => b[0]),
              both.map((b) => b[1]),
            ).kappa,
          );
        }
      }
      rows.push({
        type,
        source,
        items: group.length,
        pairable,
        annotators,
        roles,
        justifiable: pairable ? just / pairable : null,
        percentAgreement: pairable ? same / pairable : null,
        cohensKappa: kappa,
        alpha: pairable ? fin(krippendorffAlpha(data, 'nominal').alpha) : null,
        fieldYes,
      });
    }
  }
  return rows;
}

/**
 * BLADE's review rows for export: one row per annotator's current verdict on a conceptual variable or transform, in
 * `annotate_cvar_spec_json` / `annotate_transform_spec_json` with BLADE's field names (`annotator`,
 * `annotator_explanation`, the Yes / No / Unsure fields, `annotator_labeled`); model reviews (Loupe's extension) go to
 * a column of their own, `loupe_annotate_model_spec_json`, which BLADE's loader ignores.
 * @param csv the ground-truth CSV the rows are appended to. @returns the CSV with the review rows.
 */
export function withReviewRows(
  csv: string,
  reviews: ReadonlyArray<{ item: AnnotationItem; annotations: readonly Annotation[] }>,
): string {
  return editGtCsv(csv, (rows) => {
    for (const { item, annotations } of reviews) {
      const inp = item.input as DecisionInput;
      const d = inp.decision;
      for (const [who, a] of currentAnnotations(annotations).byAnnotator) {
        const v = a.verdict as DecisionVerdict;
        const common = {
          time_stamp: a.createdAt,
          annotator_labeled: true,
          annotator_label: judge(Object.values(v.labels)),
          annotator_explanation: v.explanation,
          annotator: who,
          loupe_item: item.id,
          loupe_source: inp.source,
        };
        const id = randomUUID().replace(/-/g, '');
        if (d.type === 'cvar') {
          rows.push({
            spec_id: id,
            annotate_cvar_spec_json: JSON.stringify({
              ...common,
              annotator_is_rationale_reasonable: null,
              rationale: '',
              variable_type: d.variableType === 'Moderator' ? 'Control' : d.variableType,
              concept: d.description,
              columns: d.columns,
              interaction: d.variableType === 'Moderator',
              on: d.moderatorOn ?? '',
              can_derive_from_data: v.labels.can_derive_from_data ?? null,
              is_reasonable: v.labels.is_reasonable ?? null,
              associated_cv_spec_id: null,
            }),
          });
        } else if (d.type === 'transform') {
          rows.push({
            spec_id: id,
            annotate_transform_spec_json: JSON.stringify({
              ...common,
              annotator_is_rationale_reasonable: v.labels.annotator_is_rationale_reasonable ?? null,
              rationale: d.rationale,
              code: d.code,
              output_col: d.mapping
                .map(([, o]) => o)
                .filter(Boolean)
                .join(', '),
              associated_cvar_spec_id: null,
              is_suited_to_cv: v.labels.is_suited_to_cv ?? null,
              is_steps_reasonable: v.labels.is_steps_reasonable ?? null,
              associated_tspec_ids: [],
              state_col_val_hash: null,
            }),
          });
        } else {
          rows.push({
            spec_id: id,
            loupe_annotate_model_spec_json: JSON.stringify({
              ...common,
              loupe_extension: 'BLADE has no model review fields',
              specification: d.specification,
              code: d.code,
              columns: d.columns,
              is_reasonable: v.labels.is_reasonable ?? null,
            }),
          });
        }
      }
    }
  });
}
