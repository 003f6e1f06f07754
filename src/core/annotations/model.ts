/**
 * One annotation model for every expert workflow: subjects (what is judged), items (a subject under a verdict
 * schema), append-only annotations (an annotator's verdict with evidence, note, `supersedes`, `final`), queues
 * and the resolution rule. Judge items (checklist support, 1–5 criteria, claim support, semantic matches, …) are
 * the first item kinds; pairwise votes, BLADE ground-truth review and failure-mode tags add kinds with
 * {@link registerItemSchema} rather than new stores.
 * Source: `../shared/spec/annotation.md` (design note); issue 14.
 */
import { canonicalJson, sha256 } from '../eval/judges/canonical.ts';
import { validateSchema, type MiniSchema } from '../eval/judges/schema.ts';
import { taskDef } from '../eval/judges/tasks.ts';
import type { JudgeTaskName } from '../eval/judges/types.ts';
import { verdictLabel } from '../eval/agreement.ts';
import { LoupeInputError } from '../util/errors.ts';

/** What is judged, addressed stably. */
export type Subject =
  /** A judge item: the judge task and the hash of its input (as the judges key their cache). */
  | { kind: 'judgement'; task: JudgeTaskName; inputHash: string }
  /** A step or step range of a run's trajectory (0-based, inclusive). */
  | { kind: 'step'; runId: string; from: number; to: number }
  /** A text span of a run artefact (report, insight): character offsets plus the quote for re-anchoring. */
  | { kind: 'span'; runId: string; artefact: string; start: number; end: number; quote: string }
  /** A pair of runs of one block (side-by-side review). */
  | { kind: 'run-pair'; blockId: string; runA: string; runB: string }
  /** A BLADE decision: a ground-truth spec, or a decision taken from a run's submission. */
  | { kind: 'blade-decision'; dataset: string; gtVersion: string; specId?: string; runId?: string; decision?: string };

/** Evidence an annotator cites: it opens where it lives. */
export type EvidenceRef =
  | { kind: 'step'; runId: string; step: number }
  | { kind: 'cell'; runId: string; seq: number }
  | { kind: 'doc'; path: string; page?: number; query?: string }
  | { kind: 'span'; runId: string; artefact: string; start: number; end: number; quote?: string };

/** One subject under one verdict schema. */
export interface AnnotationItem {
  /** `j:<task>:<input hash>` for judgement subjects. */
  id: string;
  subject: Subject;
  /** The verdict schema's name: a judge task, or a registered item kind. */
  task: string;
  /** Hash of the verdict schema (12 hex); imports with another version are refused. */
  schemaVersion: string;
  /** What is judged (the judge input for judgement subjects). */
  input: unknown;
  inputHash: string | null;
  /** Criterion or checklist item (filters, per-criterion agreement); null when the task has none. */
  criterion: string | null;
  suite: string | null;
  runId: string | null;
  itemRef: string | null;
  /** Digest of the run's data checksums (`data:<12 hex>`), or `unknown`. */
  suiteVersion: string;
  createdAt: string;
}

/** `annotator`: one of several independent verdicts; `adjudicator`: a final verdict resolving a disagreement. */
export type AnnotationRole = 'annotator' | 'adjudicator';

/** An annotator's verdict on an item. Append-only: an edit is a new row that `supersedes` the old one. */
export interface Annotation {
  id: string;
  itemId: string;
  annotator: string;
  role: AnnotationRole;
  verdict: unknown;
  evidence: EvidenceRef[];
  note: string | null;
  supersedes: string | null;
  /** True for an adjudicated verdict (final). */
  final: boolean;
  /** Where it was made: panel | cli | import | migrated. */
  origin: string;
  createdAt: string;
  /**
   * The database role that wrote the row (issue 26 "Identity"), as opposed to `annotator`, the display name the
   * client chose. PostgreSQL: the server's `current_user` of the writing connection, set by the server (a column
   * default and a trigger: a client logged in as another role cannot choose it; only the store's owner role, which
   * runs `loupe store copy`, carries a recorded value over). An import is written by whoever imports it, so it gets the
   * importer's role. SQLite: always null — a SQLite file has no roles or logins, and whatever the writing process
   * could put there (its OS user) would be a claim anyone able to write the file can make. Null as well for
   * annotations written before schema version 16.
   */
  dbRole: string | null;
}

/** How an item's verdict was decided (the resolution rule, strongest first). */
export type DecidedBy = 'adjudicated' | 'majority' | 'single' | 'llm' | 'pending';

/** How scores combine human and LLM verdicts. */
export type ResolutionMode = 'human' | 'llm+human';

/** The resolved verdict of an item. */
export interface Resolution {
  itemId: string;
  decidedBy: DecidedBy;
  /** The deciding verdict (an annotation's, or the LLM's); null when pending. */
  verdict: unknown;
  /** Humans whose current verdict agrees with the resolution (or the adjudicator). */
  annotators: string[];
  /** Current human labels by annotator (superseded rows excluded). */
  humanLabels: Record<string, string>;
  /** True when humans are tied (the item stays pending under `human`). */
  tie: boolean;
}

/** Which items a queue holds. */
export interface QueueSpec {
  /** `items`: a filter over items (default: those still pending); `audit`: a seeded stratified sample of items the
   *  LLM judge decided; `disagreement`: items whose humans disagree or whose LLM verdict differs from the humans';
   *  `pairs`: side-by-side pairs (`pairwise-vote` items) of the runs in `runIds`, served most-uncertain-first;
   *  `blade-decisions`: a seeded sample of BLADE decisions per dataset (a kind registered with `registerQueueKind`);
   *  `sampled`: the items of `itemIds` in that order (a sample drawn by its maker: failure analysis, issue 19). */
  kind: 'items' | 'audit' | 'disagreement' | 'pairs' | 'blade-decisions' | 'sampled';
  suite?: string;
  runIds?: string[];
  task?: string;
  /** Substring of the criterion (case-insensitive). */
  criterion?: string;
  /** `items` only: include items already resolved (default false: pending only). */
  includeResolved?: boolean;
  /** `audit` only: items per task × criterion (default 10) and the sampling seed (default 0). */
  perCriterion?: number;
  seed?: number;
  /** `sampled` only: the items, in queue order. */
  itemIds?: string[];
  /** `sampled` only: how the sample was drawn (shown with the queue; part of its identity). */
  sampling?: { title: string; perStratum: number; seed: number; strata: number };
}

/** A saved selection of items with its reviewing rules. */
export interface AnnotationQueue {
  id: string;
  name: string;
  spec: QueueSpec;
  /** Independent annotators wanted per item (default 1). */
  reviewers: number;
  /** How long a served item stays reserved for its annotator, ms (default 30 min). */
  reservationMs: number;
  /** Hide the LLM's and other annotators' verdicts until the annotator submits (default true). */
  blind: boolean;
  createdAt: string;
}

/** Judge tasks an expert can answer item by item (claim extraction is a list, not a verdict to annotate). */
export const ANNOTATABLE_TASKS: readonly JudgeTaskName[] = [
  'checklist-support',
  'checklist-score',
  'claim-support',
  'semantic-match',
  'trend-answer',
  'pairwise-novelty',
  'hallucination',
  'figure-quality',
];

const extraSchemas = new Map<
  string,
  {
    schema: MiniSchema;
    label: (v: unknown) => string | number | boolean | null;
    facets?: (v: unknown) => Record<string, string>;
  }
>();

/**
 * Registers the verdict schema of a new item kind (pairwise votes, BLADE review fields, taxonomy tags).
 * @param task the kind's name (must not be a judge task); `schema` its verdict schema; `label` the value
 *   agreement statistics compare (default: canonical JSON of the verdict without `reason`); `facets` the labels of
 *   the parts of a verdict that get their own agreement group (a pairwise vote's choice per criterion).
 * @throws LoupeInputError when the name is a judge task.
 */
export function registerItemSchema(
  task: string,
  schema: MiniSchema,
  label?: (v: unknown) => string | number | boolean | null,
  facets?: (v: unknown) => Record<string, string>,
): void {
  if ((ANNOTATABLE_TASKS as readonly string[]).includes(task) || task === 'claim-extraction') {
    throw new LoupeInputError(`item kind ${task}`, "is a judge task; its schema is the judge's");
  }
  extraSchemas.set(task, {
    schema,
    label: label ?? ((v) => canonicalJson(stripReason(v))),
    ...(facets ? { facets } : {}),
  });
}

/**
 * The facet labels of a verdict (name → label: a pairwise vote's choice per criterion), or null when its kind has
 * no facets. Agreement reports a group per facet.
 */
export function facetsOf(task: string, verdict: unknown): Record<string, string> | null {
  const f = extraSchemas.get(task)?.facets;
  if (!f || verdict === null || verdict === undefined) return null;
  return f(verdict);
}

function stripReason(v: unknown): unknown {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
  const { reason: _r, reasoning: _rr, ...rest } = v as Record<string, unknown>;
  return rest;
}

/**
 * The verdict schema of an item task (the same schema the LLM judge fills for judge tasks).
 * @throws LoupeInputError for an unknown task.
 */
export function itemSchema(task: string): MiniSchema {
  if ((ANNOTATABLE_TASKS as readonly string[]).includes(task)) return taskDef(task as JudgeTaskName).schema;
  const x = extraSchemas.get(task);
  if (!x) {
    throw new LoupeInputError(
      `item task ${task}`,
      `is not an annotatable task (known: ${[...ANNOTATABLE_TASKS, ...extraSchemas.keys()].join(', ')})`,
    );
  }
  return x.schema;
}

/**
 * Version of a task's verdict schema: the first 12 hex of sha256 of its canonical JSON, so any schema change
 * changes it. @throws LoupeInputError for an unknown task.
 */
export function schemaVersion(task: string): string {
  return sha256(canonicalJson(itemSchema(task))).slice(0, 12);
}

/**
 * Checks a verdict against the item's schema.
 * @param subject names the thing at fault in the error (e.g. `item j:claim-support:…` or `line 7`).
 * @throws LoupeInputError listing every problem (`$.score: must be ≤ 5`).
 */
export function validateVerdict(task: string, verdict: unknown, subject: string): void {
  const problems = validateSchema(verdict, itemSchema(task));
  if (problems.length) throw new LoupeInputError(subject, `verdict does not fit ${task}: ${problems.join('; ')}`);
}

/**
 * The value agreement and majority compare for a verdict: the judge task's label ({@link verdictLabel}:
 * label, supported, match, winner, answer, 1–5 score, mean figure score) or the registered kind's label.
 * @returns the label as a string (`"true"`, `"4"`, `"CORRECT_INFO"`), or null for an unusable verdict.
 */
export function labelOf(task: string, verdict: unknown): string | null {
  if (verdict === null || verdict === undefined) return null;
  const extra = extraSchemas.get(task);
  const l = extra ? extra.label(verdict) : verdictLabel({ task, status: 'done', verdict });
  return l === null || l === undefined ? null : String(l);
}

/** Agreement metric by task: 1–5 scores are interval/ordinal, everything else nominal. */
export function isScaleTask(task: string): boolean {
  return task === 'checklist-score' || task === 'figure-quality';
}

/** Id of the item of a judgement subject. */
export function judgementItemId(task: string, inputHash: string): string {
  return `j:${task}:${inputHash}`;
}

/**
 * The criterion a judge input is filed under: checklist-score → criterion, checklist-support / trend-answer →
 * the checklist question, semantic-match → its kind (conceptual-variable / model), others none.
 */
export function criterionOf(task: string, input: unknown): string | null {
  const i = (input ?? {}) as Record<string, unknown>;
  switch (task) {
    case 'checklist-score':
      return typeof i.criterion === 'string' ? i.criterion : null;
    case 'checklist-support':
    case 'trend-answer':
      return typeof i.question === 'string' ? i.question : null;
    case 'semantic-match':
      return typeof i.kind === 'string' ? i.kind : null;
    default:
      return null;
  }
}

/**
 * The current verdicts of an item: per annotator (role annotator), the newest annotation not superseded by
 * another; plus the newest final (adjudicated) annotation.
 * @param annotations every annotation of one item, any order.
 */
export function currentAnnotations(annotations: readonly Annotation[]): {
  byAnnotator: Map<string, Annotation>;
  final: Annotation | undefined;
} {
  const superseded = new Set(annotations.map((a) => a.supersedes).filter((x): x is string => !!x));
  const sorted = [...annotations].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  const byAnnotator = new Map<string, Annotation>();
  let final: Annotation | undefined;
  for (const a of sorted) {
    if (superseded.has(a.id)) continue;
    if (a.final) final = a;
    else if (a.role === 'annotator') byAnnotator.set(a.annotator, a);
  }
  return { byAnnotator, final };
}

/**
 * Resolves an item: adjudicated > majority of humans (strict plurality of labels) > single human > LLM (mode
 * `llm+human`) > pending. Ties between humans stay pending (or go to the LLM under `llm+human`).
 * @param annotations the item's annotations; `llmVerdict` the LLM judge's verdict, if any.
 * Source: `../shared/spec/annotation.md` "Resolution"; issue 14 "Scores use it".
 */
export function resolveItem(
  item: Pick<AnnotationItem, 'id' | 'task'>,
  annotations: readonly Annotation[],
  mode: ResolutionMode = 'human',
  llmVerdict?: unknown,
): Resolution {
  const { byAnnotator, final } = currentAnnotations(annotations);
  const humanLabels: Record<string, string> = {};
  for (const [who, a] of byAnnotator) {
    const l = labelOf(item.task, a.verdict);
    if (l !== null) humanLabels[who] = l;
  }
  if (final) {
    return {
      itemId: item.id,
      decidedBy: 'adjudicated',
      verdict: final.verdict,
      annotators: [final.annotator],
      humanLabels,
      tie: false,
    };
  }
  const counts = new Map<string, number>();
  for (const l of Object.values(humanLabels)) counts.set(l, (counts.get(l) ?? 0) + 1);
  const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1]);
  const humans = Object.keys(humanLabels).length;
  const tie = ranked.length > 1 && ranked[0]![1] === ranked[1]![1];
  if (humans && !tie) {
    const top = ranked[0]![0];
    const who = Object.keys(humanLabels)
      .filter((k) => humanLabels[k] === top)
      .sort();
    const newest = who.map((w) => byAnnotator.get(w)!).sort((a, b) => b.createdAt.localeCompare(a.createdAt))[0]!;
    return {
      itemId: item.id,
      decidedBy: humans === 1 ? 'single' : 'majority',
      verdict: newest.verdict,
      annotators: who,
      humanLabels,
      tie: false,
    };
  }
  if (mode === 'llm+human' && llmVerdict !== undefined && llmVerdict !== null) {
    return { itemId: item.id, decidedBy: 'llm', verdict: llmVerdict, annotators: [], humanLabels, tie };
  }
  return { itemId: item.id, decidedBy: 'pending', verdict: null, annotators: [], humanLabels, tie };
}

/**
 * How an annotator is shown where annotators are listed (agreement, queue progress, CLI): the display name, with the
 * database role(s) that wrote their annotations when the store records any (issue 26 "Identity").
 * @param name the display name (`annotator`); `roles` the distinct database roles (empty on SQLite).
 * @returns e.g. `Ana (role ana_pg)`, `Ana (roles ana_pg, admin)`, or `Ana` when no role is recorded.
 */
export function annotatorLabel(name: string, roles: readonly string[] | undefined): string {
  const r = [...new Set(roles ?? [])].sort();
  if (!r.length) return name;
  return `${name} (${r.length === 1 ? 'role' : 'roles'} ${r.join(', ')})`;
}

/**
 * The database roles that wrote each annotator's annotations (see {@link Annotation.dbRole}).
 * @param annotations any annotations. @returns annotator → distinct non-null roles, sorted (annotators without a recorded role map to []).
 */
export function rolesByAnnotator(annotations: Iterable<Annotation>): Record<string, string[]> {
  const out = new Map<string, Set<string>>();
  for (const a of annotations) {
    const s = out.get(a.annotator) ?? new Set<string>();
    if (a.dbRole) s.add(a.dbRole);
    out.set(a.annotator, s);
  }
  return Object.fromEntries([...out].map(([k, v]) => [k, [...v].sort()]));
}

/**
 * How each annotator is shown, by {@link annotatorLabel}: annotator → `name (role r)` from the database roles recorded
 * on their annotations (`name` alone when none is, as on SQLite).
 * @param annotations any annotations (roles are taken from all of them); `only` limits the keys to these annotators
 *   (an annotator of `only` without annotations here maps to the bare name).
 * @returns annotator → display label.
 */
export function annotatorLabels(annotations: Iterable<Annotation>, only?: Iterable<string>): Record<string, string> {
  const roles = rolesByAnnotator(annotations);
  const who = only ? [...new Set(only)] : Object.keys(roles);
  return Object.fromEntries(who.map((w) => [w, annotatorLabel(w, roles[w])]));
}
